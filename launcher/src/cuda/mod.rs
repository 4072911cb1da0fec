//! The NVIDIA backend: the CUDA driver API through cudarc (`sys` is the raw
//! table, `result` the `Result`-returning wrappers); [`CudaBackend`] is the
//! safe type. All calls run on the thread that opened the device (the
//! primary context is made current there).

pub mod probe;

use std::ffi::{CString, c_void};
use std::mem::MaybeUninit;

use cudarc::driver::{result, sys};
use gpu_toolchain::Vendor;
use rt_abi::symbols::{KERNEL_ENTRY, SHARED_STACKS_SYMBOL};

use crate::backend::{Backend, BackendError, DeviceInfo, KernelInfo, MappedBuf, stack_refused};
use crate::codeobj::{CodeObject, Kind, ptx};

pub use probe::{Driver, driver};

/// Turns a driver error into a [`BackendError::Api`].
fn api(call: &'static str, e: result::DriverError, hint: &str) -> BackendError {
    let (name, desc) = probe::describe(e);
    BackendError::Api { call, name, desc, hint: hint.to_string() }
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, BackendError> {
    // SAFETY: `dev` came from cuDeviceGet after a successful cuInit.
    unsafe { result::device::get_attribute(dev, a) }.map_err(|e| api("cuDeviceGetAttribute", e, ""))
}

/// The CUDA devices, after loading and initialising the driver.
pub fn devices() -> Result<Vec<DeviceInfo>, BackendError> {
    let drv = driver()?;
    let n = result::device::get_count().map_err(|e| api("cuDeviceGetCount", e, ""))?;
    (0..n.max(0) as u32).map(|i| device_info(&drv, i)).collect()
}

fn device_info(drv: &Driver, index: u32) -> Result<DeviceInfo, BackendError> {
    use sys::CUdevice_attribute::*;
    let dev = result::device::get(index as i32).map_err(|e| api("cuDeviceGet", e, ""))?;
    let name = result::device::get_name(dev).map_err(|e| api("cuDeviceGetName", e, ""))?;
    // SAFETY: as in `attr`.
    let total = unsafe { result::device::total_mem(dev) }.map_err(|e| api("cuDeviceTotalMem", e, ""))?;
    let major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let sms = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let warp = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE)?.max(1) as u32;
    let per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u32;
    Ok(DeviceInfo {
        index,
        vendor: Vendor::Nvidia,
        name,
        arch: format!("sm_{major}{minor}"),
        compute_units: sms,
        warp_size: warp,
        max_threads_per_cu: per_sm,
        max_resident_warps: per_sm / warp * sms,
        total_memory: total as u64,
        driver_version: drv.version,
    })
}

/// One CUDA device with its primary context current on this thread.
pub struct CudaBackend {
    info: DeviceInfo,
    driver: Driver,
    dev: sys::CUdevice,
    module: Option<sys::CUmodule>,
    func: Option<sys::CUfunction>,
    /// The kernel's stream and a second one for copies while it runs; both
    /// non-blocking (no implicit synchronisation with the legacy stream).
    stream: sys::CUstream,
    side: sys::CUstream,
    device_allocs: Vec<sys::CUdeviceptr>,
    host_allocs: Vec<*mut c_void>,
    /// The driver's per-lane call stack, for fault hints.
    call_stack: u64,
    launched: bool,
    finished: bool,
}

impl CudaBackend {
    pub fn open(index: u32) -> Result<CudaBackend, BackendError> {
        let driver = driver()?;
        let count = result::device::get_count().map_err(|e| api("cuDeviceGetCount", e, ""))?.max(0) as u32;
        if count == 0 {
            return Err(BackendError::NoDevice {
                vendor: Vendor::Nvidia,
                detail: format!("the CUDA driver ({}) reports no device", driver.path),
            });
        }
        if index >= count {
            return Err(BackendError::NoSuchDevice { vendor: Vendor::Nvidia, index, count });
        }
        let info = device_info(&driver, index)?;
        let dev = result::device::get(index as i32).map_err(|e| api("cuDeviceGet", e, ""))?;
        // SAFETY: `dev` is a valid device; the primary context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| api("cuDevicePrimaryCtxRetain", e, ""))?;
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| api("cuCtxSetCurrent", e, ""))?;
        let nb = || result::stream::create(result::stream::StreamKind::NonBlocking);
        let stream = nb().map_err(|e| api("cuStreamCreate", e, ""))?;
        let side = nb().map_err(|e| api("cuStreamCreate", e, ""))?;
        Ok(CudaBackend {
            info,
            driver,
            dev,
            module: None,
            func: None,
            stream,
            side,
            device_allocs: Vec::new(),
            host_allocs: Vec::new(),
            call_stack: 0,
            launched: false,
            finished: false,
        })
    }

    /// Refuses PTX the device or driver cannot take, before the JIT does
    /// with a less helpful message.
    fn precheck(&self, code: &CodeObject) -> Result<(), BackendError> {
        let dev_sm: u32 = self.info.arch.trim_start_matches("sm_").parse().unwrap_or(0);
        match &code.kind {
            Kind::Ptx(p) => {
                if !p.has_entry {
                    return Err(no_entry(code));
                }
                let arch_specific = p.target.ends_with('a') || p.target.ends_with('f');
                if p.sm > dev_sm || (arch_specific && p.sm != dev_sm) {
                    return Err(BackendError::CodeObject(format!(
                        "{}: the PTX targets {} but {} is sm_{dev_sm}; rebuild with --arch sm_{dev_sm}",
                        code.path.display(),
                        p.target,
                        self.info.name
                    )));
                }
                if let Some(max) = ptx::max_ptx_for_driver(self.driver.version)
                    && p.version > max
                {
                    return Err(ptx_too_new(code, p.version, self.driver.version));
                }
            }
            Kind::Cubin { sm: Some(sm) } if *sm != dev_sm && *sm / 10 != dev_sm / 10 => {
                return Err(BackendError::CodeObject(format!(
                    "{}: the cubin is for sm_{sm} but {} is sm_{dev_sm}; rebuild with --arch sm_{dev_sm}",
                    code.path.display(),
                    self.info.name
                )));
            }
            _ => {}
        }
        Ok(())
    }
}

fn no_entry(code: &CodeObject) -> BackendError {
    BackendError::CodeObject(format!(
        "{}: no kernel `{KERNEL_ENTRY}`; the program must be built with the GPU runtime \
         (`gpurun build` or the project's target specs do that)",
        code.path.display()
    ))
}

fn ptx_too_new(code: &CodeObject, version: (u32, u32), driver: i32) -> BackendError {
    let (supports, isa) = match ptx::max_ptx_for_driver(driver) {
        Some((a, b)) => (format!("PTX ISA up to {a}.{b}"), format!("{a}{b}")),
        None => ("an older PTX ISA".into(), "NN".into()),
    };
    // gpu-ld picks the ISA (8.6 for sm_90: its one-sided fences); the
    // variable is read at link time, which cargo does not track.
    BackendError::CodeObject(format!(
        "{}: the PTX needs a newer driver: PTX ISA {}.{}, but the driver (CUDA {}) supports {supports}. \
         Update the NVIDIA driver, or rebuild for an older PTX ISA: touch src/main.rs, then \
         `GPU_NVPTX_PTX_ISA={isa} gpurun build ...` (or cargo build)",
        code.path.display(),
        version.0,
        version.1,
        probe::version_string(driver)
    ))
}

/// A fault's hint, by error.
fn fault_hint(code: sys::CUresult, stack: u64) -> String {
    use sys::CUresult::*;
    match code {
        CUDA_ERROR_HARDWARE_STACK_ERROR => {
            format!("A lane overflowed its call stack ({stack} bytes per lane): raise --call-stack-size")
        }
        CUDA_ERROR_ILLEGAL_ADDRESS | CUDA_ERROR_MISALIGNED_ADDRESS | CUDA_ERROR_INVALID_ADDRESS_SPACE => format!(
            "A thread accessed memory it may not (a runtime bug, an unsafe block, or a call stack overflow in code \
             without depth checks: try a --call-stack-size above {stack})"
        ),
        CUDA_ERROR_ILLEGAL_INSTRUCTION | CUDA_ERROR_INVALID_PC => {
            "A thread executed a trap or invalid code (abort, an unreachable path, or corrupted code)".into()
        }
        CUDA_ERROR_LAUNCH_TIMEOUT => "The display watchdog stopped the kernel: run on a GPU without a display".into(),
        _ => String::new(),
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(&mut self, code: &CodeObject) -> Result<KernelInfo, BackendError> {
        if code.vendor() != Vendor::Nvidia {
            return Err(BackendError::CodeObject(format!(
                "{} is {}, but device {} is an NVIDIA GPU ({})",
                code.path.display(),
                code.describe(),
                self.info.index,
                self.info.name
            )));
        }
        self.precheck(code)?;
        let mut image = code.bytes.clone();
        if matches!(code.kind, Kind::Ptx(_)) {
            image.push(0); // the driver reads PTX as a C string
        }
        let mut log = vec![0u8; 1 << 16];
        let mut options =
            [sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER, sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
        let mut module = MaybeUninit::uninit();
        // SAFETY: `image` is a NUL-terminated PTX string or a cubin/fatbin
        // image that outlives the call; the option arrays have 2 entries each
        // and the log buffer is as large as its size option says.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                module.as_mut_ptr(),
                image.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if let Err(e) = r.result() {
            let jit_log = String::from_utf8_lossy(log.split(|b| *b == 0).next().unwrap_or(&[])).trim().to_string();
            return Err(match (e.0, &code.kind) {
                (sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, Kind::Ptx(p)) => {
                    ptx_too_new(code, p.version, self.driver.version)
                }
                _ => {
                    let (name, desc) = probe::describe(e);
                    let log = if jit_log.is_empty() { String::new() } else { format!("\n  JIT log: {jit_log}") };
                    BackendError::CodeObject(format!(
                        "{}: the CUDA driver refused {}: {name} ({desc}){log}",
                        code.path.display(),
                        code.describe()
                    ))
                }
            });
        }
        // SAFETY: cuModuleLoadDataEx succeeded, so it wrote the module.
        let module = unsafe { module.assume_init() };
        self.module = Some(module);
        let name = CString::new(KERNEL_ENTRY).expect("no NUL in the entry name");
        // SAFETY: `module` is loaded and not unloaded before Drop.
        let func = match unsafe { result::module::get_function(module, name) } {
            Ok(f) => f,
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND => return Err(no_entry(code)),
            Err(e) => return Err(api("cuModuleGetFunction", e, "")),
        };
        self.func = Some(func);
        let fattr = |a| {
            // SAFETY: `func` is a valid function of the loaded module.
            unsafe { result::function::get_function_attribute(func, a) }.map_err(|e| api("cuFuncGetAttribute", e, ""))
        };
        use sys::CUfunction_attribute::*;
        let marker = CString::new(SHARED_STACKS_SYMBOL).expect("no NUL in the marker name");
        // SAFETY: `module` is loaded; a missing global is an error result.
        let shared_stacks = unsafe { result::module::get_global(module, marker) }.is_ok();
        Ok(KernelInfo {
            shared_stacks,
            lanes: 32,
            max_block_threads: fattr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
            registers: Some(fattr(CU_FUNC_ATTRIBUTE_NUM_REGS)? as u32),
            local_bytes: Some(fattr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as u64),
            // Every lane runs frames (lane-parallel work: rt-nvptx's start.rs).
            stack_lanes: rt_abi::protocol::NVIDIA_FRAME_LANES,
        })
    }

    fn set_call_stack(&mut self, bytes: u64, option: &str) -> Result<(), BackendError> {
        let call = "cuCtxSetLimit(CU_LIMIT_STACK_SIZE)";
        result::ctx::set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, bytes as usize).map_err(|e| match e.0 {
            sys::CUresult::CUDA_ERROR_INVALID_VALUE | sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                let oom = e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY;
                stack_refused(bytes, option, call, &probe::describe(e).0, oom)
            }
            _ => api(call, e, &format!("lower {option}")),
        })?;
        self.call_stack = bytes;
        Ok(())
    }

    fn occupancy(&mut self, block_threads: u32) -> Result<u32, BackendError> {
        let func = self.func.expect("load before occupancy");
        // SAFETY: `func` is a valid function of the loaded module.
        let n = unsafe { result::occupancy::max_active_block_per_multiprocessor(func, block_threads as i32, 0) }
            .map_err(|e| api("cuOccupancyMaxActiveBlocksPerMultiprocessor", e, ""))?;
        Ok(n.max(0) as u32)
    }

    fn free_memory(&mut self) -> Result<u64, BackendError> {
        result::mem_get_info().map(|(free, _)| free as u64).map_err(|e| api("cuMemGetInfo", e, ""))
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, BackendError> {
        // SAFETY: plain allocation; freed in Drop.
        let p = unsafe { result::malloc_sync(bytes.max(1)) }
            .map_err(|e| api("cuMemAlloc", e, "lower --heap-size, --stack-size or --threads"))?;
        self.device_allocs.push(p);
        Ok(p)
    }

    fn alloc_mapped(&mut self, bytes: usize) -> Result<MappedBuf, BackendError> {
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: plain pinned allocation; freed in Drop.
        let host = unsafe { result::malloc_host(bytes.max(1), flags) }.map_err(|e| api("cuMemHostAlloc", e, ""))?;
        self.host_allocs.push(host);
        let mut dptr = 0;
        // SAFETY: `host` is a live mapped allocation.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dptr, host, 0) }
            .result()
            .map_err(|e| api("cuMemHostGetDevicePointer", e, ""))?;
        Ok(MappedBuf { host: host.cast(), device: dptr, len: bytes })
    }

    fn upload(&mut self, dst: u64, src: &[u8]) -> Result<(), BackendError> {
        // SAFETY: `dst` is one of our allocations with room for `src` (the
        // caller sized it); the copy is synchronous.
        unsafe { result::memcpy_htod_sync(dst, src) }.map_err(|e| api("cuMemcpyHtoD", e, ""))
    }

    fn zero(&mut self, dst: u64, bytes: usize) -> Result<(), BackendError> {
        // SAFETY: `dst` is one of our allocations of at least `bytes`.
        unsafe { result::memset_d8_sync(dst, 0, bytes) }.map_err(|e| api("cuMemsetD8", e, ""))
    }

    fn launch(&mut self, grid: u32, block_threads: u32, param: u64) -> Result<(), BackendError> {
        let func = self.func.expect("load before launch");
        // The uploads and memsets ran on the legacy stream, which our
        // non-blocking stream does not wait for: finish them first.
        result::ctx::synchronize().map_err(|e| api("cuCtxSynchronize", e, ""))?;
        let mut arg = param;
        let mut params = [(&mut arg as *mut u64).cast::<c_void>()];
        // SAFETY: `func` takes one 8-byte parameter (the LaunchBlock address),
        // passed by pointer as cuLaunchKernel expects; `arg` lives across the
        // call (the driver copies parameters at launch).
        unsafe { result::launch_kernel(func, (grid, 1, 1), (block_threads, 1, 1), 0, self.stream, &mut params) }
            .map_err(|e| api("cuLaunchKernel", e, "the launch was sized by the occupancy API; please report this"))?;
        self.launched = true;
        Ok(())
    }

    fn poll(&mut self) -> Result<bool, BackendError> {
        // SAFETY: `stream` is live until Drop.
        match unsafe { sys::cuStreamQuery(self.stream) } {
            sys::CUresult::CUDA_SUCCESS => {
                self.finished = true;
                Ok(true)
            }
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            code => {
                self.finished = true; // a faulted context runs nothing more
                let (name, desc) = probe::describe(result::DriverError(code));
                Err(BackendError::Fault { name, desc, hint: fault_hint(code, self.call_stack) })
            }
        }
    }

    fn read_back(&mut self, src: u64, dst: &MappedBuf) -> Result<(), BackendError> {
        // SAFETY: `dst` is our pinned allocation of `len` bytes and `src` a
        // device allocation at least as large; the copy runs on the side
        // stream, not behind the running kernel.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.host.cast(), src, dst.len, self.side) }
            .result()
            .map_err(|e| api("cuMemcpyDtoHAsync", e, ""))?;
        // Poll with a deadline rather than synchronise: a report must not hang.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            // SAFETY: `side` is live until Drop.
            match unsafe { sys::cuStreamQuery(self.side) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                code => return Err(api("cuMemcpyDtoHAsync (thread table)", result::DriverError(code), "")),
            }
        }
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        if self.launched && !self.finished {
            // Freeing memory a running kernel uses would wait for it forever;
            // the process is about to exit and the driver reclaims it all.
            return;
        }
        // SAFETY: every handle below was created by this backend, is freed
        // once, and no kernel uses them any more. Errors are ignored: this
        // is teardown.
        unsafe {
            for p in self.device_allocs.drain(..) {
                let _ = result::free_sync(p);
            }
            for p in self.host_allocs.drain(..) {
                let _ = result::free_host(p);
            }
            if let Some(m) = self.module.take() {
                let _ = result::module::unload(m);
            }
            let _ = result::stream::destroy(self.stream);
            let _ = result::stream::destroy(self.side);
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn ptx_too_new_says_both_versions() {
        let code =
            CodeObject::from_bytes(Path::new("p.ptx"), crate::testutil::ptx("9.1", "sm_90").into_bytes()).unwrap();
        let m = ptx_too_new(&code, (9, 1), 13000).to_string();
        assert!(m.contains("the PTX needs a newer driver: PTX ISA 9.1"), "{m}");
        assert!(m.contains("CUDA 13.0") && m.contains("up to 9.0"), "{m}");
        assert!(m.contains("GPU_NVPTX_PTX_ISA=90 gpurun build"), "{m}");
        assert_eq!(ptx_too_new(&code, (9, 1), 13000).exit_code(), crate::exit::CODE_OBJECT);
    }

    #[test]
    fn stack_overflow_hint_names_the_option() {
        let h = fault_hint(sys::CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR, 16384);
        assert!(h.contains("16384") && h.contains("--call-stack-size"), "{h}");
        let h = fault_hint(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, 32768);
        assert!(h.contains("memory") && h.contains("--call-stack-size above 32768"), "{h}");
    }
}
