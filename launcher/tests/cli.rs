//! The built `gpurun` binary without a GPU: usage, code object errors, and
//! the no-driver / no-device messages (driver paths pointed at nowhere with
//! `GPURUN_CUDA_LIB` / `GPURUN_HIP_LIB`).

use std::path::PathBuf;
use std::process::{Command, Output};

use launcher::exit;
use launcher::testutil::{amdgpu_elf, ptx};

const MISSING_CUDA: &str = "/nonexistent/gpurun-test/libcuda.so.1:/also/missing/libcuda.so";
const MISSING_HIP: &str = "/nonexistent/gpurun-test/libamdhip64.so";

fn gpurun(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpurun"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running gpurun")
}

/// Both drivers pointed at paths that do not exist.
fn no_drivers() -> [(&'static str, &'static str); 2] {
    [("GPURUN_CUDA_LIB", MISSING_CUDA), ("GPURUN_HIP_LIB", MISSING_HIP)]
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpurun-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn help_lists_the_commands_and_exit_codes() {
    let o = gpurun(&["--help"], &[]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for word in ["run", "devices", "setup", "build", "doctor", "demo", "124 timeout"] {
        assert!(out.contains(word), "--help lacks {word}: {out}");
    }
    let o = gpurun(&["run", "--help"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    for opt in
        ["--device", "--threads", "--stack-size", "--heap-size", "--timeout", "--idle-sleep-ns", "--arch", "--json"]
    {
        assert!(out.contains(opt), "run --help lacks {opt}");
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(gpurun(&["run"], &[]).status.code(), Some(exit::USAGE));
    assert_eq!(gpurun(&["run", "--threads", "many", "x"], &[]).status.code(), Some(exit::USAGE));
    assert_eq!(gpurun(&["run", "--heap-size", "3T", "x"], &[]).status.code(), Some(exit::USAGE));
    assert_eq!(gpurun(&["no-such-command"], &[]).status.code(), Some(exit::USAGE));
}

#[test]
fn unreadable_and_non_gpu_files_exit_4() {
    let o = gpurun(&["run", "/nonexistent/prog.ptx"], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read /nonexistent/prog.ptx"), "{}", stderr(&o));
    // gpurun itself: a host ELF.
    let o = gpurun(&["run", env!("CARGO_BIN_EXE_gpurun")], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT));
    assert!(stderr(&o).contains("(a host program or library)"), "{}", stderr(&o));
    let text = temp_file("notes.txt", b"just some text\n");
    let o = gpurun(&["run", text.to_str().unwrap()], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT));
    assert!(stderr(&o).contains("neither an ELF file nor PTX text"), "{}", stderr(&o));
}

#[test]
fn ptx_without_a_cuda_driver_names_every_path_tried() {
    let p = temp_file("hello.ptx", ptx("8.0", "sm_90").as_bytes());
    let o = gpurun(&["run", p.to_str().unwrap(), "--", "arg"], &no_drivers());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::NO_DEVICE), "{err}");
    assert!(err.contains("/nonexistent/gpurun-test/libcuda.so.1: not found"), "{err}");
    assert!(err.contains("/also/missing/libcuda.so: not found"), "{err}");
    assert!(err.contains("GPURUN_CUDA_LIB"), "{err}");
}

#[test]
fn amd_code_object_without_hip_names_the_paths() {
    let p = temp_file("hello.elf", &amdgpu_elf(0x3f, Some(0)));
    let o = gpurun(&["run", p.to_str().unwrap()], &no_drivers());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::NO_DEVICE), "{err}");
    assert!(err.contains("/nonexistent/gpurun-test/libamdhip64.so: not found"), "{err}");
    assert!(err.contains("HIP runtime library"), "{err}");
}

#[test]
fn devices_without_drivers() {
    let o = gpurun(&["devices"], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::NO_DEVICE));
    let err = stderr(&o);
    assert!(err.contains("no GPU found") && err.contains(MISSING_HIP), "{err}");
    let o = gpurun(&["devices", "--json"], &no_drivers());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("devices --json prints JSON");
    assert_eq!(v["devices"].as_array().unwrap().len(), 0);
    assert_eq!(v["drivers"].as_array().unwrap().len(), 2);
    assert!(v["drivers"][1]["error"].as_str().unwrap().contains("/also/missing/libcuda.so"));
}

#[test]
fn json_status_of_a_failed_run() {
    let p = temp_file("status.ptx", ptx("8.0", "sm_90").as_bytes());
    let status = std::env::temp_dir().join(format!("gpurun-status-{}.json", std::process::id()));
    let o = gpurun(&["run", "--json", "--json-file", status.to_str().unwrap(), p.to_str().unwrap()], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::NO_DEVICE));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&status).unwrap()).unwrap();
    assert_eq!(v["status"], "error");
    assert_eq!(v["exit_code"], exit::NO_DEVICE);
    assert!(v["error"].as_str().unwrap().contains("libcuda"));
    // --json: the same object is the last line of stderr.
    let last = stderr(&o).lines().last().unwrap().to_string();
    let w: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(w["exit_code"], exit::NO_DEVICE);
}

/// Every `run` option given hostile values, on a machine with no driver:
/// each is a usage error (exit 2) whose message names the option, or passes
/// parsing and ends as the run without a GPU does (exit 3; 1 where the JSON
/// file cannot be written). Never a panic or a signal.
#[test]
fn hostile_option_values_never_panic() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    const U64_MAX: &str = "18446744073709551615";
    const U64_OVER: &str = "18446744073709551616";
    const USAGE: i32 = exit::USAGE;
    const NO_GPU: i32 = exit::NO_DEVICE;
    let integers = |ok_zero: i32, ok_max: i32| {
        vec![("0", ok_zero), (U64_MAX, ok_max), (U64_OVER, USAGE), ("-1", USAGE), ("NaN", USAGE), ("inf", USAGE), ("", USAGE), ("1e3", USAGE)]
    };
    let sizes = vec![
        ("0", USAGE),
        (U64_MAX, USAGE),                // not a multiple of 16 (stacks) or fits (heap: below)
        ("18446744073709551600", NO_GPU), // fits a u64; too large only once the warps are known
        (U64_OVER, USAGE),
        ("99999999999999G", USAGE),
        ("70368744177416K", NO_GPU),
        ("-1", USAGE),
        ("NaN", USAGE),
        ("inf", USAGE),
        ("", USAGE),
        ("12Q", USAGE),
    ];
    let mut heap = sizes.clone();
    heap[1].1 = NO_GPU; // the heap need not be a multiple of 16
    let table: Vec<(&str, Vec<(&str, i32)>)> = vec![
        ("--device", {
            let mut v = integers(NO_GPU, USAGE);
            v.push(("4294967295", NO_GPU)); // a u32; out of range only once devices are counted
            v
        }),
        ("--threads", {
            let mut v = integers(USAGE, USAGE);
            v.push(("4294967295", NO_GPU));
            v
        }),
        ("--stack-size", sizes.clone()),
        ("--call-stack-size", sizes),
        ("--heap-size", heap),
        (
            "--timeout",
            vec![
                ("0", USAGE),
                ("-1", USAGE),
                ("1e20", USAGE),
                ("1e-300", USAGE),
                ("NaN", USAGE),
                ("inf", USAGE),
                ("-inf", USAGE),
                ("", USAGE),
                ("1s", NO_GPU),
                ("0.5", NO_GPU),
            ],
        ),
        ("--idle-sleep-ns", integers(NO_GPU, NO_GPU)),
        ("--seed", integers(NO_GPU, NO_GPU)),
        ("--ring-slots", vec![("0", USAGE), ("1", USAGE), ("3", USAGE), ("2", NO_GPU), (U64_MAX, USAGE), ("-1", USAGE), ("", USAGE)]),
        ("--fs", vec![("", USAGE), ("some", USAGE), ("none", NO_GPU)]),
        ("--emulate", vec![("", USAGE), ("sm_90", USAGE), ("gfx9999", USAGE)]),
        ("--arch", vec![("", NO_GPU), ("-", NO_GPU)]), // for crate directories only
        ("--bin", vec![("", NO_GPU)]),
        ("--json-file", vec![("", USAGE), ("/nonexistent/dir/status.json", 1)]),
    ];
    let program = temp_file("hostile.ptx", ptx("8.0", "sm_90").as_bytes());
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut run = |opt: &str, value: OsString, want: i32| {
        cases += 1;
        let o = Command::new(env!("CARGO_BIN_EXE_gpurun"))
            .arg("run")
            .arg(opt)
            .arg(&value)
            .arg(&program)
            .envs(no_drivers())
            .output()
            .expect("running gpurun");
        let err = stderr(&o);
        let named = want != USAGE || err.contains(opt);
        if o.status.code() != Some(want) || !named || err.contains("panicked") {
            failures.push(format!("{opt} {value:?}: exit {:?} (want {want}), stderr: {err}", o.status));
        }
    };
    for (opt, values) in &table {
        for (v, want) in values {
            run(opt, OsString::from(v), *want);
        }
        // Not UTF-8: a usage error for every option that reads text or a
        // number (--json-file takes any path: written where it says).
        if *opt != "--json-file" {
            run(opt, OsString::from_vec(b"\xff\xfe".to_vec()), USAGE);
        }
    }
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn unknown_options_before_the_program_are_usage_errors() {
    let p = temp_file("unknown.ptx", ptx("8.0", "sm_90").as_bytes());
    let o = gpurun(&["run", "--frobnicate", p.to_str().unwrap()], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::USAGE), "{}", stderr(&o));
    assert!(stderr(&o).contains("unexpected argument '--frobnicate'") && stderr(&o).contains("Usage: gpurun run"), "{}", stderr(&o));
    // After the program, it is the program's.
    let o = gpurun(&["run", p.to_str().unwrap(), "--frobnicate"], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::NO_DEVICE), "{}", stderr(&o));
    // A program whose path starts with `-`, after `--`.
    let o = gpurun(&["run", "--", "-no-such-program.ptx"], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read -no-such-program.ptx"), "{}", stderr(&o));
}

#[test]
fn fifos_and_devices_are_refused_unread() {
    let o = gpurun(&["run", "/dev/zero"], &no_drivers());
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/zero is a character device, not a file"), "{}", stderr(&o));
    let fifo = std::env::temp_dir().join(format!("gpurun-cli-{}/prog.fifo", std::process::id()));
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&fifo);
    if !Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        println!("skipped the FIFO: mkfifo failed");
        return;
    }
    // Before the fix this waited for a writer forever: bound it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpurun"))
        .args(["run", fifo.to_str().unwrap()])
        .envs(no_drivers())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("gpurun run FIFO hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(exit::CODE_OBJECT));
    assert!(stderr(&o).contains("is a FIFO (named pipe), not a file"), "{}", stderr(&o));
}
