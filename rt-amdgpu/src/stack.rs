//! The AMD half of shared stacks: the slot and the stack switch
//! (`rt_common::stack` has the shared code and the contract; the linker's
//! half is `gpu-ld/src/shared_stack.rs`; the overflow handler the linker's
//! frames call is in `start.rs`).
//!
//! Every lane of a wave runs frames (the leader its thread, the others
//! `gpu_lanes` work: `Hal::PARALLEL_LANES` = the wave size), so each wave
//! has the thread's stack and one 8 KiB stack per other lane in
//! `LaunchBlock::stacks`, as on NVIDIA.

use core::sync::atomic::AtomicPtr;

use rt_common::stack::LaneStack;
use rt_abi::abi::Entry;

/// The flat address of the calling lane's [`LaneStack`] (see
/// `rt_common::stack`: a scratch address names each lane's own memory).
/// Read by every function the linker rewrote.
#[unsafe(no_mangle)]
pub static __gpu_stack_slot: AtomicPtr<LaneStack> = AtomicPtr::new(core::ptr::null_mut());

/// [`rt_common::Hal::call_on_stack`] for AMD.
///
/// # Safety
/// As `Hal::call_on_stack`; called on a lane whose pair is set up.
pub unsafe fn call_on_stack(entry: Entry, data: *mut u8, stack: *mut u8, len: usize) {
    // SAFETY: the caller's contract; the slot is this runtime's.
    unsafe { rt_common::stack::call_on_stack(&__gpu_stack_slot, entry, data, stack, len) }
}

rt_abi::assert_symbol!(__gpu_stack_slot, rt_abi::symbols::STACK_SLOT);
