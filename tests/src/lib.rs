//! The end-to-end checks of the project:
//! - [`acceptance`]: the GPU acceptance suite, a table of programs with their
//!   expected exit codes and output checks (run by `gpurun-dev acceptance`
//!   and `gpurun-dev selftest` on a machine with a GPU);
//! - [`codeobj_build`]: what the integration tests under `tests/` share: one
//!   patched toolchain per test process, example builds. Those tests build
//!   the examples for every arch and check the code objects (no GPU needed).

pub mod acceptance;
pub mod codeobj_build;
