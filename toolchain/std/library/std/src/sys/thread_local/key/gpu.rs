//! Thread-local keys over the runtime's per-warp slot table; the runtime runs
//! the destructors of non-null values when a thread's entry returns.
//!
//! The runtime numbers keys from 1, so `LazyKey`'s "not yet created" sentinel
//! (0) never collides with a real key.

use crate::sys::pal::abi;

pub type Key = usize;

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
