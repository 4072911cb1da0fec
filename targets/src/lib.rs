//! The GPU toolchain: target specs, the patched std, the build of GPU programs.
//!
//! - [`setup`]: the hard-linked, patched toolchain under `target/gpu-toolchain`;
//! - [`compile`]: `gpurun build`: cargo with `-Zbuild-std` for a GPU arch;
//! - [`arch`]: which vendor and target an arch name (`gfx90a`, `sm_90`) means.
pub mod arch;
pub mod codecheck;
pub mod compile;
pub mod doctor;
pub mod patch;
pub mod paths;
mod protocol_names;
pub mod setup;

pub use arch::{Arch, Vendor};
pub use paths::Paths;

use std::path::{Path, PathBuf};

/// Builds the crate at `dir` for `arch` (`gfx90a`, `gfx942`, `gfx1100`, `sm_80`,
/// `sm_90`, ...) and returns the path of the built code object
/// (an AMDGPU ELF `.elf` or a PTX `.ptx` file). Makes the toolchain first if
/// it is missing or stale.
pub fn build_crate(dir: &Path, arch: &str, release: bool) -> Result<PathBuf, String> {
    let paths = Paths::from_env();
    let arch = Arch::parse(arch)?;
    let mut log = |line: &str| eprintln!("gpurun: {line}");
    setup::ensure(&paths, &mut log)?;
    compile::build(&paths, dir, &arch, &compile::Options { release, ..Default::default() }, &mut log)
}
