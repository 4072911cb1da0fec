//! The kernel entry, where every lane of every wavefront starts, and the
//! handler the linker's frames call on a stack overflow.

use core::mem::MaybeUninit;

use rt_abi::protocol::LaunchBlock;
use rt_common::stack::{FALLBACK_STACK_WORDS, LaneStack, enter_kernel};
use rt_common::hal::out_of_line;
use rt_common::{Hal, start::warp_main};

use crate::RUNTIME;
use crate::hal::{Wave32, Wave64};
use crate::stack::__gpu_stack_slot;

unsafe extern "C" {
    /// The C `main` rustc generates for a `bin` crate (std's args come from
    /// the runtime, so it gets 0 and null).
    fn main(argc: i32, argv: *const *const u8) -> i32;
}

/// The kernel the launcher starts (`rt_abi::symbols::KERNEL_ENTRY`). It sets up the
/// lane's stack (frames live in global memory: `rt_common::stack`) and runs
/// [`start_wave`]. The linker does not move the kernel's own frame, so it
/// holds only the lane's stack pointer pair (and a fallback stack); the rest
/// runs in `start_wave`, which is never inlined here (called through
/// `rt_common::hal::out_of_line`: rustc ignores `#[inline(never)]` on amdgpu).
///
/// # Safety
/// Launched by the launcher with a valid launch block, 1-D grid, workgroups
/// of `block_warps` whole waves.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn __gpu_start(launch: *const LaunchBlock) {
    let mut pair: LaneStack = [0; 4];
    // Not zeroed: it is a stack (zeroing would cost every lane 2 KiB of stores).
    let mut fallback = MaybeUninit::<[u64; FALLBACK_STACK_WORDS]>::uninit();
    // Folded to a constant for the target CPU: one arm remains.
    if core::arch::amdgpu::wavefrontsize() == 64 {
        // SAFETY: at kernel start, before any call; both live until this
        // function returns, the pair used through the slot only. Then the
        // kernel's contract.
        unsafe {
            enter_kernel::<Wave64>(&__gpu_stack_slot, &raw mut pair, &mut fallback, launch);
            out_of_line(start_wave::<Wave64> as unsafe fn(_))(launch);
        }
    } else {
        // SAFETY: as above.
        unsafe {
            enter_kernel::<Wave32>(&__gpu_stack_slot, &raw mut pair, &mut fallback, launch);
            out_of_line(start_wave::<Wave32> as unsafe fn(_))(launch);
        }
    }
    // The pair and fallback stack are used through `__gpu_stack_slot` until
    // here: keep them (and their stores) alive.
    core::hint::black_box((&mut pair, &mut fallback));
}

/// Lane 0 of each wave runs the runtime ([`warp_main`]); the branch masks
/// the other lanes off (`EXEC`), so they issue nothing until the wave ends,
/// except while lane 0 runs `gpu_lanes::for_each_lane` work: the whole-wave
/// call (`crate::lanes`) turns them on for it. They hold nothing live here
/// that it could clobber: only this function's frame, below the leader's,
/// and values LLVM keeps across the call to `run_leader` (callee-saved
/// registers, which the lane function saves and restores in every lane).
///
/// # Safety
/// As [`__gpu_start`], after the lane's stack is set up.
#[inline(never)]
unsafe fn start_wave<H: Hal>(launch: *const LaunchBlock) {
    if H::lane_id() == 0 {
        // SAFETY: once per wave on its leader lane, with the kernel's launch block.
        unsafe { out_of_line(run_leader::<H> as unsafe fn(_))(launch) };
    }
    H::sync_lane(u64::MAX);
}

/// The leader lane's part of [`start_wave`]: the runtime ([`warp_main`]),
/// out of line so that its frame is carved from the leader's stack alone.
/// The whole wave runs `start_wave`'s prologue, and the other lanes have
/// `LANE_STACK_BYTES` (8 KiB) of stack each.
///
/// # Safety
/// Once per wave, on its leader lane, with the kernel's launch block.
unsafe fn run_leader<H: Hal>(launch: *const LaunchBlock) {
    // SAFETY: the caller's contract; `RUNTIME` is the program's runtime and
    // `main` the program's C main.
    unsafe { warp_main::<H>(&RUNTIME, launch, || main(0, core::ptr::null())) };
}

unsafe extern "C" {
    /// `s_trap 2`: ends the kernel with an error the launcher reports.
    #[link_name = "llvm.trap"]
    fn llvm_trap() -> !;
}

fn trap() -> ! {
    // SAFETY: a trap instruction; it does not return.
    unsafe { llvm_trap() }
}

/// The linker's frames call this when a frame would go below the limit.
#[unsafe(no_mangle)]
pub extern "C" fn __gpu_stack_overflow() -> ! {
    use rt_common::stack::Exhausted::Frames;
    with_amd_hal!(H => rt_common::stack::overflow_on_slot::<H>(&crate::RUNTIME, &__gpu_stack_slot, Some(Frames), trap))
}

/// The linker's depth checks (`gpu-ld/src/call_stack.rs`) call this when a
/// recursive function's call stack (scratch) passes its ceiling.
#[unsafe(no_mangle)]
pub extern "C" fn __gpu_call_stack_overflow() -> ! {
    use rt_common::stack::Exhausted::CallStack;
    with_amd_hal!(H => rt_common::stack::overflow_on_slot::<H>(&crate::RUNTIME, &__gpu_stack_slot, Some(CallStack), trap))
}

rt_abi::assert_symbol!(__gpu_start, rt_abi::symbols::KERNEL_ENTRY);
rt_abi::assert_symbol!(__gpu_stack_overflow, rt_abi::symbols::STACK_OVERFLOW);
rt_abi::assert_symbol!(__gpu_call_stack_overflow, rt_abi::symbols::CALL_STACK_OVERFLOW);
