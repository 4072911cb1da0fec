//! gpurun's exit codes. A program that ran gets its own code back (its
//! `main`'s `process::exit` code, 0 after `main` returns, 101 after a panic,
//! 134 after `process::abort`); the codes below mean the launcher itself
//! stopped the run. They are documented in the README's table.

/// Bad command line, or a request the device cannot meet (`--threads` above
/// the resident-warp capacity, `--device` out of range). clap uses 2 too.
pub const USAGE: i32 = 2;
/// No GPU driver library, or no device of the needed vendor.
pub const NO_DEVICE: i32 = 3;
/// The code object is unreadable, for the other vendor, for another GPU
/// architecture, needs a newer driver, or lacks the kernel entry; or the
/// crate directory failed to build.
pub const CODE_OBJECT: i32 = 4;
/// The device faulted (illegal address, trap, ...) or a driver call failed.
pub const DEVICE_FAULT: i32 = 5;
/// The device broke the host-call protocol (a corrupted ring).
pub const PROTOCOL: i32 = 6;
/// `--timeout` reached, as `timeout(1)`.
pub const TIMEOUT: i32 = 124;

// The ring server (rt-common) ends the process with this code when the host
// cannot keep the protocol's promise (random bytes).
const _: () = assert!(rt_host::host_ring::server::HOST_FAILURE_EXIT == DEVICE_FAULT);
