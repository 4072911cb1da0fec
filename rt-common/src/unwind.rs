//! The warp's exception in flight: the runtime's half of unwinding.
//!
//! Neither GPU backend emits exception tables, so `gpu-ld` lowers
//! `invoke`/`landingpad`/`resume` after its whole-program `opt` onto one
//! word per warp (std thread), kept in [`WarpPrivate::exception`]:
//!
//! | word | meaning | who |
//! |---|---|---|
//! | null | no exception in flight | a thread starts and ends so |
//! | `e` | `e` is unwinding: every caller returns until a landing pad | set by [`resume`], taken by [`catch`] |
//!
//! The lowered code reads it ([`exception`]) after every call that may
//! unwind, so the read is one load of the warp's private state (shared
//! memory on NVIDIA, no slot looked up: [`Hal::my_warp_private`]; AMD keeps
//! it beside the lane's stack pointer: [`Hal::unwind_word`]), valid from
//! the kernel's start: the runtime's own start runs lowered code too. Only the
//! leader lane writes it: std's `panic_unwind` aborts rather than raise on
//! another lane, since that lane's exception would have no word of its own
//! and the leader is waiting for it. Other lanes may read it (lane work
//! runs lowered code too); while a lane function runs, the word is null:
//! it is non-null only between a `resume` and the `catch` of the next
//! landing pad, on a path of returns.
//!
//! The vendor crates' `#[no_mangle]` functions (`define_gpu_std_abi!`) are
//! named by [`rt_abi::symbols::UNWIND_EXCEPTION`], [`UNWIND_CATCH`] and
//! [`UNWIND_RESUME`].
//!
//! [`WarpPrivate::exception`]: crate::slot::WarpPrivate::exception
//! [`UNWIND_CATCH`]: rt_abi::symbols::UNWIND_CATCH
//! [`UNWIND_RESUME`]: rt_abi::symbols::UNWIND_RESUME

use crate::hal::Hal;
use crate::runtime::Runtime;

/// `__gpu_unwind_exception`: the calling warp's exception in flight, null if
/// none.
#[inline(always)]
pub fn exception<H: Hal>(rt: &Runtime) -> *mut u8 {
    // SAFETY: the warp's own word (`Hal::unwind_word`), written only by
    // its leader lane, which is the caller or waits for the caller.
    unsafe { *H::unwind_word(rt) }
}

/// `__gpu_unwind_word`: where the calling warp's exception word is, for
/// functions that read it after several calls.
#[inline(always)]
pub fn word<H: Hal>(rt: &Runtime) -> *mut *mut u8 {
    H::unwind_word(rt)
}

/// `__gpu_unwind_catch`: takes the exception in flight (null if none) and
/// leaves none, as a landing pad begins.
#[inline(always)]
pub fn catch<H: Hal>(rt: &Runtime) -> *mut u8 {
    let word = H::unwind_word(rt);
    // SAFETY: as in `exception`; a landing pad runs on the leader lane (a
    // lane function cannot unwind, see the module's comment).
    unsafe { core::mem::replace(&mut *word, core::ptr::null_mut()) }
}

/// `__gpu_unwind_resume`: makes `e` the exception in flight; the caller then
/// returns, and so does every caller up to a landing pad.
///
/// # Safety
/// Called on the leader lane, with no exception in flight; `e` is what the
/// landing pads that will [`catch`] it expect (std's `panic_unwind`
/// exception, or the pointer an earlier `catch` gave).
#[inline(always)]
pub unsafe fn resume<H: Hal>(rt: &Runtime, e: *mut u8) {
    // SAFETY: as in `exception`, on the leader lane (the caller's contract).
    unsafe { *H::unwind_word(rt) = e };
}

/// Leaves no exception in flight for the warp's next thread. A thread's
/// entry cannot unwind out (std catches in it; an `extern "C"` function's
/// unwinding aborts), so this only clears what a broken lowering left.
#[inline]
pub(crate) fn end_thread<H: Hal>(rt: &Runtime) {
    // SAFETY: as in `exception`: the leader lane, after the entry returned.
    unsafe { *H::unwind_word(rt) = core::ptr::null_mut() };
}
