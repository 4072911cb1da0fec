//! The GPU acceptance suite: every end-to-end check as one row of [`CHECKS`]
//! — the program, the `gpurun` options and program arguments, the exit code
//! it must end with and what its output must show. `gpurun-dev acceptance`
//! runs the table on the GPU it finds, from a bundle of built code objects
//! (`scripts/make-gpu-bundle.sh`), so a GPU machine needs no Rust toolchain.
//!
//! A bundle holds `gpurun`, each program as `<name>-<arch>.ptx` (NVIDIA) or
//! `.elf` (AMD), optionally a `<name>-<arch>.cubin` compiled beforehand, and
//! `<name>.expected` for the programs whose output must equal the host's.
//! A check whose program is not in the bundle is skipped and counted as such.

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a check runs.
#[derive(Clone, Copy, Debug)]
pub enum Program {
    /// `gpurun devices`.
    Devices,
    /// A program as built: PTX on NVIDIA (the driver or the launcher's
    /// `ptxas` compiles it), ELF on AMD.
    Built(&'static str),
    /// A program's cubin where the bundle has one, else as built.
    Compiled(&'static str),
    /// A program built for the other vendor: the launcher must refuse it.
    OtherVendor(&'static str),
    /// A program's PTX claiming a PTX ISA newer than any driver knows:
    /// the launcher must refuse it (NVIDIA only).
    FuturePtx(&'static str),
}

/// One thing a check's output must show.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// A line of stdout is exactly this.
    StdoutLine(&'static str),
    /// A line of stdout starts with this.
    StdoutLineStarting(&'static str),
    /// stdout contains this.
    StdoutHas(&'static str),
    /// A line of stderr is exactly this.
    StderrLine(&'static str),
    /// stderr contains this.
    StderrHas(&'static str),
    /// stdout is byte for byte the bundle's `<name>.expected` (the host's output).
    StdoutIsFile(&'static str),
    /// stdout is the bundle's `<name>.expected` section by section (a
    /// section: a `== ` header line and the lines up to the next), the lines
    /// within a section in any order: what concurrent threads print.
    StdoutIsFileUnordered(&'static str),
    /// A check written as code; `Ok` carries what it found.
    Custom(fn(&Output) -> Result<String, String>),
}

/// One row of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// Unique; names the log files too.
    pub name: &'static str,
    pub program: Program,
    /// `gpurun run` options before the program (`{bundle}` and `{logs}`
    /// as in `args`).
    pub options: &'static [&'static str],
    /// The program's own arguments (after `--`); `{bundle}` and `{logs}`
    /// in them become the suite's bundle and log folders.
    pub args: &'static [&'static str],
    /// The bundle file the program reads on stdin (none: stdin is empty).
    pub stdin: Option<&'static str>,
    /// A FIFO the suite makes in the log folder under this name before the
    /// run (`{logs}/NAME` in `args`), which nobody writes.
    pub fifo: Option<&'static str>,
    /// The exit code `gpurun` must end with.
    pub exit: i32,
    /// What the output must show, each with the sentence a pass prints.
    pub expect: &'static [(Expect, &'static str)],
}

const fn check(name: &'static str, program: Program, exit: i32) -> Check {
    Check { name, program, options: &[], args: &[], stdin: None, fifo: None, exit, expect: &[] }
}

impl Check {
    const fn options(mut self, options: &'static [&'static str]) -> Check {
        self.options = options;
        self
    }
    const fn args(mut self, args: &'static [&'static str]) -> Check {
        self.args = args;
        self
    }
    const fn stdin(mut self, bundle_file: &'static str) -> Check {
        self.stdin = Some(bundle_file);
        self
    }
    const fn fifo(mut self, name: &'static str) -> Check {
        self.fifo = Some(name);
        self
    }
    const fn expect(mut self, expect: &'static [(Expect, &'static str)]) -> Check {
        self.expect = expect;
        self
    }
}

use Expect::*;
use Program::*;

/// The suite, in the order it runs. Exit codes are the launcher's
/// (`launcher/src/exit.rs`): 101 a panic, 134 an abort (stack overflow, a
/// refused lane call), 124 its own `--timeout`, 5 a device fault, 4 a code
/// object that does not fit the device.
pub const CHECKS: &[Check] = &[
    check("devices", Devices, 0),
    check("hello", Built("hello-threads"), 0)
        .expect(&[(StdoutLine("sum: 499500, factorial: 121645100408832000"), "seed demo output")]),
    check("hello-cubin", Compiled("hello-threads"), 0),
    check("std-coverage", Compiled("std-coverage"), 0).expect(&[(Custom(long_lines_whole), "long println! lines arrive whole")]),
    check("stdout-handle", Compiled("std-coverage"), 0).args(&["stdout-handle"]).expect(&[(
        StdoutLine("stdout-handle: no newline, flushed at exit"),
        "an io::stdout() handle's unfinished line flushed at exit",
    )]),
    check("all-threads-print", Compiled("all-threads-print"), 0).expect(&[(Custom(every_line_once), "no line lost or mangled")]),
    check("panic", Compiled("panic"), 101).expect(&[
        (Custom(panic_location), "panic location like std's"),
        (StderrHas("the worker found nothing to do (0 items)"), "panic message"),
        (StdoutLine("panic: the worker's join is an Err: true"), "the panicking thread ended alone; its join is Err"),
    ]),
    check("hang", Compiled("hang"), 124)
        .options(&["--timeout", "5"])
        .expect(&[(StderrHas("sleeps-forever"), "timeout report names the sleeping thread"), (StderrHas("waits-for-lock"), "... and the blocked one")]),
    check("fault", Compiled("fault"), 5).expect(&[(StdoutHas("printed before the fault"), "output before the fault kept")]),
    check("exit-code", Compiled("exit-code"), 7),
    // As Linux's exit(2): the code's low 8 bits.
    check("exit-code-negative", Compiled("exit-code"), 255).args(&["-1"]),
    check("exit-code-wraps", Compiled("exit-code"), 7).args(&["263"]),
    // args[0], current_exe, Permissions' Debug, every errno's text and kind.
    check("std-details", Compiled("std-details"), 0)
        .args(&["{logs}/std-details-work"])
        .expect(&[(StdoutIsFile("std-details"), "std details print as on the host (Linux)")]),
    // core's stable and unstable sorts (sizes across the small-sort
    // thresholds), digests equal to the host's: LLVM 22's strength
    // reduction miscompiled the stable sort on both GPU backends.
    check("sort", Compiled("sort"), 0).expect(&[(StdoutIsFile("sort"), "core's sorts give the host's results")]),
    // Unwinding (needs the `-std` specs at `"panic-strategy": "unwind"`;
    // under abort `unwind` ends at its first panic, 101): a
    // panic's drops, join's Err, poisoning, catch_unwind, resume_unwind,
    // scope; then a panic in main (101), one while unwinding (134), and
    // one on a lane other than 0 (134).
    check("unwind", Compiled("unwind"), 0).expect(&[(StdoutIsFile("unwind"), "unwinding as on the host")]),
    check("unwind-main", Compiled("unwind"), 101).args(&["main"]).expect(&[
        (StderrHas("panicked at src/bin/unwind.rs"), "std's panic message: where"),
        (StderrHas("main panics"), "... and what"),
        (StdoutLine("drop main's local"), "main's drops ran before the exit"),
    ]),
    check("unwind-double", Compiled("unwind"), 134).args(&["double"]).expect(&[
        (StderrHas("panic in a destructor during cleanup"), "a panic while unwinding aborts, as on Linux"),
    ]),
    // A lane other than 0 cannot unwind (one exception word per warp).
    check("unwind-lane", Compiled("unwind"), 134)
        .args(&["lane"])
        .expect(&[(StderrHas("called from lane 1"), "a panic on lane 1 of for_each_lane ends the program")]),
    check("maths", Compiled("maths"), 0).expect(&[(StdoutLine("maths: 27 of 27 correct"), "f32/f64 maths and 128-bit integer conversions correct")]),
    // rayon, crossbeam-channel, parking_lot, serde_json and regex, unmodified,
    // at the default stacks: the GPU's output must be the host's.
    check("real-crates", Compiled("real-crates"), 0).expect(&[(StdoutIsFile("real-crates"), "real-crates output equals the host's")]),
    // 40 of the most-downloaded crates, default features.
    check("crate-sweep", Compiled("crate-sweep"), 0).expect(&[(StdoutIsFile("crate-sweep"), "crate-sweep output equals the host's")]),
    check("spawn-exhaust", Compiled("spawn-exhaust"), 0),
    check("spawn-cycles", Compiled("spawn-cycles"), 0).args(&["100000"]),
    check("spawn-cycles-1m", Compiled("spawn-cycles"), 0).args(&["1000000"]),
    // The emulator's size of the same (EMULATED).
    check("spawn-cycles-1k", Compiled("spawn-cycles"), 0).args(&["1000"]),
    // Every thread mixing spawn/join, channels, a lock, println, files and
    // the heap until a deadline: every line and message accounted for, every
    // warp free again (the 5-minute run with host memory sampled:
    // scripts/gpu-soak.sh).
    check("soak-30s", Compiled("soak"), 0).args(&["30", "{logs}", "50"]).expect(&[(Custom(soak_accounted), "nothing lost, no warp leaked")]),
    // The emulator's size of the same (EMULATED).
    check("soak-10s", Compiled("soak"), 0).args(&["10", "{logs}", "50"]).expect(&[(Custom(soak_accounted), "nothing lost, no warp leaked")]),
    check("lanes", Compiled("lanes"), 0).expect(&[(StdoutLineStarting("lanes: ok"), "every lane ran once per call")]),
    check("lanes-misuse", Compiled("lanes-misuse"), 134).expect(&[(StderrHas("called from lane"), "std call from a lane refused")]),
    check("scoped-stacks", Compiled("scoped-stacks"), 0)
        .expect(&[(StdoutLineStarting("scoped-stacks: ok"), "threads borrow their parent's stack")]),
    check("scoped-stacks-deep", Compiled("scoped-stacks"), 0)
        .args(&["100"])
        .expect(&[(StdoutLineStarting("scoped-stacks: ok"), "100-level recursion on a 256 KiB thread stack")]),
    check("stack-overflow", Compiled("stack-overflow"), 134)
        .expect(&[(StderrLine("thread 'deep-recursion' has overflowed its stack"), "stack overflow reported like std")]),
    // A Box-linked list hashed and dropped by recursion, at the default
    // settings; past the call stack's depth, std's report.
    check("deep-recursion-10", Compiled("deep-recursion"), 0)
        .args(&["10"])
        .expect(&[(StdoutLineStarting("deep-recursion: 10 levels ok"), "10 levels of recursion at the default stacks")]),
    check("deep-recursion-100", Compiled("deep-recursion"), 0)
        .args(&["100"])
        .expect(&[(StdoutLineStarting("deep-recursion: 100 levels ok"), "100 levels of recursion at the default stacks")]),
    check("deep-recursion-1000", Compiled("deep-recursion"), 0)
        .args(&["1000"])
        .expect(&[(StdoutLineStarting("deep-recursion: 1000 levels ok"), "1,000 levels of recursion at the default stacks")]),
    check("deep-recursion-10000", Compiled("deep-recursion"), 134).args(&["10000"]).expect(&[(
        StderrLine("thread 'walker' has overflowed its stack"),
        "10,000 levels past the default call stack: std's overflow report",
    )]),
    check("deep-recursion-10000-big", Compiled("deep-recursion"), 0)
        .options(&["--call-stack-size", "256K"])
        .args(&["10000"])
        .expect(&[(StdoutLineStarting("deep-recursion: 10000 levels ok"), "10,000 levels with --call-stack-size 256K")]),
    // 16 threads overflowing at once: one report, not sixteen.
    check("deep-recursion-10000-threads", Compiled("deep-recursion"), 134)
        .args(&["10000", "16"])
        .expect(&[(Custom(one_overflow_report), "many threads overflowing at once: one report")]),
    // Memory for real data at the default --heap-size: a 100 GiB Vec with
    // every page written (an H200; the emulator's size below), try_reserve
    // past memory an Err, fragmenting cycles, then the size in one block.
    check("heap-100g", Compiled("heap-big"), 0).expect(&[
        (StdoutLineStarting("heap-big: 107374182400 bytes in one Vec"), "a 100 GiB Vec by default, every page touched"),
        (StdoutLineStarting("heap-big: try_reserve of 1 PiB: Err"), "try_reserve past memory returns Err"),
        (StdoutLine("heap-big: ok"), "large blocks freed out of order merge again"),
    ]),
    check("heap-1g", Compiled("heap-big"), 0).args(&["1G"]).expect(&[
        (StdoutLineStarting("heap-big: 1073741824 bytes in one Vec"), "a 1 GiB Vec by default, every page touched"),
        (StdoutLineStarting("heap-big: try_reserve of 1 PiB: Err"), "try_reserve past memory returns Err"),
        (StdoutLine("heap-big: ok"), "large blocks freed out of order merge again"),
    ]),
    check("heap-oom", Compiled("heap-big"), 134).args(&["oom"]).expect(&[
        (StderrLine("memory allocation of 1125899906842624 bytes failed"), "std's out-of-memory message"),
        (StderrHas("give it more with `gpurun run --heap-size`"), "... and what to change"),
    ]),
    // std::fs and io::stdin through the host: the same output as the host's
    // run of the same source with the same input (scripts/make-gpu-bundle.sh).
    check("files-stdin", Compiled("files-stdin"), 0)
        .args(&["{bundle}/files-stdin.input", "{logs}/files-stdin-work"])
        .stdin("files-stdin.stdin")
        .expect(&[(StdoutIsFile("files-stdin"), "files, directories and stdin as on the host")]),
    check("files-read-only", Compiled("files-stdin"), 0)
        .options(&["--fs", "read-only"])
        .args(&["--denied", "{logs}"])
        .expect(&[(StdoutLine("denied: PermissionDenied"), "gpurun run --fs read-only refuses a write")]),
    // --fs-root: escapes fail as in a chroot, only --env's variables (and
    // gpurun's RAYON_NUM_THREADS) reach the program; set_current_dir then
    // relative paths, under the root and without one.
    check("fs-root", Compiled("fs-root"), 0).options(&["--fs-root", "{logs}", "--env", "FS_ROOT_CHECK=1"]).expect(&[
        (StdoutLine("fs-root: ok"), "nothing outside the root reachable; set_current_dir and relative paths inside"),
        (StdoutLine("escape /proc/self/environ: NotFound"), "/proc out of reach"),
        (StdoutLine("escape up/etc/passwd: NotFound"), "a symlink up does not lead out"),
        (StdoutLine("set_current_dir inside.txt: NotADirectory"), "set_current_dir of a file is std's error"),
        (StdoutLine("env: FS_ROOT_CHECK RAYON_NUM_THREADS"), "the environment is the allow-list"),
        (StdoutLine("current_exe: NotFound"), "current_exe outside the root is not named"),
    ]),
    check("cwd", Compiled("fs-root"), 0)
        .args(&["--cwd", "{logs}"])
        .expect(&[(StdoutLine("cwd: ok"), "set_current_dir, then relative paths start there")]),
    // futures' block_on and ThreadPool, timers through thread::sleep.
    check("async-tasks", Compiled("async-tasks"), 0).expect(&[(StdoutIsFile("async-tasks"), "async tasks as on the host")]),
    // `cargo test` through the runner (examples/cargo-test, one test fails on
    // purpose): in one launch (the harness unwinds), libtest's report, exit 101.
    check("cargo-test", Compiled("cargo-test"), 101).expect(&[
        (StdoutLine("test tests::sums_with_threads ... ok"), "a test with threads passes"),
        (StdoutLine("test tests::fib_overflow_panics - should panic ... ok"), "#[should_panic] passes when it panics (in process)"),
        (StdoutLine("test tests::demo_failure_is_reported ... FAILED"), "a failing test is reported"),
        (StdoutHas("fails on purpose: fib(5) is 5"), "... with its panic message"),
        (Custom(spawned_thread_output_captured), "... and what a thread it spawned printed (std's spawn hooks)"),
        (StdoutLine("test tests::fib_exhaustive ... ignored, takes long; run with --ignored"), "#[ignore] is honoured"),
        (
            StdoutLineStarting("test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out"),
            "the failure did not stop the other tests",
        ),
    ]),
    // The same crate built with panic = "abort": one launch per test, the
    // report put together by gpurun (launcher/src/test_harness.rs).
    check("cargo-test-abort", Compiled("cargo-test-abort"), 101).expect(&[
        (StdoutLine("test tests::fib_overflow_panics ... ok"), "#[should_panic] passes in a launch of its own"),
        (StdoutLine("test tests::demo_failure_is_reported ... FAILED"), "a failing test is reported"),
        (
            StdoutLineStarting("test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out"),
            "the failure did not stop the other tests",
        ),
    ]),
    check("cargo-test-skip", Compiled("cargo-test"), 0).args(&["--skip", "demo_failure"]).expect(&[(
        StdoutLineStarting("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 1 filtered out"),
        "--skip filters, all green",
    )]),
    check("cargo-test-exact", Compiled("cargo-test"), 0).args(&["tests::fib_small", "--exact"]).expect(&[(
        StdoutLineStarting("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out"),
        "--exact runs one test",
    )]),
    check("cargo-test-list", Compiled("cargo-test"), 0)
        .args(&["--list"])
        .expect(&[(StdoutLine("tests::fib_small: test"), "--list lists the tests")]),
    // A real crate's own tests under unwinding: crossbeam-channel 0.5.17's
    // `select_macro` harness (59 tests, two `#[should_panic]`), put in the
    // bundle by scripts/make-suite-bundle.sh (its whole suite: gpu-suite.sh).
    // One launch, libtest's threads side by side, panics caught in process.
    check("crate-tests", Compiled("crossbeam-select_macro"), 0).expect(&[
        (StdoutLine("test panic_sender - should panic ... ok"), "#[should_panic] caught in process"),
        (StdoutLineStarting("test result: ok. 59 passed; 0 failed; 0 ignored"), "every test passes, in one launch"),
    ]),
    check("crate-tests-threads-1", Compiled("crossbeam-select_macro"), 0).args(&["--test-threads", "1"]).expect(&[(
        StdoutLineStarting("test result: ok. 59 passed; 0 failed; 0 ignored"),
        "--test-threads 1: one test at a time",
    )]),
    check("crate-tests-threads-64", Compiled("crossbeam-select_macro"), 0).args(&["--test-threads", "64"]).expect(&[(
        StdoutLineStarting("test result: ok. 59 passed; 0 failed; 0 ignored"),
        "--test-threads 64",
    )]),
    // Host calls at the launcher's limits (examples/gpu-checks/src/bin/host-limits.rs):
    // open files until EMFILE; a thread blocked in a host call (a FIFO
    // nobody writes) holds up no other thread's output nor the timeout.
    check("host-emfile", Compiled("host-limits"), 0).args(&["emfile", "{bundle}/gpurun"]).expect(&[
        (StdoutLine("host-limits: open failed after 1024 files: Too many open files (os error 24)"), "open past 1,024 files: EMFILE, std's message"),
        (StdoutLine("host-limits: kind Uncategorized, raw Some(24)"), "... std's ErrorKind for EMFILE"),
        (StdoutLine("host-limits: open after a close: ok"), "a close makes room"),
    ]),
    // 4,500 lines: more than the ring's 4,096 slots go round past the blocked call's.
    check("host-fifo", Compiled("host-limits"), 124).options(&["--timeout", "5", "--json"]).fifo("host-fifo.fifo").args(&["fifo", "{logs}/host-fifo.fifo", "1500"]).expect(&[
        (StdoutLine("printer 2 line 1499"), "the other threads' output while one is blocked in a host call"),
        (StdoutLine("host-limits: printers done, main waits for reads-fifo"), "... all of it"),
        (StderrHas("\"reads-fifo\""), "the timeout report names the blocked thread"),
        (StderrHas("in host call `open`"), "... and its host call"),
        (Custom(timeout_within_a_second), "gpurun ended within a second of --timeout"),
    ]),
    // The same through a 16-slot ring (fewer lines, for the emulator).
    check("host-fifo-small-ring", Compiled("host-limits"), 124)
        .options(&["--timeout", "5", "--json", "--ring-slots", "16"])
        .fifo("host-fifo-small-ring.fifo")
        .args(&["fifo", "{logs}/host-fifo-small-ring.fifo", "40"])
        .expect(&[
            (StdoutLine("printer 2 line 39"), "the other threads' output while one is blocked in a host call"),
            (StdoutLine("host-limits: printers done, main waits for reads-fifo"), "... all of it"),
            (StderrHas("\"reads-fifo\""), "the timeout report names the blocked thread"),
            (StderrHas("in host call `open`"), "... and its host call"),
            (Custom(timeout_within_a_second), "gpurun ended within a second of --timeout"),
        ]),
    // std's unwinding (issue 44, examples/unwind-checks): a panic unwinds
    // to `join`, `catch_unwind` or `thread::scope`, running `Drop`s and
    // poisoning locks, as on the host; the same programs' host runs give
    // the expected stdout (scripts/make-gpu-bundle.sh).
    check("unwind-facts", Compiled("unwind-facts"), 0).expect(&[
        (StdoutIsFile("unwind-facts"), "joins, poisoning, drop order, catch_unwind, hooks, scopes, Once, RwLock as on the host"),
        (StderrLine("the poisoner panics holding the lock"), "a spawned thread's panic message on stderr"),
        (StderrLine("a scoped thread panicked"), "thread::scope's own panic on stderr"),
        (Custom(many_panics_reported), "64 threads panicking at once: each reported once"),
    ]),
    // The emulator's size of the same (EMULATED: its 64 waves hold 32 threads and main).
    check("unwind-facts-32", Compiled("unwind-facts"), 0).args(&["32"]).expect(&[
        (StdoutIsFile("unwind-facts-32"), "joins, poisoning, drop order, catch_unwind, hooks, scopes, Once, RwLock as on the host"),
        (Custom(many_panics_reported), "32 threads panicking at once: each reported once"),
    ]),
    // std's own documentation examples (generated: `gpurun-dev std-docs`).
    check("unwind-std-docs", Compiled("std-docs"), 0)
        .expect(&[(StdoutIsFileUnordered("std-docs"), "std's examples for poisoning, join, catch_unwind, hooks, Once, scope print as on the host")]),
    check("panic-in-main", Compiled("panic-in-main"), 101).expect(&[
        (StdoutLine("panic-in-main: main's local dropped while unwinding: true"), "main's locals dropped while unwinding"),
        (Custom(main_panic_reported), "std's message for a panic in main"),
    ]),
    // A Drop panicking while its thread unwinds: std aborts (SIGABRT on Linux: 134).
    check("panic-while-panicking", Compiled("panic-while-panicking"), 134).expect(&[
        (StdoutLine("panic-while-panicking: the Drop runs while unwinding: true"), "the Drop ran while unwinding"),
        (StderrLine("the Drop panics during unwinding"), "the second panic's message"),
        (StderrLine("panic in a destructor during cleanup"), "std's words for a panic during cleanup"),
        (StderrLine("thread caused non-unwinding panic. aborting."), "... and for the abort"),
        (Custom(nothing_after_the_abort), "nothing ran after the abort"),
    ]),
    check("wrong-vendor", OtherVendor("hello-threads"), 4),
    check("ptx-too-new", FuturePtx("hello-threads"), 4),
];

/// The checks that also run on the AMD ISA emulator (`gpurun run --emulate
/// ARCH`, `scripts/test.sh` in CI for gfx1100 and gfx942), each with the
/// `gpurun run` options it adds there: few threads where the check allows
/// (each emulated wave is a host thread, and the emulator runs a wave's
/// instructions some thousands of times slower than a GPU).
pub const EMULATED: &[(&str, &[&str])] = &[
    ("devices", &[]),
    ("hello", &["--threads", "4"]),
    ("std-coverage", &[]),
    ("panic", &[]),
    ("hang", &[]),
    ("fault", &[]),
    ("exit-code", &[]),
    ("exit-code-negative", &[]),
    ("exit-code-wraps", &[]),
    ("std-details", &[]),
    ("maths", &[]),
    ("sort", &[]),
    ("unwind", &[]),
    ("unwind-main", &[]),
    ("unwind-double", &[]),
    ("unwind-lane", &[]),
    ("lanes", &[]),
    ("spawn-cycles-1k", &[]),
    ("soak-10s", &["--threads", "16"]),
    ("stack-overflow", &[]),
    ("deep-recursion-10", &[]),
    ("deep-recursion-1000", &[]),
    ("deep-recursion-10000", &[]),
    ("deep-recursion-10000-threads", &[]),
    ("heap-1g", &[]),
    ("heap-oom", &[]),
    ("files-stdin", &[]),
    ("fs-root", &["--threads", "4"]),
    ("cwd", &["--threads", "4"]),
    ("async-tasks", &[]),
    ("cargo-test", &[]),
    ("cargo-test-abort", &[]),
    ("host-emfile", &["--threads", "2"]),
    ("host-fifo-small-ring", &["--threads", "8"]),
    ("unwind-facts-32", &[]),
    ("unwind-std-docs", &[]),
    ("panic-in-main", &[]),
    ("panic-while-panicking", &[]),
];

/// The options a check adds on the emulator, if it runs there.
pub fn emulated_options(name: &str) -> Option<&'static [&'static str]> {
    EMULATED.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
}

/// What one run printed, as the checks see it.
#[derive(Debug, Default)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// `soak-*`: the program's own accounting passed, and every line it says it
/// printed arrived.
fn soak_accounted(o: &Output) -> Result<String, String> {
    let summary = o.stdout.lines().find(|l| l.starts_with("soak: ok")).ok_or("no `soak: ok` line")?;
    let claimed: usize = summary
        .split(", ")
        .find_map(|f| f.strip_prefix("lines=")?.parse().ok())
        .ok_or("no `lines=` in the summary")?;
    let counted = o.stdout.lines().filter(|l| l.starts_with("soak w")).count();
    if claimed == counted && claimed > 0 {
        Ok(format!("{counted} lines; {}", summary.trim_start_matches("soak: ok ")))
    } else {
        Err(format!("the program printed {claimed} lines, {counted} arrived"))
    }
}

/// `all-threads-print`: every thread's 100 numbered lines arrive, each once and whole.
fn every_line_once(o: &Output) -> Result<String, String> {
    let threads: usize = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("all-threads-print: ")?.split(' ').next()?.parse().ok())
        .ok_or("no `all-threads-print: N threads` line")?;
    let numbered: Vec<&str> = o.stdout.lines().filter(|l| is_numbered_line(l)).collect();
    let mut distinct = numbered.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let want = threads * 100;
    if numbered.len() == want && distinct.len() == want {
        Ok(format!("{threads} threads, {want} lines"))
    } else {
        Err(format!("{} numbered lines ({} distinct) of {want}", numbered.len(), distinct.len()))
    }
}

/// The long lines std-coverage prints (`stdio` there): 1,000 bytes, and
/// 306 bytes whose pieces cross the 256 bytes that `println!` formats on a
/// GPU's stack.
fn long_lines() -> (String, String) {
    ("0123456789".repeat(100), format!("{}|{}|42", "a".repeat(200), "b".repeat(100)))
}

/// `std-coverage`: both of its [`long_lines`], each whole.
fn long_lines_whole(o: &Output) -> Result<String, String> {
    let (long, crossing) = long_lines();
    let found = |want: &str| o.stdout.lines().any(|l| l == want);
    match (found(&long), found(&crossing)) {
        (true, true) => Ok("a 1,000-byte line and a 306-byte line".into()),
        (l, c) => Err(format!("1,000-byte line whole: {l}; 306-byte line whole: {c}")),
    }
}

/// `cargo-test`: the line a thread spawned by the failing test prints is in
/// that test's captured output (libtest hands its capture to the test's
/// threads through a spawn hook), not printed before it as the thread ran.
/// Exactly one stack-overflow report, std's words naming the thread.
fn one_overflow_report(o: &Output) -> Result<String, String> {
    match o.stderr.matches("has overflowed its stack").count() {
        1 if o.stderr.lines().any(|l| l == "thread 'walker' has overflowed its stack") => Ok("one report, for 'walker'".into()),
        1 => Err(format!("one report, but not std's line for 'walker': {}", o.stderr)),
        n => Err(format!("{n} reports")),
    }
}

fn spawned_thread_output_captured(o: &Output) -> Result<String, String> {
    const HEADER: &str = "---- tests::demo_failure_is_reported stdout ----";
    const LINE: &str = "printed by a thread the test spawned";
    let lines: Vec<&str> = o.stdout.lines().collect();
    let header = lines.iter().position(|l| *l == HEADER).ok_or("no captured output for demo_failure_is_reported")?;
    match lines.iter().position(|l| *l == LINE) {
        Some(i) if i > header => Ok(format!("`{LINE}` under `{HEADER}`")),
        Some(_) => Err(format!("`{LINE}` printed before `{HEADER}`: not captured")),
        None => Err(format!("no `{LINE}`")),
    }
}

/// `host-fifo`: `--json`'s `elapsed_s` (from the launch to the end of the
/// report) is within a second of the 5 s `--timeout`.
fn timeout_within_a_second(o: &Output) -> Result<String, String> {
    let json = o.stderr.lines().rev().find(|l| l.starts_with('{')).ok_or("no --json status line on stderr")?;
    let at = json.find("\"elapsed_s\":").ok_or("no elapsed_s in the status")? + "\"elapsed_s\":".len();
    let num: String = json[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let secs: f64 = num.parse().map_err(|_| format!("elapsed_s `{num}` is not a number"))?;
    if (5.0..=6.0).contains(&secs) { Ok(format!("{secs:.2} s")) } else { Err(format!("elapsed_s {secs:.2}, want 5..=6")) }
}

/// `thread N line M`, both numbers decimal.
fn is_numbered_line(l: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut w = l.split(' ');
    matches!((w.next(), w.next(), w.next(), w.next(), w.next()), (Some("thread"), Some(t), Some("line"), Some(n), None) if digits(t) && digits(n))
}

/// `panic`: `thread 'worker-7' panicked at src/bin/panic.rs:LINE:COL:`, as
/// std prints it (newer std puts the thread id in parentheses after the name).
fn panic_location(o: &Output) -> Result<String, String> {
    for line in o.stderr.lines() {
        let Some(rest) = line.strip_prefix("thread 'worker-7' ") else { continue };
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(") ").map_or("", |(_, after)| after),
            None => rest,
        };
        let Some(loc) = rest.strip_prefix("panicked at src/bin/panic.rs:").and_then(|l| l.strip_suffix(':')) else { continue };
        if loc.split(':').count() == 2 && loc.split(':').all(|n| n.parse::<u32>().is_ok()) {
            return Ok(line.to_string());
        }
    }
    Err("no `thread 'worker-7' panicked at src/bin/panic.rs:LINE:COL:` line".into())
}

/// `unwind-facts`: each of the N threads that panic at once (`many-0` ..,
/// N from stdout's `unwind: N threads panicking at once` line) has exactly
/// one `thread 'many-K' panicked at src/bin/unwind-facts.rs:` line on stderr
/// (std's form, with or without the thread id after the name).
fn many_panics_reported(o: &Output) -> Result<String, String> {
    let n: usize = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("unwind: ")?.split_once(" threads panicking at once")?.0.parse().ok())
        .ok_or("no `unwind: N threads panicking at once` line")?;
    let mut count = vec![0usize; n];
    let mut others = 0;
    for line in o.stderr.lines() {
        let Some((name, rest)) = line.strip_prefix("thread 'many-").and_then(|r| r.split_once('\'')) else { continue };
        match name.parse::<usize>() {
            Ok(i) if i < n && rest.contains("panicked at src/bin/unwind-facts.rs:") => count[i] += 1,
            _ => others += 1,
        }
    }
    let wrong: Vec<String> = count.iter().enumerate().filter(|(_, c)| **c != 1).map(|(i, c)| format!("many-{i}: {c}")).collect();
    match (wrong.is_empty(), others) {
        (true, 0) => Ok(format!("{n} reports")),
        (true, _) => Err(format!("{others} other `thread 'many-` lines")),
        (false, _) => Err(format!("reports per thread not 1: {}", wrong.join(", "))),
    }
}

/// `panic-in-main`: `thread 'main' panicked at src/bin/panic-in-main.rs:L:C:`
/// followed by the message, as std prints it.
fn main_panic_reported(o: &Output) -> Result<String, String> {
    let lines: Vec<&str> = o.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("thread 'main' ") && l.contains("panicked at src/bin/panic-in-main.rs:") && l.ends_with(':'))
        .ok_or("no `thread 'main' panicked at src/bin/panic-in-main.rs:` line")?;
    match lines.get(at + 1) {
        Some(&"main panics on purpose") => Ok(lines[at].to_string()),
        other => Err(format!("the message after `{}` is {other:?}", lines[at])),
    }
}

/// `panic-while-panicking`: the line after `join` never printed.
fn nothing_after_the_abort(o: &Output) -> Result<String, String> {
    match o.stdout.lines().find(|l| l.contains("unreachable")) {
        None => Ok(String::new()),
        Some(l) => Err(format!("printed after the abort: `{l}`")),
    }
}

/// Where a suite run finds its inputs and puts its logs.
pub struct Suite {
    pub bundle: PathBuf,
    pub gpurun: PathBuf,
    /// The code objects' suffix: `sm_90`, `gfx90a`.
    pub arch: String,
    pub logs: PathBuf,
    /// Longest one check may run.
    pub limit: Duration,
    /// Run on the AMD ISA emulator as `arch` (`gpurun run --emulate`), each
    /// check with its [`EMULATED`] options.
    pub emulate: bool,
}

/// What a check came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass(String),
    Fail(String),
    Skip(String),
}

/// A check's results: one verdict for the exit code, one per expectation.
#[derive(Debug)]
pub struct CheckResult {
    pub name: &'static str,
    pub command: String,
    /// gpurun's exit code (None: skipped, not started, or killed).
    pub exit: Option<i32>,
    pub seconds: f64,
    pub verdicts: Vec<Verdict>,
}

impl Suite {
    fn vendor_is_nvidia(&self) -> bool {
        self.arch.starts_with("sm_")
    }

    /// The code object a check runs, or why it cannot run here.
    fn object(&self, program: Program) -> Result<Option<PathBuf>, String> {
        let own = if self.vendor_is_nvidia() { "ptx" } else { "elf" };
        let file = |name: &str, arch: &str, ext: &str| self.bundle.join(format!("{name}-{arch}.{ext}"));
        let present = |p: PathBuf| if p.exists() { Ok(Some(p)) } else { Err(format!("{} is not in the bundle", p.display())) };
        match program {
            Devices => Ok(None),
            Built(name) => present(file(name, &self.arch, own)),
            Compiled(name) => {
                let cubin = file(name, &self.arch, "cubin");
                if self.vendor_is_nvidia() && cubin.exists() { Ok(Some(cubin)) } else { present(file(name, &self.arch, own)) }
            }
            OtherVendor(name) => {
                if self.vendor_is_nvidia() {
                    present(file(name, "gfx90a", "elf"))
                } else {
                    present(file(name, "sm_90", "ptx"))
                }
            }
            FuturePtx(name) => {
                if !self.vendor_is_nvidia() {
                    return Err("PTX is NVIDIA's".into());
                }
                let ptx = present(file(name, &self.arch, "ptx"))?.expect("a file");
                let text = std::fs::read_to_string(&ptx).map_err(|e| format!("cannot read {}: {e}", ptx.display()))?;
                let future: String = text
                    .lines()
                    .map(|l| if l.starts_with(".version ") { ".version 9.9".to_string() } else { l.to_string() })
                    .collect::<Vec<_>>()
                    .join("\n");
                let out = self.logs.join(format!("{name}-future.ptx"));
                std::fs::write(&out, future).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                Ok(Some(out))
            }
        }
    }

    /// Runs one check, printing its command, exit code, the start of its
    /// stdout and the end of its stderr, and each verdict.
    pub fn run(&self, c: &Check) -> CheckResult {
        let object = match self.object(c.program) {
            Ok(o) => o,
            Err(why) => {
                println!("== {}: skipped: {why}", c.name);
                return CheckResult { name: c.name, command: String::new(), exit: None, seconds: 0.0, verdicts: vec![Verdict::Skip(why)] };
            }
        };
        let mut cmd = Command::new(&self.gpurun);
        let emulate: &[&str] = if self.emulate { &["--emulate", &self.arch] } else { &[] };
        match &object {
            None => {
                cmd.arg("devices").args(emulate);
            }
            Some(obj) => {
                let extra = if self.emulate { emulated_options(c.name).unwrap_or_default() } else { &[] };
                let (bundle, logs) = (self.bundle.to_string_lossy(), self.logs.to_string_lossy());
                let fill = |a: &&str| a.replace("{bundle}", &bundle).replace("{logs}", &logs);
                cmd.arg("run").args(emulate).args(extra).args(c.options.iter().map(fill)).arg(obj);
                if !c.args.is_empty() {
                    cmd.arg("--").args(c.args.iter().map(fill));
                }
            }
        }
        let command = format!("gpurun {}", cmd.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "));
        println!("== {}: {command}", c.name);
        // hip-emu appends a line per launch: waves, instructions, seconds.
        let stats = self.logs.join(format!("{}.emu-stats", c.name));
        if self.emulate {
            let _ = std::fs::remove_file(&stats);
            cmd.env("AMD_EMU_STATS", &stats);
        }
        if let Some(name) = c.fifo {
            let path = self.logs.join(name);
            let _ = std::fs::remove_file(&path);
            let made = Command::new("mkfifo").arg(&path).status().is_ok_and(|s| s.success());
            if !made {
                let why = format!("mkfifo {} failed", path.display());
                println!("   FAIL: {why}");
                return CheckResult { name: c.name, command: command.clone(), exit: None, seconds: 0.0, verdicts: vec![Verdict::Fail(why)] };
            }
        }
        let start = Instant::now();
        let output = self.execute(cmd, c.name, c.stdin);
        let seconds = start.elapsed().as_secs_f64();
        if self.emulate
            && let Some((instructions, busy)) = emulator_totals(&stats)
        {
            println!(
                "   emulated: {instructions} instructions in {busy:.2} s of launches ({:.1} M/s)",
                instructions as f64 / busy.max(1e-9) / 1e6
            );
        }
        let mut verdicts = Vec::new();
        let exit = output.as_ref().ok().and_then(|o| o.code);
        match output {
            Err(e) => verdicts.push(Verdict::Fail(e)),
            Ok(o) => {
                let code = o.code.map_or("killed".to_string(), |c| c.to_string());
                println!("   exit {code} ({seconds:.2} s)");
                for l in o.stdout.lines().take(8) {
                    println!("   out| {}", truncate(l, 200));
                }
                let err: Vec<&str> = o.stderr.lines().collect();
                for l in &err[err.len().saturating_sub(12)..] {
                    println!("   err| {}", truncate(l, 200));
                }
                verdicts.push(if o.code == Some(c.exit) {
                    Verdict::Pass(format!("{} exit code {code}", c.name))
                } else {
                    Verdict::Fail(format!("{} exit code {code}, expected {}", c.name, c.exit))
                });
                for (e, what) in c.expect {
                    verdicts.push(match self.judge(e, &o) {
                        Ok(found) if found.is_empty() => Verdict::Pass(what.to_string()),
                        Ok(found) => Verdict::Pass(format!("{what} ({found})")),
                        Err(why) => Verdict::Fail(format!("{what}: {why}")),
                    });
                }
            }
        }
        for v in &verdicts {
            match v {
                Verdict::Pass(m) => println!("  PASS: {m}"),
                Verdict::Fail(m) => println!("  FAIL: {m}"),
                Verdict::Skip(m) => println!("  SKIP: {m}"),
            }
        }
        CheckResult { name: c.name, command, exit, seconds, verdicts }
    }

    fn judge(&self, e: &Expect, o: &Output) -> Result<String, String> {
        let has_line = |text: &str, f: &dyn Fn(&str) -> bool| text.lines().any(f);
        let found = |ok: bool, what: String| if ok { Ok(String::new()) } else { Err(what) };
        match *e {
            StdoutLine(l) => found(has_line(&o.stdout, &|x| x == l), format!("no stdout line `{l}`")),
            StdoutLineStarting(p) => found(has_line(&o.stdout, &|x| x.starts_with(p)), format!("no stdout line starting `{p}`")),
            StdoutHas(s) => found(o.stdout.contains(s), format!("stdout lacks `{s}`")),
            StderrLine(l) => found(has_line(&o.stderr, &|x| x == l), format!("no stderr line `{l}`")),
            StderrHas(s) => found(o.stderr.contains(s), format!("stderr lacks `{s}`")),
            StdoutIsFile(name) => {
                let want = self.expected(name)?;
                if want == o.stdout {
                    Ok(String::new())
                } else {
                    Err(first_difference(&want, &o.stdout))
                }
            }
            StdoutIsFileUnordered(name) => same_sections(&self.expected(name)?, &o.stdout),
            Custom(f) => f(o),
        }
    }

    /// The bundle's `<name>.expected`.
    fn expected(&self, name: &str) -> Result<String, String> {
        let path = self.bundle.join(format!("{name}.expected"));
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    /// Runs `cmd` with its output in `<logs>/<name>.out` and `.err`, killed
    /// after the suite's limit.
    fn execute(&self, mut cmd: Command, name: &str, stdin: Option<&str>) -> Result<Output, String> {
        let (out_path, err_path) = (self.logs.join(format!("{name}.out")), self.logs.join(format!("{name}.err")));
        let create = |p: &Path| File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()));
        let input = match stdin {
            Some(file) => {
                let path = self.bundle.join(file);
                Stdio::from(File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?)
            }
            None => Stdio::null(),
        };
        cmd.stdin(input).stdout(create(&out_path)?).stderr(create(&err_path)?);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", self.gpurun.display()))?;
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
                break Some(s);
            }
            if start.elapsed() >= self.limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        let (stdout, stderr) = (read(&out_path), read(&err_path));
        match status {
            Some(s) => Ok(Output { code: s.code(), stdout, stderr }),
            None => Err(format!("{name} still running after {} s: killed", self.limit.as_secs())),
        }
    }
}

/// The instructions and seconds of every launch in a hip-emu stats file
/// (`$AMD_EMU_STATS`: one JSON object a line).
pub fn emulator_totals(path: &Path) -> Option<(u64, f64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let field = |line: &str, key: &str| -> Option<f64> {
        let rest = line.split_once(&format!("\"{key}\":"))?.1;
        rest.split([',', '}']).next()?.trim().parse().ok()
    };
    let mut total = (0u64, 0f64);
    for line in text.lines() {
        total.0 += field(line, "instructions")? as u64;
        total.1 += field(line, "seconds")?;
    }
    Some(total)
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The first line where `got` leaves `want`.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let i = w.iter().zip(&g).position(|(a, b)| a != b).unwrap_or(w.len().min(g.len()));
    let line = |v: &Vec<&str>| v.get(i).map_or("(end of output)".to_string(), |l| format!("`{}`", truncate(l, 120)));
    format!("line {} differs: expected {}, got {} ({} lines expected, {} got)", i + 1, line(&w), line(&g), w.len(), g.len())
}

/// [`StdoutIsFileUnordered`]: the same `== ` headers in the same order, and
/// under each the same lines, each as many times, in any order.
fn same_sections(want: &str, got: &str) -> Result<String, String> {
    fn sections(text: &str) -> Vec<(&str, Vec<&str>)> {
        let mut s: Vec<(&str, Vec<&str>)> = vec![("(before the first header)", Vec::new())];
        for l in text.lines() {
            if l.starts_with("== ") {
                s.push((l, Vec::new()));
            } else {
                s.last_mut().expect("one section").1.push(l);
            }
        }
        for (_, lines) in &mut s {
            lines.sort_unstable();
        }
        s
    }
    let (w, g) = (sections(want), sections(got));
    for (i, (ws, gs)) in w.iter().zip(&g).enumerate() {
        if ws.0 != gs.0 {
            return Err(format!("section {i}: expected header `{}`, got `{}`", ws.0, truncate(gs.0, 120)));
        }
        if ws.1 != gs.1 {
            let missing = ws.1.iter().find(|l| !gs.1.contains(l));
            let extra = gs.1.iter().find(|l| !ws.1.contains(l));
            return Err(format!("under `{}`: lines differ (first missing: {missing:?}, first unexpected: {:?})", ws.0, extra.map(|l| truncate(l, 120))));
        }
    }
    if w.len() != g.len() {
        let next = |s: &Vec<(&str, Vec<&str>)>| s.get(w.len().min(g.len())).map_or("(end of output)".to_string(), |x| format!("`{}`", x.0));
        return Err(format!("{} sections expected, {} got: expected {}, got {}", w.len() - 1, g.len() - 1, next(&w), next(&g)));
    }
    Ok(format!("{} sections", w.len() - 1))
}

/// The suite's totals and a one-line summary.
pub fn summary(results: &[CheckResult]) -> (usize, usize, usize, String) {
    let count = |f: fn(&Verdict) -> bool| results.iter().flat_map(|r| &r.verdicts).filter(|v| f(v)).count();
    let pass = count(|v| matches!(v, Verdict::Pass(_)));
    let fail = count(|v| matches!(v, Verdict::Fail(_)));
    let skip = count(|v| matches!(v, Verdict::Skip(_)));
    let mut line = format!("acceptance: {pass} passed, {fail} failed, {skip} skipped");
    let failed: Vec<&str> = results.iter().filter(|r| r.verdicts.iter().any(|v| matches!(v, Verdict::Fail(_)))).map(|r| r.name).collect();
    if !failed.is_empty() {
        let _ = write!(line, " (failed: {})", failed.join(", "));
    }
    (pass, fail, skip, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: i32, stdout: &str, stderr: &str) -> Output {
        Output { code: Some(code), stdout: stdout.into(), stderr: stderr.into() }
    }

    #[test]
    fn names_are_unique_and_usable_as_file_names() {
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        assert!(names.iter().all(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')));
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate check names");
    }

    #[test]
    fn every_line_once_counts_lost_and_repeated_lines() {
        let mut text = String::from("all-threads-print: 2 threads, 100 lines each\n");
        for t in 0..2 {
            for l in 0..100 {
                text.push_str(&format!("thread {t} line {l}\n"));
            }
        }
        assert_eq!(every_line_once(&out(0, &text, "")), Ok("2 threads, 200 lines".into()));
        let lost = text.replace("thread 1 line 7\n", "");
        assert!(every_line_once(&out(0, &lost, "")).unwrap_err().starts_with("199 numbered lines"));
        let repeated = text.replace("thread 1 line 7\n", "thread 1 line 8\n");
        assert!(every_line_once(&out(0, &repeated, "")).unwrap_err().contains("(199 distinct)"));
        let mangled = text.replace("thread 1 line 7\n", "thread 1 lithread 1 line 7\nne 8\n");
        assert!(every_line_once(&out(0, &mangled, "")).is_err());
        assert!(every_line_once(&out(0, "", "")).is_err());
    }

    #[test]
    fn soak_accounted_counts_the_lines_that_arrived() {
        let summary = "soak: ok 1.0 s, 1 workers, 2 iterations, lines=2, messages=2, locks=2";
        assert!(soak_accounted(&out(0, &format!("soak w0 i1 n5 s10\nsoak w0 i2 n3 s3\n{summary}\n"), "")).is_ok());
        assert!(soak_accounted(&out(0, &format!("soak w0 i1 n5 s10\n{summary}\n"), "")).is_err(), "a lost line");
        assert!(soak_accounted(&out(0, "soak w0 i1 n5 s10\n", "")).is_err(), "no summary");
    }

    #[test]
    fn spawned_thread_output_must_be_in_the_failure_report() {
        let captured = "test tests::demo_failure_is_reported ... FAILED\n\nfailures:\n\n---- tests::demo_failure_is_reported stdout ----\nprinted by a thread the test spawned\n";
        assert!(spawned_thread_output_captured(&out(101, captured, "")).is_ok());
        let uncaptured = "printed by a thread the test spawned\ntest tests::demo_failure_is_reported ... FAILED\n\n---- tests::demo_failure_is_reported stdout ----\n";
        assert!(spawned_thread_output_captured(&out(101, uncaptured, "")).unwrap_err().contains("not captured"));
        assert!(spawned_thread_output_captured(&out(101, "", "")).is_err());
    }

    #[test]
    fn long_lines_whole_wants_both_lines_unbroken() {
        let (long, crossing) = long_lines();
        let both = format!("ok   x\n{long}\n{crossing}\ndone\n");
        assert!(long_lines_whole(&out(0, &both, "")).is_ok());
        let split = both.replace(&crossing, &format!("{}\n{}", &crossing[..256], &crossing[256..]));
        assert!(long_lines_whole(&out(0, &split, "")).unwrap_err().contains("306-byte line whole: false"));
        assert!(long_lines_whole(&out(0, &format!("{crossing}\n"), "")).is_err());
    }

    #[test]
    fn panic_location_takes_std_forms_and_refuses_others() {
        let ok = |e: &str| panic_location(&out(101, "", e)).is_ok();
        assert!(ok("thread 'worker-7' panicked at src/bin/panic.rs:12:5:\nthe worker found nothing\n"));
        assert!(ok("thread 'worker-7' (8) panicked at src/bin/panic.rs:12:5:\n"));
        assert!(!ok("thread 'worker-6' panicked at src/bin/panic.rs:12:5:\n"));
        assert!(!ok("thread 'worker-7' panicked at src/bin/panic.rs:12:\n"));
        assert!(!ok("thread 'worker-7' panicked at src/lib.rs:12:5:\n"));
    }

    fn suite(dir: &Path, arch: &str) -> Suite {
        Suite {
            emulate: false,
            bundle: dir.to_path_buf(),
            gpurun: PathBuf::from("/bin/false"),
            arch: arch.into(),
            logs: dir.to_path_buf(),
            limit: Duration::from_secs(5),
        }
    }

    #[test]
    fn objects_prefer_a_cubin_and_skip_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("acceptance-objects-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hello-threads-sm_90.ptx"), ".version 8.7\n.target sm_90\n").unwrap();
        let s = suite(&dir, "sm_90");
        assert_eq!(s.object(Compiled("hello-threads")).unwrap(), Some(dir.join("hello-threads-sm_90.ptx")));
        std::fs::write(dir.join("hello-threads-sm_90.cubin"), "").unwrap();
        assert_eq!(s.object(Compiled("hello-threads")).unwrap(), Some(dir.join("hello-threads-sm_90.cubin")));
        assert_eq!(s.object(Built("hello-threads")).unwrap(), Some(dir.join("hello-threads-sm_90.ptx")));
        assert!(s.object(Compiled("maths")).unwrap_err().contains("maths-sm_90.ptx is not in the bundle"));
        assert!(s.object(OtherVendor("hello-threads")).unwrap_err().contains("hello-threads-gfx90a.elf"));
        let future = s.object(FuturePtx("hello-threads")).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(future).unwrap(), ".version 9.9\n.target sm_90");
        assert!(suite(&dir, "gfx90a").object(FuturePtx("hello-threads")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_wrong_exit_code_or_output_fails_and_the_summary_names_it() {
        let dir = std::env::temp_dir().join(format!("acceptance-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("maths-sm_90.ptx"), "").unwrap();
        // A stand-in gpurun: prints one line and exits 3.
        let fake = dir.join("gpurun");
        std::fs::write(&fake, "#!/bin/sh\necho 'maths: 26 of 27 correct'\nexit 3\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let s = Suite { gpurun: fake, ..suite(&dir, "sm_90") };
        let maths = CHECKS.iter().find(|c| c.name == "maths").unwrap();
        let r = s.run(maths);
        assert_eq!(r.exit, Some(3));
        assert!(matches!(&r.verdicts[0], Verdict::Fail(m) if m.contains("exit code 3, expected 0")), "{:?}", r.verdicts);
        assert!(matches!(&r.verdicts[1], Verdict::Fail(m) if m.contains("maths: 27 of 27 correct")), "{:?}", r.verdicts);
        assert_eq!(std::fs::read_to_string(dir.join("maths.out")).unwrap(), "maths: 26 of 27 correct\n");
        let skipped = s.run(CHECKS.iter().find(|c| c.name == "panic").unwrap());
        assert!(matches!(&skipped.verdicts[..], [Verdict::Skip(_)]));
        assert_eq!(skipped.exit, None);
        let (pass, fail, skip, line) = summary(&[r, skipped]);
        assert_eq!((pass, fail, skip), (0, 2, 1));
        assert_eq!(line, "acceptance: 0 passed, 2 failed, 1 skipped (failed: maths)");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn emulator_statistics_add_up_over_launches() {
        let dir = std::env::temp_dir().join(format!("acceptance-emu-stats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x.emu-stats");
        std::fs::write(&f, "{\"launch\":0,\"waves\":4,\"instructions\":1000,\"seconds\":0.5,\"instructions_per_second\":2000}\n{\"launch\":1,\"waves\":4,\"instructions\":500,\"seconds\":0.25,\"instructions_per_second\":2000}\n").unwrap();
        assert_eq!(emulator_totals(&f), Some((1500, 0.75)));
        assert_eq!(emulator_totals(&dir.join("missing")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unordered_sections_allow_any_order_within_a_header_only() {
        let want = "top\n== a\n1\n2\n== b\n3\n";
        assert_eq!(same_sections(want, "top\n== a\n2\n1\n== b\n3\n"), Ok("2 sections".into()));
        assert!(same_sections(want, "top\n== a\n1\n== b\n2\n3\n").unwrap_err().contains("under `== a`"));
        assert!(same_sections(want, "top\n== b\n3\n== a\n1\n2\n").unwrap_err().contains("expected header `== a`"));
        assert!(same_sections(want, "top\n== a\n1\n2\n").unwrap_err().contains("2 sections expected, 1 got"));
        assert!(same_sections(want, "top\n== a\n1\n2\n2\n== b\n3\n").is_err(), "a line twice");
    }

    #[test]
    fn unwind_stderr_checks_want_std_forms() {
        let mut many = String::new();
        for i in 0..64 {
            many.push_str(&format!("\nthread 'many-{i}' ({}) panicked at src/bin/unwind-facts.rs:380:21:\nthread {i} of 64 panics\n", i + 9));
        }
        let line = "unwind: 64 threads panicking at once: 64 joins Err\n";
        assert_eq!(many_panics_reported(&out(0, line, &many)), Ok("64 reports".into()));
        assert!(many_panics_reported(&out(0, line, &many.replace("'many-7' (16)", "'many-8' (16)"))).unwrap_err().contains("many-7: 0, many-8: 2"));
        assert!(many_panics_reported(&out(0, &line.replace("64 threads", "32 threads"), &many)).unwrap_err().contains("32 other"));
        assert!(many_panics_reported(&out(0, "", &many)).is_err());
        let main = "thread 'main' panicked at src/bin/panic-in-main.rs:15:5:\nmain panics on purpose\nnote: run with `RUST_BACKTRACE=1`\n";
        assert!(main_panic_reported(&out(101, "", main)).is_ok());
        assert!(main_panic_reported(&out(101, "", &main.replace("'main' ", "'main' (3) "))).is_ok());
        assert!(main_panic_reported(&out(101, "", "thread 'main' panicked at src/bin/panic-in-main.rs:15:5:\n")).is_err());
        assert!(nothing_after_the_abort(&out(134, "panic-while-panicking: unreachable: join returned true\n", "")).is_err());
    }

    #[test]
    fn output_equal_to_the_hosts_is_checked_line_by_line() {
        assert_eq!(first_difference("a\nb\nc\n", "a\nx\nc\n"), "line 2 differs: expected `b`, got `x` (3 lines expected, 3 got)");
        assert_eq!(first_difference("a\nb\n", "a\n"), "line 2 differs: expected `b`, got (end of output) (2 lines expected, 1 got)");
    }
}
