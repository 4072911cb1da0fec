//! The benchmarks of the matrix (rendered as `benches/BENCH.md`): what each measures,
//! its native baseline, its goal on the goals' device ([`GOAL_DEVICE`]) and
//! how that goal is checked,
//! and how `gpurun-dev bench` runs it.

/// How a goal is checked against a row of our runtime on NVIDIA.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// `p50` ≤ this many ns.
    P50AtMost(f64),
    /// `p99` ≤ this many ns.
    P99AtMost(f64),
    /// `value` ≥ this.
    ValueAtLeast(f64),
    /// `value` ÷ the native baseline's `value` ≥ this.
    ValueRatioToNativeAtLeast(f64),
    /// `p50` ÷ the native baseline's `p50` ≤ this.
    P50RatioToNativeAtMost(f64),
    /// `value` ÷ the same backend's row of variant `.0`, same run, ≥ `.1`.
    ValueRatioToVariantAtLeast(&'static str, f64),
    /// A boolean field of the row is true.
    FieldTrue(&'static str),
    /// A numeric field of the row is 0.
    FieldZero(&'static str),
    /// A numeric field of the row is at most this.
    FieldAtMost(&'static str, f64),
}

/// How `gpurun-dev bench` gets the numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum How {
    /// A program of `benches/programs` (`<id>-<arch>.ptx|elf`, host `<id>`)
    /// prints its rows.
    Program,
    /// The harness times process start to the first line on stdout.
    ProcessStart,
    /// Nothing can run it yet; every backend's row says why.
    NotYet(&'static str),
}

/// One benchmark (a row of the matrix; some rows have several ids).
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub id: &'static str,
    /// Unit of the benchmark proper (for rows the harness writes itself).
    pub unit: &'static str,
    pub what: &'static str,
    /// The native baseline, in words; "—" if there is none.
    pub baseline: &'static str,
    /// The goal on [`GOAL_DEVICE`], in words.
    pub goal: &'static str,
    /// (variant, check): the goal, checked on our NVIDIA row of that variant.
    pub checks: &'static [(&'static str, Check)],
    /// The native baseline executable that prints this id's rows.
    pub native: Option<&'static str>,
    pub how: How,
}

use Check::*;

/// The GPU the goals are for, as its name reads in a row's `device`: the
/// matrix takes each cell's verdict from the newest run there. The H200 since
/// 2026-11-29 (the same sm_90 as the H100 the goals were first set on; rows of
/// other devices stay, shown below the cell).
pub const GOAL_DEVICE: &str = "H200";

pub const SPECS: [Spec; 19] = [
    Spec {
        id: "spawn_join",
        unit: "ns",
        what: "spawn + join round trip, no-op closure",
        baseline: "kernel launch + sync; one-kernel CUDA graph + sync",
        goal: "p50 ≤ 2 µs, p99 ≤ 4 µs",
        checks: &[("", P50AtMost(2000.0)), ("", P99AtMost(4000.0))],
        native: Some("spawn_join"),
        how: How::Program,
    },
    Spec {
        id: "wake_latency",
        unit: "ns",
        what: "wake latency vs idle policy (spawn to first instruction; unpark)",
        baseline: "device-side launch (dynamic parallelism)",
        goal: "p50 ≤ 1 µs at the default policy; publish the latency vs idle-cost curve",
        checks: &[("spawn_to_start", P50AtMost(1000.0))],
        native: Some("wake_latency"),
        how: How::Program,
    },
    Spec {
        id: "mutex_uncontended",
        unit: "ns",
        what: "Mutex lock + unlock, uncontended",
        baseline: "CUDA atomicCAS spinlock",
        goal: "≤ 0.4 µs",
        checks: &[("", P50AtMost(400.0))],
        native: Some("mutex"),
        how: How::Program,
    },
    Spec {
        id: "mutex_handoff",
        unit: "ns",
        what: "Mutex handoff between 2 threads",
        baseline: "CUDA atomicCAS spinlock",
        goal: "≤ 1 µs",
        checks: &[("", P50AtMost(1000.0))],
        native: Some("mutex"),
        how: How::Program,
    },
    Spec {
        id: "mutex_contended",
        unit: "ns",
        what: "Mutex with every thread contending (acquire wait)",
        baseline: "CUDA atomicCAS spinlock",
        goal: "no livelock with every warp contending",
        checks: &[("", FieldTrue("counter_ok"))],
        native: Some("mutex"),
        how: How::Program,
    },
    Spec {
        id: "channel_1p1c",
        unit: "msg/s",
        what: "mpsc channel throughput, 1 producer 1 consumer",
        baseline: "hand-written CUDA queue",
        goal: "≥ 1 M msg/s",
        checks: &[("", ValueAtLeast(1e6))],
        native: Some("channel"),
        how: How::Program,
    },
    Spec {
        id: "channel_32p1c",
        unit: "msg/s",
        what: "mpsc channel throughput, 32 producers 1 consumer",
        baseline: "hand-written CUDA queue",
        goal: "≥ 20 M msg/s",
        checks: &[("", ValueAtLeast(2e7))],
        native: Some("channel"),
        how: How::Program,
    },
    Spec {
        id: "sleep_accuracy",
        unit: "ns",
        what: "thread::sleep error (slept − requested), 1 µs – 10 ms",
        baseline: "__nanosleep loop",
        goal: "p99 error ≤ 1 µs for d ≥ 10 µs",
        checks: &[
            ("d=10us", P99AtMost(1000.0)),
            ("d=100us", P99AtMost(1000.0)),
            ("d=1ms", P99AtMost(1000.0)),
            ("d=10ms", P99AtMost(1000.0)),
        ],
        native: Some("sleep_accuracy"),
        how: How::Program,
    },
    Spec {
        id: "yield",
        unit: "ns",
        what: "yield_now cost",
        baseline: "—",
        goal: "≤ 100 ns",
        checks: &[("", P50AtMost(100.0))],
        native: None,
        how: How::Program,
    },
    Spec {
        id: "reduction",
        unit: "GB/s",
        what: "parallel reduction of 4 GiB f32 using all lanes",
        baseline: "hand CUDA reduction",
        goal: "≥ 90 % of the native kernel",
        checks: &[("", ValueRatioToNativeAtLeast(0.9))],
        native: Some("reduction"),
        how: How::Program,
    },
    Spec {
        id: "println",
        unit: "lines/s",
        what: "println! lines/s (1, 132, all threads); cost of a call; one line to the host (`println!` + `flush`)",
        baseline: "CUDA printf (1 MB FIFO, overwrites, flushed at sync)",
        goal: "≥ 10 M lines/s, ≤ 5 µs to host, zero lines lost",
        checks: &[
            ("all_threads", ValueAtLeast(1e7)),
            ("all_threads", FieldZero("lines_lost")),
            ("line_to_host", P50AtMost(5000.0)),
        ],
        native: Some("println"),
        how: How::Program,
    },
    Spec {
        id: "max_threads",
        unit: "threads",
        what: "max concurrent threads; spawn latency as occupancy grows",
        baseline: "occupancy API",
        goal: "every resident warp usable; over-subscription errors cleanly",
        checks: &[("", FieldTrue("all_resident_usable")), ("", FieldTrue("oversubscription_errors_cleanly"))],
        native: Some("max_threads"),
        how: How::Program,
    },
    Spec {
        id: "barrier",
        unit: "ns",
        what: "Barrier cycle, N = 2 … all threads",
        baseline: "cooperative groups grid.sync()",
        goal: "≤ 3 µs at N = all",
        checks: &[("N=all", P50AtMost(3000.0))],
        native: Some("barrier"),
        how: How::Program,
    },
    Spec {
        id: "idle_cost",
        unit: "iter/s",
        what: "a compute-bound thread's throughput with all other warps idle",
        baseline: "same work alone",
        goal: "≥ 95 % (of the same work alone)",
        checks: &[("", ValueRatioToVariantAtLeast("alone", 0.95))],
        native: Some("idle_cost"),
        how: How::Program,
    },
    Spec {
        id: "host_call",
        unit: "ns",
        what: "host call round trip (no-op)",
        baseline: "—",
        goal: "≤ 4 µs p50, ≤ 10 µs p99",
        checks: &[("", P50AtMost(4000.0)), ("", P99AtMost(10000.0))],
        native: None,
        how: How::Program,
    },
    Spec {
        id: "cold_start",
        unit: "ns",
        what: "cold start: process start to the first line of main on stdout",
        baseline: "context + module load + 1 launch",
        goal: "≤ native + 10 %",
        checks: &[("", P50RatioToNativeAtMost(1.1))],
        native: Some("cold_start"),
        how: How::ProcessStart,
    },
    Spec {
        id: "heap",
        unit: "pairs/s",
        what: "Box::new / drop pairs per second, 1 and all threads",
        baseline: "CUDA device malloc/free",
        goal: "≥ 10× CUDA's malloc under contention",
        checks: &[("all_threads", ValueRatioToNativeAtLeast(10.0))],
        native: Some("heap"),
        how: How::Program,
    },
    Spec {
        id: "heap_large",
        unit: "bytes",
        what: "largest single Vec at the default --heap-size; Vec of 10 GiB allocated and one word per 4 KiB page written by every thread",
        baseline: "largest cudaMalloc; cudaMalloc of 10 GiB + a kernel writing one word per page",
        goal: "largest block ≥ 75 % of cudaMalloc's; 10 GiB allocated and touched in ≤ 2× cudaMalloc + kernel",
        checks: &[
            ("largest_block", ValueRatioToNativeAtLeast(0.75)),
            ("alloc_touch_10g", P50RatioToNativeAtMost(2.0)),
        ],
        native: Some("heap_large"),
        how: How::Program,
    },
    Spec {
        id: "cargo_test",
        unit: "s",
        what: "wall time of a real crate's own tests under `cargo test` (crossbeam-channel 0.5.17: 14 harnesses, 391 tests), one launch per harness",
        baseline: "the host's `cargo test` of the same harnesses (the CPU cell)",
        goal: "≤ 1.5× the host's wall time, every test passing",
        checks: &[
            ("crossbeam-channel-0.5.17", FieldAtMost("ratio_gpu_host", 1.5)),
            ("crossbeam-channel-0.5.17", FieldZero("failed")),
            ("crossbeam-channel-0.5.17", FieldZero("harnesses_not_ok")),
        ],
        native: None,
        how: How::NotYet("a crate's own test suite, not a program of benches/programs: scripts/make-suite-bundle.sh and scripts/gpu-suite.sh run it"),
    },
];

/// Every benchmark id, in table order.
pub fn ids() -> impl Iterator<Item = &'static str> {
    SPECS.iter().map(|s| s.id)
}

/// The spec of `id`.
pub fn get(id: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.id == id)
}

/// Position of `id` in the table (unknown ids last).
pub fn order(id: &str) -> usize {
    SPECS.iter().position(|s| s.id == id).unwrap_or(SPECS.len())
}

/// One launch of a GPU program: extra `gpurun run` options, environment for
/// the program, and what the harness adds to the variants of its rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuLaunch {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Appended (after a space) to each row's variant.
    pub variant_suffix: String,
    /// `--idle-sleep-ns` (0: the runtime's default).
    pub idle_sleep_ns: u64,
}

/// Idle policies the sweep measures besides the default.
pub const IDLE_SWEEP_NS: [u64; 3] = [100, 10_000, 100_000];

/// The launches `gpurun-dev bench` makes of benchmark `id`'s GPU program.
pub fn gpu_launches(id: &str) -> Vec<GpuLaunch> {
    let default = GpuLaunch::default();
    match id {
        // The latency vs idle-cost curve: both at every idle policy.
        "wake_latency" | "idle_cost" => {
            let mut v = vec![default];
            if id == "idle_cost" {
                v.push(GpuLaunch { args: vec!["--threads".into(), "1".into()], ..GpuLaunch::default() });
            }
            v.extend(IDLE_SWEEP_NS.iter().map(|&ns| GpuLaunch {
                args: vec!["--idle-sleep-ns".into(), ns.to_string()],
                env: vec![("GPU_BENCH_IDLE_SLEEP_NS".into(), ns.to_string())],
                variant_suffix: format!("idle_sleep_ns={ns}"),
                idle_sleep_ns: ns,
            }));
            v
        }
        // 8 GiB of data on the device heap: the threads' own shares, and the
        // same 4 GiB again as one array for the `grid_stride` variant.
        "reduction" => vec![GpuLaunch { args: vec!["--heap-size".into(), "10G".into()], ..default }],
        _ => vec![default],
    }
}

/// `benches/BENCH.md`: the matrix as a document, made from [`SPECS`] (the
/// one definition of the rows, their baselines and goals) and the row
/// format of [`super::schema`]. `gpurun-dev bench --render-only` writes it; a
/// test holds the committed file to it.
pub fn bench_md() -> String {
    let mut s = format!(
        "# The cross-vendor benchmark matrix\n\n\
         Generated by `gpurun-dev bench --render-only` from `xtask/src/bench/spec.rs`; edit that, not this.\n\n\
         Rows are benchmarks; columns are where they run: **GPU-AMD** (our runtime on a ROCm device; \
         \"not run: no AMD hardware\" is a value, never a blank), **GPU-NVIDIA** (our runtime; goals for the {GOAL_DEVICE}), \
         **CPU** (`std::thread` on the same machine's host) and the **native baseline** (the vendor's usual \
         way to do the same job, measured in the same run). Every GPU row is an ordinary Rust `std` program \
         (`benches/programs`), every baseline a CUDA C++ program (`benches/native`), built with nvcc on NVIDIA \
         (`native-cuda` rows) and with hipcc on AMD (`native-hip` rows; `wake_latency`'s says not run: HIP has \
         no device-side launch). Latencies are p50, p99 and max \
         over at least 10,000 samples; rates a value over at least a second. Ratios matter more than times on \
         shared machines: the baseline and ours run in the same script, back to back.\n\n\
         | id | what | native baseline | goal on the {GOAL_DEVICE} |\n|---|---|---|---|\n",
    );
    for spec in &SPECS {
        s.push_str(&format!("| `{}` | {} | {} | {} |\n", spec.id, spec.what, spec.baseline, spec.goal));
    }
    s.push_str(
        "\n## Row format\n\n\
         Each JSON file in `bench-results/` holds a list of rows. A row has at least `benchmark` (an id above), \
         `backend` (`amd`, `nvidia`, `cpu`, or `native-cuda`, `native-hip`, `native-cpu` for baselines), \
         `device`, `driver`, `commit`, `date`, `unit`, `status` (`measured`, or `not run: <reason>`), and \
         either `p50`/`p99`/`max` (latencies) or `value` (rates, ratios); `variant` tells rows of one id apart. \
         `bench-results/README.md` is rendered from them, with each goal checked on the GPU-NVIDIA cell.\n",
    );
    s
}

/// What a ROCm user runs to fill both AMD columns: GPU-AMD (our runtime) and
/// the native HIP baselines (benches/native built with hipcc, where found).
pub const AMD_COMMAND: &str = "cargo run --release -p xtask -- bench";

/// The note of a "no AMD hardware" row; the matrix shows the current one.
pub fn amd_note() -> String {
    format!(
        "on a machine with a ROCm GPU, `{AMD_COMMAND}` fills this column and the native-hip baseline rows \
         (benches/native built there with hipcc)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_bench_md_order_and_unique() {
        let ids: Vec<_> = ids().collect();
        assert_eq!(
            ids,
            [
                "spawn_join", "wake_latency", "mutex_uncontended", "mutex_handoff", "mutex_contended", "channel_1p1c",
                "channel_32p1c", "sleep_accuracy", "yield", "reduction", "println", "max_threads", "barrier",
                "idle_cost", "host_call", "cold_start", "heap", "heap_large", "cargo_test"
            ]
        );
        assert_eq!(order("barrier"), 12);
        assert_eq!(order("nope"), 19);
    }

    #[test]
    fn sweeps() {
        assert_eq!(gpu_launches("yield"), vec![GpuLaunch::default()]);
        let w = gpu_launches("wake_latency");
        assert_eq!(w.len(), 1 + IDLE_SWEEP_NS.len());
        assert_eq!(w[1].args, ["--idle-sleep-ns", "100"]);
        assert_eq!(gpu_launches("idle_cost")[1].args, ["--threads", "1"]);
    }

    #[test]
    fn bench_md_is_rendered_from_the_specs() {
        let committed = include_str!("../../../benches/BENCH.md");
        assert_eq!(committed, bench_md(), "benches/BENCH.md is stale: run `gpurun-dev bench --render-only`");
    }
}
