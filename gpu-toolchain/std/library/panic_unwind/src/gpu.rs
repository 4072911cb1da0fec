//! Unwinding on GPUs (`target_os = "cuda"` / `"amdhsa"`).
//!
//! Neither LLVM GPU backend emits exception tables, so `gpu-ld` lowers
//! `invoke`/`landingpad`/`resume` after its whole-program `opt` onto one
//! word per warp (std thread), the exception in flight, which the runtime
//! keeps (`rt_common::unwind`). Raising is a call of
//! `__gpu_unwind_raise`, which nothing defines: during `opt` it is an
//! unknown function that may unwind, so every caller stays may-unwind and
//! the abort after `__rust_start_panic` stays unproven; the linker turns it
//! into a store of the word, after which every caller returns up to the
//! nearest landing pad. That pad's `{ptr, i32}` holds our exception, which
//! `catch_unwind` hands to [`cleanup`].
//!
//! Only a thread's leader lane unwinds (the warp has one word, and its
//! leader waits while other lanes run `gpu_lanes::for_each_lane` work). A
//! panic on another lane never gets here: std's panic path reads its
//! thread-local panic count first, and the runtime ends the program there
//! (exit 134, "called from lane N inside gpu_lanes::for_each_lane"), as it
//! does under panic=abort.

use alloc::boxed::Box;
use core::any::Any;

/// What a Rust panic raises. The canary tells our exceptions from anything
/// else a landing pad could be handed (as `gcc.rs` and `emcc.rs` do).
#[repr(C)]
struct Exception {
    canary: *const u8,
    cause: Box<dyn Any + Send>,
}

/// Its address is the canary: unique to this crate's copy.
static CANARY: u8 = 0;

unsafe extern "C-unwind" {
    /// `rt_abi::symbols::UNWIND_RAISE`: declared only, lowered by `gpu-ld`.
    fn __gpu_unwind_raise(exception: *mut u8);
}

pub(crate) unsafe fn cleanup(ptr: *mut u8) -> Box<dyn Any + Send> {
    let exception = ptr.cast::<Exception>();
    // SAFETY: a landing pad's exception is non-null (the word is null when
    // none is in flight, and then no pad runs); ours was made by `panic`
    // from a `Box<Exception>`, whose first field is the canary (`repr(C)`).
    // A pointer that does not carry our canary is not read further.
    unsafe {
        if (&raw const (*exception).canary).read() != &raw const CANARY {
            super::__rust_foreign_exception();
        }
        Box::from_raw(exception).cause
    }
}

pub(crate) unsafe fn panic(cause: Box<dyn Any + Send>) -> u32 {
    let exception = Box::into_raw(Box::new(Exception { canary: &raw const CANARY, cause }));
    // SAFETY: `gpu-ld` makes this call start unwinding with `exception`,
    // which `cleanup` takes back; it returns here only by unwinding.
    unsafe { __gpu_unwind_raise(exception.cast()) };
    // Not reached after the lowering (the call unwinds). std aborts with
    // "failed to initiate panic" if it were.
    0
}
