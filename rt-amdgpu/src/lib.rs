//! The AMD (amdgcn) side of the GPU threads runtime: [`hal::Wave64`] and
//! [`hal::Wave32`] (`s_sleep`, `s_memrealtime`, wave64 on gfx9xx, wave32 on
//! gfx10+), the kernel entry `__gpu_start` and the stack-overflow handler
//! (`start.rs`), the shared-stack slot and stack switch (`stack.rs`), the
//! whole-wave lane call's fallback (`lanes.rs`) and the `__gpu_std_*`
//! functions. Empty on other architectures, so the host workspace still
//! builds it.
//!
//! The wave size is not a Rust `cfg` (rustc exposes no amdgpu target
//! features), so each entry point picks its HAL with
//! `llvm.amdgcn.wavefrontsize`, which LLVM folds to a constant for the
//! target CPU: each HAL's `LANES` is a compile-time constant in its path.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(target_arch = "amdgpu", feature(abi_gpu_kernel, link_llvm_intrinsics, stdarch_amdgpu, linkage))]
#![cfg_attr(target_arch = "amdgpu", allow(internal_features))]

/// What std's sys layer shares with the runtime beyond the `__gpu_std_*`
/// functions (the `ERR_*` codes): std names them here, so there is one
/// definition, `rt_abi::abi`.
pub use rt_abi::abi as std_abi;
/// The host-call contract std's file system and stdin encode (`hostcall.rs`).
pub use rt_abi::hostcall as std_hostcall;

/// Evaluates `$e` with `$H` = the HAL of this target's wave size.
#[cfg(target_arch = "amdgpu")]
macro_rules! with_amd_hal {
    ($H:ident => $e:expr) => {
        if core::arch::amdgpu::wavefrontsize() == 64 {
            type $H = $crate::hal::Wave64;
            $e
        } else {
            type $H = $crate::hal::Wave32;
            $e
        }
    };
}

#[cfg(target_arch = "amdgpu")]
pub mod hal;
#[cfg(target_arch = "amdgpu")]
pub mod lanes;
#[cfg(target_arch = "amdgpu")]
pub mod stack;
#[cfg(target_arch = "amdgpu")]
mod start;

/// The program's runtime state (one per program: one persistent launch).
#[cfg(target_arch = "amdgpu")]
pub static RUNTIME: rt_common::Runtime = rt_common::Runtime::new();

#[cfg(target_arch = "amdgpu")]
rt_common::define_gpu_std_abi!(&crate::RUNTIME, with_amd_hal);
