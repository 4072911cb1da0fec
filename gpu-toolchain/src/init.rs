//! `gpurun init`: makes any crate a GPU crate. Writes the crate's
//! `.cargo/config.toml` (absolute paths to this installation's patched
//! toolchain, target specs, linker and `gpurun` as the runner) and a
//! `rust-toolchain.toml` pinning the nightly the std port is written for
//! (plain `cargo` must be that nightly for `-Zbuild-std`), after which
//! `cargo build`, `cargo run` and `cargo build-amd` work in that crate.
use crate::arch::{Arch, Vendor};
use crate::error::Error;
use crate::paths::Paths;
use std::path::{Path, PathBuf};

/// What `init` wrote.
#[derive(Debug)]
pub struct Written {
    pub config: PathBuf,
    /// `None` when the crate already had a `rust-toolchain.toml` naming the
    /// pinned nightly.
    pub toolchain_file: Option<PathBuf>,
}

/// The `.cargo/config.toml` for a crate built for `arch` by default (the
/// other vendor stays one alias away: `cargo build-amd` or `cargo build-nvidia`).
pub fn config_toml(paths: &Paths, gpurun: &Path, arch: &Arch) -> String {
    let (nv, amd) = (Vendor::Nvidia, Vendor::Amd);
    let spec = |v: Vendor| paths.target_spec(v).display().to_string();
    let (nv_cpu, amd_cpu) = match arch.vendor {
        Vendor::Nvidia => (arch.name.as_str(), "gfx90a"),
        Vendor::Amd => ("sm_90", arch.name.as_str()),
    };
    let linker = paths.gpu_linker().display().to_string();
    let runner = format!("{} run", gpurun.display());
    let remap = crate::compile::std_source_remap(paths);
    let toml_array = |flags: Vec<String>| {
        let items: Vec<String> = flags.iter().chain(&remap).map(|f| format!("{f:?}")).collect();
        format!("[{}]", items.join(", "))
    };
    let nv_flags = toml_array(crate::compile::target_rustflags(nv_cpu));
    let amd_flags = toml_array(crate::compile::target_rustflags(amd_cpu));
    let builtin_amd_flags = toml_array(crate::compile::builtin_amd_rustflags(amd_cpu));
    format!(
        "# Written by `gpurun init`: builds this crate for a GPU with the patched std.\n\
         #   cargo build / cargo run          {default} ({default_cpu})\n\
         #   cargo build-amd / cargo run-amd  AMD ({amd_cpu})\n\
         #   cargo build-nvidia / run-nvidia  NVIDIA ({nv_cpu})\n\
         #   cargo build -Zbuild-std --target amdgcn-amd-amdhsa\n\
         #                                    rustc's built-in AMD target ({amd_cpu}): cdylib crates only\n\
         # Other archs: edit the rustflags below, or `gpurun build . --arch ARCH`.\n\
         [build]\n\
         rustc = \"{rustc}\"\n\
         # Keeps rustup from switching rustc to the pristine std (see the script).\n\
         rustc-wrapper = \"{wrapper}\"\n\
         target = \"{default_spec}\"\n\n\
         [unstable]\n\
         build-std = [\"std\", \"panic_abort\"]\n\
         build-std-features = [\"compiler-builtins-mem\"]\n\
         json-target-spec = true\n\
         # `cargo test`: the test harness honours panic=abort (the GPU std's), and\n\
         # gpurun runs it one launch per test.\n\
         panic-abort-tests = true\n\n\
         [env]\n\
         # Where gpu-ld finds llvm-tools.\n\
         GPU_TOOLCHAIN = \"{toolchain}\"\n\n\
         [target.{nv_name}]\n\
         linker = \"{linker}\"\n\
         rustflags = {nv_flags}\n\
         runner = \"{runner}\"\n\n\
         [target.{amd_name}]\n\
         linker = \"{linker}\"\n\
         rustflags = {amd_flags}\n\
         runner = \"{runner}\"\n\n\
         # rustc's built-in AMD target (a cdylib exporting the C `main`, no `fn main`\n\
         # binaries): gpu-ld links it too. rustc runs the LTO this target requires and,\n\
         # with -Clinker-plugin-lto, hands gpu-ld the merged module as bitcode, so the\n\
         # code object gets shared stacks, device-scope atomics and the launcher's marker.\n\
         [target.amdgcn-amd-amdhsa]\n\
         linker = \"{linker}\"\n\
         rustflags = {builtin_amd_flags}\n\
         runner = \"{runner}\"\n\n\
         [alias]\n\
         build-amd = \"build --target {amd_spec}\"\n\
         run-amd = \"run --target {amd_spec}\"\n\
         build-nvidia = \"build --target {nv_spec}\"\n\
         run-nvidia = \"run --target {nv_spec}\"\n\n\
         # amdgcn links through LTO, which fails below opt-level 2: debug builds keep\n\
         # debug assertions and overflow checks but are optimized.\n\
         [profile.dev]\n\
         opt-level = 2\n\
         debug = false\n\
         incremental = false\n",
        default = if arch.vendor == nv { "NVIDIA" } else { "AMD" },
        default_cpu = arch.name,
        rustc = paths.rustc().display(),
        wrapper = paths.repo.join("gpu-toolchain/bin/gpu-rustc-wrapper.sh").display(),
        default_spec = spec(arch.vendor),
        toolchain = paths.toolchain.display(),
        nv_name = nv.target_name(),
        amd_name = amd.target_name(),
        nv_spec = spec(nv),
        amd_spec = spec(amd),
    )
}

/// Writes the config and toolchain file into the crate at `dir`. Refuses to
/// replace a `.cargo/config.toml` that `init` did not write (unless `force`)
/// or a `rust-toolchain.toml` naming another toolchain.
pub fn init(paths: &Paths, gpurun: &Path, dir: &Path, arch: &Arch, force: bool) -> Result<Written, Error> {
    if !dir.join("Cargo.toml").is_file() {
        return Err(Error::NotACrate(dir.to_path_buf()));
    }
    let config = dir.join(".cargo/config.toml");
    if let Ok(old) = std::fs::read_to_string(&config)
        && !old.starts_with("# Written by `gpurun init`")
        && !force
    {
        return Err(Error::Refused { path: config });
    }
    let channel = crate::setup::pinned_channel(paths)?;
    let toolchain_file = dir.join("rust-toolchain.toml");
    let wanted = format!(
        "# Written by `gpurun init`: the nightly gpurun's std port is written for.\n\
         [toolchain]\nchannel = \"{channel}\"\ncomponents = [\"rust-src\", \"llvm-tools\"]\nprofile = \"minimal\"\n"
    );
    let write_toolchain = match std::fs::read_to_string(&toolchain_file) {
        Ok(old) if old.contains(&format!("\"{channel}\"")) => false,
        Ok(_) if !force => {
            return Err(Error::OtherToolchain { path: toolchain_file, channel });
        }
        _ => true,
    };
    std::fs::create_dir_all(dir.join(".cargo")).map_err(Error::io("create", dir.join(".cargo")))?;
    std::fs::write(&config, config_toml(paths, gpurun, arch)).map_err(Error::io("write", &config))?;
    if write_toolchain {
        std::fs::write(&toolchain_file, wanted).map_err(Error::io("write", &toolchain_file))?;
    }
    Ok(Written { config, toolchain_file: write_toolchain.then_some(toolchain_file) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_absolute_paths_and_refuses_foreign_configs() {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
        let paths = Paths::at(repo.clone());
        let dir = std::env::temp_dir().join(format!("gpurun-init-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let arch = Arch::parse("sm_80").unwrap();
        let err = init(&paths, Path::new("/x/gpurun"), &dir, &arch, false).unwrap_err();
        assert_eq!(err.to_string(), format!("{} is not a crate: it has no Cargo.toml", dir.display()));
        assert_eq!(err.exit_code(), 2);
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let w = init(&paths, Path::new("/x/gpurun"), &dir, &arch, false).unwrap();
        let text = std::fs::read_to_string(&w.config).unwrap();
        assert!(text.contains(&format!("rustc = \"{}\"", repo.join("target/gpu-toolchain/bin/rustc").display())), "{text}");
        assert!(text.contains(&format!("target = \"{}\"", repo.join("targets/nvptx64-nvidia-cuda-std.json").display())));
        let cfg = r#""--cfg", "getrandom_backend=\"custom\"""#;
        // std's source paths as the host's std names them (where the made
        // toolchain's rustc answers; none where it is not made).
        let remap: String = crate::compile::std_source_remap(&paths).iter().map(|f| format!(", {f:?}")).collect();
        assert!(text.contains(&format!("rustflags = [\"-Ctarget-cpu=sm_80\", \"-Zpanic-abort-tests\", {cfg}{remap}]")), "{text}");
        assert!(text.contains(&format!("rustflags = [\"-Ctarget-cpu=gfx90a\", \"-Zpanic-abort-tests\", {cfg}{remap}]")), "{text}");
        assert!(text.contains("runner = \"/x/gpurun run\""));
        // rustc's built-in amdgcn target links through gpu-ld with bitcode.
        let builtin = &text[text.find("[target.amdgcn-amd-amdhsa]\n").expect("a section for the built-in target")..];
        assert!(builtin.contains(&format!("linker = \"{}\"", repo.join("target/gpu-toolchain/bin/gpu-ld").display())), "{text}");
        assert!(
            builtin.contains(&format!(
                "rustflags = [\"-Ctarget-cpu=gfx90a\", \"-Zpanic-abort-tests\", {cfg}, \"-Clinker-plugin-lto\", \
                 \"-Cllvm-args=-inline-threshold=25\", \"-Cllvm-args=-amdgpu-inline-arg-alloca-cost=0\", \
                 \"-Clink-arg=--inline-threshold=25\"{remap}]"
            )),
            "{text}"
        );
        let pinned = crate::setup::pinned_channel(&paths).unwrap();
        assert!(std::fs::read_to_string(dir.join("rust-toolchain.toml")).unwrap().contains(&pinned));
        // Again: it replaces its own files.
        assert!(init(&paths, Path::new("/x/gpurun"), &dir, &arch, false).unwrap().toolchain_file.is_none());
        // A config of the user's own is kept unless forced.
        std::fs::write(&w.config, "[build]\n").unwrap();
        let err = init(&paths, Path::new("/x/gpurun"), &dir, &arch, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{} exists and was not written by `gpurun init`: move it away, or pass --force", w.config.display())
        );
        assert_eq!(err.exit_code(), 2);
        init(&paths, Path::new("/x/gpurun"), &dir, &arch, true).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
