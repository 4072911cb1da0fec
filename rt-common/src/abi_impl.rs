//! The generic bodies of the `__gpu_std_*` functions ([`rt_abi::abi`]).
//!
//! [`define_gpu_std_abi!`](crate::define_gpu_std_abi) defines the exported
//! `extern "C"` symbols once, forwarding here; each vendor crate invokes it.
//! Every function is called on a thread's leader lane, after warp 0 ran
//! [`Runtime::init`] (std is only reachable from `main` and its threads).
//! Those that use per-thread state (heap cache, TLS values, the ring's
//! per-thread assembly, the slot's wait word) start with
//! [`leader_only`](crate::lanes::leader_only): a lane of
//! `gpu_lanes::for_each_lane` calling them aborts the program with a message
//! instead of racing with lane 0.

use rt_abi::abi::{ERR_BAD_FD, EXIT_ABORT, EXIT_PANIC};
use crate::hal::Hal;
use crate::lanes::{self, leader_only};
use rt_abi::abi::{Entry, LaneFn};
use crate::primitive::AtomicU32;
use rt_abi::protocol::{OP_NOP, OP_RANDOM, RING_PAYLOAD_BYTES};
use crate::ring::{self, Packet};
use crate::runtime::{Runtime, leave_if_exiting};
use crate::{futex, process, threads, tls};

pub use process::{arg, argc, env, envc, exe, monotonic_ns, random_u64, unix_time_ns};

/// `__gpu_std_spawn`.
///
/// # Safety
/// As for [`threads::spawn`].
pub unsafe fn spawn<H: Hal>(
    rt: &Runtime,
    stack_size: usize,
    entry: Entry,
    data: *mut u8,
    on_detach: Option<Entry>,
) -> i64 {
    leader_only::<H>(rt, "spawn");
    // SAFETY: the caller's contract.
    unsafe { threads::spawn::<H>(rt, stack_size, entry, data, on_detach) }
}

/// `__gpu_std_join`.
pub fn join<H: Hal>(rt: &Runtime, handle: i64) {
    leader_only::<H>(rt, "join");
    threads::join::<H>(rt, handle)
}

/// `__gpu_std_detach`.
pub fn detach<H: Hal>(rt: &Runtime, handle: i64) {
    leader_only::<H>(rt, "detach");
    threads::detach::<H>(rt, handle)
}

/// `__gpu_std_is_finished`.
pub fn is_finished(rt: &Runtime, handle: i64) -> bool {
    threads::is_finished(rt, handle)
}

/// `__gpu_std_sleep_ns`.
pub fn sleep_ns<H: Hal>(rt: &Runtime, ns: u64) {
    leader_only::<H>(rt, "thread::sleep");
    threads::sleep::<H>(rt, ns)
}

/// `__gpu_std_yield`.
pub fn yield_now<H: Hal>(rt: &Runtime) {
    leader_only::<H>(rt, "thread::yield_now");
    threads::yield_now::<H>(rt)
}

/// `__gpu_std_lanes_run`: `f(data, lane)` on every lane `0..lane_count()`.
///
/// # Safety
/// As for [`lanes::run`].
pub unsafe fn lanes_run<H: Hal>(rt: &Runtime, f: LaneFn, data: *const u8) {
    // SAFETY: the caller's contract.
    unsafe { lanes::run::<H>(rt, f, data) }
}

/// `__gpu_std_lane_count`.
pub fn lane_count<H: Hal>() -> u32 {
    lanes::lane_count::<H>()
}

/// `__gpu_std_alloc`.
pub fn alloc<H: Hal>(rt: &Runtime, size: usize, align: usize) -> *mut u8 {
    leader_only::<H>(rt, "alloc");
    rt.heap.alloc::<H>(Some(rt.my_slot::<H>()), size, align)
}

/// `__gpu_std_alloc_zeroed`.
pub fn alloc_zeroed<H: Hal>(rt: &Runtime, size: usize, align: usize) -> *mut u8 {
    let p = alloc::<H>(rt, size, align);
    if !p.is_null() {
        // SAFETY: a fresh block of at least `size` bytes.
        unsafe { core::ptr::write_bytes(p, 0, size) };
    }
    p
}

/// `__gpu_std_dealloc`.
///
/// # Safety
/// `ptr` came from `alloc` with this layout (GlobalAlloc's contract).
pub unsafe fn dealloc<H: Hal>(rt: &Runtime, ptr: *mut u8, size: usize, align: usize) {
    leader_only::<H>(rt, "dealloc");
    // SAFETY: the caller's contract.
    unsafe {
        rt.heap
            .dealloc::<H>(Some(rt.my_slot::<H>()), ptr, size, align)
    }
}

/// `__gpu_std_realloc`.
///
/// # Safety
/// As for [`dealloc`], with `old_size`.
pub unsafe fn realloc<H: Hal>(
    rt: &Runtime,
    ptr: *mut u8,
    old_size: usize,
    align: usize,
    new_size: usize,
) -> *mut u8 {
    leader_only::<H>(rt, "realloc");
    // SAFETY: the caller's contract.
    unsafe {
        rt.heap
            .realloc::<H>(Some(rt.my_slot::<H>()), ptr, old_size, align, new_size)
    }
}

/// `__gpu_std_heap_stats`: `out[0]` the heap's bytes, `out[1]` its largest
/// free extent's (the largest large block it could give now), for std's
/// out-of-memory message.
///
/// # Safety
/// `out` is writable for two `u64`s.
pub unsafe fn heap_stats<H: Hal>(rt: &Runtime, out: *mut u64) {
    let s = rt.heap.stats::<H>();
    // SAFETY: the caller's contract.
    unsafe { out.cast::<[u64; 2]>().write([s.size, s.largest_free]) };
}

/// `__gpu_std_write`: the whole buffer as one write (or `ERR_BAD_FD`).
/// Without a usable ring the bytes are dropped (nothing could report it).
///
/// # Safety
/// `ptr` is valid for `len` bytes.
pub unsafe fn write<H: Hal>(rt: &Runtime, fd: u32, ptr: *const u8, len: usize) -> isize {
    leader_only::<H>(rt, "write");
    if fd != 1 && fd != 2 {
        return ERR_BAD_FD;
    }
    let me = rt.me::<H>();
    let slot = rt.my_slot::<H>();
    leave_if_exiting::<H>(slot);
    if len > 0 && rt.ring().is_usable() {
        // SAFETY: the caller's contract.
        let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
        if let Some(t) = ring::write::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), me, fd, bytes) {
            // SAFETY: owner-only field of our own slot.
            unsafe { *H::warp_private(slot).last_write.get() = t + 1 };
        }
    }
    len as isize
}

/// `__gpu_std_flush`: waits until the host has taken every packet of the
/// caller's earlier writes (stdout and stderr alike: one ring, in order).
pub fn flush<H: Hal>(rt: &Runtime) {
    leader_only::<H>(rt, "flush");
    let slot = rt.my_slot::<H>();
    // SAFETY: owner-only field of our own slot.
    let last = unsafe { *H::warp_private(slot).last_write.get() };
    if last != 0 && rt.ring().is_usable() {
        ring::wait_taken::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), last - 1);
    }
}

/// `__gpu_std_exit`.
pub fn exit<H: Hal>(rt: &Runtime, code: i32) -> ! {
    if H::LOCKSTEP_LANES {
        lanes::on_one_lane::<H, _>(|| process::exit::<H>(rt, code))
    }
    process::exit::<H>(rt, code)
}

/// `__gpu_std_abort`: exit code 134.
pub fn abort<H: Hal>(rt: &Runtime) -> ! {
    if H::LOCKSTEP_LANES {
        lanes::on_one_lane::<H, _>(|| process::abort::<H>(rt, EXIT_ABORT))
    }
    process::abort::<H>(rt, EXIT_ABORT)
}

/// `__gpu_std_panic_abort`: exit code 101.
pub fn panic_abort<H: Hal>(rt: &Runtime) -> ! {
    if H::LOCKSTEP_LANES {
        lanes::on_one_lane::<H, _>(|| process::abort::<H>(rt, EXIT_PANIC))
    }
    process::abort::<H>(rt, EXIT_PANIC)
}

/// `__gpu_std_thread_index`.
pub fn thread_index<H: Hal>(rt: &Runtime) -> u32 {
    rt.me::<H>()
}

/// `__gpu_std_set_thread_name`.
///
/// # Safety
/// `ptr` is valid for `len` bytes.
pub unsafe fn set_thread_name<H: Hal>(rt: &Runtime, ptr: *const u8, len: usize) {
    leader_only::<H>(rt, "set_thread_name");
    // SAFETY: the caller's contract.
    unsafe { threads::set_name::<H>(rt, ptr, len) }
}

/// `__gpu_std_available_parallelism`: the threads `main` can spawn while no
/// other thread runs, i.e. every launched warp but `main`'s (0 for a launch
/// of one warp, which std reports as an error: there is no thread to spawn).
///
/// The usual idiom, `for _ in 0..available_parallelism() { spawn(..) }`
/// (and rayon's global pool, which sizes itself so), must not run out of
/// warps: a GPU warp cannot be oversubscribed as a CPU core can, and
/// `spawn` with every warp busy fails (`WouldBlock`) rather than wait for
/// a warp that may never come free.
pub fn available_parallelism(rt: &Runtime) -> usize {
    (rt.num_threads() as usize).saturating_sub(1)
}

/// `__gpu_std_futex_wait`.
///
/// # Safety
/// `addr` points to a live, 4-byte aligned word accessed atomically.
pub unsafe fn futex_wait<H: Hal>(
    rt: &Runtime,
    addr: *const u32,
    expected: u32,
    timeout_ns: u64,
) -> bool {
    leader_only::<H>(rt, "futex_wait");
    // SAFETY: the caller's contract; AtomicU32 has u32's layout.
    let word = unsafe { &*(addr as *const AtomicU32) };
    futex::wait::<H>(rt, word, expected, timeout_ns)
}

/// `__gpu_std_poll_wait`.
///
/// # Safety
/// `ready(data)` may be called, on the calling thread, until this returns.
pub unsafe fn poll_wait<H: Hal>(
    rt: &Runtime,
    ready: unsafe extern "C" fn(*const u8) -> bool,
    data: *const u8,
    timeout_ns: u64,
) -> bool {
    leader_only::<H>(rt, "poll_wait");
    // SAFETY: the caller's contract.
    futex::wait_until::<H>(rt, timeout_ns, || unsafe { ready(data) })
}

/// `__gpu_std_futex_wake`.
///
/// # Safety
/// As for [`futex_wait`].
pub unsafe fn futex_wake(addr: *const u32, count: u32) -> bool {
    // SAFETY: the caller's contract.
    futex::wake(unsafe { &*(addr as *const AtomicU32) }, count)
}

/// `__gpu_std_tls_create`.
pub fn tls_create(rt: &Runtime, dtor: Option<tls::Dtor>) -> usize {
    rt.tls.create(dtor)
}

/// `__gpu_std_tls_get`.
pub fn tls_get<H: Hal>(rt: &Runtime, key: usize) -> *mut u8 {
    leader_only::<H>(rt, "thread_local");
    tls::get::<H>(rt.my_slot::<H>(), key)
}

/// `__gpu_std_tls_set`.
pub fn tls_set<H: Hal>(rt: &Runtime, key: usize, value: *mut u8) {
    leader_only::<H>(rt, "thread_local");
    tls::set::<H>(rt.my_slot::<H>(), key, value)
}

/// `__gpu_std_tls_destroy`.
pub fn tls_destroy(rt: &Runtime, key: usize) {
    rt.tls.destroy(rt.slots(), key)
}

/// `__gpu_std_tls_run_dtors`: runs the calling thread's thread-local
/// destructors now (std's thread start calls it before its own cleanup,
/// which must come last); values without a destructor stay readable.
pub fn tls_run_dtors<H: Hal>(rt: &Runtime) {
    leader_only::<H>(rt, "thread_local");
    rt.tls.run_dtors::<H>(rt.my_slot::<H>())
}

/// A host round trip: `OP_NOP` with `FLAG_REPLY`, waiting for the reply
/// (for benchmarks; exported as `__gpu_rt_host_call_nop`). Does nothing
/// without a usable ring.
pub fn host_call_nop<H: Hal>(rt: &Runtime) {
    leader_only::<H>(rt, "host_call_nop");
    let me = rt.me::<H>();
    let slot = rt.my_slot::<H>();
    leave_if_exiting::<H>(slot);
    if rt.ring().is_usable() {
        let p = Packet {
            op: OP_NOP,
            thread: me,
            flags: 0,
            arg0: 0,
            arg1: 0,
        };
        ring::call::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), &p, &[]);
    }
}

/// Writes `len` random bytes from the host's OS generator to `dest`, a ring
/// payload at a time (`OP_RANDOM`); false without a usable ring. The
/// backend of the `getrandom` crate (exported as `__getrandom_v03_custom`
/// and `__getrandom_custom`).
///
/// # Safety
/// `dest` is valid for writes of `len` bytes (it may be uninitialised).
pub unsafe fn random_bytes<H: Hal>(rt: &Runtime, dest: *mut u8, len: usize) -> bool {
    leader_only::<H>(rt, "getrandom");
    let me = rt.me::<H>();
    let slot = rt.my_slot::<H>();
    leave_if_exiting::<H>(slot);
    if !rt.ring().is_usable() {
        return false;
    }
    let mut done = 0;
    while done < len {
        let n = (len - done).min(RING_PAYLOAD_BYTES);
        let mut bytes = [0u8; RING_PAYLOAD_BYTES];
        let p = Packet {
            op: OP_RANDOM,
            thread: me,
            flags: 0,
            arg0: n as u64,
            arg1: 0,
        };
        ring::call_for_bytes::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), &p, &[], &mut bytes[..n]);
        // SAFETY: `done + n <= len` bytes of `dest` are writable (caller).
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), dest.add(done), n) };
        done += n;
    }
    true
}

/// `__gpu_std_host_call`: one call of [`rt_abi::hostcall`] — files,
/// directories, stdin. Returns the status (`-errno` on failure) and stores
/// the reply's total length in `reply_len` (which may exceed `reply_cap`;
/// only `reply_cap` bytes are written). Without a usable ring: `-ENOSYS`.
/// A stdin read the host has no input for yet (`-EAGAIN`) is asked again
/// after a sleep, and a call still running on the host
/// ([`STATUS_PENDING`](rt_abi::hostcall::STATUS_PENDING)) is waited for, so
/// the caller sees only data, the end, or an error.
///
/// # Safety
/// `head`, `body` are readable for `head_len`, `body_len` bytes; `reply` is
/// writable for `reply_cap` bytes; `reply_len` is writable.
#[allow(clippy::too_many_arguments)]
pub unsafe fn host_call<H: Hal>(
    rt: &Runtime,
    call: u32,
    head: *const u8,
    head_len: usize,
    body: *const u8,
    body_len: usize,
    reply: *mut u8,
    reply_cap: usize,
    reply_len: *mut usize,
) -> i64 {
    use rt_abi::hostcall::{CALL_STDIN_READ, STATUS_PENDING, errno};
    leader_only::<H>(rt, "host_call");
    let me = rt.me::<H>();
    let slot = rt.my_slot::<H>();
    leave_if_exiting::<H>(slot);
    // SAFETY: the caller's contract (empty slices for zero lengths: the
    // pointers may then be dangling or null).
    let (head, body, reply) = unsafe {
        (
            if head_len == 0 { &[][..] } else { core::slice::from_raw_parts(head, head_len) },
            if body_len == 0 { &[][..] } else { core::slice::from_raw_parts(body, body_len) },
            if reply_cap == 0 { &mut [][..] } else { core::slice::from_raw_parts_mut(reply, reply_cap) },
        )
    };
    // SAFETY: the caller's contract.
    unsafe { reply_len.write(0) };
    if !rt.ring().is_usable() {
        return -i64::from(errno::ENOSYS);
    }
    // The host takes a request past MAX_REQUEST as a protocol violation:
    // refuse it here, as the OS refuses an over-long path.
    if (head.len() + body.len()) as u64 > rt_abi::hostcall::MAX_REQUEST {
        // Only a write carries data; every other body is paths.
        return -i64::from(if call == rt_abi::hostcall::CALL_WRITE { errno::EINVAL } else { errno::ENAMETOOLONG });
    }
    let mut nap_ns: u32 = 20_000;
    loop {
        let (mut status, mut total) = ring::host_call::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), me, call, head, body, reply);
        while status == STATUS_PENDING {
            // The call runs on the host (a FIFO, a slow disk): ask for its
            // result; the host holds each ask while it can.
            slot.wait.store(rt_abi::protocol::WAIT_HOST, crate::primitive::Ordering::Relaxed);
            leave_if_exiting::<H>(slot);
            (status, total) = ring::call_wait::<H, _>(rt.ring(), &slot.wait, rt.wait_sleep_ns(), me, reply);
        }
        if call == CALL_STDIN_READ && status == -i64::from(errno::EAGAIN) {
            // No input yet: wait as a sleeping thread would (reported as
            // waiting for the host), up to 1 ms between asks.
            slot.wait.store(rt_abi::protocol::WAIT_HOST, crate::primitive::Ordering::Relaxed);
            H::sleep_ns(nap_ns);
            nap_ns = (nap_ns * 2).min(1_000_000);
            leave_if_exiting::<H>(slot);
            continue;
        }
        slot.wait.store(rt_abi::protocol::WAIT_NONE, crate::primitive::Ordering::Relaxed);
        // SAFETY: the caller's contract.
        unsafe { reply_len.write(usize::try_from(total).unwrap_or(usize::MAX)) };
        return status;
    }
}
