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

/// The status a process exiting with `code` leaves, as Linux's `exit(2)`
/// does: the low 8 bits (`exit(-1)` is 255, `exit(263)` is 7).
pub fn status_of(code: i32) -> u8 {
    (code & 0xff) as u8
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_is_the_low_byte_as_on_linux() {
        for (code, status) in [(0, 0), (7, 7), (255, 255), (256, 0), (263, 7), (-1, 255), (-2, 254), (-256, 0), (i32::MIN, 0), (i32::MAX, 255)] {
            assert_eq!(super::status_of(code), status, "exit({code})");
        }
    }
}

// The ring server (rt-common) ends the process with this code when the host
// cannot keep the protocol's promise (random bytes).
const _: () = assert!(rt_host::host_ring::server::HOST_FAILURE_EXIT == DEVICE_FAULT);
