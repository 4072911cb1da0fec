//! What the report says about the machine: host, GPU, driver and the tools
//! found, with their versions. A tool is looked up where the scripts and
//! `gpurun` look for it, and `$NVCC`, `$HIPCC` or `$GPURUN_PTXAS` naming a
//! file that is not there means "none" (how a test turns one off).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::bench::native::Compiler;
use crate::bench::utc_timestamp;
use crate::machine::{Gpu, cpu_model, find, list_gpus};

/// A tool the selftest may use or only reports.
#[derive(Clone, Debug)]
pub struct Tool {
    pub name: &'static str,
    pub path: Option<PathBuf>,
    /// Its `--version`, reduced to the lines that name a version.
    pub version: String,
}

/// The machine, as far as the report needs it.
#[derive(Clone, Debug)]
pub struct Facts {
    /// `YYYY-MM-DDThh:mm:ssZ`.
    pub date: String,
    /// OS release, kernel, machine.
    pub host: String,
    pub cpu: String,
    /// `gpurun --version`, or why it did not answer.
    pub gpurun: String,
    pub tools: Vec<Tool>,
    /// `gpurun devices --json` as printed (the drivers' errors too).
    pub devices_json: String,
    /// Why a driver found no GPU: `CUDA: no NVIDIA GPU: ...`, the first line of each.
    pub driver_errors: Vec<String>,
    pub gpus: Vec<Gpu>,
}

impl Facts {
    pub fn probe(gpurun: &Path) -> Facts {
        let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let devices_json = devices_json(gpurun);
        Facts {
            date: utc_timestamp(secs),
            host: host(),
            cpu: cpu_model(),
            gpurun: output_of(Command::new(gpurun).arg("--version")).unwrap_or_else(|e| e),
            tools: tools(),
            driver_errors: driver_errors(&devices_json),
            devices_json,
            gpus: list_gpus(gpurun),
        }
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name && t.path.is_some())
    }
}

/// `Ubuntu 22.04.4 LTS, Linux 5.15.0-105-generic, x86_64`.
fn host() -> String {
    let os = std::fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_string())
    });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|k| format!("Linux {}", k.trim()));
    let parts = [os, kernel.ok(), Some(std::env::consts::ARCH.to_string())];
    parts.into_iter().flatten().collect::<Vec<_>>().join(", ")
}

/// What `gpurun devices --json` printed: it exits 3 when it finds no GPU,
/// and the JSON then says why.
fn devices_json(gpurun: &Path) -> String {
    match Command::new(gpurun).args(["devices", "--json"]).output() {
        Ok(o) if !o.stdout.is_empty() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!("`gpurun devices --json` printed nothing ({}): {}", o.status, String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => format!("cannot run {}: {e}", gpurun.display()),
    }
}

/// The first line of each driver's error in `gpurun devices --json`.
pub fn driver_errors(json: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else { return Vec::new() };
    let drivers = v["drivers"].as_array().cloned().unwrap_or_default();
    drivers
        .iter()
        .filter_map(|d| {
            let error = d["error"].as_str()?.lines().next()?.trim_end_matches(':').to_string();
            Some(format!("{}: {error}", d["api"].as_str().unwrap_or("?")))
        })
        .collect()
}

/// stdout (else stderr) of a command that succeeded, trimmed.
fn output_of(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{:?}", cmd.get_program());
    let out = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
    let text = if out.stdout.is_empty() { &out.stderr } else { &out.stdout };
    let text = String::from_utf8_lossy(text).trim().to_string();
    if out.status.success() { Ok(text) } else { Err(format!("{shown} failed ({}): {text}", out.status)) }
}

/// The tools the report lists, found or not.
fn tools() -> Vec<Tool> {
    let env = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty());
    let found = [
        ("rustc", find("RUSTC", "rustc", &[], &env)),
        // The ptxas gpurun itself compiles PTX with (its cubin cache).
        ("ptxas", launcher::cubin_cache::find_ptxas()),
        ("nvcc", Compiler::Nvcc.find(&env)),
        ("nvidia-smi", find("NVIDIA_SMI", "nvidia-smi", &[], &env)),
        ("hipcc", Compiler::Hipcc.find(&env)),
    ];
    found
        .into_iter()
        .map(|(name, path)| {
            let version = match &path {
                // rustup must not install a pinned toolchain just to say its version.
                Some(p) => output_of(Command::new(p).arg("--version").env("RUSTUP_AUTO_INSTALL", "0")).map_or_else(|e| e, |t| version_line(&t)),
                None => String::new(),
            };
            Tool { name, path, version }
        })
        .collect()
}

/// The lines of a `--version` text that name a release or version (at most
/// three, joined), else its first line: `Cuda compilation tools, release
/// 13.0, V13.0.88` rather than nvcc's copyright.
pub fn version_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let named: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("release") || l.contains("version")
        })
        .take(3)
        .collect();
    if named.is_empty() { lines.first().copied().unwrap_or_default().to_string() } else { named.join("; ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_lines_skip_the_banner() {
        let nvcc = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Wed_Aug\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(version_line(nvcc), "Cuda compilation tools, release 13.0, V13.0.88");
        assert_eq!(version_line("rustc 1.97.0-nightly (0123abcd 2026-05-18)\n"), "rustc 1.97.0-nightly (0123abcd 2026-05-18)");
        assert_eq!(version_line("HIP version: 6.2.41133\nAMD clang version 18.0.0git\nTarget: x86_64\n"), "HIP version: 6.2.41133; AMD clang version 18.0.0git");
        assert_eq!(version_line(""), "");
    }

    #[test]
    fn driver_errors_are_one_line_each() {
        let json = r#"{"devices": [], "drivers": [{"api": "HIP", "error": "no AMD GPU: hipInit failed"},
            {"api": "CUDA", "error": "no NVIDIA GPU: could not load libcuda; tried:\n    libcuda.so.1: not found"},
            {"api": "X", "error": null}]}"#;
        assert_eq!(driver_errors(json), ["HIP: no AMD GPU: hipInit failed", "CUDA: no NVIDIA GPU: could not load libcuda; tried"]);
        assert!(driver_errors("cannot run gpurun").is_empty());
    }
}
