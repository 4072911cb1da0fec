//! The AMD backend: `libamdhip64` loaded at run time, in three layers as
//! cudarc does the CUDA driver API: [`sys`] is the raw table (each entry
//! point declared once, its C signature checked against the real headers by
//! [`abi_check`]); [`result`] has one checked function per HIP call, and is
//! where the FFI `unsafe` lives; this file is the safe layer, the
//! [`HipBackend`] behind the `Backend` trait, which calls only `result` and
//! turns its [`HipError`]s into the launcher's [`BackendError`]s.
//!
//! The `unsafe` left here is where no safe wrapper can exist, each saying
//! why: trusting the loaded library ([`api`]), `access(2)` on `/dev/kfd`
//! ([`Kfd::probe`]; std has no such check), handing HIP a code object it
//! reads without a length (`load`), the `Backend` trait's raw addresses
//! (`upload`, `zero`, `read_back`), a kernel launch, and unloading the
//! module whose function the backend holds (`Drop`).

#![allow(non_upper_case_globals)] // HIP's own names for its constants

pub mod abi_check;
mod arch;
pub mod result;
pub mod sys;

use std::ffi::{CString, c_int, c_void};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gpu_toolchain::Vendor;
use rt_abi::symbols::{KERNEL_ENTRY, SHARED_STACKS_SYMBOL};

use crate::backend::{Backend, BackendError, DeviceInfo, KernelInfo, MappedBuf, paren, stack_refused};
use crate::codeobj::amdgpu::{TargetId, check_compatible};
use crate::codeobj::{CodeObject, Kind};
use crate::{abort_guard, libpath};
use result::{DeviceAlloc, Function, HipError, HostAlloc, Module, Stream};
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
///
/// Without a usable GPU `hipInit` fails (Debian's HIP 5.2 without
/// `/dev/kfd`: `hipErrorInvalidDevice`) and this is
/// [`BackendError::NoDevice`], exit code 3. A runtime that aborts the process
/// there instead gets the same message and code from the SIGABRT guard
/// ([`crate::abort_guard`]), though `--json` then writes no status.
pub fn api() -> Result<&'static HipApi, BackendError> {
    static API: OnceLock<Result<HipApi, BackendError>> = OnceLock::new();
    let r = API.get_or_init(|| {
        let (lib, path) = libpath::load_first(&candidates())
            .map_err(|tried| BackendError::NoLibrary { vendor: Vendor::Amd, tried })?;
        // A bare name found by the loader, with the file it resolved to.
        let path = libpath::with_mapped_file(&path);
        let _ = LOADED.set(path.clone());
        // SAFETY: `lib` is a HIP runtime; the table's signatures are checked
        // against the real headers (hip-abi-check). No safe wrapper can say
        // more: whether a library is that runtime cannot be checked at run
        // time, so the launcher trusts the one it found or was pointed at
        // (as `libpath::load_first` trusts its initialisers).
        let api = unsafe { HipApi::load(lib, path.clone()) }.map_err(|symbol| BackendError::MissingSymbol {
            vendor: Vendor::Amd,
            path: path.clone(),
            symbol: symbol.into(),
        })?;
        let kfd = Kfd::probe();
        let aborted = format!("gpurun: {}\n", init_aborted(&path, kfd));
        abort_guard::exit_on_abort(aborted, crate::exit::NO_DEVICE, || result::init(&api, 0))
            .map_err(|e| init_failed(&path, &e, kfd))?;
        Ok(api)
    });
    r.as_ref().map_err(Clone::clone)
}

/// What `/dev/kfd`, the device file of AMD's compute driver (KFD) that the
/// HIP runtime opens first, says about a failed initialisation. Checked
/// without opening it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kfd {
    /// No `/dev/kfd`: no amdgpu kernel driver, or a container without the device.
    Missing,
    /// It exists, but this user may not open it for reading and writing.
    NoAccess,
    /// It exists and may be opened.
    Usable,
}

impl Kfd {
    pub const PATH: &'static str = "/dev/kfd";

    pub fn probe() -> Kfd {
        if std::fs::symlink_metadata(Kfd::PATH).is_err() {
            return Kfd::Missing;
        }
        let path = CString::new(Kfd::PATH).expect("no NUL in the path");
        // SAFETY: `access` reads the NUL-terminated path, borrowed for the call.
        if unsafe { libc::access(path.as_ptr(), libc::R_OK | libc::W_OK) } == 0 { Kfd::Usable } else { Kfd::NoAccess }
    }

    /// What to check next.
    pub fn hint(self) -> &'static str {
        match self {
            Kfd::Missing => {
                "/dev/kfd does not exist: no amdgpu kernel driver is loaded here (in a container, pass the GPU \
                 in: --device /dev/kfd --device /dev/dri)"
            }
            Kfd::NoAccess => {
                "/dev/kfd exists but you may not open it read-write: add the user to its group (render or video)"
            }
            Kfd::Usable => {
                "/dev/kfd is there and open to you: check that the amdgpu driver supports this GPU (dmesg) and \
                 that you may open /dev/dri/renderD* (groups video, render)"
            }
        }
    }
}

// ------------------------------------------- HipError → BackendError

/// A failed call, named by its HIP function and without a hint, is
/// [`BackendError::Api`] (exit code: device fault). Calls that mean
/// something else map their errors themselves, below.
impl From<HipError> for BackendError {
    fn from(e: HipError) -> BackendError {
        api_error(e, "")
    }
}

/// [`BackendError::Api`] for `e`, named by its HIP function, with `hint`.
fn api_error(e: HipError, hint: &str) -> BackendError {
    api_as(e.call, e, hint)
}

/// [`BackendError::Api`] for `e`, under the name `call` the launcher gives
/// the step (`hipHostMalloc(coherent, mapped)`).
fn api_as(call: &'static str, e: HipError, hint: &str) -> BackendError {
    BackendError::Api { call, name: e.name, desc: e.desc, hint: hint.into() }
}

/// `hipInit` failed in the runtime at `path`: no usable AMD GPU; `kfd` says
/// where to look.
fn init_failed(path: &str, e: &HipError, kfd: Kfd) -> BackendError {
    let name = &e.name;
    let detail = match e.code.0 {
        hipErrorNoDevice | hipErrorInvalidDevice => {
            format!("the HIP runtime loaded ({path}) but found no AMD GPU (hipInit: {name}): {}", kfd.hint())
        }
        hipErrorInsufficientDriver => {
            format!("the HIP runtime ({path}) needs a newer amdgpu kernel driver (hipInit: {name})")
        }
        _ => format!("hipInit failed in {path}: {name}{}; {}", paren(&e.desc), kfd.hint()),
    };
    BackendError::NoDevice { vendor: Vendor::Amd, detail }
}

/// The message when the runtime at `path` aborted the process in `hipInit`
/// (written by the SIGABRT guard).
fn init_aborted(path: &str, kfd: Kfd) -> BackendError {
    let detail = format!("the HIP runtime loaded ({path}) but aborted the process in hipInit: {}", kfd.hint());
    BackendError::NoDevice { vendor: Vendor::Amd, detail }
}

/// `hipGetDeviceCount`'s answer: no device (0, or `hipErrorNoDevice`) is
/// [`BackendError::NoDevice`].
fn count_or_no_device(path: &str, count: Result<u32, HipError>) -> Result<u32, BackendError> {
    match count {
        Ok(0) => Err(no_gpu(path)),
        Err(e) if e.is(hipErrorNoDevice) => Err(no_gpu(path)),
        r => r.map_err(BackendError::from),
    }
}

fn no_gpu(path: &str) -> BackendError {
    BackendError::NoDevice {
        vendor: Vendor::Amd,
        detail: format!("the HIP runtime loaded and initialised ({path}) but sees no AMD GPU (hipGetDeviceCount)"),
    }
}

/// `hipModuleLoadData` refused the code object.
fn load_refused(code: &CodeObject, info: &DeviceInfo, e: &HipError) -> BackendError {
    BackendError::CodeObject(format!(
        "{}: the HIP runtime refused {} on {} ({}): {}{}",
        code.path.display(),
        code.describe(),
        info.name,
        info.arch,
        e.name,
        paren(&e.desc)
    ))
}

/// `hipModuleGetFunction` failed: a missing kernel is the code object's
/// fault.
fn entry_error(code: &CodeObject, e: HipError) -> BackendError {
    if e.is(hipErrorNotFound) || e.is(hipErrorInvalidKernelFile) { no_entry(code) } else { e.into() }
}

const SET_STACK: &str = "hipDeviceSetLimit(hipLimitStackSize)";

/// `hipDeviceSetLimit(hipLimitStackSize, bytes)` failed: a size the device
/// refuses is a usage error.
fn stack_error(e: HipError, bytes: u64, option: &str) -> BackendError {
    if e.is(hipErrorInvalidValue) || e.is(hipErrorOutOfMemory) {
        stack_refused(bytes, option, SET_STACK, &e.name, e.is(hipErrorOutOfMemory))
    } else {
        api_as(SET_STACK, e, &format!("lower {option}"))
    }
}

/// The kernel's stream reported `e`: the device faulted.
fn fault(e: HipError, call_stack: u64) -> BackendError {
    let hint = match e.code.0 {
        hipErrorIllegalAddress => format!(
            "A thread accessed memory it may not (a runtime bug, an unsafe block, or a stack overflow: \
             try a --call-stack-size above {call_stack})"
        ),
        hipErrorLaunchFailure | hipErrorAssert => "A thread trapped (abort, an unreachable path) or faulted".into(),
        _ => String::new(),
    };
    BackendError::Fault { name: e.name, desc: e.desc, hint }
}

const READ_BACK: &str = "hipMemcpyDtoHAsync (thread table)";

// ------------------------------------------------------------ devices

fn device_count(api: &HipApi) -> Result<u32, BackendError> {
    count_or_no_device(&api.path, result::device_count(api))
}

fn device_info(api: &HipApi, index: u32) -> Result<DeviceInfo, BackendError> {
    let d = index as c_int;
    let dev = result::device_get(api, d)?;
    let name = result::device_get_name(api, dev)?;
    let total = result::device_total_mem(api, dev)?;
    let cus = result::device_get_attribute(api, hipDeviceAttributeMultiprocessorCount, d)?.max(0) as u32;
    let warp = result::device_get_attribute(api, hipDeviceAttributeWarpSize, d)?.max(1) as u32;
    let per_cu = result::device_get_attribute(api, hipDeviceAttributeMaxThreadsPerMultiProcessor, d)?.max(0) as u32;
    // Informational: 0 if the runtime does not say.
    let version = result::runtime_get_version(api).unwrap_or(0);
    Ok(DeviceInfo {
        index,
        vendor: Vendor::Amd,
        name,
        arch: arch::target_id(api, d).unwrap_or_else(|| "gfx?".into()),
        compute_units: cus,
        warp_size: warp,
        max_threads_per_cu: per_cu,
        max_resident_warps: per_cu / warp * cus,
        total_memory: total as u64,
        driver_version: version,
    })
}

/// The AMD devices.
pub fn devices() -> Result<Vec<DeviceInfo>, BackendError> {
    let api = api()?;
    (0..device_count(api)?).map(|i| device_info(api, i)).collect()
}

/// One AMD device, current on the opening thread. It owns what it creates
/// and frees it in `Drop`, unless a launched kernel has not finished.
pub struct HipBackend {
    api: &'static HipApi,
    info: DeviceInfo,
    module: Option<Module>,
    /// The kernel entry, a function of `module`.
    func: Option<Function>,
    /// The kernel's stream and a second one for copies while it runs; both
    /// non-blocking. `Some` until `Drop` destroys them.
    stream: Option<Stream>,
    side: Option<Stream>,
    device_allocs: Vec<DeviceAlloc>,
    host_allocs: Vec<HostAlloc>,
    launched: bool,
    finished: bool,
    /// The driver's per-lane call stack, for fault hints.
    call_stack: u64,
}

impl HipBackend {
    pub fn open(index: u32) -> Result<HipBackend, BackendError> {
        let api = api()?;
        let count = device_count(api)?;
        if index >= count {
            return Err(BackendError::NoSuchDevice { vendor: Vendor::Amd, index, count });
        }
        let info = device_info(api, index)?;
        result::set_device(api, index as c_int)?;
        let stream = result::stream_create_with_flags(api, hipStreamNonBlocking)?;
        let side = result::stream_create_with_flags(api, hipStreamNonBlocking)?;
        Ok(HipBackend {
            api,
            info,
            module: None,
            func: None,
            stream: Some(stream),
            side: Some(side),
            device_allocs: Vec::new(),
            host_allocs: Vec::new(),
            launched: false,
            finished: false,
            call_stack: 0,
        })
    }

    fn stream(&self) -> &Stream {
        self.stream.as_ref().expect("the streams live until drop")
    }

    fn side(&self) -> &Stream {
        self.side.as_ref().expect("the streams live until drop")
    }
}

/// Whether the loaded `module` defines the global `name`.
fn defines_global(api: &HipApi, module: &Module, name: &str) -> bool {
    let name = CString::new(name).expect("no NUL in a symbol name");
    // Any failure counts as "not defined", as a missing global does.
    matches!(result::module_get_global(api, module, &name), Ok(Some(_)))
}

fn func_attr(api: &HipApi, f: &Function, a: c_int) -> Option<i32> {
    result::func_get_attribute(api, f, a).ok()
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
        // SAFETY: `code.bytes` is the whole file, which `codeobj` detected as
        // an AMDGPU ELF (e_machine 224, kernel descriptor read); it is
        // borrowed for the call. No safe wrapper can exist: HIP takes no
        // length and reads as far as the file's own headers say, which only
        // a full ELF validation could vouch for.
        let module = unsafe { result::module_load_data(api, &code.bytes) }
            .map_err(|e| load_refused(code, &self.info, &e))?;
        let module = &*self.module.insert(module);
        let name = CString::new(KERNEL_ENTRY).expect("no NUL in the entry name");
        let func = result::module_get_function(api, module, &name).map_err(|e| entry_error(code, e))?;
        let func = &*self.func.insert(func);
        Ok(KernelInfo {
            lanes: amd.lanes(),
            max_block_threads: func_attr(api, func, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).unwrap_or(0).max(0)
                as u32,
            registers: func_attr(api, func, HIP_FUNC_ATTRIBUTE_NUM_REGS).map(|r| r as u32),
            local_bytes: func_attr(api, func, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .map(|l| l as u64)
                .or(amd.private_segment_size.map(u64::from)),
            shared_stacks: defines_global(api, module, SHARED_STACKS_SYMBOL),
            // Every lane of a wave runs frames (gpu_lanes work: rt-amdgpu's hal.rs).
            stack_lanes: rt_abi::protocol::amd_frame_lanes(amd.lanes()),
        })
    }

    fn set_call_stack(&mut self, bytes: u64, option: &str) -> Result<(), BackendError> {
        let api = self.api;
        match result::device_set_limit(api, hipLimitStackSize, bytes as usize) {
            Some(r) => r.map_err(|e| stack_error(e, bytes, option))?,
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
        let func = self.func.as_ref().expect("load before occupancy");
        let block = block_threads as c_int;
        let n = result::module_occupancy_max_active_blocks_per_multiprocessor(self.api, func, block, 0)?;
        Ok(n.max(0) as u32)
    }

    fn free_memory(&mut self) -> Result<u64, BackendError> {
        let (free, _total) = result::mem_get_info(self.api)?;
        Ok(free as u64)
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, BackendError> {
        let mem = result::malloc(self.api, bytes.max(1))
            .map_err(|e| api_error(e, "lower --heap-size, --stack-size or --threads"))?;
        let addr = mem.as_ptr() as u64;
        self.device_allocs.push(mem);
        Ok(addr)
    }

    fn alloc_mapped(&mut self, bytes: usize) -> Result<MappedBuf, BackendError> {
        let flags = hipHostMallocMapped | hipHostMallocCoherent | hipHostMallocPortable;
        let host = result::host_malloc(self.api, bytes.max(1), flags)
            .map_err(|e| api_as("hipHostMalloc(coherent, mapped)", e, ""))?;
        // Owned from here on, so freed in Drop if the next call fails.
        self.host_allocs.push(host);
        let host = self.host_allocs.last().expect("just pushed");
        let dev = result::host_get_device_pointer(self.api, host, 0)?;
        Ok(MappedBuf { host: host.as_ptr().cast(), device: dev as u64, len: bytes })
    }

    fn upload(&mut self, dst: u64, src: &[u8]) -> Result<(), BackendError> {
        // SAFETY: by the `Backend` contract `dst` is device memory from this
        // backend's `alloc` with room for `src`, used by nothing yet (run.rs
        // uploads the launch block into the allocation it made for it,
        // before the launch). No safe wrapper can check it: the trait passes
        // device memory as bare `u64` addresses, not as the allocations.
        unsafe { result::memcpy_htod(self.api, hipDeviceptr_t(dst as *mut c_void), src) }?;
        Ok(())
    }

    fn zero(&mut self, dst: u64, bytes: usize) -> Result<(), BackendError> {
        // SAFETY: by the `Backend` contract `dst` is device memory from this
        // backend's `alloc` of at least `bytes` (run.rs zeroes the thread
        // table it just allocated). Not checkable, as in `upload`.
        unsafe { result::memset(self.api, dst as *mut c_void, 0, bytes) }?;
        Ok(())
    }

    fn launch(&mut self, grid: u32, block_threads: u32, param: u64) -> Result<(), BackendError> {
        let func = self.func.as_ref().expect("load before launch");
        // Our non-blocking stream does not wait for the null stream's memsets.
        result::device_synchronize(self.api)?;
        let mut arg = param;
        let mut params = [(&mut arg as *mut u64).cast::<c_void>()];
        let (grid, block, shared) = ([grid, 1, 1], [block_threads, 1, 1], 0);
        // The kernel's one explicit argument; HIP reads one value per explicit
        // argument and fills the hidden ones after it itself, in a kernarg
        // segment of the metadata's size (8 bytes, or 264 on gfx90a where it
        // lists hidden ones, code object v5; launcher/README.md, "AMD: the
        // kernel's arguments").
        // SAFETY: the kernel (`KERNEL_ENTRY`) takes one 8-byte parameter, the
        // launch block's device address, passed by pointer; `arg` outlives
        // the call (HIP copies parameters at launch). What the kernel reaches
        // from the launch block is this backend's memory, which `Drop` does
        // not free while a launched kernel has not finished. No safe wrapper
        // can exist: what a kernel does with its parameter is beyond checking.
        unsafe { result::module_launch_kernel(self.api, func, grid, block, shared, self.stream(), &mut params) }
            .map_err(|e| api_error(e, "the launch was sized by the occupancy API; please report this"))?;
        self.launched = true;
        Ok(())
    }

    fn poll(&mut self) -> Result<bool, BackendError> {
        match result::stream_query(self.api, self.stream()) {
            Ok(true) => {
                self.finished = true;
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                self.finished = true;
                Err(fault(e, self.call_stack))
            }
        }
    }

    fn read_back(&mut self, src: u64, dst: &MappedBuf) -> Result<(), BackendError> {
        let (api, side, src) = (self.api, self.side(), hipDeviceptr_t(src as *mut c_void));
        // SAFETY: by the `Backend` contract `dst` is pinned host memory from
        // this backend's `alloc_mapped` (freed only in `Drop`) and `src`
        // device memory from `alloc` of at least `dst.len` bytes (run.rs:
        // the thread table and its staging copy, `table_bytes` both); the
        // caller reads `dst` only after an `Ok`, which comes once the copy has
        // completed. If the wait below times out, `dst` stays allocated:
        // `Drop` frees nothing while a launched kernel has not been seen to
        // finish (run.rs reads back only after a timeout), and HIP's free
        // waits for the device anyway. No safe wrapper can check it: the
        // trait passes memory as a raw `MappedBuf` and a bare `u64` address.
        unsafe { result::memcpy_dtoh_async(api, dst.host.cast(), src, dst.len, side) }?;
        // Poll with a deadline: if the copy needs compute units the running
        // kernel holds (a blit kernel), it may never run.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match result::stream_query(api, side) {
                Ok(true) => return Ok(()),
                Ok(false) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                Ok(false) => {
                    let e = HipError::new(api, "hipStreamQuery", hipError_t(hipErrorNotReady));
                    return Err(api_as(READ_BACK, e, "the copy did not complete"));
                }
                Err(e) => return Err(api_as(READ_BACK, e, "the copy did not complete")),
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
        // Every object was made by this backend and is freed once (the
        // result layer's calls consume it); no kernel uses it any more.
        // Errors are ignored (teardown).
        for mem in self.device_allocs.drain(..) {
            let _ = result::free(api, mem);
        }
        for mem in self.host_allocs.drain(..) {
            let _ = result::host_free(api, mem);
        }
        if let Some(module) = self.module.take() {
            // The kernel entry is the module's only function we got.
            self.func = None;
            // SAFETY: no function of the module outlives it: `func`, the only
            // one, is gone just above. No safe wrapper can say so: a
            // `Function` does not borrow its `Module` (the backend holds both,
            // and a borrow would make it refer to itself).
            let _ = unsafe { result::module_unload(api, module) };
        }
        if let Some(s) = self.stream.take() {
            let _ = result::stream_destroy(api, s);
        }
        if let Some(s) = self.side.take() {
            let _ = result::stream_destroy(api, s);
        }
    }
}

#[cfg(test)]
mod tests;
