//! The futex behind std's locks, `Once`, the thread parker and `Barrier` on
//! GPUs, over the runtime's `__gpu_std_futex_wait/wake`.

use super::abi;
use crate::sync::atomic::Atomic;
use crate::time::{Duration, Instant};

/// An atomic for use as a futex that is at least 32-bits but may be larger
pub type Futex = Atomic<Primitive>;
/// Must be the underlying type of Futex
pub type Primitive = u32;

/// An atomic for use as a futex that is at least 8-bits but may be larger.
pub type SmallFutex = Atomic<SmallPrimitive>;
/// Must be the underlying type of SmallFutex
pub type SmallPrimitive = u32;

/// Waits for a `futex_wake` on `futex` while it holds `expected`; the runtime
/// parks the warp (sleep-polling) rather than spinning on the lock.
///
/// Returns false on timeout, and true in all other cases.
pub fn futex_wait(futex: &Atomic<u32>, expected: u32, timeout: Option<Duration>) -> bool {
    // A timeout beyond u64::MAX ns (584 years) is as good as none.
    let ns = timeout.and_then(|t| t.as_nanos().try_into().ok()).unwrap_or(u64::MAX);
    // SAFETY: the address is that of a live atomic u32.
    unsafe { abi::__gpu_std_futex_wait(futex.as_ptr(), expected, ns) }
}

/// Wakes up one thread that's blocked on `futex_wait` on this futex.
///
/// Returns true if this actually woke up such a thread,
/// or false if no thread was waiting on this futex.
pub fn futex_wake(futex: &Atomic<u32>) -> bool {
    // SAFETY: the address is that of a live atomic u32.
    unsafe { abi::__gpu_std_futex_wake(futex.as_ptr(), 1) }
}

/// Wakes up all threads that are waiting on `futex_wait` on this futex.
pub fn futex_wake_all(futex: &Atomic<u32>) {
    // SAFETY: the address is that of a live atomic u32.
    unsafe { abi::__gpu_std_futex_wake(futex.as_ptr(), u32::MAX) };
}

/// Waits until `ready()` returns true (then true) or `deadline` passes (then
/// false), sleep-polling it as `futex_wait` polls its word: for conditions
/// on more than one word, such as a channel's "not empty, or disconnected".
pub fn poll_until<F: FnMut() -> bool>(mut ready: F, deadline: Option<Instant>) -> bool {
    unsafe extern "C" fn call<F: FnMut() -> bool>(data: *const u8) -> bool {
        // SAFETY: `data` is the `&mut F` passed below, live for the wait.
        unsafe { (*(data as *mut F))() }
    }
    let ns = match deadline {
        None => u64::MAX,
        Some(d) => d.saturating_duration_since(Instant::now()).as_nanos().try_into().unwrap_or(u64::MAX),
    };
    // SAFETY: `ready` lives until the call returns; the runtime calls it on
    // this thread only.
    unsafe { abi::__gpu_std_poll_wait(call::<F>, (&raw mut ready) as *const u8, ns) }
}
