//! `gpurun run --fs-root DIR`: a directory that every path of the program
//! resolves beneath, as if it were the root of the file system.
//!
//! Every path is resolved by the kernel with `openat2(2)` from the root's
//! directory fd, with `RESOLVE_IN_ROOT` (`/` and `..` at the top are the
//! root itself, an absolute symlink's target starts at the root: what a
//! chrooted program sees) and `RESOLVE_NO_MAGICLINKS` (no `/proc/*/fd/*` or
//! `/proc/*/root` jumps, where the root holds a `/proc`). The kernel walks
//! the whole path in one call, so a directory swapped for a symlink between
//! two of the program's calls, or during one, cannot lead the walk out.
//! There is no fallback: a kernel without `openat2` (Linux < 5.6) or a
//! seccomp filter refusing it makes [`FsRoot::open`] fail, and gpurun does
//! not run the program.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The `resolve` flags of every lookup under a root.
const RESOLVE: u64 = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;

/// Times a lookup is retried when the kernel answers `EAGAIN` (a rename
/// elsewhere raced a `..` step of an `RESOLVE_IN_ROOT` walk; the kernel
/// asks the caller to try again rather than risk a wrong answer).
const EAGAIN_RETRIES: usize = 64;

/// The root directory of a sandboxed program's paths.
#[derive(Debug)]
pub struct FsRoot {
    dir: OwnedFd,
    path: PathBuf,
}

/// Why `--fs-root` cannot be honoured.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("--fs-root {}: {source}", path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error(
        "--fs-root needs the openat2 system call (Linux 5.6 or newer), which this system refuses ({0}); \
         gpurun will not run a program unconfined that was asked to be confined: run without --fs-root, \
         on a newer kernel, or outside the seccomp filter that blocks openat2"
    )]
    NoOpenat2(io::Error),
    #[error("--fs-root needs /proc mounted (gpurun reads its own /proc/self/fd to name directories inside the root): {0}")]
    NoProc(io::Error),
}

impl FsRoot {
    /// Opens `path`, which must be a directory, as a root, and checks that
    /// the kernel resolves paths beneath it.
    pub fn open(path: &Path) -> Result<FsRoot, RootError> {
        let open_err = |source| RootError::Open { path: path.to_path_buf(), source };
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| open_err(io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte")))?;
        let flags = libc::O_PATH | libc::O_DIRECTORY;
        let dir = match openat2(libc::AT_FDCWD, &c, flags, 0, 0) {
            Ok(fd) => fd,
            // EPERM: how a seccomp filter (a container's) commonly refuses
            // an unknown call; a plain O_PATH open says EACCES instead.
            Err(e @ (libc::ENOSYS | libc::EPERM)) => return Err(RootError::NoOpenat2(io::Error::from_raw_os_error(e))),
            Err(e) => return Err(open_err(io::Error::from_raw_os_error(e))),
        };
        // The resolve flags themselves (EINVAL from a kernel that has
        // openat2 but not these).
        openat2(dir.as_raw_fd(), c".", flags, 0, RESOLVE).map_err(|e| RootError::NoOpenat2(io::Error::from_raw_os_error(e)))?;
        let path = std::fs::canonicalize(path).map_err(open_err)?;
        // Names inside the root (current_dir, canonicalize) come from the
        // fds' /proc links: gpurun's own /proc must be there.
        std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).map_err(RootError::NoProc)?;
        Ok(FsRoot { dir, path })
    }

    /// The root as the host names it (canonical, when it was opened).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn fd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    /// Resolves `path` beneath the root (`/` is the root) and opens it with
    /// `flags` (`O_CLOEXEC` added) and, when creating, `mode`.
    pub(super) fn open_beneath(&self, path: &CStr, flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        openat2(self.fd(), path, flags, mode, RESOLVE)
    }
}

/// `openat2(2)` with `O_CLOEXEC` added; `mode` is ignored unless `flags`
/// create (openat2 refuses a mode otherwise). Retries `EAGAIN` and `EINTR`.
pub(super) fn openat2(dir: RawFd, path: &CStr, flags: i32, mode: u32, resolve: u64) -> Result<OwnedFd, i32> {
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    // SAFETY: `open_how` is plain integers; all-zero is a valid value
    // (and the kernel wants unused fields zero).
    let mut how: libc::open_how = unsafe { core::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = if creates { u64::from(mode & 0o7777) } else { 0 };
    how.resolve = resolve;
    let mut tries = 0;
    loop {
        // SAFETY: `path` is NUL-terminated and outlives the call; `how` is
        // an initialised `open_how` whose size we pass.
        let fd = unsafe {
            libc::syscall(libc::SYS_openat2, dir, path.as_ptr(), &how as *const libc::open_how, size_of::<libc::open_how>())
        };
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
        }
        let e = last_errno();
        tries += 1;
        if !(e == libc::EINTR || e == libc::EAGAIN && tries < EAGAIN_RETRIES) {
            return Err(e);
        }
    }
}

/// The calling thread's `errno`.
pub(super) fn last_errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}
