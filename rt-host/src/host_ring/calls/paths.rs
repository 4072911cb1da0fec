//! Where the program's paths lead: its current directory, and, under
//! `--fs-root`, the [`FsRoot`] every path resolves beneath.
//!
//! Without a root, paths are the host's: relative ones start at the
//! program's current directory — gpurun's own until the program calls
//! `set_current_dir`, then an `O_PATH` fd of the directory it chose — and
//! each call is the `*at()` system call on that fd with the whole path, so
//! the kernel resolves it exactly as for a host process.
//!
//! Under a root, the kernel resolves each path with `openat2` from the
//! root (`sandbox.rs`). A relative path is joined to the current
//! directory's path inside the root, read afresh from its `O_PATH` fd for
//! each call (`RESOLVE_IN_ROOT` takes the fd it starts from as the root, so
//! the walk cannot start at the current directory itself), so `..` climbs
//! from the current directory and stops at the root, as in a chroot, and a
//! current directory renamed or removed under the program behaves as on
//! Linux. A call on a
//! path's final component (mkdir, unlink, rename, link...) opens the
//! component's parent directory that way, then runs the `*at()` call on
//! the one remaining name, which contains no `/` and is never `.` or `..`;
//! none of those calls follows a final symlink.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::prelude::rust_2024::*;
use std::sync::{Arc, Mutex};

use rt_abi::hostcall::errno;

use super::sandbox::{FsRoot, last_errno};

/// The program's current directory. Calls run on several workers at once:
/// each takes a clone (the fd's `Arc`) for its whole duration, so a
/// `set_current_dir` meanwhile never closes an fd a call still uses.
#[derive(Clone)]
enum Cwd {
    /// gpurun's own (no root, no `set_current_dir` yet).
    Launcher,
    /// Set by the program, without a root.
    Dir(Arc<OwnedFd>),
    /// Under a root: the directory (`None`: the root itself).
    InRoot(Option<Arc<OwnedFd>>),
}

impl Cwd {
    /// The fd relative paths start from without a root.
    fn fd(&self) -> RawFd {
        match self {
            Cwd::Dir(fd) => fd.as_raw_fd(),
            Cwd::Launcher | Cwd::InRoot(_) => libc::AT_FDCWD,
        }
    }
}

/// The program's view of the file system.
pub struct Paths {
    root: Option<FsRoot>,
    /// Process-wide, as on Linux: every thread's calls share it.
    cwd: Mutex<Cwd>,
}

/// A path's final component and the directory holding it.
pub struct At {
    /// The directory, when one was opened for this path.
    dir: Option<OwnedFd>,
    /// The directory to use when none was opened (the current directory,
    /// as it was when the call began).
    cwd: Cwd,
    /// What the `*at()` call names: the one final component under a root,
    /// the whole path without one.
    pub name: CString,
    /// The path ended in `/` (under a root; the name has it removed).
    pub slash: bool,
    /// The path's last component was `..` (under a root; `name` is then
    /// `.`, the directory that `..` named).
    pub dot_dot: bool,
}

impl At {
    pub fn dir(&self) -> RawFd {
        self.dir.as_ref().map_or_else(|| self.cwd.fd(), |d| d.as_raw_fd())
    }
}

impl Paths {
    /// The host's file system, from gpurun's working directory.
    pub fn host() -> Paths {
        Paths { root: None, cwd: Mutex::new(Cwd::Launcher) }
    }

    /// Everything beneath `root`, starting at its top.
    pub fn in_root(root: FsRoot) -> Paths {
        Paths { root: Some(root), cwd: Mutex::new(Cwd::InRoot(None)) }
    }

    pub fn root(&self) -> Option<&FsRoot> {
        self.root.as_ref()
    }

    /// Opens `path` with `flags` (`O_CLOEXEC` added; a final symlink is
    /// followed unless they hold `O_NOFOLLOW`) and, when creating, `mode`.
    pub fn open(&self, path: &[u8], flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        self.open_from(&self.current(), path, flags, mode)
    }

    fn open_from(&self, cwd: &Cwd, path: &[u8], flags: i32, mode: u32) -> Result<OwnedFd, i32> {
        match &self.root {
            Some(root) => root.open_beneath(&self.rooted(cwd, path)?, flags, mode),
            None => openat(cwd.fd(), &cstring(path)?, flags, mode),
        }
    }

    /// The current directory as it is now.
    fn current(&self) -> Cwd {
        // Every update is one assignment: a poisoned lock still holds a whole value.
        self.cwd.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The directory holding `path`'s final component, and the component.
    pub fn at(&self, path: &[u8]) -> Result<At, i32> {
        let cwd = self.current();
        if self.root.is_none() {
            return Ok(At { dir: None, cwd, name: cstring(path)?, slash: false, dot_dot: false });
        }
        let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let (p, slash) = match trimmed {
            0 => (&b"/"[..], false), // "/", "//": the root itself
            n => (&path[..n], n < path.len()),
        };
        let (dir, last) = match p.iter().rposition(|&b| b == b'/') {
            Some(0) => (&b"/"[..], &p[1..]),
            Some(i) => (&p[..i], &p[i + 1..]),
            None => (&b"."[..], p),
        };
        let dot_dot = last == b"..";
        let (dir, name) = if p == b"/" || last == b"." || dot_dot { (p, &b"."[..]) } else { (dir, last) };
        let dir = self.open_from(&cwd, dir, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        Ok(At { dir: Some(dir), cwd, name: cstring(name)?, slash, dot_dot })
    }

    /// `set_current_dir`: `path` must be a directory the user may search.
    pub fn chdir(&self, path: &[u8]) -> Result<(), i32> {
        let dir = self.open(path, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        // Looking up "." in it needs search (x) permission on it, as chdir does.
        drop(openat(dir.as_raw_fd(), c".", libc::O_PATH, 0)?);
        let dir = Arc::new(dir);
        *self.cwd.lock().unwrap_or_else(|e| e.into_inner()) = match self.root {
            Some(_) => Cwd::InRoot(Some(dir)),
            None => Cwd::Dir(dir),
        };
        Ok(())
    }

    /// `current_dir`: the current directory as the program names it.
    pub fn cwd(&self) -> Result<Vec<u8>, i32> {
        match &self.current() {
            Cwd::Launcher => std::env::current_dir().map(|p| p.into_os_string().into_vec()).map_err(super::errno_of),
            Cwd::Dir(fd) => fd_path(fd.as_raw_fd()),
            Cwd::InRoot(None) => Ok(b"/".to_vec()),
            Cwd::InRoot(Some(fd)) => self.canonical(fd),
        }
    }

    /// The absolute path, as the program names it, of an fd this view
    /// opened: under a root, its host path less the root's.
    pub fn canonical(&self, fd: &OwnedFd) -> Result<Vec<u8>, i32> {
        let host = fd_path(fd.as_raw_fd())?;
        let Some(root) = &self.root else { return Ok(host) };
        let top = fd_path(root.fd())?;
        if top == b"/" {
            return Ok(host);
        }
        match host.strip_prefix(&top[..]) {
            Some([]) => Ok(b"/".to_vec()),
            Some(rest @ [b'/', ..]) => Ok(rest.to_vec()),
            // Reached through a mount whose source is outside the root.
            _ => Err(errno::EXDEV),
        }
    }

    /// `path` as the root's walk takes it: absolute as it is, relative
    /// after the current directory's path.
    fn rooted(&self, cwd: &Cwd, path: &[u8]) -> Result<CString, i32> {
        match cwd {
            Cwd::InRoot(Some(fd)) if path.first() != Some(&b'/') => {
                let cwd = self.canonical(fd)?;
                let mut joined = Vec::with_capacity(cwd.len() + 1 + path.len());
                joined.extend_from_slice(&cwd);
                joined.push(b'/');
                joined.extend_from_slice(path);
                cstring(&joined)
            }
            _ => cstring(path),
        }
    }
}

/// A path for a system call (the caller has refused NUL bytes; `EINVAL`
/// if one slipped through).
pub fn cstring(bytes: &[u8]) -> Result<CString, i32> {
    CString::new(bytes).map_err(|_| errno::EINVAL)
}

/// `openat(2)` with `O_CLOEXEC` added.
pub fn openat(dir: RawFd, path: &CStr, flags: i32, mode: u32) -> Result<OwnedFd, i32> {
    loop {
        // SAFETY: `path` is NUL-terminated and outlives the call; the mode
        // argument is read only when `flags` create.
        let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, mode & 0o7777) };
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        match last_errno() {
            libc::EINTR => {}
            e => return Err(e),
        }
    }
}

/// The host path of an open fd, from `/proc/self/fd` (gpurun's own: the
/// program never names it). `ENOENT` for a removed file or directory.
pub fn fd_path(fd: RawFd) -> Result<Vec<u8>, i32> {
    let p = std::fs::read_link(std::format!("/proc/self/fd/{fd}")).map_err(super::errno_of)?;
    let bytes = p.into_os_string().into_vec();
    if bytes.first() != Some(&b'/') || bytes.ends_with(b" (deleted)") {
        return Err(errno::ENOENT);
    }
    Ok(bytes)
}
