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
