//! System bindings for GPUs (`amdgcn-amd-amdhsa`, `nvptx64-nvidia-cuda`):
//! every std thread is one warp (wavefront) of a persistent launch, and the
//! runtime linked in below schedules them, owns the heap and talks to the host.
//!
//! This directory is the platform proper: `abi` (the runtime's functions),
//! `hostcall` (files, directories and stdin through the host), `futex`,
//! init/cleanup/abort. Each `sys` area's GPU part sits beside the
//! other OSes' parts of that area: `sys/alloc/gpu.rs`, `sys/args/gpu.rs`,
//! `sys/env/gpu.rs`, `sys/random/gpu.rs`, `sys/stdio/gpu.rs`,
//! `sys/thread/gpu.rs`, `sys/thread_local/key/gpu.rs`, `sys/time/gpu.rs`,
//! `sys/sync/mutex/gpu.rs`, `sys/fs/gpu.rs`, `sys/paths/gpu.rs`,
//! `sys/io/error/gpu.rs`.

#![forbid(unsafe_op_in_unsafe_fn)]

// The runtime defines the `abi` functions; naming it here links it into every
// program that uses std.
#[cfg(target_os = "amdhsa")]
extern crate rt_amdgpu;
#[cfg(target_os = "cuda")]
extern crate rt_nvptx;

pub mod abi;
pub mod futex;
pub mod hostcall;

use crate::io;

// SAFETY: must be called only once during runtime initialization.
// NOTE: the runtime set everything up before it called `main`.
pub unsafe fn init(_argc: isize, _argv: *const *const u8, _sigpipe: u8) {}

// SAFETY: must be called only once during runtime cleanup.
pub unsafe fn cleanup() {}

pub fn unsupported<T>() -> io::Result<T> {
    Err(unsupported_err())
}

pub fn unsupported_err() -> io::Error {
    io::Error::UNSUPPORTED_PLATFORM
}

pub fn abort_internal() -> ! {
    abi::__gpu_std_abort()
}

/// The bytes of a program argument or `KEY=VALUE` environment entry, which the
/// launcher placed in device memory for the whole run.
pub fn host_bytes(
    get: unsafe extern "C" fn(usize, *mut usize) -> *const u8,
    i: usize,
) -> &'static [u8] {
    let mut len = 0;
    // SAFETY: `i` is below the count the runtime reported (callers check), and
    // the runtime returns `len` readable bytes that live until the program ends.
    unsafe {
        let ptr = get(i, &mut len);
        if ptr.is_null() { &[] } else { crate::slice::from_raw_parts(ptr, len) }
    }
}
