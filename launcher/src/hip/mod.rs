//! The AMD backend: `libamdhip64` loaded at run time ([`sys`] is the raw
//! table), `Result`-returning wrappers here, and the safe [`HipBackend`].

#![allow(non_upper_case_globals)] // HIP's own names for its constants

pub mod abi_check;
mod arch;
pub mod sys;

use std::ffi::{CStr, CString, c_int, c_void};
use std::ptr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rt_common::protocol::{KERNEL_ENTRY, SHARED_STACKS_SYMBOL};

use crate::backend::{Backend, BackendError, DeviceInfo, KernelInfo, MappedBuf, Vendor, paren, stack_refused};
use crate::codeobj::amdgpu::{TargetId, check_compatible};
use crate::codeobj::{CodeObject, Kind};
use crate::libpath;
use sys::*;

/// The paths tried for `libamdhip64`, in order: `$ROCM_PATH/lib`,
/// `$HIP_PATH/lib`, `/opt/rocm/lib{,64}`, then the loader's search path.
pub fn candidates() -> Vec<String> {
    let mut dirs = Vec::new();
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(p) = std::env::var_os(var) {
            dirs.push(format!("{}/lib", p.to_string_lossy()));
        }
    }
    dirs.extend(["/opt/rocm/lib".to_string(), "/opt/rocm/lib64".to_string()]);
    let names = ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"];
    libpath::candidates("GPURUN_HIP_LIB", &dirs, &names, false)
}

static LOADED: OnceLock<String> = OnceLock::new();

/// The path of the HIP runtime, once [`api`] has loaded it (even if
/// `hipInit` then failed).
pub fn loaded_library() -> Option<String> {
    LOADED.get().cloned()
}

/// Loads the HIP runtime and runs `hipInit` once per process.
pub fn api() -> Result<&'static HipApi, BackendError> {
    static API: OnceLock<Result<HipApi, BackendError>> = OnceLock::new();
    let r = API.get_or_init(|| {
        let (lib, path) = libpath::load_first(&candidates())
            .map_err(|tried| BackendError::NoLibrary { vendor: Vendor::Amd, tried })?;
        let _ = LOADED.set(path.clone());
        // SAFETY: `lib` is a HIP runtime; the table's signatures are checked
        // against the real headers (hip-abi-check).
        let api = unsafe { HipApi::load(lib, path.clone()) }.map_err(|symbol| BackendError::MissingSymbol {
            vendor: Vendor::Amd,
            path: path.clone(),
            symbol: symbol.into(),
        })?;
        // SAFETY: hipInit takes flags = 0.
        let e = unsafe { (api.hipInit)(0) };
        if e.0 != hipSuccess {
            let (name, desc) = api.error_text(e);
            let detail = match e.0 {
                hipErrorNoDevice | hipErrorInvalidDevice => format!(
                    "the HIP runtime ({path}) found no AMD GPU (hipInit: {name}); check that the amdgpu \
                     driver is loaded and that you may open /dev/kfd and /dev/dri/renderD* (groups video, render)"
                ),
                hipErrorInsufficientDriver => {
                    format!("the HIP runtime ({path}) needs a newer amdgpu kernel driver (hipInit: {name})")
                }
                _ => format!("hipInit failed in {path}: {name}{}", paren(&desc)),
            };
            return Err(BackendError::NoDevice { vendor: Vendor::Amd, detail });
        }
        Ok(api)
    });
    r.as_ref().map_err(Clone::clone)
}

impl HipApi {
    /// `(name, description)` of an error code.
    pub fn error_text(&self, e: hipError_t) -> (String, String) {
        // SAFETY: both return static C strings (or null for unknown codes).
        let text = |p: *const std::ffi::c_char| {
            if p.is_null() {
                None
            } else {
                // SAFETY: non-null pointers from HIP are NUL-terminated statics.
                Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            }
        };
        // SAFETY: plain lookups of static strings.
        let (n, d) = unsafe { ((self.hipGetErrorName)(e), (self.hipGetErrorString)(e)) };
        let name = text(n).unwrap_or_else(|| format!("hipError_t {}", e.0));
        // Old runtimes return the name as the description too.
        let desc = text(d).filter(|d| *d != name).unwrap_or_default();
        (name, desc)
    }

    /// Turns a return code into a `Result`.
    fn check(&self, call: &'static str, e: hipError_t, hint: &str) -> Result<(), BackendError> {
        if e.0 == hipSuccess {
            return Ok(());
        }
        let (name, desc) = self.error_text(e);
        Err(BackendError::Api { call, name, desc, hint: hint.into() })
    }

    fn attr(&self, device: c_int, a: c_int) -> Result<i32, BackendError> {
        let mut v = 0;
        // SAFETY: `v` is a valid out-pointer; `device` an ordinal below the count.
        let e = unsafe { (self.hipDeviceGetAttribute)(&mut v, hipDeviceAttribute_t(a), device) };
        self.check("hipDeviceGetAttribute", e, "").map(|()| v)
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        let mut n = 0;
        // SAFETY: `n` is a valid out-pointer.
        let e = unsafe { (self.hipGetDeviceCount)(&mut n) };
        if e.0 == hipErrorNoDevice || (e.0 == hipSuccess && n <= 0) {
            return Err(BackendError::NoDevice {
                vendor: Vendor::Amd,
                detail: format!("the HIP runtime ({}) sees no AMD GPU", self.path),
            });
        }
        self.check("hipGetDeviceCount", e, "").map(|()| n as u32)
    }

    fn device_info(&self, index: u32) -> Result<DeviceInfo, BackendError> {
        let d = index as c_int;
        let mut dev = hipDevice_t(0);
        // SAFETY: valid out-pointer, ordinal below the count.
        self.check("hipDeviceGet", unsafe { (self.hipDeviceGet)(&mut dev, d) }, "")?;
        let mut name = [0 as std::ffi::c_char; 256];
        // SAFETY: the buffer holds `len` bytes; HIP NUL-terminates within it.
        let e = unsafe { (self.hipDeviceGetName)(name.as_mut_ptr(), name.len() as c_int - 1, dev) };
        self.check("hipDeviceGetName", e, "")?;
        // SAFETY: zero-initialised buffer with a NUL at the end at least.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        let mut total = 0usize;
        // SAFETY: valid out-pointer.
        self.check("hipDeviceTotalMem", unsafe { (self.hipDeviceTotalMem)(&mut total, dev) }, "")?;
        let cus = self.attr(d, hipDeviceAttributeMultiprocessorCount)?.max(0) as u32;
        let warp = self.attr(d, hipDeviceAttributeWarpSize)?.max(1) as u32;
        let per_cu = self.attr(d, hipDeviceAttributeMaxThreadsPerMultiProcessor)?.max(0) as u32;
        let mut version = 0;
        // SAFETY: valid out-pointer.
        let _ = unsafe { (self.hipRuntimeGetVersion)(&mut version) };
        Ok(DeviceInfo {
            index,
            vendor: Vendor::Amd,
            name,
            arch: arch::target_id(self, d).unwrap_or_else(|| "gfx?".into()),
            compute_units: cus,
            warp_size: warp,
            max_threads_per_cu: per_cu,
            max_resident_warps: per_cu / warp * cus,
            total_memory: total as u64,
            driver_version: version,
        })
    }
}

/// The AMD devices.
pub fn devices() -> Result<Vec<DeviceInfo>, BackendError> {
    let api = api()?;
    (0..api.device_count()?).map(|i| api.device_info(i)).collect()
}

/// One AMD device, current on the opening thread.
pub struct HipBackend {
    api: &'static HipApi,
    info: DeviceInfo,
    module: Option<hipModule_t>,
    func: Option<hipFunction_t>,
    stream: hipStream_t,
    side: hipStream_t,
    device_allocs: Vec<*mut c_void>,
    host_allocs: Vec<*mut c_void>,
    launched: bool,
    finished: bool,
    /// The driver's per-lane call stack, for fault hints.
    call_stack: u64,
}

impl HipBackend {
    pub fn open(index: u32) -> Result<HipBackend, BackendError> {
        let api = api()?;
        let count = api.device_count()?;
        if index >= count {
            return Err(BackendError::NoSuchDevice { vendor: Vendor::Amd, index, count });
        }
        let info = api.device_info(index)?;
        // SAFETY: ordinal below the count.
        api.check("hipSetDevice", unsafe { (api.hipSetDevice)(index as c_int) }, "")?;
        let mut streams = [hipStream_t(ptr::null_mut()); 2];
        for s in &mut streams {
            // SAFETY: valid out-pointer; destroyed in Drop.
            let e = unsafe { (api.hipStreamCreateWithFlags)(s, hipStreamNonBlocking) };
            api.check("hipStreamCreateWithFlags", e, "")?;
        }
        Ok(HipBackend {
            api,
            info,
            module: None,
            func: None,
            stream: streams[0],
            side: streams[1],
            device_allocs: Vec::new(),
            host_allocs: Vec::new(),
            launched: false,
            finished: false,
            call_stack: 0,
        })
    }

    /// Whether the loaded `module` defines the global `name`.
    fn defines_global(&self, module: hipModule_t, name: &str) -> bool {
        let name = CString::new(name).expect("no NUL in a symbol name");
        let (mut ptr, mut bytes) = (hipDeviceptr_t(ptr::null_mut()), 0usize);
        // SAFETY: `module` is loaded; valid out-pointers; a missing global
        // is an error result (hipErrorNotFound).
        let e = unsafe { (self.api.hipModuleGetGlobal)(&mut ptr, &mut bytes, module, name.as_ptr()) };
        e.0 == hipSuccess
    }

    fn func_attr(&self, f: hipFunction_t, a: c_int) -> Option<i32> {
        let mut v = 0;
        // SAFETY: valid out-pointer; `f` is a function of the loaded module.
        let e = unsafe { (self.api.hipFuncGetAttribute)(&mut v, hipFunction_attribute(a), f) };
        (e.0 == hipSuccess).then_some(v)
    }
}

fn no_entry(code: &CodeObject) -> BackendError {
    BackendError::CodeObject(format!(
        "{}: no kernel `{KERNEL_ENTRY}`; the program must be built with the GPU runtime \
         (`gpurun build` or the project's target specs do that)",
        code.path.display()
    ))
}

impl Backend for HipBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(&mut self, code: &CodeObject) -> Result<KernelInfo, BackendError> {
        let Kind::Amdgpu(amd) = &code.kind else {
            return Err(BackendError::CodeObject(format!(
                "{} is {}, but device {} is an AMD GPU ({}, {})",
                code.path.display(),
                code.describe(),
                self.info.index,
                self.info.name,
                self.info.processor()
            )));
        };
        if let Some(arch) = amd.arch {
            let device = TargetId::parse(&self.info.arch);
            check_compatible(arch, amd.xnack, amd.sramecc, &device)
                .map_err(|why| BackendError::CodeObject(format!("{}: {why}", code.path.display())))?;
        }
        if amd.has_entry == Some(false) {
            return Err(no_entry(code));
        }
        let api = self.api;
        let mut module = hipModule_t(ptr::null_mut());
        // SAFETY: `code.bytes` is a complete code object that outlives the call.
        let e = unsafe { (api.hipModuleLoadData)(&mut module, code.bytes.as_ptr().cast()) };
        if e.0 != hipSuccess {
            let (name, desc) = api.error_text(e);
            return Err(BackendError::CodeObject(format!(
                "{}: the HIP runtime refused {} on {} ({}): {name}{}",
                code.path.display(),
                code.describe(),
                self.info.name,
                self.info.arch,
                paren(&desc)
            )));
        }
        self.module = Some(module);
        let name = CString::new(KERNEL_ENTRY).expect("no NUL in the entry name");
        let mut func = hipFunction_t(ptr::null_mut());
        // SAFETY: `module` is loaded; `name` is NUL-terminated.
        let e = unsafe { (api.hipModuleGetFunction)(&mut func, module, name.as_ptr()) };
        if e.0 == hipErrorNotFound || e.0 == hipErrorInvalidKernelFile {
            return Err(no_entry(code));
        }
        api.check("hipModuleGetFunction", e, "")?;
        self.func = Some(func);
        Ok(KernelInfo {
            lanes: amd.lanes(),
            max_block_threads: self.func_attr(func, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).unwrap_or(0).max(0)
                as u32,
            registers: self.func_attr(func, HIP_FUNC_ATTRIBUTE_NUM_REGS).map(|r| r as u32),
            local_bytes: self
                .func_attr(func, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .map(|l| l as u64)
                .or(amd.private_segment_size.map(u64::from)),
            shared_stacks: self.defines_global(module, SHARED_STACKS_SYMBOL),
            // Only a wave's leader lane runs frames (rt-amdgpu's start.rs).
            stack_lanes: rt_common::protocol::AMD_FRAME_LANES,
        })
    }

    fn set_call_stack(&mut self, bytes: u64, option: &str) -> Result<(), BackendError> {
        let api = self.api;
        let call = "hipDeviceSetLimit(hipLimitStackSize)";
        match api.hipDeviceSetLimit {
            Some(set) => {
                // SAFETY: a plain limit setting on the current device.
                let e = unsafe { set(hipLimit_t(hipLimitStackSize), bytes as usize) };
                if e.0 == hipErrorInvalidValue || e.0 == hipErrorOutOfMemory {
                    let name = api.error_text(e).0;
                    return Err(stack_refused(bytes, option, call, &name, e.0 == hipErrorOutOfMemory));
                }
                api.check(call, e, &format!("lower {option}"))?;
            }
            None => eprintln!(
                "gpurun: warning: this HIP runtime ({}) cannot set the stack size (no hipDeviceSetLimit); \
                 {option} is not applied",
                api.path
            ),
        }
        self.call_stack = bytes;
        Ok(())
    }

    fn occupancy(&mut self, block_threads: u32) -> Result<u32, BackendError> {
        let func = self.func.expect("load before occupancy");
        let mut n = 0;
        // SAFETY: valid out-pointer; `func` is a function of the loaded module.
        let e = unsafe {
            (self.api.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(&mut n, func, block_threads as c_int, 0)
        };
        self.api.check("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", e, "").map(|()| n.max(0) as u32)
    }

    fn free_memory(&mut self) -> Result<u64, BackendError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        let e = unsafe { (self.api.hipMemGetInfo)(&mut free, &mut total) };
        self.api.check("hipMemGetInfo", e, "").map(|()| free as u64)
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, BackendError> {
        let mut p = ptr::null_mut();
        // SAFETY: valid out-pointer; freed in Drop.
        let e = unsafe { (self.api.hipMalloc)(&mut p, bytes.max(1)) };
        self.api.check("hipMalloc", e, "lower --heap-size, --stack-size or --threads")?;
        self.device_allocs.push(p);
        Ok(p as u64)
    }

    fn alloc_mapped(&mut self, bytes: usize) -> Result<MappedBuf, BackendError> {
        let mut host = ptr::null_mut();
        let flags = hipHostMallocMapped | hipHostMallocCoherent | hipHostMallocPortable;
        // SAFETY: valid out-pointer; freed in Drop.
        let e = unsafe { (self.api.hipHostMalloc)(&mut host, bytes.max(1), flags) };
        self.api.check("hipHostMalloc(coherent, mapped)", e, "")?;
        self.host_allocs.push(host);
        let mut dev = ptr::null_mut();
        // SAFETY: `host` is a live mapped allocation.
        let e = unsafe { (self.api.hipHostGetDevicePointer)(&mut dev, host, 0) };
        self.api.check("hipHostGetDevicePointer", e, "")?;
        Ok(MappedBuf { host: host.cast(), device: dev as u64, len: bytes })
    }

    fn upload(&mut self, dst: u64, src: &[u8]) -> Result<(), BackendError> {
        // SAFETY: `dst` is our allocation with room for `src`; HIP only reads `src`.
        let e = unsafe {
            (self.api.hipMemcpyHtoD)(hipDeviceptr_t(dst as *mut c_void), src.as_ptr() as *mut c_void, src.len())
        };
        self.api.check("hipMemcpyHtoD", e, "")
    }

    fn zero(&mut self, dst: u64, bytes: usize) -> Result<(), BackendError> {
        // SAFETY: `dst` is our allocation of at least `bytes`.
        let e = unsafe { (self.api.hipMemset)(dst as *mut c_void, 0, bytes) };
        self.api.check("hipMemset", e, "")
    }

    fn launch(&mut self, grid: u32, block_threads: u32, param: u64) -> Result<(), BackendError> {
        let func = self.func.expect("load before launch");
        // Our non-blocking stream does not wait for the null stream's memsets.
        // SAFETY: no arguments.
        self.api.check("hipDeviceSynchronize", unsafe { (self.api.hipDeviceSynchronize)() }, "")?;
        let mut arg = param;
        let mut params = [(&mut arg as *mut u64).cast::<c_void>()];
        // SAFETY: the kernel takes one 8-byte parameter, passed by pointer;
        // `arg` outlives the call (HIP copies parameters at launch).
        let e = unsafe {
            (self.api.hipModuleLaunchKernel)(
                func,
                grid,
                1,
                1,
                block_threads,
                1,
                1,
                0,
                self.stream,
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        };
        self.api.check("hipModuleLaunchKernel", e, "the launch was sized by the occupancy API; please report this")?;
        self.launched = true;
        Ok(())
    }

    fn poll(&mut self) -> Result<bool, BackendError> {
        // SAFETY: `stream` is live until Drop.
        let e = unsafe { (self.api.hipStreamQuery)(self.stream) };
        match e.0 {
            hipSuccess => {
                self.finished = true;
                Ok(true)
            }
            hipErrorNotReady => Ok(false),
            code => {
                self.finished = true;
                let (name, desc) = self.api.error_text(e);
                let hint = match code {
                    hipErrorIllegalAddress => format!(
                        "A thread accessed memory it may not (a runtime bug, an unsafe block, or a stack overflow: \
                         try a --call-stack-size above {})",
                        self.call_stack
                    ),
                    hipErrorLaunchFailure | hipErrorAssert => "A thread trapped (abort, an unreachable path) or faulted".into(),
                    _ => String::new(),
                };
                Err(BackendError::Fault { name, desc, hint })
            }
        }
    }

    fn read_back(&mut self, src: u64, dst: &MappedBuf) -> Result<(), BackendError> {
        // SAFETY: `dst` is our pinned allocation of `len` bytes, `src` a device
        // allocation at least as large; the copy runs on the side stream.
        let e = unsafe {
            (self.api.hipMemcpyDtoHAsync)(dst.host.cast(), hipDeviceptr_t(src as *mut c_void), dst.len, self.side)
        };
        self.api.check("hipMemcpyDtoHAsync", e, "")?;
        // Poll with a deadline: if the copy needs compute units the running
        // kernel holds (a blit kernel), it may never run.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            // SAFETY: `side` is live until Drop.
            let e = unsafe { (self.api.hipStreamQuery)(self.side) };
            match e.0 {
                hipSuccess => return Ok(()),
                hipErrorNotReady if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                _ => return self.api.check("hipMemcpyDtoHAsync (thread table)", e, "the copy did not complete"),
            }
        }
    }
}

impl Drop for HipBackend {
    fn drop(&mut self) {
        if self.launched && !self.finished {
            // Freeing memory a running kernel uses could wait for it forever.
            return;
        }
        let api = self.api;
        // SAFETY: every handle was created by this backend, is freed once,
        // and no kernel uses it any more. Errors are ignored (teardown).
        unsafe {
            for p in self.device_allocs.drain(..) {
                let _ = (api.hipFree)(p);
            }
            for p in self.host_allocs.drain(..) {
                let _ = (api.hipHostFree)(p);
            }
            if let Some(m) = self.module.take() {
                let _ = (api.hipModuleUnload)(m);
            }
            let _ = (api.hipStreamDestroy)(self.stream);
            let _ = (api.hipStreamDestroy)(self.side);
        }
    }
}

#[cfg(test)]
mod tests;
