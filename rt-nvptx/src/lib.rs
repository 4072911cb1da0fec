//! The NVIDIA (nvptx64) side of the GPU threads runtime: [`hal::NvHal`]
//! (`nanosleep`, `%globaltimer`, 32-lane warps, `.gpu`/`.sys` fences), the
//! kernel entry `__gpu_start` and the stack-overflow handler (`start.rs`),
//! the shared-stack slot and stack switch (`stack.rs`) and the `__gpu_std_*`
//! functions. Empty on other architectures, so the host workspace still
//! builds it.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

/// What std's sys layer shares with the runtime beyond the `__gpu_std_*`
/// functions (the `ERR_*` codes): std names them here, so there is one
/// definition, `rt_abi::abi`.
pub use rt_abi::abi as std_abi;
/// The host-call contract std's file system and stdin encode (`hostcall.rs`).
pub use rt_abi::hostcall as std_hostcall;

#[cfg(target_arch = "nvptx64")]
pub mod hal;
#[cfg(target_arch = "nvptx64")]
pub mod stack;
#[cfg(target_arch = "nvptx64")]
mod start;

/// The program's runtime state (one per program: one persistent launch).
#[cfg(target_arch = "nvptx64")]
pub static RUNTIME: rt_common::Runtime = rt_common::Runtime::new();

/// NVIDIA has one warp size: every ABI function runs with [`hal::NvHal`].
#[cfg(target_arch = "nvptx64")]
macro_rules! with_nv_hal {
    ($H:ident => $e:expr) => {{
        type $H = $crate::hal::NvHal;
        $e
    }};
}

#[cfg(target_arch = "nvptx64")]
rt_common::define_gpu_std_abi!(&crate::RUNTIME, with_nv_hal);
