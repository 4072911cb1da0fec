//! The benchmark matrix from a bench bundle (`scripts/make-bench-bundle.sh`,
//! in `BUNDLE/bench`): the programs unpacked for the arch tested, the native
//! baselines compiled for it where the vendor's compiler is found (nvcc on
//! NVIDIA, as `scripts/gpu-bench.sh` does; hipcc on AMD), then `gpurun-dev
//! bench` as a child, its output logged, its result rows read back for the
//! report.

use std::path::Path;
use std::process::Command;

use serde_json::{Map, Value};

use super::report::{BenchReport, Stage, TAIL_LINES, tail};
use super::{fresh_dir, run_logged};
use crate::bench::native::{self, Compiler};

pub struct BenchRun<'a> {
    pub bundle: &'a Path,
    pub gpurun: &'a Path,
    /// The gpurun-dev that runs `bench`.
    pub dev: &'a Path,
    pub arch: &'a str,
    pub work: &'a Path,
    /// The compiler of the native baselines for this GPU, if found (nvcc
    /// for NVIDIA, hipcc for AMD), and its path.
    pub native: Option<(Compiler, &'a Path)>,
    pub only: Option<&'a str>,
    pub timeout: u64,
}

impl BenchRun<'_> {
    /// The stage's result and the problems met on the way.
    pub fn run(&self) -> (Stage<BenchReport>, Vec<String>) {
        let dir = self.bundle.join("bench");
        if !dir.is_dir() {
            let why = format!("no {} in the bundle (scripts/make-selftest-bundle.sh puts it there)", dir.display());
            return (Stage::Skipped(why), Vec::new());
        }
        let mut problems = Vec::new();
        let programs = fresh_dir(&self.work.join("bench-programs"));
        match unpack(&dir, self.arch, &programs) {
            Ok(0) => problems.push(format!("{} has no benchmark program built for {}", dir.display(), self.arch)),
            Ok(_) => {}
            Err(e) => problems.push(e),
        }
        let native = self.native.map(|(compiler, path)| {
            let out = fresh_dir(&self.work.join("native"));
            problems.extend(native::compile_all(compiler, path, &dir.join("native-src"), self.arch, &out));
            (compiler.option(), out)
        });
        // Fresh: the one result file there is this run's.
        let results = fresh_dir(&self.work.join("bench-results"));
        let mut cmd = Command::new(self.dev);
        cmd.arg("bench").arg("--programs").arg(&programs).arg("--cpu").arg(dir.join("cpu"));
        if let Some((option, dir)) = &native {
            cmd.arg(option).arg(dir);
        }
        cmd.arg("--out").arg(&results).arg("--timeout").arg(self.timeout.to_string()).arg("--gpurun").arg(self.gpurun);
        if let Some(id) = self.only {
            cmd.args(["--only", id]);
        }
        // The rows carry the commit the programs were built at.
        if let Ok(c) = std::fs::read_to_string(dir.join("COMMIT")) {
            cmd.env("GPURUN_COMMIT", c.trim());
        }
        let log = self.work.join("bench.log");
        let log_tail = match run_logged(cmd, &log) {
            Ok((status, text)) => {
                if !status.success() {
                    problems.push(format!("gpurun-dev bench ended with {status} (its log: {})", log.display()));
                }
                tail(&text, 2 * TAIL_LINES)
            }
            Err(e) => {
                problems.push(format!("cannot run {} bench: {e}", self.dev.display()));
                String::new()
            }
        };
        match read_rows(&results) {
            Ok((json, rows)) => (Stage::Done(BenchReport { rows, json, log_tail }), problems),
            Err(e) => {
                problems.push(e);
                (Stage::Done(BenchReport { log_tail, ..BenchReport::default() }), problems)
            }
        }
    }
}

/// `<id>-<arch>.ptx|cubin|elf`, the names `gpurun-dev bench --programs` takes.
fn is_for(name: &str, arch: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(base, ext)| ["ptx", "cubin", "elf"].contains(&ext) && base.ends_with(&format!("-{arch}")))
}

/// The bundle's programs for `arch` into `to`, gunzipped (the bundle keeps
/// PTX gzipped: it is text of a few MB each); how many.
fn unpack(dir: &Path, arch: &str, to: &Path) -> Result<usize, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut n = 0;
    for name in entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()) {
        let (from, dest) = (dir.join(&name), to.join(name.trim_end_matches(".gz")));
        if name.ends_with(".gz") && is_for(name.trim_end_matches(".gz"), arch) {
            let out = Command::new("gzip").arg("-dc").arg(&from).output().map_err(|e| format!("cannot run gzip: {e}"))?;
            if !out.status.success() {
                return Err(format!("gzip -dc {} failed: {}", from.display(), String::from_utf8_lossy(&out.stderr).trim()));
            }
            std::fs::write(&dest, out.stdout).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
        } else if is_for(&name, arch) {
            std::fs::copy(&from, &dest).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        } else {
            continue;
        }
        n += 1;
    }
    Ok(n)
}

/// The result file `gpurun-dev bench` wrote in `dir` (a fresh folder: the only one).
fn read_rows(dir: &Path) -> Result<(String, Vec<Map<String, Value>>), String> {
    let file = std::fs::read_dir(dir)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .ok_or_else(|| format!("gpurun-dev bench wrote no result file in {}", dir.display()))?;
    let json = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let rows: Vec<Map<String, Value>> = serde_json::from_str(&json).map_err(|e| format!("{} is not a list of rows: {e}", file.display()))?;
    // One row a line: the same JSON, a third as many lines in the report.
    let lines: Vec<String> = rows.iter().map(|r| Value::Object(r.clone()).to_string()).collect();
    Ok((format!("[\n{}\n]", lines.join(",\n")), rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_picked_by_arch_and_gunzipped() {
        let dir = std::env::temp_dir().join(format!("selftest-unpack-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bundle")).unwrap();
        let gz = |name: &str, text: &str| {
            let script = format!("printf '{text}' | gzip -c > {}", dir.join("bundle").join(name).display());
            assert!(Command::new("sh").arg("-c").arg(script).status().unwrap().success());
        };
        gz("heap-sm_90.ptx.gz", ".version 8.7");
        gz("heap-gfx90a.elf.gz", "ELF");
        std::fs::write(dir.join("bundle/yield-sm_90.cubin"), "cubin").unwrap();
        std::fs::write(dir.join("bundle/COMMIT"), "abc").unwrap();
        let (out, out2) = (fresh_dir(&dir.join("out")), fresh_dir(&dir.join("out2")));
        assert_eq!(unpack(&dir.join("bundle"), "sm_90", &out), Ok(2));
        assert_eq!(std::fs::read_to_string(dir.join("out/heap-sm_90.ptx")).unwrap(), ".version 8.7");
        assert_eq!(std::fs::read_to_string(dir.join("out/yield-sm_90.cubin")).unwrap(), "cubin");
        assert!(!dir.join("out/heap-gfx90a.elf").exists());
        assert_eq!(unpack(&dir.join("bundle"), "gfx942", &out2), Ok(0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
