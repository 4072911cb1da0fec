//! `env::var`/`vars` on GPUs: the launcher's environment, read-only on the device.

pub use super::common::Env;
use crate::ffi::{OsStr, OsString};
use crate::io;
use crate::sys::pal::{abi, host_bytes, unsupported};

/// The environment the launcher passed, fixed for the whole run.
fn vars() -> impl Iterator<Item = (&'static [u8], &'static [u8])> {
    (0..abi::__gpu_std_envc()).filter_map(|i| {
        let var = host_bytes(abi::__gpu_std_env, i);
        // Like Unix, skip a leading '=' when looking for the separator.
        let eq = var.iter().skip(1).position(|&b| b == b'=')? + 1;
        Some((&var[..eq], &var[eq + 1..]))
    })
}

fn os_string(bytes: &[u8]) -> OsString {
    // SAFETY: any bytes are a valid `OsString` here (`os_str` is bytes).
    unsafe { OsString::from_encoded_bytes_unchecked(bytes.to_vec()) }
}

pub fn env() -> Env {
    Env::new(vars().map(|(k, v)| (os_string(k), os_string(v))).collect())
}

pub fn getenv(key: &OsStr) -> Option<OsString> {
    vars().find(|&(k, _)| k == key.as_encoded_bytes()).map(|(_, v)| os_string(v))
}

// The environment lives in launcher-owned memory that the device only reads.
pub unsafe fn setenv(_: &OsStr, _: &OsStr) -> io::Result<()> {
    unsupported()
}

pub unsafe fn unsetenv(_: &OsStr) -> io::Result<()> {
    unsupported()
}
