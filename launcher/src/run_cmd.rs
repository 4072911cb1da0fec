//! `gpurun run` and `gpurun devices`: from arguments to a finished run.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, anyhow};
use launcher::backend::{BackendError, PlanError};
use launcher::codeobj::{CodeObject, CodeObjectError};
use launcher::devices;
use launcher::exit;
use launcher::report::RunStatus;
use launcher::ring::server::{Sink, StdSink};
use launcher::run::{self, RunError, RunOptions};
use launcher::test_harness;
use launcher::timeline;

use crate::RunArgs;

/// A failure that carries its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

/// gpurun's exit code for an error.
pub fn exit_code_of(e: &anyhow::Error) -> i32 {
    if let Some(f) = e.downcast_ref::<Failure>() {
        f.code
    } else if let Some(b) = e.downcast_ref::<BackendError>() {
        b.exit_code()
    } else if let Some(r) = e.downcast_ref::<RunError>() {
        r.exit_code()
    } else if let Some(p) = e.downcast_ref::<PlanError>() {
        p.exit_code()
    } else if e.downcast_ref::<CodeObjectError>().is_some() {
        exit::CODE_OBJECT
    } else {
        1
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let mut status = RunStatus::default();
    let code = match run_inner(&args, &mut status) {
        Ok(code) => code,
        Err(e) => {
            // Printed here, not by main, so that --json's object stays the last line.
            eprintln!("gpurun: {e:#}");
            status.status = "error".into();
            status.exit_code = exit_code_of(&e);
            status.error = Some(format!("{e:#}"));
            status.elapsed_s = started.elapsed().as_secs_f64();
            status.exit_code
        }
    };
    write_json(&args, &status)?;
    if status.launch.is_some() && !status.kernel_finished {
        exit_now(code);
    }
    Ok(code)
}

/// Ends the process without running `atexit` handlers: with a kernel still
/// running (a hang, detached threads, a broken ring), the driver libraries'
/// exit-time teardown could wait for it forever. Closing the process's
/// device files makes the kernel driver stop the GPU work instead.
fn exit_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    unsafe extern "C" {
        /// POSIX `_exit(2)`.
        fn _exit(status: std::ffi::c_int) -> !;
    }
    // SAFETY: `_exit` has no preconditions; our buffers are flushed above
    // and nothing else needs to run before the process ends.
    unsafe { _exit(exit::status_of(code).into()) }
}

fn write_json(args: &RunArgs, status: &RunStatus) -> anyhow::Result<()> {
    if !args.json && args.json_file.is_none() {
        return Ok(());
    }
    let text = serde_json::to_string(status).context("serialising the run status")?;
    if args.json {
        eprintln!("{text}");
    }
    if let Some(path) = &args.json_file {
        std::fs::write(path, format!("{text}\n")).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// This `gpurun run`'s own options: what came between `run` and `program`.
fn options_before(program: &std::ffi::OsStr) -> Vec<std::ffi::OsString> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let start = argv.iter().position(|a| a == "run").map_or(argv.len(), |i| i + 1);
    let end = argv[start..].iter().position(|a| a == program).map_or(argv.len(), |i| start + i);
    argv[start..end].to_vec()
}

fn run_inner(args: &RunArgs, status: &mut RunStatus) -> anyhow::Result<i32> {
    let (program, prog_args) = args.command.split_first().ok_or_else(|| anyhow!("no program given"))?;
    let prog_args = match prog_args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => prog_args,
    };
    let program = PathBuf::from(program);
    let code_path = if program.is_dir() { build(&program, args)? } else { program.clone() };
    status.code_object = Some(code_path.display().to_string());
    let code = CodeObject::read(&code_path)?;
    timeline::mark("code object read");
    // `cargo test` through the runner: one launch per test where the
    // harness cannot unwind (test_harness.rs).
    if std::env::var_os(test_harness::INVOKE_VAR).is_none()
        && test_harness::is_test_harness(&code.bytes)
        && !test_harness::unwinds(&code.bytes)
        && !test_harness::runs_in_one_launch(prog_args)
    {
        return test_harness::run_tests(&code_path, &options_before(program.as_os_str()), prog_args);
    }
    if args.no_cache {
        // The driver's JIT cache, for PTX loaded without ptxas. Set before
        // the driver starts (open_for), while no other thread runs.
        // SAFETY: gpurun has started no threads yet.
        unsafe { std::env::set_var("CUDA_CACHE_DISABLE", "1") };
    }
    if let Some(dir) = &args.fs_root {
        // Refused before a device is opened: a root that cannot be honoured
        // (missing, not a directory, no openat2) never runs unconfined.
        launcher::ring::calls::FsRoot::open(dir).map_err(|e| Failure { code: exit::USAGE, message: e.to_string() })?;
    }
    let mut backend = devices::open_for(&code, args.device)?;
    timeline::mark("device opened");
    let code = precompile_ptx(code, backend.info(), args.no_cache);
    timeline::mark("cubin ready");

    // argv[0] is the program as given, as a shell passes it; current_exe the
    // code object that runs, made absolute (as Linux's /proc/self/exe).
    let argv0 = program.as_os_str().to_owned();
    let exe = code_path.canonicalize().or_else(|_| std::path::absolute(&code_path)).unwrap_or_else(|_| code_path.clone());
    // Under --fs-root the program sees paths inside the root: the code
    // object's path there, or none (current_exe: NotFound) when it lies outside.
    let exe = match &args.fs_root {
        None => exe,
        Some(root) => root
            .canonicalize()
            .ok()
            .and_then(|r| exe.strip_prefix(r).ok().map(|inside| Path::new("/").join(inside)))
            .unwrap_or_default(),
    };
    let opts = RunOptions {
        threads: args.threads,
        stack_size: args.stack_size,
        call_stack_size: args.call_stack_size,
        heap_size: args.heap_size,
        timeout: args.timeout,
        idle_sleep_ns: args.idle_sleep_ns,
        exe: exe.as_os_str().as_bytes().to_vec(),
        args: std::iter::once(&argv0).chain(prog_args).map(|a| a.as_bytes().to_vec()).collect(),
        env: program_env(args),
        seed: args.seed,
        trace: args.trace,
        ring_slots: args.ring_slots,
        verbose: args.verbose,
        fs: args.fs.access(),
        fs_root: args.fs_root.clone(),
        ..RunOptions::default()
    };
    let sink = TimelineSink { inner: StdSink::default(), first: timeline::is_on() };
    let outcome = run::execute(backend.as_mut(), &code, &opts, sink)?;
    if let Some(msg) = &outcome.message {
        eprintln!("{msg}");
    }
    *status = outcome.status;
    if !status.kernel_finished {
        // The kernel still runs (detached threads, a hang): tearing the
        // backend down would wait for it; `run` ends the process instead.
        std::mem::forget(backend);
    }
    Ok(status.exit_code)
}

/// The program's environment as `NAME=VALUE` entries: gpurun's own, or
/// under `--fs-root` none of it; then each `--env` (replacing an entry of
/// the same name).
pub(crate) fn program_env(args: &RunArgs) -> Vec<Vec<u8>> {
    let entry = |k: &std::ffi::OsStr, v: &std::ffi::OsStr| [k.as_bytes(), b"=", v.as_bytes()].concat();
    let mut env: Vec<Vec<u8>> =
        if args.fs_root.is_some() { Vec::new() } else { std::env::vars_os().map(|(k, v)| entry(&k, &v)).collect() };
    for e in &args.env {
        let value = match &e.value {
            Some(v) => std::ffi::OsString::from(v),
            None => match std::env::var_os(&e.name) {
                Some(v) => v,
                None => continue,
            },
        };
        let prefix = [e.name.as_bytes(), b"="].concat();
        env.retain(|kv| !kv.starts_with(&prefix));
        env.push(entry(e.name.as_ref(), &value));
    }
    env
}

/// [`StdSink`] that marks the program's first output on the timeline.
struct TimelineSink {
    inner: StdSink,
    /// Whether the first output is still to be marked (false when the
    /// timeline is off).
    first: bool,
}

impl Sink for TimelineSink {
    fn write(&mut self, thread: u32, fd: u8, bytes: &[u8]) {
        self.inner.write(thread, fd, bytes);
        if std::mem::take(&mut self.first) {
            self.inner.flush();
            timeline::mark("first output written");
        }
    }

    fn flush(&mut self) {
        self.inner.flush();
    }
}

/// PTX for an NVIDIA device becomes a cubin through `ptxas` and the cubin
/// cache, where `ptxas` is found; otherwise (or if `ptxas` fails, which the
/// driver's JIT will then explain) the PTX goes to the driver as it is.
fn precompile_ptx(code: CodeObject, device: &launcher::backend::DeviceInfo, no_cache: bool) -> CodeObject {
    use launcher::cubin_cache::{self, CachePolicy, Source};
    if !matches!(code.kind, launcher::codeobj::Kind::Ptx(_)) {
        return code;
    }
    let policy = if no_cache { CachePolicy::Bypass } else { CachePolicy::Use };
    let name = code.path.file_name().map_or_else(|| code.path.display().to_string(), |n| n.to_string_lossy().into_owned());
    match cubin_cache::cubin_for(&code.bytes, &name, &device.arch, device.driver_version, policy) {
        Ok(Some((cubin, how))) => match CodeObject::from_bytes(&code.path, cubin) {
            Ok(compiled) => {
                if let Source::Cached = how {
                    eprintln!("{}{name} for {}", cubin_cache::CACHED_CUBIN_NOTE, device.arch);
                }
                compiled
            }
            Err(e) => {
                eprintln!("gpurun: warning: ptxas wrote no usable cubin ({e}); the driver compiles the PTX instead");
                code
            }
        },
        // cubin_for said why (no ptxas, or one newer than the driver).
        Ok(None) => code,
        Err(e) => {
            eprintln!("gpurun: warning: {e}\ngpurun: the driver compiles the PTX instead");
            code
        }
    }
}

/// `gpurun cache [clean]`.
pub fn cache(clean: bool) -> anyhow::Result<i32> {
    use launcher::cubin_cache;
    let dir = cubin_cache::cache_dir().ok_or_else(|| anyhow!("no cache directory: set XDG_CACHE_HOME or HOME"))?;
    if clean {
        let (n, bytes) = cubin_cache::clean(&dir).with_context(|| format!("removing {}", dir.display()))?;
        println!("removed {n} cubins ({bytes} bytes) from {}", dir.display());
    } else {
        let (n, bytes) = cubin_cache::usage(&dir);
        println!("{}: {n} cubins, {bytes} bytes", dir.display());
        match cubin_cache::find_ptxas() {
            Some(p) => println!("ptxas: {}", p.display()),
            None => println!("ptxas: not found (PTX is compiled by the driver's JIT, which has its own cache)"),
        }
    }
    Ok(0)
}

/// Builds a crate directory for `--arch` or the device's arch.
fn build(dir: &Path, args: &RunArgs) -> anyhow::Result<PathBuf> {
    let arch = match &args.arch {
        Some(a) => a.clone(),
        None => device_arch(args.device)?,
    };
    // gpurun links nvptx itself when called `gpu-ld` (main.rs).
    let linker = std::env::current_exe().context("locating gpurun")?;
    gpu_toolchain::build_crate(dir, &arch, true, args.bin.as_deref(), &linker).map_err(|e| {
        Failure { code: exit::CODE_OBJECT, message: format!("building {} for {arch} failed: {e}", dir.display()) }
            .into()
    })
}

/// The processor of device `index` of the first vendor that has devices.
fn device_arch(index: u32) -> anyhow::Result<String> {
    let mut reasons = Vec::new();
    for (vendor, r) in devices::probe_all() {
        match r {
            Ok(list) if !list.is_empty() => {
                let count = list.len() as u32;
                let d = list.get(index as usize).ok_or(BackendError::NoSuchDevice { vendor, index, count })?;
                return Ok(d.processor().to_string());
            }
            Ok(_) => reasons.push(format!("{}: no device", vendor.api())),
            Err(e) => reasons.push(e.to_string()),
        }
    }
    Err(Failure {
        code: exit::NO_DEVICE,
        message: format!(
            "no GPU to build for; pass --arch (gfx90a, gfx942, gfx1100, sm_90, ...) to build anyway.\n{}",
            reasons.join("\n")
        ),
    }
    .into())
}

pub fn devices(json: bool) -> anyhow::Result<i32> {
    let all = devices::devices_json();
    let found = !all.devices.is_empty();
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else if found {
        println!(
            "{:<3} {:<7} {:<24} {:<28} {:>8}  {:<13} {:<28} memory",
            "#", "vendor", "arch", "name", "units", "warp", "capacity"
        );
        for d in &all.devices {
            println!("{}", devices::describe(d));
        }
    }
    if !found {
        eprintln!("gpurun: no GPU found");
        for d in &all.drivers {
            if let Some(e) = &d.error {
                eprintln!("  {}: {}", d.api, e.replace('\n', "\n  "));
            }
        }
        return Ok(exit::NO_DEVICE);
    }
    Ok(0)
}
