//! Where things are: the repository, its target specs, the made toolchain.
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Paths {
    /// The repository root (holds rust-toolchain.toml, targets/, the rt-* crates, gpu-toolchain/).
    pub repo: PathBuf,
    /// The patched toolchain `gpurun setup` makes.
    pub toolchain: PathBuf,
    /// The GPU std port (`gpu-toolchain/std`): new files under `library/`,
    /// edits of upstream files as `patches/*.patch`.
    pub std_port: PathBuf,
}

impl Paths {
    /// The repository this binary was built from, or `$GPURUN_REPO`.
    pub fn from_env() -> Paths {
        let repo = std::env::var_os("GPURUN_REPO")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
        let repo = repo.canonicalize().unwrap_or(repo);
        Paths::at(repo)
    }

    pub fn at(repo: PathBuf) -> Paths {
        Paths {
            toolchain: repo.join("target/gpu-toolchain"),
            std_port: repo.join("gpu-toolchain/std"),
            repo,
        }
    }

    /// The target spec for a vendor.
    pub fn target_spec(&self, vendor: crate::Vendor) -> PathBuf {
        self.repo.join("targets").join(format!("{}.json", vendor.target_name()))
    }

    pub fn rustc(&self) -> PathBuf {
        self.toolchain.join("bin/rustc")
    }

    pub fn cargo(&self) -> PathBuf {
        self.toolchain.join("bin/cargo")
    }

    /// Where `gpurun build` builds for `arch`: one cargo target dir per arch
    /// for all crates, beside the made toolchain. Cargo keys each crate's
    /// artifacts by its metadata, so crates share std's build there; two
    /// programs of the same name overwrite each other's final code object.
    pub fn build_dir(&self, arch: &str) -> PathBuf {
        self.repo.join("target/gpu-build").join(arch)
    }

    /// The GPU linker (`gpu-ld`) `setup` installs into the made toolchain.
    pub fn gpu_linker(&self) -> PathBuf {
        self.toolchain.join("bin/gpu-ld")
    }
}
