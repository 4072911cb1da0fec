//! `gpurun`: runs Rust `std` programs built for AMD (HIP) or NVIDIA (CUDA)
//! GPUs. The vendor follows from the code object ([`codeobj`]); each vendor
//! is a [`backend::Backend`] ([`cuda`], [`hip`]); [`run`] drives one launch
//! and [`ring`] serves the program's host calls.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abort_guard;
pub mod backend;
pub mod codeobj;
pub mod cubin_cache;
pub mod cuda;
pub mod devices;
pub mod emulate;
pub mod exit;
pub mod hip;
pub mod libpath;
pub mod report;
/// The ring's host end and the launch block's image live with the protocol
/// in rt-common, the contract both sides build from.
pub use rt_host::host_ring as ring;
pub use rt_host::launch_block;
pub mod run;
pub mod test_harness;
pub mod timeline;
pub mod testutil;
