//! Finding and initialising the CUDA driver before cudarc touches it.
//!
//! cudarc's dynamic loading panics when no `libcuda` loads or a symbol is
//! missing. So we look for the library ourselves first (naming every path
//! tried, honouring `GPURUN_CUDA_LIB`), check every symbol the launcher
//! uses, and keep our handle open; cudarc's own `dlopen` by name then finds
//! the same, already loaded, library.

use std::sync::OnceLock;

use cudarc::driver::{result, sys};
use gpu_toolchain::Vendor;

use crate::backend::BackendError;
use crate::libpath;

/// Every driver entry point the launcher calls (through cudarc).
pub const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSetLimit",
    "cuCtxSynchronize",
    "cuModuleLoadDataEx",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemHostGetDevicePointer_v2",
    "cuMemGetInfo_v2",
    "cuStreamCreate",
    "cuStreamQuery",
    "cuStreamDestroy_v2",
    "cuLaunchKernel",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// The paths tried for `libcuda`, in order.
pub fn candidates() -> Vec<String> {
    let dirs = [
        libpath::multiarch_dir(),
        "/usr/lib64".to_string(),
        "/usr/lib".to_string(),
        "/usr/local/nvidia/lib64".to_string(),
        "/usr/lib/wsl/lib".to_string(),
    ];
    libpath::candidates("GPURUN_CUDA_LIB", &dirs, &["libcuda.so.1", "libcuda.so"], true)
}

/// The loaded driver: its path and version (`13000` = CUDA 13.0).
#[derive(Clone, Debug)]
pub struct Driver {
    pub path: String,
    pub version: i32,
}

fn err_text(e: result::DriverError) -> (String, String) {
    let name = e.error_name().map_or_else(|_| format!("CUresult {}", e.0 as u32), |n| n.to_string_lossy().into_owned());
    let desc = e.error_string().map_or_else(|_| String::new(), |n| n.to_string_lossy().into_owned());
    (name, desc)
}

/// `(error name, description)` of a driver error.
pub fn describe(e: result::DriverError) -> (String, String) {
    err_text(e)
}

static LOADED: OnceLock<String> = OnceLock::new();

/// The path of the driver library, once [`driver`] has loaded it (even if
/// `cuInit` then failed).
pub fn loaded_library() -> Option<String> {
    LOADED.get().cloned()
}

/// Loads and initialises the driver once per process.
pub fn driver() -> Result<Driver, BackendError> {
    static DRIVER: OnceLock<Result<Driver, BackendError>> = OnceLock::new();
    let driver = DRIVER.get_or_init(load).clone()?;
    init(&driver)?;
    Ok(driver)
}

fn load() -> Result<Driver, BackendError> {
    let vendor = Vendor::Nvidia;
    let (lib, path) = libpath::load_first(&candidates()).map_err(|tried| BackendError::NoLibrary { vendor, tried })?;
    let _ = LOADED.set(path.clone());
    for s in REQUIRED_SYMBOLS {
        // SAFETY: we only check that the symbol exists; it is not called
        // through this untyped pointer.
        if unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err() {
            return Err(BackendError::MissingSymbol { vendor, path, symbol: s.to_string() });
        }
    }
    // Keep the library loaded for the life of the process: cudarc's lookups
    // by name resolve to this already-loaded object.
    std::mem::forget(lib);
    // SAFETY: is_culib_present only tries to dlopen cudarc's candidate names.
    if !unsafe { sys::is_culib_present() } {
        return Err(BackendError::NoDevice {
            vendor,
            detail: format!(
                "{path} loads, but not under the names libcuda.so / libcuda.so.1 that the CUDA bindings \
                 use; add its directory to LD_LIBRARY_PATH"
            ),
        });
    }
    let mut version = 0;
    // SAFETY: the library is loaded and has the symbol (checked above).
    let _ = unsafe { sys::cuDriverGetVersion(&mut version) };
    Ok(Driver { path, version })
}

/// `cuInit`, with its failures explained.
fn init(driver: &Driver) -> Result<(), BackendError> {
    let Err(e) = result::init() else { return Ok(()) };
    let (name, desc) = err_text(e);
    let detail = match e.0 {
        sys::CUresult::CUDA_ERROR_NO_DEVICE => {
            format!("the CUDA driver ({}) found no device (cuInit: {name})", driver.path)
        }
        sys::CUresult::CUDA_ERROR_STUB_LIBRARY => format!(
            "{} is the CUDA toolkit's stub library, not the driver; install the NVIDIA driver \
             or put the real libcuda first on the loader path",
            driver.path
        ),
        sys::CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH | sys::CUresult::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => {
            format!("the CUDA driver ({}) cannot drive this GPU: {name} ({desc}); update the driver", driver.path)
        }
        _ => format!(
            "cuInit failed: {name} ({desc}); check that the NVIDIA kernel module is loaded \
             (nvidia-smi) and that you may open /dev/nvidia*"
        ),
    };
    Err(BackendError::NoDevice { vendor: Vendor::Nvidia, detail })
}

/// `major.minor` of a driver version number (13000 → "13.0").
pub fn version_string(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}
