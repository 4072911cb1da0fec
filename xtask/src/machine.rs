//! What this machine has, as `gpurun-dev bench` and the selftest both need
//! it: a tool found where the scripts look for it ([`find`]), the GPUs
//! `gpurun` lists ([`list_gpus`]), their clocks, the CPU model.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A GPU of this machine, as `gpurun devices --json` lists it.
#[derive(Clone, Debug)]
pub struct Gpu {
    /// "amd" or "nvidia" (the row's backend).
    pub backend: &'static str,
    pub index: u32,
    pub name: String,
    /// `sm_90`, `gfx90a`: the code objects' suffix.
    pub arch: String,
    /// Name, arch and compute units, as the result rows name it.
    pub device: String,
    pub driver: String,
}

/// The GPUs `gpurun devices --json` lists (none if it fails).
pub fn list_gpus(exe: &Path) -> Vec<Gpu> {
    let Ok(out) = Command::new(exe).args(["devices", "--json"]).output() else { return Vec::new() };
    let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else { return Vec::new() };
    let smi_driver = nvidia_smi("driver_version", 0);
    let mut gpus = Vec::new();
    for d in v["devices"].as_array().into_iter().flatten() {
        let s = |k: &str| d[k].as_str().unwrap_or("?").to_string();
        let backend = match d["vendor"].as_str() {
            Some("amd") => "amd",
            Some("nvidia") => "nvidia",
            _ => continue,
        };
        let version = d["driver_version"].as_i64().unwrap_or(0);
        let arch = s("arch").split(':').next().unwrap_or("?").to_string();
        let units = if backend == "nvidia" { "SMs" } else { "CUs" };
        let driver = if backend == "nvidia" {
            let cuda = format!("CUDA {}.{}", version / 1000, version % 1000 / 10);
            smi_driver.as_ref().map_or(cuda.clone(), |d| format!("{d} ({cuda})"))
        } else {
            format!("HIP {version}")
        };
        gpus.push(Gpu {
            backend,
            index: d["index"].as_u64().unwrap_or(0) as u32,
            name: s("name"),
            device: format!("{} ({arch}, {} {units})", s("name"), d["compute_units"].as_u64().unwrap_or(0)),
            arch,
            driver,
        });
    }
    gpus
}

/// One `nvidia-smi --query-gpu` field of GPU `index`, if nvidia-smi works.
fn nvidia_smi(fields: &str, index: u32) -> Option<String> {
    let out = Command::new("nvidia-smi")
        .args(["-i", &index.to_string(), &format!("--query-gpu={fields}"), "--format=csv,noheader,nounits"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The clocks the GPU runs at right now, as far as the tools say.
pub fn clocks(gpu: &Gpu) -> String {
    if gpu.backend != "nvidia" {
        return "unknown".into();
    }
    match nvidia_smi("clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw", gpu.index) {
        Some(t) => {
            let f: Vec<&str> = t.split(',').map(str::trim).collect();
            match f.as_slice() {
                [sm, max, mem, temp, power] => format!("SM {sm}/{max} MHz, memory {mem} MHz, {temp} C, {power} W"),
                _ => t,
            }
        }
        None => "unknown (no nvidia-smi)".into(),
    }
}

/// The CPU's model name and how many threads it runs, as the `cpu` rows name it.
pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_string()));
    let n = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{} ({n} threads)", model.unwrap_or_else(|| std::env::consts::ARCH.to_string()))
}

/// `$VAR` if set (a path that is not a file: none), else `name` on `PATH`,
/// else in one of `dirs`.
pub fn find(var: &str, name: &str, dirs: &[PathBuf], env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(p) = env(var) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path: Vec<PathBuf> = env("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    path.iter().chain(dirs).map(|d| d.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_naming_no_file_means_no_tool() {
        let dir = std::env::temp_dir().join(format!("selftest-find-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/nvcc"), "").unwrap();
        let on_path = |v: &str| (v == "PATH").then(|| dir.join("bin").into_os_string());
        assert_eq!(find("NVCC", "nvcc", &[], &on_path), Some(dir.join("bin/nvcc")));
        assert_eq!(find("NVCC", "hipcc", &[], &on_path), None);
        let off = |v: &str| match v {
            "NVCC" => Some(OsString::from("/nonexistent/nvcc")),
            _ => on_path(v),
        };
        assert_eq!(find("NVCC", "nvcc", &[], &off), None);
        let in_fallback = |_: &str| None;
        assert_eq!(find("NVCC", "nvcc", &[dir.join("bin")], &in_fallback), Some(dir.join("bin/nvcc")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
