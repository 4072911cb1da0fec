//! The HIP runtime calls `gpurun` makes (`launcher/src/hip/sys.rs`),
//! answered by the `amd-emu` ISA emulator instead of a GPU, so that
//! gpurun's own HIP backend, unchanged, launches our AMD code objects with
//! no AMD hardware: `gpurun run --emulate gfx1100 PROGRAM` loads this
//! library where it would load `libamdhip64`.
//!
//! The device is chosen by `$GPURUN_EMULATE` (`gfx1100`, `gfx942`,
//! `gfx90a`). Device memory is host memory ([`amd_emu::memory`]), so a
//! host-mapped allocation and its device pointer are the same address.
//! The kernarg segment is built as ROCm's `clr` builds it (see [`kernargs`]).
//! A fault is printed (`amd-emu: ...`) and returned from `hipStreamQuery` as
//! HIP would return it: an access outside device memory is
//! `hipErrorIllegalAddress`, a trap or an unknown instruction
//! `hipErrorLaunchFailure`.
//!
//! `$AMD_EMU_STATS=FILE` appends one JSON line per finished launch: waves,
//! instructions, seconds and instructions per second.

#![allow(non_snake_case)] // HIP's names

pub mod kernargs;

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use amd_emu::dispatch::{self, Launch, Running};
use amd_emu::kernel::{Kernel, Module};
use amd_emu::wave::FaultKind;
use amd_emu::{Arch, memory};

pub type HipError = c_int;
pub const SUCCESS: HipError = 0;
pub const INVALID_VALUE: HipError = 1;
pub const OUT_OF_MEMORY: HipError = 2;
pub const NO_DEVICE: HipError = 100;
pub const INVALID_DEVICE: HipError = 101;
pub const INVALID_IMAGE: HipError = 200;
pub const INVALID_HANDLE: HipError = 400;
pub const NOT_FOUND: HipError = 500;
pub const NOT_READY: HipError = 600;
pub const ILLEGAL_ADDRESS: HipError = 700;
pub const LAUNCH_FAILURE: HipError = 719;
pub const NOT_SUPPORTED: HipError = 801;

/// The emulated device's compute units, and waves resident on each: few,
/// because each wave is a host thread, but enough that async-tasks' 4 pool
/// threads and up to 32 timer threads find free waves while the emulator
/// runs slowly (with 32 it failed a spawn with WouldBlock once in CI).
pub const COMPUTE_UNITS: c_int = 8;
pub const WAVES_PER_CU: c_int = 8;
/// What `hipMemGetInfo` reports as the device's memory.
pub const TOTAL_MEMORY: usize = 8 << 30;

/// The environment variable naming the emulated arch.
pub const ARCH_VAR: &str = "GPURUN_EMULATE";

struct Alloc {
    /// Bytes of the mapping.
    len: usize,
}

struct LoadedModule {
    module: Arc<Module>,
    /// Per kernel name: its descriptor and metadata.
    functions: HashMap<String, Box<Function>>,
}

pub struct Function {
    module: Arc<Module>,
    kernel: Kernel,
    args: Vec<gpu_toolchain::codecheck::KernelArg>,
    kernarg_size: usize,
    max_flat_workgroup_size: u32,
}

#[derive(Default)]
pub struct Stream {
    running: Option<Running>,
    /// The error of a finished launch, reported until read once.
    error: Option<HipError>,
}

struct State {
    arch: Option<Arch>,
    allocs: HashMap<usize, Alloc>,
    allocated: usize,
    stack_limit: usize,
    modules: HashMap<usize, LoadedModule>,
}

fn state() -> MutexGuard<'static, State> {
    static S: OnceLock<Mutex<State>> = OnceLock::new();
    S.get_or_init(|| {
        Mutex::new(State { arch: None, allocs: HashMap::new(), allocated: 0, stack_limit: 1024, modules: HashMap::new() })
    })
    .lock()
    .unwrap_or_else(|e| e.into_inner())
}

fn arch() -> Result<Arch, HipError> {
    state().arch.ok_or(NO_DEVICE)
}

fn check(r: Result<(), HipError>) -> HipError {
    match r {
        Ok(()) => SUCCESS,
        Err(e) => e,
    }
}

/// Writes `v` through `p`, if not null.
fn put<T>(p: *mut T, v: T) -> Result<(), HipError> {
    if p.is_null() {
        return Err(INVALID_VALUE);
    }
    // SAFETY: a HIP out-parameter: the caller passes a valid pointer.
    unsafe { p.write(v) };
    Ok(())
}

// ------------------------------------------------------------------ device

#[unsafe(no_mangle)]
pub extern "C" fn hipInit(_flags: c_uint) -> HipError {
    let name = std::env::var(ARCH_VAR).unwrap_or_default();
    match Arch::parse(&name) {
        Some(a) => {
            state().arch = Some(a);
            SUCCESS
        }
        None => {
            eprintln!(
                "amd-emu: ${ARCH_VAR} is {name:?}; it must name an emulated arch: {}",
                Arch::ALL.map(Arch::name).join(", ")
            );
            NO_DEVICE
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDriverGetVersion(version: *mut c_int) -> HipError {
    check(put(version, 0))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> HipError {
    check(put(version, 0))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipGetDeviceCount(count: *mut c_int) -> HipError {
    check(arch().and_then(|_| put(count, 1)))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceGet(device: *mut c_int, ordinal: c_int) -> HipError {
    check(arch().and_then(|_| if ordinal == 0 { put(device, 0) } else { Err(INVALID_DEVICE) }))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipSetDevice(device: c_int) -> HipError {
    check(arch().and_then(|_| if device == 0 { Ok(()) } else { Err(INVALID_DEVICE) }))
}

/// The device's name as `hipDeviceGetName` gives it.
pub fn device_name(a: Arch) -> String {
    format!("AMD {} (emulated by amd-emu)", a.name())
}

fn write_cstr(dst: *mut c_char, cap: usize, s: &str) -> Result<(), HipError> {
    if dst.is_null() || cap == 0 {
        return Err(INVALID_VALUE);
    }
    let n = s.len().min(cap - 1);
    // SAFETY: `dst` has `cap` bytes (the caller's buffer); we write n + 1 ≤ cap.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst.cast::<u8>(), n);
        *dst.add(n) = 0;
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceGetName(name: *mut c_char, len: c_int, _device: c_int) -> HipError {
    check(arch().and_then(|a| write_cstr(name, len.max(0) as usize, &device_name(a))))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceTotalMem(bytes: *mut usize, _device: c_int) -> HipError {
    check(arch().and_then(|_| put(bytes, TOTAL_MEMORY)))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> HipError {
    let used = state().allocated;
    check(put(free, TOTAL_MEMORY.saturating_sub(used)).and_then(|()| put(total, TOTAL_MEMORY)))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceGetAttribute(value: *mut c_int, attr: c_int, _device: c_int) -> HipError {
    let r = arch().and_then(|a| {
        let wave = a.wave_size() as c_int;
        let v = match attr {
            56 => 1024,                // hipDeviceAttributeMaxThreadsPerBlock
            57 => WAVES_PER_CU * wave, // hipDeviceAttributeMaxThreadsPerMultiProcessor
            63 => COMPUTE_UNITS,       // hipDeviceAttributeMultiprocessorCount
            87 => wave,                // hipDeviceAttributeWarpSize
            _ => return Err(INVALID_VALUE),
        };
        put(value, v)
    });
    check(r)
}

/// Offsets of the name and `gcnArchName` in ROCm 5's `hipDeviceProp_t`
/// and ROCm 6's `hipDeviceProp_tR0600` (the launcher's `hip/sys.rs` has
/// the same, checked against the headers).
const ARCH_NAME_R0000: usize = 396;
const ARCH_NAME_R0600: usize = 1160;

fn properties(props: *mut u8, arch_offset: usize, size: usize) -> HipError {
    let r = arch().and_then(|a| {
        if props.is_null() {
            return Err(INVALID_VALUE);
        }
        // SAFETY: the caller's buffer holds the struct (`size` bytes).
        unsafe { std::ptr::write_bytes(props, 0, size) };
        write_cstr(props.cast(), 256, &device_name(a))?;
        let id = format!("{}:sramecc+:xnack-", a.name());
        let id = if a == Arch::Gfx1100 { a.name().to_string() } else { id };
        // SAFETY: as above; the field has 256 bytes.
        write_cstr(unsafe { props.add(arch_offset) }.cast(), 256, &id)
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipGetDeviceProperties(props: *mut u8, _device: c_int) -> HipError {
    properties(props, ARCH_NAME_R0000, 792)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipGetDevicePropertiesR0600(props: *mut u8, _device: c_int) -> HipError {
    properties(props, ARCH_NAME_R0600, 1472)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceSetLimit(limit: c_int, value: usize) -> HipError {
    // hipLimitStackSize: each lane's scratch.
    if limit != 0 {
        return NOT_SUPPORTED;
    }
    if value > 1 << 20 {
        return INVALID_VALUE;
    }
    state().stack_limit = value;
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn hipDeviceSynchronize() -> HipError {
    // Streams are waited for by their own queries; nothing is queued on the
    // null stream.
    SUCCESS
}

// ------------------------------------------------------------------ memory

/// Device memory: an anonymous private mapping (page-aligned and zero, as
/// `hipMalloc`'s memory is aligned; `MAP_NORESERVE`, so pages take host
/// memory only once the program touches them).
fn alloc(bytes: usize) -> Result<*mut c_void, HipError> {
    let len = bytes.max(1).checked_next_multiple_of(4096).ok_or(OUT_OF_MEMORY)?;
    let mut s = state();
    if s.allocated.saturating_add(len) > TOTAL_MEMORY {
        return Err(OUT_OF_MEMORY);
    }
    // SAFETY: a new anonymous mapping; nothing else refers to it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(OUT_OF_MEMORY);
    }
    memory::register(p as u64, bytes as u64);
    s.allocs.insert(p as usize, Alloc { len });
    s.allocated += len;
    Ok(p)
}

fn free(p: *mut c_void) -> Result<(), HipError> {
    if p.is_null() {
        return Ok(());
    }
    let mut s = state();
    let a = s.allocs.remove(&(p as usize)).ok_or(INVALID_VALUE)?;
    s.allocated -= a.len;
    memory::unregister(p as u64);
    // SAFETY: mapped by `alloc` with this length, unmapped once (removed above).
    unsafe { libc::munmap(p, a.len) };
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError {
    check(alloc(size).and_then(|p| put(ptr, p)))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipFree(ptr: *mut c_void) -> HipError {
    check(free(ptr))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, _flags: c_uint) -> HipError {
    check(alloc(size).and_then(|p| put(ptr, p)))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipHostFree(ptr: *mut c_void) -> HipError {
    check(free(ptr))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipHostGetDevicePointer(dev: *mut *mut c_void, host: *mut c_void, _flags: c_uint) -> HipError {
    check(put(dev, host))
}

/// Whether `[p, p + n)` is device memory.
fn is_device(p: *const c_void, n: usize) -> bool {
    memory::View::default().contains(p as u64, n as u64)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> HipError {
    if !is_device(dst, size) {
        return INVALID_VALUE;
    }
    // SAFETY: device memory (checked), which is host memory.
    unsafe { memory::write(dst.cast(), &vec![value as u8; size]) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn hipMemcpyHtoD(dst: *mut c_void, src: *mut c_void, size: usize) -> HipError {
    if !is_device(dst, size) || src.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: `src` has `size` bytes (the caller's); `dst` is device memory (checked).
    unsafe { memory::write(dst.cast(), std::slice::from_raw_parts(src.cast::<u8>(), size)) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn hipMemcpyDtoHAsync(dst: *mut c_void, src: *mut c_void, size: usize, _s: *mut c_void) -> HipError {
    if !is_device(src, size) || dst.is_null() {
        return INVALID_VALUE;
    }
    // Done at once: the memory is shared, and the copy engine's ordering is
    // not modelled. SAFETY: `dst` has `size` bytes (the caller's); `src` is
    // device memory (checked).
    unsafe { memory::read(src.cast(), std::slice::from_raw_parts_mut(dst.cast::<u8>(), size)) };
    SUCCESS
}

// ----------------------------------------------------------------- modules

/// The length of the ELF image at `p`, from its own headers (HIP takes
/// no length): the end of the section header table or of the last segment.
///
/// # Safety
/// `p` points to an ELF64 file.
unsafe fn elf_len(p: *const u8) -> Option<usize> {
    // SAFETY: the caller's contract: at least the 64-byte ELF header.
    let h = unsafe { std::slice::from_raw_parts(p, 64) };
    if &h[..4] != b"\x7fELF" || h[4] != 2 {
        return None;
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes")) as usize;
    let mut end = u64_at(h, 0x28) + u16_at(h, 0x3a) * u16_at(h, 0x3c);
    let (phoff, phentsize, phnum) = (u64_at(h, 0x20), u16_at(h, 0x36), u16_at(h, 0x38));
    for i in 0..phnum {
        // SAFETY: the program headers lie in the file (its own header says so).
        let ph = unsafe { std::slice::from_raw_parts(p.add(phoff + i * phentsize), 56) };
        end = end.max(u64_at(ph, 8) + u64_at(ph, 32));
    }
    Some(end)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> HipError {
    let r = arch().and_then(|a| {
        if image.is_null() {
            return Err(INVALID_VALUE);
        }
        // SAFETY: HIP's contract: `image` is a code object.
        let len = unsafe { elf_len(image.cast()) }.ok_or(INVALID_IMAGE)?;
        // SAFETY: as above; `len` bytes by its own headers.
        let bytes = unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) };
        let m = Module::load(bytes, a).map_err(|e| {
            eprintln!("amd-emu: cannot load the code object: {e}");
            INVALID_IMAGE
        })?;
        let m = Arc::new(m);
        let handle = Arc::as_ptr(&m) as usize;
        state().modules.insert(handle, LoadedModule { module: m, functions: HashMap::new() });
        put(module, handle as *mut c_void)
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleUnload(module: *mut c_void) -> HipError {
    check(state().modules.remove(&(module as usize)).map(drop).ok_or(INVALID_HANDLE))
}

fn cstr<'a>(p: *const c_char) -> Result<&'a str, HipError> {
    if p.is_null() {
        return Err(INVALID_VALUE);
    }
    // SAFETY: a NUL-terminated string from the caller.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| INVALID_VALUE)
}

/// The part of the metadata note (YAML, as `llvm-readobj --notes` prints
/// it) that describes kernel `name`: its item of `amdhsa.kernels`.
pub fn kernel_notes(notes: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = notes.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == "amdhsa.kernels:")?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut item_indent = None;
    for l in &lines[start + 1..] {
        if l.trim().is_empty() {
            continue;
        }
        let i = indent(l);
        if i == 0 {
            break;
        }
        if l.trim_start().starts_with("- ") && item_indent.is_none_or(|ii| i == ii) {
            item_indent = Some(i);
            items.push(Vec::new());
        }
        if let Some(item) = items.last_mut() {
            item.push(l);
        }
    }
    let named = |item: &&Vec<&str>| {
        item.iter().any(|l| l.trim().trim_start_matches("- ").strip_prefix(".name:").is_some_and(|v| v.trim() == name))
    };
    items.iter().find(named).map(|item| item.join("\n"))
}

/// `.key: value` of the metadata note.
fn meta_value(notes: &str, key: &str) -> Option<u64> {
    notes.lines().find_map(|l| l.trim().strip_prefix(key)?.trim().strip_prefix(':')?.trim().parse().ok())
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleGetFunction(function: *mut *mut c_void, module: *mut c_void, name: *const c_char) -> HipError {
    let r = cstr(name).and_then(|name| {
        let mut s = state();
        let m = s.modules.get_mut(&(module as usize)).ok_or(INVALID_HANDLE)?;
        if !m.functions.contains_key(name) {
            let kernel = m.module.kernel(name).ok_or(NOT_FOUND)?;
            let notes = &kernel_notes(&m.module.notes, name).unwrap_or_default();
            let f = Function {
                module: m.module.clone(),
                kernel,
                args: gpu_toolchain::codecheck::kernel_args(notes),
                kernarg_size: meta_value(notes, ".kernarg_segment_size").unwrap_or(0) as usize,
                max_flat_workgroup_size: meta_value(notes, ".max_flat_workgroup_size").unwrap_or(1024) as u32,
            };
            m.functions.insert(name.to_string(), Box::new(f));
        }
        let f: *const Function = &**m.functions.get(name).expect("inserted above");
        put(function, f as *mut c_void)
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleGetGlobal(dptr: *mut *mut c_void, bytes: *mut usize, module: *mut c_void, name: *const c_char) -> HipError {
    let r = cstr(name).and_then(|name| {
        let s = state();
        let m = s.modules.get(&(module as usize)).ok_or(INVALID_HANDLE)?;
        let (addr, size) = m.module.symbol(name).ok_or(NOT_FOUND)?;
        if !dptr.is_null() {
            put(dptr, (m.module.image.base() + addr) as *mut c_void)?;
        }
        if !bytes.is_null() {
            put(bytes, size as usize)?;
        }
        Ok(())
    });
    check(r)
}

/// # Safety
/// `f` is a function handle from [`hipModuleGetFunction`] whose module is loaded.
unsafe fn function<'a>(f: *mut c_void) -> Result<&'a Function, HipError> {
    if f.is_null() {
        return Err(INVALID_HANDLE);
    }
    // SAFETY: the caller's contract; the Box lives as long as its module.
    Ok(unsafe { &*(f as *const Function) })
}

#[unsafe(no_mangle)]
pub extern "C" fn hipFuncGetAttribute(value: *mut c_int, attr: c_int, f: *mut c_void) -> HipError {
    // SAFETY: HIP's contract: a function handle.
    let r = unsafe { function(f) }.and_then(|f| {
        let kd = f.kernel.descriptor;
        let v = match attr {
            0 => f.max_flat_workgroup_size as c_int,         // MAX_THREADS_PER_BLOCK
            3 => kd.private_segment_fixed_size as c_int,     // LOCAL_SIZE_BYTES
            4 => kd.vgprs(f.module.arch) as c_int,           // NUM_REGS
            _ => return Err(INVALID_VALUE),
        };
        put(value, v)
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    f: *mut c_void,
    block_size: c_int,
    _dynamic_shared: usize,
) -> HipError {
    // SAFETY: HIP's contract: a function handle.
    let r = unsafe { function(f) }.and_then(|f| {
        let wave = f.module.arch.wave_size() as c_int;
        let waves = (block_size.max(1) + wave - 1) / wave;
        put(blocks, (WAVES_PER_CU / waves).max(0))
    });
    check(r)
}

// ----------------------------------------------------------------- streams

#[unsafe(no_mangle)]
pub extern "C" fn hipStreamCreateWithFlags(stream: *mut *mut c_void, _flags: c_uint) -> HipError {
    let s = Box::into_raw(Box::new(Mutex::new(Stream::default())));
    check(put(stream, s.cast()))
}

/// # Safety
/// `s` is a stream from [`hipStreamCreateWithFlags`], not destroyed.
unsafe fn stream<'a>(s: *mut c_void) -> Result<&'a Mutex<Stream>, HipError> {
    if s.is_null() {
        return Err(INVALID_HANDLE);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { &*(s as *const Mutex<Stream>) })
}

static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// Finishes the stream's launch if its waves have all ended.
fn reap(st: &mut Stream, block: bool) {
    let Some(r) = st.running.take() else { return };
    if !block && !r.is_done() {
        st.running = Some(r);
        return;
    }
    match r.wait() {
        Ok(stats) => {
            if let Some(path) = std::env::var_os("AMD_EMU_STATS") {
                let line = format!(
                    "{{\"launch\":{},\"waves\":{},\"instructions\":{},\"seconds\":{:.3},\"instructions_per_second\":{:.0}}}\n",
                    LAUNCHES.fetch_add(1, Ordering::Relaxed),
                    stats.waves,
                    stats.instructions,
                    stats.seconds,
                    stats.instructions_per_second()
                );
                use std::io::Write;
                if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                    let _ = f.write_all(line.as_bytes());
                }
            }
        }
        Err(fault) => {
            eprintln!("amd-emu: {fault}");
            st.error = Some(match fault.kind {
                FaultKind::Memory => ILLEGAL_ADDRESS,
                _ => LAUNCH_FAILURE,
            });
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn hipStreamQuery(s: *mut c_void) -> HipError {
    // SAFETY: HIP's contract: a live stream.
    let r = unsafe { stream(s) }.and_then(|s| {
        let mut st = s.lock().unwrap_or_else(|e| e.into_inner());
        reap(&mut st, false);
        if let Some(e) = st.error {
            return Err(e);
        }
        if st.running.is_some() { Err(NOT_READY) } else { Ok(()) }
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipStreamSynchronize(s: *mut c_void) -> HipError {
    // SAFETY: HIP's contract: a live stream.
    let r = unsafe { stream(s) }.and_then(|s| {
        let mut st = s.lock().unwrap_or_else(|e| e.into_inner());
        reap(&mut st, true);
        st.error.map_or(Ok(()), Err)
    });
    check(r)
}

#[unsafe(no_mangle)]
pub extern "C" fn hipStreamDestroy(s: *mut c_void) -> HipError {
    if s.is_null() {
        return INVALID_HANDLE;
    }
    // SAFETY: a stream from hipStreamCreateWithFlags, destroyed once; a
    // launch still running keeps its own references (its threads).
    drop(unsafe { Box::from_raw(s as *mut Mutex<Stream>) });
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn hipModuleLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    s: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    // SAFETY: HIP's contract: a function handle and a live stream.
    let r = unsafe { function(f) }.and_then(|f| {
        let s = unsafe { stream(s) }?;
        if !extra.is_null() {
            return Err(NOT_SUPPORTED);
        }
        let (grid, block) = ([gx, gy, gz], [bx, by, bz]);
        // SAFETY: `params` has one pointer per explicit argument (HIP's contract).
        let segment = unsafe { kernargs::build(&f.args, f.kernarg_size, params, grid, block, shared) }?;
        let stack = state().stack_limit;
        let kd = f.kernel.descriptor;
        let launch = Launch {
            grid,
            block,
            kernarg: segment.kernarg(),
            dispatch_packet: segment.packet(),
            queue: segment.queue(),
            dynamic_lds: shared,
            stack_bytes: (stack as u32).saturating_sub(kd.private_segment_fixed_size),
        };
        let running = dispatch::launch(&f.module, f.kernel, &launch).map_err(|e| {
            eprintln!("amd-emu: cannot launch: {e}");
            LAUNCH_FAILURE
        })?;
        // The segment must outlive the launch: it is small, keep it.
        std::mem::forget(segment);
        let mut st = s.lock().unwrap_or_else(|e| e.into_inner());
        st.running = Some(running);
        st.error = None;
        Ok(())
    });
    check(r)
}

#[cfg(test)]
mod tests {
    use super::kernel_notes;

    #[test]
    fn each_kernel_has_its_own_metadata() {
        let notes = "AMDGPU Metadata: ---\namdhsa.kernels:\n  - .args:\n      - .offset: 0\n        .size: 8\n        .value_kind: global_buffer\n    .kernarg_segment_size: 8\n    .name: first\n  - .args:\n      - .offset: 0\n        .size: 4\n        .value_kind: by_value\n    .kernarg_segment_size: 16\n    .name: second\namdhsa.target: x\n";
        let second = kernel_notes(notes, "second").unwrap();
        assert!(second.contains(".kernarg_segment_size: 16") && !second.contains("first"));
        assert_eq!(gpu_toolchain::codecheck::kernel_args(&second)[0].size, 4);
        assert!(kernel_notes(notes, "third").is_none());
    }
}

// ------------------------------------------------------------------ errors

/// HIP's name and description of each error this library returns.
pub fn error_text(e: HipError) -> (&'static CStr, &'static CStr) {
    match e {
        SUCCESS => (c"hipSuccess", c"no error"),
        INVALID_VALUE => (c"hipErrorInvalidValue", c"invalid argument"),
        OUT_OF_MEMORY => (c"hipErrorOutOfMemory", c"out of memory"),
        NO_DEVICE => (c"hipErrorNoDevice", c"no ROCm-capable device is detected"),
        INVALID_DEVICE => (c"hipErrorInvalidDevice", c"invalid device ordinal"),
        INVALID_IMAGE => (c"hipErrorInvalidImage", c"device kernel image is invalid"),
        INVALID_HANDLE => (c"hipErrorInvalidHandle", c"invalid resource handle"),
        NOT_FOUND => (c"hipErrorNotFound", c"named symbol not found"),
        NOT_READY => (c"hipErrorNotReady", c"device not ready"),
        ILLEGAL_ADDRESS => (c"hipErrorIllegalAddress", c"an illegal memory access was encountered"),
        LAUNCH_FAILURE => (c"hipErrorLaunchFailure", c"unspecified launch failure"),
        NOT_SUPPORTED => (c"hipErrorNotSupported", c"operation not supported"),
        _ => (c"hipErrorUnknown", c"unknown error"),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn hipGetErrorName(e: HipError) -> *const c_char {
    error_text(e).0.as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn hipGetErrorString(e: HipError) -> *const c_char {
    error_text(e).1.as_ptr()
}
