//! What can stop the toolchain (`setup`, `build`, `init`, `size`, the std
//! port), each with the facts its message needs; and what can stop the PTX
//! splitter and joiner ([`PtxError`]).
use std::io;
use std::path::PathBuf;

/// How to name a GPU arch; the tail of every arch error.
const ARCH_NAMES: &str = "use an AMD gfx name (gfx90a, gfx942, gfx1100, ...) \
                          or an NVIDIA sm name (sm_70 ... sm_120, e.g. sm_90 for H100)";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not an arch name this toolchain builds for (usage).
    #[error("unknown GPU arch `{name}`: {ARCH_NAMES}")]
    UnknownArch { name: String },
    /// An NVIDIA arch older than Volta (usage).
    #[error("unknown GPU arch `{name}`: {ARCH_NAMES}; sm_70 (Volta) or newer is needed")]
    ArchTooOld { name: String },
    /// The folder to build or `init` has no `Cargo.toml` (usage).
    #[error("{0} is not a crate: it has no Cargo.toml")]
    NotACrate(PathBuf),
    /// `init` will not replace a `.cargo/config.toml` it did not write (usage).
    #[error("{path} exists and was not written by `gpurun init`: move it away, or pass --force")]
    Refused { path: PathBuf },
    /// `init` will not replace a `rust-toolchain.toml` naming another toolchain (usage).
    #[error("{path} names another toolchain; `-Zbuild-std` needs {channel}: edit it, or pass --force")]
    OtherToolchain { path: PathBuf, channel: String },
    /// The crate builds several programs and none was chosen (usage).
    #[error("{dir} has several programs ({}): choose one with --bin", .names.join(", "))]
    SeveralPrograms { dir: PathBuf, names: Vec<String> },

    /// Cargo failed; its diagnostics went to stderr (a failed build).
    #[error("cargo failed to build {dir} for {arch}")]
    CargoFailed { dir: PathBuf, arch: String },
    /// Cargo succeeded but built no code object (a failed build).
    #[error("cargo built {dir} but reported no GPU code object (a `bin` or `cdylib` target is needed)")]
    NoCodeObject { dir: PathBuf },

    /// The made toolchain has no GPU linker.
    #[error("the GPU linker {path} is missing: run `gpurun setup`")]
    LinkerMissing { path: PathBuf },
    /// The patched rustc would use another sysroot (and the pristine std).
    #[error("{rustc} reports sysroot {sysroot}, not the patched toolchain {toolchain}: run `gpurun setup --force`")]
    WrongSysroot { rustc: PathBuf, sysroot: PathBuf, toolchain: PathBuf },

    /// `rust-toolchain.toml` has no `channel = "..."`.
    #[error("{file} names no channel")]
    NoChannel { file: PathBuf },
    /// rustup is not installed.
    #[error("cannot run rustup ({source}): install rustup from https://rustup.rs, then run `gpurun setup` again")]
    NoRustup { source: io::Error },
    /// `rustup toolchain install` of the pinned nightly failed.
    #[error("`rustup toolchain install {channel}` failed; run it by hand to see why")]
    InstallFailed { channel: String },
    /// The pinned toolchain lacks a component (`rust-src`, `llvm-tools`).
    #[error("{sysroot} lacks {needed}: run `rustup component add rust-src llvm-tools --toolchain {channel}`")]
    SysrootLacks { sysroot: PathBuf, needed: &'static str, channel: String },
    /// The pinned toolchain has no llvm-tools.
    #[error("{channel} lacks llvm-tools: run `rustup component add llvm-tools --toolchain {channel}`")]
    NoLlvmTools { channel: String },

    /// The std port folder lacks its sources or its patches.
    #[error("{dir} lacks library/ files or patches/*.patch: restore it from git")]
    PortIncomplete { dir: PathBuf },
    /// A new file of the std port has the path of an upstream file.
    #[error("{file} would replace upstream's {upstream}: change upstream files with a patch in {patches}")]
    PortReplacesUpstream { file: PathBuf, upstream: PathBuf, patches: PathBuf },
    /// A std patch is not a patch (no diffs, a bad header, an unparsable diff).
    #[error("std patch {patch}: {why}")]
    BadPatch { patch: String, why: String },
    /// The upstream file a std patch edits is not there.
    #[error("std patch {patch}: cannot read {file} ({source}): did upstream move or remove it?")]
    PatchTargetMissing { patch: String, file: PathBuf, source: io::Error },
    /// A std patch does not apply: upstream's file is not the one it was made for.
    #[error(
        "std patch {patch} does not apply to {file} ({why}): upstream's file differs from the one the patch \
         was made for (another nightly? see gpu-toolchain/std/README.md, \"Moving to a newer nightly\")"
    )]
    PatchDoesNotApply { patch: String, file: String, why: String },

    /// A file or folder could not be read, written, made or removed.
    #[error("cannot {action} {path}: {source}")]
    Io { action: &'static str, path: PathBuf, source: io::Error },
    /// A file could not be copied.
    #[error("cannot copy {from} to {to}: {source}")]
    Copy { from: PathBuf, to: PathBuf, source: io::Error },
    /// The made toolchain could not be swapped in (`whither`: "aside", "into place").
    #[error("cannot move {path} {whither}: {source}")]
    Move { path: PathBuf, whither: &'static str, source: io::Error },
    /// A tool (cargo, rustc, rustup, llvm-readobj, ...) could not be started.
    #[error("cannot run {tool}: {source}")]
    Spawn { tool: PathBuf, source: io::Error },
    /// An llvm tool ran on `file` and failed; its stderr says why.
    #[error("{tool} failed on {file}: {stderr}")]
    Tool { tool: String, file: PathBuf, stderr: String },
    /// An AMDGPU code object whose ELF headers or symbol table do not parse.
    #[error("{file} is not a readable ELF code object ({why}): build it again with `gpurun build`")]
    NotElf { file: PathBuf, why: String },
}

impl Error {
    /// The error of an I/O `action` ("read", "write", ...) on `path`, for `map_err`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { action, path, source }
    }

    /// The error of starting `tool`, for `map_err`.
    pub fn spawn(tool: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let tool = tool.into();
        move |source| Error::Spawn { tool, source }
    }

    /// gpurun's exit code: 2 (usage) for a bad arch, a folder that is not a
    /// crate, a file `init` will not replace or a missing `--bin`; 4 (no code
    /// object) when cargo failed or built none; 1 for the rest.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::UnknownArch { .. }
            | Error::ArchTooOld { .. }
            | Error::NotACrate(_)
            | Error::Refused { .. }
            | Error::OtherToolchain { .. }
            | Error::SeveralPrograms { .. } => 2,
            Error::CargoFailed { .. } | Error::NoCodeObject { .. } => 4,
            _ => 1,
        }
    }
}

/// What stops [`crate::ptx_parts::split`] and [`crate::ptx_parts::merge`]:
/// PTX they do not understand, or parts that do not make one module. Lines
/// are numbered from 1.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PtxError {
    #[error("unterminated function header at line {line}")]
    UnterminatedHeader { line: usize },
    #[error("unterminated function body from line {line}")]
    UnterminatedBody { line: usize },
    #[error("a module-scope variable over several lines at line {line}")]
    MultiLineVariable { line: usize },
    #[error("a module-scope line this splitter does not know, at line {line}: {text}")]
    UnknownLine { line: usize, text: String },
    #[error("no .version/.target header")]
    NoHeader,
    #[error("no PTX parts to merge")]
    NoParts,
    #[error("a definition without a name")]
    UnnamedDefinition,
    #[error("{name} is defined in two parts")]
    FunctionTwice { name: String },
    #[error("variable {name} is defined in two parts")]
    VariableTwice { name: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message, word for word as it was when these errors were strings
    /// (the right-hand sides are the `format!`s they replaced).
    #[test]
    fn messages_read_as_before() {
        let (p, q, r) = (Path::new("/a/b"), Path::new("/c/d"), Path::new("/e/f"));
        let e = || io::Error::from(io::ErrorKind::NotFound);
        let (channel, name, needed) = ("nightly-x", "x.patch", "lib/rustlib");
        let cases: Vec<(Error, String)> = vec![
            (
                Error::UnknownArch { name: "gfx8".into() },
                "unknown GPU arch `gfx8`: use an AMD gfx name (gfx90a, gfx942, gfx1100, ...) \
                 or an NVIDIA sm name (sm_70 ... sm_120, e.g. sm_90 for H100)"
                    .into(),
            ),
            (Error::NotACrate(p.into()), format!("{} is not a crate: it has no Cargo.toml", p.display())),
            (
                Error::Refused { path: p.into() },
                format!("{} exists and was not written by `gpurun init`: move it away, or pass --force", p.display()),
            ),
            (
                Error::OtherToolchain { path: p.into(), channel: channel.into() },
                format!("{} names another toolchain; `-Zbuild-std` needs {channel}: edit it, or pass --force", p.display()),
            ),
            (
                Error::SeveralPrograms { dir: p.into(), names: vec!["one".into(), "two".into()] },
                format!("{} has several programs ({}): choose one with --bin", p.display(), ["one", "two"].join(", ")),
            ),
            (
                Error::CargoFailed { dir: p.into(), arch: "sm_90".into() },
                format!("cargo failed to build {} for {}", p.display(), "sm_90"),
            ),
            (
                Error::NoCodeObject { dir: p.into() },
                format!("cargo built {} but reported no GPU code object (a `bin` or `cdylib` target is needed)", p.display()),
            ),
            (
                Error::LinkerMissing { path: p.into() },
                format!("the GPU linker {} is missing: run `gpurun setup`", p.display()),
            ),
            (
                Error::WrongSysroot { rustc: p.into(), sysroot: q.into(), toolchain: r.into() },
                format!(
                    "{} reports sysroot {}, not the patched toolchain {}: run `gpurun setup --force`",
                    p.display(),
                    q.display(),
                    r.display()
                ),
            ),
            (Error::NoChannel { file: p.into() }, format!("{} names no channel", p.display())),
            (
                Error::NoRustup { source: e() },
                format!("cannot run rustup ({}): install rustup from https://rustup.rs, then run `gpurun setup` again", e()),
            ),
            (
                Error::InstallFailed { channel: channel.into() },
                format!("`rustup toolchain install {channel}` failed; run it by hand to see why"),
            ),
            (
                Error::SysrootLacks { sysroot: p.into(), needed, channel: channel.into() },
                format!("{} lacks {needed}: run `rustup component add rust-src llvm-tools --toolchain {channel}`", p.display()),
            ),
            (
                Error::NoLlvmTools { channel: channel.into() },
                format!("{channel} lacks llvm-tools: run `rustup component add llvm-tools --toolchain {channel}`"),
            ),
            (
                Error::PortIncomplete { dir: p.into() },
                format!("{} lacks library/ files or patches/*.patch: restore it from git", p.display()),
            ),
            (
                Error::PortReplacesUpstream { file: p.into(), upstream: q.into(), patches: r.into() },
                format!(
                    "{} would replace upstream's {}: change upstream files with a patch in {}",
                    p.display(),
                    q.display(),
                    r.display()
                ),
            ),
            (
                Error::BadPatch { patch: name.into(), why: "holds no `diff --git` sections".into() },
                format!("std patch {name}: {}", "holds no `diff --git` sections"),
            ),
            (
                Error::PatchTargetMissing { patch: name.into(), file: p.into(), source: e() },
                format!("std patch {name}: cannot read {} ({}): did upstream move or remove it?", p.display(), e()),
            ),
            (
                Error::PatchDoesNotApply { patch: name.into(), file: "std/src/lib.rs".into(), why: "error applying hunk #1".into() },
                format!(
                    "std patch {name} does not apply to {} ({}): upstream's file differs from the one the patch \
                     was made for (another nightly? see gpu-toolchain/std/README.md, \"Moving to a newer nightly\")",
                    "std/src/lib.rs", "error applying hunk #1"
                ),
            ),
            (Error::io("remove the stale std build", p)(e()), format!("cannot remove the stale std build {}: {}", p.display(), e())),
            (
                Error::Copy { from: p.into(), to: q.into(), source: e() },
                format!("cannot copy {} to {}: {}", p.display(), q.display(), e()),
            ),
            (
                Error::Move { path: p.into(), whither: "aside", source: e() },
                format!("cannot move {} aside: {}", p.display(), e()),
            ),
            (
                Error::Move { path: p.into(), whither: "into place", source: e() },
                format!("cannot move {} into place: {}", p.display(), e()),
            ),
            (Error::spawn("llvm-readobj")(e()), format!("cannot run {}: {}", "llvm-readobj", e())),
            (Error::spawn(p)(e()), format!("cannot run {}: {}", p.display(), e())),
            (
                Error::Tool { tool: "llvm-readobj".into(), file: p.into(), stderr: "bad\n".into() },
                format!("{} failed on {}: {}", "llvm-readobj", p.display(), "bad\n"),
            ),
            (
                Error::NotElf { file: p.into(), why: "invalid ELF header".into() },
                format!("{} is not a readable ELF code object (invalid ELF header): build it again with `gpurun build`", p.display()),
            ),
        ];
        for (err, was) in cases {
            assert_eq!(err.to_string(), was, "{err:?}");
        }
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Error::UnknownArch { name: "x".into() }.exit_code(), 2);
        assert_eq!(Error::NotACrate("/x".into()).exit_code(), 2);
        assert_eq!(Error::Refused { path: "/x".into() }.exit_code(), 2);
        assert_eq!(Error::CargoFailed { dir: "/x".into(), arch: "sm_90".into() }.exit_code(), 4);
        assert_eq!(Error::NoCodeObject { dir: "/x".into() }.exit_code(), 4);
        assert_eq!(Error::NoChannel { file: "/x".into() }.exit_code(), 1);
    }
}
