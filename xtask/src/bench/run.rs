//! `gpurun-dev bench`: runs the benchmark matrix (benches/BENCH.md) on this machine —
//! for each benchmark our runtime on each GPU vendor, then the native
//! baseline on each (built with nvcc, or hipcc on AMD: [`super::native`]),
//! then the same program on the host CPU, back to back — and
//! writes `OUT/<date>-<device>-<commit>.json`, then renders `OUT/README.md`
//! and `OUT/latency.svg` from every result file there.
//!
//! GPU programs run through `gpurun run` (the `gpurun` beside this
//! executable, or `--gpurun`, as a child), so they take the same path as any
//! other program.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;
use super::child::{self, Outcome};
use super::native::{self, Compiler};
use super::spec::{self, How, Spec};
use super::{render, schema, slug, utc_timestamp};
use launcher::exit;
use serde_json::{Map, Value, json};

use crate::Failure;
use crate::machine::{Gpu, clocks, cpu_model, list_gpus};

#[derive(Args, Debug, Clone)]
#[command(after_help = "Without --programs / --cpu, the programs of benches/programs are built first (this needs the \
Rust toolchain: `gpurun setup`). GPU machines without Rust take a bundle: scripts/make-bench-bundle.sh, \
then scripts/gpu-bench.sh.")]
pub struct BenchArgs {
    /// Run only this benchmark (an id of benches/BENCH.md: spawn_join, wake_latency, mutex_uncontended, ...)
    #[arg(long, value_name = "ID")]
    pub only: Option<String>,
    /// Folder of the result files; README.md and latency.svg are rendered there from all of them
    #[arg(long, value_name = "DIR", default_value = "bench-results")]
    pub out: PathBuf,
    /// Prebuilt GPU programs, named <id>-<arch>.ptx or .cubin (NVIDIA; a cubin is taken first) or <id>-<arch>.elf (AMD)
    #[arg(long, value_name = "DIR")]
    pub programs: Option<PathBuf>,
    /// Prebuilt native CUDA baselines (benches/native built with nvcc: spawn_join, mutex, channel, ...;
    /// default: built here with nvcc for the NVIDIA GPU found, where nvcc is found)
    #[arg(long, value_name = "DIR")]
    pub native: Option<PathBuf>,
    /// Prebuilt native HIP baselines (benches/native built with hipcc for the AMD GPU's arch;
    /// default: built here with hipcc, where hipcc is found)
    #[arg(long, value_name = "DIR")]
    pub native_hip: Option<PathBuf>,
    /// Prebuilt host builds of the same programs, named <id>
    #[arg(long, value_name = "DIR")]
    pub cpu: Option<PathBuf>,
    /// Only render README.md and latency.svg from the result files in --out
    #[arg(long)]
    pub render_only: bool,
    /// Longest one program may run, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 90)]
    pub timeout: u64,
    /// The gpurun that lists the GPUs, builds and runs the programs (default: the one beside gpurun-dev)
    #[arg(long, value_name = "PATH")]
    pub gpurun: Option<PathBuf>,
}

fn log(line: &str) {
    eprintln!("bench: {line}");
}

/// Facts every row gets.
struct Context {
    exe: PathBuf,
    commit: String,
    date: String,
    amd: Option<Gpu>,
    nvidia: Option<Gpu>,
    cpu_device: String,
    cpu_driver: String,
    limit: Duration,
}

pub fn bench(args: BenchArgs) -> anyhow::Result<i32> {
    if args.render_only {
        return render_to(&args.out);
    }
    let specs: Vec<&Spec> = match &args.only {
        Some(id) => vec![spec::get(id).ok_or_else(|| Failure {
            code: exit::USAGE,
            message: format!("`{id}` is not a benchmark id; the ids are: {}", spec::ids().collect::<Vec<_>>().join(", ")),
        })?],
        None => spec::SPECS.iter().collect(),
    };
    let ctx = Context::probe(&args)?;
    for gpu in [&ctx.amd, &ctx.nvidia].into_iter().flatten() {
        log(&format!("{}: {} ({}), driver {}", gpu.backend, gpu.device, gpu.arch, gpu.driver));
    }
    log(&format!("cpu: {} ({}); commit {}", ctx.cpu_device, ctx.cpu_driver, ctx.commit));

    let programs: HashMap<&str, Result<PathBuf, String>> = [&ctx.amd, &ctx.nvidia]
        .into_iter()
        .flatten()
        .map(|g| (g.backend, gpu_programs(&ctx, &args, g)))
        .collect();
    let wants_native = specs.iter().any(|s| s.native.is_some());
    let natives: HashMap<&str, Result<PathBuf, String>> = [&ctx.amd, &ctx.nvidia]
        .into_iter()
        .flatten()
        .filter(|_| wants_native)
        .map(|g| (g.backend, native_programs(&args, g)))
        .collect();
    let cpu_programs = host_programs(&args);
    let mut native_runs: NativeRuns = HashMap::new();

    // Written again after every benchmark: a run cut short keeps what it measured.
    let path = result_path(&ctx, &args.out)?;
    let mut rows: Vec<Map<String, Value>> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        log(&format!("[{}/{}] {}: {}", i + 1, specs.len(), s.id, s.what));
        // AMD first (the first-class vendor), then NVIDIA, native, CPU: back to back.
        for (backend, gpu) in [("amd", &ctx.amd), ("nvidia", &ctx.nvidia)] {
            match gpu {
                Some(g) => rows.extend(run_gpu(&ctx, &args, g, s, &programs[backend])),
                None if backend == "amd" => rows.push(no_amd(&ctx, s)),
                None => rows.push(not_run(&ctx, s, "nvidia", "no NVIDIA hardware")),
            }
        }
        rows.extend(run_native(&ctx, s, &natives, &mut native_runs));
        rows.extend(run_cpu(&ctx, s, &cpu_programs));
        write_results(&path, &rows)?;
    }
    let status = |r: &Map<String, Value>| r.get("status").and_then(Value::as_str).unwrap_or_default().to_string();
    let measured = rows.iter().filter(|r| status(r) == "measured").count();
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| status(r).starts_with("not run: failed"))
        .map(|r| format!("{} ({})", r["benchmark"].as_str().unwrap_or("?"), r["backend"].as_str().unwrap_or("?")))
        .collect();
    log(&format!("wrote {}: {measured} rows measured, {} not run", path.display(), rows.len() - measured));
    if !failed.is_empty() {
        log(&format!("failed: {}", failed.join(", ")));
    }
    render_to(&args.out)
}

/// Renders README.md and latency.svg in `out`.
fn render_to(out: &Path) -> anyhow::Result<i32> {
    let (md, svg) = render::write_all(out).map_err(anyhow::Error::msg)?;
    log(&format!("rendered {} and {}", md.display(), svg.display()));
    Ok(0)
}

impl Context {
    fn probe(args: &BenchArgs) -> anyhow::Result<Context> {
        let exe = match &args.gpurun {
            Some(p) => p.clone(),
            None => crate::gpurun_beside_me().map_err(anyhow::Error::msg)?,
        };
        let date_secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let (mut amd, mut nvidia) = (None, None);
        for g in list_gpus(&exe) {
            let slot = if g.backend == "amd" { &mut amd } else { &mut nvidia };
            slot.get_or_insert(g);
        }
        Ok(Context {
            exe,
            commit: commit(),
            date: utc_timestamp(date_secs),
            amd,
            nvidia,
            cpu_device: cpu_model(),
            cpu_driver: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or("unknown".into(), |v| format!("Linux {}", v.trim())),
            limit: Duration::from_secs(args.timeout),
        })
    }
}

/// `$GPURUN_COMMIT`, else `git rev-parse` (+ `-dirty`), else "unknown".
fn commit() -> String {
    if let Ok(c) = std::env::var("GPURUN_COMMIT") {
        if !c.trim().is_empty() {
            return c.trim().to_string();
        }
    }
    let git = |args: &[&str]| {
        Command::new("git").args(args).output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        _ => "unknown".into(),
    }
}

/// A row the harness writes itself: `status: not run: <reason>`.
fn not_run(ctx: &Context, s: &Spec, backend: &str, reason: &str) -> Map<String, Value> {
    let (device, driver) = match backend {
        "cpu" | "native-cpu" => (ctx.cpu_device.clone(), ctx.cpu_driver.clone()),
        "amd" | "native-hip" => ctx.amd.as_ref().map_or(("none".into(), "none".into()), |g| (g.device.clone(), g.driver.clone())),
        _ => ctx.nvidia.as_ref().map_or(("none".into(), "none".into()), |g| (g.device.clone(), g.driver.clone())),
    };
    let mut r = Map::new();
    r.insert("benchmark".into(), s.id.into());
    r.insert("variant".into(), "".into());
    r.insert("unit".into(), s.unit.into());
    r.insert("status".into(), format!("{}{reason}", schema::NOT_RUN).into());
    stamp(&mut r, ctx, backend, &device, &driver);
    r
}

fn no_amd(ctx: &Context, s: &Spec) -> Map<String, Value> {
    let mut r = not_run(ctx, s, "amd", "no AMD hardware");
    r.insert("note".into(), spec::amd_note().into());
    r
}

/// Adds what every row has: backend, device, driver, commit, date.
fn stamp(r: &mut Map<String, Value>, ctx: &Context, backend: &str, device: &str, driver: &str) {
    r.insert("backend".into(), backend.into());
    r.insert("device".into(), device.into());
    r.insert("driver".into(), driver.into());
    r.insert("commit".into(), ctx.commit.clone().into());
    r.insert("date".into(), ctx.date.clone().into());
    r.entry("variant").or_insert_with(|| "".into());
}

/// Fills in `lines_received` / `lines_lost` of println rows from the
/// `~ln VARIANT` lines the harness counted.
fn count_lines(rows: &mut [Map<String, Value>], o: &Outcome) {
    for r in rows {
        let Some(expected) = r.get("lines_expected").and_then(Value::as_i64) else { continue };
        let variant = r.get("variant").and_then(Value::as_str).unwrap_or_default();
        let got = o.lines.get(variant).copied().unwrap_or(0) as i64;
        r.insert("lines_received".into(), got.into());
        r.insert("lines_lost".into(), (expected - got).max(0).into());
    }
}

/// Rows of one finished process for benchmark `s`, or one "not run" row
/// saying why there are none.
fn rows_of(ctx: &Context, s: &Spec, backend: &str, o: &Outcome) -> Vec<Map<String, Value>> {
    let mut rows: Vec<_> = o.rows.iter().filter(|r| r.get("benchmark").and_then(Value::as_str) == Some(s.id)).cloned().collect();
    count_lines(&mut rows, o);
    let failure = o.failure(ctx.limit + Duration::from_secs(30));
    if rows.is_empty() {
        let why = failure.unwrap_or_else(|| "the program printed no row".into());
        return vec![not_run(ctx, s, backend, &format!("failed: {why}"))];
    }
    if let Some(why) = failure {
        for r in &mut rows {
            r.insert("failure".into(), why.clone().into());
        }
    }
    rows
}

fn progress(what: &str, o: &Result<Outcome, String>) {
    match o {
        Ok(o) => log(&format!(
            "  {what}: {:.1} s, {} row{}{}",
            o.elapsed.as_secs_f64(),
            o.rows.len(),
            if o.rows.len() == 1 { "" } else { "s" },
            o.failure(Duration::MAX).map_or(String::new(), |f| format!(" — {f}"))
        )),
        Err(e) => log(&format!("  {what}: {e}")),
    }
}

fn run(cmd: Command, limit: Duration) -> Result<Outcome, String> {
    let shown = format!("{cmd:?}");
    child::run(cmd, limit).map_err(|e| format!("cannot run {shown}: {e}"))
}

/// Our runtime on `gpu`: every launch of the benchmark's program.
fn run_gpu(ctx: &Context, args: &BenchArgs, gpu: &Gpu, s: &Spec, programs: &Result<PathBuf, String>) -> Vec<Map<String, Value>> {
    let b = gpu.backend;
    if let How::NotYet(why) = s.how {
        return vec![not_run(ctx, s, b, why)];
    }
    let dir = match programs {
        Ok(d) => d,
        Err(e) => return vec![not_run(ctx, s, b, e)],
    };
    // A cubin (PTX compiled ahead by scripts/gpu-bench.sh) spares the driver's JIT.
    let exts: &[&str] = if b == "nvidia" { &["cubin", "ptx"] } else { &["elf"] };
    let name = |ext: &str| dir.join(format!("{}-{}.{ext}", s.id, gpu.arch));
    let Some(code) = exts.iter().map(|e| name(e)).find(|p| p.exists()) else {
        return vec![not_run(ctx, s, b, &format!("no code object {}", name(exts[exts.len() - 1]).display()))];
    };
    let code_name = code.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let gpurun = |extra: &[String]| {
        let mut c = Command::new(&ctx.exe);
        c.args(["run", "--json", "--device", &gpu.index.to_string(), "--timeout", &args.timeout.to_string()]);
        c.args(extra).arg(&code);
        c
    };
    let limit = ctx.limit + Duration::from_secs(30);
    if s.how == How::ProcessStart {
        let clocks = clocks(gpu);
        let mut rows = process_start(ctx, s, b, || gpurun(&[]), limit);
        for r in &mut rows {
            stamp(r, ctx, b, &gpu.device, &gpu.driver);
            r.insert("clocks".into(), clocks.clone().into());
        }
        return rows;
    }
    let mut rows = Vec::new();
    for launch in spec::gpu_launches(s.id) {
        let clocks = clocks(gpu);
        let mut cmd = gpurun(&launch.args);
        cmd.envs(launch.env.iter().map(|(k, v)| (k, v)));
        let o = run(cmd, limit);
        progress(&format!("{b} {}", launch.args.join(" ")), &o);
        let mut got = match o {
            Ok(o) => rows_of(ctx, s, b, &o),
            Err(e) => vec![not_run(ctx, s, b, &e)],
        };
        let policy = match launch.idle_sleep_ns {
            0 => format!("idle_sleep_ns=default ({} ns)", rt_abi::protocol::DEFAULT_IDLE_SLEEP_NS),
            n => format!("idle_sleep_ns={n}"),
        };
        for r in &mut got {
            if !launch.variant_suffix.is_empty() {
                let v = r.get("variant").and_then(Value::as_str).unwrap_or_default();
                let v = if v.is_empty() { launch.variant_suffix.clone() } else { format!("{v} {}", launch.variant_suffix) };
                r.insert("variant".into(), v.into());
            }
            r.insert("idle_policy".into(), policy.clone().into());
            if !launch.args.is_empty() {
                r.insert("gpurun_args".into(), launch.args.join(" ").into());
            }
            stamp(r, ctx, b, &gpu.device, &gpu.driver);
            r.insert("clocks".into(), clocks.clone().into());
            r.insert("code_object".into(), code_name.clone().into());
        }
        rows.extend(got);
    }
    rows
}

/// Times `n` starts of a process to its first line on stdout.
fn process_start(
    ctx: &Context,
    s: &Spec,
    backend: &str,
    make: impl Fn() -> Command,
    limit: Duration,
) -> Vec<Map<String, Value>> {
    const STARTS: usize = 10;
    let mut samples = Vec::new();
    // One start more, not counted: it fills the driver's PTX JIT cache and the OS's file cache.
    for i in 0..=STARTS {
        match run(make(), limit) {
            Ok(o) if o.failure(limit).is_none() && o.first_line.is_some() => {
                if i > 0 {
                    samples.push(o.first_line.unwrap_or_default().as_nanos() as u64)
                }
            }
            Ok(o) => {
                let why = o.failure(limit).unwrap_or_else(|| "it printed nothing".into());
                return vec![not_run(ctx, s, backend, &format!("failed: {why}"))];
            }
            Err(e) => return vec![not_run(ctx, s, backend, &e)],
        }
    }
    samples.sort_unstable();
    let rank = |q: f64| samples[((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    log(&format!("  {backend}: {STARTS} starts, p50 {:.1} ms", rank(0.5) as f64 / 1e6));
    let mut r = Map::new();
    let fields = json!({
        "benchmark": s.id, "variant": "", "unit": "ns", "status": "measured",
        "p50": rank(0.5), "p99": rank(0.99), "max": samples[samples.len() - 1], "samples": samples.len(),
        "measure": "process start to its first line on stdout, through a pipe (after one uncounted start)",
    });
    r.extend(fields.as_object().cloned().unwrap_or_default());
    vec![r]
}

/// Each native baseline's one run, by (row backend, executable).
type NativeRuns = HashMap<(&'static str, &'static str), Result<Outcome, String>>;

/// The native baseline of `s` on each GPU found: native-hip rows on AMD,
/// native-cuda rows on NVIDIA (each executable runs once; several ids
/// share one). Without a GPU, one native-cuda row says so.
fn run_native(
    ctx: &Context,
    s: &Spec,
    natives: &HashMap<&str, Result<PathBuf, String>>,
    cache: &mut NativeRuns,
) -> Vec<Map<String, Value>> {
    if s.native.is_none() {
        return Vec::new();
    }
    let gpus: Vec<&Gpu> = [&ctx.amd, &ctx.nvidia].into_iter().flatten().collect();
    if gpus.is_empty() {
        return vec![not_run(ctx, s, Compiler::Nvcc.row_backend(), "no NVIDIA hardware")];
    }
    let mut rows = Vec::new();
    for gpu in gpus {
        let dir = natives.get(gpu.backend).cloned().unwrap_or_else(|| Err("no native baselines".into()));
        rows.extend(run_native_on(ctx, s, gpu, dir, cache));
    }
    rows
}

fn run_native_on(ctx: &Context, s: &Spec, gpu: &Gpu, dir: Result<PathBuf, String>, cache: &mut NativeRuns) -> Vec<Map<String, Value>> {
    let Some(name) = s.native else { return Vec::new() };
    let compiler = Compiler::for_gpu(gpu.backend);
    let b = compiler.row_backend();
    let dir = match dir {
        Ok(d) => d,
        Err(why) => return vec![not_run(ctx, s, b, &why)],
    };
    let exe = dir.join(name);
    if !exe.exists() {
        return vec![not_run(ctx, s, b, &format!("no native baseline {} (did {} fail?)", exe.display(), compiler.name()))];
    }
    let limit = ctx.limit + Duration::from_secs(30);
    let clocks = clocks(gpu);
    let mut rows = if s.how == How::ProcessStart {
        process_start(ctx, s, b, || Command::new(&exe), limit)
    } else {
        let o = cache.entry((b, name)).or_insert_with(|| {
            let o = run(Command::new(&exe), limit);
            progress(&format!("{b} {name}"), &o);
            o
        });
        match o {
            Ok(o) => rows_of(ctx, s, b, o),
            Err(e) => vec![not_run(ctx, s, b, e)],
        }
    };
    for r in &mut rows {
        stamp(r, ctx, b, &gpu.device, &gpu.driver);
        r.insert("clocks".into(), clocks.clone().into());
    }
    rows
}

/// The same program on the host CPU.
fn run_cpu(ctx: &Context, s: &Spec, programs: &Result<PathBuf, String>) -> Vec<Map<String, Value>> {
    if let How::NotYet(why) = s.how {
        return vec![not_run(ctx, s, "cpu", why)];
    }
    let dir = match programs {
        Ok(d) => d,
        Err(e) => return vec![not_run(ctx, s, "cpu", e)],
    };
    let exe = dir.join(s.id);
    if !exe.exists() {
        return vec![not_run(ctx, s, "cpu", &format!("no host program {}", exe.display()))];
    }
    let limit = ctx.limit + Duration::from_secs(30);
    let mut rows = if s.how == How::ProcessStart {
        process_start(ctx, s, "cpu", || Command::new(&exe), limit)
    } else {
        let o = run(Command::new(&exe), limit);
        progress("cpu", &o);
        match o {
            Ok(o) => rows_of(ctx, s, "cpu", &o),
            Err(e) => vec![not_run(ctx, s, "cpu", &e)],
        }
    };
    for r in &mut rows {
        stamp(r, ctx, "cpu", &ctx.cpu_device, &ctx.cpu_driver);
        r.insert("idle_policy".into(), "the OS scheduler".into());
    }
    rows
}

/// The folder of `gpu`'s code objects: --programs, or benches/programs
/// built here for its arch.
fn gpu_programs(ctx: &Context, args: &BenchArgs, gpu: &Gpu) -> Result<PathBuf, String> {
    if let Some(d) = &args.programs {
        return Ok(d.clone());
    }
    let repo = gpu_toolchain::Paths::from_env().repo;
    let crate_dir = repo.join("benches/programs");
    if !crate_dir.join("Cargo.toml").exists() {
        return Err("no GPU programs given (--programs DIR) and no benches/programs to build".into());
    }
    log(&format!("building benches/programs for {} (pass --programs to use prebuilt ones)", gpu.arch));
    let out = Command::new(&ctx.exe)
        .arg("build")
        .arg(&crate_dir)
        .args(["--release", "--arch", &gpu.arch])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run gpurun build: {e}"))?;
    if !out.status.success() {
        return Err(format!("building benches/programs for {} failed (see the log above)", gpu.arch));
    }
    let dir = repo.join("target/bench-programs").join(&gpu.arch);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let p = Path::new(line.trim());
        if let (Some(stem), Some(ext)) = (p.file_stem(), p.extension()) {
            let to = dir.join(format!("{}-{}.{}", stem.to_string_lossy(), gpu.arch, ext.to_string_lossy()));
            std::fs::copy(p, &to).map_err(|e| format!("cannot copy {} to {}: {e}", p.display(), to.display()))?;
        }
    }
    Ok(dir)
}

/// The folder of `gpu`'s native baselines: --native (NVIDIA) or --native-hip
/// (AMD), else benches/native built here with nvcc or hipcc for its arch;
/// or why there is none.
fn native_programs(args: &BenchArgs, gpu: &Gpu) -> Result<PathBuf, String> {
    let compiler = Compiler::for_gpu(gpu.backend);
    let given = if compiler == Compiler::Hipcc { &args.native_hip } else { &args.native };
    if let Some(d) = given {
        return Ok(d.clone());
    }
    let repo = gpu_toolchain::Paths::from_env().repo;
    let src = repo.join("benches/native");
    let flag = compiler.option();
    if !src.is_dir() {
        return Err(format!("no native baselines given ({flag} DIR) and no benches/native to build"));
    }
    let Some(cc) = compiler.find_here() else {
        return Err(format!("no {} ({}) to build benches/native with; or pass {flag} DIR", compiler.name(), compiler.lookup()));
    };
    let out = repo.join("target/bench-native").join(&gpu.arch);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    log(&format!("building benches/native with {} for {} (pass {flag} to use prebuilt ones)", cc.display(), gpu.arch));
    for problem in native::compile_all(compiler, &cc, &src, &gpu.arch, &out) {
        log(&format!("  {problem}"));
    }
    Ok(out)
}

/// The folder of the host programs: --cpu, or benches/programs built here.
fn host_programs(args: &BenchArgs) -> Result<PathBuf, String> {
    if let Some(d) = &args.cpu {
        return Ok(d.clone());
    }
    let repo = gpu_toolchain::Paths::from_env().repo;
    let manifest = repo.join("benches/programs/Cargo.toml");
    if !manifest.exists() {
        return Err("no host programs given (--cpu DIR) and no benches/programs to build".into());
    }
    let target = repo.join("target/bench-host");
    log("building benches/programs for the host (pass --cpu to use prebuilt ones)");
    let status = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTUP_TOOLCHAIN")
        .status()
        .map_err(|e| format!("cannot run cargo for the host programs: {e}"))?;
    if !status.success() {
        return Err("building benches/programs for the host failed".into());
    }
    Ok(target.join("release"))
}

/// OUT/<date>-<device>-<commit>.json, made unique with -2, -3, ...
fn result_path(ctx: &Context, out: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let device = ctx.nvidia.as_ref().or(ctx.amd.as_ref()).map_or("no-gpu".to_string(), |g| slug(&g.name));
    let mut short: String = ctx.commit.chars().take(8).collect();
    if ctx.commit.ends_with("-dirty") {
        short.push_str("-dirty");
    }
    let stem = format!("{}-{device}-{}", &ctx.date[..10], slug(&short));
    let mut path = out.join(format!("{stem}.json"));
    for n in 2.. {
        if !path.exists() {
            break;
        }
        path = out.join(format!("{stem}-{n}.json"));
    }
    Ok(path)
}

/// Checks every row, turns an invalid one into a "not run" row that says
/// what was wrong, and writes them all to `path`.
fn write_results(path: &Path, rows: &[Map<String, Value>]) -> anyhow::Result<()> {
    let mut checked = Vec::new();
    for r in rows {
        let v = Value::Object(r.clone());
        match schema::validate_row(&v) {
            Ok(()) => checked.push(v),
            Err(e) => {
                log(&format!("an invalid row ({e}): {v}"));
                let mut fixed = r.clone();
                for k in ["p50", "p99", "max", "value"] {
                    fixed.remove(k);
                }
                let id = fixed.get("benchmark").and_then(Value::as_str).unwrap_or_default();
                if spec::get(id).is_none() {
                    continue; // a program printed a row for an id that does not exist
                }
                fixed.insert("status".into(), format!("{}the program printed an invalid row: {e}", schema::NOT_RUN).into());
                for k in ["unit", "device", "driver"] {
                    if fixed.get(k).and_then(Value::as_str).is_none_or(|s| s.trim().is_empty()) {
                        fixed.insert(k.into(), "unknown".into());
                    }
                }
                checked.push(Value::Object(fixed));
            }
        }
    }
    let text = serde_json::to_string_pretty(&Value::Array(checked))?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}
