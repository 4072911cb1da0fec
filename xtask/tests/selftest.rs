//! `gpurun-dev selftest --bundle` end to end, with a stand-in gpurun (it
//! lists one H100, an MI250X, or none, and prints what the programs would)
//! and stand-in CUDA and HIP tools, each run in an environment that says
//! which tools exist: the report's contents, what it says was skipped, the
//! exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

const DEV: &str = env!("CARGO_BIN_EXE_gpurun-dev");

const H100: &str = r#"{"devices": [{"index": 0, "vendor": "nvidia", "name": "Fake H100", "arch": "sm_90",
  "compute_units": 132, "driver_version": 13000}], "drivers": []}"#;
const MI250X: &str = r#"{"devices": [{"index": 0, "vendor": "amd", "name": "Fake MI250X", "arch": "gfx90a:sramecc+:xnack-",
  "compute_units": 110, "driver_version": 50422}], "drivers": []}"#;
const NO_GPU: &str = r#"{"devices": [], "drivers": [{"api": "CUDA", "library": null, "devices": 0,
  "error": "libcuda.so.1: cannot open shared object file"}]}"#;

/// gpurun: `devices` from devices.json beside it; `run` prints maths' line
/// (one short of correct), or a benchmark row for the program's id.
const FAKE_GPURUN: &str = r#"#!/bin/sh
here=$(dirname "$0")
case "$1" in
--version) echo "gpurun 0.1.0" ;;
devices)
    if [ "$2" = --json ]; then cat "$here/devices.json"; else echo "0 NVIDIA sm_90 Fake H100"; fi
    grep -q '"devices": \[\]' "$here/devices.json" && exit 3
    exit 0 ;;
run)
    for a; do case $a in *.ptx|*.cubin|*.elf) obj=$a ;; esac; done
    id=$(basename "$obj"); id=${id%-*}
    case $id in
    maths) echo "maths: 26 of 27 correct"; echo "gpurun: the note on stderr" >&2 ;;
    *) echo "{\"benchmark\":\"$id\",\"variant\":\"\",\"unit\":\"ns\",\"status\":\"measured\",\"p50\":1500,\"p99\":2500,\"max\":4000}" ;;
    esac ;;
esac
"#;

const ROW_CPU: &str = r#"{"benchmark":"spawn_join","variant":"","unit":"ns","status":"measured","p50":20000,"p99":30000,"max":40000}"#;

/// nvcc: `-o OUT SOURCE`; a baseline that prints a row, none for broken.cu.
const FAKE_NVCC: &str = r#"#!/bin/sh
[ "$1" = --version ] && { echo "nvcc: NVIDIA (R) Cuda compiler driver"; echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; }
while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift ;; *.cu) src=$1 ;; esac; shift; done
case $src in *broken.cu) echo "broken.cu(1): error: expected a declaration" >&2; exit 1 ;; esac
printf '#!/bin/sh\necho %s\n' "'{\"benchmark\":\"spawn_join\",\"variant\":\"\",\"unit\":\"ns\",\"status\":\"measured\",\"p50\":900,\"p99\":1000,\"max\":1100}'" > "$out"
chmod +x "$out"
"#;

/// hipcc: `-o OUT SOURCE`, its arguments kept in hipcc.args beside it; a
/// baseline that prints a row.
const FAKE_HIPCC: &str = r#"#!/bin/sh
[ "$1" = --version ] && { echo "HIP version: 5.2.21153-0"; echo "Debian clang version 15.0.6"; exit 0; }
echo "$@" >> "$(dirname "$0")/hipcc.args"
while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift ;; *.cu) src=$1 ;; esac; shift; done
printf '#!/bin/sh\necho %s\n' "'{\"benchmark\":\"spawn_join\",\"variant\":\"\",\"unit\":\"ns\",\"status\":\"measured\",\"p50\":700,\"p99\":800,\"max\":900}'" > "$out"
chmod +x "$out"
"#;

struct Fixture {
    dir: PathBuf,
}

fn write_exe(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

impl Fixture {
    /// A bundle with maths for sm_90 and a bench bundle with spawn_join.
    fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("selftest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bundle = dir.join("bundle");
        for d in ["bin", "out", "bundle/bench/cpu", "bundle/bench/native-src"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        write_exe(&bundle.join("gpurun"), FAKE_GPURUN);
        std::fs::write(bundle.join("devices.json"), H100).unwrap();
        std::fs::write(bundle.join("COMMIT"), "abc123def456\n").unwrap();
        std::fs::write(bundle.join("maths-sm_90.ptx"), ".version 8.7\n").unwrap();
        let gz = Command::new("sh")
            .arg("-c")
            .arg(format!("echo '.version 8.7' | gzip -c > {}", bundle.join("bench/spawn_join-sm_90.ptx.gz").display()))
            .status()
            .unwrap();
        assert!(gz.success());
        write_exe(&bundle.join("bench/cpu/spawn_join"), &format!("#!/bin/sh\necho '{ROW_CPU}'\n"));
        std::fs::write(bundle.join("bench/native-src/spawn_join.cu"), "// a baseline\n").unwrap();
        std::fs::write(bundle.join("bench/COMMIT"), "abc123def456-dirty\n").unwrap();
        Fixture { dir }
    }

    fn bundle(&self) -> PathBuf {
        self.dir.join("bundle")
    }

    fn tool(&self, name: &str, script: &str) {
        write_exe(&self.dir.join("bin").join(name), script);
    }

    /// `gpurun-dev selftest --bundle`: its exit code, the report and what it printed.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = Command::new(DEV);
        cmd.arg("selftest").arg("--bundle").arg(self.bundle()).args(args);
        self.run_command(cmd)
    }

    /// `gpurun-dev selftest` in a checkout whose make-selftest-bundle.sh is `script`.
    fn run_from_source(&self, script: &str, args: &[&str]) -> (i32, String, String) {
        let repo = self.dir.join("repo");
        std::fs::create_dir_all(repo.join("scripts")).unwrap();
        std::fs::write(repo.join("scripts/make-selftest-bundle.sh"), script).unwrap();
        self.tool("rustc", "#!/bin/sh\necho 'rustc 1.97.0-nightly (0123abcd 2026-05-18)'\n");
        let mut cmd = Command::new(DEV);
        cmd.arg("selftest").arg("--gpurun").arg(self.bundle().join("gpurun")).args(args);
        cmd.env("GPURUN_REPO", &repo).env("RUSTC", self.dir.join("bin/rustc"));
        self.run_command(cmd)
    }

    fn run_command(&self, mut cmd: Command) -> (i32, String, String) {
        let bin = self.dir.join("bin");
        cmd.arg("--out").arg(self.dir.join("out")).arg("--work").arg(self.dir.join("work"));
        cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
        // Each tool is the stand-in in bin/, or none: a variable naming no file turns the lookup off.
        for (var, name) in [("NVCC", "nvcc"), ("GPURUN_PTXAS", "ptxas"), ("HIPCC", "hipcc"), ("NVIDIA_SMI", "nvidia-smi")] {
            let p = bin.join(name);
            cmd.env(var, if p.exists() { p } else { PathBuf::from("/nonexistent").join(name) });
        }
        for var in ["CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "GPURUN_COMMIT"] {
            cmd.env_remove(var);
        }
        let out = cmd.output().expect("gpurun-dev runs");
        let reports: Vec<PathBuf> = std::fs::read_dir(self.dir.join("out")).unwrap().flatten().map(|e| e.path()).collect();
        assert_eq!(reports.len(), 1, "one report file: {reports:?}");
        let report = std::fs::read_to_string(&reports[0]).unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), report, said)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn has(report: &str, what: &str) {
    assert!(report.contains(what), "the report lacks `{what}`:\n{report}");
}

#[test]
fn a_passing_run_reports_the_machine_the_results_and_what_it_skipped() {
    let f = Fixture::new("pass");
    let (code, report, said) = f.run(&["--only", "devices", "--bench-only", "spawn_join"]);
    assert_eq!(code, 0, "{said}\n{report}");
    has(&report, "# gpurun selftest: PASS — Fake H100 (sm_90, 132 SMs)");
    has(&report, "| commit | abc123def456 |");
    has(&report, "| arch tested | sm_90 |");
    has(&report, "CUDA 13.0");
    has(&report, "| gpurun | gpurun 0.1.0 |");
    has(&report, "| host | ");
    has(&report, "## Failures\n\nNone.");
    has(&report, "| devices | PASS | 0 |");
    // GPU and CPU rows measured; the commit the bench programs were built at.
    has(&report, "| spawn_join | nvidia |  | 1500 | 2500 | 4000 |");
    has(&report, "| spawn_join | cpu |  | 20000 | 30000 | 40000 |");
    has(&report, "\"commit\":\"abc123def456-dirty\"");
    // No CUDA tools: said, and what that left out.
    has(&report, "| ptxas | not found |");
    has(&report, "| nvcc | not found |");
    has(&report, "- no ptxas (");
    has(&report, "- no nvcc (");
    has(&report, "bench, 1 native-cuda row not run: no nvcc (NVCC, PATH, CUDA_HOME, /usr/local/cuda/bin) to build benches/native with");
    has(&report, "bench, 1 amd row not run: no AMD hardware");
    has(&report, "exit code 0.");
    assert!(said.contains("report: "), "{said}");
}

#[test]
fn found_tools_are_reported_with_their_versions_and_nvcc_builds_the_baselines() {
    let f = Fixture::new("tools");
    f.tool("nvcc", FAKE_NVCC);
    f.tool("ptxas", "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
    f.tool("hipcc", "#!/bin/sh\necho 'HIP version: 6.2.41133'\n");
    let (code, report, said) = f.run(&["--skip-acceptance", "--bench-only", "spawn_join"]);
    assert_eq!(code, 0, "{said}\n{report}");
    has(&report, "| ptxas | Cuda compilation tools, release 13.0, V13.0.88 (`");
    has(&report, "| nvcc | Cuda compilation tools, release 13.0, V13.0.88 (`");
    has(&report, "| hipcc | HIP version: 6.2.41133 (`");
    has(&report, "| spawn_join | native-cuda |  | 900 | 1000 | 1100 |");
    has(&report, "acceptance suite: left out (--skip-acceptance)");
    assert!(!report.contains("no ptxas") && !report.contains("no nvcc"), "{report}");

    // A baseline nvcc cannot compile fails the selftest, and says why.
    std::fs::write(f.bundle().join("bench/native-src/broken.cu"), "nonsense\n").unwrap();
    std::fs::remove_dir_all(f.dir.join("out")).unwrap();
    std::fs::create_dir_all(f.dir.join("out")).unwrap();
    let (code, report, _) = f.run(&["--skip-acceptance", "--bench-only", "spawn_join"]);
    assert_eq!(code, 1, "{report}");
    has(&report, "- nvcc failed on broken.cu: exit code 1: ");
    has(&report, "(broken.cu(1): error: expected a declaration)");
}

#[test]
fn on_amd_hipcc_builds_the_native_hip_baselines_for_the_gpus_arch() {
    let f = Fixture::new("amd");
    let bundle = f.bundle();
    std::fs::write(bundle.join("devices.json"), MI250X).unwrap();
    std::fs::rename(bundle.join("maths-sm_90.ptx"), bundle.join("maths-gfx90a.elf")).unwrap();
    std::fs::rename(bundle.join("bench/spawn_join-sm_90.ptx.gz"), bundle.join("bench/spawn_join-gfx90a.elf.gz")).unwrap();
    // No hipcc: said, and the native-hip row says why.
    let (code, report, said) = f.run(&["--skip-acceptance", "--bench-only", "spawn_join"]);
    assert_eq!(code, 0, "{said}\n{report}");
    has(&report, "- no hipcc (HIPCC, PATH, ROCM_PATH/bin, /opt/rocm/bin): the native HIP baselines (benches/native) were not built");
    has(&report, "bench, 1 native-hip row not run: no hipcc (HIPCC, PATH, ROCM_PATH/bin, /opt/rocm/bin) to build benches/native with");

    f.tool("hipcc", FAKE_HIPCC);
    std::fs::remove_dir_all(f.dir.join("out")).unwrap();
    std::fs::create_dir_all(f.dir.join("out")).unwrap();
    let (code, report, said) = f.run(&["--skip-acceptance", "--bench-only", "spawn_join"]);
    assert_eq!(code, 0, "{said}\n{report}");
    has(&report, "| hipcc | HIP version: 5.2.21153-0; Debian clang version 15.0.6 (`");
    has(&report, "| spawn_join | amd |  | 1500 | 2500 | 4000 |");
    has(&report, "| spawn_join | native-hip |  | 700 | 800 | 900 |");
    assert!(!report.contains("native-cuda"), "an AMD machine has no native CUDA rows:\n{report}");
    let args = std::fs::read_to_string(f.dir.join("bin/hipcc.args")).unwrap();
    assert!(args.starts_with("--offload-arch=gfx90a -O3 -std=c++17 -o ") && args.trim_end().ends_with("native-src/spawn_join.cu"), "{args}");
}

#[test]
fn failures_exit_1_and_the_report_keeps_their_logs() {
    let f = Fixture::new("fail");
    write_exe(&f.bundle().join("bench/cpu/spawn_join"), "#!/bin/sh\necho 'boom' >&2\nexit 1\n");
    let (code, report, said) = f.run(&["--only", "maths", "--bench-only", "spawn_join"]);
    assert_eq!(code, 1, "{said}\n{report}");
    has(&report, "# gpurun selftest: FAIL — Fake H100");
    has(&report, "- acceptance `maths`: f32/f64 maths and 128-bit integer conversions correct: no stdout line `maths: 27 of 27 correct`");
    has(&report, "| maths | **FAIL** | 0 |");
    has(&report, "### `maths` failed");
    has(&report, "stdout (its end):\n\n````\nmaths: 26 of 27 correct\n````");
    has(&report, "stderr (its end):\n\n````\ngpurun: the note on stderr\n````");
    has(&report, "- bench `spawn_join` (cpu): not run: failed: exit code 1: boom");
    has(&report, "exit code 1.");
    assert!(said.contains("FAIL: acceptance `maths`"), "{said}");
}

#[test]
fn without_a_gpu_it_says_so_exits_3_and_still_writes_the_report() {
    let f = Fixture::new("nogpu");
    std::fs::write(f.bundle().join("devices.json"), NO_GPU).unwrap();
    let (code, report, said) = f.run(&[]);
    assert_eq!(code, 3, "{said}\n{report}");
    has(&report, "# gpurun selftest: NO GPU FOUND — no GPU");
    has(&report, "| GPU | none found: CUDA: libcuda.so.1: cannot open shared object file |");
    has(&report, "- acceptance suite: no GPU found");
    has(&report, "- benchmark matrix: no GPU found");
    has(&report, "\"error\": \"libcuda.so.1: cannot open shared object file\"");
    assert!(said.contains("no GPU found"), "{said}");
}

#[test]
fn a_bundle_for_another_arch_fails_and_one_without_bench_skips_the_matrix() {
    let f = Fixture::new("arch");
    std::fs::rename(f.bundle().join("maths-sm_90.ptx"), f.bundle().join("maths-gfx90a.elf")).unwrap();
    let (code, report, _) = f.run(&[]);
    assert_eq!(code, 1, "{report}");
    has(&report, "has no program built for sm_90 (it has: gfx90a); make one with `scripts/make-selftest-bundle.sh sm_90`");

    let f = Fixture::new("nobench");
    std::fs::remove_dir_all(f.bundle().join("bench")).unwrap();
    let (code, report, _) = f.run(&["--only", "devices"]);
    assert_eq!(code, 0, "{report}");
    has(&report, "- benchmark matrix: no ");
    has(&report, "/bench in the bundle (scripts/make-selftest-bundle.sh puts it there)");
}

#[test]
fn a_filter_that_names_nothing_is_a_usage_error() {
    let out = Command::new(DEV).args(["selftest", "--only", "no-such-check", "--out", "/nonexistent"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no acceptance check's name contains `no-such-check`"));
}

#[test]
fn from_a_checkout_it_builds_the_bundle_for_the_gpu_found_then_tests_it() {
    let f = Fixture::new("source");
    let build = format!("echo \"building for $1\"\nrm -rf gpu-bundle\ncp -r {} gpu-bundle\n", f.bundle().display());
    let (code, report, said) = f.run_from_source(&build, &["--only", "devices", "--skip-bench"]);
    assert_eq!(code, 0, "{said}\n{report}");
    has(&report, "| mode | built here from the checkout (scripts/make-selftest-bundle.sh) |");
    has(&report, "| rustc | rustc 1.97.0-nightly (0123abcd 2026-05-18) (`");
    has(&report, "## Build\n\n<details><summary>build log (its end)</summary>\n\n````\nbuilding for sm_90\n````");
    has(&report, "| devices | PASS | 0 |");
    assert!(said.contains("building for sm_90"), "the build's output is shown as it comes: {said}");

    std::fs::remove_dir_all(f.dir.join("out")).unwrap();
    std::fs::create_dir_all(f.dir.join("out")).unwrap();
    let (code, report, _) = f.run_from_source("echo 'error: could not compile `std-coverage`'\nexit 101\n", &[]);
    assert_eq!(code, 1, "{report}");
    has(&report, "- building the bundle failed (exit status: 101)");
    has(&report, "error: could not compile `std-coverage`");
    has(&report, "- acceptance suite: the bundle was not built");
}
