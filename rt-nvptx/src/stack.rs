//! The NVIDIA half of shared stacks: the slot and the stack switch
//! (`rt_common::stack` has the shared code and the contract; the linker's
//! half is `gpu-ld/src/shared_stack.rs`; the overflow handler the linker's
//! frames call is in `start.rs`).

use core::sync::atomic::AtomicPtr;

use rt_common::stack::LaneStack;
use rt_abi::abi::Entry;

/// The generic address of the calling lane's [`LaneStack`] (see
/// `rt_common::stack`). Read by every function the linker rewrote.
#[unsafe(no_mangle)]
pub static __gpu_stack_slot: AtomicPtr<LaneStack> = AtomicPtr::new(core::ptr::null_mut());

/// [`rt_common::Hal::call_on_stack`] for NVIDIA.
///
/// # Safety
/// As `Hal::call_on_stack`; called on a lane whose pair is set up.
pub unsafe fn call_on_stack(entry: Entry, data: *mut u8, stack: *mut u8, len: usize) {
    // SAFETY: the caller's contract; the slot is this runtime's.
    unsafe { rt_common::stack::call_on_stack(&__gpu_stack_slot, entry, data, stack, len) }
}

rt_abi::assert_symbol!(__gpu_stack_slot, rt_abi::symbols::STACK_SLOT);
