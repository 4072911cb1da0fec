//! The host's side of every `CALL_*` of [`rt_abi::hostcall`]: files and
//! directories as the launcher's process, a table of open files, the
//! [`FsAccess`] policy, and the program's stdin. Paths resolve through
//! [`paths`]: relative ones from the program's current directory, and under
//! `--fs-root` ([`sandbox`]) all of them beneath the root; the calls that
//! take paths are in [`path_calls`].
//!
//! Everything here comes from the program, so nothing is trusted: a short
//! head, an unknown call, a bad handle or path is answered with `-errno`
//! (Linux numbering, [`errno`]), never a panic, and no allocation is larger
//! than the request (≤ [`MAX_REQUEST`](rt_abi::hostcall::MAX_REQUEST)) or
//! [`MAX_TRANSFER`] says. A call the docs give no status for returns 0.
//!
//! The calls run on the server's call workers ([`super::pool`]), several
//! at once, as the OS calls of one process's threads: the table of open
//! files is locked only to find, add or remove a handle, never during an
//! OS call, so a `read` blocked on a FIFO holds up no other thread's
//! `open`. A program has at most [`MAX_OPEN_FILES`] handles open; past
//! that `open` fails with `EMFILE`, as the host's own `open` would at its
//! limit (which becomes the program's error the same way). Stdin, which
//! may never come, is read by a thread of its own ([`CALL_STDIN_READ`]
//! never blocks).

use std::collections::{HashMap, VecDeque};
use std::fs::{self, File, Metadata};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::prelude::rust_2024::*;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};
use std::vec;

use rt_abi::hostcall::*;

mod path_calls;
mod paths;
pub mod sandbox;

use paths::Paths;
pub use sandbox::{FsRoot, RootError};

/// What a program may do to the host's files and directories.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FsAccess {
    /// Whatever the user running the launcher may.
    #[default]
    All,
    /// Open for reading, read, stat, list, read links: every change
    /// (opening to write, append, create or truncate; write, set_len,
    /// mkdir, rmdir, unlink, rename, copy, set_perm) is `EACCES`.
    ReadOnly,
    /// Every file and directory call (`CALL_CHDIR` too) is `EACCES`; the
    /// current directory's name (`CALL_GETCWD`) and stdin stay available.
    None,
}

impl FsAccess {
    /// The name the launcher's `--fs` option takes.
    pub fn name(self) -> &'static str {
        match self {
            FsAccess::All => "all",
            FsAccess::ReadOnly => "read-only",
            FsAccess::None => "none",
        }
    }

    /// Whether the policy lets `call` run at all (`CALL_OPEN` is further
    /// checked by its flags under [`FsAccess::ReadOnly`]).
    pub fn allows(self, call: u32) -> bool {
        match self {
            FsAccess::All => true,
            FsAccess::ReadOnly => !matches!(
                call,
                CALL_WRITE
                    | CALL_SET_LEN
                    | CALL_MKDIR
                    | CALL_RMDIR
                    | CALL_UNLINK
                    | CALL_RENAME
                    | CALL_COPY
                    | CALL_SET_PERM
                    | CALL_SYMLINK
                    | CALL_LINK
            ),
            FsAccess::None => matches!(call, CALL_GETCWD | CALL_STDIN_READ),
        }
    }
}

impl core::str::FromStr for FsAccess {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(FsAccess::All),
            "read-only" => Ok(FsAccess::ReadOnly),
            "none" => Ok(FsAccess::None),
            _ => Err(std::format!("`{s}` is not a file-system access (all, read-only, none)")),
        }
    }
}

/// `CALL_OPEN` flags that change the file system.
const OPEN_CHANGES: u32 = OPEN_WRITE | OPEN_APPEND | OPEN_TRUNCATE | OPEN_CREATE | OPEN_CREATE_NEW;

/// The first handle given out: 0..=2 read like the standard streams.
pub const FIRST_HANDLE: u64 = 3;

/// Files a program may have open at once: Linux's default soft
/// `RLIMIT_NOFILE`, what the same program would get on the host. Past it
/// `CALL_OPEN` fails with `EMFILE` ("Too many open files").
pub const MAX_OPEN_FILES: usize = 1024;

/// What stdin is read from.
type StdinSource = Box<dyn Read + Send>;

/// Bytes the stdin thread asks for per read.
const STDIN_CHUNK: usize = 64 << 10;
/// Bytes the stdin thread buffers ahead of the program at most (a program
/// that reads slowly must not make the launcher hold all of a huge pipe).
const STDIN_BUFFERED: usize = 1 << 20;

/// Input read from stdin, not yet taken by the program.
#[derive(Default)]
struct StdinBuf {
    data: VecDeque<u8>,
    /// `Some(0)` at the end of input, `Some(errno)` after a read error.
    end: Option<i32>,
    /// The [`HostCalls`] is gone: the reader stops at its next turn.
    closed: bool,
}

#[derive(Default)]
struct StdinShared {
    buf: Mutex<StdinBuf>,
    /// Signalled when the program takes bytes (room to read ahead) or the
    /// calls are dropped.
    room: Condvar,
}

enum Stdin {
    /// Not read yet: the reader thread starts on the first `CALL_STDIN_READ`.
    Idle(StdinSource),
    Reading(Arc<StdinShared>),
    /// The thread could not be started.
    Failed(i32),
}

/// The open files: handle → file. A call takes its file's `Arc` and lets
/// go of the table before the OS call.
struct Files {
    open: HashMap<u64, Arc<File>>,
    /// `CALL_OPEN`s between taking a place under [`MAX_OPEN_FILES`] and
    /// adding their handle (their OS `open` runs unlocked).
    opening: usize,
    next_handle: u64,
}

/// The host's side of the program's host calls, shared by the call workers.
pub struct HostCalls {
    access: FsAccess,
    paths: Paths,
    files: Mutex<Files>,
    stdin: Mutex<Stdin>,
}

impl Drop for HostCalls {
    fn drop(&mut self) {
        if let Ok(stdin) = self.stdin.get_mut()
            && let Stdin::Reading(shared) = stdin
        {
            if let Ok(mut b) = shared.buf.lock() {
                b.closed = true;
            }
            shared.room.notify_all();
        }
    }
}

impl core::fmt::Debug for HostCalls {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HostCalls").field("access", &self.access).field("open_files", &self.open_files()).finish()
    }
}

impl HostCalls {
    /// Calls under `access`, with the launcher's own stdin as the program's.
    pub fn new(access: FsAccess) -> HostCalls {
        HostCalls::with_stdin(access, io::stdin())
    }

    /// Calls under `access`, with the program's stdin read from `stdin`.
    pub fn with_stdin(access: FsAccess, stdin: impl Read + Send + 'static) -> HostCalls {
        HostCalls {
            access,
            paths: Paths::host(),
            files: Mutex::new(Files { open: HashMap::new(), opening: 0, next_handle: FIRST_HANDLE }),
            stdin: Mutex::new(Stdin::Idle(Box::new(stdin))),
        }
    }

    /// The same calls with every path resolved beneath `root` (`--fs-root`),
    /// starting at its top.
    pub fn with_root(mut self, root: FsRoot) -> HostCalls {
        self.paths = Paths::in_root(root);
        self
    }

    /// The root paths resolve beneath, if any.
    pub fn root(&self) -> Option<&FsRoot> {
        self.paths.root()
    }

    /// No file system and an empty stdin: what a server not told otherwise
    /// gives the program.
    pub fn denied() -> HostCalls {
        HostCalls::with_stdin(FsAccess::None, io::empty())
    }

    pub fn access(&self) -> FsAccess {
        self.access
    }

    /// Handles open now.
    pub fn open_files(&self) -> usize {
        self.table().open.len()
    }

    /// Runs call `call` on its assembled request (head then body) and
    /// returns its status (≥ 0, or `-errno`) and reply bytes.
    pub fn call(&self, call: u32, request: &[u8]) -> (i64, Vec<u8>) {
        self.call_within(call, request, usize::MAX)
    }

    /// [`call`](Self::call), reading at most `max_read` bytes for a
    /// `CALL_READ` or `CALL_STDIN_READ` (a short read, when the host's
    /// buffer budget is low; at least 1 byte is always asked for).
    pub fn call_within(&self, call: u32, request: &[u8], max_read: usize) -> (i64, Vec<u8>) {
        let mut reply = Vec::new();
        let status = match self.dispatch(call, request, max_read.max(1), &mut reply) {
            Ok(s) => s,
            Err(e) => {
                reply.clear();
                -i64::from(e)
            }
        };
        (status, reply)
    }

    /// Whether `call` may block for long (on a FIFO, a terminal, a slow
    /// disk): all that touch files; not the working directory's name, nor
    /// stdin (served from its reader thread's buffer).
    pub fn may_block(call: u32) -> bool {
        !matches!(call, CALL_GETCWD | CALL_STDIN_READ)
    }

    fn dispatch(&self, call: u32, request: &[u8], max_read: usize, reply: &mut Vec<u8>) -> Result<i64, i32> {
        let words = head_words_of(call).ok_or(errno::EINVAL)?;
        if !self.access.allows(call) {
            return Err(errno::EACCES);
        }
        let head_len = words * 8;
        if request.len() < head_len {
            return Err(errno::EINVAL);
        }
        let (head, body) = request.split_at(head_len);
        let w = |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        // Calls without a body refuse one (the program sent something else).
        let no_body = || if body.is_empty() { Ok(()) } else { Err(errno::EINVAL) };
        match call {
            CALL_OPEN => {
                let (flags, mode) = (w(0) as u32, (w(0) >> 32) as u32);
                self.open(flags, mode, path(body)?)
            }
            CALL_CLOSE => {
                no_body()?;
                let file = self.table().open.remove(&w(0)).ok_or(errno::EBADF)?;
                // The OS close (which may block, on NFS) outside the lock;
                // a call still using the file closes it when it ends.
                drop(file);
                Ok(0)
            }
            CALL_READ => {
                no_body()?;
                let f = self.file(w(0))?;
                let want = (w(1).min(MAX_TRANSFER) as usize).min(max_read);
                reply.resize(want, 0);
                let n = retry(|| (&*f).read(reply)).map_err(errno_of)?;
                reply.truncate(n);
                Ok(n as i64)
            }
            CALL_WRITE => {
                let f = self.file(w(0))?;
                let n = body.len().min(MAX_TRANSFER as usize);
                Ok(retry(|| (&*f).write(&body[..n])).map_err(errno_of)? as i64)
            }
            CALL_SEEK => {
                no_body()?;
                let f = self.file(w(0))?;
                let offset = w(2) as i64;
                let to = match w(1) {
                    SEEK_SET => SeekFrom::Start(u64::try_from(offset).map_err(|_| errno::EINVAL)?),
                    SEEK_CUR => SeekFrom::Current(offset),
                    SEEK_END => SeekFrom::End(offset),
                    _ => return Err(errno::EINVAL),
                };
                let at = (&*f).seek(to).map_err(errno_of)?;
                i64::try_from(at).map_err(|_| errno::EINVAL)
            }
            CALL_SYNC => {
                no_body()?;
                let f = self.file(w(0))?;
                match w(1) {
                    0 => f.sync_all(),
                    1 => f.sync_data(),
                    _ => return Err(errno::EINVAL),
                }
                .map_err(errno_of)?;
                Ok(0)
            }
            CALL_SET_LEN => {
                no_body()?;
                self.file(w(0))?.set_len(w(1)).map_err(errno_of)?;
                Ok(0)
            }
            CALL_FSTAT => {
                no_body()?;
                let m = self.file(w(0))?.metadata().map_err(errno_of)?;
                reply.extend_from_slice(&stat_of(&m).to_bytes());
                Ok(0)
            }
            CALL_STAT => {
                let follow = match w(0) {
                    1 => true,
                    0 => false,
                    _ => return Err(errno::EINVAL),
                };
                let st = path_calls::stat(&self.paths, path(body)?, follow)?;
                reply.extend_from_slice(&st.to_bytes());
                Ok(0)
            }
            CALL_READ_DIR => path_calls::read_dir(&self.paths, path(body)?, reply),
            CALL_MKDIR => path_calls::mkdir(&self.paths, path(body)?, w(0) as u32).map(|()| 0),
            CALL_RMDIR => path_calls::rmdir(&self.paths, path(body)?).map(|()| 0),
            CALL_UNLINK => path_calls::unlink(&self.paths, path(body)?).map(|()| 0),
            CALL_RENAME => {
                let (from, to) = two_paths(w(0), body)?;
                path_calls::rename(&self.paths, from, to).map(|()| 0)
            }
            CALL_COPY => {
                let (from, to) = two_paths(w(0), body)?;
                let n = path_calls::copy(&self.paths, from, to)?;
                i64::try_from(n).map_err(|_| errno::EFBIG)
            }
            CALL_GETCWD => {
                no_body()?;
                reply.extend_from_slice(&self.paths.cwd()?);
                Ok(0)
            }
            CALL_CHDIR => self.paths.chdir(path(body)?).map(|()| 0),
            CALL_SET_PERM => path_calls::set_perm(&self.paths, path(body)?, w(0) as u32).map(|()| 0),
            CALL_SYMLINK => {
                let (target, link) = two_paths(w(0), body)?;
                path_calls::symlink(&self.paths, target, link).map(|()| 0)
            }
            CALL_LINK => {
                let (old, new) = two_paths(w(0), body)?;
                path_calls::link(&self.paths, old, new).map(|()| 0)
            }
            CALL_STDIN_READ => {
                no_body()?;
                self.stdin_read(w(0).min(max_read as u64), reply)
            }
            CALL_READLINK => {
                reply.extend_from_slice(&path_calls::readlink(&self.paths, path(body)?)?);
                Ok(0)
            }
            CALL_CANONICALIZE => {
                reply.extend_from_slice(&path_calls::canonicalize(&self.paths, path(body)?)?);
                Ok(0)
            }
            _ => Err(errno::EINVAL),
        }
    }

    fn table(&self) -> MutexGuard<'_, Files> {
        // A worker that panicked mid-update leaves a table still whole:
        // every update is one map operation.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn open(&self, flags: u32, mode: u32, path: &[u8]) -> Result<i64, i32> {
        if flags & !OPEN_ALL != 0 {
            return Err(errno::EINVAL);
        }
        if self.access == FsAccess::ReadOnly && flags & OPEN_CHANGES != 0 {
            return Err(errno::EACCES);
        }
        {
            let mut t = self.table();
            if t.open.len() + t.opening >= MAX_OPEN_FILES {
                return Err(errno::EMFILE);
            }
            t.opening += 1;
        }
        // The OS `open` runs unlocked (it blocks on a FIFO until its other
        // end opens); the host's own `EMFILE`/`ENFILE` come back as they are.
        let opened = path_calls::open(&self.paths, flags, mode, path);
        let mut t = self.table();
        t.opening -= 1;
        let file = opened?;
        let handle = t.next_handle;
        let status = i64::try_from(handle).map_err(|_| errno::ENOMEM)?;
        t.next_handle += 1;
        t.open.insert(handle, Arc::new(file));
        Ok(status)
    }

    fn file(&self, handle: u64) -> Result<Arc<File>, i32> {
        self.table().open.get(&handle).cloned().ok_or(errno::EBADF)
    }

    /// What stdin has buffered, up to `want` bytes; 0 at its end; `-EAGAIN`
    /// while nothing has come (the device asks again).
    fn stdin_read(&self, want: u64, reply: &mut Vec<u8>) -> Result<i64, i32> {
        let want = want.min(MAX_TRANSFER) as usize;
        if want == 0 {
            return Ok(0);
        }
        let shared = self.stdin_reader()?;
        let mut b = shared.buf.lock().map_err(|_| errno::EIO)?;
        if b.data.is_empty() {
            return match b.end {
                Some(0) => Ok(0),
                Some(e) => Err(e),
                None => Err(errno::EAGAIN),
            };
        }
        let n = want.min(b.data.len());
        reply.extend(b.data.drain(..n));
        drop(b);
        shared.room.notify_all();
        Ok(n as i64)
    }

    /// The stdin reader, started on first use.
    fn stdin_reader(&self) -> Result<Arc<StdinShared>, i32> {
        let mut stdin = self.stdin.lock().map_err(|_| errno::EIO)?;
        match &*stdin {
            Stdin::Reading(s) => return Ok(s.clone()),
            Stdin::Failed(e) => return Err(*e),
            Stdin::Idle(_) => {}
        }
        let Stdin::Idle(source) = core::mem::replace(&mut *stdin, Stdin::Failed(errno::EIO)) else {
            unreachable!("matched above")
        };
        let shared = Arc::new(StdinShared::default());
        let theirs = shared.clone();
        match std::thread::Builder::new().name("gpurun-stdin".into()).spawn(move || read_stdin(source, &theirs)) {
            Ok(_) => {
                *stdin = Stdin::Reading(shared.clone());
                Ok(shared)
            }
            Err(e) => {
                let e = errno_of(e);
                *stdin = Stdin::Failed(e);
                Err(e)
            }
        }
    }
}

/// The stdin thread: reads `source` in chunks into `shared` until its end
/// or an error, keeping at most [`STDIN_BUFFERED`] bytes ahead.
fn read_stdin(mut source: StdinSource, shared: &StdinShared) {
    let mut chunk = vec![0u8; STDIN_CHUNK];
    loop {
        {
            let Ok(b) = shared.buf.lock() else { return };
            let Ok(b) = shared.room.wait_while(b, |b| b.data.len() >= STDIN_BUFFERED && !b.closed) else { return };
            if b.closed {
                return;
            }
        }
        let r = source.read(&mut chunk);
        let Ok(mut b) = shared.buf.lock() else { return };
        match r {
            Ok(0) => b.end = Some(0),
            Ok(n) => b.data.extend(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => b.end = Some(errno_of(e)),
        }
        if b.end.is_some() || b.closed {
            return;
        }
    }
}

/// Raises gpurun's soft limit of open files to its hard limit, so the
/// program's own limit (`MAX_OPEN_FILES`, Linux's default soft limit) is
/// what it meets, not gpurun's, which its driver's files count against too.
/// Where that fails the host's `EMFILE` still reaches the program as its
/// own error.
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 && lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit; raising the soft limit up to the
        // hard one needs no privilege.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

/// The name of call `call` for reports (std's name for what it does).
pub fn call_name(call: u32) -> &'static str {
    match call {
        CALL_OPEN => "open",
        CALL_CLOSE => "close",
        CALL_READ => "read",
        CALL_WRITE => "write",
        CALL_SEEK => "seek",
        CALL_SYNC => "sync",
        CALL_SET_LEN => "set_len",
        CALL_FSTAT => "metadata",
        CALL_STAT => "stat",
        CALL_READ_DIR => "read_dir",
        CALL_MKDIR => "create_dir",
        CALL_RMDIR => "remove_dir",
        CALL_UNLINK => "remove_file",
        CALL_RENAME => "rename",
        CALL_COPY => "copy",
        CALL_GETCWD => "current_dir",
        CALL_SET_PERM => "set_permissions",
        CALL_STDIN_READ => "stdin read",
        CALL_READLINK => "read_link",
        CALL_CANONICALIZE => "canonicalize",
        CALL_CHDIR => "set_current_dir",
        CALL_SYMLINK => "symlink",
        CALL_LINK => "hard_link",
        _ => "unknown call",
    }
}

/// Retries `f` while the OS says it was interrupted.
fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// A path from the program: not empty, no NUL (`EINVAL`), at most
/// [`MAX_PATH`] bytes (`ENAMETOOLONG`).
fn path(bytes: &[u8]) -> Result<&[u8], i32> {
    if bytes.is_empty() || bytes.contains(&0) {
        return Err(errno::EINVAL);
    }
    if bytes.len() > MAX_PATH {
        return Err(errno::ENAMETOOLONG);
    }
    Ok(bytes)
}

/// The two paths of the two-path calls (rename, copy, symlink, link): the
/// first `first` bytes of `body`, then the rest.
fn two_paths(first: u64, body: &[u8]) -> Result<(&[u8], &[u8]), i32> {
    let first = usize::try_from(first).ok().filter(|&n| n <= body.len()).ok_or(errno::EINVAL)?;
    let (a, b) = body.split_at(first);
    Ok((path(a)?, path(b)?))
}

fn kind_of(t: fs::FileType) -> u8 {
    if t.is_symlink() {
        KIND_SYMLINK
    } else if t.is_dir() {
        KIND_DIR
    } else if t.is_file() {
        KIND_FILE
    } else {
        KIND_OTHER
    }
}

/// The [`Stat`] of some metadata.
pub fn stat_of(m: &Metadata) -> Stat {
    let created = m.created().ok().map(unix_time);
    Stat {
        size: m.len(),
        kind: kind_of(m.file_type()),
        has_created: created.is_some(),
        mode: m.mode(),
        modified: (m.mtime(), m.mtime_nsec().clamp(0, 999_999_999) as u32),
        accessed: (m.atime(), m.atime_nsec().clamp(0, 999_999_999) as u32),
        created: created.unwrap_or((0, 0)),
    }
}

/// Seconds and nanoseconds since the Unix epoch, as a `timespec` holds them
/// (nanoseconds always forward, also before 1970).
fn unix_time(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (i64::try_from(d.as_secs()).unwrap_or(i64::MAX), d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            match d.subsec_nanos() {
                0 => (-secs, 0),
                n => (-secs - 1, 1_000_000_000 - n),
            }
        }
    }
}

/// The Linux errno of an I/O error: the OS's own code where there is one
/// (the launcher runs on Linux), else one for its kind, `EIO` at last.
pub fn errno_of(e: io::Error) -> i32 {
    #[cfg(target_os = "linux")]
    if let Some(code) = e.raw_os_error().filter(|&c| c > 0) {
        return code;
    }
    use errno::*;
    match e.kind() {
        ErrorKind::NotFound => ENOENT,
        ErrorKind::PermissionDenied => EACCES,
        ErrorKind::AlreadyExists => EEXIST,
        ErrorKind::InvalidInput | ErrorKind::InvalidData => EINVAL,
        ErrorKind::Interrupted => EINTR,
        ErrorKind::WouldBlock => EAGAIN,
        ErrorKind::OutOfMemory => ENOMEM,
        ErrorKind::Unsupported => EOPNOTSUPP,
        ErrorKind::BrokenPipe => EPIPE,
        ErrorKind::TimedOut => ETIMEDOUT,
        ErrorKind::IsADirectory => EISDIR,
        ErrorKind::NotADirectory => ENOTDIR,
        ErrorKind::DirectoryNotEmpty => ENOTEMPTY,
        ErrorKind::ReadOnlyFilesystem => EROFS,
        ErrorKind::StorageFull => ENOSPC,
        ErrorKind::QuotaExceeded => EDQUOT,
        ErrorKind::FileTooLarge => EFBIG,
        ErrorKind::ResourceBusy => EBUSY,
        ErrorKind::ExecutableFileBusy => ETXTBSY,
        ErrorKind::CrossesDevices => EXDEV,
        ErrorKind::TooManyLinks => EMLINK,
        ErrorKind::InvalidFilename => ENAMETOOLONG,
        ErrorKind::NotSeekable => ESPIPE,
        ErrorKind::StaleNetworkFileHandle => ESTALE,
        _ => EIO,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod sandbox_tests;
