//! The kernel entry: every lane of every wavefront starts here.

use rt_common::protocol::LaunchBlock;
use rt_common::{Hal, start::warp_main};

use crate::RUNTIME;
use crate::hal::{Wave32, Wave64};

unsafe extern "C" {
    /// The C `main` rustc generates for a `bin` crate (std's args come from
    /// the runtime, so it gets 0 and null).
    fn main(argc: i32, argv: *const *const u8) -> i32;
}

/// The kernel the launcher starts (`protocol::KERNEL_ENTRY`). Lane 0 of each
/// wave runs the runtime ([`warp_main`]); the branch masks the other lanes
/// off (`EXEC`), so they issue nothing until the wave ends.
///
/// Lane-parallel work (`gpu_lanes::for_each_lane`) therefore runs on lane 0
/// only here (`Hal::PARALLEL_LANES` = 1): a wave's lanes share one program
/// counter, so lanes masked off by the leader's branch cannot run while it
/// does. Running the closure on the whole wave (re-enabling `EXEC` around the
/// call, or whole-wave mode) is future work.
///
/// # Safety
/// Launched by the launcher with a valid launch block, 1-D grid, workgroups
/// of `block_warps` whole waves.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn __gpu_start(launch: *const LaunchBlock) {
    // Folded to a constant for the target CPU: one arm remains.
    if core::arch::amdgpu::wavefrontsize() == 64 {
        // SAFETY: the kernel's contract.
        unsafe { start::<Wave64>(launch) }
    } else {
        // SAFETY: the kernel's contract.
        unsafe { start::<Wave32>(launch) }
    }
}

/// # Safety
/// As for [`__gpu_start`].
#[inline(always)]
unsafe fn start<H: Hal>(launch: *const LaunchBlock) {
    if H::lane_id() == 0 {
        // SAFETY: once per wave on its leader lane, with the kernel's launch
        // block and the program's runtime; `main` is the program's C main.
        unsafe { warp_main::<H>(&RUNTIME, launch, || main(0, core::ptr::null())) };
    }
    H::sync_lane(u64::MAX);
}
