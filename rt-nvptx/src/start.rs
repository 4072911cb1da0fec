//! The kernel entry: every lane of every warp starts here.

use rt_common::protocol::LaunchBlock;
use rt_common::{Hal, start::warp_main};

use crate::RUNTIME;
use crate::hal::NvHal;

unsafe extern "C" {
    /// The C `main` rustc generates for a `bin` crate (std's args come from
    /// the runtime, so it gets 0 and null).
    fn main(argc: i32, argv: *const *const u8) -> i32;
}

/// The kernel the launcher starts (`protocol::KERNEL_ENTRY`). Lane 0 of each
/// warp runs the runtime ([`warp_main`]); the other lanes wait at a warp
/// barrier, issuing nothing, until lane 0 returns or exits.
///
/// # Safety
/// Launched by the launcher with a valid launch block, 1-D grid, blocks of
/// whole warps.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn __gpu_start(launch: *const LaunchBlock) {
    let lanes = NvHal::lane_mask();
    if NvHal::lane_id() == 0 {
        // SAFETY: once per warp on its leader lane, with the kernel's launch
        // block and the program's runtime; `main` is the program's C main.
        unsafe { warp_main::<NvHal>(&RUNTIME, launch, || main(0, core::ptr::null())) };
    }
    NvHal::sync_lane(lanes);
}
