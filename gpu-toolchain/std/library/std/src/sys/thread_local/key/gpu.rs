//! Thread-local keys over the runtime's per-warp slot table; the runtime runs
//! the destructors of non-null values when a thread's entry returns.
//!
//! The runtime numbers keys from 1, so `LazyKey`'s "not yet created" sentinel
//! (0) never collides with a real key.

use crate::sync::atomic::{Atomic, AtomicUsize, Ordering};
use crate::sys::pal::abi;

pub type Key = usize;

/// "Not yet created" (the runtime never returns 0).
const NO_KEY: usize = 0;

/// A key created on first use (the racy `LazyKey` of the Unix targets, with
/// a relaxed read).
///
/// Every `thread_local!` access reads its key, so the read is on the hot path
/// of TLS, and it is relaxed: on GPUs an acquire load also invalidates the
/// L1 cache that holds the thread's frames. A key is a number whose values
/// start null in every thread, so a thread may use it at once; the one thing
/// it must see is the key's destructor (in the runtime's key table, written
/// before the release below), and the runtime reads that only at thread
/// exit, after an acquire fence.
pub struct LazyKey {
    key: Atomic<usize>,
    dtor: Option<unsafe extern "C" fn(*mut u8)>,
}

impl LazyKey {
    pub const fn new(dtor: Option<unsafe extern "C" fn(*mut u8)>) -> LazyKey {
        LazyKey { key: AtomicUsize::new(NO_KEY), dtor }
    }

    #[inline]
    pub fn force(&self) -> Key {
        match self.key.load(Ordering::Relaxed) {
            NO_KEY => self.lazy_init(),
            key => key,
        }
    }

    // Out of line: once per key and program, and inlined it copied the
    // runtime's key creation into every thread-local's `get`.
    #[cold]
    #[inline(never)]
    fn lazy_init(&self) -> Key {
        let key = create(self.dtor);
        match self.key.compare_exchange(NO_KEY, key, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => key,
            // Another thread created this key first: use theirs, free ours
            // (no thread has a value for it).
            Err(theirs) => {
                // SAFETY: `key` came from `create` and was never published.
                unsafe { destroy(key) };
                theirs
            }
        }
    }
}

#[inline]
pub fn create(dtor: Option<unsafe extern "C" fn(*mut u8)>) -> Key {
    let key = abi::__gpu_std_tls_create(dtor);
    if key == usize::MAX {
        rtabort!("out of GPU thread-local keys");
    }
    key
}

#[inline]
pub unsafe fn set(key: Key, value: *mut u8) {
    // SAFETY: `key` came from `create`.
    unsafe { abi::__gpu_std_tls_set(key, value) }
}

#[inline]
pub unsafe fn get(key: Key) -> *mut u8 {
    // SAFETY: `key` came from `create`.
    unsafe { abi::__gpu_std_tls_get(key) }
}

#[inline]
pub unsafe fn destroy(key: Key) {
    // SAFETY: `key` came from `create` and is no longer used.
    unsafe { abi::__gpu_std_tls_destroy(key) }
}
