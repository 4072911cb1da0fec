//! Which GPUs and driver libraries this machine has: `gpurun devices`, the
//! facts `gpurun doctor` prints ([`driver_report`]), opening the backend a
//! code object needs, and the "wrong vendor" diagnosis.

use gpu_toolchain::Vendor;

use crate::backend::{Backend, BackendError, DeviceInfo};
use crate::codeobj::CodeObject;
use crate::{cuda, hip};

/// The devices of one vendor (AMD first: the first-class vendor).
pub fn list(vendor: Vendor) -> Result<Vec<DeviceInfo>, BackendError> {
    match vendor {
        Vendor::Amd => hip::devices(),
        Vendor::Nvidia => cuda::devices(),
    }
}

/// Every vendor's devices or why there are none, AMD first.
pub fn probe_all() -> Vec<(Vendor, Result<Vec<DeviceInfo>, BackendError>)> {
    [Vendor::Amd, Vendor::Nvidia].into_iter().map(|v| (v, list(v))).collect()
}

/// Opens device `index` of `vendor`.
pub fn open(vendor: Vendor, index: u32) -> Result<Box<dyn Backend>, BackendError> {
    Ok(match vendor {
        Vendor::Amd => Box::new(hip::HipBackend::open(index)?),
        Vendor::Nvidia => Box::new(cuda::CudaBackend::open(index)?),
    })
}

/// Opens the device a code object needs. When its vendor has no usable
/// device but the other vendor has, says so: the code object is for the
/// wrong GPU.
pub fn open_for(code: &CodeObject, index: u32) -> Result<Box<dyn Backend>, BackendError> {
    let vendor = code.vendor();
    match open(vendor, index) {
        Ok(b) => Ok(b),
        Err(e) if e.is_no_device() => {
            let others = list(vendor.other()).unwrap_or_default();
            if others.is_empty() {
                return Err(e);
            }
            let have: Vec<String> = others.iter().map(|d| format!("{} ({})", d.name, d.processor())).collect();
            let first = others[0].processor().to_string();
            Err(BackendError::CodeObject(format!(
                "{} is {}, but this machine has no usable {vendor} GPU ({e}); it has {} GPU{}: {}. \
                 Rebuild the program for it, e.g. `gpurun run CRATE_DIR --arch {first}` or `gpurun build --arch {first}`",
                code.path.display(),
                code.describe(),
                vendor.other(),
                if others.len() == 1 { "" } else { "s" },
                have.join(", ")
            )))
        }
        Err(e) => Err(e),
    }
}

/// One line per device for `gpurun devices`.
pub fn describe(d: &DeviceInfo) -> String {
    let units = if d.vendor == Vendor::Nvidia { "SMs" } else { "CUs" };
    format!(
        "{:<3} {:<7} {:<24} {:<28} {:>4} {units}  {}-lane warps  up to {} resident warps  {:.1} GiB",
        d.index,
        d.vendor.to_string(),
        d.arch,
        d.name,
        d.compute_units,
        d.warp_size,
        d.max_resident_warps,
        d.total_memory as f64 / (1u64 << 30) as f64
    )
}

/// What is wrong with an NVIDIA device's driver for the programs built for
/// it: `gpu-ld` writes PTX 8.6 for sm_90 (`gpu_ld::SPLIT_FENCES_PTX_ISA`,
/// its one-sided fences), which a driver older than CUDA 12.7 refuses.
pub fn ptx_isa_problem(d: &DeviceInfo) -> Option<String> {
    if d.vendor != Vendor::Nvidia {
        return None;
    }
    let wanted = gpu_ld::default_ptx_isa(&d.arch)?;
    let (major, minor) = crate::codeobj::ptx::max_ptx_for_driver(d.driver_version)?;
    (major * 10 + minor < wanted).then(|| {
        format!(
            "device {}: programs built for {} are PTX ISA {}.{}, and this driver (CUDA {}) takes up to {major}.{minor}: \
             update the NVIDIA driver, or build with GPU_NVPTX_PTX_ISA={major}{minor} in the environment",
            d.index,
            d.arch,
            wanted / 10,
            wanted % 10,
            cuda::probe::version_string(d.driver_version)
        )
    })
}

/// What `gpurun doctor` shows about GPU drivers: for each vendor, the
/// library found (or every path tried) and the devices (or why none).
pub fn driver_report() -> Vec<(String, Result<String, String>)> {
    let mut out = Vec::new();
    for (vendor, devices) in probe_all() {
        let api = vendor.api();
        let loaded = match vendor {
            Vendor::Amd => hip::loaded_library(),
            Vendor::Nvidia => cuda::probe::loaded_library(),
        };
        let lib_label = match vendor {
            Vendor::Amd => "HIP runtime library (libamdhip64)".to_string(),
            Vendor::Nvidia => "CUDA driver library (libcuda)".to_string(),
        };
        match (&devices, loaded) {
            (Err(e @ (BackendError::NoLibrary { .. } | BackendError::MissingSymbol { .. })), _) => {
                out.push((lib_label, Err(e.to_string())));
                continue;
            }
            (_, Some(path)) => out.push((lib_label, Ok(path))),
            (_, None) => out.push((lib_label, Err("not loaded".into()))),
        }
        let dev_label = format!("{api} devices");
        match devices {
            Ok(list) if !list.is_empty() => {
                let lines: Vec<String> = list.iter().map(describe).collect();
                out.push((dev_label, Ok(lines.join("\n"))));
                for problem in list.iter().filter_map(ptx_isa_problem) {
                    out.push(("an NVIDIA driver for the PTX ISA gpu-ld writes".into(), Err(problem)));
                }
            }
            Ok(_) => out.push((dev_label, Err(format!("no {vendor} GPU")))),
            Err(e) => out.push((dev_label, Err(e.to_string()))),
        }
    }
    out
}

/// The `--json` form of `gpurun devices`.
#[derive(serde::Serialize)]
pub struct DevicesJson {
    pub devices: Vec<DeviceInfo>,
    pub drivers: Vec<DriverJson>,
}

#[derive(serde::Serialize)]
pub struct DriverJson {
    pub api: &'static str,
    pub library: Option<String>,
    pub devices: usize,
    pub error: Option<String>,
}

/// Every device and each driver's state.
pub fn devices_json() -> DevicesJson {
    let mut json = DevicesJson { devices: Vec::new(), drivers: Vec::new() };
    for (vendor, r) in probe_all() {
        let library = match vendor {
            Vendor::Amd => hip::loaded_library(),
            Vendor::Nvidia => cuda::probe::loaded_library(),
        };
        let (count, error) = match r {
            Ok(list) => {
                let n = list.len();
                json.devices.extend(list);
                (n, None)
            }
            Err(e) => (0, Some(e.to_string())),
        };
        json.drivers.push(DriverJson { api: vendor.api(), library, devices: count, error });
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sm_90_device_needs_a_driver_that_takes_ptx_8_6() {
        let mut d = crate::backend::h100();
        assert_eq!(ptx_isa_problem(&d), None, "CUDA 13.0 takes PTX 9.0");
        d.driver_version = 12070;
        assert_eq!(ptx_isa_problem(&d), None, "CUDA 12.7 takes PTX 8.6");
        d.driver_version = 12040;
        let m = ptx_isa_problem(&d).expect("CUDA 12.4 takes PTX 8.4");
        assert!(m.contains("PTX ISA 8.6") && m.contains("CUDA 12.4") && m.contains("GPU_NVPTX_PTX_ISA=84"), "{m}");
        // Other GPUs keep LLVM's default ISA for them: nothing to say.
        d.arch = "sm_80".into();
        assert_eq!(ptx_isa_problem(&d), None);
    }
}
