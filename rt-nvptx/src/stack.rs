//! The runtime's half of shared stacks (the linker's half is
//! `targets/nvptx-linker/src/shared_stack.rs`, which describes the contract).
//!
//! Every lane's stack frames live in global memory, in the region
//! `LaunchBlock::stacks` gives it ([`lane_stack`]). The lane's current stack
//! pointer and limit are a pair in the kernel's own private frame; its
//! generic address is the same in every lane (each lane's local window maps
//! it to its own memory), so one global, [`__gpu_stack_slot`], tells every
//! rewritten function where its lane's pair is.

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicPtr, Ordering::Relaxed};

use rt_common::Hal;
use rt_common::protocol::{ABI_VERSION, LAUNCH_MAGIC, LaunchBlock, STACK_RESERVE_BYTES, lane_stack};
use rt_common::threads::Entry;

use crate::hal::NvHal;

/// A lane's `[stack pointer, limit]`: frames must stay at or above the limit.
/// Bit 0 of the limit is set once the lane is reporting an overflow.
pub type StackPair = [u64; 2];

/// The generic address of the calling lane's [`StackPair`] (see the module
/// docs). Read by every function the linker rewrote.
#[unsafe(no_mangle)]
pub static __gpu_stack_slot: AtomicPtr<StackPair> = AtomicPtr::new(core::ptr::null_mut());

/// Bytes of the per-lane fallback stack in the kernel frame, used when the
/// launch has no stacks region (a launcher that does not know shared
/// stacks): enough to check the launch block and report the mismatch.
pub const FALLBACK_STACK_WORDS: usize = 256;

/// Points the calling lane's `pair` at its stack: its region of
/// `LaunchBlock::stacks`, or `fallback` (private) when the launch has none.
/// Publishes `pair`'s address for the rewritten functions.
///
/// # Safety
/// Called at kernel start by every lane, before any rewritten function,
/// with `pair` and `fallback` in the kernel's frame (alive until it
/// returns); `launch` is the kernel's launch block or null.
#[inline(always)]
pub unsafe fn enter_kernel(
    pair: &mut StackPair,
    fallback: &mut MaybeUninit<[u64; FALLBACK_STACK_WORDS]>,
    launch: *const LaunchBlock,
) {
    // SAFETY: the launch block is valid for the program (or null).
    let lb = unsafe { launch.as_ref() };
    let region = lb.filter(|lb| lb.magic == LAUNCH_MAGIC && lb.version == ABI_VERSION && lb.stacks != 0).map(|lb| {
        let warp = NvHal::thread_index(lb.block_warps.max(1));
        let (offset, bytes) = lane_stack(lb.stack_size, NvHal::LANES, warp, NvHal::lane_id());
        (lb.stacks + offset, bytes)
    });
    let fallback_bytes = (FALLBACK_STACK_WORDS * 8) as u64;
    let (bottom, bytes) = region.unwrap_or((fallback.as_mut_ptr() as u64, fallback_bytes));
    let reserve = STACK_RESERVE_BYTES.min(bytes / 2);
    *pair = [bottom + bytes, bottom + reserve];
    // Every lane stores the same address; each lane's later loads see it.
    __gpu_stack_slot.store(pair, Relaxed);
}

/// The linker's frames call this when a frame would go below the limit. Not
/// rewritten itself; it moves the limit into the reserve (once) so the
/// report can run, then reports and aborts.
#[unsafe(no_mangle)]
pub extern "C" fn __gpu_stack_overflow() -> ! {
    let pair = __gpu_stack_slot.load(Relaxed);
    // SAFETY: the rewritten caller just read this lane's pair through the
    // same address; only this lane uses it.
    let pair = unsafe { &mut *pair };
    if pair[1] & 1 != 0 {
        // The report itself overflowed the reserve: stop without it.
        // SAFETY: `trap` ends the kernel with an error the launcher reports.
        unsafe { core::arch::asm!("trap;", options(noreturn, nostack)) }
    }
    pair[1] = (pair[1] - STACK_RESERVE_BYTES.min(pair[1])) | 1;
    rt_common::stack::overflow::<NvHal>(&crate::RUNTIME)
}

/// [`Hal::call_on_stack`] for NVIDIA: swaps the lane's pair to `stack`.
///
/// # Safety
/// As `Hal::call_on_stack`; called on a lane whose pair is set up.
pub unsafe fn call_on_stack(entry: Entry, data: *mut u8, stack: *mut u8, len: usize) {
    let pair = __gpu_stack_slot.load(Relaxed);
    // SAFETY: this lane's pair (set at kernel start); only this lane uses it.
    let saved = unsafe { *pair };
    let bottom = stack as u64;
    let reserve = STACK_RESERVE_BYTES.min(len as u64 / 2);
    // SAFETY: as above.
    unsafe { *pair = [bottom + len as u64, bottom + reserve] };
    // SAFETY: the caller's contract.
    unsafe { entry(data) };
    // SAFETY: as above; the frames above ours are gone.
    unsafe { *pair = saved };
}
