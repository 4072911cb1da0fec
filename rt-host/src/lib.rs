//! The host side of the GPU threads runtime: what the launcher and the tests
//! run on the CPU, built from `rt-abi`'s contract.
//!
//! | module | what |
//! |---|---|
//! | [`host_ring`] | the host-call ring's server: packets, per-thread assembly, writes, replies, and the host calls (`host_ring::calls`: files, directories, stdin under the `--fs` policy, paths beneath `--fs-root`, the program's current directory) |
//! | [`launch_block`] | the host's image of the `LaunchBlock` and the argument/environment tables |
//! | [`cpu`] | the CPU harness: `CpuHal`, and a machine that runs the real `rt-common` with OS threads as warps, served by [`host_ring`] |
//!
//! `cargo test -p rt-host` runs every algorithm of `rt-common` on the CPU
//! harness; `RUSTFLAGS="--cfg loom" cargo test -p rt-host` runs the loom
//! models of its handoffs.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cpu;
pub mod host_ring;
pub mod launch_block;

#[cfg(all(test, not(loom)))]
mod tests;
#[cfg(all(test, loom))]
mod loom_tests;
