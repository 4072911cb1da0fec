//! `gpurun setup`: the patched toolchain, made offline, idempotently, in seconds.
//!
//! rustc finds its sysroot from the canonical path of its driver library, so a
//! symlinked toolchain would still use the pristine std. Instead we make a
//! hard-linked copy of the pinned rustup toolchain (seconds, almost no disk)
//! under `target/gpu-toolchain/`, copy the runtime crates into its std source
//! tree (they are dependencies of the patched std) and put in the GPU std port
//! (`gpu-toolchain/std`: new files copied, then the patches applied in order),
//! replacing — never editing — the hard-linked files it touches.
//!
//! A stamp (a hash of everything that went in) detects a stale copy: after an
//! edit of any file of the port or of the runtime, the next `setup` or
//! `build` redoes it.
use crate::error::Error;
use crate::patch::{self, files_under};
use crate::paths::Paths;
use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when the layout of the made toolchain changes.
const SETUP_FORMAT: &str = "gpu-toolchain v3";
/// The runtime crates std depends on. Each is the folder of its name in the
/// repository and `library/gpu-rt/<name>` in the made std tree; which of
/// them each depends on, its own manifest says ([`runtime_deps`]).
const RUNTIME_CRATES: [&str; 4] = ["rt-abi", "rt-common", "rt-amdgpu", "rt-nvptx"];
const STAMP_FILE: &str = "gpu-toolchain.stamp";

/// What `ensure` found or did.
#[derive(Debug, PartialEq, Eq)]
pub enum SetupOutcome {
    UpToDate,
    Made { files: usize, patched: usize },
}

/// The pinned channel from the repository's `rust-toolchain.toml`.
pub fn pinned_channel(paths: &Paths) -> Result<String, Error> {
    let file = paths.repo.join("rust-toolchain.toml");
    let text = fs::read_to_string(&file).map_err(Error::io("read", &file))?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("channel"))
        .filter_map(|rest| rest.split('"').nth(1))
        .next()
        .map(str::to_string)
        .ok_or(Error::NoChannel { file })
}

/// The sysroot of the pinned rustup toolchain; installs it (with `rust-src`
/// and `llvm-tools`) when rustup lacks it.
pub fn base_sysroot(channel: &str, log: &mut dyn FnMut(&str)) -> Result<PathBuf, Error> {
    let query = || Command::new("rustup").args(["run", channel, "rustc", "--print", "sysroot"]).output();
    let out = match query() {
        Ok(o) if o.status.success() => o,
        Ok(_) => {
            log(&format!("installing the pinned toolchain {channel} with rustup (rust-src, llvm-tools)"));
            let status = Command::new("rustup")
                .args(["toolchain", "install", channel, "--profile", "minimal", "-c", "rust-src", "-c", "llvm-tools"])
                .status()
                .map_err(Error::spawn("rustup"))?;
            if !status.success() {
                return Err(Error::InstallFailed { channel: channel.to_string() });
            }
            query().map_err(Error::spawn("rustup"))?
        }
        Err(source) => return Err(Error::NoRustup { source }),
    };
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    for needed in ["lib/rustlib/src/rust/library/std/Cargo.toml", "lib/rustlib"] {
        if !sysroot.join(needed).exists() {
            return Err(Error::SysrootLacks { sysroot, needed, channel: channel.to_string() });
        }
    }
    if llvm_bin(&sysroot).is_none() {
        return Err(Error::NoLlvmTools { channel: channel.to_string() });
    }
    Ok(sysroot)
}

/// The folder of llvm-tools (llc, opt, llvm-link, llvm-objdump) in a sysroot.
pub fn llvm_bin(sysroot: &Path) -> Option<PathBuf> {
    let rustlib = sysroot.join("lib/rustlib");
    fs::read_dir(&rustlib).ok()?.flatten().map(|e| e.path().join("bin")).find(|bin| bin.join("llvm-link").exists())
}

/// Hash of everything the made toolchain is built from.
fn stamp(paths: &Paths, channel: &str, base: &Path) -> Result<String, Error> {
    let mut h = Sha256::new();
    h.update(SETUP_FORMAT);
    h.update(channel);
    h.update(base.as_os_str().as_encoded_bytes());
    // Each file of the std port with its path: a renamed, added or removed
    // file changes the stamp as an edit does.
    let port = patch::Port::read(&paths.std_port)?;
    for rel in port.files() {
        let file = port.dir.join(rel);
        let bytes = fs::read(&file).map_err(Error::io("read", &file))?;
        hash_file(&mut h, rel, &bytes);
    }
    // The runtime crates' manifests (their dependencies on each other).
    for name in RUNTIME_CRATES {
        let file = paths.repo.join(name).join("Cargo.toml");
        let bytes = fs::read(&file).map_err(Error::io("read", &file))?;
        hash_file(&mut h, &file, &bytes);
    }
    // The GPU linker's sources too: cargo does not relink when the linker
    // changes, but a new stamp drops the std builds, so everything relinks.
    let dirs = RUNTIME_CRATES.iter().map(|name| paths.repo.join(name).join("src")).chain([paths.repo.join("gpu-ld/src")]);
    for dir in dirs {
        for file in files_under(&dir).map_err(Error::io("read", &dir))? {
            let bytes = fs::read(&file).map_err(Error::io("read", &file))?;
            hash_file(&mut h, &file, &bytes);
        }
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Path and contents, each with its length, so no two file lists hash alike.
fn hash_file(h: &mut Sha256, path: &Path, bytes: &[u8]) {
    let path = path.as_os_str().as_encoded_bytes();
    h.update((path.len() as u64).to_le_bytes());
    h.update(path);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// Whether the made toolchain matches its inputs (cheap: hashes a few hundred KB).
pub fn is_current(paths: &Paths) -> Result<bool, Error> {
    let channel = pinned_channel(paths)?;
    let Ok(recorded) = fs::read_to_string(paths.toolchain.join(STAMP_FILE)) else { return Ok(false) };
    let base = PathBuf::from(recorded.lines().nth(1).unwrap_or_default());
    Ok(base.exists() && recorded.lines().next() == Some(stamp(paths, &channel, &base)?.as_str()))
}

/// Makes the patched toolchain unless it is current.
pub fn ensure(paths: &Paths, log: &mut dyn FnMut(&str)) -> Result<SetupOutcome, Error> {
    if is_current(paths)? {
        return Ok(SetupOutcome::UpToDate);
    }
    let channel = pinned_channel(paths)?;
    let base = base_sysroot(&channel, log)?;
    let stamp = stamp(paths, &channel, &base)?;
    log(&format!("making the patched toolchain in {} from {}", paths.toolchain.display(), base.display()));

    // Build beside, then swap in, so an interrupted setup leaves no half
    // tree; named per process, so two setups at once do not share one.
    let tmp = paths.toolchain.with_file_name(format!("gpu-toolchain.tmp-{}", std::process::id()));
    remove_dir(&tmp)?;
    let fill = || -> Result<(usize, usize), Error> {
        let files = link_tree(&base, &tmp).map_err(Error::io("copy", &base))?;
        let library = tmp.join("lib/rustlib/src/rust/library");
        for name in RUNTIME_CRATES {
            copy_runtime_crate(&paths.repo.join(name), &library.join("gpu-rt").join(name), name)?;
        }
        let patched = patch::Port::read(&paths.std_port)?.install(&library)?;
        let stamp_file = tmp.join(STAMP_FILE);
        fs::write(&stamp_file, format!("{stamp}\n{}\n", base.display())).map_err(Error::io("write", &stamp_file))?;
        Ok((files, patched))
    };
    // A port that does not apply (another nightly) leaves no half tree behind.
    let (files, patched) = fill().inspect_err(|_| {
        let _ = remove_dir(&tmp);
    })?;
    // Swap by two renames: a build running on the old tree (llc, llvm-link)
    // loses it for an instant, not for the seconds a removal takes.
    let old = paths.toolchain.with_file_name(format!("gpu-toolchain.old-{}", std::process::id()));
    let had_old = match fs::rename(&paths.toolchain, &old) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(source) => return Err(Error::Move { path: paths.toolchain.clone(), whither: "aside", source }),
    };
    fs::rename(&tmp, &paths.toolchain).map_err(|source| Error::Move { path: tmp.clone(), whither: "into place", source })?;
    if had_old {
        remove_dir(&old)?;
    }
    Ok(SetupOutcome::Made { files, patched })
}

fn remove_dir(dir: &Path) -> Result<(), Error> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", dir)(e)),
    }
}

/// Recreates `from` at `to` with hard links (a copy where linking fails, e.g.
/// across file systems). Returns the number of files.
fn link_tree(from: &Path, to: &Path) -> io::Result<usize> {
    fs::create_dir_all(to)?;
    let mut n = 0;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            n += link_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else {
            if fs::hard_link(&src, &dst).is_err() {
                fs::copy(&src, &dst)?;
            }
            n += 1;
        }
    }
    Ok(n)
}

/// Copies a runtime crate's sources into the std tree with a generated
/// manifest: std builds it with only `core`, whatever host-only dependencies
/// (loom, test crates) the crate's own manifest has.
fn copy_runtime_crate(from: &Path, to: &Path, name: &str) -> Result<(), Error> {
    let own = from.join("Cargo.toml");
    let own = fs::read_to_string(&own).map_err(Error::io("read", &own))?;
    let runtime_deps = runtime_deps(&own);
    let src = from.join("src");
    for file in files_under(&src).map_err(Error::io("read", &src))? {
        let rel = file.strip_prefix(from).expect("under the crate");
        patch::replace_file(&to.join(rel), &fs::read(&file).map_err(Error::io("read", &file))?)?;
    }
    let deps: String = runtime_deps.iter().map(|d| format!("{d} = {{ path = \"../{d}\" }}\n")).collect();
    let feature: Vec<String> =
        std::iter::once("\"core\"".to_string()).chain(runtime_deps.iter().map(|d| format!("\"{d}/rustc-dep-of-std\""))).collect();
    let feature = format!("[{}]", feature.join(", "));
    let manifest = format!(
        "# Generated by `gpurun setup` from the repository's {name}; edit that one.\n\
         [package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\n{deps}core = {{ version = \"1.0.0\", optional = true, package = \"rustc-std-workspace-core\" }}\n\n\
         [features]\nrustc-dep-of-std = {feature}\n"
    );
    patch::replace_file(&to.join("Cargo.toml"), manifest.as_bytes())
}

/// The runtime crates a runtime crate's manifest lists under `[dependencies]`.
fn runtime_deps(manifest: &str) -> Vec<&str> {
    let deps = manifest.split("\n[dependencies]\n").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    deps.lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.trim()))
        .filter(|name| RUNTIME_CRATES.contains(name))
        .collect()
}

/// Installs `exe` as the made toolchain's GPU linker (`gpu-ld`)
/// unless the same build is already there. `exe` is `gpurun` itself, which
/// acts as the linker when called by that name, or the `gpu-ld` binary.
pub fn install_linker(paths: &Paths, exe: &Path) -> Result<bool, Error> {
    let dst = paths.gpu_linker();
    let meta = |p: &Path| fs::metadata(p).ok().map(|m| (m.len(), m.modified().ok()));
    if meta(&dst).is_some() && meta(&dst) == meta(exe) {
        return Ok(false);
    }
    let tmp = dst.with_extension("tmp");
    let _ = fs::remove_file(&tmp);
    fs::copy(exe, &tmp).map_err(|source| Error::Copy { from: exe.to_path_buf(), to: tmp.clone(), source })?;
    // Keep the source's mtime so the comparison above recognises it next time.
    if let Some(mtime) = fs::metadata(exe).ok().and_then(|m| m.modified().ok()) {
        let f = fs::File::options().write(true).open(&tmp).map_err(Error::io("open", &tmp))?;
        f.set_modified(mtime).map_err(Error::io("set the modification time of", &tmp))?;
    }
    fs::rename(&tmp, &dst).map_err(Error::io("install", &dst))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// The generated manifests depend on the runtime crates the crates' own
    /// manifests name, and on nothing else of theirs (loom, test crates).
    #[test]
    fn runtime_deps_are_read_from_the_crates_own_manifests() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let deps = |name: &str| {
            let manifest = fs::read_to_string(repo.join(name).join("Cargo.toml")).unwrap();
            runtime_deps(&manifest).into_iter().map(str::to_string).collect::<Vec<_>>()
        };
        assert_eq!(deps("rt-abi"), Vec::<String>::new());
        assert_eq!(deps("rt-common"), ["rt-abi"]);
        assert_eq!(deps("rt-amdgpu"), ["rt-abi", "rt-common"]);
        assert_eq!(deps("rt-nvptx"), ["rt-abi", "rt-common"]);
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nrt-abi = { path = \"../rt-abi\" }\nserde = \"1\"\n\n\
                        [target.'cfg(loom)'.dependencies]\nrt-common = \"1\"\n";
        assert_eq!(runtime_deps(manifest), ["rt-abi"]);
    }

    /// Editing, renaming or adding any file of the std port remakes the toolchain.
    #[test]
    fn the_stamp_covers_every_file_of_the_std_port_and_its_path() {
        let repo = std::env::temp_dir().join(format!("gpu-setup-stamp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&repo);
        for name in RUNTIME_CRATES {
            write(&repo.join(name).join("src/lib.rs"), "");
            write(&repo.join(name).join("Cargo.toml"), "");
        }
        write(&repo.join("gpu-ld/src/lib.rs"), "");
        let paths = Paths::at(repo.clone());
        let port = &paths.std_port;
        write(&port.join("library/std/src/sys/time/gpu.rs"), "//! time\n");
        write(&port.join("patches/01-wiring.patch"), "wiring\n\ndiff --git a/x b/x\n");
        let stamp = || stamp(&paths, "nightly-x", Path::new("/base")).unwrap();

        let mut seen = vec![stamp()];
        let changed = |seen: &mut Vec<String>, what: &str| {
            let now = stamp();
            assert!(!seen.contains(&now), "{what} left the stamp as it was");
            seen.push(now);
        };
        write(&port.join("library/std/src/sys/time/gpu.rs"), "//! time, edited\n");
        changed(&mut seen, "editing a source");
        write(&port.join("patches/01-wiring.patch"), "wiring, edited\n\ndiff --git a/x b/x\n");
        changed(&mut seen, "editing a patch");
        fs::rename(port.join("patches/01-wiring.patch"), port.join("patches/09-wiring.patch")).unwrap();
        changed(&mut seen, "renaming a patch");
        fs::rename(port.join("library/std/src/sys/time"), port.join("library/std/src/sys/clock")).unwrap();
        changed(&mut seen, "moving a source");
        write(&port.join("patches/10-more.patch"), "more\n\ndiff --git a/y b/y\n");
        changed(&mut seen, "adding a patch");
        // The README is documentation, not input.
        let before = stamp();
        write(&port.join("README.md"), "docs\n");
        assert_eq!(stamp(), before);
        fs::remove_dir_all(&repo).unwrap();
    }
}
