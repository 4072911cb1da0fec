//! Files and directories on GPUs: the host's file system, through host calls
//! (`sys::pal::gpu::hostcall`). Paths resolve as they would for the same
//! program on the host (relative to the program's current directory), or
//! beneath the directory `gpurun run --fs-root` names; the program has the
//! rights of the user running it, less what `gpurun run --fs` takes away.
//! Errors are the host's `errno`.
//!
//! Not available: file times, locks (the calls return `Unsupported`).

use crate::ffi::OsString;
use crate::fmt;
use crate::fs::TryLockError;
use crate::hash::{Hash, Hasher};
use crate::io::{self, BorrowedCursor, IoSlice, IoSliceMut, SeekFrom};
use crate::path::{Path, PathBuf};
pub use crate::sys::fs::common::{Dir, exists, remove_dir_all};
use crate::sys::pal::hostcall::{self as hc, Head};
use crate::sys::time::{SystemTime, UNIX_EPOCH};
use crate::sys::unsupported;
use crate::time::Duration;

fn path_bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_encoded_bytes()
}

fn path_from(bytes: Vec<u8>) -> PathBuf {
    // SAFETY: the host sends paths as the bytes of an `OsStr` of a Unix
    // host, which is what `OsStr` holds on these targets (any bytes).
    PathBuf::from(unsafe { OsString::from_encoded_bytes_unchecked(bytes) })
}

/// An open file: the host's handle for it.
pub struct File {
    handle: u64,
}

#[derive(Clone)]
pub struct FileAttr {
    stat: hc::Stat,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileType {
    kind: u8,
}

#[derive(Clone, PartialEq, Eq)]
pub struct FilePermissions {
    mode: u32,
}

#[derive(Copy, Clone, Debug, Default)]
pub struct FileTimes {}

#[derive(Clone, Debug)]
pub struct OpenOptions {
    flags: u32,
    mode: u32,
}

#[derive(Debug)]
pub struct DirBuilder {
    mode: u32,
}

pub struct ReadDir {
    root: PathBuf,
    entries: crate::vec::IntoIter<(OsString, u8)>,
}

pub struct DirEntry {
    root: PathBuf,
    name: OsString,
    kind: u8,
}

fn time(secs: i64, nanos: u32) -> SystemTime {
    let since = Duration::new(secs.unsigned_abs(), nanos);
    if secs >= 0 { UNIX_EPOCH.checked_add_duration(&since) } else { UNIX_EPOCH.checked_sub_duration(&since) }
        .unwrap_or(UNIX_EPOCH)
}

impl FileAttr {
    pub fn size(&self) -> u64 {
        self.stat.size
    }

    pub fn perm(&self) -> FilePermissions {
        FilePermissions { mode: self.stat.mode }
    }

    pub fn file_type(&self) -> FileType {
        FileType { kind: self.stat.kind }
    }

    pub fn modified(&self) -> io::Result<SystemTime> {
        Ok(time(self.stat.modified.0, self.stat.modified.1))
    }

    pub fn accessed(&self) -> io::Result<SystemTime> {
        Ok(time(self.stat.accessed.0, self.stat.accessed.1))
    }

    pub fn created(&self) -> io::Result<SystemTime> {
        if self.stat.has_created {
            Ok(time(self.stat.created.0, self.stat.created.1))
        } else {
            Err(io::const_error!(io::ErrorKind::Unsupported, "creation time is not available on the host's file system"))
        }
    }
}

impl fmt::Debug for FileAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileAttr").field("stat", &self.stat).finish()
    }
}

impl FilePermissions {
    pub fn readonly(&self) -> bool {
        // As on Unix: no write bit for anyone.
        self.mode & 0o222 == 0
    }

    pub fn set_readonly(&mut self, readonly: bool) {
        if readonly { self.mode &= !0o222 } else { self.mode |= 0o222 }
    }

    pub fn mode(&self) -> u32 {
        self.mode
    }
}

impl fmt::Debug for FilePermissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilePermissions").field("mode", &Mode(self.mode)).finish()
    }
}

/// A Linux `st_mode` shown as std on Unix shows it: octal, then the
/// file type and permissions as `ls -l` writes them (`0o100644 (-rw-r--r--)`).
struct Mode(u32);

impl fmt::Debug for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        let Self(mode) = *self;
        write!(f, "0o{mode:06o}")?;
        let entry_type = match mode & 0o170000 {
            0o040000 => 'd',
            0o060000 => 'b',
            0o020000 => 'c',
            0o120000 => 'l',
            0o010000 => 'p',
            0o100000 => '-',
            _ => return Ok(()),
        };
        let bit = |b: u32, c: char| if mode & b != 0 { c } else { '-' };
        // The execute column: `special` (setuid, setgid, sticky) shows as
        // `s`/`S`, or `t`/`T` for sticky on a directory, as `ls` does.
        let exec = |x: u32, special: u32, set: char| match (mode & x != 0, mode & special != 0) {
            (true, true) => set,
            (false, true) => set.to_ascii_uppercase(),
            (true, false) => 'x',
            (false, false) => '-',
        };
        f.write_str(" (")?;
        f.write_char(entry_type)?;
        f.write_char(bit(0o400, 'r'))?;
        f.write_char(bit(0o200, 'w'))?;
        f.write_char(exec(0o100, 0o4000, 's'))?;
        f.write_char(bit(0o040, 'r'))?;
        f.write_char(bit(0o020, 'w'))?;
        f.write_char(exec(0o010, 0o2000, 's'))?;
        f.write_char(bit(0o004, 'r'))?;
        f.write_char(bit(0o002, 'w'))?;
        // Sticky shows only on a directory.
        let sticky = if entry_type == 'd' { 0o1000 } else { 0 };
        f.write_char(exec(0o001, sticky, 't'))?;
        f.write_char(')')
    }
}

impl FileTimes {
    pub fn set_accessed(&mut self, _t: SystemTime) {}
    pub fn set_modified(&mut self, _t: SystemTime) {}
}

impl FileType {
    pub fn is_dir(&self) -> bool {
        self.kind == hc::KIND_DIR
    }

    pub fn is_file(&self) -> bool {
        self.kind == hc::KIND_FILE
    }

    pub fn is_symlink(&self) -> bool {
        self.kind == hc::KIND_SYMLINK
    }
}

impl fmt::Debug for FileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            hc::KIND_FILE => "file",
            hc::KIND_DIR => "dir",
            hc::KIND_SYMLINK => "symlink",
            _ => "other",
        };
        f.debug_struct("FileType").field("kind", &name).finish()
    }
}

impl fmt::Debug for ReadDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ReadDir").field(&self.root).finish()
    }
}

impl Iterator for ReadDir {
    type Item = io::Result<DirEntry>;

    fn next(&mut self) -> Option<io::Result<DirEntry>> {
        let (name, kind) = self.entries.next()?;
        Some(Ok(DirEntry { root: self.root.clone(), name, kind }))
    }
}

impl DirEntry {
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.name)
    }

    pub fn file_name(&self) -> OsString {
        self.name.clone()
    }

    pub fn metadata(&self) -> io::Result<FileAttr> {
        lstat(&self.path())
    }

    pub fn file_type(&self) -> io::Result<FileType> {
        Ok(FileType { kind: self.kind })
    }
}

impl OpenOptions {
    pub fn new() -> OpenOptions {
        OpenOptions { flags: 0, mode: 0o666 }
    }

    fn set(&mut self, flag: u32, on: bool) {
        if on { self.flags |= flag } else { self.flags &= !flag }
    }

    pub fn read(&mut self, read: bool) {
        self.set(hc::OPEN_READ, read)
    }
    pub fn write(&mut self, write: bool) {
        self.set(hc::OPEN_WRITE, write)
    }
    pub fn append(&mut self, append: bool) {
        self.set(hc::OPEN_APPEND, append)
    }
    pub fn truncate(&mut self, truncate: bool) {
        self.set(hc::OPEN_TRUNCATE, truncate)
    }
    pub fn create(&mut self, create: bool) {
        self.set(hc::OPEN_CREATE, create)
    }
    pub fn create_new(&mut self, create_new: bool) {
        self.set(hc::OPEN_CREATE_NEW, create_new)
    }
}

fn stat_reply(reply: &[u8]) -> io::Result<FileAttr> {
    let bytes: &[u8; hc::STAT_BYTES] = reply
        .try_into()
        .map_err(|_| io::const_error!(io::ErrorKind::InvalidData, "the host sent metadata of the wrong size"))?;
    Ok(FileAttr { stat: hc::Stat::from_bytes(bytes) })
}

impl File {
    pub fn open(path: &Path, opts: &OpenOptions) -> io::Result<File> {
        let head = Head::new(&[u64::from(opts.flags) | u64::from(opts.mode) << 32]);
        let (handle, _) = hc::call(hc::CALL_OPEN, head.as_bytes(), path_bytes(path), &mut [])?;
        Ok(File { handle })
    }

    fn handle_call(&self, call: u32, more: &[u64], body: &[u8], reply: &mut [u8]) -> io::Result<(u64, usize)> {
        let mut words = [0u64; 3];
        words[0] = self.handle;
        words[1..1 + more.len()].copy_from_slice(more);
        hc::call(call, Head::new(&words[..1 + more.len()]).as_bytes(), body, reply)
    }

    pub fn file_attr(&self) -> io::Result<FileAttr> {
        let mut reply = [0u8; hc::STAT_BYTES];
        let (_, n) = self.handle_call(hc::CALL_FSTAT, &[], &[], &mut reply)?;
        stat_reply(&reply[..n.min(reply.len())])
    }

    pub fn fsync(&self) -> io::Result<()> {
        self.handle_call(hc::CALL_SYNC, &[0], &[], &mut []).map(drop)
    }

    pub fn datasync(&self) -> io::Result<()> {
        self.handle_call(hc::CALL_SYNC, &[1], &[], &mut []).map(drop)
    }

    pub fn lock(&self) -> io::Result<()> {
        unsupported()
    }

    pub fn lock_shared(&self) -> io::Result<()> {
        unsupported()
    }

    pub fn try_lock(&self) -> Result<(), TryLockError> {
        Err(TryLockError::Error(io::Error::UNSUPPORTED_PLATFORM))
    }

    pub fn try_lock_shared(&self) -> Result<(), TryLockError> {
        Err(TryLockError::Error(io::Error::UNSUPPORTED_PLATFORM))
    }

    pub fn unlock(&self) -> io::Result<()> {
        unsupported()
    }

    pub fn truncate(&self, size: u64) -> io::Result<()> {
        self.handle_call(hc::CALL_SET_LEN, &[size], &[], &mut []).map(drop)
    }

    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(hc::MAX_TRANSFER as usize);
        let (n, _) = self.handle_call(hc::CALL_READ, &[want as u64], &[], &mut buf[..want])?;
        Ok((n as usize).min(want))
    }

    pub fn read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        crate::io::default_read_vectored(|buf| self.read(buf), bufs)
    }

    pub fn is_read_vectored(&self) -> bool {
        false
    }

    pub fn read_buf(&self, cursor: BorrowedCursor<'_>) -> io::Result<()> {
        crate::io::default_read_buf(|buf| self.read(buf), cursor)
    }

    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let part = &buf[..buf.len().min(hc::MAX_TRANSFER as usize)];
        let (n, _) = self.handle_call(hc::CALL_WRITE, &[], part, &mut [])?;
        Ok((n as usize).min(part.len()))
    }

    pub fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        crate::io::default_write_vectored(|buf| self.write(buf), bufs)
    }

    pub fn is_write_vectored(&self) -> bool {
        false
    }

    pub fn flush(&self) -> io::Result<()> {
        // Nothing is buffered on the device: each write is the host's write.
        Ok(())
    }

    pub fn seek(&self, pos: SeekFrom) -> io::Result<u64> {
        let (whence, offset) = match pos {
            SeekFrom::Start(n) => (hc::SEEK_SET, n as i64),
            SeekFrom::Current(n) => (hc::SEEK_CUR, n),
            SeekFrom::End(n) => (hc::SEEK_END, n),
        };
        if matches!(pos, SeekFrom::Start(n) if n > i64::MAX as u64) {
            return Err(io::const_error!(io::ErrorKind::InvalidInput, "seek position past i64::MAX"));
        }
        self.handle_call(hc::CALL_SEEK, &[whence, offset as u64], &[], &mut []).map(|(pos, _)| pos)
    }

    pub fn size(&self) -> Option<io::Result<u64>> {
        Some(self.file_attr().map(|a| a.size()))
    }

    pub fn tell(&self) -> io::Result<u64> {
        self.seek(SeekFrom::Current(0))
    }

    pub fn duplicate(&self) -> io::Result<File> {
        unsupported()
    }

    pub fn set_permissions(&self, _perm: FilePermissions) -> io::Result<()> {
        unsupported()
    }

    pub fn set_times(&self, _times: FileTimes) -> io::Result<()> {
        unsupported()
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // As on Unix, an error closing the file is ignored.
        let _ = hc::call(hc::CALL_CLOSE, Head::new(&[self.handle]).as_bytes(), &[], &mut []);
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File").field("handle", &self.handle).finish()
    }
}

impl DirBuilder {
    pub fn new() -> DirBuilder {
        DirBuilder { mode: 0o777 }
    }

    pub fn mkdir(&self, p: &Path) -> io::Result<()> {
        hc::call(hc::CALL_MKDIR, Head::new(&[u64::from(self.mode)]).as_bytes(), path_bytes(p), &mut []).map(drop)
    }

    pub fn set_mode(&mut self, mode: u32) {
        self.mode = mode;
    }
}

pub fn readdir(p: &Path) -> io::Result<ReadDir> {
    let (count, reply) = hc::call_for_vec(hc::CALL_READ_DIR, &[], path_bytes(p))?;
    let bad = || io::const_error!(io::ErrorKind::InvalidData, "the host sent a malformed directory listing");
    let mut entries = Vec::with_capacity(count.min(1 << 16) as usize);
    let mut rest = &reply[..];
    while !rest.is_empty() {
        let [kind, l0, l1, tail @ ..] = rest else { return Err(bad()) };
        let len = usize::from(u16::from_le_bytes([*l0, *l1]));
        if tail.len() < len {
            return Err(bad());
        }
        // SAFETY: bytes of a Unix host's `OsStr` (any bytes are valid here).
        entries.push((unsafe { OsString::from_encoded_bytes_unchecked(tail[..len].to_vec()) }, *kind));
        rest = &tail[len..];
    }
    Ok(ReadDir { root: p.to_path_buf(), entries: entries.into_iter() })
}

fn path_call(call: u32, p: &Path) -> io::Result<()> {
    hc::call(call, &[], path_bytes(p), &mut []).map(drop)
}

pub fn unlink(p: &Path) -> io::Result<()> {
    path_call(hc::CALL_UNLINK, p)
}

pub fn rmdir(p: &Path) -> io::Result<()> {
    path_call(hc::CALL_RMDIR, p)
}

fn two_paths(call: u32, from: &Path, to: &Path) -> io::Result<u64> {
    let (from, to) = (path_bytes(from), path_bytes(to));
    let mut body = Vec::with_capacity(from.len() + to.len());
    body.extend_from_slice(from);
    body.extend_from_slice(to);
    hc::call(call, Head::new(&[from.len() as u64]).as_bytes(), &body, &mut []).map(|(status, _)| status)
}

pub fn rename(old: &Path, new: &Path) -> io::Result<()> {
    two_paths(hc::CALL_RENAME, old, new).map(drop)
}

pub fn copy(from: &Path, to: &Path) -> io::Result<u64> {
    two_paths(hc::CALL_COPY, from, to)
}

pub fn set_perm(p: &Path, perm: FilePermissions) -> io::Result<()> {
    hc::call(hc::CALL_SET_PERM, Head::new(&[u64::from(perm.mode)]).as_bytes(), path_bytes(p), &mut []).map(drop)
}

pub fn set_times(_p: &Path, _times: FileTimes) -> io::Result<()> {
    unsupported()
}

pub fn set_times_nofollow(_p: &Path, _times: FileTimes) -> io::Result<()> {
    unsupported()
}

pub fn readlink(p: &Path) -> io::Result<PathBuf> {
    hc::call_for_vec(hc::CALL_READLINK, &[], path_bytes(p)).map(|(_, bytes)| path_from(bytes))
}

pub fn symlink(original: &Path, link: &Path) -> io::Result<()> {
    two_paths(hc::CALL_SYMLINK, original, link).map(drop)
}

pub fn link(original: &Path, link: &Path) -> io::Result<()> {
    two_paths(hc::CALL_LINK, original, link).map(drop)
}

fn stat_call(p: &Path, follow: bool) -> io::Result<FileAttr> {
    let mut reply = [0u8; hc::STAT_BYTES];
    let (_, n) = hc::call(hc::CALL_STAT, Head::new(&[u64::from(follow)]).as_bytes(), path_bytes(p), &mut reply)?;
    stat_reply(&reply[..n.min(reply.len())])
}

pub fn stat(p: &Path) -> io::Result<FileAttr> {
    stat_call(p, true)
}

pub fn lstat(p: &Path) -> io::Result<FileAttr> {
    stat_call(p, false)
}

pub fn canonicalize(p: &Path) -> io::Result<PathBuf> {
    hc::call_for_vec(hc::CALL_CANONICALIZE, &[], path_bytes(p)).map(|(_, bytes)| path_from(bytes))
}
