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
/// The launcher's working directory. Reply: its path.
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
/// Highest call number a host knows.
pub const CALL_MAX: u32 = CALL_CANONICALIZE;

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
    /// Permission bits (`st_mode & 0o7777`).
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
        | CALL_STDIN_READ => 1,
        CALL_READ | CALL_SYNC | CALL_SET_LEN => 2,
        CALL_SEEK => 3,
        CALL_READ_DIR | CALL_RMDIR | CALL_UNLINK | CALL_GETCWD | CALL_READLINK | CALL_CANONICALIZE => 0,
        _ => return None,
    })
}

/// Linux's error numbers, as the host reports them and std on the GPU
/// decodes them (the launcher runs on Linux).
pub mod errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EINTR: i32 = 4;
    pub const EIO: i32 = 5;
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
    pub const ENAMETOOLONG: i32 = 36;
    pub const ENOSYS: i32 = 38;
    pub const ENOTEMPTY: i32 = 39;
    pub const ELOOP: i32 = 40;
    pub const EDQUOT: i32 = 122;
    pub const ESTALE: i32 = 116;
    pub const ETIMEDOUT: i32 = 110;
    pub const EOPNOTSUPP: i32 = 95;
}
