//! Paths of the process on GPUs: the current directory is kept by the
//! launcher (host calls), one for all threads as a process has, starting at
//! the launcher's own (or `/` under `gpurun run --fs-root`); `PATH`-style
//! lists split as on Unix.

use crate::ffi::{OsStr, OsString};
use crate::path::{self, PathBuf};
use crate::sys::pal::hostcall as hc;
use crate::sys::unsupported;
use crate::{fmt, io};

pub fn getcwd() -> io::Result<PathBuf> {
    let (_, bytes) = hc::call_for_vec(hc::CALL_GETCWD, &[], &[])?;
    // SAFETY: the bytes of a Unix host's path (any bytes are an `OsStr` here).
    Ok(PathBuf::from(unsafe { OsString::from_encoded_bytes_unchecked(bytes) }))
}

/// Relative paths of every thread start there afterwards; the launcher's
/// own working directory does not change.
pub fn chdir(p: &path::Path) -> io::Result<()> {
    hc::call(hc::CALL_CHDIR, &[], p.as_os_str().as_encoded_bytes(), &mut []).map(drop)
}

pub struct SplitPaths<'a> {
    rest: Option<&'a [u8]>,
}

pub fn split_paths(unparsed: &OsStr) -> SplitPaths<'_> {
    SplitPaths { rest: Some(unparsed.as_encoded_bytes()) }
}

impl<'a> Iterator for SplitPaths<'a> {
    type Item = PathBuf;
    fn next(&mut self) -> Option<PathBuf> {
        let rest = self.rest?;
        let (part, tail) = match rest.iter().position(|&b| b == b':') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        self.rest = tail;
        // SAFETY: a slice of an `OsStr`'s bytes split at an ASCII byte.
        Some(PathBuf::from(unsafe { OsStr::from_encoded_bytes_unchecked(part) }))
    }
}

#[derive(Debug)]
pub struct JoinPathsError;

pub fn join_paths<I, T>(paths: I) -> Result<OsString, JoinPathsError>
where
    I: Iterator<Item = T>,
    T: AsRef<OsStr>,
{
    let mut joined = Vec::new();
    for (i, path) in paths.enumerate() {
        let path = path.as_ref().as_encoded_bytes();
        if path.contains(&b':') {
            return Err(JoinPathsError);
        }
        if i > 0 {
            joined.push(b':');
        }
        joined.extend_from_slice(path);
    }
    // SAFETY: `OsStr` bytes joined with an ASCII byte.
    Ok(unsafe { OsString::from_encoded_bytes_unchecked(joined) })
}

impl fmt::Display for JoinPathsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        "path segment contains separator `:`".fmt(f)
    }
}

impl crate::error::Error for JoinPathsError {}

/// The code object the launcher loaded, made absolute by it (as Linux's
/// `/proc/self/exe`); an error only if the launcher named none.
pub fn current_exe() -> io::Result<PathBuf> {
    let mut len = 0;
    // SAFETY: the runtime returns null or `len` bytes that live until the
    // program ends (`LaunchBlock::exe`).
    let bytes = unsafe {
        let ptr = crate::sys::pal::abi::__gpu_std_exe(&mut len);
        if ptr.is_null() {
            return Err(io::const_error!(io::ErrorKind::NotFound, "the launcher named no executable"));
        }
        crate::slice::from_raw_parts(ptr, len)
    };
    // SAFETY: the bytes of a Unix host's path (any bytes are an `OsStr` here).
    Ok(PathBuf::from(unsafe { OsStr::from_encoded_bytes_unchecked(bytes) }))
}

/// `TMPDIR` as the launcher's environment has it, else `/tmp` (as on Unix).
pub fn temp_dir() -> PathBuf {
    crate::env::var_os("TMPDIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// `HOME` from the launcher's environment.
pub fn home_dir() -> Option<PathBuf> {
    crate::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}
