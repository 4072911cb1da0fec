//! `cargo test` on the GPU: a libtest harness run through `gpurun run`
//! (cargo's runner) is driven the way libtest drives itself under
//! `panic = "abort"`: one process per test. The GPU std is panic=abort, so a
//! panicking test ends its launch; one launch per test keeps the others
//! running, and this module prints libtest's report around them.
//!
//! - the harness lists its tests itself (`--list --format json`, with the
//!   user's filters, `--exact`, `--skip`, `--ignored`, `--include-ignored`);
//! - each test runs as `gpurun run <same options> HARNESS` with
//!   `__RUST_TEST_INVOKE=<name>` in its environment: libtest's
//!   `test_main_static_abort` then runs just that test and exits with 50
//!   when it passed (its own `#[should_panic]` logic included), anything
//!   else when it failed;
//! - tests run one after another (a launch takes every warp of the GPU):
//!   `--test-threads` is accepted and has no effect.
//!
//! The harness must be built with cargo's `-Zpanic-abort-tests` (the
//! `panic-abort-tests` key `gpurun init` writes), which makes rustc's test
//! `main` call `test_main_static_abort`.
//!
//! A harness built with `panic = "unwind"` (the GPU targets' default) runs
//! as on Linux instead: in one launch, libtest's own threads running the
//! tests side by side (`--test-threads`), `#[should_panic]` caught in
//! process ([`unwinds`] tells which).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// libtest's environment variable naming the one test a process runs.
pub const INVOKE_VAR: &str = "__RUST_TEST_INVOKE";
/// libtest's exit code for a test that passed in its own process.
pub const TEST_PASSED: i32 = 50;
/// libtest's exit code when a test failed.
pub const TESTS_FAILED: i32 = 101;

/// Whether `bytes` (a PTX text or an ELF) is a libtest harness: it holds
/// libtest's [`INVOKE_VAR`] name (in PTX, in the numbers of a string
/// constant's initializer, bytes or 64-bit words).
pub fn is_test_harness(bytes: &[u8]) -> bool {
    let raw = INVOKE_VAR.as_bytes();
    if bytes.windows(raw.len()).any(|w| w == raw) {
        return true;
    }
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    text.lines()
        .filter_map(gpu_toolchain::ptx_compact::variable_bytes)
        .any(|data| data.windows(raw.len()).any(|w| w == raw))
}

/// Whether a code object unwinds: it holds the runtime's landing-pad
/// function, which `gpu-ld` keeps only in programs built with
/// `panic = "unwind"` (as a PTX function name or an ELF symbol).
pub fn unwinds(bytes: &[u8]) -> bool {
    let name = rt_abi::symbols::UNWIND_CATCH.as_bytes();
    bytes.windows(name.len()).any(|w| w == name)
}

/// Whether these harness arguments ask libtest for something it does in
/// one process of its own (listing, help), not a test run.
pub fn runs_in_one_launch(harness_args: &[OsString]) -> bool {
    harness_args.iter().any(|a| matches!(a.to_str(), Some("--list" | "--help" | "-h")))
}

/// A test the harness listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub ignore: bool,
    pub ignore_message: String,
}

/// The tests of a `--list --format json` output (benchmarks are left out:
/// they do not run under `cargo test`).
pub fn parse_list(json_lines: &str) -> Result<Vec<Listed>, String> {
    let mut tests = Vec::new();
    for line in json_lines.lines().filter(|l| l.trim_start().starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("the harness listed `{line}`: {e}"))?;
        if v["type"] == "test" && v["event"] == "discovered" {
            tests.push(Listed {
                name: v["name"].as_str().ok_or("a listed test without a name")?.to_string(),
                ignore: v["ignore"].as_bool().unwrap_or(false),
                ignore_message: v["ignore_message"].as_str().unwrap_or("").to_string(),
            });
        }
    }
    tests.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tests)
}

/// libtest options that select tests; everything else the list run ignores.
fn selection_args(harness_args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut it = harness_args.iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            // Options with a value that select nothing.
            Some("--test-threads" | "--format" | "--color" | "--logfile" | "--shuffle-seed" | "-Z") => {
                it.next();
            }
            Some(s) if s.starts_with("--test-threads=") || s.starts_with("--format=") || s.starts_with("--color=") => {}
            Some(
                "--nocapture" | "--no-capture" | "--show-output" | "-q" | "--quiet" | "--shuffle" | "--report-time"
                | "--ensure-time" | "--force-run-in-process" | "--exclude-should-panic" | "--bench" | "--test",
            ) => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

fn has_flag(args: &[OsString], names: &[&str]) -> bool {
    args.iter().any(|a| a.to_str().is_some_and(|s| names.contains(&s)))
}

/// A test launch's stderr without gpurun's own notes about its cubin cache
/// (the first launch compiled the code; every later one says it reused it),
/// so a failure shows what the test printed, as libtest shows it.
fn without_cache_notes(stderr: &[u8]) -> Vec<u8> {
    stderr
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| !line.starts_with(crate::cubin_cache::CACHED_CUBIN_NOTE.as_bytes()))
        .flatten()
        .copied()
        .collect()
}

/// What a test's launch came to.
struct Ran {
    passed: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs the harness's tests one launch each and prints libtest's report.
/// `gpurun_args` are this `gpurun run`'s options before the program; returns
/// the exit code (0, or 101 when a test failed).
pub fn run_tests(harness: &Path, gpurun_args: &[OsString], harness_args: &[OsString]) -> anyhow::Result<i32> {
    let exe = std::env::current_exe()?;
    let launch = |extra: &[OsString]| {
        let mut c = Command::new(&exe);
        c.arg("run").args(gpurun_args).arg(harness).arg("--").args(extra).env_remove(INVOKE_VAR).stdin(Stdio::null());
        c
    };
    let list = |selection: &[OsString]| -> anyhow::Result<Vec<Listed>> {
        let mut args: Vec<OsString> = ["--list", "--format", "json", "-Zunstable-options"].map(OsString::from).into();
        args.extend_from_slice(selection);
        // stderr passes through: the first launch compiles the code (with progress).
        let out = launch(&args).stderr(Stdio::inherit()).output()?;
        if !out.status.success() {
            anyhow::bail!("listing the tests of {} failed ({})", harness.display(), out.status);
        }
        parse_list(&String::from_utf8_lossy(&out.stdout)).map_err(anyhow::Error::msg)
    };
    let started = Instant::now();
    let selection = selection_args(harness_args);
    let tests = list(&selection)?;
    let filtered_out = if selection.is_empty() { 0 } else { list(&[])?.len().saturating_sub(tests.len()) };
    let nocapture = has_flag(harness_args, &["--nocapture", "--no-capture"]);
    let show_output = has_flag(harness_args, &["--show-output"]);

    let mut out = std::io::stdout().lock();
    writeln!(out, "\nrunning {} test{}", tests.len(), if tests.len() == 1 { "" } else { "s" })?;
    let (mut passed, mut ignored) = (0, 0);
    let mut failures: Vec<(String, Ran)> = Vec::new();
    let mut successes: Vec<(String, Ran)> = Vec::new();
    for t in &tests {
        if t.ignore {
            let why = if t.ignore_message.is_empty() { String::new() } else { format!(", {}", t.ignore_message) };
            writeln!(out, "test {} ... ignored{why}", t.name)?;
            ignored += 1;
            continue;
        }
        if nocapture {
            writeln!(out, "test {} ...", t.name)?;
        } else {
            write!(out, "test {} ... ", t.name)?;
        }
        out.flush()?;
        let mut cmd = launch(&[]);
        cmd.env(INVOKE_VAR, &t.name);
        let ran = if nocapture {
            let status = cmd.status()?;
            Ran { passed: status.code() == Some(TEST_PASSED), stdout: Vec::new(), stderr: Vec::new() }
        } else {
            let o = cmd.output()?;
            Ran { passed: o.status.code() == Some(TEST_PASSED), stdout: o.stdout, stderr: without_cache_notes(&o.stderr) }
        };
        if nocapture {
            writeln!(out, "test {} ... {}", t.name, if ran.passed { "ok" } else { "FAILED" })?;
        } else {
            writeln!(out, "{}", if ran.passed { "ok" } else { "FAILED" })?;
        }
        if ran.passed {
            passed += 1;
            if show_output {
                successes.push((t.name.clone(), ran));
            }
        } else {
            failures.push((t.name.clone(), ran));
        }
    }
    let captured = |out: &mut dyn Write, title: &str, list: &[(String, Ran)]| -> std::io::Result<()> {
        if list.is_empty() {
            return Ok(());
        }
        writeln!(out, "\n{title}:\n")?;
        for (name, ran) in list {
            writeln!(out, "---- {name} stdout ----")?;
            out.write_all(&ran.stdout)?;
            if !ran.stderr.is_empty() {
                writeln!(out, "---- {name} stderr ----")?;
                out.write_all(&ran.stderr)?;
            }
            writeln!(out)?;
        }
        Ok(())
    };
    captured(&mut out, "successes", &successes)?;
    captured(&mut out, "failures", &failures)?;
    if !failures.is_empty() {
        writeln!(out, "\nfailures:")?;
        for (name, _) in &failures {
            writeln!(out, "    {name}")?;
        }
    }
    let verdict = if failures.is_empty() { "ok" } else { "FAILED" };
    writeln!(
        out,
        "\ntest result: {verdict}. {passed} passed; {} failed; {ignored} ignored; 0 measured; {filtered_out} filtered out; finished in {:.2}s\n",
        failures.len(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(if failures.is_empty() { 0 } else { TESTS_FAILED })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_that_keeps_the_landing_pad_function_unwinds() {
        let ptx = b"// .globl\t__gpu_unwind_catch\n.visible .func  (.param .b64 func_retval0) __gpu_unwind_catch()\n";
        assert!(unwinds(ptx));
        assert!(!unwinds(b".visible .func __gpu_std_panic_abort()\n"));
    }

    #[test]
    fn a_harness_is_known_by_libtests_variable_in_ptx_or_elf() {
        assert!(is_test_harness(b"\x7fELF....__RUST_TEST_INVOKE\0...."));
        let ptx = ".global .align 1 .b8 anon_1[18] = {95, 95, 82, 85, 83, 84, 95, 84, 69, 83, 84, 95, 73, 78, 86, 79, 75, 69};";
        assert!(is_test_harness(ptx.as_bytes()));
        // As `gpu-ld` writes it: 64-bit words.
        let packed = gpu_toolchain::ptx_compact::pack_byte_array(ptx).expect("packed");
        assert!(packed.contains(".b64") && is_test_harness(packed.as_bytes()), "{packed}");
        assert!(!is_test_harness(b".version 8.7\n.target sm_90\n.entry __gpu_start()"));
    }

    #[test]
    fn the_list_is_read_sorted_and_benchmarks_left_out() {
        let json = r#"{ "type": "suite", "event": "discovery" }
{ "type": "test", "event": "discovered", "name": "tests::b", "ignore": false, "ignore_message": "", "source_path": "src/lib.rs", "start_line": 9, "start_col": 8, "end_line": 9, "end_col": 13 }
{ "type": "test", "event": "discovered", "name": "tests::a \"q\"", "ignore": true, "ignore_message": "slow", "source_path": "src/lib.rs", "start_line": 3, "start_col": 8, "end_line": 3, "end_col": 13 }
{ "type": "benchmark", "event": "discovered", "name": "b1", "ignore": false, "ignore_message": "", "source_path": "src/lib.rs", "start_line": 1, "start_col": 1, "end_line": 1, "end_col": 2 }
{ "type": "suite", "event": "completed", "tests": 2, "benchmarks": 1, "total": 3, "ignored": 1 }
"#;
        let l = parse_list(json).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].name.as_str(), l[0].ignore, l[0].ignore_message.as_str()), ("tests::a \"q\"", true, "slow"));
        assert_eq!((l[1].name.as_str(), l[1].ignore), ("tests::b", false));
        assert!(parse_list("{ not json").is_err());
    }

    #[test]
    fn cache_notes_are_left_out_of_a_tests_output() {
        let err = b"gpurun: using the cached cubin of t.ptx for sm_90\nthread 'main' panicked at src/lib.rs:1:1:\nboom\n";
        assert_eq!(without_cache_notes(err), b"thread 'main' panicked at src/lib.rs:1:1:\nboom\n");
        assert_eq!(without_cache_notes(b"no newline"), b"no newline");
    }

    #[test]
    fn selection_keeps_filters_and_drops_run_options() {
        let args: Vec<OsString> =
            ["adds", "--exact", "--test-threads", "4", "--nocapture", "--skip", "slow", "--ignored", "--format=pretty", "-q"]
                .map(OsString::from)
                .into();
        let sel: Vec<String> = selection_args(&args).into_iter().map(|a| a.into_string().unwrap()).collect();
        assert_eq!(sel, ["adds", "--exact", "--skip", "slow", "--ignored"]);
        assert!(runs_in_one_launch(&["--list".into()]));
        assert!(!runs_in_one_launch(&["adds".into()]));
    }
}
