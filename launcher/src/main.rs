//! `gpurun`: the command line. Errors become messages on stderr and the exit
//! codes of `launcher::exit` (README has the table).

mod run_cmd;
mod toolchain_cmds;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Run ordinary Rust std programs on AMD and NVIDIA GPUs: each std::thread is
/// one warp (NVIDIA) or wavefront (AMD).
#[derive(Parser, Debug)]
#[command(name = "gpurun", version, propagate_version = true)]
#[command(after_help = "Exit codes: the program's own code; 101 after a panic; 2 usage; 3 no GPU or driver; \
4 bad code object or build; 5 device fault; 6 host-call protocol violation; 124 timeout; 1 other launcher errors.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a GPU program: a code object (AMDGPU .elf, NVIDIA .ptx/.cubin) or a crate directory (built first)
    Run(RunArgs),
    /// List the GPUs: name, vendor, arch, resident-warp capacity, memory
    Devices {
        /// Print JSON: {"devices": [...], "drivers": [...]}
        #[arg(long)]
        json: bool,
        /// List the emulated AMD device of this arch (see `run --emulate`)
        #[arg(long, value_name = "ARCH")]
        emulate: Option<String>,
    },
    /// Make the patched toolchain the GPU builds use
    Setup {
        /// Rebuild it even if it is current
        #[arg(long)]
        force: bool,
    },
    /// Build a crate for a GPU arch; prints the code object's path
    Build {
        /// The crate directory
        #[arg(default_value = ".")]
        dir: PathBuf,
        #[command(flatten)]
        build: BuildArgs,
    },
    /// Where a code object's size goes: bytes per crate and per function (like `cargo bloat`)
    Size {
        /// A code object (.ptx or AMDGPU .elf), or a crate directory (built first)
        #[arg(default_value = ".")]
        program: PathBuf,
        /// For a crate directory: how to build it
        #[command(flatten)]
        build: BuildArgs,
        /// How many of the largest functions to list
        #[arg(short = 'n', long, default_value_t = 30)]
        top: usize,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        /// Instead of the sizes: why each function whose name contains PATTERN is
        /// in the program, as the shortest chain of calls, function addresses and
        /// vtables from the kernel (PTX only)
        #[arg(long, value_name = "PATTERN")]
        why: Option<String>,
    },
    /// Show the cubin cache (PTX compiled by ptxas before a run), or empty it
    Cache {
        #[command(subcommand)]
        action: Option<CacheAction>,
    },
    /// Make a crate a GPU crate: writes its .cargo/config.toml and rust-toolchain.toml,
    /// after which plain `cargo build` and `cargo run` build and run it on the GPU
    /// (and `cargo build -Zbuild-std --target amdgcn-amd-amdhsa` builds a cdylib crate
    /// for rustc's built-in AMD target, linked by gpu-ld)
    Init {
        /// The crate directory
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// The arch `cargo build` builds for (the other vendor: `cargo build-amd` / `build-nvidia`)
        /// [default: the first GPU's, else sm_90]
        #[arg(long)]
        arch: Option<String>,
        /// Replace a .cargo/config.toml or rust-toolchain.toml that gpurun did not write
        #[arg(long)]
        force: bool,
    },
    /// Check the toolchain, the GPU driver libraries and the devices
    Doctor {
        /// Machine-readable output
        #[arg(long)]
        json: bool,
    },
    /// Build and run the threads demo on the GPU found
    Demo,
}

/// How `build` (and `size`, for a crate directory) builds a crate.
#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// gfx90a, gfx942, gfx1100, sm_80, sm_90, ... (default: the first GPU's)
    #[arg(long)]
    pub arch: Option<String>,
    /// Optimised build
    #[arg(long)]
    pub release: bool,
    /// Which `bin` target, when the package has several
    #[arg(long)]
    pub bin: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// Remove every cached cubin
    Clean,
}

#[derive(Args, Debug, Clone)]
#[command(
    override_usage = "gpurun run [OPTIONS] PROGRAM [-- ARGS]...",
    after_help = "Everything after PROGRAM is passed to the program (a `--` right after PROGRAM is dropped), \
so `gpurun run` works as a cargo runner. Sizes take K, M, G suffixes (powers of 1024)."
)]
pub struct RunArgs {
    /// Device index within the vendor's API (as `gpurun devices` lists them)
    #[arg(long, default_value_t = 0)]
    pub device: u32,
    /// Threads (warps) to launch; default: as many as can be resident. Above that is an error
    #[arg(long)]
    pub threads: Option<u32>,
    /// Stack of each thread for its frames, in bytes [default: 512K]. Frames
    /// live in global memory (code linked by gpu-ld); a thread asking more
    /// (`Builder::stack_size`) gets a heap stack; on NVIDIA other lanes get
    /// 8K each. For code linked without gpu-ld (frames in private memory)
    /// this sizes the driver's call stack instead
    #[arg(long, value_parser = parse_size)]
    pub stack_size: Option<u64>,
    /// The driver's per-lane call stack, in bytes [default: 32K, less on a
    /// device where every lane's share passes an eighth of its memory]: return
    /// addresses and saved registers, about 16 bytes a level of recursion.
    /// Deeper recursion stops with std's stack overflow report
    #[arg(long, value_parser = parse_size)]
    pub call_stack_size: Option<u64>,
    /// Device heap, in bytes [default: 512M or a quarter of free memory, the lesser]
    #[arg(long, value_parser = parse_size)]
    pub heap_size: Option<u64>,
    /// Stop after this many seconds and report what each thread was doing, host calls still running included; gpurun exits (code 124) within a second of it, even with a host call blocked for good
    #[arg(long, value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
    /// Longest sleep of an idle warp between polls, in nanoseconds (0: the runtime's default)
    #[arg(long, default_value_t = 0)]
    pub idle_sleep_ns: u64,
    /// For a crate directory: the arch to build for [default: the device's]
    #[arg(long)]
    pub arch: Option<String>,
    /// For a crate directory with several programs: which `bin`
    #[arg(long)]
    pub bin: Option<String>,
    /// Compile PTX afresh: neither read nor write the cubin cache (nor the driver's JIT cache)
    #[arg(long)]
    pub no_cache: bool,
    /// Write the final status as one JSON object on stderr (the last line)
    #[arg(long)]
    pub json: bool,
    /// Write the final status as JSON to this file
    #[arg(long, value_name = "PATH")]
    pub json_file: Option<PathBuf>,
    /// Seed for the program's random hash keys [default: random]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Let the runtime print extra diagnostics (LAUNCH_FLAG_TRACE)
    #[arg(long)]
    pub trace: bool,
    /// Print the launch shape and resource sizes
    #[arg(short, long)]
    pub verbose: bool,
    /// Run an AMD code object on the ISA emulator instead of a GPU, as this
    /// arch (gfx1100, gfx942, gfx90a): no AMD hardware needed, far slower
    #[arg(long, value_name = "ARCH")]
    pub emulate: Option<String>,
    /// What the program may do to the host's files and directories
    ///
    /// The program's std::fs calls are served by gpurun as the user running
    /// it; relative paths start at gpurun's working directory. Under
    /// read-only, opening to write, create, truncate or append and every
    /// change fail with PermissionDenied (EACCES); under none, every file and
    /// directory call does. Stdin (gpurun's) and current_dir work under all
    #[arg(long, value_enum, default_value_t = FsArg::All, value_name = "ACCESS")]
    pub fs: FsArg,
    /// Host-call ring slots (a power of two)
    #[arg(long, default_value_t = launcher::run::DEFAULT_RING_SLOTS, value_parser = parse_ring_slots, hide = true)]
    pub ring_slots: u32,
    /// The program (code object or crate directory), then its arguments
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}

/// `--fs`: the program's access to the host's files.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsArg {
    /// Whatever the user running gpurun may do
    All,
    /// Read files, their metadata and directories; change nothing
    ReadOnly,
    /// No file or directory calls
    None,
}

impl FsArg {
    pub fn access(self) -> launcher::ring::calls::FsAccess {
        use launcher::ring::calls::FsAccess;
        match self {
            FsArg::All => FsAccess::All,
            FsArg::ReadOnly => FsAccess::ReadOnly,
            FsArg::None => FsAccess::None,
        }
    }
}

/// `16K`, `512M`, `1G`, `4096`, `64KiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    let n: u64 = digits.trim().parse().map_err(|_| format!("`{s}` is not a size (e.g. 4096, 16K, 512M, 1G)"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("unknown size unit `{unit}` in `{s}` (use K, M or G)")),
    };
    n.checked_mul(mult).ok_or_else(|| format!("`{s}` is too large"))
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s.trim().trim_end_matches('s').parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("the timeout must be a positive number of seconds, not `{s}`"));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

fn parse_ring_slots(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if n.is_power_of_two() && (2..=1 << 20).contains(&n) {
        Ok(n)
    } else {
        Err(format!("ring slots must be a power of two between 2 and 2^20, not {n}"))
    }
}

fn main() -> ExitCode {
    // The patched toolchain's GPU linker (gpu-ld) is this binary under another name
    // (`gpurun setup` installs it), so there is one program to build and ship.
    let argv0 = std::env::args_os().next().unwrap_or_default();
    if std::path::Path::new(&argv0).file_name().is_some_and(|n| n == "gpu-ld") {
        let code = gpu_ld::main_with_args(std::env::args_os().skip(1).collect());
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    launcher::timeline::start();
    let cli = Cli::parse();
    let emulate = match &cli.command {
        Command::Run(r) => r.emulate.clone(),
        Command::Devices { emulate, .. } => emulate.clone(),
        _ => None,
    };
    if let Some(arch) = emulate {
        if let Err(e) = launcher::emulate::enable(&arch) {
            eprintln!("gpurun: {e}");
            return ExitCode::from(2);
        }
    }
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gpurun: {e:#}");
            run_cmd::exit_code_of(&e)
        }
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(args) => run_cmd::run(args),
        Command::Devices { json, .. } => run_cmd::devices(json),
        Command::Setup { force } => toolchain_cmds::setup(force),
        Command::Build { dir, build } => toolchain_cmds::build(dir, build),
        Command::Size { program, build, top, json, why } => toolchain_cmds::size(program, build, top, json, why),
        Command::Cache { action } => run_cmd::cache(matches!(action, Some(CacheAction::Clean))),
        Command::Init { dir, arch, force } => toolchain_cmds::init(dir, arch, force),
        Command::Doctor { json } => toolchain_cmds::doctor(json),
        Command::Demo => toolchain_cmds::demo(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("gpurun").chain(args.iter().copied()))
    }

    #[test]
    fn run_options_and_program_args() {
        let Command::Run(r) =
            parse(&["run", "--threads", "8", "--stack-size", "32K", "--call-stack-size", "64K", "p.ptx", "-x", "--threads", "y"])
                .unwrap()
                .command
        else {
            panic!()
        };
        assert_eq!(r.threads, Some(8));
        assert_eq!(r.stack_size, Some(32 << 10));
        assert_eq!(r.call_stack_size, Some(64 << 10));
        assert_eq!(r.command, ["p.ptx", "-x", "--threads", "y"]);
        let Command::Run(r) = parse(&["run", "p.elf", "--", "a"]).unwrap().command else { panic!() };
        assert_eq!(r.command, ["p.elf", "--", "a"]);
        assert_eq!((r.stack_size, r.call_stack_size), (None, None));
        assert_eq!(r.idle_sleep_ns, 0);
        assert_eq!(r.fs, FsArg::All, "files: all by default");
    }

    #[test]
    fn fs_access() {
        use launcher::ring::calls::FsAccess;
        for (arg, access) in [("all", FsAccess::All), ("read-only", FsAccess::ReadOnly), ("none", FsAccess::None)] {
            let Command::Run(r) = parse(&["run", "--fs", arg, "p.ptx"]).unwrap().command else { panic!() };
            assert_eq!(r.fs.access(), access);
            assert_eq!(access.name(), arg, "the names gpurun and rt-common use agree");
        }
        // After the program, --fs is the program's argument.
        let Command::Run(r) = parse(&["run", "p.ptx", "--fs", "none"]).unwrap().command else { panic!() };
        assert_eq!(r.fs, FsArg::All);
        assert_eq!(r.command, ["p.ptx", "--fs", "none"]);
        assert_eq!(parse(&["run", "--fs", "readonly", "p"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn bad_options_are_usage_errors() {
        assert!(parse(&["run"]).is_err());
        assert!(parse(&["run", "--stack-size", "12Q", "p"]).is_err());
        assert!(parse(&["run", "--timeout", "-1", "p"]).is_err());
        assert!(parse(&["run", "--ring-slots", "3", "p"]).is_err());
        assert!(parse(&["run", "--fs", "some", "p"]).is_err());
        assert!(parse(&["frobnicate"]).is_err());
        assert_eq!(parse(&["run", "--threads", "x", "p"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16K"), Ok(16384));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn clap_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
