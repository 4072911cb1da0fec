//! `gpurun` against a HIP runtime on a machine without an AMD GPU: every run
//! must end in the "no AMD GPU" error (exit code 3), within seconds, without
//! a signal, and with one line from gpurun saying that the runtime loaded
//! but found no device, and why.
//!
//! - Debian's HIP runtime (`libamdhip64-5`, which `.ci/run` installs with
//!   `libamdhip64-dev`), found by gpurun's own search. Skipped, saying why,
//!   where gpurun cannot load it or where `/dev/kfd` exists (a GPU may be there).
//! - A stand-in `libamdhip64` built here with the C compiler (skipped without
//!   one): every entry point of the launcher's HIP table, with `hipInit` and
//!   `hipGetDeviceCount` answering as the test asks (an error code, no
//!   device, or `abort()`, which no installed runtime can be made to do on
//!   demand), and a copy that needs a library that is missing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use launcher::exit;
use launcher::testutil::amdgpu_elf;

const MISSING_CUDA: &str = "/nonexistent/gpurun-test/libcuda.so.1";
/// gfx90a (EF_AMDGPU_MACH 0x3f), as `gpurun build --arch gfx90a` makes.
const GFX90A: u32 = 0x3f;

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpurun-hip-runtime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn code_object() -> PathBuf {
    let p = temp_dir().join("hello-gfx90a.elf");
    std::fs::write(&p, amdgpu_elf(GFX90A, Some(0))).unwrap();
    p
}

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs gpurun; a run that takes more than a minute is killed and fails the
/// test (a hang in the runtime is one of the things checked).
fn gpurun(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpurun"));
    c.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.env("GPURUN_CUDA_LIB", MISSING_CUDA);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("running gpurun");
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gpurun {args:?} hung for a minute: {}", err.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Exit code 3, not a signal (an abort or a crash).
fn assert_no_device(r: &Run) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(r.status.signal(), None, "gpurun was killed by a signal: {}", r.stderr);
    assert_eq!(r.status.code(), Some(exit::NO_DEVICE), "{}", r.stderr);
}

// ------------------------------------------------------ Debian's runtime

#[test]
fn debian_hip_runtime_without_a_device() {
    if Path::new("/dev/kfd").exists() {
        println!("SKIPPED: /dev/kfd exists, so an AMD GPU may be here; this test needs a machine without one");
        return;
    }
    let elf = code_object();
    let elf = elf.to_str().unwrap();
    let r = gpurun(&["run", elf], &[]);
    if r.stderr.contains("could not load the HIP runtime library") {
        println!("SKIPPED: gpurun cannot load libamdhip64 (apt-get install libamdhip64-5):\n{}", r.stderr);
        return;
    }
    assert_no_device(&r);
    // One line, gpurun's: the runtime writes nothing of its own.
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    let line = lines[0];
    assert!(line.starts_with("gpurun: no AMD GPU: the HIP runtime loaded ("), "{line}");
    assert!(line.contains("libamdhip64.so"), "{line}");
    // Debian's HIP 5.2 says hipErrorInvalidDevice; later ones may say NoDevice.
    assert!(line.contains(") but found no AMD GPU (hipInit: hipError"), "{line}");
    assert!(line.contains("/dev/kfd does not exist: no amdgpu kernel driver is loaded here"), "{line}");
    println!("{line}");

    // --json: the status object is the last line.
    let r = gpurun(&["run", "--json", elf], &[]);
    assert_no_device(&r);
    let v: serde_json::Value = serde_json::from_str(r.stderr.lines().last().unwrap()).unwrap();
    assert_eq!(v["status"], "error");
    assert_eq!(v["exit_code"], exit::NO_DEVICE);
    assert!(v["error"].as_str().unwrap().contains("but found no AMD GPU (hipInit: "), "{v}");

    // `devices` and `doctor` go through the same hipInit.
    let r = gpurun(&["devices"], &[]);
    assert_no_device(&r);
    assert!(r.stderr.contains("HIP: no AMD GPU: the HIP runtime loaded ("), "{}", r.stderr);
    let r = gpurun(&["doctor"], &[]);
    assert!(r.stdout.contains("HIP devices: no AMD GPU: the HIP runtime loaded ("), "{}", r.stdout);
}

// ------------------------------------------------- a stand-in runtime

/// A C file defining every entry point of the launcher's HIP table.
/// `hipInit` does what `GPURUN_FAKE_HIP_INIT` says (`abort`, or the error
/// code to return), `hipGetDeviceCount` reports `GPURUN_FAKE_HIP_COUNT`
/// devices; every other call fails with hipErrorNotSupported (801).
fn fake_runtime_source() -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         static int env_int(const char* k, int d) { const char* v = getenv(k); return v ? atoi(v) : d; }\n\
         int hipInit(unsigned flags) {\n\
         \x20   const char* v = getenv(\"GPURUN_FAKE_HIP_INIT\");\n\
         \x20   if (v && strcmp(v, \"abort\") == 0) { fputs(\"fake HIP: giving up\\n\", stderr); abort(); }\n\
         \x20   return v ? atoi(v) : 0;\n}\n\
         int hipGetDeviceCount(int* n) { *n = env_int(\"GPURUN_FAKE_HIP_COUNT\", 0); return 0; }\n\
         const char* hipGetErrorName(int e) {\n\
         \x20   switch (e) { case 35: return \"hipErrorInsufficientDriver\"; case 100: return \"hipErrorNoDevice\";\n\
         \x20   case 101: return \"hipErrorInvalidDevice\"; default: return \"hipErrorUnknown\"; }\n}\n\
         const char* hipGetErrorString(int e) { return e == 100 ? \"no ROCm-capable device is detected\" : \"\"; }\n",
    );
    let special = ["hipInit", "hipGetDeviceCount", "hipGetErrorName", "hipGetErrorString"];
    for sig in launcher::hip::sys::signatures() {
        if !special.contains(&sig.name) {
            c.push_str(&format!("int {}() {{ return 801; }}\n", sig.name));
        }
    }
    c
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// Builds a shared library from `source` (with `args` after it); `Err` says why not.
fn build_library(name: &str, source: &str, args: &[&str]) -> Result<PathBuf, String> {
    let dir = temp_dir();
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let lib = dir.join(format!("{name}.so"));
    let out = Command::new(cc())
        .args(["-std=gnu11", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&c)
        .args(args)
        .output()
        .map_err(|e| format!("no C compiler ({}): {e}", cc()))?;
    if !out.status.success() {
        return Err(format!("{} failed: {}", cc(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(lib)
}

fn fake_runtime() -> Option<PathBuf> {
    match build_library("libamdhip64-fake", &fake_runtime_source(), &[]) {
        Ok(lib) => Some(lib),
        Err(why) => {
            println!("SKIPPED: cannot build the stand-in HIP runtime: {why}");
            None
        }
    }
}

/// The one line gpurun wrote, after whatever the runtime wrote.
fn gpurun_line(r: &Run) -> &str {
    let line = r.stderr.lines().last().unwrap_or_default();
    assert!(line.starts_with("gpurun: no AMD GPU: "), "{}", r.stderr);
    line
}

#[test]
fn a_runtime_that_aborts_in_hip_init_is_no_device() {
    let Some(lib) = fake_runtime() else { return };
    let lib = lib.to_str().unwrap();
    let elf = code_object();
    for args in [vec!["run", elf.to_str().unwrap()], vec!["devices"]] {
        let r = gpurun(&args, &[("GPURUN_HIP_LIB", lib), ("GPURUN_FAKE_HIP_INIT", "abort")]);
        assert_no_device(&r);
        assert!(r.stderr.starts_with("fake HIP: giving up\n"), "{}", r.stderr);
        let line = gpurun_line(&r);
        assert!(
            line.contains(&format!("the HIP runtime loaded ({lib}) but aborted the process in hipInit: ")),
            "{line}"
        );
        assert!(line.contains("/dev/kfd"), "{line}");
    }
}

#[test]
fn hip_init_errors_are_no_device() {
    let Some(lib) = fake_runtime() else { return };
    let lib = lib.to_str().unwrap();
    let elf = code_object();
    let elf = elf.to_str().unwrap();
    for (code, expected) in [
        ("100", "but found no AMD GPU (hipInit: hipErrorNoDevice): /dev/kfd"),
        ("101", "but found no AMD GPU (hipInit: hipErrorInvalidDevice): /dev/kfd"),
        ("35", "needs a newer amdgpu kernel driver (hipInit: hipErrorInsufficientDriver)"),
        ("999", "hipInit failed in"),
    ] {
        let r = gpurun(&["run", elf], &[("GPURUN_HIP_LIB", lib), ("GPURUN_FAKE_HIP_INIT", code)]);
        assert_no_device(&r);
        assert!(gpurun_line(&r).contains(expected), "hipInit returning {code}: {}", r.stderr);
    }
    // hipInit succeeds, no device counted.
    let r = gpurun(&["run", elf], &[("GPURUN_HIP_LIB", lib), ("GPURUN_FAKE_HIP_COUNT", "0")]);
    assert_no_device(&r);
    assert!(gpurun_line(&r).contains("loaded and initialised"), "{}", r.stderr);
    assert!(gpurun_line(&r).ends_with("but sees no AMD GPU (hipGetDeviceCount)"), "{}", r.stderr);
}

#[test]
fn a_runtime_missing_a_library_it_needs_says_so() {
    let dep = match build_library("libgpurun-fake-dep", "int gpurun_fake_dep(void) { return 0; }\n", &[]) {
        Ok(dep) => dep,
        Err(why) => return println!("SKIPPED: {why}"),
    };
    let dir = dep.parent().unwrap().to_str().unwrap().to_string();
    let source = format!(
        "{}int gpurun_fake_dep(void);\nint gpurun_uses_dep(void) {{ return gpurun_fake_dep(); }}\n",
        fake_runtime_source()
    );
    let lib = build_library("libamdhip64-needs-dep", &source, &["-L", &dir, "-lgpurun-fake-dep"]).unwrap();
    std::fs::remove_file(&dep).unwrap();
    let missing = "found, but a library it needs is missing: libgpurun-fake-dep.so: cannot open shared object file";
    let r = gpurun(&["devices"], &[("GPURUN_HIP_LIB", lib.to_str().unwrap())]);
    assert_no_device(&r);
    assert!(r.stderr.contains(&format!("{}: {missing}", lib.display())), "{}", r.stderr);
    // A bare name the loader finds (dlopen's message then names only the
    // dependency, not the library: it must not read as "not found").
    let name = lib.file_name().unwrap().to_str().unwrap();
    let r = gpurun(&["devices"], &[("GPURUN_HIP_LIB", name), ("LD_LIBRARY_PATH", &dir)]);
    assert_no_device(&r);
    assert!(r.stderr.contains(&format!("{name}: {missing}")), "{}", r.stderr);
}
