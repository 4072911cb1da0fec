//! The `__gpu_std_*` functions for the CPU harness (the same macro the GPU
//! crates invoke), and a few std-like wrappers over them for tests: what the
//! patched std does on a GPU, in miniature.

use std::boxed::Box;
use std::string::String;

use super::CpuHal;

/// Picks the HAL by the calling warp's lane count, as AMD picks by
/// `wavefrontsize`.
macro_rules! with_cpu_hal {
    ($H:ident => $e:expr) => {
        if $crate::cpu::ctx().lanes == 64 {
            type $H = CpuHal<64>;
            $e
        } else {
            type $H = CpuHal<32>;
            $e
        }
    };
}

rt_common::define_gpu_std_abi!(super::machine::runtime(), with_cpu_hal);

/// A spawned thread, as std's `JoinHandle` holds it.
#[derive(Debug)]
pub struct Handle(pub i64);

impl Handle {
    pub fn join(self) {
        // SAFETY: a live handle from `spawn`, joined once.
        unsafe { __gpu_std_join(self.0) }
    }
    pub fn detach(self) {
        // SAFETY: a live handle from `spawn`, detached once.
        unsafe { __gpu_std_detach(self.0) }
    }
}

type Closure = Box<dyn FnOnce() + Send>;

unsafe extern "C" fn trampoline(data: *mut u8) {
    // SAFETY: `data` is the Box<Closure> leaked by `spawn`, run once.
    let f: Box<Closure> = unsafe { Box::from_raw(data as *mut Closure) };
    // A panicking test closure ends the program like a GPU panic does.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        // SAFETY: on a warp thread of a running machine.
        unsafe { __gpu_std_panic_abort() }
    }
}

/// Spawns `f` on an idle warp; `Err` carries the runtime's error code.
pub fn spawn(f: impl FnOnce() + Send + 'static) -> Result<Handle, i64> {
    spawn_with_stack(0, f)
}

/// [`spawn`] with a requested stack size.
pub fn spawn_with_stack(stack: usize, f: impl FnOnce() + Send + 'static) -> Result<Handle, i64> {
    let data = Box::into_raw(Box::new(Box::new(f) as Closure)) as *mut u8;
    // SAFETY: `trampoline(data)` is sound once; on error we take data back.
    let h = unsafe { __gpu_std_spawn(stack, trampoline, data, None) };
    if h < 0 {
        // SAFETY: not handed out: still ours.
        drop(unsafe { Box::from_raw(data as *mut Closure) });
        return Err(h);
    }
    Ok(Handle(h))
}

/// `write(fd, bytes)`.
pub fn write(fd: u32, bytes: &[u8]) -> isize {
    // SAFETY: a valid slice.
    unsafe { __gpu_std_write(fd, bytes.as_ptr(), bytes.len()) }
}

/// One host call ([`rt_abi::hostcall`]), as std's file system makes it:
/// `(status, the reply's whole length)`; up to `reply.len()` bytes of the
/// reply land in `reply`.
pub fn host_call(call: u32, head: &[u8], body: &[u8], reply: &mut [u8]) -> (i64, usize) {
    let mut len = 0usize;
    // SAFETY: slices valid for their lengths; `len` is writable.
    let status = unsafe {
        __gpu_std_host_call(call, head.as_ptr(), head.len(), body.as_ptr(), body.len(), reply.as_mut_ptr(), reply.len(), &mut len)
    };
    (status, len)
}

/// Prints a line to stdout as one write.
pub fn println(s: &str) {
    let mut line = String::with_capacity(s.len() + 1);
    line.push_str(s);
    line.push('\n');
    write(1, line.as_bytes());
}

/// The calling warp's index.
pub fn me() -> u32 {
    __gpu_std_thread_index()
}
