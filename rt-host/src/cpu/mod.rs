//! The CPU harness: [`CpuHal`] runs the real runtime with OS threads as warps.
//!
//! # What a lane is on the CPU
//! Each warp is one OS thread, and that thread *is the warp's leader lane*
//! (lane 0). The other `LANES - 1` lanes are modelled as masked off, as they
//! are on AMD while a thread runs: `lane_mask()` is the calling lane's bit,
//! `ballot(p)` is `p` at that bit, `broadcast_value(v)` is `v`, `sync_lane`
//! returns at once. `LANES` (32 or 64) is the compile-time constant the
//! launch block is checked against and the ABI dispatch uses, like
//! `Wave64`/`Wave32`.
//!
//! Lane-parallel work runs as on AMD ([`Hal::LOCKSTEP_LANES`]): the
//! runtime's `lanes::run_lockstep` (the same code the AMD build runs) calls
//! [`Hal::run_lanes`], which calls the lane entry for lane `0`, `1`, ...,
//! `LANES - 1` in turn on the warp's OS thread, with [`Hal::lane_id`]
//! answering the lane being run: every lane runs once, and a runtime call
//! from a lane other than 0 is refused as on a GPU. (AMD runs the lanes at
//! once, in lockstep; the contract, once per lane and return after all, is
//! the same.)
//!
//! Sleep: `< 1 µs` yields, longer sleeps `park_timeout` (so [`Hal::wake`]
//! can cut them short: spawn wakes the new thread's warp, a finishing
//! thread its joiner). Under loom every sleep is `loom::thread::yield_now`.
//! `end_program` parks the OS thread for good (it cannot unwind through the
//! `extern "C"` ABI); the [`Machine`](machine::Machine) counts it as ended.

use core::cell::Cell;
use std::time::Instant;

use rt_common::hal::Hal;

#[cfg(not(loom))]
pub mod abi;
#[cfg(not(loom))]
pub mod host;
#[cfg(not(loom))]
pub mod machine;

#[cfg(all(test, not(loom)))]
mod hostcall_tests;

/// Per-OS-thread identity of the warp it plays.
#[derive(Clone, Copy, Debug)]
pub struct WarpCtx {
    pub index: u32,
    pub lanes: u32,
    /// The machine's shared state (wake handles, end counter, runtime).
    pub shared: *const (),
}

#[cfg(not(loom))]
std::thread_local! { static CTX: Cell<WarpCtx> = const { Cell::new(WarpCtx { index: 0, lanes: 32, shared: core::ptr::null() }) }; }
#[cfg(loom)]
loom::thread_local! { static CTX: Cell<WarpCtx> = Cell::new(WarpCtx { index: 0, lanes: 32, shared: core::ptr::null() }); }

/// Makes the calling OS thread play warp `ctx.index`.
pub fn set_ctx(ctx: WarpCtx) {
    CTX.with(|c| c.set(ctx));
}

#[cfg(not(loom))]
std::thread_local! { static LANE: Cell<u32> = const { Cell::new(0) }; }
#[cfg(loom)]
loom::thread_local! { static LANE: Cell<u32> = Cell::new(0); }

#[cfg(not(loom))]
std::thread_local! { static HEAP_STACK: Cell<(usize, usize)> = const { Cell::new((0, 0)) }; }

/// The heap stack `(address, bytes)` the calling warp's thread was given
/// through `Hal::call_on_stack`, or `(0, 0)`. The CPU cannot switch stacks,
/// so this is how tests see that a thread got the stack it asked for.
#[cfg(not(loom))]
pub fn heap_stack() -> (usize, usize) {
    HEAP_STACK.with(|s| s.get())
}

/// The calling OS thread's warp identity.
pub fn ctx() -> WarpCtx {
    CTX.with(|c| c.get())
}

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The CPU HAL with `LANES` lanes per warp.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuHal<const LANES: u32>;

/// 32-lane CPU warps (NVIDIA, RDNA).
pub type Cpu32 = CpuHal<32>;
/// 64-lane CPU warps (CDNA / GCN).
pub type Cpu64 = CpuHal<64>;

#[cfg(not(loom))]
use core::sync::atomic::{Ordering, fence};
#[cfg(loom)]
use loom::sync::atomic::{Ordering, fence};

// SAFETY: `thread_index` is the harness-assigned index, unique per warp
// thread; fences are full CPU fences; the clock is `Instant`-based and
// monotonic; `end_program` never returns.
unsafe impl<const LANES: u32> Hal for CpuHal<LANES> {
    const LANES: u32 = LANES;
    /// Lane work runs in `run_lanes`, as on AMD.
    const LOCKSTEP_LANES: bool = true;
    const CLOCK_HZ: u64 = 1_000_000_000;
    const WAKES: bool = true;

    /// The OS thread is lane 0, except inside `run_lanes`: the lane it runs.
    fn lane_id() -> u32 {
        LANE.with(|l| l.get())
    }
    /// One lane is modelled at a time: the calling one.
    fn lane_mask() -> u64 {
        1 << Self::lane_id()
    }
    /// One active lane.
    fn ballot(pred: bool) -> u64 {
        (pred as u64) << Self::lane_id()
    }
    /// One active lane: its own value.
    fn broadcast_value(value: u32) -> u32 {
        value
    }
    /// Nothing to wait for: one lane.
    fn sync_lane(_mask: u64) {}
    /// Assigned by the harness.
    fn thread_index(_block_warps: u32) -> u32 {
        ctx().index
    }
    /// `yield_now` below 1 µs, `park_timeout` above.
    fn sleep_ns(ns: u32) {
        #[cfg(loom)]
        {
            let _ = ns;
            loom::thread::yield_now();
        }
        #[cfg(not(loom))]
        if ns < 1000 {
            std::thread::yield_now();
        } else {
            std::thread::park_timeout(std::time::Duration::from_nanos(ns as u64));
        }
    }
    /// Nanoseconds since the process's first clock read.
    fn fixed_frequency_clock() -> u64 {
        epoch().elapsed().as_nanos() as u64
    }
    /// `fence(Acquire)`.
    fn fence_device_acquire() {
        fence(Ordering::Acquire)
    }
    /// `fence(Release)`.
    fn fence_device_release() {
        fence(Ordering::Release)
    }
    /// `fence(Release)`.
    fn fence_system_release() {
        fence(Ordering::Release)
    }
    /// Parks the OS thread for good (counted as ended by the machine).
    fn end_program() -> ! {
        #[cfg(not(loom))]
        machine::warp_ended_forever();
        #[cfg(loom)]
        panic!("end_program under loom");
    }
    /// Records the stack (see [`heap_stack`]) and calls `entry(data)` on the
    /// OS thread's own stack.
    #[cfg(not(loom))]
    unsafe fn call_on_stack(entry: rt_abi::abi::Entry, data: *mut u8, stack: *mut u8, len: usize) {
        HEAP_STACK.with(|s| s.set((stack as usize, len)));
        // SAFETY: the trait's contract.
        unsafe { entry(data) };
        HEAP_STACK.with(|s| s.set((0, 0)));
    }
    /// Every lane.
    fn lockstep_lanes() -> u32 {
        LANES
    }
    /// `f(data, lane)` for each lane in turn, with `lane_id()` answering it.
    unsafe fn run_lanes(f: rt_abi::abi::LaneFn, data: *const u8) {
        for lane in 0..LANES {
            LANE.with(|l| l.set(lane));
            // SAFETY: the trait's contract.
            unsafe { f(data, lane) };
        }
        LANE.with(|l| l.set(0));
    }
    /// Unparks warp `index`'s OS thread.
    fn wake(index: u32) {
        #[cfg(not(loom))]
        machine::wake(index);
        #[cfg(loom)]
        let _ = index;
    }
}
