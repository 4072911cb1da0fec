//! `gpurun-dev`: the project's own tools (not shipped in `gpurun`).
//!
//! - `gpurun-dev bench`: the benchmark matrix (benches/BENCH.md), results in
//!   bench-results/.
//! - `gpurun-dev acceptance [BUNDLE]`: the GPU acceptance suite on the GPU
//!   found, from a bundle of built programs (scripts/make-gpu-bundle.sh).
//! - `gpurun-dev selftest`: both on the GPU found, one report file to attach
//!   to an issue (builds the bundle, or `--bundle DIR` where there is no Rust).
//! - `gpurun-dev ptx-split PTX --out DIR`: a PTX module as the parts `gpurun
//!   run` compiles (for measuring ptxas part by part, xtask/probes).
//! - `gpurun-dev std-docs [--check]`: std's documentation examples for
//!   panics and poisoning as examples/unwind-checks' `std-docs` program.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use ::tests::acceptance::{self, CHECKS, Suite};
use xtask::bench::run::{self as bench, BenchArgs};
use xtask::selftest::{self, SelftestArgs};
use xtask::Failure;

#[derive(Parser, Debug)]
#[command(name = "gpurun-dev", about = "gpurun's development tools: the benchmark matrix, the GPU acceptance suite and the selftest")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the benchmark matrix (benches/BENCH.md) and render bench-results/README.md
    Bench(BenchArgs),
    /// The acceptance suite and the benchmark matrix on the GPU found, with one report file to attach to an issue
    Selftest(SelftestArgs),
    /// Run the GPU acceptance suite: every end-to-end check, on the GPU found
    Acceptance {
        /// A bundle of built programs: gpurun, <name>-<arch>.ptx/.cubin/.elf, <name>.expected
        #[arg(default_value = "gpu-bundle")]
        bundle: PathBuf,
        /// The programs' arch suffix (default: the first GPU `gpurun devices` lists)
        #[arg(long)]
        arch: Option<String>,
        /// The gpurun to test (default: BUNDLE/gpurun, else the one beside gpurun-dev)
        #[arg(long, value_name = "PATH")]
        gpurun: Option<PathBuf>,
        /// Where each check's stdout and stderr go (default: BUNDLE/logs)
        #[arg(long, value_name = "DIR")]
        logs: Option<PathBuf>,
        /// Skip this check (repeatable)
        #[arg(long, value_name = "NAME")]
        skip: Vec<String>,
        /// Run only the checks whose name contains this
        #[arg(long, value_name = "TEXT")]
        only: Option<String>,
        /// Longest one check may run, in seconds
        #[arg(long, value_name = "SECONDS", default_value_t = 180)]
        timeout: u64,
        /// List the checks and exit
        #[arg(long)]
        list: bool,
        /// Run on the AMD ISA emulator as --arch (gfx1100, gfx942): the checks it runs (`EMULATED`)
        #[arg(long, requires = "arch")]
        emulate: bool,
    },
    /// Write std's documentation examples for panics, poisoning and scoped threads (the pinned nightly's rust-src) as examples/unwind-checks/src/bin/std-docs.rs
    StdDocs {
        /// Write nothing; exit 1 if the committed file is not what would be written
        #[arg(long)]
        check: bool,
    },
    /// Split a PTX module as `gpurun run` does before `ptxas -c`: DIR/partN.ptx, and the register cap on stdout
    PtxSplit {
        ptx: PathBuf,
        /// Where the parts go (created)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Number of parts; 0: one function per part
        #[arg(long, default_value_t = 0)]
        parts: usize,
    },
}

fn main() -> ExitCode {
    let code = match dispatch(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gpurun-dev: {e:#}");
            e.downcast_ref::<Failure>().map_or(1, |f| f.code)
        }
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::PtxSplit { ptx, out, parts } => {
            let text = std::fs::read_to_string(&ptx).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", ptx.display()))?;
            let parts = if parts == 0 { usize::MAX } else { parts };
            let (parts, max_registers) = gpu_toolchain::ptx_parts::split(&text, parts)?;
            std::fs::create_dir_all(&out)?;
            for (i, p) in parts.iter().enumerate() {
                std::fs::write(out.join(format!("part{i}.ptx")), p)?;
            }
            println!("{} parts in {}; register cap: {}", parts.len(), out.display(), max_registers.map_or("none".into(), |n| n.to_string()));
            Ok(0)
        }
        Command::StdDocs { check } => {
            let src = xtask::std_docs::std_src().map_err(anyhow::Error::msg)?;
            let corpus = xtask::std_docs::generate(&src).map_err(anyhow::Error::msg)?;
            let out = gpu_toolchain::Paths::from_env().repo.join(xtask::std_docs::OUTPUT);
            println!(
                "std-docs: {} code blocks in {}, {} run, {} left out",
                corpus.found,
                src.display(),
                corpus.kept,
                corpus.left_out.len()
            );
            for (at, why) in &corpus.left_out {
                println!("  left out {at}: {why}");
            }
            if check {
                let committed = std::fs::read_to_string(&out).unwrap_or_default();
                if committed != corpus.source {
                    println!("{} is not what `gpurun-dev std-docs` writes: run it and commit the file", out.display());
                    return Ok(1);
                }
                println!("{} is current", out.display());
            } else {
                std::fs::write(&out, &corpus.source).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
                println!("wrote {}", out.display());
            }
            Ok(0)
        }
        Command::Bench(args) => bench::bench(args),
        Command::Selftest(args) => selftest::selftest(args),
        Command::Acceptance { bundle, arch, gpurun, logs, skip, only, timeout, list, emulate } => {
            let usage = |message: String| Failure { code: launcher::exit::USAGE, message };
            let unknown: Vec<&String> = skip.iter().filter(|s| !CHECKS.iter().any(|c| &c.name == s)).collect();
            if !unknown.is_empty() {
                return Err(usage(format!("no check named {unknown:?}; `--list` lists them")).into());
            }
            let chosen: Vec<_> = CHECKS
                .iter()
                .filter(|c| !skip.iter().any(|s| s == c.name) && only.as_ref().is_none_or(|o| c.name.contains(o.as_str())))
                .filter(|c| !emulate || acceptance::emulated_options(c.name).is_some())
                .collect();
            if list {
                let mut out = std::io::stdout().lock();
                for c in &chosen {
                    // A closed pipe (`| head`) ends the listing quietly.
                    if writeln!(out, "{:<26} exit {:>3}  {:?} {}", c.name, c.exit, c.program, c.args.join(" ")).is_err() {
                        break;
                    }
                }
                return Ok(0);
            }
            let gpurun = match gpurun {
                Some(g) => g,
                None if bundle.join("gpurun").exists() => bundle.join("gpurun"),
                None => xtask::gpurun_beside_me().map_err(usage)?,
            };
            let arch = match arch {
                Some(a) => a,
                None => xtask::machine::list_gpus(&gpurun).into_iter().next().map(|g| g.arch).ok_or_else(|| Failure {
                    code: launcher::exit::NO_DEVICE,
                    message: format!("`{} devices` found no GPU; the acceptance suite needs one (pass --arch to run it anyway)", gpurun.display()),
                })?,
            };
            let logs = logs.unwrap_or_else(|| bundle.join("logs"));
            std::fs::create_dir_all(&logs).map_err(|e| usage(format!("cannot create {}: {e}", logs.display())))?;
            let suite = Suite { bundle, gpurun, arch, logs, limit: Duration::from_secs(timeout), emulate };
            println!("acceptance: {} checks of {} for {}, logs in {}", chosen.len(), suite.bundle.display(), suite.arch, suite.logs.display());
            let results: Vec<_> = chosen.iter().map(|c| suite.run(c)).collect();
            let (_, fail, _, line) = acceptance::summary(&results);
            println!("{line}");
            Ok(if fail == 0 { 0 } else { 1 })
        }
    }
}
