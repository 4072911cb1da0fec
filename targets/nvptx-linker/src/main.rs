//! `gpu-nvptx-ld`: see the library docs.
fn main() {
    std::process::exit(nvptx_linker::main_with_args(std::env::args_os().skip(1).collect()));
}
