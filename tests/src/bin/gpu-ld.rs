//! The GPU linker (gpu-ld), built by this package so its tests can install it.
fn main() {
    std::process::exit(gpu_linker::main_with_args(std::env::args_os().skip(1).collect()));
}
