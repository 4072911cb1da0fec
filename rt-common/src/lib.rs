//! The GPU threads runtime, generic over a [`Hal`].
//!
//! Each `std::thread` is one warp (NVIDIA) or wavefront (AMD). One persistent
//! launch: warp 0 runs `main`, every other warp sleeps in an idle loop until
//! `spawn` hands it a closure. This crate holds everything that runs on the
//! GPU and is the same on every vendor, written once over the small [`Hal`]
//! trait; what it shares with the host and the linker is `rt-abi`'s:
//!
//! | module | what |
//! |---|---|
//! | [`hal`] | the trait the vendors implement (lanes, clock, sleep, scoped fences) |
//! | [`backoff`] | the one backoff every wait loop uses |
//! | [`slot`], [`runtime`] | thread-table slot layout, global state, waiting |
//! | [`threads`] | spawn / join / detach, the idle loop, names, sleep |
//! | [`futex`] | sleep-poll futex for std's locks |
//! | [`heap`], [`extents`] | the heap: lock-free size classes for small blocks, merging page extents for large ones |
//! | [`tls`] | key-based thread-locals with destructors |
//! | [`ring`], [`ring_room`] | host-call ring client (device side); its view of free slots in device memory |
//! | [`process`] | exit/abort, args/env, time, random |
//! | [`start`] | what each warp does at kernel start |
//! | [`lanes`] | lane-parallel work inside a thread (`gpu_lanes::for_each_lane`) |
//! | [`stack`] | stack-overflow reports for stacks in global memory |
//! | [`unwind`] | the warp's exception in flight, the word `gpu-ld`'s unwinding runs on |
//! | [`abi_impl`], [`define_gpu_std_abi!`] | the `__gpu_std_*` functions of `rt_abi::abi` |
//! | [`primitive`] | the atomics of the handoffs, loom's under `cfg(loom)` |
//!
//! Built as a dependency of std (`rustc-dep-of-std`): only `core`. `rt-host`
//! runs all of it on the CPU (its `CpuHal`) in `cargo test` and under loom.
//!
//! # The runtime never unwinds
//! std is built with `panic = "unwind"`, and so is this crate: a bounds check
//! or a `write!` makes a function "may unwind", and every caller of it, std's
//! allocator included, then gets `gpu-ld`'s check after the call (a load,
//! a compare, a branch; most of a program's checks were calls into the heap
//! and the abort reports). None of it may unwind: a panic in the heap
//! would leave its lists half-updated (and Rust's global allocator must not
//! unwind), and the reports end the program. So the functions where such a
//! panic would start are `#[rustc_nounwind]`: rustc makes a panic inside one
//! abort ("panic in a function that cannot unwind"), and LLVM then proves
//! their callers `nounwind` as well.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![feature(rustc_attrs)]
#![allow(internal_features)]
// `cfg(loom)` is declared in Cargo.toml; the manifest generated for the std
// build does not declare it.
#![allow(unexpected_cfgs)]

// For `define_gpu_std_abi!`, which names the ABI's constants from the crate
// that invokes it.
#[doc(hidden)]
pub use rt_abi;

mod abi_macro;
pub mod abi_impl;
pub mod backoff;
pub mod futex;
pub mod hal;
pub mod extents;
pub mod heap;
pub mod lanes;
pub mod primitive;
pub mod process;
pub mod ring;
pub mod ring_room;
pub mod runtime;
pub mod slot;
pub mod stack;
pub mod start;
pub mod threads;
pub mod tls;
pub mod unwind;

pub use backoff::Backoff;
pub use hal::Hal;
pub use runtime::Runtime;
