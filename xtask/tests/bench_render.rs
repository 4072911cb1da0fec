//! The benchmark matrix's schema check and renderer agree, on the FAKE rows
//! of `tests/fixtures/bench` (test data only, never results): every fixture
//! row passes the check, the rendered table has every benches/BENCH.md id, the AMD
//! "not run" text, the goals' verdicts and ratios; an invalid file is refused
//! with a message naming it; `gpurun-dev bench --render-only` writes both files.

use std::path::{Path, PathBuf};
use std::process::Command;

use xtask::bench::matrix::{self, RunFile};
use xtask::bench::{render, schema, spec, svg};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn runs() -> Vec<RunFile> {
    matrix::load_dir(&fixtures().join("runs")).expect("the fixture runs are valid")
}

/// A fresh temporary folder holding copies of `from`'s files.
fn copy_dir(from: &Path, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpurun-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    dir
}

/// The table line of `id` + `variant`.
fn line<'a>(md: &'a str, id: &str, variant: &str) -> &'a str {
    let start = format!("| `{id}` | {variant} |");
    md.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("no line {start} in\n{md}"))
}

#[test]
fn every_fixture_row_passes_the_schema_check() {
    for e in std::fs::read_dir(fixtures().join("runs")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        for r in &rows {
            assert_eq!(schema::validate_row(r), Ok(()), "{r}");
        }
        assert_eq!(schema::validate_file(&text).unwrap().len(), rows.len());
    }
}

#[test]
fn the_table_has_every_id_the_amd_text_and_the_verdicts() {
    let md = render::render_markdown(&runs());
    for id in spec::ids() {
        assert!(md.contains(&format!("| `{id}` |")), "{id} missing from\n{md}");
    }
    assert!(md.contains("not run: no AMD hardware"));
    // The fixture rows name an old command; the notes give today's, for both AMD columns.
    assert!(md.contains(&format!("- GPU-AMD: not run: no AMD hardware — {}", spec::amd_note())), "{md}");
    assert!(!md.contains("cargo run --release -p launcher --bin gpurun -- bench"));
    // The newest run (2026-01-02, 10 % slower than the first) is shown.
    let spawn = line(&md, "spawn_join", "");
    assert!(spawn.contains("1.65 µs / 3.30 µs"), "{spawn}");
    assert!(spawn.contains("×0.25 (vs `graph_sync`)"), "{spawn}");
    assert!(spawn.contains("**yes**"), "{spawn}");
    assert!(spawn.contains("2 runs: p50 1.50 µs – 1.65 µs"), "{spawn}");
    assert!(line(&md, "channel_32p1c", "").contains("**no**"));
    assert!(line(&md, "idle_cost", "").contains("**yes** (97.0 % of `alone`"));
    assert!(line(&md, "cold_start", "").contains("**no**"));
    assert!(line(&md, "heap", "all_threads").contains("**yes** (×30.00 native"));
    assert!(line(&md, "println", "all_threads").contains("375000 lines lost"));
    assert!(line(&md, "reduction", "").contains("not run: lane-parallel API pending"));
    assert!(line(&md, "reduction", "").contains("not measured"));
    assert!(line(&md, "reduction", "one_lane_per_thread").contains("(vs native)"));
    assert!(line(&md, "yield", "").contains("— (none)"));
    // A backend that could not run at all says so on every variant's line.
    assert!(line(&md, "sleep_accuracy", "d=10us").contains("not run: no AMD hardware"));
    assert!(!md.contains("| `sleep_accuracy` |  |"), "an all-'not run' line is folded into the variants");
    assert!(md.contains("| 2026-01-02-fake-gpu-fake0002.json | 2026-01-02T00:00:00Z | FAKE fixture GPU"));
}

/// A ratio to the native baseline comes from the same run: a variant that
/// only another device measured is not divided by the goals' device's
/// baseline (which the table shows as the newest).
#[test]
fn ratios_to_native_come_from_the_same_run() {
    let dir = copy_dir(&fixtures().join("runs"), "same-run");
    let row = |backend: &str, variant: &str, value: f64, device: &str, date: &str, commit: &str| {
        serde_json::json!({
            "benchmark": "reduction", "variant": variant, "unit": "GB/s", "status": "measured", "value": value,
            "backend": backend, "device": device, "driver": "fake driver", "commit": commit, "date": date,
        })
    };
    let goal = "FAKE H200 fixture (test data, not a measurement)";
    let other = "FAKE other fixture GPU (test data, not a measurement)";
    let files = [
        ("2026-01-03-fake-h200-fake0003.json", vec![row("nvidia", "", 2000.0, goal, "2026-01-03T00:00:00Z", "fake0003"), row("native-cuda", "", 4000.0, goal, "2026-01-03T00:00:00Z", "fake0003")]),
        ("2026-01-04-fake-other-fake0004.json", vec![row("nvidia", "wide", 500.0, other, "2026-01-04T00:00:00Z", "fake0004"), row("native-cuda", "", 1000.0, other, "2026-01-04T00:00:00Z", "fake0004")]),
    ];
    for (name, rows) in files {
        std::fs::write(dir.join(name), serde_json::to_string(&rows).unwrap()).unwrap();
    }
    let md = render::render_markdown(&matrix::load_dir(&dir).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    // The goals' device's own line: its run's baseline (2000 / 4000).
    assert!(line(&md, "reduction", "").contains("×0.50 |"), "{}", line(&md, "reduction", ""));
    // The other device's variant: 500 / 1000 from its run, not 500 / 4000.
    let wide = line(&md, "reduction", "wide");
    assert!(wide.contains("×0.50 (vs native)"), "{wide}");
}

#[test]
fn the_plot_has_every_latency_line_and_backend() {
    let s = svg::render(&runs());
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    for label in ["spawn_join", "mutex_handoff", "barrier N=all", "sleep_accuracy d=10ms", "cold_start"] {
        assert!(s.contains(&format!(">{label}</text>")), "{label}");
    }
    for colour in ["#2ca02c", "#1f77b4", "#555555"] {
        assert!(s.contains(&format!("fill=\"{colour}\"")), "{colour}");
    }
    assert!(!s.contains("NaN") && !s.contains("inf"));
    assert!(svg::render(&[]).contains("no latency results yet"));
}

#[test]
fn invalid_results_are_refused_with_their_file_and_row() {
    let e = matrix::load_dir(&fixtures().join("bad")).unwrap_err();
    assert!(e.contains("2026-01-03-fake-gpu-fake0003.json: row 1"), "{e}");
    assert!(e.contains("neither `measured` nor `not run: <reason>`"), "{e}");
    assert!(e.contains("row 2 (warp_drive): `warp_drive` is not a benchmark id"), "{e}");
    let dir = copy_dir(&fixtures().join("bad"), "bad");
    assert!(render::write_all(&dir).is_err());
    assert!(!dir.join("README.md").exists());
}

#[test]
fn render_only_writes_the_table_and_the_plot() {
    let dir = copy_dir(&fixtures().join("runs"), "render");
    let o = Command::new(env!("CARGO_BIN_EXE_gpurun-dev")).args(["bench", "--render-only", "--out"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert_eq!(md, render::render_markdown(&runs()));
    assert!(std::fs::read_to_string(dir.join("latency.svg")).unwrap().starts_with("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_usage() {
    let o = Command::new(env!("CARGO_BIN_EXE_gpurun-dev")).args(["bench", "--only", "warp_drive"]).output().unwrap();
    assert_eq!(o.status.code(), Some(launcher::exit::USAGE));
    assert!(String::from_utf8_lossy(&o.stderr).contains("spawn_join, wake_latency"));
    let o = Command::new(env!("CARGO_BIN_EXE_gpurun-dev")).args(["bench", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for opt in ["--only", "--out", "--programs", "--native", "--cpu", "--render-only"] {
        assert!(help.contains(opt), "bench --help lacks {opt}");
    }
}

/// The committed results (real runs, `bench-results/*.json`) pass the schema
/// check, and the committed table is what the renderer makes of them (so
/// the table was regenerated after the last result was added).
#[test]
fn committed_results_match_the_schema_and_the_committed_table() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench-results");
    let runs = matrix::load_dir(&dir).expect("the committed results are valid");
    if runs.is_empty() {
        eprintln!("no committed results in {}: nothing to check", dir.display());
        return;
    }
    let md = std::fs::read_to_string(dir.join("README.md")).expect("bench-results/README.md is committed with the results");
    assert_eq!(md, render::render_markdown(&runs), "bench-results/README.md is stale: run `gpurun-dev bench --render-only`");
    assert!(std::fs::read_to_string(dir.join("latency.svg")).unwrap().starts_with("<svg"));
}

/// The committed size, build and load table is what the renderer makes of
/// the committed rows beside it.
#[test]
fn committed_size_and_load_table_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench-results/size-and-load");
    if !dir.is_dir() {
        eprintln!("no {}: nothing to check", dir.display());
        return;
    }
    let md = std::fs::read_to_string(dir.join("README.md")).expect("size-and-load/README.md is committed with its rows");
    let rendered = xtask::bench::size_load::render_dir(&dir).expect("the committed rows read");
    assert_eq!(md, rendered, "bench-results/size-and-load/README.md is stale: run `gpurun-dev bench --render-only`");
}
