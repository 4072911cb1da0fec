//! The GPU threads runtime, generic over a [`Hal`].
//!
//! Each `std::thread` is one warp (NVIDIA) or wavefront (AMD). One persistent
//! launch: warp 0 runs `main`, every other warp sleeps in an idle loop until
//! `spawn` hands it a closure. This crate holds everything that is the same
//! on every vendor, written once over the small [`Hal`] trait:
//!
//! | module | what |
//! |---|---|
//! | [`hal`] | the trait the vendors implement (lanes, clock, sleep, scoped fences) |
//! | [`backoff`] | the one backoff every wait loop uses |
//! | [`slot`], [`runtime`] | thread-table slot layout, global state, waiting |
//! | [`threads`] | spawn / join / detach, the idle loop, names, sleep |
//! | [`futex`] | sleep-poll futex for std's locks |
//! | [`heap`] | lock-free size-class heap |
//! | [`tls`] | key-based thread-locals with destructors |
//! | [`ring`], [`ring_room`] | host-call ring client (device side); its view of free slots in device memory |
//! | [`process`] | exit/abort, args/env, time, random |
//! | [`start`] | what each warp does at kernel start |
//! | [`lanes`] | lane-parallel work inside a thread (`gpu_lanes::for_each_lane`) |
//! | [`stack`] | stack-overflow reports for stacks in global memory |
//! | [`abi_impl`], [`define_gpu_std_abi!`] | the `__gpu_std_*` functions |
//! | `host_ring` (feature `host`) | the ring's host end: the server the launcher and the CPU harness run |
//! | `launch_block` (feature `host`) | the host's image of the [`protocol::LaunchBlock`] and the argument/environment tables |
//! | `cpu` (feature `cpu`) | `CpuHal` + a host harness running all of it on OS threads |
//!
//! Built as a dependency of std (`rustc-dep-of-std`): only `core` is used.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
// `cfg(loom)` is declared in Cargo.toml; the manifest generated for the std
// build does not declare it.
#![allow(unexpected_cfgs)]

#[cfg(any(test, loom, feature = "cpu", feature = "host"))]
extern crate std;

pub mod abi;
pub mod protocol;

mod abi_macro;
pub mod abi_impl;
pub mod backoff;
pub mod futex;
pub mod hal;
pub mod heap;
pub mod hostcall;
pub mod lanes;
mod primitive;
pub mod process;
pub mod ring;
pub mod ring_room;
pub mod runtime;
pub mod slot;
pub mod stack;
pub mod start;
pub mod threads;
pub mod tls;

// Not for `cfg(loom)` alone: the loom build of the library (beside its
// tests) has no dev-dependencies, and only the tests use these.
#[cfg(any(test, feature = "cpu"))]
pub mod cpu;
#[cfg(any(test, feature = "host"))]
pub mod host_ring;
#[cfg(any(test, feature = "host"))]
pub mod launch_block;

#[cfg(all(test, not(loom)))]
mod tests;
#[cfg(all(test, loom))]
mod loom_tests;

pub use backoff::Backoff;
pub use hal::Hal;
pub use runtime::Runtime;
