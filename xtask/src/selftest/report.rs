//! The selftest's report: what ran, on what, with which result, as one
//! Markdown file a user attaches to an issue. Written after every stage, so
//! a run cut short still leaves what it found.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::probe::Facts;
use ::tests::acceptance::{CheckResult, Verdict};
use crate::machine::Gpu;
use crate::bench::schema::NOT_RUN;

/// A stage's state when the report is written.
#[derive(Debug)]
pub enum Stage<T> {
    /// Not run, and why.
    Skipped(String),
    /// Not finished yet (a report written before the end says so).
    Pending,
    Done(T),
}

impl<T> Stage<T> {
    /// The stage's result, or `None` after writing to its report section
    /// why there is none.
    fn done_or_say_why(&self, s: &mut String) -> Option<&T> {
        match self {
            Stage::Done(t) => Some(t),
            Stage::Skipped(why) => {
                skipped(s, why);
                None
            }
            Stage::Pending => {
                skipped(s, "not finished");
                None
            }
        }
    }
}

/// One acceptance check, with the ends of its logs when it failed.
#[derive(Debug)]
pub struct CheckReport {
    pub result: CheckResult,
    pub stdout_tail: String,
    pub stderr_tail: String,
}

/// The benchmark matrix as `gpurun-dev bench` wrote it.
#[derive(Debug, Default)]
pub struct BenchReport {
    pub rows: Vec<Map<String, Value>>,
    /// The result file's text.
    pub json: String,
    pub log_tail: String,
}

#[derive(Debug)]
pub struct Report {
    pub facts: Facts,
    /// Built here, or from which bundle.
    pub mode: String,
    pub commit: String,
    pub gpu: Option<Gpu>,
    /// The code objects' arch.
    pub arch: Option<String>,
    /// Where every log and the bench results are kept.
    pub work: PathBuf,
    /// What was left out and why (tools missing, options).
    pub skipped: Vec<String>,
    /// Failures outside the checks and rows: a build, a compile, a tool.
    pub problems: Vec<String>,
    pub build_log_tail: Option<String>,
    pub acceptance: Stage<Vec<CheckReport>>,
    pub bench: Stage<BenchReport>,
}

/// Lines kept of a log shown in the report, and characters of a line.
pub const TAIL_LINES: usize = 40;
const LINE_CHARS: usize = 300;

/// The last `n` lines of `text`, each cut to a readable length.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines[lines.len().saturating_sub(n)..].iter().map(|l| match l.char_indices().nth(LINE_CHARS) {
        Some((i, _)) => format!("{}…", &l[..i]),
        None => l.to_string(),
    });
    let mut out: Vec<String> = shown.collect();
    if lines.len() > n {
        out.insert(0, format!("[… {} earlier lines left out]", lines.len() - n));
    }
    out.join("\n")
}

fn text<'a>(row: &'a Map<String, Value>, key: &str) -> &'a str {
    row.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A row whose program failed: no numbers, or numbers from a run that ended badly.
fn row_failed(row: &Map<String, Value>) -> bool {
    text(row, "status").starts_with("not run: failed") || row.contains_key("failure")
}

impl Report {
    /// Every failure, one line each.
    pub fn failures(&self) -> Vec<String> {
        let mut out = self.problems.clone();
        if let Stage::Done(checks) = &self.acceptance {
            for c in checks {
                for v in &c.result.verdicts {
                    if let Verdict::Fail(m) = v {
                        out.push(format!("acceptance `{}`: {m}", c.result.name));
                    }
                }
            }
        }
        if let Stage::Done(b) = &self.bench {
            for r in b.rows.iter().filter(|r| row_failed(r)) {
                let why = r.get("failure").and_then(Value::as_str).unwrap_or_else(|| text(r, "status"));
                out.push(format!("bench `{}` ({}{}): {why}", text(r, "benchmark"), text(r, "backend"), variant(r)));
            }
        }
        out
    }

    fn finished(&self) -> bool {
        !matches!(self.acceptance, Stage::Pending) && !matches!(self.bench, Stage::Pending)
    }

    /// 0: everything that ran passed; 1: something failed; 3 (the launcher's
    /// "no device"): no GPU to test, and nothing else went wrong.
    pub fn exit_code(&self) -> i32 {
        if !self.failures().is_empty() {
            1
        } else if self.gpu.is_none() {
            launcher::exit::NO_DEVICE
        } else {
            0
        }
    }

    fn verdict(&self) -> &'static str {
        match self.exit_code() {
            _ if !self.finished() => "INCOMPLETE",
            0 => "PASS",
            1 => "FAIL",
            _ => "NO GPU FOUND",
        }
    }

    /// Everything left out, one line each: the notes, the stages skipped,
    /// the checks skipped, the bench rows not run grouped by reason.
    fn skip_lines(&self) -> Vec<String> {
        let mut out = self.skipped.clone();
        match &self.acceptance {
            Stage::Skipped(why) => out.push(format!("acceptance suite: {why}")),
            Stage::Done(checks) => {
                for c in checks {
                    if let [Verdict::Skip(why)] = &c.result.verdicts[..] {
                        out.push(format!("acceptance `{}`: {why}", c.result.name));
                    }
                }
            }
            Stage::Pending => {}
        }
        match &self.bench {
            Stage::Skipped(why) => out.push(format!("benchmark matrix: {why}")),
            Stage::Done(b) => {
                let mut groups: BTreeMap<(String, String), usize> = BTreeMap::new();
                for r in b.rows.iter().filter(|r| !row_failed(r)) {
                    if let Some(why) = text(r, "status").strip_prefix(NOT_RUN) {
                        *groups.entry((text(r, "backend").to_string(), why.to_string())).or_default() += 1;
                    }
                }
                for ((backend, why), n) in groups {
                    out.push(format!("bench, {n} {backend} row{} not run: {why}", if n == 1 { "" } else { "s" }));
                }
            }
            Stage::Pending => {}
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let device = self.gpu.as_ref().map_or("no GPU".to_string(), |g| g.device.clone());
        let _ = writeln!(s, "# gpurun selftest: {} — {device}\n", self.verdict());
        let _ = writeln!(s, "{}\n", self.summary());
        self.facts_table(&mut s);
        section(&mut s, "Failures", &self.failures(), "None.");
        section(&mut s, "Skipped", &self.skip_lines(), "Nothing.");
        self.acceptance_section(&mut s);
        self.bench_section(&mut s);
        if let Some(log) = &self.build_log_tail {
            let _ = writeln!(s, "## Build\n");
            details(&mut s, "build log (its end)", "", log);
        }
        let _ = writeln!(s, "## Devices\n");
        details(&mut s, "gpurun devices --json", "json", &self.facts.devices_json);
        s
    }

    fn summary(&self) -> String {
        let acceptance = match &self.acceptance {
            Stage::Done(checks) => {
                let results: Vec<&CheckResult> = checks.iter().map(|c| &c.result).collect();
                let count = |f: fn(&Verdict) -> bool| results.iter().flat_map(|r| &r.verdicts).filter(|v| f(v)).count();
                format!(
                    "acceptance: {} check{}, {} verdicts passed, {} failed, {} skipped",
                    checks.len(),
                    if checks.len() == 1 { "" } else { "s" },
                    count(|v| matches!(v, Verdict::Pass(_))),
                    count(|v| matches!(v, Verdict::Fail(_))),
                    count(|v| matches!(v, Verdict::Skip(_)))
                )
            }
            Stage::Skipped(_) => "acceptance: skipped".into(),
            Stage::Pending => "acceptance: not finished".into(),
        };
        let bench = match &self.bench {
            Stage::Done(b) => {
                let measured = b.rows.iter().filter(|r| text(r, "status") == "measured" && !row_failed(r)).count();
                let failed = b.rows.iter().filter(|r| row_failed(r)).count();
                format!("bench: {} rows, {measured} measured, {failed} failed", b.rows.len())
            }
            Stage::Skipped(_) => "bench: skipped".into(),
            Stage::Pending => "bench: not finished (the selftest stopped before its end)".into(),
        };
        let code = if self.finished() { format!("; exit code {}", self.exit_code()) } else { String::new() };
        format!("{acceptance}; {bench}{code}.")
    }

    fn facts_table(&self, s: &mut String) {
        let f = &self.facts;
        let gpu = |get: fn(&Gpu) -> String| self.gpu.as_ref().map_or("none found".into(), get);
        let none_why = match &f.driver_errors[..] {
            [] => "none found".to_string(),
            errors => format!("none found: {}", errors.join("; ")),
        };
        let mut rows = vec![
            ("date", f.date.clone()),
            ("commit", self.commit.clone()),
            ("mode", self.mode.clone()),
            ("host", f.host.clone()),
            ("CPU", f.cpu.clone()),
            ("GPU", self.gpu.as_ref().map_or(none_why, |g| g.device.clone())),
            ("arch tested", self.arch.clone().unwrap_or_else(|| "none".into())),
            ("driver", gpu(|g| g.driver.clone())),
            ("gpurun", f.gpurun.clone()),
        ];
        for t in &f.tools {
            let v = match &t.path {
                Some(p) => format!("{} (`{}`)", t.version, p.display()),
                None => "not found".into(),
            };
            rows.push((t.name, v));
        }
        rows.push(("logs", format!("`{}`", self.work.display())));
        let _ = writeln!(s, "| | |\n|---|---|");
        for (k, v) in rows {
            let _ = writeln!(s, "| {k} | {} |", cell(&v));
        }
        s.push('\n');
    }

    fn acceptance_section(&self, s: &mut String) {
        let _ = writeln!(s, "## Acceptance suite\n");
        let Some(checks) = self.acceptance.done_or_say_why(s) else { return };
        let _ = writeln!(s, "| check | result | exit | seconds | command, or what failed |\n|---|---|---|---|---|");
        for c in checks {
            let r = &c.result;
            let fails: Vec<&str> = r.verdicts.iter().filter_map(|v| if let Verdict::Fail(m) = v { Some(m.as_str()) } else { None }).collect();
            let (result, what) = match &r.verdicts[..] {
                [Verdict::Skip(why)] => ("SKIP", why.clone()),
                _ if !fails.is_empty() => ("**FAIL**", fails.join("; ")),
                _ => ("PASS", format!("`{}`", r.command)),
            };
            let exit = r.exit.map_or("—".into(), |c| c.to_string());
            let _ = writeln!(s, "| {} | {result} | {exit} | {:.2} | {} |", r.name, r.seconds, cell(&what));
        }
        s.push('\n');
        for c in checks.iter().filter(|c| c.result.verdicts.iter().any(|v| matches!(v, Verdict::Fail(_)))) {
            let _ = writeln!(s, "### `{}` failed\n\n`{}`\n", c.result.name, c.result.command);
            for v in &c.result.verdicts {
                let (tag, m) = match v {
                    Verdict::Pass(m) => ("PASS", m),
                    Verdict::Fail(m) => ("FAIL", m),
                    Verdict::Skip(m) => ("SKIP", m),
                };
                let _ = writeln!(s, "- {tag}: {m}");
            }
            s.push('\n');
            fenced(s, "stdout (its end)", &c.stdout_tail);
            fenced(s, "stderr (its end)", &c.stderr_tail);
        }
    }

    fn bench_section(&self, s: &mut String) {
        let _ = writeln!(s, "## Benchmark matrix\n");
        let Some(b) = self.bench.done_or_say_why(s) else { return };
        let shown: Vec<&Map<String, Value>> = b.rows.iter().filter(|r| text(r, "status") == "measured" || row_failed(r)).collect();
        if shown.is_empty() {
            let _ = writeln!(s, "No row measured.\n");
        } else {
            let _ = writeln!(s, "| benchmark | backend | variant | p50 | p99 | max | value | unit | note |\n|---|---|---|---|---|---|---|---|---|");
            for r in shown {
                let num = |k: &str| r.get(k).filter(|v| v.is_number()).map_or(String::new(), Value::to_string);
                let note = r.get("failure").and_then(Value::as_str).unwrap_or(if text(r, "status") == "measured" { "" } else { text(r, "status") });
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    text(r, "benchmark"),
                    text(r, "backend"),
                    cell(text(r, "variant")),
                    num("p50"),
                    num("p99"),
                    num("max"),
                    num("value"),
                    text(r, "unit"),
                    cell(note)
                );
            }
            s.push('\n');
        }
        details(s, "gpurun-dev bench log (its end)", "", &b.log_tail);
        details(s, "result rows (JSON, the bench-results/ format)", "json", &b.json);
    }
}

/// A Markdown table cell: one line, no column breaks.
fn cell(v: &str) -> String {
    v.replace('|', "\\|").replace('\n', " ")
}

fn section(s: &mut String, title: &str, lines: &[String], none: &str) {
    let _ = writeln!(s, "## {title}\n");
    if lines.is_empty() {
        let _ = writeln!(s, "{none}");
    }
    for l in lines {
        let _ = writeln!(s, "- {l}");
    }
    s.push('\n');
}

/// A log in a fence no log line can close (four backticks).
fn fenced(s: &mut String, title: &str, body: &str) {
    if !body.trim().is_empty() {
        let _ = writeln!(s, "{title}:\n\n````\n{}\n````\n", body.trim_end());
    }
}

fn details(s: &mut String, summary: &str, lang: &str, body: &str) {
    let _ = writeln!(s, "<details><summary>{summary}</summary>\n\n````{lang}\n{}\n````\n\n</details>\n", body.trim_end());
}

fn skipped(s: &mut String, why: &str) {
    let _ = writeln!(s, "Not run: {why}\n");
}

fn variant(r: &Map<String, Value>) -> String {
    match text(r, "variant") {
        "" => String::new(),
        v => format!(", {v}"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::selftest::probe::Tool;

    pub(crate) fn gpu(backend: &'static str, arch: &str) -> Gpu {
        Gpu {
            backend,
            index: 0,
            name: "Test GPU".into(),
            arch: arch.into(),
            device: format!("Test GPU ({arch})"),
            driver: "test driver".into(),
        }
    }

    pub(crate) fn facts(tools: &[&'static str]) -> Facts {
        let tool = |name: &'static str| Tool { name, path: Some(PathBuf::from("/bin").join(name)), version: format!("{name} 1.0") };
        Facts {
            date: "2026-11-24T10:00:00Z".into(),
            host: "Test OS".into(),
            cpu: "Test CPU".into(),
            gpurun: "gpurun 0.1.0".into(),
            tools: tools.iter().map(|&t| tool(t)).collect(),
            devices_json: "{}".into(),
            driver_errors: Vec::new(),
            gpus: Vec::new(),
        }
    }

    fn report(gpu: Option<Gpu>) -> Report {
        Report {
            facts: facts(&[]),
            mode: "test".into(),
            commit: "abc".into(),
            arch: gpu.as_ref().map(|g| g.arch.clone()),
            gpu,
            work: PathBuf::from("/tmp/w"),
            skipped: Vec::new(),
            problems: Vec::new(),
            build_log_tail: None,
            acceptance: Stage::Done(Vec::new()),
            bench: Stage::Done(BenchReport::default()),
        }
    }

    fn row(status: &str) -> Map<String, Value> {
        let v = serde_json::json!({"benchmark": "heap", "backend": "nvidia", "variant": "all threads", "status": status, "unit": "pairs/s"});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn exit_codes_and_titles() {
        let mut r = report(Some(gpu("nvidia", "sm_90")));
        assert_eq!((r.exit_code(), r.verdict()), (0, "PASS"));
        r.bench = Stage::Pending;
        assert_eq!(r.verdict(), "INCOMPLETE");
        assert!(r.markdown().contains("bench: not finished"));
        r.problems.push("nvcc failed".into());
        r.bench = Stage::Skipped("left out".into());
        assert_eq!((r.exit_code(), r.verdict()), (1, "FAIL"));
        let mut none = report(None);
        assert_eq!((none.exit_code(), none.verdict()), (3, "NO GPU FOUND"));
        none.problems.push("no gpurun".into());
        assert_eq!(none.exit_code(), 1, "a broken setup is a failure, not a missing GPU");
    }

    #[test]
    fn failed_rows_fail_and_rows_not_run_are_grouped_as_skipped() {
        let mut r = report(Some(gpu("nvidia", "sm_90")));
        let mut measured_then_crashed = row("measured");
        measured_then_crashed.insert("failure".into(), "exit code 5: illegal address".into());
        let rows = vec![row("not run: failed: timed out after 60 s"), measured_then_crashed, row("not run: no AMD hardware"), row("not run: no AMD hardware")];
        r.bench = Stage::Done(BenchReport { rows, ..BenchReport::default() });
        assert_eq!(
            r.failures(),
            [
                "bench `heap` (nvidia, all threads): not run: failed: timed out after 60 s",
                "bench `heap` (nvidia, all threads): exit code 5: illegal address"
            ]
        );
        assert_eq!(r.skip_lines(), ["bench, 2 nvidia rows not run: no AMD hardware"]);
        assert_eq!(r.exit_code(), 1);
    }

    #[test]
    fn tails_keep_the_end_and_cells_stay_in_their_column() {
        assert_eq!(tail("a\nb\nc\n", 2), "[… 1 earlier lines left out]\nb\nc");
        assert_eq!(tail("a\nb\n", 5), "a\nb");
        assert_eq!(tail(&"x".repeat(400), 1), format!("{}…", "x".repeat(LINE_CHARS)));
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }
}
