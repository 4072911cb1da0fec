//! The kernel entry, where every lane of every warp starts, and the
//! handler the linker's frames call on a stack overflow.

use rt_common::lanes::{full_mask, lane_loop, lane_slot};
use core::sync::atomic::Ordering::Relaxed;
use rt_abi::protocol::LaunchBlock;
use rt_common::{Hal, start::warp_main};

use core::mem::MaybeUninit;

use crate::RUNTIME;
use crate::hal::{NvHal, __gpu_thread_table};
use crate::stack::__gpu_stack_slot;
use rt_common::stack::{FALLBACK_STACK_WORDS, LaneStack, enter_kernel, launch_thread_table};

unsafe extern "C" {
    /// The C `main` rustc generates for a `bin` crate (std's args come from
    /// the runtime, so it gets 0 and null).
    fn main(argc: i32, argv: *const *const u8) -> i32;
    /// 1 if the program can call `gpu_lanes::for_each_lane`, 0 if not: a
    /// constant that `gpu-ld` defines after its whole-program optimization
    /// (gpu-ld/src/lanes_wanted.rs).
    static __gpu_lanes_wanted: u8;
}

/// The kernel the launcher starts (`rt_abi::symbols::KERNEL_ENTRY`). It sets up
/// the lane's stack (frames live in global memory: `rt_common::stack`) and runs
/// [`start_lane`]. The linker does not move the kernel's own frame, so it
/// holds only the lane's stack pointer pair (and a fallback stack); the
/// rest runs in `start_lane`, which is never inlined here.
///
/// # Safety
/// Launched by the launcher with a valid launch block, 1-D grid, blocks of
/// whole warps.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn __gpu_start(launch: *const LaunchBlock) {
    let mut pair: LaneStack = [0; 4];
    // Not zeroed: it is a stack (zeroing would cost every lane 2 KiB of stores).
    let mut fallback = MaybeUninit::<[u64; FALLBACK_STACK_WORDS]>::uninit();
    // SAFETY: at kernel start, before any call; both live until this
    // function returns, the pair used through the slot only.
    unsafe { enter_kernel::<NvHal>(&__gpu_stack_slot, &raw mut pair, &mut fallback, launch) };
    // Every lane, before anything reads it: `gpu-ld` keeps it (and the
    // stack slot) in shared memory, one copy per block
    // (gpu-ld/src/block_shared.rs).
    __gpu_thread_table.store(launch_thread_table(launch), Relaxed);
    // SAFETY: the launcher's contract, passed on.
    unsafe { start_lane(launch) };
    // The pair and fallback stack are used through `__gpu_stack_slot` until
    // here: keep them (and their stores) alive.
    core::hint::black_box((&mut pair, &mut fallback));
}

/// The leader lane's part of [`start_lane`]: the runtime ([`warp_main`]),
/// in a function of its own so that its frame (over 10 KiB with its
/// message buffers when the linker inlines little) is carved from the
/// leader's stack alone. Every lane runs `start_lane`'s prologue, and lanes
/// 1-31 have `LANE_STACK_BYTES` (8 KiB) of stack.
///
/// # Safety
/// Once per warp, on its leader lane, with the kernel's launch block.
#[inline(never)]
unsafe fn run_leader(launch: *const LaunchBlock) {
    // SAFETY: the warp's own entry, before its first runtime call (the
    // shared memory it lives in starts undefined).
    unsafe { NvHal::warp_private_here().reset() };
    // SAFETY: the caller's contract; `RUNTIME` is the program's runtime and
    // `main` the program's C main.
    unsafe { warp_main::<NvHal>(&RUNTIME, launch, || main(0, core::ptr::null())) };
}

/// Lane 0 of each warp runs the runtime ([`warp_main`]); the other lanes
/// run the lane loop (`rt_common::lanes`): they wait at a warp barrier,
/// issuing nothing, and run `gpu_lanes::for_each_lane` work when lane 0
/// hands them some, until lane 0 returns or exits. In a program that
/// cannot call `for_each_lane` they return instead: parked at the barrier
/// they would double the time of every sleep of lane 0 (a `nanosleep 0`
/// takes 76 ns instead of 40 on an H100), and an exited lane counts as
/// arrived at the barriers lane 0 still passes.
///
/// # Safety
/// As [`__gpu_start`], after the lane's stack is set up.
#[inline(never)]
unsafe fn start_lane(launch: *const LaunchBlock) {
    let full = full_mask::<NvHal>();
    // Every lane (leader included) takes the same decision on the launch
    // block and reads the lane-command generation *before* the barrier
    // below: the leader issues no command before it, so no lane can miss one.
    // SAFETY: `launch` is the kernel's launch block (or null, checked).
    let slot = unsafe { lane_slot::<NvHal>(launch) };
    let seen = slot.map_or(0, |s| s.lane_gen.load(Relaxed));
    if NvHal::lane_id() == 0
        && let Some(s) = slot
    {
        // No lane command runs yet (a table reused from an earlier launch
        // may hold a stale one); lanes read it only after the barrier.
        s.lane_fn.store(0, Relaxed);
    }
    NvHal::sync_lane(full);
    if NvHal::lane_id() == 0 {
        // SAFETY: once per warp on its leader lane, with the kernel's launch block.
        unsafe { run_leader(launch) };
        // Releases the lanes waiting at their start barrier with the
        // generation unchanged: they return.
        NvHal::sync_lane(full);
    } else if let Some(slot) = slot
        // SAFETY: a byte `gpu-ld` defines as a constant.
        && unsafe { __gpu_lanes_wanted } != 0
    {
        // SAFETY: a non-leader lane of a warp whose leader runs warp_main on
        // this slot, after the common barrier above; NvHal runs 32 lanes.
        unsafe { lane_loop::<NvHal>(slot, seen) };
    }
}

/// The linker's frames call this when a frame would go below the limit.
#[unsafe(no_mangle)]
pub extern "C" fn __gpu_stack_overflow() -> ! {
    fn trap() -> ! {
        // SAFETY: `trap` ends the kernel with an error the launcher reports.
        unsafe { core::arch::asm!("trap;", options(noreturn, nostack)) }
    }
    rt_common::stack::overflow_on_slot::<NvHal>(&crate::RUNTIME, &__gpu_stack_slot, None, trap)
}

rt_abi::assert_symbol!(__gpu_start, rt_abi::symbols::KERNEL_ENTRY);
rt_abi::assert_symbol!(__gpu_lanes_wanted, rt_abi::symbols::LANES_WANTED);
rt_abi::assert_symbol!(__gpu_stack_overflow, rt_abi::symbols::STACK_OVERFLOW);
