//! `gpurun setup`, `build`, `doctor`, `demo`: the toolchain side of gpurun
//! (the work is in crate `gpu-toolchain`; this is its command line).
use anyhow::{bail, Context};
use gpu_toolchain::{codecheck, compile, doctor as checks, setup as tc, Arch, Paths};
use launcher::devices;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::run_cmd::Failure;
use crate::BuildArgs;

fn log(line: &str) {
    eprintln!("gpurun: {line}");
}

/// A toolchain error as gpurun reports it: its message (which already ends
/// with the cause, so the cause is not chained again by `{:#}`) and its exit
/// code (2 for usage: a bad arch, not a crate, a file `init` will not replace;
/// 4 when cargo failed or built no code object; 1 for the rest).
fn toolchain_failure(e: gpu_toolchain::Error) -> anyhow::Error {
    Failure { code: e.exit_code(), message: e.to_string() }.into()
}

/// gpurun itself: it links nvptx when called `gpu-ld` (see main.rs).
fn self_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("locating gpurun")
}

/// Makes the patched toolchain (if stale or `force`) and installs the linker.
fn ensure_toolchain(paths: &Paths, force: bool) -> anyhow::Result<()> {
    if force {
        let _ = std::fs::remove_file(paths.toolchain.join("gpu-toolchain.stamp"));
    }
    let start = Instant::now();
    match tc::ensure(paths, &mut |l| log(l)).map_err(toolchain_failure)? {
        tc::SetupOutcome::UpToDate => {}
        tc::SetupOutcome::Made { files, patched } => log(&format!(
            "made {} ({files} files linked, {patched} std files patched) in {:.1} s",
            paths.toolchain.display(),
            start.elapsed().as_secs_f64()
        )),
    }
    tc::install_linker(paths, &self_exe()?).map_err(toolchain_failure)?;
    Ok(())
}

/// `gpurun setup`.
pub fn setup(force: bool) -> anyhow::Result<i32> {
    let paths = Paths::from_env();
    let was_current = !force && tc::is_current(&paths).unwrap_or(false);
    ensure_toolchain(&paths, force)?;
    if was_current {
        log(&format!("{} is up to date", paths.toolchain.display()));
    }
    println!("{}", paths.toolchain.display());
    Ok(0)
}

/// The arch of the first GPU found, AMD first.
fn first_device_arch() -> Option<String> {
    devices::probe_all().into_iter().find_map(|(_, r)| r.ok()?.first().map(|d| d.processor().to_string()))
}

/// Builds the crate at `dir` for `arch` (default: the first GPU's) and
/// returns its code objects.
fn build_objects(dir: &Path, build: BuildArgs) -> anyhow::Result<Vec<PathBuf>> {
    let BuildArgs { arch, release, bin } = build;
    let arch = match arch.or_else(first_device_arch) {
        Some(a) => a,
        None => bail!("no GPU found to take the arch from: pass --arch (gfx90a, gfx942, gfx1100, sm_80, sm_90, ...)"),
    };
    let arch = Arch::parse(&arch).map_err(toolchain_failure)?;
    let paths = Paths::from_env();
    ensure_toolchain(&paths, false)?;
    let start = Instant::now();
    let opts = compile::Options { release, bin, ..Default::default() };
    let objects = compile::build(&paths, dir, &arch, &opts, &mut |l| log(l)).map_err(toolchain_failure)?;
    log(&format!("built in {:.1} s", start.elapsed().as_secs_f64()));
    Ok(objects)
}

/// `gpurun build`: prints the code object's path as the last line.
pub fn build(dir: PathBuf, build: BuildArgs) -> anyhow::Result<i32> {
    for o in build_objects(&dir, build)? {
        println!("{}", o.display());
    }
    Ok(0)
}

/// `gpurun size`: the size report of a code object, or of a crate's build;
/// with `why`, the chains that keep the functions it names in the program.
pub fn size(program: PathBuf, build: BuildArgs, top: usize, json: bool, why: Option<String>) -> anyhow::Result<i32> {
    let object = if program.is_dir() {
        let mut objects = build_objects(&program, build)?;
        if objects.len() > 1 {
            bail!("{} has several programs: choose one with --bin", program.display());
        }
        objects.pop().expect("build returns at least one")
    } else {
        program
    };
    let vendor = match launcher::codeobj::CodeObject::read(&object)?.kind {
        launcher::codeobj::Kind::Amdgpu(_) => gpu_toolchain::Vendor::Amd,
        launcher::codeobj::Kind::Ptx(_) => gpu_toolchain::Vendor::Nvidia,
        _ => bail!("{}: the size report reads PTX and AMDGPU code objects, not cubins or fatbins", object.display()),
    };
    if let Some(pattern) = why {
        if vendor != gpu_toolchain::Vendor::Nvidia {
            bail!(
                "{}: --why reads PTX (a linked AMDGPU code object keeps no call relocations); the same crate built for an NVIDIA arch (--arch sm_90) shows the same std chains",
                object.display()
            );
        }
        let ptx = std::fs::read_to_string(&object).with_context(|| format!("{}", object.display()))?;
        let whys = gpu_toolchain::size::ptx_why(&ptx, &pattern);
        if json {
            println!("{}", serde_json::to_string_pretty(&gpu_toolchain::size::why_json(&whys))?);
        } else {
            print!("{}", gpu_toolchain::size::render_why(&pattern, &whys));
        }
        return Ok(if whys.is_empty() { 1 } else { 0 });
    }
    let report = gpu_toolchain::size::report(&object, vendor).map_err(toolchain_failure)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report.to_json(top))?);
    } else {
        println!("{}:", object.display());
        print!("{}", report.render(top));
    }
    Ok(0)
}

/// `gpurun init`: makes the patched toolchain (its paths go into the
/// config) and writes the crate's cargo config.
pub fn init(dir: PathBuf, arch: Option<String>, force: bool) -> anyhow::Result<i32> {
    let arch = Arch::parse(&arch.or_else(first_device_arch).unwrap_or_else(|| "sm_90".into())).map_err(toolchain_failure)?;
    let paths = Paths::from_env();
    ensure_toolchain(&paths, false)?;
    let dir = dir.canonicalize().with_context(|| format!("{}", dir.display()))?;
    let written = gpu_toolchain::init::init(&paths, &self_exe()?, &dir, &arch, force).map_err(toolchain_failure)?;
    log(&format!("wrote {}", written.config.display()));
    if let Some(t) = written.toolchain_file {
        log(&format!("wrote {}", t.display()));
    }
    log(&format!(
        "in {}: `cargo build --release` builds for {} and `cargo run --release` runs it with gpurun; \
         `cargo build-amd` / `cargo build-nvidia` build for the other vendor; a cdylib crate exporting \
         the C `main` also builds with `cargo build -Zbuild-std --target amdgcn-amd-amdhsa`",
        dir.display(),
        arch.name
    ));
    Ok(0)
}

/// `gpurun doctor`: exit 0 when everything needed to build is there and a
/// GPU was found, 1 otherwise; every failed check says how to fix it.
pub fn doctor(json: bool) -> anyhow::Result<i32> {
    let paths = Paths::from_env();
    let mut rows: Vec<(String, Result<String, String>)> =
        checks::toolchain_checks(&paths).into_iter().map(|c| (c.what, c.result)).collect();
    let gpu = devices::driver_report();
    let any_device = first_device_arch().is_some();
    rows.extend(gpu);
    if json {
        let items: Vec<_> = rows
            .iter()
            .map(|(what, r)| match r {
                Ok(v) => serde_json::json!({"check": what, "ok": true, "found": v}),
                Err(e) => serde_json::json!({"check": what, "ok": false, "fix": e}),
            })
            .collect();
        println!("{}", serde_json::json!({"checks": items, "gpu_found": any_device}));
    } else {
        for (what, r) in &rows {
            match r {
                Ok(v) => println!("ok      {what}: {}", v.replace('\n', "\n        ")),
                Err(e) => println!("MISSING {what}: {e}"),
            }
        }
        if !any_device {
            println!("no GPU: programs can be built (gpurun build --arch ...) but not run here");
        }
    }
    let toolchain_ok = checks::toolchain_checks(&paths).iter().all(|c| c.result.is_ok());
    Ok(if toolchain_ok && any_device { 0 } else { 1 })
}

const DEMO: &str = "examples/hello-threads";
/// What `demo` builds and checks when there is no GPU: both AMD wave sizes
/// and NVIDIA.
const DEMO_ARCHS: [&str; 3] = ["gfx90a", "gfx1100", "sm_90"];

/// `gpurun demo`: the README's first command.
pub fn demo() -> anyhow::Result<i32> {
    let paths = Paths::from_env();
    ensure_toolchain(&paths, false)?;
    let dir = paths.repo.join(DEMO);
    if let Some(arch) = first_device_arch() {
        let arch = Arch::parse(&arch).map_err(toolchain_failure)?;
        log(&format!("found a {} GPU; building {DEMO} for it", arch.name));
        let opts = compile::Options { release: true, ..Default::default() };
        let object = compile::build(&paths, &dir, &arch, &opts, &mut |l| log(l)).map_err(toolchain_failure)?;
        let object = object.last().expect("one code object");
        log(&format!("running {} on the GPU", object.display()));
        let status = Command::new(self_exe()?).arg("run").arg(object).status().context("running gpurun run")?;
        return Ok(status.code().unwrap_or(1));
    }
    println!("demo: no GPU found on this machine (`gpurun doctor` shows what was tried).");
    println!("demo: building {DEMO} for AMD and NVIDIA and checking the code objects instead:");
    let llvm = tc::llvm_bin(&paths.toolchain).context("llvm-tools in the patched toolchain")?;
    let mut failed = false;
    for name in DEMO_ARCHS {
        let arch = Arch::parse(name).map_err(toolchain_failure)?;
        let opts = compile::Options { release: true, ..Default::default() };
        let object = compile::build(&paths, &dir, &arch, &opts, &mut |l| log(l)).map_err(toolchain_failure)?;
        let object = object.last().expect("one code object");
        let report = codecheck::inspect(object, arch.vendor, &llvm).map_err(toolchain_failure)?;
        let problems = report.problems(&arch);
        println!(
            "demo: {:8} {} ({} KiB): kernel entry {}, idle loop sleeps: {}, {} lanes, undefined symbols: {}{}",
            arch.name,
            object.strip_prefix(&paths.repo).unwrap_or(object).display(),
            report.bytes / 1024,
            if report.kernel_entry { "present" } else { "MISSING" },
            if report.sleeps { "yes" } else { "NO" },
            report.wavefront_size.map_or("?".into(), |w| w.to_string()),
            if report.undefined.is_empty() { "none".to_string() } else { report.undefined.join(", ") },
            if problems.is_empty() { String::new() } else { format!("  PROBLEMS: {problems:?}") },
        );
        failed |= !problems.is_empty();
    }
    println!("demo: running the same program on this machine's CPU for its expected output:");
    let out = host_run(&paths.repo, &dir)?;
    for line in out.lines() {
        println!("demo: cpu> {line}");
    }
    println!("demo: on a machine with an AMD or NVIDIA GPU, the same command runs it there.");
    Ok(if failed { 1 } else { 0 })
}

/// Builds and runs `dir` for the host with the ordinary toolchain (the
/// example's GPU cargo config is not read from the repository root).
fn host_run(repo: &Path, dir: &Path) -> anyhow::Result<String> {
    let out = Command::new("cargo")
        .args(["run", "--quiet", "--release", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(repo.join("target/host-demo"))
        .current_dir(repo)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .context("running cargo for the host build")?;
    if !out.status.success() {
        bail!("the host build of {} failed:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
