//! `gpurun-dev selftest`: the check a GPU owner runs with one command. It
//! finds the GPU (`gpurun devices --json`), builds the selftest bundle for
//! its arch (`scripts/make-selftest-bundle.sh`; `--bundle DIR` takes one
//! built elsewhere, so the GPU machine needs no Rust), runs the acceptance
//! suite and the benchmark matrix from it, and writes one Markdown report
//! to attach to an issue: the machine, the tools found, every result, what
//! was skipped and why, the ends of the logs.
//!
//! Exit code: 0 when everything that ran passed, 1 when anything failed, 3
//! (the launcher's "no device") when there is no GPU; the report is written
//! in each of these cases (not for 2, a filter that names nothing).

mod bench_stage;
pub mod probe;
pub mod report;

use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use clap::Args;

use crate::Failure;
use ::tests::acceptance::{CHECKS, Suite, Verdict};
use crate::bench::native::Compiler;
use crate::machine::Gpu;
use crate::bench::{slug, spec};
use bench_stage::BenchRun;
use probe::Facts;
use report::{CheckReport, Report, Stage, TAIL_LINES, tail};

#[derive(Args, Debug, Clone)]
#[command(after_help = "Without --bundle it builds the bundle here first (needs the Rust toolchain: \
`gpurun setup`). A GPU machine without Rust takes a bundle made elsewhere with \
scripts/make-selftest-bundle.sh ARCH: `gpu-bundle/gpurun-dev selftest --bundle gpu-bundle --out DIR`.")]
pub struct SelftestArgs {
    /// A bundle made by scripts/make-selftest-bundle.sh: run from it, build nothing
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    /// Where the report goes: DIR/selftest-<date>-<device>.md
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// The arch to test (default: the first GPU's)
    #[arg(long)]
    pub arch: Option<String>,
    /// The gpurun to test (default: BUNDLE/gpurun, else the one beside gpurun-dev)
    #[arg(long, value_name = "PATH")]
    pub gpurun: Option<PathBuf>,
    /// Run only the acceptance checks whose name contains this
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// Run only this benchmark
    #[arg(long, value_name = "ID")]
    pub bench_only: Option<String>,
    /// Leave out the acceptance suite
    #[arg(long)]
    pub skip_acceptance: bool,
    /// Leave out the benchmark matrix
    #[arg(long)]
    pub skip_bench: bool,
    /// Longest one acceptance check may run, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 180)]
    pub timeout: u64,
    /// Longest one benchmark program may run, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub bench_timeout: u64,
    /// Scratch folder for the logs, unpacked programs and bench results (default: under $TMPDIR)
    #[arg(long, value_name = "DIR")]
    pub work: Option<PathBuf>,
}

fn say(line: &str) {
    eprintln!("selftest: {line}");
}

pub fn selftest(args: SelftestArgs) -> anyhow::Result<i32> {
    check_filters(&args)?;
    let mut run = Run::start(args)?;
    let Some(gpu) = run.report.gpu.clone() else {
        let why = match &run.report.facts.driver_errors[..] {
            [] => "no GPU found".to_string(),
            errors => format!("no GPU found ({})", errors.join("; ")),
        };
        say(&why);
        return run.stop("no GPU found");
    };
    say(&format!("{}; report: {}; logs: {}", gpu.device, run.path.display(), run.work.display()));
    run.write()?;
    let bundle = match run.bundle() {
        Ok(b) => b,
        Err(why) => return run.stop(why),
    };
    run.report.acceptance = if run.args.skip_acceptance {
        Stage::Skipped("left out (--skip-acceptance)".into())
    } else {
        Stage::Done(acceptance(&run.args, &bundle, &run.gpurun, &run.arch(), &run.work))
    };
    run.write()?;
    run.report.bench = if run.args.skip_bench { Stage::Skipped("left out (--skip-bench)".into()) } else { run.bench(&bundle, &gpu)? };
    run.finish()
}

/// One selftest under way: its options, the report so far and where it goes.
struct Run {
    args: SelftestArgs,
    report: Report,
    /// The report file.
    path: PathBuf,
    work: PathBuf,
    gpurun: PathBuf,
}

impl Run {
    /// Probes the machine and makes the folders.
    fn start(args: SelftestArgs) -> anyhow::Result<Run> {
        let gpurun = initial_gpurun(&args);
        say(&format!("probing the machine with {}", gpurun.display()));
        let facts = Facts::probe(&gpurun);
        let (arch, gpu) = pick_gpu(&facts.gpus, args.arch.as_deref());
        let stem = report_stem(&args.out, &facts.date, gpu.as_ref());
        let work = args.work.clone().unwrap_or_else(|| std::env::temp_dir().join("gpurun-selftest").join(&stem));
        for dir in [&work, &args.out] {
            std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        }
        let mut report = Report {
            mode: match &args.bundle {
                Some(b) => format!("from the bundle `{}` (built elsewhere)", b.display()),
                None => "built here from the checkout (scripts/make-selftest-bundle.sh)".into(),
            },
            commit: "unknown".into(),
            skipped: gpu.as_ref().map_or_else(Vec::new, |g| tool_notes(&facts, g)),
            facts,
            gpu,
            arch,
            work: work.clone(),
            problems: Vec::new(),
            build_log_tail: None,
            acceptance: Stage::Pending,
            bench: Stage::Pending,
        };
        if !gpurun.is_file() {
            report.problems.push(format!("no gpurun at {} (pass --gpurun PATH)", gpurun.display()));
        }
        Ok(Run { path: args.out.join(format!("{stem}.md")), args, report, work, gpurun })
    }

    /// The arch tested (there is one once a GPU is found).
    fn arch(&self) -> String {
        self.report.arch.clone().unwrap_or_default()
    }

    fn write(&self) -> anyhow::Result<()> {
        std::fs::write(&self.path, self.report.markdown()).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.path.display()))
    }

    /// The bundle to run from, built here without `--bundle`; or why there is none.
    fn bundle(&mut self) -> Result<PathBuf, &'static str> {
        let bundle = match &self.args.bundle {
            Some(b) => b.clone(),
            None => build(&self.arch(), &self.work, &mut self.report).ok_or("the bundle was not built")?,
        };
        if let Err(why) = check_bundle(&bundle, &self.arch()) {
            self.report.problems.push(why);
            return Err("the bundle cannot be tested here");
        }
        if self.args.gpurun.is_none() && bundle.join("gpurun").is_file() {
            self.gpurun = bundle.join("gpurun");
        }
        self.report.commit = std::fs::read_to_string(bundle.join("COMMIT"))
            .map_or("unknown (no COMMIT in the bundle)".into(), |c| c.trim().to_string());
        Ok(bundle)
    }

    fn bench(&mut self, bundle: &Path, gpu: &Gpu) -> anyhow::Result<Stage<report::BenchReport>> {
        // The bundle's gpurun-dev: this executable may have been rebuilt (replaced) by the build.
        let dev = bundle.join("gpurun-dev");
        let dev = if dev.is_file() { dev } else { std::env::current_exe()? };
        let compiler = Compiler::for_gpu(gpu.backend);
        let native = self.report.facts.tool(compiler.name()).and_then(|t| t.path.clone());
        let arch = self.arch();
        let run = BenchRun {
            bundle,
            gpurun: &self.gpurun,
            dev: &dev,
            arch: &arch,
            work: &self.work,
            native: native.as_deref().map(|p| (compiler, p)),
            only: self.args.bench_only.as_deref(),
            timeout: self.args.bench_timeout,
        };
        say("the benchmark matrix");
        let (stage, problems) = run.run();
        self.report.problems.extend(problems);
        Ok(stage)
    }

    /// Marks the stages not reached, and why; then [`Run::finish`].
    fn stop(mut self, why: &str) -> anyhow::Result<i32> {
        self.report.acceptance = Stage::Skipped(why.into());
        self.report.bench = Stage::Skipped(why.into());
        self.finish()
    }

    /// Writes the report, prints the failures and where the report is; the exit code.
    fn finish(self) -> anyhow::Result<i32> {
        self.write()?;
        for f in self.report.failures() {
            say(&format!("FAIL: {f}"));
        }
        say(&format!("exit code {}; report: {}", self.report.exit_code(), self.path.display()));
        Ok(self.report.exit_code())
    }
}

/// `--only` and `--bench-only` must name something, or nothing would be tested.
fn check_filters(args: &SelftestArgs) -> Result<(), Failure> {
    let usage = |message: String| Failure { code: launcher::exit::USAGE, message };
    if let Some(o) = &args.only {
        if !CHECKS.iter().any(|c| c.name.contains(o.as_str())) {
            return Err(usage(format!("no acceptance check's name contains `{o}` (`gpurun-dev acceptance --list` lists them)")));
        }
    }
    if let Some(id) = &args.bench_only {
        if spec::get(id).is_none() {
            return Err(usage(format!("`{id}` is not a benchmark id; the ids are: {}", spec::ids().collect::<Vec<_>>().join(", "))));
        }
    }
    Ok(())
}

/// `--gpurun`, else the bundle's, else the one beside this executable.
fn initial_gpurun(args: &SelftestArgs) -> PathBuf {
    if let Some(g) = &args.gpurun {
        return g.clone();
    }
    match &args.bundle {
        Some(b) => b.join("gpurun"),
        None => crate::gpurun_beside_me().unwrap_or_else(|_| PathBuf::from("gpurun")),
    }
}

/// The arch to test and its GPU: `--arch` picks the first GPU of its
/// vendor, else the first GPU listed.
fn pick_gpu(gpus: &[Gpu], arch: Option<&str>) -> (Option<String>, Option<Gpu>) {
    let gpu = match arch {
        Some(a) => {
            let vendor = if a.starts_with("sm_") { "nvidia" } else { "amd" };
            gpus.iter().find(|g| g.backend == vendor)
        }
        None => gpus.first(),
    };
    let arch = gpu.map(|g| arch.map_or_else(|| g.arch.clone(), str::to_string));
    (arch, gpu.cloned())
}

/// `selftest-<date>-<device>`, made unique in `out` with -2, -3, ...
fn report_stem(out: &Path, date: &str, gpu: Option<&Gpu>) -> String {
    let device = gpu.map_or("no-gpu".to_string(), |g| slug(&g.name));
    let base = format!("selftest-{}-{device}", &date[..10.min(date.len())]);
    let mut stem = base.clone();
    for n in 2.. {
        if !out.join(format!("{stem}.md")).exists() {
            break;
        }
        stem = format!("{base}-{n}");
    }
    stem
}

/// What the tools found mean for this GPU: what could not be done.
pub fn tool_notes(facts: &Facts, gpu: &Gpu) -> Vec<String> {
    let mut notes = Vec::new();
    let missing = |name: &str| facts.tool(name).is_none();
    if gpu.backend == "nvidia" && missing("ptxas") {
        notes.push(
            "no ptxas (GPURUN_PTXAS, PATH, CUDA_HOME, /usr/local/cuda/bin): gpurun's ahead-of-launch PTX compile \
             (its cubin cache) was not exercised; the CUDA driver's JIT compiled each PTX at load instead (slower first loads)"
                .into(),
        );
    }
    let compiler = Compiler::for_gpu(gpu.backend);
    if missing(compiler.name()) {
        let vendor = if compiler == Compiler::Hipcc { "HIP" } else { "CUDA" };
        notes.push(format!(
            "no {} ({}): the native {vendor} baselines (benches/native) were not built; their bench rows say not run",
            compiler.name(),
            compiler.lookup()
        ));
    }
    notes
}

/// Builds the bundle for `arch` with scripts/make-selftest-bundle.sh; its
/// folder, or None (the report says why).
fn build(arch: &str, work: &Path, report: &mut Report) -> Option<PathBuf> {
    let repo = gpu_toolchain::Paths::from_env().repo;
    let script = repo.join("scripts/make-selftest-bundle.sh");
    if !script.is_file() {
        report.problems.push(format!(
            "no checkout at {} to build the bundle in: pass --bundle DIR (scripts/make-selftest-bundle.sh makes one)",
            repo.display()
        ));
        return None;
    }
    if report.facts.tool("rustc").is_none() {
        report.problems.push(
            "no Rust toolchain (rustc) to build the bundle with: install it (scripts/install-toolchain.sh), or build the bundle \
             elsewhere (scripts/make-selftest-bundle.sh) and pass --bundle DIR"
                .into(),
        );
        return None;
    }
    say(&format!("building the bundle for {arch}: bash scripts/make-selftest-bundle.sh {arch} (minutes)"));
    let mut cmd = Command::new("bash");
    cmd.arg(&script).arg(arch).current_dir(&repo);
    let log = work.join("build.log");
    match run_logged(cmd, &log) {
        Ok((status, text)) => {
            report.build_log_tail = Some(tail(&text, if status.success() { 10 } else { TAIL_LINES }));
            if status.success() {
                return Some(repo.join("gpu-bundle"));
            }
            report.problems.push(format!("building the bundle failed ({status}); the end of its log is under Build, all of it in {}", log.display()));
        }
        Err(e) => report.problems.push(format!("cannot run {}: {e}", script.display())),
    }
    None
}

/// The bundle must be there and hold programs for `arch`.
fn check_bundle(bundle: &Path, arch: &str) -> Result<(), String> {
    let names: Vec<String> = std::fs::read_dir(bundle)
        .map_err(|e| format!("cannot read the bundle {}: {e}", bundle.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let arch_of = |n: &String| {
        let (base, ext) = n.rsplit_once('.')?;
        ["ptx", "cubin", "elf"].contains(&ext).then(|| base.rsplit_once('-').map(|(_, a)| a.to_string()))?
    };
    let mut archs: Vec<String> = names.iter().filter_map(arch_of).collect();
    if archs.iter().any(|a| a == arch) {
        return Ok(());
    }
    archs.sort();
    archs.dedup();
    Err(format!(
        "the bundle {} has no program built for {arch} (it has: {}); make one with `scripts/make-selftest-bundle.sh {arch}`",
        bundle.display(),
        if archs.is_empty() { "none".into() } else { archs.join(", ") }
    ))
}

/// The acceptance suite, each failure with the ends of its logs.
fn acceptance(args: &SelftestArgs, bundle: &Path, gpurun: &Path, arch: &str, work: &Path) -> Vec<CheckReport> {
    let logs = fresh_dir(&work.join("acceptance"));
    let suite = Suite {
        bundle: bundle.to_path_buf(),
        gpurun: gpurun.to_path_buf(),
        arch: arch.to_string(),
        logs: logs.clone(),
        limit: Duration::from_secs(args.timeout),
        emulate: false,
    };
    say("the acceptance suite");
    let chosen = CHECKS.iter().filter(|c| args.only.as_ref().is_none_or(|o| c.name.contains(o.as_str())));
    chosen
        .map(|c| {
            let result = suite.run(c);
            let failed = result.verdicts.iter().any(|v| matches!(v, Verdict::Fail(_)));
            let log_tail = |ext: &str| {
                let text = std::fs::read(logs.join(format!("{}.{ext}", c.name))).unwrap_or_default();
                if failed { tail(&String::from_utf8_lossy(&text), TAIL_LINES) } else { String::new() }
            };
            CheckReport { stdout_tail: log_tail("out"), stderr_tail: log_tail("err"), result }
        })
        .collect()
}

/// `dir`, emptied: a folder of the work folder that this run fills (never
/// the work folder itself, which `--work` may name).
pub(crate) fn fresh_dir(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::create_dir_all(dir);
    dir.to_path_buf()
}

/// Runs `cmd` with its stdout and stderr, as they come, on our stderr and
/// in `log`; its status and everything it printed.
fn run_logged(mut cmd: Command, log: &Path) -> std::io::Result<(ExitStatus, String)> {
    let (reader, writer) = std::io::pipe()?;
    cmd.stdin(Stdio::null()).stdout(writer.try_clone()?).stderr(writer);
    let mut child = cmd.spawn()?;
    // The command holds the pipe's write ends: dropped, the read ends when the child does.
    drop(cmd);
    let mut file = File::create(log)?;
    let mut text = Vec::new();
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line)? > 0 {
        let _ = std::io::stderr().write_all(&line);
        file.write_all(&line)?;
        text.extend_from_slice(&line);
        line.clear();
    }
    Ok((child.wait()?, String::from_utf8_lossy(&text).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::report::tests::{facts, gpu};
    use super::*;

    #[test]
    fn tool_notes_say_what_a_missing_tool_leaves_out() {
        let nvidia = gpu("nvidia", "sm_90");
        assert!(tool_notes(&facts(&["ptxas", "nvcc"]), &nvidia).is_empty());
        let notes = tool_notes(&facts(&["nvcc"]), &nvidia);
        assert!(matches!(&notes[..], [n] if n.starts_with("no ptxas") && n.contains("driver's JIT")), "{notes:?}");
        let notes = tool_notes(&facts(&["ptxas"]), &nvidia);
        assert!(matches!(&notes[..], [n] if n.starts_with("no nvcc") && n.contains("native CUDA baselines")), "{notes:?}");
        let amd = gpu("amd", "gfx90a");
        let notes = tool_notes(&facts(&[]), &amd);
        assert!(matches!(&notes[..], [n] if n.starts_with("no hipcc (HIPCC, PATH, ROCM_PATH/bin, /opt/rocm/bin)") && n.contains("native HIP baselines")), "{notes:?}");
        assert!(tool_notes(&facts(&["hipcc"]), &amd).is_empty());
    }

    #[test]
    fn arch_picks_the_gpu_of_its_vendor() {
        let gpus = [gpu("amd", "gfx90a"), gpu("nvidia", "sm_90")];
        let arch_of = |a: Option<&str>| pick_gpu(&gpus, a).0;
        assert_eq!(arch_of(None), Some("gfx90a".into()));
        assert_eq!(pick_gpu(&gpus, Some("sm_90")).1.map(|g| g.backend), Some("nvidia"));
        assert_eq!(arch_of(Some("gfx942")), Some("gfx942".into()));
        assert!(matches!(pick_gpu(&gpus[..1], Some("sm_90")), (None, None)));
    }

    #[test]
    fn a_bundle_must_hold_programs_for_the_arch() {
        let dir = std::env::temp_dir().join(format!("selftest-bundle-{}", std::process::id()));
        let _ = fresh_dir(&dir);
        std::fs::write(dir.join("hello-threads-gfx90a.elf"), "").unwrap();
        std::fs::write(dir.join("maths-sm_90.ptx"), "").unwrap();
        assert_eq!(check_bundle(&dir, "sm_90"), Ok(()));
        let err = check_bundle(&dir, "gfx942").unwrap_err();
        assert!(err.contains("no program built for gfx942 (it has: gfx90a, sm_90)"), "{err}");
        assert!(check_bundle(&dir.join("missing"), "sm_90").unwrap_err().contains("cannot read the bundle"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
