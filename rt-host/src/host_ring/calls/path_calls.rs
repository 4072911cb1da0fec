//! The calls that take paths, each resolved through [`Paths`] (the
//! program's current directory and, under `--fs-root`, its root) and run
//! with the `*at()` system calls, as std would run them on Linux: the same
//! checks, the same errors.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::prelude::rust_2024::*;

use rt_abi::hostcall::*;

use super::paths::{At, Paths, cstring};
use super::sandbox::last_errno;
use super::{errno_of, stat_of};

/// A `-1`-on-error system call's result.
fn check(r: libc::c_int) -> Result<(), i32> {
    if r == 0 { Ok(()) } else { Err(last_errno()) }
}

/// std's `OpenOptions` rules on Linux: the access mode from read, write
/// and append; creating or truncating needs write or append (`EINVAL`).
fn open_flags(flags: u32) -> Result<libc::c_int, i32> {
    let has = |f: u32| flags & f != 0;
    let (read, write, append) = (has(OPEN_READ), has(OPEN_WRITE), has(OPEN_APPEND));
    let (truncate, create, create_new) = (has(OPEN_TRUNCATE), has(OPEN_CREATE), has(OPEN_CREATE_NEW));
    let access = match (read, write, append) {
        (true, false, false) => libc::O_RDONLY,
        (false, true, false) => libc::O_WRONLY,
        (true, true, false) => libc::O_RDWR,
        (false, _, true) => libc::O_WRONLY | libc::O_APPEND,
        (true, _, true) => libc::O_RDWR | libc::O_APPEND,
        (false, false, false) => return Err(errno::EINVAL),
    };
    match (write, append) {
        (true, false) => {}
        (false, false) if truncate || create || create_new => return Err(errno::EINVAL),
        (_, true) if truncate && !create_new => return Err(errno::EINVAL),
        _ => {}
    }
    let creation = match (create, truncate, create_new) {
        (false, false, false) => 0,
        (true, false, false) => libc::O_CREAT,
        (false, true, false) => libc::O_TRUNC,
        (true, true, false) => libc::O_CREAT | libc::O_TRUNC,
        (_, _, true) => libc::O_CREAT | libc::O_EXCL,
    };
    // O_NOCTTY: a terminal the program opens never becomes gpurun's.
    Ok(access | creation | libc::O_NOCTTY)
}

/// `CALL_OPEN`: the file, as std's `OpenOptions::open` would open it.
pub fn open(paths: &Paths, flags: u32, mode: u32, path: &[u8]) -> Result<File, i32> {
    Ok(File::from(paths.open(path, open_flags(flags)?, mode)?))
}

/// `CALL_STAT`: `metadata` (follow) or `symlink_metadata`.
pub fn stat(paths: &Paths, path: &[u8], follow: bool) -> Result<Stat, i32> {
    let flags = libc::O_PATH | if follow { 0 } else { libc::O_NOFOLLOW };
    let m = File::from(paths.open(path, flags, 0)?).metadata().map_err(errno_of)?;
    Ok(stat_of(&m))
}

/// Closes a `DIR` stream (and its fd) when dropped.
struct DirStream(*mut libc::DIR);

impl Drop for DirStream {
    fn drop(&mut self) {
        // SAFETY: a stream fdopendir gave us, closed only here.
        unsafe { libc::closedir(self.0) };
    }
}

/// `CALL_READ_DIR`: per entry its kind, name length and name.
pub fn read_dir(paths: &Paths, path: &[u8], reply: &mut Vec<u8>) -> Result<i64, i32> {
    let fd = paths.open(path, libc::O_RDONLY | libc::O_DIRECTORY, 0)?.into_raw_fd();
    // SAFETY: `fd` is an open directory we own; the stream takes it over.
    let dir = unsafe { libc::fdopendir(fd) };
    if dir.is_null() {
        let e = last_errno();
        // SAFETY: fdopendir failed, so `fd` is still ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        return Err(e);
    }
    let dir = DirStream(dir);
    let mut count: i64 = 0;
    loop {
        // SAFETY: errno is this thread's; readdir leaves it alone at the
        // end of the stream and sets it on an error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: a valid stream, read by this thread only.
        let entry = unsafe { libc::readdir64(dir.0) };
        if entry.is_null() {
            return match last_errno() {
                0 => Ok(count),
                e => Err(e),
            };
        }
        // SAFETY: readdir's entry stays valid until the next readdir on
        // the stream; `d_name` is NUL-terminated.
        let (name, d_type) = unsafe { (CStr::from_ptr((*entry).d_name.as_ptr()), (*entry).d_type) };
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let kind = match d_type {
            libc::DT_REG => KIND_FILE,
            libc::DT_DIR => KIND_DIR,
            libc::DT_LNK => KIND_SYMLINK,
            // The file system did not say: ask it, as std does.
            // SAFETY: the stream's own fd, valid while the stream is.
            libc::DT_UNKNOWN => kind_at(unsafe { libc::dirfd(dir.0) }, name)?,
            _ => KIND_OTHER,
        };
        let len = u16::try_from(bytes.len()).map_err(|_| errno::ENAMETOOLONG)?;
        reply.push(kind);
        reply.extend_from_slice(&len.to_le_bytes());
        reply.extend_from_slice(bytes);
        count += 1;
    }
}

/// `lstat` of `name` in `dir`.
fn lstat_at(dir: RawFd, name: &CStr) -> Result<libc::stat64, i32> {
    // SAFETY: all-zero is a valid `stat64` (plain integers).
    let mut st: libc::stat64 = unsafe { core::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated, `st` is writable and ours.
    check(unsafe { libc::fstatat64(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

fn kind_at(dir: RawFd, name: &CStr) -> Result<u8, i32> {
    let st = lstat_at(dir, name)?;
    Ok(match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => KIND_FILE,
        libc::S_IFDIR => KIND_DIR,
        libc::S_IFLNK => KIND_SYMLINK,
        _ => KIND_OTHER,
    })
}

/// What a trailing `/` asks of a final component (under a root, where
/// [`Paths::at`] took it off): that it be a directory, if it exists.
fn slash_wants_dir(at: &At) -> Result<(), i32> {
    if at.slash { wants_dir(at) } else { Ok(()) }
}

/// `ENOTDIR` if `at` exists and is not a directory.
fn wants_dir(at: &At) -> Result<(), i32> {
    match lstat_at(at.dir(), &at.name) {
        Ok(st) if st.st_mode & libc::S_IFMT != libc::S_IFDIR => Err(errno::ENOTDIR),
        _ => Ok(()),
    }
}

/// The new name of a link or symlink cannot end in `/` (under a root).
fn new_name_plain(at: &At) -> Result<(), i32> {
    if !at.slash {
        return Ok(());
    }
    Err(if lstat_at(at.dir(), &at.name).is_ok() { errno::EEXIST } else { errno::ENOENT })
}

/// `CALL_MKDIR`.
pub fn mkdir(paths: &Paths, path: &[u8], mode: u32) -> Result<(), i32> {
    let at = paths.at(path)?;
    // SAFETY: a NUL-terminated name and a directory fd (or AT_FDCWD).
    check(unsafe { libc::mkdirat(at.dir(), at.name.as_ptr(), mode & 0o7777) })
}

/// `CALL_RMDIR`.
pub fn rmdir(paths: &Paths, path: &[u8]) -> Result<(), i32> {
    let at = paths.at(path)?;
    if at.dot_dot {
        return Err(errno::ENOTEMPTY); // Linux's answer for `rmdir("x/..")`
    }
    // SAFETY: as in `mkdir`.
    check(unsafe { libc::unlinkat(at.dir(), at.name.as_ptr(), libc::AT_REMOVEDIR) })
}

/// `CALL_UNLINK`.
pub fn unlink(paths: &Paths, path: &[u8]) -> Result<(), i32> {
    let at = paths.at(path)?;
    if at.slash {
        let st = lstat_at(at.dir(), &at.name)?;
        return Err(if st.st_mode & libc::S_IFMT == libc::S_IFDIR { errno::EISDIR } else { errno::ENOTDIR });
    }
    // SAFETY: as in `mkdir`.
    check(unsafe { libc::unlinkat(at.dir(), at.name.as_ptr(), 0) })
}

/// `CALL_RENAME`.
pub fn rename(paths: &Paths, from: &[u8], to: &[u8]) -> Result<(), i32> {
    let (a, b) = (paths.at(from)?, paths.at(to)?);
    if a.slash || b.slash {
        wants_dir(&a)?;
    }
    // SAFETY: NUL-terminated names, directory fds (or AT_FDCWD).
    check(unsafe { libc::renameat(a.dir(), a.name.as_ptr(), b.dir(), b.name.as_ptr()) })
}

/// `CALL_LINK`: a hard link `new` to `old` (a final symlink of `old` is
/// linked itself, as Linux's `link` does).
pub fn link(paths: &Paths, old: &[u8], new: &[u8]) -> Result<(), i32> {
    let (a, b) = (paths.at(old)?, paths.at(new)?);
    slash_wants_dir(&a)?;
    new_name_plain(&b)?;
    // SAFETY: as in `rename`.
    check(unsafe { libc::linkat(a.dir(), a.name.as_ptr(), b.dir(), b.name.as_ptr(), 0) })
}

/// `CALL_SYMLINK`: a symlink `link` whose target is the text `target`
/// (data: it is resolved, beneath the root, only when followed).
pub fn symlink(paths: &Paths, target: &[u8], link: &[u8]) -> Result<(), i32> {
    let target = cstring(target)?;
    let at = paths.at(link)?;
    new_name_plain(&at)?;
    // SAFETY: NUL-terminated strings, a directory fd (or AT_FDCWD).
    check(unsafe { libc::symlinkat(target.as_ptr(), at.dir(), at.name.as_ptr()) })
}

/// `CALL_COPY`: std's `fs::copy` — a regular file's bytes and permissions.
pub fn copy(paths: &Paths, from: &[u8], to: &[u8]) -> Result<u64, i32> {
    let mut reader = File::from(paths.open(from, libc::O_RDONLY, 0)?);
    let m = reader.metadata().map_err(errno_of)?;
    if !m.is_file() {
        return Err(errno::EINVAL); // std: "the source path is neither a regular file nor a symlink to a regular file"
    }
    let perm = m.permissions();
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOCTTY;
    let mut writer = File::from(paths.open(to, flags, perm.mode())?);
    let n = io::copy(&mut reader, &mut writer).map_err(errno_of)?;
    if writer.metadata().map_err(errno_of)?.is_file() {
        writer.set_permissions(perm).map_err(errno_of)?;
    }
    Ok(n)
}

/// `CALL_SET_PERM`: `chmod`, following a final symlink.
pub fn set_perm(paths: &Paths, path: &[u8], mode: u32) -> Result<(), i32> {
    let fd = paths.open(path, libc::O_PATH, 0)?;
    let mode = mode & 0o7777;
    // fchmod refuses O_PATH fds; fchmodat2 (Linux 6.6) takes one with
    // AT_EMPTY_PATH. Before it, the fd's /proc link (gpurun's own /proc,
    // which names exactly this file).
    // SAFETY: a NUL-terminated empty name and an fd we hold.
    let r = unsafe { libc::syscall(libc::SYS_fchmodat2, fd.as_raw_fd(), c"".as_ptr(), mode, libc::AT_EMPTY_PATH) };
    if r == 0 {
        return Ok(());
    }
    match last_errno() {
        libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP => {
            let link = cstring(std::format!("/proc/self/fd/{}", fd.as_raw_fd()).as_bytes())?;
            // SAFETY: a NUL-terminated path.
            check(unsafe { libc::chmod(link.as_ptr(), mode) })
        }
        e => Err(e),
    }
}

/// `CALL_READLINK`.
pub fn readlink(paths: &Paths, path: &[u8]) -> Result<Vec<u8>, i32> {
    let fd = paths.open(path, libc::O_PATH | libc::O_NOFOLLOW, 0)?;
    if !File::from(fd.try_clone().map_err(errno_of)?).metadata().map_err(errno_of)?.is_symlink() {
        return Err(errno::EINVAL); // not a symlink
    }
    let mut buf = vec![0u8; MAX_PATH + 1];
    // SAFETY: `buf` is writable for its length; an empty name reads the
    // link the O_PATH fd itself is.
    let n = unsafe { libc::readlinkat(fd.as_raw_fd(), c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let n = usize::try_from(n).map_err(|_| last_errno())?;
    if n >= buf.len() {
        return Err(errno::ENAMETOOLONG);
    }
    buf.truncate(n);
    Ok(buf)
}

/// `CALL_CANONICALIZE`: the absolute path with symlinks, `.` and `..`
/// resolved (under a root, the path inside it).
pub fn canonicalize(paths: &Paths, path: &[u8]) -> Result<Vec<u8>, i32> {
    let fd = paths.open(path, libc::O_PATH, 0)?;
    paths.canonical(&fd)
}
