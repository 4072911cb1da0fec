//! The project's own tools, kept out of the shipped `gpurun`:
//! - [`bench`]: the cross-vendor benchmark matrix (`gpurun-dev bench`);
//! - `gpurun-dev acceptance`: runs the GPU acceptance suite (the table of
//!   checks is `tests::acceptance`, in the `tests` crate);
//! - [`selftest`]: the acceptance suite and the benchmark matrix on the GPU
//!   found, in one command, with one report file (`gpurun-dev selftest`);
//! - [`machine`]: what both find on this machine (tools, GPUs, the CPU);
//! - [`std_docs`]: std's documentation examples for panics as one GPU
//!   program (`gpurun-dev std-docs`);

pub mod bench;
pub mod machine;
pub mod selftest;
pub mod std_docs;

use std::path::PathBuf;

/// A failure of a `gpurun-dev` command that carries its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// The `gpurun` in the folder of this executable: `cargo build` puts both
/// binaries in one target folder, and the GPU bundles carry them side by side.
pub fn gpurun_beside_me() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    let gpurun = me.with_file_name("gpurun");
    if gpurun.exists() {
        Ok(gpurun)
    } else {
        Err(format!(
            "no gpurun beside {} (build it: `cargo build --release -p launcher --bin gpurun`, or pass --gpurun PATH)",
            me.display()
        ))
    }
}
