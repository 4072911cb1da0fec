//! The GPU toolchain: target specs, the patched std, the build of GPU programs.
//!
//! - [`setup`]: the hard-linked, patched toolchain under `target/gpu-toolchain`;
//! - [`compile`]: `gpurun build`: cargo with `-Zbuild-std` for a GPU arch;
//! - [`init`]: `gpurun init`: the cargo config that makes any crate a GPU crate;
//! - [`size`]: `gpurun size`: a code object's bytes per crate and function;
//! - [`arch`]: which vendor and target an arch name (`gfx90a`, `sm_90`) means.
pub mod arch;
pub mod codecheck;
pub mod compile;
pub mod doctor;
pub mod error;
pub mod init;
pub mod patch;
pub mod paths;
pub mod ptx_compact;
pub mod ptx_parts;
pub mod setup;
pub mod size;

pub use arch::{Arch, Vendor};
pub use error::{Error, PtxError};
pub use paths::Paths;

use std::path::{Path, PathBuf};

/// Builds the crate at `dir` for `arch` (`gfx90a`, `gfx942`, `gfx1100`, `sm_80`,
/// `sm_90`, ...) and returns the path of the built code object
/// (an AMDGPU ELF `.elf` or a PTX `.ptx` file); with several `bin` targets,
/// `bin` names one. Makes the toolchain first if it is missing or stale, and
/// installs `linker` (a binary that links GPU code when called `gpu-ld`).
pub fn build_crate(dir: &Path, arch: &str, release: bool, bin: Option<&str>, linker: &Path) -> Result<PathBuf, Error> {
    let paths = Paths::from_env();
    let arch = Arch::parse(arch)?;
    let mut log = |line: &str| eprintln!("gpurun: {line}");
    setup::ensure(&paths, &mut log)?;
    setup::install_linker(&paths, linker)?;
    let opts = compile::Options { release, bin: bin.map(str::to_string), ..Default::default() };
    let mut objects = compile::build(&paths, dir, &arch, &opts, &mut log)?;
    if objects.len() > 1 {
        let names: Vec<_> = objects.iter().filter_map(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned()).collect();
        return Err(Error::SeveralPrograms { dir: dir.to_path_buf(), names });
    }
    Ok(objects.pop().expect("build returns at least one"))
}
