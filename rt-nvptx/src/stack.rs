//! The NVIDIA half of shared stacks: the slot, the overflow handler and the
//! stack switch (`rt_common::stack` has the shared code and the contract;
//! the linker's half is `gpu-ld/src/shared_stack.rs`).

use core::sync::atomic::AtomicPtr;

use rt_common::stack::LaneStack;
use rt_common::threads::Entry;

use crate::hal::NvHal;

/// The generic address of the calling lane's [`LaneStack`] (see
/// `rt_common::stack`). Read by every function the linker rewrote.
#[unsafe(no_mangle)]
pub static __gpu_stack_slot: AtomicPtr<LaneStack> = AtomicPtr::new(core::ptr::null_mut());

/// The linker's frames call this when a frame would go below the limit.
#[unsafe(no_mangle)]
pub extern "C" fn __gpu_stack_overflow() -> ! {
    fn trap() -> ! {
        // SAFETY: `trap` ends the kernel with an error the launcher reports.
        unsafe { core::arch::asm!("trap;", options(noreturn, nostack)) }
    }
    rt_common::stack::overflow_on_slot::<NvHal>(&crate::RUNTIME, &__gpu_stack_slot, trap)
}

/// [`rt_common::Hal::call_on_stack`] for NVIDIA.
///
/// # Safety
/// As `Hal::call_on_stack`; called on a lane whose pair is set up.
pub unsafe fn call_on_stack(entry: Entry, data: *mut u8, stack: *mut u8, len: usize) {
    // SAFETY: the caller's contract; the slot is this runtime's.
    unsafe { rt_common::stack::call_on_stack(&__gpu_stack_slot, entry, data, stack, len) }
}
