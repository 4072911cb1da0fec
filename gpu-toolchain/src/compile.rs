//! `gpurun build`: cargo with `-Zbuild-std` on the patched toolchain.
use crate::arch::{Arch, Vendor};
use crate::error::Error;
use crate::paths::Paths;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub release: bool,
    /// Cargo's target dir; default [`Paths::build_dir`]: one per arch, shared
    /// by every crate, so std is built once per arch (not once per crate),
    /// and switching archs does not rebuild it.
    pub target_dir: Option<PathBuf>,
    /// Build only this `bin` target of the package.
    pub bin: Option<String>,
}

/// The crates `-Zbuild-std` builds: std and both panic runtimes (std's
/// `panic-unwind` feature, [`BUILD_STD_FEATURES`], builds `panic_unwind`).
/// rustc links the one the program's panic strategy names: `panic = "abort"`
/// (or a spec saying abort) `panic_abort`, `panic = "unwind"` `panic_unwind`.
pub const BUILD_STD_CRATES: &[&str] = &["std", "panic_abort"];

/// `-Zbuild-std-features`: it replaces cargo's default set (which has
/// `panic-unwind`), so each one std needs is named: the `mem*` functions
/// from compiler-builtins (no C library on a GPU), and `panic_unwind`, so
/// that a program built with `panic = "unwind"` finds its panic runtime.
pub const BUILD_STD_FEATURES: &[&str] = &["compiler-builtins-mem", "panic-unwind"];

/// The environment and arguments that make plain cargo build for `arch` with
/// the patched std. Shared by `build` and by tests that drive cargo directly.
pub fn cargo_command(paths: &Paths, arch: &Arch, opts: &Options, manifest: &Path, target_dir: &Path) -> Command {
    let mut cmd = Command::new(paths.cargo());
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target")
        .arg(paths.target_spec(arch.vendor))
        .arg("--target-dir")
        .arg(target_dir)
        .arg(format!("-Zbuild-std={}", BUILD_STD_CRATES.join(",")))
        .arg(format!("-Zbuild-std-features={}", BUILD_STD_FEATURES.join(",")))
        .arg("-Zjson-target-spec")
        .arg("--message-format=json-render-diagnostics");
    if let Some(bin) = &opts.bin {
        cmd.args(["--bin", bin]);
    }
    if opts.release {
        cmd.arg("--release");
    } else {
        // amdgcn always links through LTO, which fails below opt-level 2; a
        // debug build keeps debug assertions and overflow checks but optimizes.
        cmd.args(["--config", "profile.dev.opt-level=2", "--config", "profile.dev.debug=false", "--config", "profile.dev.incremental=false"]);
    }
    let linker_var = format!("CARGO_TARGET_{}_LINKER", arch.vendor.target_name().to_uppercase().replace('-', "_"));
    cmd.env("RUSTC", paths.rustc());
    clean_env(&mut cmd);
    // Encoded (0x1f between flags): the remap names a path, which may hold spaces.
    let mut flags = target_rustflags(&arch.name);
    flags.extend(std_source_remap(paths));
    cmd.env_remove("RUSTFLAGS")
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env("GPU_TOOLCHAIN", &paths.toolchain);
    cmd.env(linker_var, paths.gpu_linker());
    cmd
}

/// cfgs every GPU build sets: the portability switches of crates that need
/// a platform service, pointed at what the runtime provides. getrandom
/// (0.3, 0.4) takes its random bytes from `__getrandom_v03_custom`, which
/// the runtime defines (bytes from the host's OS generator).
pub const TARGET_CFGS: &[&str] = &["getrandom_backend=\"custom\""];

/// LLVM's inliner threshold on the GPU targets (before LLVM's ×11 for
/// NVPTX and AMDGPU), about the host's budget: the `-std` specs give it to
/// rustc (`llvm-args`) and to `gpu-ld` (`pre-link-args`), and
/// [`builtin_amd_rustflags`] to both for rustc's built-in amdgcn target.
pub const INLINE_THRESHOLD: u32 = 25;

/// amdgcn: the inliner's bonus (LLVM's `amdgpu-inline-arg-alloca-cost`,
/// 4,000 by default) for a call that passes a pointer to at most 256 bytes
/// of the caller's stack. LLVM gives it so that SROA can keep such locals in
/// registers instead of scratch; in Rust nearly every method call on a local
/// passes one, so at 4,000 AMD inlined far more than NVIDIA (which has no
/// such bonus): real-crates for gfx90a was 131 MB of optimized IR against
/// 40 MB for sm_90. At 0, its cold build (std included, 2 cores) went from
/// 471 s to 148 s and its code object from 40.3 to 15.0 MB
/// (`bench-results/size-and-load/`). Locals left in memory live in the
/// shared stack either way (`gpu-ld`'s frames in global memory). The std
/// spec (`llvm-args`) and [`builtin_amd_rustflags`] give it to rustc,
/// `gpu-ld` to its `opt` (`GPU_AMD_ARG_ALLOCA_COST=N` there overrides it).
pub const AMD_ARG_ALLOCA_COST: u32 = 0;

/// The rustflags for rustc's built-in `amdgcn-amd-amdhsa` target (with
/// `linker = gpu-ld`; the config `gpurun init` writes), on top of
/// [`target_rustflags`]: that target's spec cannot be changed and says
/// `gnu-lld`, `requires-lto` and `only-cdylib`, so
/// - `-Clinker-plugin-lto` makes rustc hand `gpu-ld` the fat-LTO module as
///   bitcode instead of machine code, and `gpu-ld` then moves frames to
///   global memory, gives atomics device scope and marks the code object,
///   as for the `-std` target;
/// - the inliner threshold the `-std` spec sets goes to rustc and `gpu-ld`,
///   and its AMD inliner bonus ([`AMD_ARG_ALLOCA_COST`]) to rustc.
pub fn builtin_amd_rustflags(cpu: &str) -> Vec<String> {
    let mut flags = target_rustflags(cpu);
    flags.extend([
        "-Clinker-plugin-lto".to_string(),
        format!("-Cllvm-args=-inline-threshold={INLINE_THRESHOLD}"),
        format!("-Cllvm-args=-amdgpu-inline-arg-alloca-cost={AMD_ARG_ALLOCA_COST}"),
        format!("-Clink-arg=--inline-threshold={INLINE_THRESHOLD}"),
    ]);
    flags
}

/// The rustflags of a GPU build for `cpu` (`gpurun build`, and the cargo
/// config `gpurun init` writes); none contains a space.
pub fn target_rustflags(cpu: &str) -> Vec<String> {
    // `-Zpanic-abort-tests`: a `cargo test` harness (panic=abort, the GPU
    // std's) gets libtest's `test_main_static_abort`, which runs one test per
    // process when `__RUST_TEST_INVOKE` names it; gpurun runs it that way.
    // Nothing but test harnesses is affected.
    let mut flags = vec![format!("-Ctarget-cpu={cpu}"), "-Zpanic-abort-tests".to_string()];
    for cfg in TARGET_CFGS {
        flags.extend(["--cfg".to_string(), cfg.to_string()]);
    }
    flags
}

/// The flags that name std's source files as the host's std names them,
/// `/rustc/<commit>/library/...` (in panic locations and `file!()`), where
/// the made toolchain's rustc tells its commit. `-Zbuild-std` compiles std
/// from this installation's copy of its sources, so a panic inside std would
/// otherwise print this machine's absolute path, and every code object would
/// carry it (their sizes then depend on where the repository lies). Macro
/// scope only: line tables keep the real files, for profilers. Empty if
/// rustc does not answer (the build then reports what is wrong with it).
pub fn std_source_remap(paths: &Paths) -> Vec<String> {
    let mut cmd = Command::new(paths.rustc());
    clean_env(&mut cmd);
    let Ok(out) = cmd.arg("-vV").output() else { return Vec::new() };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(commit) = text.lines().find_map(|l| l.strip_prefix("commit-hash: ")) else { return Vec::new() };
    // rustc finds its sysroot (and cargo std's sources) by the canonical path.
    let toolchain = paths.toolchain.canonicalize().unwrap_or_else(|_| paths.toolchain.clone());
    let library = toolchain.join("lib/rustlib/src/rust/library");
    vec![format!("--remap-path-prefix={}=/rustc/{commit}/library", library.display()), "--remap-path-scope=macro".to_string()]
}

/// Drops what a parent cargo (`cargo run`, `cargo test`) puts in the
/// environment that would make the patched toolchain's rustc use the
/// pristine one: `LD_LIBRARY_PATH` points at rustup's `lib/`, so rustc would
/// load the pristine `librustc_driver` and take its sysroot (and std) from
/// there.
pub fn clean_env(cmd: &mut Command) {
    cmd.env_remove("LD_LIBRARY_PATH")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR");
}

/// Builds the package at `dir` and returns its code objects' paths (one per
/// `bin` or `cdylib` target built; the last is the package's last target).
pub fn build(paths: &Paths, dir: &Path, arch: &Arch, opts: &Options, log: &mut dyn FnMut(&str)) -> Result<Vec<PathBuf>, Error> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.exists() {
        return Err(Error::NotACrate(dir.to_path_buf()));
    }
    if !paths.gpu_linker().exists() {
        return Err(Error::LinkerMissing { path: paths.gpu_linker() });
    }
    check_sysroot(paths)?;
    let target_dir = opts.target_dir.clone().unwrap_or_else(|| paths.build_dir(&arch.name));
    forget_stale_std(paths, &target_dir)?;
    // Cargo caches rustc's answers (the sysroot among them) per target dir,
    // keyed without the environment that can change them: ask afresh.
    let _ = fs::remove_file(target_dir.join(".rustc_info.json"));
    log(&format!("building {} for {} ({})", dir.display(), arch.name, arch.vendor.target_name()));
    let mut child = cargo_command(paths, arch, opts, &manifest, &target_dir)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(Error::spawn(paths.cargo()))?;
    let mut artifacts = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(Error::io("read the output of", paths.cargo()))?;
        if let Some(path) = artifact_of(&line, arch.vendor) {
            artifacts.push(path);
        }
    }
    let status = child.wait().map_err(Error::io("wait for", paths.cargo()))?;
    if !status.success() {
        return Err(Error::CargoFailed { dir: dir.to_path_buf(), arch: arch.name.clone() });
    }
    if artifacts.is_empty() {
        return Err(Error::NoCodeObject { dir: dir.to_path_buf() });
    }
    Ok(artifacts)
}

/// The patched rustc must report the patched toolchain as its sysroot, or
/// cargo would build the pristine std (which does not build for GPUs).
fn check_sysroot(paths: &Paths) -> Result<(), Error> {
    let mut cmd = Command::new(paths.rustc());
    clean_env(&mut cmd);
    let out = cmd.args(["--print", "sysroot"]).output().map_err(Error::spawn(paths.rustc()))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
    if !out.status.success() || !same(&sysroot, &paths.toolchain) {
        return Err(Error::WrongSysroot { rustc: paths.rustc(), sysroot, toolchain: paths.toolchain.clone() });
    }
    Ok(())
}

/// The code object path in one line of cargo's JSON messages, if any.
fn artifact_of(line: &str, vendor: Vendor) -> Option<PathBuf> {
    let msg: serde_json::Value = serde_json::from_str(line).ok()?;
    if msg.get("reason")?.as_str()? != "compiler-artifact" {
        return None;
    }
    if let Some(exe) = msg.get("executable").and_then(|e| e.as_str()) {
        return Some(PathBuf::from(exe));
    }
    let ext = vendor.code_object_ext();
    msg.get("filenames")?.as_array()?.iter().filter_map(|f| f.as_str()).find(|f| f.ends_with(ext)).map(PathBuf::from)
}

/// Cargo does not notice edits to std's sources, so after the toolchain was
/// remade, drop the std build of a target dir that was made with another.
fn forget_stale_std(paths: &Paths, target_dir: &Path) -> Result<(), Error> {
    let current = fs::read(paths.toolchain.join("gpu-toolchain.stamp")).unwrap_or_default();
    let seen_file = target_dir.join("gpu-toolchain.stamp");
    if fs::read(&seen_file).ok().as_ref() == Some(&current) {
        return Ok(());
    }
    for vendor in [Vendor::Amd, Vendor::Nvidia] {
        let dir = target_dir.join(vendor.target_name());
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(Error::io("remove the stale std build", &dir))?;
        }
    }
    fs::create_dir_all(target_dir).map_err(Error::io("create", target_dir))?;
    fs::write(&seen_file, current).map_err(Error::io("write", &seen_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_executables_and_cdylibs_in_cargo_messages() {
        let exe = r#"{"reason":"compiler-artifact","filenames":["/t/hello.ptx"],"executable":"/t/hello.ptx"}"#;
        assert_eq!(artifact_of(exe, Vendor::Nvidia), Some(PathBuf::from("/t/hello.ptx")));
        let lib = r#"{"reason":"compiler-artifact","filenames":["/t/libx.rlib","/t/x.elf"],"executable":null}"#;
        assert_eq!(artifact_of(lib, Vendor::Amd), Some(PathBuf::from("/t/x.elf")));
        assert_eq!(artifact_of(r#"{"reason":"build-finished","success":true}"#, Vendor::Amd), None);
        assert_eq!(artifact_of("not json", Vendor::Amd), None);
    }

    /// The built-in amdgcn target gets the `-std` specs' inliner settings.
    #[test]
    fn builtin_amd_flags_carry_the_std_specs_inliner_settings() {
        let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../targets");
        for vendor in [Vendor::Amd, Vendor::Nvidia] {
            let spec = fs::read_to_string(specs.join(format!("{}.json", vendor.target_name()))).unwrap();
            assert!(spec.contains(&format!("\"-inline-threshold={INLINE_THRESHOLD}\"")), "{spec}");
            assert!(spec.contains(&format!("\"--inline-threshold={INLINE_THRESHOLD}\"")), "{spec}");
        }
        let amd = fs::read_to_string(specs.join(format!("{}.json", Vendor::Amd.target_name()))).unwrap();
        let bonus = format!("-amdgpu-inline-arg-alloca-cost={AMD_ARG_ALLOCA_COST}");
        assert!(amd.contains(&format!("\"{bonus}\"")), "{amd}");
        let flags = builtin_amd_rustflags("gfx942");
        assert!(flags.contains(&format!("-Cllvm-args={bonus}")), "{flags:?}");
        assert_eq!(flags[0], "-Ctarget-cpu=gfx942");
        assert!(flags.contains(&"-Clinker-plugin-lto".to_string()));
        assert!(flags.iter().all(|f| !f.contains(' ')), "{flags:?}");
    }
}
