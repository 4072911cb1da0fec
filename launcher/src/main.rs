//! `gpurun`: the command line. Errors become messages on stderr and the exit
//! codes of `launcher::exit` (README has the table).

mod run_cmd;
mod toolchain_cmds;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Run ordinary Rust std programs on AMD and NVIDIA GPUs: each std::thread is
/// one warp (NVIDIA) or wavefront (AMD).
#[derive(Parser, Debug)]
#[command(name = "gpurun", version, propagate_version = true)]
#[command(after_help = "Exit codes: the program's own code, as Linux gives it (the low 8 bits: exit(-1) is 255); \
101 after a panic; 134 after an abort or a stack overflow; 2 usage; 3 no GPU or driver; \
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
        /// (never one it cannot read, such as a folder). Both files are written, or neither
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
// Numeric options take `-1` as their value (`allow_negative_numbers`), so it
// gets the option's own error, not clap's "unexpected argument '-1'".
pub struct RunArgs {
    /// Device index within the vendor's API (as `gpurun devices` lists them)
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    pub device: u32,
    /// Threads (warps) to launch; default: as many as can be resident. Above that is an error
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Stack of each thread for its frames, in bytes [default: 512K]. Frames
    /// live in global memory (code linked by gpu-ld); a thread asking more
    /// (`Builder::stack_size`) gets a heap stack; on NVIDIA other lanes get
    /// 8K each. For code linked without gpu-ld (frames in private memory)
    /// this sizes the driver's call stack instead
    #[arg(long, allow_negative_numbers = true, value_parser = parse_stack_size)]
    pub stack_size: Option<u64>,
    /// The driver's per-lane call stack, in bytes [default: 64K, less on a
    /// device where every lane's share passes an eighth of its memory]: return
    /// addresses and saved registers, about 16 bytes a level of recursion on
    /// NVIDIA. Deeper recursion stops with std's stack overflow report
    #[arg(long, allow_negative_numbers = true, value_parser = parse_stack_size)]
    pub call_stack_size: Option<u64>,
    /// Device heap, in bytes [default: the device's free memory once the
    /// launch's stacks are allocated, less 1/32 (at least 1G, or a quarter)].
    /// Blocks above 32K take whole pages and merge when freed; running out
    /// prints std's message and this heap's size
    #[arg(long, allow_negative_numbers = true, value_parser = parse_nonzero_size)]
    pub heap_size: Option<u64>,
    /// Stop after this many seconds and report what each thread was doing,
    /// host calls still running included; gpurun exits (code 124) within a
    /// second of it, even with a host call blocked for good
    #[arg(long, allow_hyphen_values = true, value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
    /// Longest sleep of an idle warp between polls, in nanoseconds (0: the runtime's default)
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
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
    #[arg(long, value_name = "PATH", value_parser = clap::builder::OsStringValueParser::new().try_map(|s| parse_path(&s)))]
    pub json_file: Option<PathBuf>,
    /// Seed for the program's random hash keys [default: random]
    #[arg(long, allow_negative_numbers = true)]
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
    /// Confine the program's paths beneath DIR, as a chroot: `/` is DIR, `..`
    /// stops there, symlinks are followed only inside it (Linux 5.6+
    /// openat2 RESOLVE_IN_ROOT), /proc is out of reach, and the program
    /// starts in DIR's top. The environment passed is then only what --env
    /// names (and RAYON_NUM_THREADS). Combines with --fs. Not a security
    /// boundary against the GPU driver (see launcher/README.md)
    #[arg(long, value_name = "DIR")]
    pub fs_root: Option<PathBuf>,
    /// Pass NAME=VALUE, or NAME with gpurun's own value (skipped if unset),
    /// to the program's environment; repeatable. Without --fs-root the
    /// program gets gpurun's whole environment plus these
    #[arg(long = "env", value_name = "NAME[=VALUE]", value_parser = parse_env)]
    pub env: Vec<EnvArg>,
    /// Host-call ring slots (a power of two)
    #[arg(long, allow_negative_numbers = true, default_value_t = launcher::run::DEFAULT_RING_SLOTS, value_parser = parse_ring_slots, hide = true)]
    pub ring_slots: u32,
    /// The program (code object or crate directory), then its arguments
    /// (an option gpurun does not know, before PROGRAM, is an error; a
    /// program whose path starts with `-` goes after `--`)
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<OsString>,
}

/// One `--env`: a name, and the value to give it (`None`: gpurun's own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvArg {
    pub name: String,
    pub value: Option<String>,
}

/// `NAME=VALUE` or `NAME`: a name is not empty and has no `=`.
fn parse_env(s: &str) -> Result<EnvArg, String> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (s, None),
    };
    if name.is_empty() {
        return Err(format!("`{s}` names no variable (NAME or NAME=VALUE)"));
    }
    Ok(EnvArg { name: name.to_string(), value })
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

/// A size of 1 byte or more.
fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("must be more than 0 bytes".into()),
        n => Ok(n),
    }
}

/// A stack's size: more than 0 (a call stack of 0 means "not given" to the
/// runtime, which would turn its overflow checks off) and a multiple of 16,
/// the alignment of the frames laid out one stack after another.
fn parse_stack_size(s: &str) -> Result<u64, String> {
    let n = parse_nonzero_size(s)?;
    if n % 16 != 0 {
        return Err(format!("a stack's size must be a multiple of 16 bytes, not {n}"));
    }
    Ok(n)
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s.trim().trim_end_matches('s').parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("the timeout must be a positive number of seconds, not `{s}`"));
    }
    match std::time::Duration::try_from_secs_f64(v) {
        Ok(d) if d.is_zero() => Err(format!("`{s}` seconds is less than a nanosecond")),
        Ok(d) => Ok(d),
        Err(_) => Err(format!("`{s}` seconds is too long a timeout")),
    }
}

/// A path that is not empty.
fn parse_path(s: &std::ffi::OsStr) -> Result<PathBuf, String> {
    if s.is_empty() { Err("an empty path".into()) } else { Ok(PathBuf::from(s)) }
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
        return ExitCode::from(launcher::exit::status_of(code));
    }
    launcher::timeline::start();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            eprintln!("gpurun: {}\n\nFor more information, try '--help'.", not_utf8(std::env::args_os()));
            return ExitCode::from(launcher::exit::USAGE as u8);
        }
        Err(e) => e.exit(),
    };
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
    ExitCode::from(launcher::exit::status_of(code))
}

/// clap's error for a value that is not UTF-8 names no option: this names it.
fn not_utf8(args: impl Iterator<Item = OsString>) -> String {
    let args: Vec<OsString> = args.collect();
    let Some(i) = args.iter().position(|a| a.to_str().is_none()) else {
        return "an argument is not UTF-8 text".into();
    };
    let value = args[i].to_string_lossy();
    match args[..i].last().and_then(|a| a.to_str()).filter(|a| a.starts_with('-')) {
        Some(option) => format!("the value of {option}, `{value}`, is not UTF-8 text"),
        None => format!("`{value}` is not UTF-8 text"),
    }
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
    fn fs_root_and_env() {
        let Command::Run(r) = parse(&["run", "--fs-root", "/srv/box", "--env", "A=1", "--env", "B", "--env", "C=", "p"]).unwrap().command
        else {
            panic!()
        };
        assert_eq!(r.fs_root.as_deref(), Some(std::path::Path::new("/srv/box")));
        let env = |n: &str, v: Option<&str>| EnvArg { name: n.into(), value: v.map(Into::into) };
        assert_eq!(r.env, [env("A", Some("1")), env("B", None), env("C", Some(""))]);
        assert_eq!(parse(&["run", "--env", "=x", "p"]).unwrap_err().exit_code(), 2, "no name");
        assert_eq!(parse(&["run", "--env", "", "p"]).unwrap_err().exit_code(), 2);
        let Command::Run(r) = parse(&["run", "p"]).unwrap().command else { panic!() };
        assert_eq!((r.fs_root, r.env), (None, vec![]));
    }

    #[test]
    fn the_environment_under_a_root_is_the_allow_list() {
        let path = std::env::var("PATH").expect("tests run with a PATH");
        let args = ["run", "--fs-root", "/x", "--env", "A=1", "--env", "PATH", "--env", "GPURUN_UNSET_9", "p"];
        let Command::Run(r) = parse(&args).unwrap().command
        else {
            panic!()
        };
        assert_eq!(run_cmd::program_env(&r), [b"A=1".to_vec(), format!("PATH={path}").into_bytes()]);
        // Without a root: gpurun's environment, --env replacing an entry.
        let Command::Run(r) = parse(&["run", "--env", "PATH=/only", "p"]).unwrap().command else { panic!() };
        let env = run_cmd::program_env(&r);
        assert!(env.len() > 1 && env.iter().filter(|kv| kv.starts_with(b"PATH=")).count() == 1);
        assert!(env.contains(&b"PATH=/only".to_vec()));
    }

    #[test]
    fn bad_options_are_usage_errors() {
        assert!(parse(&["run"]).is_err());
        assert!(parse(&["run", "--stack-size", "12Q", "p"]).is_err());
        assert!(parse(&["run", "--timeout", "-1", "p"]).is_err());
        assert!(parse(&["run", "--ring-slots", "3", "p"]).is_err());
        assert!(parse(&["run", "--fs", "some", "p"]).is_err());
        assert!(parse(&["frobnicate"]).is_err());
        // An unknown option before the program is not taken for the program.
        assert_eq!(parse(&["run", "--frobnicate", "p.ptx"]).unwrap_err().exit_code(), 2);
        let Command::Run(r) = parse(&["run", "--", "-p.ptx", "a"]).unwrap().command else { panic!() };
        assert_eq!(r.command, ["-p.ptx", "a"], "a program starting with `-` after `--`");
        for (opt, v) in [("--timeout", "1e20"), ("--timeout", "NaN"), ("--timeout", "inf"), ("--threads", "0")] {
            assert_eq!(parse(&["run", opt, v, "p"]).unwrap_err().exit_code(), 2, "{opt} {v}");
        }
        for opt in ["--stack-size", "--call-stack-size", "--heap-size"] {
            let e = parse(&["run", opt, "0", "p"]).unwrap_err();
            assert!(e.to_string().contains(opt) && e.to_string().contains("more than 0"), "{e}");
        }
        assert!(parse(&["run", "--stack-size", "1000", "p"]).unwrap_err().to_string().contains("multiple of 16"));
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
