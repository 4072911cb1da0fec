//! Unit tests that need no machine.

use rt_common::backoff::{Backoff, MIN_SLEEP_NS, SPIN_POLLS};
use crate::cpu::{Cpu32, CpuHal};
use rt_common::hal::{Hal, ticks_to_ns};
use rt_common::heap::class_of;
use rt_common::process::splitmix64;

/// A test HAL: a 100 MHz clock, one lane, and a count of its acquire fences
/// ([`ACQUIRES`], which only the thread-local test makes).
struct Hz100M;
static ACQUIRES: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);
// SAFETY: test-only, one thread.
unsafe impl Hal for Hz100M {
    const LANES: u32 = 64;
    const CLOCK_HZ: u64 = 100_000_000;
    const WAKES: bool = false;
    fn lane_id() -> u32 {
        0
    }
    fn lane_mask() -> u64 {
        1
    }
    fn ballot(p: bool) -> u64 {
        p as u64
    }
    fn broadcast_value(v: u32) -> u32 {
        v
    }
    fn sync_lane(_: u64) {}
    fn thread_index(_: u32) -> u32 {
        0
    }
    fn sleep_ns(_: u32) {}
    fn fixed_frequency_clock() -> u64 {
        0
    }
    fn fence_device_acquire() {
        ACQUIRES.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }
    fn fence_device_release() {}
    fn fence_system_release() {}
    fn end_program() -> ! {
        unreachable!()
    }
    fn wake(_: u32) {}
}

#[test]
fn clock_conversion() {
    assert_eq!(ticks_to_ns::<Hz100M>(3), 30);
    assert_eq!(ticks_to_ns::<Cpu32>(77), 77);
}

#[test]
fn backoff_spins_then_sleeps_up_to_cap() {
    let mut b = Backoff::new(1000);
    for _ in 0..SPIN_POLLS {
        assert!(!b.is_sleeping());
        b.snooze::<Hz100M>();
    }
    assert!(b.is_sleeping());
    for _ in 0..20 {
        b.snooze::<Hz100M>();
    }
    // The sleep is capped: a further snooze of a capped backoff is quick.
    let t = std::time::Instant::now();
    let mut c = Backoff::new(MIN_SLEEP_NS);
    for _ in 0..100 {
        c.snooze::<Cpu32>();
    }
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn cpu_hal_models_one_lane() {
    type H = CpuHal<64>;
    assert_eq!(H::LANES, 64);
    assert_eq!(H::lane_id(), 0);
    assert_eq!(H::lane_mask(), 1);
    assert_eq!(H::ballot(true), 1);
    assert_eq!(H::ballot(false), 0);
    assert_eq!(H::broadcast_value(9), 9);
    let a = H::fixed_frequency_clock();
    H::sleep_ns(2000);
    assert!(H::fixed_frequency_clock() > a);
}

#[test]
fn size_classes() {
    assert_eq!(class_of(1, 1), Some(4));
    assert_eq!(class_of(16, 8), Some(4));
    assert_eq!(class_of(17, 8), Some(5));
    assert_eq!(class_of(8, 4096), Some(12));
    assert_eq!(class_of(5000, 64), Some(13));
    assert_eq!(class_of(8, 8192), None);
    assert_eq!(class_of(32 << 10, 8), Some(15));
    assert_eq!(class_of((32 << 10) + 1, 8), None, "above 32 KiB: pages");
    assert_eq!(class_of(usize::MAX, 8), None);
}

#[test]
fn splitmix_differs() {
    assert_ne!(splitmix64(1), splitmix64(2));
}

/// `RawRing::fill` stores each header field where `RingSlotHeader` says
/// (it packs u32 pairs into 8-byte stores).
#[test]
fn raw_ring_fill_matches_the_header_layout() {
    use rt_common::primitive::AtomicU32;
    use rt_abi::protocol::*;
    use rt_common::ring::{Packet, RawRing, send};
    use core::mem::offset_of;
    const CAP: u32 = 2;
    // 128-byte aligned memory for the ring (`new` checks the alignment).
    #[repr(C, align(128))]
    struct Mem([u64; ring_bytes(CAP) / 8]);
    let mut mem = std::boxed::Box::new(Mem([0; ring_bytes(CAP) / 8]));
    mem.0[0] = u64::from(RING_MAGIC) | (u64::from(CAP) << 32);
    for i in 0..CAP as usize {
        mem.0[(RING_SLOTS_OFFSET + i * RING_SLOT_BYTES) / 8] = i as u64; // seq = i
    }
    let base = mem.0.as_mut_ptr() as u64;
    let tickets = core::sync::atomic::AtomicU64::new(0);
    let room = [0u64; ring_room_bytes(CAP) / 8];
    // SAFETY: `mem` holds a valid ring header and slots, `room` a zeroed
    // room, and they and `tickets` outlive `ring`.
    let ring = unsafe { RawRing::new(base, tickets.as_ptr(), room.as_ptr() as u64) };
    assert!(ring.is_usable());
    let p = Packet { op: OP_WRITE, thread: 0xABCD, flags: FLAG_MORE, arg0: 2, arg1: 7 };
    let wait = AtomicU32::new(0);
    assert_eq!(send::<Hz100M, _>(&ring, &wait, 0, &p, b"hi there"), 0);
    assert_eq!(tickets.load(core::sync::atomic::Ordering::Relaxed), 1, "the ticket came from the counter given");
    // SAFETY: the send above finished; nothing else touches `mem`.
    let bytes = unsafe { core::slice::from_raw_parts(base as *const u8, ring_bytes(CAP)) };
    let slot = &bytes[RING_SLOTS_OFFSET..RING_SLOTS_OFFSET + RING_SLOT_BYTES];
    let u32_at = |o: usize| u32::from_ne_bytes(slot[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(slot[o..o + 8].try_into().unwrap());
    assert_eq!(u64_at(offset_of!(RingSlotHeader, seq)), 1);
    assert_eq!(u32_at(offset_of!(RingSlotHeader, op)), OP_WRITE);
    assert_eq!(u32_at(offset_of!(RingSlotHeader, thread)), 0xABCD);
    assert_eq!(u32_at(offset_of!(RingSlotHeader, len)), 8);
    assert_eq!(u32_at(offset_of!(RingSlotHeader, flags)), FLAG_MORE);
    assert_eq!(u64_at(offset_of!(RingSlotHeader, arg0)), 2);
    assert_eq!(u64_at(offset_of!(RingSlotHeader, arg1)), 7);
    let payload = core::mem::size_of::<RingSlotHeader>();
    assert_eq!(&slot[payload..payload + 8], b"hi there");
}

#[test]
fn lane_stacks_tile_the_stacks_region() {
    use rt_abi::protocol::{LANE_STACK_BYTES, lane_stack, warp_stacks_bytes};
    let stack = 16 << 10;
    for lanes in [32, 64] {
        let per_warp = warp_stacks_bytes(stack, lanes);
        assert_eq!(per_warp, stack + (lanes as u64 - 1) * LANE_STACK_BYTES);
        // Every lane of warps 0..3 in order: contiguous, no overlap, no gap.
        let mut next = 0;
        for warp in 0..3 {
            for lane in 0..lanes {
                let (off, bytes) = lane_stack(stack, lanes, warp, lane);
                assert_eq!(off, next, "warp {warp} lane {lane}");
                assert_eq!(bytes, if lane == 0 { stack } else { LANE_STACK_BYTES });
                next = off + bytes;
            }
            assert_eq!(next, (warp as u64 + 1) * per_warp);
        }
    }
}

/// std's reserved keys are in use without a destructor from the start (and
/// after `init`): `create` never hands them out, and a thread that set them
/// ends without a lookup once its warp has learnt them.
#[test]
fn tls_reserved_keys_are_never_created_and_have_no_destructor() {
    use rt_abi::abi::{TLS_KEY_STD_CURRENT, TLS_KEY_STD_PANIC_COUNT, TLS_KEY_STD_THREAD_ID, TLS_KEYS, TLS_RESERVED_KEYS};
    use rt_common::slot::Slot;
    use rt_common::tls::{TlsKeys, get, set};
    assert!([TLS_KEY_STD_CURRENT, TLS_KEY_STD_THREAD_ID, TLS_KEY_STD_PANIC_COUNT].iter().all(|&k| k <= TLS_RESERVED_KEYS));
    assert_ne!(TLS_KEY_STD_CURRENT, TLS_KEY_STD_THREAD_ID);
    for fresh in [false, true] {
        let keys = TlsKeys::new();
        if fresh {
            keys.init();
        }
        let created: std::vec::Vec<usize> = (0..TLS_KEYS).map(|_| keys.create(None)).collect();
        assert!(created[..TLS_KEYS - TLS_RESERVED_KEYS].iter().all(|&k| k > TLS_RESERVED_KEYS && k <= TLS_KEYS));
        assert!(created[TLS_KEYS - TLS_RESERVED_KEYS..].iter().all(|&k| k == usize::MAX), "the reserved keys are not handed out");
        // Their values are in each warp's private state, which `destroy`
        // may not clear: it leaves a reserved key in use.
        keys.destroy(rt_common::runtime::Runtime::new().slots(), TLS_KEY_STD_CURRENT);
        assert_eq!(keys.create(None), usize::MAX, "a reserved key is never destroyed");
    }
    // (Cpu32, not Hz100M: the test below counts Hz100M's fences.)
    let keys = TlsKeys::new();
    let me = Slot::new();
    set::<Cpu32>(&me, TLS_KEY_STD_CURRENT, 8 as *mut u8);
    set::<Cpu32>(&me, TLS_KEY_STD_THREAD_ID, 9 as *mut u8);
    keys.run_dtors::<Cpu32>(&me);
    assert_eq!(get::<Cpu32>(&me, TLS_KEY_STD_CURRENT), 8 as *mut u8, "no destructor: the value stays");
    // SAFETY: our own slot's owner-only cell, not borrowed elsewhere.
    assert_eq!(unsafe { *me.private.tls_no_dtor.get() }, 0b11, "and the warp remembers both keys");
    keys.clear_values::<Cpu32>(&me);
    assert!(get::<Cpu32>(&me, TLS_KEY_STD_THREAD_ID).is_null());
}

/// A warp remembers across its threads which keys have no destructor: a
/// thread that set only such keys ends without the acquire fence (on a GPU
/// it empties L1), and a key with a destructor still gets its call.
#[test]
fn tls_no_destructor_keys_are_learnt_once_per_warp() {
    use rt_common::slot::Slot;
    use rt_common::tls::{TlsKeys, get, set};
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn dtor(v: *mut u8) {
        DROPPED.fetch_add(v as usize, Relaxed);
    }
    let keys = TlsKeys::new();
    let plain = keys.create(None);
    let with_dtor = keys.create(Some(dtor));
    let me = Slot::new();
    let thread = |values: &[(usize, usize)]| {
        for &(k, v) in values {
            set::<Hz100M>(&me, k, v as *mut u8);
        }
        keys.run_dtors::<Hz100M>(&me);
        assert_eq!(get::<Hz100M>(&me, plain), values.iter().find(|(k, _)| *k == plain).map_or(0, |(_, v)| *v) as *mut u8, "a value without a destructor stays until the thread's end");
        keys.run_dtors::<Hz100M>(&me);
        keys.clear_values::<Hz100M>(&me);
        assert!(get::<Hz100M>(&me, plain).is_null() && get::<Hz100M>(&me, with_dtor).is_null());
        ACQUIRES.load(Relaxed)
    };
    assert_eq!(thread(&[(plain, 1)]), 1, "the first thread looks the key up");
    assert_eq!(thread(&[(plain, 2)]), 1, "the warp's next thread does not");
    assert_eq!(thread(&[]), 1);
    assert_eq!(thread(&[(plain, 3), (with_dtor, 5)]), 2, "a key with a destructor is looked up");
    assert_eq!(DROPPED.load(Relaxed), 5);
    assert_eq!(thread(&[(with_dtor, 7)]), 3, "every time: its destructor runs");
    assert_eq!(DROPPED.load(Relaxed), 12);
}
