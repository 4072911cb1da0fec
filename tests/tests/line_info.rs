//! A build with line tables (`debug = "line-tables-only"` in the profile)
//! links: `gpu-ld`'s rewrites give their inserted calls debug locations,
//! its split `llc` declares functions without `!dbg`, and the PTX keeps
//! `.loc`/`.file` line info (for `ptxas -lineinfo`, which `gpurun run`
//! passes, and the profilers) without the DWARF sections, which one
//! `llc` part's layout alone describes. Its own test binary: the profile
//! variable is process-wide.
use tests::codeobj_build::{llvm_bin, toolchain};
use gpu_toolchain::{codecheck, Arch};
use std::path::Path;

const LINKER: &str = env!("CARGO_BIN_EXE_gpu-ld");

#[test]
fn hello_threads_sm_90_with_line_tables() {
    let paths = toolchain(Path::new(LINKER));
    // SAFETY: this test binary has this one test; nothing reads the
    // environment concurrently.
    unsafe { std::env::set_var("CARGO_PROFILE_RELEASE_DEBUG", "line-tables-only") };
    let arch = Arch::parse("sm_90").unwrap();
    // Its own target dir: std is rebuilt with line tables, and the shared
    // one's code objects stay as the other tests built them.
    let opts = gpu_toolchain::compile::Options {
        release: true,
        target_dir: Some(paths.repo.join("target").join("gpu-build-line-info")),
        bin: None,
    };
    let mut log = |l: &str| eprintln!("{l}");
    let object = gpu_toolchain::compile::build(&paths, &paths.repo.join("examples/hello-threads"), &arch, &opts, &mut log)
        .unwrap_or_else(|e| panic!("building hello-threads with line tables: {e}"))
        .pop()
        .expect("one code object");
    let ptx = std::fs::read_to_string(&object).unwrap();
    let locs = ptx.lines().filter(|l| l.trim_start().starts_with(".loc")).count();
    let files = ptx.lines().filter(|l| l.trim_start().starts_with(".file")).count();
    eprintln!("{}: {} bytes, {locs} .loc lines, {files} source files", object.display(), ptx.len());
    assert!(locs > 1000 && files > 10, "no line info in {}", object.display());
    assert!(ptx.contains("hello-threads/src/main.rs\""), "main.rs not among the files");
    // std's panic locations say `/rustc/<commit>/library/...`, as on the host,
    // but its line tables name the files here, which profilers can open.
    let library = paths.toolchain.canonicalize().unwrap().join("lib/rustlib/src/rust/library/std/src/");
    assert!(ptx.contains(&format!("\"{}", library.display())), "no line table names std's files in {}", library.display());
    assert!(!ptx.contains(".section"), "DWARF sections left in {}", object.display());
    assert!(ptx.contains("\n.target sm_90\n"), "the target still promises DWARF");
    let report = codecheck::inspect(&object, arch.vendor, &llvm_bin(&paths)).unwrap();
    let problems = report.problems(&arch);
    assert!(problems.is_empty(), "{problems:?}");
}
