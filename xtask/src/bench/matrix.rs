//! What every result file of `bench-results/` makes together: the files and
//! their checked rows ([`load_dir`]), and the [`Matrix`] of rows by
//! benchmark, variant and backend that the table ([`super::render`]) and the
//! plot ([`super::svg`]) are drawn from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::schema::{self, Row};
use super::spec;

/// One result file: its name and its (valid) rows.
#[derive(Clone, Debug)]
pub struct RunFile {
    pub name: String,
    pub rows: Vec<Row>,
}

/// Reads and checks every `*.json` in `dir`. Any invalid row is an error
/// naming its file and row: nothing unchecked reaches the table.
pub fn load_dir(dir: &Path) -> Result<Vec<RunFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        match schema::validate_file(&text) {
            Ok(rows) => files.push(RunFile { name, rows }),
            Err(errs) => problems.extend(errs.into_iter().map(|e| format!("{}: {e}", p.display()))),
        }
    }
    if problems.is_empty() { Ok(files) } else { Err(format!("invalid benchmark results:\n  {}", problems.join("\n  "))) }
}

/// The native backends, the one shown first first.
pub const NATIVE: [&str; 3] = ["native-cuda", "native-hip", "native-cpu"];

/// (file index, row) — a row and the run it came from.
type Entry<'a> = (usize, &'a Row);

/// Every row of every run, grouped by (benchmark, variant, backend), each
/// group oldest first (by date, then file name).
pub struct Matrix<'a> {
    pub files: &'a [RunFile],
    /// (benchmark, variant) in table order: BENCH.md's, then first appearance.
    pub keys: Vec<(String, String)>,
    groups: BTreeMap<(String, String, String), Vec<Entry<'a>>>,
}

impl<'a> Matrix<'a> {
    pub fn new(files: &'a [RunFile]) -> Matrix<'a> {
        let mut keys: Vec<(usize, usize, (String, String))> = Vec::new();
        let mut groups: BTreeMap<_, Vec<Entry<'a>>> = BTreeMap::new();
        let mut seq = 0;
        for (f, file) in files.iter().enumerate() {
            for row in &file.rows {
                let key = (row.benchmark.clone(), row.variant.clone());
                if !keys.iter().any(|(_, _, k)| *k == key) {
                    keys.push((spec::order(&row.benchmark), seq, key.clone()));
                }
                seq += 1;
                groups.entry((key.0, key.1, row.backend.clone())).or_default().push((f, row));
            }
        }
        // Runs on the goals' device (spec::GOAL_DEVICE) sort after the
        // others, so "newest" means the newest run there, and a cell's ratio
        // and verdict come from one run on it.
        for entries in groups.values_mut() {
            entries.sort_by(|a, b| (goal_device(&a.1.device), &a.1.date, a.0).cmp(&(goal_device(&b.1.device), &b.1.date, b.0)));
        }
        keys.sort();
        let mut keys: Vec<(String, String)> = keys.into_iter().map(|(_, _, k)| k).collect();
        // A benchmark's "" line holding only "not run" rows (a backend that
        // could not run at all) is not shown when it has other variants:
        // `shown` puts those rows on every variant's line instead.
        let only_not_run = |b: &str, v: &str| {
            groups.iter().filter(|((gb, gv, _), _)| gb == b && gv == v).all(|(_, e)| e.iter().all(|(_, r)| !r.measured()))
        };
        let has_variants = |b: &str| keys.iter().any(|(kb, kv)| kb == b && !kv.is_empty());
        let hidden: Vec<bool> = keys.iter().map(|(b, v)| v.is_empty() && has_variants(b) && only_not_run(b, v)).collect();
        let mut h = hidden.into_iter();
        keys.retain(|_| !h.next().unwrap_or(false));
        Matrix { files, keys, groups }
    }

    /// Rows of one cell, oldest first.
    pub fn history(&self, bench: &str, variant: &str, backend: &str) -> &[Entry<'a>] {
        self.groups.get(&(bench.to_string(), variant.to_string(), backend.to_string())).map_or(&[], |v| v)
    }

    /// The newest row of one cell.
    pub fn latest(&self, bench: &str, variant: &str, backend: &str) -> Option<&'a Row> {
        self.history(bench, variant, backend).last().map(|e| e.1)
    }

    /// The newest row of a cell, or else the backend's newest "not run" row
    /// of the benchmark proper (a whole backend missing says why on every line).
    pub fn shown(&self, bench: &str, variant: &str, backend: &str) -> Option<&'a Row> {
        self.latest(bench, variant, backend)
            .or_else(|| self.latest(bench, "", backend).filter(|r| !r.measured()))
    }

    /// The native baseline to compare `ours` (a row of (bench, variant))
    /// with: from the same run (device and date) where it measured one, else
    /// the newest; of those, the same variant if measured, else the best
    /// measured native variant of the benchmark (`false`: not the same variant).
    pub fn baseline(&self, bench: &str, variant: &str, ours: &Row) -> Option<(&'a Row, bool)> {
        let same_run = |r: &&Row| r.measured() && r.device == ours.device && r.date == ours.date;
        let in_run = |b: &str, v: &str, backend: &str| self.history(b, v, backend).iter().rev().map(|e| e.1).find(same_run);
        let newest = |b: &str, v: &str, backend: &str| self.latest(b, v, backend).filter(|r| r.measured());
        self.pick_baseline(bench, variant, in_run).or_else(|| self.pick_baseline(bench, variant, newest))
    }

    /// Among the native rows `row(bench, variant, backend)` gives: the same
    /// variant's, else the best of the benchmark's variants.
    fn pick_baseline(&self, bench: &str, variant: &str, row: impl Fn(&str, &str, &str) -> Option<&'a Row>) -> Option<(&'a Row, bool)> {
        if let Some(r) = NATIVE.iter().find_map(|backend| row(bench, variant, backend)) {
            return Some((r, true));
        }
        let candidates = self.keys.iter().filter(|(b, _)| b == bench).filter_map(|(b, v)| row(b, v, NATIVE[0]));
        candidates.min_by(|a, b| score(a).total_cmp(&score(b))).map(|r| (r, false))
    }
}

/// Lower is better: p50 of a latency, minus the value of a rate.
fn score(r: &Row) -> f64 {
    match (r.latency(), r.value()) {
        (Some((p50, _, _)), _) => p50,
        (None, Some(v)) => -v,
        _ => f64::INFINITY,
    }
}

/// Whether `device` is the one BENCH.md's goals are for.
fn goal_device(device: &str) -> bool {
    device.contains(spec::GOAL_DEVICE)
}
