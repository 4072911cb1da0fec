//! The GPU linker (gpu-ld) for the tests: `CARGO_BIN_EXE_gpu-ld` names only
//! a binary of this package, so the tests install this one (the same
//! `gpu_ld::main_with_args` that `gpurun` runs when called `gpu-ld`).
fn main() {
    std::process::exit(gpu_ld::main_with_args(std::env::args_os().skip(1).collect()));
}
