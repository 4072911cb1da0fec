//! What can stop a link, each with the facts its message needs.
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The command line or a `GPU_*` setting is wrong (exit 2).
    #[error("{0}")]
    Usage(String),
    /// An input is neither LLVM bitcode nor an archive of it, or a broken archive.
    #[error("{path}: {why}")]
    Input { path: PathBuf, why: String },
    /// A file or folder could not be read, written or made.
    #[error("cannot {action} {path}: {source}")]
    Io { action: &'static str, path: PathBuf, source: io::Error },
    /// llvm-tools are not where they should be.
    #[error("llvm-tools not found in {sysroot}: run `rustup component add llvm-tools`")]
    NoLlvmTools { sysroot: PathBuf },
    /// A tool (`rustc`, `llvm-link`, `opt`, `llc`, `rust-lld`) could not be started.
    #[error("cannot run {tool}: {source}")]
    Spawn { tool: PathBuf, source: io::Error },
    /// A tool ran and failed; its stderr says why.
    #[error("{tool} failed:\n{stderr}")]
    Tool { tool: PathBuf, stderr: String },
    /// `llc`'s PTX could not be read: joining a split module's parts, or
    /// taking the DWARF out of a whole one.
    #[error("reading llc's PTX: {0}")]
    Ptx(#[from] gpu_toolchain::PtxError),
    /// The program unwinds in a way [`crate::unwind`] cannot lower.
    #[error("{0}")]
    Unwind(#[from] crate::unwind::Refused),
    /// A thread running `llc` on one part panicked.
    #[error("an llc thread panicked")]
    LlcPanicked,
}

impl LinkError {
    pub fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> LinkError {
        let path = path.into();
        move |source| LinkError::Io { action, path, source }
    }

    /// `gpu-ld`'s exit code: 2 for a bad command line, 1 for the rest.
    pub fn exit_code(&self) -> i32 {
        match self {
            LinkError::Usage(_) => 2,
            _ => 1,
        }
    }
}
