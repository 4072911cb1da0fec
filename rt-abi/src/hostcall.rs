//! Host calls with arguments and results of any size: files, directories,
//! stdin. The contract both ends build from — the device end
//! (rt-common's `ring::host_call`, reached by std through
//! `__gpu_std_host_call`) and the host end (rt-host's `host_ring::calls`).
//!
//! ## On the ring
//! A call is one request and one reply, carried by [`OP_CALL`] packets:
//! - the request's bytes go in packets of [`OP_CALL`] (`arg0` = the call
//!   number `CALL_*`, `arg1` = the request's total length), all but the last
//!   with `FLAG_MORE`; the last has `FLAG_REPLY`. The host assembles them
//!   per thread, as it does writes, so other threads' packets may come in
//!   between.
//! - the host answers in the last packet's slot: [`ReplyHead`] (the status
//!   and the reply's total length) then the first
//!   [`FIRST_REPLY_BYTES`] of the reply's bytes.
//! - a longer reply is fetched with [`OP_CALL_MORE`] (`arg0` = offset,
//!   `FLAG_REPLY`): the host answers with up to `RING_PAYLOAD_BYTES` bytes
//!   from that offset (zeroed past the reply's end). The host keeps a
//!   thread's last reply until the thread's next call.
//! - a call that has not finished soon (a FIFO with no writer, a slow
//!   disk) is answered with [`STATUS_PENDING`] instead, so that its slot
//!   does not stay taken while the ring goes round (the host consumes
//!   tickets in order: a slot never freed would stop every thread's
//!   packets one ring later). The device then asks for the result with
//!   [`OP_CALL_WAIT`] (`FLAG_REPLY`), answered like the call's last
//!   packet: the result, or [`STATUS_PENDING`] again. The host holds each
//!   such packet until the result is in or the ring needs the slot, so a
//!   waiting thread costs few packets.
//! - a request longer than [`MAX_REQUEST`], or whose packets add up to more
//!   or less than its `arg1`, breaks the protocol: the host stops serving
//!   and the run ends (exit 6). The device end must refuse such a request
//!   itself.
//!
//! ## Requests
//! A request is a fixed head of little-endian words (`CALL_*`'s docs give
//! it) followed by a body: a path, data, or for two-path calls the first
//! path's length as a `u64` in the head and both paths in the body. Paths
//! are bytes (`OsStr` on a Unix host), never NUL-terminated; the host
//! refuses an empty path or one containing NUL with `EINVAL`, one longer
//! than [`MAX_PATH`] with `ENAMETOOLONG`. A head shorter than the call's,
//! a body on a call that has none, or an unknown call is `EINVAL`.
//!
//! ## Status
//! `status >= 0` is the call's result (a handle, a byte count, a position;
//! 0 for a call whose docs name none); `status < 0` is `-errno`, the
//! host's OS error code (Linux numbering, [`errno`]; `EACCES` for what the
//! launcher's `--fs` policy refuses), which std turns into an `io::Error`
//! with the host's `ErrorKind`. A handle is the host's number for an open
//! file, not an OS file descriptor; handles 0..=2 are never given out.

pub use crate::protocol::{OP_CALL, OP_CALL_MORE, OP_CALL_WAIT};

/// [`ReplyHead::status`] of a call still running on the host: ask again
/// with [`OP_CALL_WAIT`]. Never an errno (those are -1..=-4095).
pub const STATUS_PENDING: i64 = i64::MIN;

/// Open a file. Head: one word, [`OPEN_*`](OPEN_READ) flags in the low 32
/// bits and the mode of a created file (before the host's umask) in the
/// high 32. Body: the path. Status: a handle.
pub const CALL_OPEN: u32 = 1;
/// Close a handle. Head: `u64` handle.
pub const CALL_CLOSE: u32 = 2;
/// Read from a handle at its position. Head: `u64` handle, `u64` bytes
/// wanted (the host reads at most [`MAX_TRANSFER`]). Reply: the bytes.
/// Status: how many (0 at the end of the file).
pub const CALL_READ: u32 = 3;
/// Write to a handle at its position (or its end, if opened to append).
/// Head: `u64` handle. Body: the bytes (at most [`MAX_TRANSFER`]; the host
/// writes no more of a longer body). Status: bytes written.
pub const CALL_WRITE: u32 = 4;
/// Move a handle's position. Head: `u64` handle, `u64` whence
/// ([`SEEK_SET`], [`SEEK_CUR`], [`SEEK_END`]), `i64` offset. Status: the
/// new position.
pub const CALL_SEEK: u32 = 5;
/// Flush a handle to the disk. Head: `u64` handle, `u64` 1 for the data
/// only (`sync_data`), 0 for data and metadata (`sync_all`).
pub const CALL_SYNC: u32 = 6;
/// Truncate or extend a file. Head: `u64` handle, `u64` length.
pub const CALL_SET_LEN: u32 = 7;
/// Metadata of an open file. Head: `u64` handle. Reply: a [`Stat`].
pub const CALL_FSTAT: u32 = 8;
/// Metadata of a path. Head: `u64` 1 to follow a final symlink (`metadata`),
/// 0 not to (`symlink_metadata`). Body: the path. Reply: a [`Stat`].
pub const CALL_STAT: u32 = 9;
/// A directory's entries, `.` and `..` left out. Body: the path. Reply: per
/// entry `u8` [`KIND_*`](KIND_FILE), `u16` name length (little-endian), the
/// name. Status: the number of entries.
pub const CALL_READ_DIR: u32 = 10;
/// Make a directory. Head: `u64` mode (its low 12 bits, before the host's
/// umask). Body: the path.
pub const CALL_MKDIR: u32 = 11;
/// Remove an empty directory. Body: the path.
pub const CALL_RMDIR: u32 = 12;
/// Remove a file or symlink. Body: the path.
pub const CALL_UNLINK: u32 = 13;
/// Rename. Head: `u64` length of the first path. Body: from, then to.
pub const CALL_RENAME: u32 = 14;
/// Copy a file's contents and permissions. Head: `u64` length of the first
/// path. Body: from, then to. Status: bytes copied.
pub const CALL_COPY: u32 = 15;
/// The program's current directory (the launcher's working directory until
/// [`CALL_CHDIR`]; under a root, its path inside the root). Reply: its path.
pub const CALL_GETCWD: u32 = 16;
/// Set a path's permission bits. Head: `u64` mode (its low 12 bits: file
/// type bits are ignored). Body: the path.
pub const CALL_SET_PERM: u32 = 17;
/// Read the program's stdin. Head: `u64` bytes wanted (the host reads at
/// most [`MAX_TRANSFER`]). Reply: the bytes.
/// Status: how many, 0 at the end of input, or `-EAGAIN` when no input has
/// arrived yet (the device waits a little and asks again: the host never
/// blocks its server on a terminal).
pub const CALL_STDIN_READ: u32 = 18;
/// A symlink's target. Body: the path. Reply: the target.
pub const CALL_READLINK: u32 = 19;
/// The absolute path with symlinks resolved. Body: the path. Reply: it.
pub const CALL_CANONICALIZE: u32 = 20;
/// Set the program's current directory (one for all its threads, as a
/// process has): relative paths of later calls start there. Body: the
/// path, which must be a directory.
pub const CALL_CHDIR: u32 = 21;
/// Make a symlink. Head: `u64` length of the target. Body: the target (text
/// stored in the link, not resolved now), then the link's path.
pub const CALL_SYMLINK: u32 = 22;
/// Make a hard link (a final symlink of the original is linked itself).
/// Head: `u64` length of the first path. Body: the original, then the new
/// path.
pub const CALL_LINK: u32 = 23;
/// Highest call number a host knows.
pub const CALL_MAX: u32 = CALL_LINK;

/// `CALL_OPEN` flags.
pub const OPEN_READ: u32 = 1;
pub const OPEN_WRITE: u32 = 2;
pub const OPEN_APPEND: u32 = 4;
pub const OPEN_TRUNCATE: u32 = 8;
pub const OPEN_CREATE: u32 = 16;
pub const OPEN_CREATE_NEW: u32 = 32;
pub const OPEN_ALL: u32 = 63;

/// `CALL_SEEK` whence.
pub const SEEK_SET: u64 = 0;
pub const SEEK_CUR: u64 = 1;
pub const SEEK_END: u64 = 2;

/// File kinds in [`Stat::kind`] and directory entries.
pub const KIND_FILE: u8 = 1;
pub const KIND_DIR: u8 = 2;
pub const KIND_SYMLINK: u8 = 3;
pub const KIND_OTHER: u8 = 4;

/// Most bytes one `CALL_READ` returns or one `CALL_WRITE` carries: larger
/// transfers are several calls (std's `read_exact`/`write_all` loop), so a
/// huge write is never buffered whole and other threads' calls get turns.
pub const MAX_TRANSFER: u64 = 1 << 20;
/// Longest request the host assembles (a write of `MAX_TRANSFER` plus its
/// head; two paths of `PATH_MAX` fit easily).
pub const MAX_REQUEST: u64 = MAX_TRANSFER + 64;
/// Longest path either way (Linux's `PATH_MAX`).
pub const MAX_PATH: usize = 4096;

/// The start of a call's reply, in the slot's payload.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyHead {
    /// The result, or `-errno`.
    pub status: i64,
    /// Bytes of the whole reply (what follows the head in this slot is the
    /// first `min(total, FIRST_REPLY_BYTES)` of them).
    pub total: u64,
}

pub const REPLY_HEAD_BYTES: usize = core::mem::size_of::<ReplyHead>();
/// Reply bytes in the call's own slot.
pub const FIRST_REPLY_BYTES: usize = crate::protocol::RING_PAYLOAD_BYTES - REPLY_HEAD_BYTES;

impl ReplyHead {
    pub fn to_bytes(self) -> [u8; REPLY_HEAD_BYTES] {
        let mut b = [0; REPLY_HEAD_BYTES];
        b[..8].copy_from_slice(&self.status.to_le_bytes());
        b[8..].copy_from_slice(&self.total.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; REPLY_HEAD_BYTES]) -> ReplyHead {
        let word = |i: usize| u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
        ReplyHead { status: word(0) as i64, total: word(8) }
    }
}

/// What `CALL_STAT` and `CALL_FSTAT` reply: the parts of a Unix `stat` std's
/// `Metadata` shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    /// `KIND_*`.
    pub kind: u8,
    /// Whether `created` is known (the host's file system records it).
    pub has_created: bool,
    /// The whole `st_mode`: file type bits (`S_IFMT`) and permission bits.
    pub mode: u32,
    /// Seconds and nanoseconds since the Unix epoch.
    pub modified: (i64, u32),
    pub accessed: (i64, u32),
    pub created: (i64, u32),
}

pub const STAT_BYTES: usize = 64;

impl Stat {
    /// Layout: size `u64` @0, kind `u8` @8, has_created `u8` @9, mode `u32`
    /// @12, then (seconds `i64`, nanoseconds `u32`, 4 bytes unused) for
    /// modified @16, accessed @32, created @48.
    pub fn to_bytes(&self) -> [u8; STAT_BYTES] {
        let mut b = [0; STAT_BYTES];
        b[0..8].copy_from_slice(&self.size.to_le_bytes());
        b[8] = self.kind;
        b[9] = u8::from(self.has_created);
        b[12..16].copy_from_slice(&self.mode.to_le_bytes());
        for (at, (secs, nanos)) in [(16, self.modified), (32, self.accessed), (48, self.created)] {
            b[at..at + 8].copy_from_slice(&secs.to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(&nanos.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8; STAT_BYTES]) -> Stat {
        let u64_at = |i: usize| u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let time = |at: usize| (u64_at(at) as i64, u32_at(at + 8));
        Stat {
            size: u64_at(0),
            kind: b[8],
            has_created: b[9] != 0,
            mode: u32_at(12),
            modified: time(16),
            accessed: time(32),
            created: time(48),
        }
    }
}

/// A request head: up to 8 little-endian `u64` words.
pub struct Head {
    bytes: [u8; 64],
    len: usize,
}

impl Head {
    pub fn new(words: &[u64]) -> Head {
        assert!(words.len() <= 8, "a request head has at most 8 words");
        let mut bytes = [0; 64];
        for (i, w) in words.iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        Head { bytes, len: words.len() * 8 }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The length of a call's head in `u64` words (`None`: no such call). The
/// host splits an assembled request at `8 ×` this into head and body.
pub const fn head_words_of(call: u32) -> Option<usize> {
    Some(match call {
        CALL_OPEN => 1, // two u32s: flags (low), mode (high)
        CALL_CLOSE | CALL_WRITE | CALL_FSTAT | CALL_STAT | CALL_MKDIR | CALL_RENAME | CALL_COPY | CALL_SET_PERM
        | CALL_STDIN_READ | CALL_SYMLINK | CALL_LINK => 1,
        CALL_READ | CALL_SYNC | CALL_SET_LEN => 2,
        CALL_SEEK => 3,
        CALL_READ_DIR | CALL_RMDIR | CALL_UNLINK | CALL_GETCWD | CALL_READLINK | CALL_CANONICALIZE | CALL_CHDIR => 0,
        _ => return None,
    })
}

/// Linux's error numbers, as the host reports them and std on the GPU
/// decodes them (the launcher runs on Linux), and the C library's text for
/// each (glibc's `strerror`), which the device cannot ask the host for.
pub mod errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EINTR: i32 = 4;
    pub const EIO: i32 = 5;
    pub const E2BIG: i32 = 7;
    pub const EBADF: i32 = 9;
    pub const EAGAIN: i32 = 11;
    pub const ENOMEM: i32 = 12;
    pub const ENFILE: i32 = 23;
    pub const EMFILE: i32 = 24;
    pub const EACCES: i32 = 13;
    pub const EBUSY: i32 = 16;
    pub const EEXIST: i32 = 17;
    pub const EXDEV: i32 = 18;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const ETXTBSY: i32 = 26;
    pub const EFBIG: i32 = 27;
    pub const ENOSPC: i32 = 28;
    pub const ESPIPE: i32 = 29;
    pub const EROFS: i32 = 30;
    pub const EMLINK: i32 = 31;
    pub const EPIPE: i32 = 32;
    pub const EDEADLK: i32 = 35;
    pub const ENAMETOOLONG: i32 = 36;
    pub const ENOSYS: i32 = 38;
    pub const ENOTEMPTY: i32 = 39;
    pub const ELOOP: i32 = 40;
    pub const EOPNOTSUPP: i32 = 95;
    pub const EADDRINUSE: i32 = 98;
    pub const EADDRNOTAVAIL: i32 = 99;
    pub const ENETDOWN: i32 = 100;
    pub const ENETUNREACH: i32 = 101;
    pub const ECONNABORTED: i32 = 103;
    pub const ECONNRESET: i32 = 104;
    pub const ENOTCONN: i32 = 107;
    pub const ETIMEDOUT: i32 = 110;
    pub const ECONNREFUSED: i32 = 111;
    pub const EHOSTUNREACH: i32 = 113;
    pub const EINPROGRESS: i32 = 115;
    pub const ESTALE: i32 = 116;
    pub const EDQUOT: i32 = 122;

    /// glibc's `strerror` text for each code from 0 ("Success") to 133
    /// (`EHWPOISON`, the last Linux defines); "" where Linux has no code
    /// (41, 58). A host test compares it with the host's C library.
    pub const STRERROR: [&str; 134] = [
        "Success",
        "Operation not permitted",
        "No such file or directory",
        "No such process",
        "Interrupted system call",
        "Input/output error",
        "No such device or address",
        "Argument list too long",
        "Exec format error",
        "Bad file descriptor",
        "No child processes",
        "Resource temporarily unavailable",
        "Cannot allocate memory",
        "Permission denied",
        "Bad address",
        "Block device required",
        "Device or resource busy",
        "File exists",
        "Invalid cross-device link",
        "No such device",
        "Not a directory",
        "Is a directory",
        "Invalid argument",
        "Too many open files in system",
        "Too many open files",
        "Inappropriate ioctl for device",
        "Text file busy",
        "File too large",
        "No space left on device",
        "Illegal seek",
        "Read-only file system",
        "Too many links",
        "Broken pipe",
        "Numerical argument out of domain",
        "Numerical result out of range",
        "Resource deadlock avoided",
        "File name too long",
        "No locks available",
        "Function not implemented",
        "Directory not empty",
        "Too many levels of symbolic links",
        "",
        "No message of desired type",
        "Identifier removed",
        "Channel number out of range",
        "Level 2 not synchronized",
        "Level 3 halted",
        "Level 3 reset",
        "Link number out of range",
        "Protocol driver not attached",
        "No CSI structure available",
        "Level 2 halted",
        "Invalid exchange",
        "Invalid request descriptor",
        "Exchange full",
        "No anode",
        "Invalid request code",
        "Invalid slot",
        "",
        "Bad font file format",
        "Device not a stream",
        "No data available",
        "Timer expired",
        "Out of streams resources",
        "Machine is not on the network",
        "Package not installed",
        "Object is remote",
        "Link has been severed",
        "Advertise error",
        "Srmount error",
        "Communication error on send",
        "Protocol error",
        "Multihop attempted",
        "RFS specific error",
        "Bad message",
        "Value too large for defined data type",
        "Name not unique on network",
        "File descriptor in bad state",
        "Remote address changed",
        "Can not access a needed shared library",
        "Accessing a corrupted shared library",
        ".lib section in a.out corrupted",
        "Attempting to link in too many shared libraries",
        "Cannot exec a shared library directly",
        "Invalid or incomplete multibyte or wide character",
        "Interrupted system call should be restarted",
        "Streams pipe error",
        "Too many users",
        "Socket operation on non-socket",
        "Destination address required",
        "Message too long",
        "Protocol wrong type for socket",
        "Protocol not available",
        "Protocol not supported",
        "Socket type not supported",
        "Operation not supported",
        "Protocol family not supported",
        "Address family not supported by protocol",
        "Address already in use",
        "Cannot assign requested address",
        "Network is down",
        "Network is unreachable",
        "Network dropped connection on reset",
        "Software caused connection abort",
        "Connection reset by peer",
        "No buffer space available",
        "Transport endpoint is already connected",
        "Transport endpoint is not connected",
        "Cannot send after transport endpoint shutdown",
        "Too many references: cannot splice",
        "Connection timed out",
        "Connection refused",
        "Host is down",
        "No route to host",
        "Operation already in progress",
        "Operation now in progress",
        "Stale file handle",
        "Structure needs cleaning",
        "Not a XENIX named type file",
        "No XENIX semaphores available",
        "Is a named type file",
        "Remote I/O error",
        "Disk quota exceeded",
        "No medium found",
        "Wrong medium type",
        "Operation canceled",
        "Required key not available",
        "Key has expired",
        "Key has been revoked",
        "Key was rejected by service",
        "Owner died",
        "State not recoverable",
        "Operation not possible due to RF-kill",
        "Memory page has hardware error",
    ];

    /// The C library's text for `code`, as `strerror` gives it; `None` where
    /// glibc says "Unknown error {code}".
    pub fn strerror(code: i32) -> Option<&'static str> {
        let text = *STRERROR.get(usize::try_from(code).ok()?)?;
        (!text.is_empty()).then_some(text)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::{String, ToString};

    /// The host's std on Linux formats an OS error as "TEXT (os error N)",
    /// TEXT from the C library's `strerror_r`.
    fn host_text(code: i32) -> String {
        let full = std::io::Error::from_raw_os_error(code).to_string();
        let suffix = std::format!(" (os error {code})");
        full.strip_suffix(&suffix).expect("std's Linux format").to_string()
    }

    #[test]
    fn strerror_is_the_host_c_librarys() {
        for code in -1..=140 {
            let ours = super::errno::strerror(code).map_or_else(|| std::format!("Unknown error {code}"), String::from);
            assert_eq!(ours, host_text(code), "errno {code}");
        }
        assert_eq!(super::errno::strerror(0), Some("Success"));
    }
}
