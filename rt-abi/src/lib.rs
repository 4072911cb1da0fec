//! The contract between the GPU program, the host and the linker, in one place.
//!
//! | module | what |
//! |---|---|
//! | [`protocol`] | the launch block, the thread table's public half, the host-call ring and its packets, the stack layout |
//! | [`hostcall`] | host calls of any size (files, directories, stdin): call numbers, request heads, reply formats, errno |
//! | [`abi`] | the `__gpu_std_*` functions std calls, their error codes and reserved thread-local keys |
//! | [`symbols`] | every symbol name the runtime, `gpu-ld` and `gpurun` meet each other by |
//!
//! The device runtime (`rt-common` and the vendor crates, inside the GPU
//! program's std), the host side (`rt-host`, the launcher) and the linker
//! (`gpu-ld`) all build from this crate, so a layout or name change is one
//! edit that the others follow or fail to build. A value one side chooses
//! travels in the [`protocol::LaunchBlock`] and the device checks it at
//! start. Only `core`; types and constants, no behaviour.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod hostcall;
pub mod protocol;
pub mod symbols;
