//! A vendor library that calls `abort()` while gpurun waits on it would end
//! gpurun with "Aborted (core dumped)" and no word of why. HIP runtimes have
//! done that while initialising (old ones aborted when they found no CPU
//! agent; a C++ exception escaping the runtime ends in `abort()` too).
//! [`exit_on_abort`] turns a SIGABRT raised during one call into gpurun's own
//! message and exit code.
//!
//! Debian's HIP 5.2 does not abort without a GPU (`hipInit` returns
//! `hipErrorInvalidDevice`); `launcher/tests/hip_runtime.rs` checks the guard
//! with a stand-in library whose `hipInit` calls `abort()`.

use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// What the handler writes and the code it exits with, set before the
/// handler is installed. The message is leaked (one per guarded call: gpurun
/// guards `hipInit`, once a process), so the handler never sees it freed.
static MESSAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static LEN: AtomicUsize = AtomicUsize::new(0);
static CODE: AtomicI32 = AtomicI32::new(1);

extern "C" fn on_abort(_signal: c_int) {
    let (message, len) = (MESSAGE.load(Ordering::SeqCst), LEN.load(Ordering::SeqCst));
    // SAFETY: write(2) and _exit(2) are async-signal-safe; `message` is null
    // or a leaked, never-freed buffer of `len` bytes (set before the handler
    // was installed). Ending the process here is the point: abort() must not
    // return, and the library that called it is in no state to go on.
    unsafe {
        if !message.is_null() {
            libc::write(2, message.cast(), len);
        }
        libc::_exit(CODE.load(Ordering::SeqCst));
    }
}

/// Runs `f`; if the process gets SIGABRT meanwhile (from any thread: the
/// library's own threads abort the same way), writes `message` (a line, with
/// its newline) to stderr and exits with `code` at once, without running
/// exit handlers. The previous SIGABRT disposition is back when `f` returns.
/// Guards do not nest (a second one waits for the first).
pub fn exit_on_abort<T>(message: String, code: i32, f: impl FnOnce() -> T) -> T {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bytes: &'static mut [u8] = Box::leak(message.into_bytes().into_boxed_slice());
    LEN.store(bytes.len(), Ordering::SeqCst);
    MESSAGE.store(bytes.as_mut_ptr(), Ordering::SeqCst);
    CODE.store(code, Ordering::SeqCst);
    // SAFETY: `sigaction` is a plain C struct for which all-zero is valid
    // (no flags, empty mask before sigemptyset, no handler); the calls get
    // pointers to live locals. The handler only does async-signal-safe work.
    let old = unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_abort as extern "C" fn(c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGABRT, &new, &mut old) == 0).then_some(old)
    };
    let result = f();
    if let Some(old) = old {
        // SAFETY: restores the disposition saved above, from a live local.
        unsafe { libc::sigaction(libc::SIGABRT, &old, std::ptr::null_mut()) };
    }
    result
}
