//! std threads on GPUs: each thread is one warp of the persistent launch,
//! spawned, joined and detached through the runtime.

use crate::ffi::CStr;
use crate::io;
use crate::mem::ManuallyDrop;
use crate::num::NonZero;
use crate::sys::pal::abi;
use crate::time::Duration;

/// A spawned thread: the runtime's handle of the warp that runs it.
pub struct Thread {
    handle: i64,
}

/// 0 asks for the stack every warp of the launch already has: GPU stacks are
/// sized once per launch, not per thread.
pub const DEFAULT_MIN_STACK_SIZE: usize = 0;

impl Thread {
    /// Runs `entry(data)` on a new thread, and `on_detach(data)` after it
    /// if the handle is dropped without a join. `thread::lifecycle` passes
    /// its own entry, which sets `current`, runs the thread's closure and
    /// then [`run_tls_dtors`], with the handle, the result packet and the
    /// closure in one allocation that `on_detach` frees (std's other
    /// targets take a `Box<ThreadInit>` holding a box, and count references
    /// to the packet).
    ///
    /// # Safety
    /// As `thread::Builder::spawn_unchecked`'s; `entry` must be sound to
    /// call once with `data` on the new thread, and `on_detach` once after
    /// it returned, on any thread. On an error neither is ever called and
    /// `data` stays the caller's.
    pub unsafe fn new_raw(
        stack: usize,
        entry: unsafe extern "C" fn(*mut u8),
        data: *mut u8,
        on_detach: Option<unsafe extern "C" fn(*mut u8)>,
    ) -> io::Result<Thread> {
        // SAFETY: the caller's contract.
        let handle = unsafe { abi::__gpu_std_spawn(stack, entry, data, on_detach) };
        if handle >= 0 {
            return Ok(Thread { handle });
        }
        Err(match handle {
            abi::ERR_NO_FREE_WARP => io::const_error!(
                io::ErrorKind::WouldBlock,
                "no free GPU warp: every warp of the launch runs a thread",
            ),
            abi::ERR_STACK_TOO_BIG => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "stack size of {stack} bytes exceeds the stack of this GPU launch \
                     (set by the launcher: gpurun --stack-size), and stacks cannot come \
                     from the heap: the code keeps its frames in private memory"
                ),
            ),
            abi::ERR_NO_STACK_MEMORY => io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate a {stack}-byte thread stack from the GPU heap (gpurun --heap-size)"),
            ),
            _ => io::const_error!(io::ErrorKind::Uncategorized, "the GPU runtime failed to spawn"),
        })
    }

    /// Whether the thread's entry has returned.
    pub fn is_finished(&self) -> bool {
        abi::__gpu_std_is_finished(self.handle)
    }

    pub fn join(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: the handle came from a successful spawn and is joined once.
        unsafe { abi::__gpu_std_join(this.handle) }
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful spawn and was not joined.
        unsafe { abi::__gpu_std_detach(self.handle) }
    }
}

/// A spawned thread's thread-local destructors, after its closure returned.
/// std's own `current` handle is cleared after them (it is borrowed, see
/// `thread::lifecycle::gpu_thread_start`), so destructors may still use it.
/// Other key-based targets get that order from a guard key whose destructor
/// defers itself one round (`thread_local::guard::key`); here std's
/// `guard::enable` does nothing, and this saves the two rounds.
pub fn run_tls_dtors() {
    abi::__gpu_std_tls_run_dtors();
}

pub fn available_parallelism() -> io::Result<NonZero<usize>> {
    NonZero::new(abi::__gpu_std_available_parallelism()).ok_or(io::Error::UNKNOWN_THREAD_COUNT)
}

/// The warp index: 0 for `main`.
pub fn current_os_id() -> Option<u64> {
    Some(abi::__gpu_std_thread_index().into())
}

pub fn yield_now() {
    abi::__gpu_std_yield()
}

pub fn set_name(name: &CStr) {
    let name = name.to_bytes();
    // SAFETY: `name` is readable for its length during the call.
    unsafe { abi::__gpu_std_set_thread_name(name.as_ptr(), name.len()) }
}

pub fn sleep(dur: Duration) {
    abi::__gpu_std_sleep_ns(dur.as_nanos().try_into().unwrap_or(u64::MAX))
}
