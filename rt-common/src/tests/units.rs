//! Unit tests that need no machine.

use crate::backoff::{Backoff, MIN_SLEEP_NS, SPIN_POLLS};
use crate::cpu::{Cpu32, CpuHal};
use crate::hal::{Hal, ticks_to_ns};
use crate::heap::class_of;
use crate::process::splitmix64;

struct Hz100M;
// SAFETY: test-only; only CLOCK_HZ is used.
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
    fn fence_device_acquire() {}
    fn fence_device_release() {}
    fn fence_system_acquire() {}
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
    assert_eq!(class_of(usize::MAX, 8), None);
}

#[test]
fn splitmix_differs() {
    assert_ne!(splitmix64(1), splitmix64(2));
}
