//! Host calls (`rt_common::hostcall`): the file system, the working
//! directory and stdin are the host's, reached through the runtime's ring.
//! Errors are the host's OS errors (Linux `errno`), decoded by
//! `sys::io::error::gpu`.

use crate::io;
use crate::sys::pal::abi;

#[cfg(target_os = "amdhsa")]
pub use rt_amdgpu::std_hostcall::*;
#[cfg(target_os = "cuda")]
pub use rt_nvptx::std_hostcall::*;

/// Makes call `call` with the request `head ++ body`; copies up to
/// `reply.len()` bytes of the reply. Returns the status and the reply's
/// whole length.
pub fn call(call: u32, head: &[u8], body: &[u8], reply: &mut [u8]) -> io::Result<(u64, usize)> {
    let mut total = 0usize;
    // SAFETY: each slice is valid for its length during the call, and
    // `total` is writable.
    let status = unsafe {
        abi::__gpu_std_host_call(
            call,
            head.as_ptr(),
            head.len(),
            body.as_ptr(),
            body.len(),
            reply.as_mut_ptr(),
            reply.len(),
            &mut total,
        )
    };
    if status < 0 {
        Err(io::Error::from_raw_os_error(i32::try_from(-status).unwrap_or(errno::EIO)))
    } else {
        Ok((status as u64, total))
    }
}

/// [`call`] for a reply of any length: asks again with a buffer of the
/// length the host reported (only for calls without side effects).
pub fn call_for_vec(c: u32, head: &[u8], body: &[u8]) -> io::Result<(u64, Vec<u8>)> {
    let mut buf = vec![0u8; 256];
    loop {
        let (status, total) = call(c, head, body, &mut buf)?;
        if total <= buf.len() {
            buf.truncate(total);
            return Ok((status, buf));
        }
        buf.resize(total, 0);
    }
}
