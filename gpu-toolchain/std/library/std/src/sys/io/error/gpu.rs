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

pub fn decode_error_kind(code: i32) -> io::ErrorKind {
    use io::ErrorKind::*;
    match code {
        EPERM | EACCES => PermissionDenied,
        ENOENT => NotFound,
        EINTR => Interrupted,
        EAGAIN => WouldBlock,
        ENOMEM => OutOfMemory,
        EBUSY => ResourceBusy,
        EEXIST => AlreadyExists,
        EXDEV => CrossesDevices,
        ENOTDIR => NotADirectory,
        EISDIR => IsADirectory,
        EINVAL => InvalidInput,
        ETXTBSY => ExecutableFileBusy,
        EFBIG => FileTooLarge,
        ENOSPC => StorageFull,
        ESPIPE => NotSeekable,
        EROFS => ReadOnlyFilesystem,
        EMLINK => TooManyLinks,
        EPIPE => BrokenPipe,
        ENAMETOOLONG => InvalidFilename,
        ENOSYS | EOPNOTSUPP => Unsupported,
        ENOTEMPTY => DirectoryNotEmpty,
        ELOOP => FilesystemLoop,
        EDQUOT => QuotaExceeded,
        ESTALE => StaleNetworkFileHandle,
        ETIMEDOUT => TimedOut,
        _ => Uncategorized,
    }
}

/// The host C library's text for the codes file calls return (the device
/// cannot ask the host's `strerror`).
pub fn error_string(code: i32) -> String {
    let text = match code {
        EPERM => "Operation not permitted",
        ENOENT => "No such file or directory",
        EINTR => "Interrupted system call",
        EIO => "Input/output error",
        EBADF => "Bad file descriptor",
        EAGAIN => "Resource temporarily unavailable",
        ENOMEM => "Cannot allocate memory",
        ENFILE => "Too many open files in system",
        EMFILE => "Too many open files",
        EACCES => "Permission denied",
        EBUSY => "Device or resource busy",
        EEXIST => "File exists",
        EXDEV => "Invalid cross-device link",
        ENOTDIR => "Not a directory",
        EISDIR => "Is a directory",
        EINVAL => "Invalid argument",
        ETXTBSY => "Text file busy",
        EFBIG => "File too large",
        ENOSPC => "No space left on device",
        ESPIPE => "Illegal seek",
        EROFS => "Read-only file system",
        EMLINK => "Too many links",
        EPIPE => "Broken pipe",
        ENAMETOOLONG => "File name too long",
        ENOSYS => "Function not implemented",
        ENOTEMPTY => "Directory not empty",
        ELOOP => "Too many levels of symbolic links",
        EOPNOTSUPP => "Operation not supported",
        ETIMEDOUT => "Connection timed out",
        ESTALE => "Stale file handle",
        EDQUOT => "Disk quota exceeded",
        _ => return format!("Unknown error {code}"),
    };
    text.to_string()
}
