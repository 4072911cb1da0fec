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
    let names = |list: &[&str]| format!("{list:?}");
    let build_std = names(crate::compile::BUILD_STD_CRATES);
    let build_std_features = names(crate::compile::BUILD_STD_FEATURES);
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
         build-std = {build_std}\n\
         build-std-features = {build_std_features}\n\
         json-target-spec = true\n\
         # `cargo test`: a crate that says panic = \"abort\" gets a harness that\n\
         # honours it, which gpurun runs one launch per test (an unwinding one\n\
         # runs its tests side by side in one launch).\n\
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

/// The first line of every file `init` writes: what marks a file as its own.
const MARK: &str = "# Written by `gpurun init`";

/// What a file `init` may write holds now.
enum Existing {
    Absent,
    /// Bytes, as read: a file need not be UTF-8 to be the user's.
    Bytes(Vec<u8>),
}

fn existing(path: &Path) -> Result<Existing, Error> {
    match std::fs::read(path) {
        Ok(b) => Ok(Existing::Bytes(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Existing::Absent),
        // A directory, a file it may not read, ...: nothing proves it is
        // ours, and --force replaces only files it could read.
        Err(e) => Err(Error::io("read", path)(e)),
    }
}

/// Writes the config and toolchain file into the crate at `dir`: both, or
/// neither (each goes to a temporary file first, and a failure puts back
/// what was there). Refuses to replace a `.cargo/config.toml` that `init`
/// did not write (unless `force`), or a `rust-toolchain.toml` that it did not
/// write and that names another toolchain; what cannot be read counts as
/// not written by `init`.
pub fn init(paths: &Paths, gpurun: &Path, dir: &Path, arch: &Arch, force: bool) -> Result<Written, Error> {
    if !dir.join("Cargo.toml").is_file() {
        return Err(Error::NotACrate(dir.to_path_buf()));
    }
    let config = dir.join(".cargo/config.toml");
    match existing(&config) {
        Ok(Existing::Bytes(old)) if !old.starts_with(MARK.as_bytes()) && !force => {
            return Err(Error::Refused { path: config });
        }
        Err(e) => return Err(e),
        _ => {}
    }
    let channel = crate::setup::pinned_channel(paths)?;
    let toolchain_file = dir.join("rust-toolchain.toml");
    let wanted = format!(
        "{MARK}: the nightly gpurun's std port is written for.\n\
         [toolchain]\nchannel = \"{channel}\"\ncomponents = [\"rust-src\", \"llvm-tools\"]\nprofile = \"minimal\"\n"
    );
    let names_channel = |b: &[u8]| b.windows(channel.len() + 2).any(|w| w == format!("\"{channel}\"").as_bytes());
    let write_toolchain = match existing(&toolchain_file) {
        Ok(Existing::Bytes(old)) if names_channel(&old) => false,
        Ok(Existing::Bytes(old)) if !old.starts_with(MARK.as_bytes()) && !force => {
            return Err(Error::OtherToolchain { path: toolchain_file, channel });
        }
        Err(e) => return Err(e),
        _ => true,
    };
    let cargo_dir = dir.join(".cargo");
    let made_cargo_dir = !cargo_dir.exists();
    std::fs::create_dir_all(&cargo_dir).map_err(Error::io("create", &cargo_dir))?;
    let mut files = vec![(config.clone(), config_toml(paths, gpurun, arch))];
    if write_toolchain {
        files.push((toolchain_file.clone(), wanted));
    }
    let result = replace_all(&files, &format!(".gpurun-init-{}", std::process::id()));
    if result.is_err() && made_cargo_dir {
        // Empty unless something else wrote there meanwhile: then it stays.
        let _ = std::fs::remove_dir(&cargo_dir);
    }
    result?;
    Ok(Written { config, toolchain_file: write_toolchain.then_some(toolchain_file) })
}

/// `path` with `suffix` added to its file name, in the same directory (so a
/// rename to `path` stays on one file system).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Puts each `(path, text)` in place, all or none: every text is written to
/// a temporary file beside its path (its name plus `suffix`, `.new`); then
/// each path's old file (if any) is moved aside (`.old`) and the new one
/// renamed in. On any failure the new files are removed and the old ones
/// moved back; on success the old ones are deleted.
fn replace_all(files: &[(PathBuf, String)], suffix: &str) -> Result<(), Error> {
    let tmp = |p: &Path| beside(p, &format!("{suffix}.new"));
    let old = |p: &Path| beside(p, &format!("{suffix}.old"));
    let remove_temps = || {
        for (p, _) in files {
            let _ = std::fs::remove_file(tmp(p));
        }
    };
    for (p, text) in files {
        if let Err(e) = std::fs::write(tmp(p), text) {
            remove_temps();
            return Err(Error::io("write", tmp(p))(e));
        }
    }
    // (path, whether its old file was moved aside) for each path done so far.
    let mut done: Vec<(&Path, bool)> = Vec::new();
    let mut failure = None;
    for (p, _) in files {
        let moved = match std::fs::rename(p, old(p)) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                failure = Some(Error::io("move aside", p.clone())(e));
                break;
            }
        };
        if let Err(e) = std::fs::rename(tmp(p), p) {
            if moved {
                let _ = std::fs::rename(old(p), p);
            }
            failure = Some(Error::io("write", p.clone())(e));
            break;
        }
        done.push((p, moved));
    }
    match failure {
        None => {
            for (p, moved) in done {
                if moved {
                    let _ = std::fs::remove_file(old(p));
                }
            }
            Ok(())
        }
        Some(e) => {
            for (p, moved) in done.into_iter().rev() {
                let _ = std::fs::remove_file(p);
                if moved {
                    let _ = std::fs::rename(old(p), p);
                }
            }
            remove_temps();
            Err(e)
        }
    }
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
        // Both panic runtimes: the program's strategy picks one.
        assert!(text.contains("build-std = [\"std\", \"panic_abort\"]\n"), "{text}");
        assert!(text.contains("build-std-features = [\"compiler-builtins-mem\", \"panic-unwind\"]\n"), "{text}");
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

    /// A crate in a fresh temporary folder.
    fn scratch_crate(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpurun-init-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        dir
    }

    fn repo_paths() -> Paths {
        Paths::at(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap())
    }

    /// The crate's files and folders below `dir`, sorted, with their bytes.
    fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    todo.push(p.clone());
                    out.push((p, None));
                } else {
                    let bytes = std::fs::read(&p).unwrap();
                    out.push((p, Some(bytes)));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn what_init_cannot_prove_it_wrote_is_kept() {
        let paths = repo_paths();
        let arch = Arch::parse("sm_90").unwrap();
        let gpurun = Path::new("/x/gpurun");
        // A config that is not UTF-8 is the user's: kept without --force.
        let dir = scratch_crate("not-utf8");
        std::fs::create_dir_all(dir.join(".cargo")).unwrap();
        std::fs::write(dir.join(".cargo/config.toml"), b"\xff\xfe[build]\n").unwrap();
        let before = tree(&dir);
        let err = init(&paths, gpurun, &dir, &arch, false).unwrap_err();
        assert!(matches!(err, Error::Refused { .. }), "{err}");
        assert_eq!(tree(&dir), before, "nothing written");
        // Likewise a toolchain file that is not UTF-8, and one naming another toolchain.
        for other in [&b"\xff[toolchain]\n"[..], b"[toolchain]\nchannel = \"stable\"\n"] {
            let dir = scratch_crate("toolchain");
            std::fs::write(dir.join("rust-toolchain.toml"), other).unwrap();
            let before = tree(&dir);
            let err = init(&paths, gpurun, &dir, &arch, false).unwrap_err();
            assert!(matches!(err, Error::OtherToolchain { .. }), "{err}");
            assert_eq!(tree(&dir), before, "nothing written, .cargo not made");
            // --force replaces it (and the config with it).
            init(&paths, gpurun, &dir, &arch, true).unwrap();
            assert!(std::fs::read(dir.join("rust-toolchain.toml")).unwrap().starts_with(MARK.as_bytes()));
            let _ = std::fs::remove_dir_all(&dir);
        }
        // What cannot be read (a folder in the file's place) is not replaced, even with --force.
        let dir2 = scratch_crate("unreadable");
        std::fs::create_dir_all(dir2.join("rust-toolchain.toml/inside")).unwrap();
        let before = tree(&dir2);
        for force in [false, true] {
            let err = init(&paths, gpurun, &dir2, &arch, force).unwrap_err();
            assert!(err.to_string().starts_with(&format!("cannot read {}", dir2.join("rust-toolchain.toml").display())), "{err}");
            assert_eq!(tree(&dir2), before, "nothing written (force {force})");
        }
        // A toolchain file init wrote for another nightly is its own: replaced.
        let dir3 = scratch_crate("older");
        std::fs::write(dir3.join("rust-toolchain.toml"), format!("{MARK}: ...\n[toolchain]\nchannel = \"nightly-2020-01-01\"\n")).unwrap();
        assert!(init(&paths, gpurun, &dir3, &arch, false).unwrap().toolchain_file.is_some());
        for d in [dir, dir2, dir3] {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn both_files_or_neither() {
        let dir = scratch_crate("atomic");
        let (a, b) = (dir.join("a.toml"), dir.join("b.toml"));
        std::fs::write(&a, "old a").unwrap();
        let files = vec![(a.clone(), "new a".to_string()), (b.clone(), "new b".to_string())];
        // The second file's temporary cannot be written (a folder is there):
        // nothing changes.
        std::fs::create_dir_all(dir.join("b.toml.t1.new/x")).unwrap();
        let before = tree(&dir);
        assert!(replace_all(&files, ".t1").is_err());
        assert_eq!(tree(&dir), before);
        // The first file is replaced, then the second fails (its path cannot
        // be moved aside): the first is put back as it was.
        std::fs::write(&b, "old b").unwrap();
        std::fs::create_dir_all(dir.join("b.toml.t2.old/x")).unwrap();
        let before = tree(&dir);
        let err = replace_all(&files, ".t2").unwrap_err();
        assert!(err.to_string().starts_with(&format!("cannot move aside {}", b.display())), "{err}");
        assert_eq!(tree(&dir), before, "the first file restored, no temporaries left");
        // And when nothing is in the way, both are written, nothing left over.
        std::fs::remove_dir_all(dir.join("b.toml.t2.old")).unwrap();
        replace_all(&files, ".t4").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(!names.iter().any(|n| n.contains(".t4")), "{names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
