//! Standard streams on GPUs: output goes to the host through the runtime;
//! input is the launcher's stdin, read through host calls.

use crate::io;
use crate::sys::pal::abi;

/// The launcher's stdin. A read waits (sleeping, reported as waiting for
/// the host) until the host has input or the input has ended.
pub struct Stdin;
pub struct Stdout;
pub struct Stderr;

impl Stdin {
    pub const fn new() -> Stdin {
        Stdin
    }
}

impl io::Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use crate::sys::pal::hostcall as hc;
        let want = buf.len().min(hc::MAX_TRANSFER as usize);
        let head = hc::Head::new(&[want as u64]);
        let (n, _) = hc::call(hc::CALL_STDIN_READ, head.as_bytes(), &[], &mut buf[..want])?;
        Ok((n as usize).min(want))
    }
}

/// Hands bytes to the runtime, which queues them on the host ring (blocking
/// while the ring is full: output is never dropped).
fn write(fd: u32, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is readable for its length during the call.
    let n = unsafe { abi::__gpu_std_write(fd, buf.as_ptr(), buf.len()) };
    if n >= 0 {
        Ok(n as usize)
    } else {
        Err(io::const_error!(io::ErrorKind::Uncategorized, "the GPU runtime refused output"))
    }
}

/// Returns once the host has taken every byte this thread wrote to stdout
/// or stderr (one ring, in order): what the program does next reaches the
/// host after that output.
fn flush() -> io::Result<()> {
    abi::__gpu_std_flush();
    Ok(())
}

impl Stdout {
    pub const fn new() -> Stdout {
        Stdout
    }
}

impl io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(1, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        flush()
    }
}

impl Stderr {
    pub const fn new() -> Stderr {
        Stderr
    }
}

impl io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(2, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        flush()
    }
}

/// As on Unix: each refill of `stdin()`'s buffer is one host call.
pub const STDIN_BUF_SIZE: usize = 8 * 1024;

pub fn is_ebadf(err: &io::Error) -> bool {
    err.raw_os_error() == Some(crate::sys::pal::hostcall::errno::EBADF)
}

pub fn panic_output() -> Option<impl io::Write> {
    Some(Stderr::new())
}
