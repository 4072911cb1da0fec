//! `gpu-ld`: see the library docs.
fn main() {
    std::process::exit(gpu_linker::main_with_args(std::env::args_os().skip(1).collect()));
}
