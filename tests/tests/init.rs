//! `gpurun init` makes a crate anywhere on disk a GPU crate: plain `cargo
//! build` there (the rustup proxy, no flags) builds a code object with the
//! patched std.
use tests::codeobj_build::{llvm_bin, toolchain};
use gpu_toolchain::{codecheck, Arch};
use std::path::Path;
use std::process::Command;

const LINKER: &str = env!("CARGO_BIN_EXE_gpu-ld");

#[test]
fn plain_cargo_builds_an_initialised_crate_outside_the_repository() {
    let paths = toolchain(Path::new(LINKER));
    let dir = std::env::temp_dir().join(format!("gpurun-init-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"outside\"\nversion = \"0.1.0\"\nedition = \"2021\"\n").unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {\n    let h = std::thread::spawn(|| 6 * 7);\n    println!(\"{}\", h.join().unwrap());\n}\n").unwrap();
    let arch = Arch::parse("sm_90").unwrap();
    gpu_toolchain::init::init(&paths, Path::new("/nonexistent/gpurun"), &dir, &arch, false).unwrap();
    let mut cargo = Command::new("cargo");
    // As a user's shell would run it: none of this test's cargo environment.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO") || k.starts_with("RUSTUP_TOOLCHAIN") || k == "RUSTC" || k == "LD_LIBRARY_PATH" {
            cargo.env_remove(&*k);
        }
    }
    let out = cargo.args(["build", "--release"]).current_dir(&dir).output().expect("cargo");
    assert!(out.status.success(), "cargo build failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let ptx = dir.join("target/nvptx64-nvidia-cuda-std/release/outside.ptx");
    let report = codecheck::inspect(&ptx, arch.vendor, &llvm_bin(&paths)).unwrap();
    assert!(report.problems(&arch).is_empty(), "{:?}", report.problems(&arch));
    let _ = std::fs::remove_dir_all(&dir);
}
