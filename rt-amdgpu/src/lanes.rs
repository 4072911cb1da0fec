//! All lanes of a wave for `gpu_lanes::for_each_lane`: the runtime's half
//! of the whole-wave call (`rt_common::lanes` has the protocol, the
//! toolchain's half is `gpu-ld/src/amd_lanes.rs`).
//!
//! While a wave's leader lane runs a thread, the branch in `start.rs` has
//! masked the other lanes off in `EXEC`; they share the leader's program
//! counter, so they cannot wait at a barrier for work as NVIDIA's lanes do.
//! Instead the leader, in `rt_common::lanes::run_lockstep`, calls
//! `__gpu_amd_wave_call(entry, slot)`, which saves `EXEC`, turns every lane
//! on, calls `entry(slot, lane)` on all of them at once (each lane with its
//! lane id and its own work-item id), and restores `EXEC`. That cannot be
//! written in Rust (rustc has no inline assembly for amdgpu, and LLVM would
//! move the argument set-up of a compiler-made call to before the `EXEC`
//! change), so `gpu-ld` links it in as a hand-written function in module
//! assembly, with strong definitions of the two functions below.
//!
//! These weak definitions are the fallback where nothing replaces them
//! (rustc's built-in `amdgcn-amd-amdhsa` target links with rust-lld, not
//! `gpu-ld`): one lane, the leader, as before.

use rt_abi::abi::LaneFn;

/// Lanes `__gpu_amd_wave_call` runs its function on: 1 here; `gpu-ld`'s
/// definition returns the wave size.
#[unsafe(no_mangle)]
#[linkage = "weak"]
pub extern "C" fn __gpu_amd_wave_lanes() -> u32 {
    1
}

/// Runs `f(data, lane)` on lanes `0..__gpu_amd_wave_lanes()`: here lane 0
/// alone; `gpu-ld`'s definition runs every lane of the wave at once.
///
/// # Safety
/// `f(data, lane)` is sound on every lane (see `Hal::run_lanes`).
#[unsafe(no_mangle)]
#[linkage = "weak"]
pub unsafe extern "C" fn __gpu_amd_wave_call(f: LaneFn, data: *const u8) {
    // SAFETY: the caller's contract.
    unsafe { f(data, 0) }
}

rt_abi::assert_symbol!(__gpu_amd_wave_lanes, rt_abi::symbols::AMD_WAVE_LANES);
rt_abi::assert_symbol!(__gpu_amd_wave_call, rt_abi::symbols::AMD_WAVE_CALL);
