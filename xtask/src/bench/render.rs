//! `bench-results/README.md`: the matrix made from every result file in the
//! folder — rows × columns GPU-AMD / GPU-NVIDIA / CPU / native baseline, the
//! ratio ours ÷ baseline, the goal and whether it is met, and the runs.
//! [`write_all`] writes it with the plot ([`super::svg`]); both are drawn
//! from the same [`Matrix`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::matrix::{Matrix, NATIVE, RunFile, load_dir};
use super::schema::{self, Row};
use super::spec::{self, Check, Spec};
use super::svg;

/// Renders `dir/README.md` and `dir/latency.svg` from all of `dir/*.json`,
/// and `dir/size-and-load/README.md` from its JSON files where it exists.
pub fn write_all(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let files = load_dir(dir)?;
    let md = dir.join("README.md");
    let plot = dir.join("latency.svg");
    std::fs::write(&md, render_markdown(&files)).map_err(|e| format!("cannot write {}: {e}", md.display()))?;
    std::fs::write(&plot, svg::render(&files)).map_err(|e| format!("cannot write {}: {e}", plot.display()))?;
    // The matrix's definition beside the programs, when `dir` is the repo's.
    let spec_doc = dir.join("../benches/BENCH.md");
    if spec_doc.parent().is_some_and(Path::is_dir) {
        std::fs::write(&spec_doc, super::spec::bench_md()).map_err(|e| format!("cannot write {}: {e}", spec_doc.display()))?;
    }
    let sizes = dir.join("size-and-load");
    if sizes.is_dir() {
        let text = super::size_load::render_dir(&sizes)?;
        let path = sizes.join("README.md");
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok((md, plot))
}

/// The table's columns: (backend, heading). "native" is the vendors' baselines.
pub const COLUMNS: [(&str, &str); 4] =
    [("amd", "GPU-AMD"), ("nvidia", "GPU-NVIDIA"), ("cpu", "CPU"), ("native", "native baseline")];

/// ours ÷ theirs: p50 over p50 for latencies, value over value for rates.
pub fn ratio(ours: &Row, theirs: &Row) -> Option<f64> {
    let r = match (ours.latency(), theirs.latency(), ours.value(), theirs.value()) {
        (Some(a), Some(b), _, _) => a.0 / b.0,
        (_, _, Some(a), Some(b)) => a / b,
        _ => return None,
    };
    r.is_finite().then_some(r)
}

/// 812 ns, 1.32 µs, 12.5 ms, 1.20 s.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{} µs", sig3(ns / 1e3))
    } else if a < 1e9 {
        format!("{} ms", sig3(ns / 1e6))
    } else {
        format!("{} s", sig3(ns / 1e9))
    }
}

/// Three significant digits.
fn sig3(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A rate or count with its unit: 12.3 M msg/s, 3.10 k GB/s → 3100 GB/s.
pub fn fmt_value(v: f64, unit: &str) -> String {
    let a = v.abs();
    if unit == "GB/s" || unit == "threads" || a < 1e4 {
        return format!("{} {unit}", if a >= 100.0 || v.fract() == 0.0 { format!("{v:.0}") } else { sig3(v) });
    }
    let (d, p) = if a >= 1e9 { (1e9, "G") } else if a >= 1e6 { (1e6, "M") } else { (1e3, "k") };
    format!("{} {p} {unit}", sig3(v / d))
}

/// What a cell shows for one row.
pub fn cell(r: &Row) -> String {
    let mut s = match (r.latency(), r.value()) {
        (Some((p50, p99, _)), _) => format!("{} / {}", fmt_ns(p50), fmt_ns(p99)),
        (None, Some(v)) => fmt_value(v, &r.unit),
        _ => r.status.clone(),
    };
    if let Some(lost) = r.fields.get("lines_lost").and_then(|v| v.as_i64()) {
        let _ = write!(s, ", {lost} lines lost");
    }
    s
}

/// A cell with the spread over earlier runs on the same device, if any, and
/// the newest figure of each other device.
fn cell_with_spread(m: &Matrix, bench: &str, variant: &str, backend: &str) -> String {
    let Some(latest) = m.shown(bench, variant, backend) else { return "—".into() };
    let mut s = cell(latest);
    let same: Vec<f64> = m
        .history(bench, variant, backend)
        .iter()
        .filter(|(_, r)| r.measured() && r.device == latest.device)
        .filter_map(|(_, r)| r.latency().map(|l| l.0).or(r.value()))
        .collect();
    // The newest figure of each other device (an H100 beside the H200).
    let mut others: Vec<(&str, String)> = Vec::new();
    for (_, r) in m.history(bench, variant, backend).iter().rev() {
        if r.measured() && r.device != latest.device && !others.iter().any(|(d, _)| *d == r.device) {
            others.push((&r.device, cell(r)));
        }
    }
    for (device, c) in others.iter().rev() {
        let short = device.split(" (").next().unwrap_or(device).trim_start_matches("NVIDIA ");
        let _ = write!(s, "<br><sub>{}: {c}</sub>", esc(short));
    }
    if same.len() >= 2 {
        let lo = same.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = same.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let show = |x| if latest.latency().is_some() { fmt_ns(x) } else { fmt_value(x, &latest.unit) };
        let what = if latest.latency().is_some() { "p50 " } else { "" };
        let _ = write!(s, "<br><sub>{} runs: {what}{} – {}</sub>", same.len(), show(lo), show(hi));
    }
    s
}

/// Whether a goal check holds for our NVIDIA row of (bench, variant):
/// `Some(Ok(detail))` met, `Some(Err(detail))` not met, `None` no data.
fn check(m: &Matrix, c: Check, bench: &str, variant: &str) -> Option<Result<String, String>> {
    let r = m.latest(bench, variant, "nvidia").filter(|r| r.measured())?;
    let verdict = |ok: bool, detail: String| Some(if ok { Ok(detail) } else { Err(detail) });
    match c {
        Check::P50AtMost(ns) => {
            let p50 = r.latency()?.0;
            verdict(p50 <= ns, format!("p50 {} vs ≤ {}", fmt_ns(p50), fmt_ns(ns)))
        }
        Check::P99AtMost(ns) => {
            let p99 = r.latency()?.1;
            verdict(p99 <= ns, format!("p99 {} vs ≤ {}", fmt_ns(p99), fmt_ns(ns)))
        }
        Check::ValueAtLeast(min) => {
            let v = r.value()?;
            verdict(v >= min, format!("{} vs ≥ {}", fmt_value(v, &r.unit), fmt_value(min, &r.unit)))
        }
        Check::ValueRatioToNativeAtLeast(min) => {
            let x = ratio(r, m.baseline(bench, variant, r)?.0)?;
            verdict(x >= min, format!("×{x:.2} native vs ≥ ×{min}"))
        }
        Check::P50RatioToNativeAtMost(max) => {
            let x = ratio(r, m.baseline(bench, variant, r)?.0)?;
            verdict(x <= max, format!("×{x:.2} native vs ≤ ×{max}"))
        }
        Check::ValueRatioToVariantAtLeast(other, min) => {
            let o = m.latest(bench, other, "nvidia").filter(|o| o.measured() && o.date == r.date)?;
            let x = ratio(r, o)?;
            verdict(x >= min, format!("{:.1} % of `{other}` vs ≥ {:.0} %", x * 100.0, min * 100.0))
        }
        Check::FieldTrue(k) => {
            let v = r.fields.get(k)?.as_bool()?;
            verdict(v, format!("{k}: {v}"))
        }
        Check::FieldZero(k) => {
            let v = r.fields.get(k)?.as_f64()?;
            verdict(v == 0.0, format!("{k}: {v}"))
        }
        Check::FieldAtMost(k, max) => {
            let v = r.fields.get(k)?.as_f64()?;
            verdict(v <= max, format!("{k}: {v} vs ≤ {max}"))
        }
    }
}

/// The "met" cell of (bench, variant): None when no goal applies to it.
fn met(m: &Matrix, s: &Spec, variant: &str) -> Option<String> {
    let checks: Vec<Check> = s.checks.iter().filter(|(v, _)| *v == variant).map(|(_, c)| *c).collect();
    if checks.is_empty() {
        return None;
    }
    let results: Vec<_> = checks.iter().map(|&c| check(m, c, &s.id, variant)).collect();
    if results.iter().any(Option::is_none) {
        return Some("not measured".into());
    }
    let (ok, bad): (Vec<_>, Vec<_>) = results.into_iter().flatten().partition(Result::is_ok);
    Some(if bad.is_empty() {
        format!("**yes** ({})", ok.into_iter().flatten().collect::<Vec<_>>().join("; "))
    } else {
        format!("**no** ({})", bad.into_iter().filter_map(Result::err).collect::<Vec<_>>().join("; "))
    })
}

/// Makes a cell safe inside a Markdown table row.
fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The whole README.md.
pub fn render_markdown(files: &[RunFile]) -> String {
    let m = Matrix::new(files);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Benchmark matrix\n\n\
         Generated by `gpurun-dev bench` (or `gpurun-dev bench --render-only`) from the {} result file{} in this \
         folder; edit those, not this. The rows are `benches/BENCH.md`'s; every GPU row is an ordinary Rust `std` \
         program of `benches/programs`, every native baseline a program of `benches/native` (CUDA C++, built with \
         nvcc on NVIDIA and with hipcc on AMD).\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    out.push_str(&format!(
        "Cells show the newest run (on the {goal}, the goals' device, where there is one): latencies as p50 / p99 \
         (≥ 10,000 samples unless the row's JSON says otherwise), rates as a value; earlier runs on the same \
         device add their spread, and the newest figure of each other device is added below. \
         Ratios are ours ÷ baseline from the same run: for a latency below 1 is faster than the baseline, \
         for a rate above 1 is. Goals are `benches/BENCH.md`'s, for the {goal}, checked on the GPU-NVIDIA cell.\n\n",
        goal = spec::GOAL_DEVICE
    ));
    out.push_str(&format!(
        "| benchmark | variant | GPU-AMD | GPU-NVIDIA | CPU | native baseline | NVIDIA ÷ native | NVIDIA ÷ CPU | goal ({}) | met |\n",
        spec::GOAL_DEVICE
    ));
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for s in &spec::SPECS {
        let variants: Vec<&str> = m.keys.iter().filter(|(b, _)| b == s.id).map(|(_, v)| v.as_str()).collect();
        if variants.is_empty() {
            let _ = writeln!(out, "| `{}` | | no results yet | no results yet | no results yet | {} | | | {} | |", s.id, esc(s.baseline), esc(s.goal));
            continue;
        }
        for (i, v) in variants.iter().enumerate() {
            let mut cols = Vec::new();
            for (backend, _) in &COLUMNS[..3] {
                cols.push(cell_with_spread(&m, s.id, v, backend));
            }
            let native = NATIVE.iter().filter_map(|b| m.shown(s.id, v, b).map(|_| cell_with_spread(&m, s.id, v, b)));
            let native: Vec<String> = native.collect();
            cols.push(if s.native.is_none() {
                "— (none)".into()
            } else if native.is_empty() {
                "—".into()
            } else {
                native.join("<br>")
            });
            let nv = m.latest(s.id, v, "nvidia").filter(|r| r.measured());
            let vs_native = nv.and_then(|r| {
                let (b, exact) = m.baseline(s.id, v, r)?;
                let x = ratio(r, b)?;
                Some(match (exact, b.variant.as_str()) {
                    (true, _) => format!("×{x:.2}"),
                    (false, "") => format!("×{x:.2} (vs native)"),
                    (false, v) => format!("×{x:.2} (vs `{v}`)"),
                })
            });
            let vs_cpu = nv.and_then(|r| {
                let c = m.latest(s.id, v, "cpu").filter(|c| c.measured())?;
                ratio(r, c).map(|x| format!("×{x:.2}"))
            });
            let goal_here = met(&m, s, v);
            let goal_text = if goal_here.is_some() || (i == 0 && !s.checks.iter().any(|(cv, _)| variants.contains(cv))) {
                s.goal
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.id,
                esc(v),
                esc(&cols[0]),
                esc(&cols[1]),
                esc(&cols[2]),
                esc(&cols[3]),
                vs_native.unwrap_or_default(),
                vs_cpu.unwrap_or_default(),
                esc(goal_text),
                esc(&goal_here.unwrap_or_default())
            );
        }
    }
    out.push_str("\n![latency: p50 marker, line to p99, log scale](latency.svg)\n");
    notes(&m, &mut out);
    runs(files, &mut out);
    out.push_str(
        "\nMay depend on: nothing. This folder holds results only (JSON rows, logs, rendered tables); the code \
         that measured them is in `benches/`, `xtask/` and `scripts/`, experiments in `docs/experiments/`.\n",
    );
    out
}

/// Notes the rows carry (`note` fields of the newest rows), AMD's first.
fn notes(m: &Matrix, out: &mut String) {
    let mut seen: Vec<String> = Vec::new();
    for (bench, variant) in &m.keys {
        for backend in schema::BACKENDS {
            let Some(r) = m.latest(bench, variant, backend) else { continue };
            let Some(note) = r.text("note") else { continue };
            let line = if backend == "amd" && !r.measured() {
                // The command to run is today's, whichever run the row came from.
                let note = if r.status.ends_with("no AMD hardware") { spec::amd_note() } else { note.to_string() };
                format!("GPU-AMD: {} — {note}", r.status)
            } else {
                format!("`{bench}`{} ({backend}): {note}", if variant.is_empty() { String::new() } else { format!(" {variant}") })
            };
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
    }
    seen.sort_by_key(|l| !l.starts_with("GPU-AMD"));
    if !seen.is_empty() {
        out.push_str("\n## Notes\n\n");
        for l in seen {
            let _ = writeln!(out, "- {l}");
        }
    }
}

/// The runs: one line per result file.
fn runs(files: &[RunFile], out: &mut String) {
    out.push_str("\n## Runs\n\n| file | date | device | driver | clocks | commit | rows measured / not run |\n|---|---|---|---|---|---|---|\n");
    for f in files {
        let gpu = f.rows.iter().find(|r| (r.backend == "nvidia" || r.backend == "amd") && r.device != "none");
        let first = gpu.or_else(|| f.rows.iter().find(|r| r.device != "none")).or(f.rows.first());
        let measured = f.rows.iter().filter(|r| r.measured()).count();
        let (date, device, driver, clocks, commit) = match first {
            Some(r) => (r.date.as_str(), r.device.as_str(), r.driver.as_str(), r.text("clocks").unwrap_or(""), r.commit.as_str()),
            None => ("", "", "", "", ""),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | `{}` | {} / {} |",
            esc(&f.name),
            esc(date),
            esc(device),
            esc(driver),
            esc(clocks),
            esc(commit),
            measured,
            f.rows.len() - measured
        );
    }
}
