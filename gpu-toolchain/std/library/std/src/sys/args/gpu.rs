//! `env::args` on GPUs: the arguments the launcher put in device memory.

pub use super::common::Args;
use crate::ffi::OsString;
use crate::sys::pal::{abi, host_bytes};

/// The arguments the launcher passed, program name first.
pub fn args() -> Args {
    let args = (0..abi::__gpu_std_argc()).map(|i| {
        // SAFETY: any bytes are a valid `OsString` here (`os_str` is bytes).
        unsafe {
            OsString::from_encoded_bytes_unchecked(host_bytes(abi::__gpu_std_arg, i).to_vec())
        }
    });
    Args::new(args.collect())
}
