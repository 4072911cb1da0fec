//! Standard streams on GPUs: output goes to the host through the runtime;
//! there is no input.

use crate::io;
use crate::sys::pal::abi;

/// There is no input on a GPU: reads see the end of the stream.
pub struct Stdin;
pub struct Stdout;
pub struct Stderr;

impl Stdin {
    pub const fn new() -> Stdin {
        Stdin
    }
}

impl io::Read for Stdin {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Ok(0)
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
        Ok(())
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
        Ok(())
    }
}

pub const STDIN_BUF_SIZE: usize = 0;

pub fn is_ebadf(_err: &io::Error) -> bool {
    false
}

pub fn panic_output() -> Option<impl io::Write> {
    Some(Stderr::new())
}
