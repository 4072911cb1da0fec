//! Lane-parallel work (`rt_common::lanes`) on the CPU harness, with 32 and 64
//! lanes: the lockstep path AMD runs (`run_lockstep`: every lane once
//! through `Hal::run_lanes`, nesting refused, a runtime call from a lane
//! other than 0 refused with a message), through the ABI; and the NVIDIA
//! handoff's leader side with a HAL that claims to be lane 5 (or 0) of a
//! 32-lane parallel warp.

use std::boxed::Box;
use std::string::ToString;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use super::*;
use rt_abi::abi::EXIT_ABORT;
use crate::cpu::machine::runtime;
use crate::cpu::{Cpu32, Cpu64};
use rt_common::hal::Hal;
use rt_common::lanes::{full_mask, leader_only};
use rt_abi::protocol::OP_ABORT;
use rt_common::start::Msg;

/// A HAL that claims lanes run in parallel (`PARALLEL_LANES` = 32) and
/// that the caller is lane `$lane`; everything else is the CPU harness's (so
/// it runs inside a machine). `sync_lane` returns at once: no other lane
/// exists, so only the leader's side of the protocol runs.
macro_rules! test_hal {
    ($name:ident, $lane:expr) => {
        struct $name;
        // SAFETY: test-only; delegates to Cpu32 (which upholds the contract)
        // except for the lane identity.
        unsafe impl Hal for $name {
            const LANES: u32 = 32;
            const PARALLEL_LANES: u32 = 32;
            const CLOCK_HZ: u64 = Cpu32::CLOCK_HZ;
            const WAKES: bool = Cpu32::WAKES;
            fn lane_id() -> u32 {
                $lane
            }
            fn lane_mask() -> u64 {
                1 << $lane
            }
            fn ballot(p: bool) -> u64 {
                (p as u64) << $lane
            }
            fn broadcast_value(v: u32) -> u32 {
                v
            }
            fn sync_lane(_: u64) {}
            fn thread_index(b: u32) -> u32 {
                Cpu32::thread_index(b)
            }
            fn sleep_ns(ns: u32) {
                Cpu32::sleep_ns(ns)
            }
            fn fixed_frequency_clock() -> u64 {
                Cpu32::fixed_frequency_clock()
            }
            fn fence_device_acquire() {
                Cpu32::fence_device_acquire()
            }
            fn fence_device_release() {
                Cpu32::fence_device_release()
            }
            fn fence_system_release() {
                Cpu32::fence_system_release()
            }
            fn end_program() -> ! {
                Cpu32::end_program()
            }
            fn wake(i: u32) {
                Cpu32::wake(i)
            }
        }
    };
}
test_hal!(Lane5, 5);
test_hal!(Leader32, 0);

unsafe extern "C" fn count_lane(data: *const u8, lane: u32) {
    // SAFETY: `data` is the test's leaked [AtomicU32; 2].
    let c = unsafe { &*(data as *const [AtomicU32; 2]) };
    c[0].fetch_add(1, Relaxed);
    c[1].fetch_or(1 << lane, Relaxed);
}

/// Per-lane counters: `[calls, lanes seen (bits 0..64), lane ids seen]`.
type Seen = ([AtomicU32; 2], [AtomicU32; 64]);

fn new_seen() -> &'static Seen {
    Box::leak(Box::new(([const { AtomicU32::new(0) }; 2], [const { AtomicU32::new(0) }; 64])))
}

unsafe extern "C" fn count_every_lane(data: *const u8, lane: u32) {
    // SAFETY: `data` is the test's leaked `Seen`.
    let (c, per) = unsafe { &*(data as *const Seen) };
    c[0].fetch_add(1, Relaxed);
    per[lane as usize].fetch_add(1, Relaxed);
    // The lane the HAL says is running is the lane f was given.
    assert_eq!(crate::cpu::CpuHal::<64>::lane_id(), lane);
}

fn lanes_run_is_once_per_lane(lanes: u32) {
    run_ok(cfg(2, lanes), move || {
        // SAFETY: no preconditions.
        let n = unsafe { __gpu_std_lane_count() };
        assert_eq!(n, lanes, "every lane of the warp runs lane work");
        let seen = new_seen();
        for _ in 0..3 {
            // SAFETY: count_every_lane is sound on any lane with this data.
            unsafe { __gpu_std_lanes_run(count_every_lane, seen as *const _ as *const u8) };
            // Back on the leader: lane 0 again, and its runtime calls work.
            assert_eq!(crate::cpu::CpuHal::<64>::lane_id(), 0);
            leader_only::<Cpu64>(runtime(), "alloc");
        }
        assert_eq!(seen.0[0].load(Relaxed), 3 * n);
        for (l, c) in seen.1.iter().enumerate() {
            assert_eq!(c.load(Relaxed), if (l as u32) < n { 3 } else { 0 }, "lane {l}");
        }
        // The command is cleared after each call.
        assert_eq!(runtime().my_slot::<Cpu64>().lane_fn.load(Relaxed), 0);
        0
    });
}

/// A runtime call (here `alloc` through the ABI) from a lane other than 0
/// inside a lane run stops the program with a message naming the lane.
fn std_call_from_a_lane_is_refused(lanes: u32) {
    unsafe extern "C" fn alloc_on_every_lane(_: *const u8, _: u32) {
        // SAFETY: a plain allocation; lane 0's succeeds, lane 1's aborts.
        let p = unsafe { __gpu_std_alloc(16, 8) };
        assert!(!p.is_null());
    }
    let out = run(cfg(2, lanes), || {
        // SAFETY: alloc_on_every_lane ignores its data.
        unsafe { __gpu_std_lanes_run(alloc_on_every_lane, core::ptr::null()) };
        unreachable!("lane 1 allocated")
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    let err = out.output(2);
    assert!(err.contains("`alloc` called from lane 1 inside gpu_lanes::for_each_lane"), "{err}");
}

/// for_each_lane inside for_each_lane: refused with a message (lane 0 finds
/// the outer command in its slot).
fn nested_lane_run_is_refused(lanes: u32) {
    unsafe extern "C" fn nest(_: *const u8, _: u32) {
        // SAFETY: the same function, null data it never reads.
        unsafe { __gpu_std_lanes_run(nest, core::ptr::null()) };
    }
    let out = run(cfg(2, lanes), || {
        // SAFETY: nest ignores its data.
        unsafe { __gpu_std_lanes_run(nest, core::ptr::null()) };
        unreachable!()
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    assert!(out.output(2).contains("called inside for_each_lane"), "{}", out.output(2));
}

/// Lanes of spawned threads run too, each warp on its own slot.
fn lanes_of_spawned_threads(lanes: u32) {
    unsafe extern "C" fn worker(data: *mut u8) {
        for _ in 0..5 {
            // SAFETY: count_every_lane is sound with this data.
            unsafe { __gpu_std_lanes_run(count_every_lane, data as *const u8) };
        }
    }
    run_ok(cfg(4, lanes), move || {
        let seen = new_seen();
        let hs: std::vec::Vec<i64> = (0..3)
            // SAFETY: worker only uses the leaked counters.
            .map(|_| unsafe { __gpu_std_spawn(0, worker, seen as *const _ as *mut u8, None) })
            .collect();
        for h in hs {
            assert!(h >= 0, "spawn failed: {h}");
            // SAFETY: a handle spawn returned, joined once.
            unsafe { __gpu_std_join(h) };
        }
        assert_eq!(seen.0[0].load(Relaxed), 15 * lanes);
        0
    });
}

fn leader_passes_the_check(lanes: u32) {
    run_ok(cfg(2, lanes), || {
        leader_only::<Cpu32>(runtime(), "alloc");
        leader_only::<Cpu64>(runtime(), "alloc");
        0
    });
}

fn other_lane_aborts_with_a_message(lanes: u32) {
    let out = run(cfg(2, lanes), || {
        leader_only::<Lane5>(runtime(), "alloc");
        unreachable!("lane 5 passed the lane-0 check")
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    let err = out.output(2);
    assert!(
        err.contains("`alloc` called from lane 5 inside gpu_lanes::for_each_lane"),
        "{err}"
    );
}

fn spawn_from_other_lane_aborts(lanes: u32) {
    let out = run(cfg(3, lanes), || {
        // SAFETY: aborts before the entry could be used.
        unsafe {
            rt_common::abi_impl::spawn::<Lane5>(runtime(), 0, noop, core::ptr::null_mut(), None);
        }
        unreachable!()
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    assert!(out.output(2).contains("`spawn` called from lane 5"), "{}", out.output(2));
}

unsafe extern "C" fn noop(_: *mut u8) {}

/// The leader's side of a parallel run: one generation per call, `lane_fn`
/// cleared after it, and a nested call refused.
fn leader_protocol_and_nesting(lanes: u32) {
    run_ok(cfg(2, lanes), || {
        let c: &'static [AtomicU32; 2] = Box::leak(Box::new([AtomicU32::new(0), AtomicU32::new(0)]));
        let slot = runtime().my_slot::<Cpu32>();
        let g0 = slot.lane_gen.load(Relaxed);
        for _ in 0..2 {
            // SAFETY: count_lane is sound with this data.
            unsafe { rt_common::lanes::run::<Leader32>(runtime(), count_lane, c as *const _ as *const u8) };
        }
        assert_eq!(c[0].load(Relaxed), 2, "lane 0's share ran once per call");
        assert_eq!(slot.lane_gen.load(Relaxed), g0.wrapping_add(2));
        assert_eq!(slot.lane_fn.load(Relaxed), 0);
        0
    });
    let out = run(cfg(2, lanes), || {
        unsafe extern "C" fn nest(_: *const u8, _: u32) {
            // SAFETY: the same function, null data it never reads.
            unsafe { rt_common::lanes::run::<Leader32>(runtime(), nest, core::ptr::null()) };
        }
        // SAFETY: nest ignores its data.
        unsafe { rt_common::lanes::run::<Leader32>(runtime(), nest, core::ptr::null()) };
        unreachable!()
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    assert!(out.output(2).contains("called inside for_each_lane"), "{}", out.output(2));
}

lanes_test!(
    lanes_run_is_once_per_lane,
    std_call_from_a_lane_is_refused,
    nested_lane_run_is_refused,
    lanes_of_spawned_threads,
    leader_passes_the_check,
    other_lane_aborts_with_a_message,
    spawn_from_other_lane_aborts,
    leader_protocol_and_nesting,
);

#[test]
fn masks_and_message() {
    assert_eq!(full_mask::<Cpu32>(), 0xffff_ffff);
    assert_eq!(full_mask::<Cpu64>(), u64::MAX);
    let mut m = Msg::new();
    rt_common::lanes::misuse_message(&mut m, "write", 7);
    let s = std::str::from_utf8(m.as_bytes()).unwrap().to_string();
    assert!(s.starts_with("gpu runtime: `write` called from lane 7"), "{s}");
    assert!(s.ends_with("may call into std there\n"), "{s}");
}
