//! OS errors on GPUs are the host's: host calls (`sys::pal::gpu::hostcall`)
//! return Linux `errno` values, decoded here as std decodes them on Linux.
//! The device itself sets no `errno`.

use crate::io;
use crate::sys::pal::hostcall::errno::*;

pub fn errno() -> i32 {
    0
}

pub fn is_interrupted(code: i32) -> bool {
    code == EINTR
}

/// As std's `sys::io::error::unix` decodes Linux's codes.
pub fn decode_error_kind(code: i32) -> io::ErrorKind {
    use io::ErrorKind::*;
    match code {
        E2BIG => ArgumentListTooLong,
        EADDRINUSE => AddrInUse,
        EADDRNOTAVAIL => AddrNotAvailable,
        EBUSY => ResourceBusy,
        ECONNABORTED => ConnectionAborted,
        ECONNREFUSED => ConnectionRefused,
        ECONNRESET => ConnectionReset,
        EDEADLK => Deadlock,
        EDQUOT => QuotaExceeded,
        EEXIST => AlreadyExists,
        EFBIG => FileTooLarge,
        EHOSTUNREACH => HostUnreachable,
        EINTR => Interrupted,
        EINVAL => InvalidInput,
        EISDIR => IsADirectory,
        ELOOP => FilesystemLoop,
        ENOENT => NotFound,
        ENOMEM => OutOfMemory,
        ENOSPC => StorageFull,
        ENOSYS => Unsupported,
        EMLINK => TooManyLinks,
        ENAMETOOLONG => InvalidFilename,
        ENETDOWN => NetworkDown,
        ENETUNREACH => NetworkUnreachable,
        ENOTCONN => NotConnected,
        ENOTDIR => NotADirectory,
        ENOTEMPTY => DirectoryNotEmpty,
        EPIPE => BrokenPipe,
        EROFS => ReadOnlyFilesystem,
        ESPIPE => NotSeekable,
        ESTALE => StaleNetworkFileHandle,
        ETIMEDOUT => TimedOut,
        ETXTBSY => ExecutableFileBusy,
        EXDEV => CrossesDevices,
        EINPROGRESS => InProgress,
        EOPNOTSUPP => Unsupported,
        EACCES | EPERM => PermissionDenied,
        EAGAIN => WouldBlock,
        _ => Uncategorized,
    }
}

/// The host C library's text (`rt_abi`'s copy of glibc's table: the device
/// cannot ask the host's `strerror`).
pub fn error_string(code: i32) -> String {
    match strerror(code) {
        Some(text) => text.to_string(),
        None => format!("Unknown error {code}"),
    }
}
