//! Helpers for the end-to-end tests: one patched toolchain for all of them.
use gpu_toolchain::{Arch, Paths};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static SETUP: Mutex<bool> = Mutex::new(false);

/// The repository's paths, with the patched toolchain made and the nvptx
/// linker `linker` installed (once per test process).
pub fn toolchain(linker: &Path) -> Paths {
    let paths = Paths::from_env();
    let mut done = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        let mut log = |l: &str| eprintln!("setup: {l}");
        gpu_toolchain::setup::ensure(&paths, &mut log).expect("gpurun setup");
        gpu_toolchain::setup::install_linker(&paths, linker).expect("install the GPU linker");
        *done = true;
    }
    paths
}

/// Builds `examples/<name>` for `arch` (release) into the target dir shared
/// by every build for that arch (as `gpurun build` does), and returns the
/// code object.
pub fn build_example(paths: &Paths, name: &str, arch: &str) -> PathBuf {
    build_example_bin(paths, name, None, arch)
}

/// As [`build_example`], only the `bin` target `bin` if given.
pub fn build_example_bin(paths: &Paths, name: &str, bin: Option<&str>, arch: &str) -> PathBuf {
    let arch = Arch::parse(arch).unwrap();
    let opts = gpu_toolchain::compile::Options {
        release: true,
        target_dir: None,
        bin: bin.map(str::to_string),
    };
    let mut log = |l: &str| eprintln!("{l}");
    gpu_toolchain::compile::build(paths, &paths.repo.join("examples").join(name), &arch, &opts, &mut log)
        .unwrap_or_else(|e| panic!("building {name} for {}: {e}", arch.name))
        .pop()
        .expect("one code object")
}

/// The llvm-tools folder of the made toolchain.
pub fn llvm_bin(paths: &Paths) -> PathBuf {
    gpu_toolchain::setup::llvm_bin(&paths.toolchain).expect("llvm-tools in the made toolchain")
}
