//! The checked layer: one thin function per HIP call the launcher makes,
//! turning the `hipError_t` into a `Result` with a [`HipError`]. This is
//! where the FFI `unsafe` lives; each call says why it is sound.
//!
//! Every call trusts that `api` is a HIP runtime whose entries have the
//! table's C signatures: that is the contract of the `unsafe`
//! [`HipApi::load`], checked against the real headers by `hip-abi-check`.
//! On top of that, a call is a safe `fn` when its arguments cannot make it
//! unsound:
//!
//! - out-pointers and buffers are Rust locals, references or slices;
//! - the objects HIP creates come back as tokens ([`Stream`], [`Module`],
//!   [`Function`], [`DeviceAlloc`], [`HostAlloc`]) that only these functions
//!   make, that cannot be copied, and that the destroying call consumes, so
//!   a token in hand is a live object. (A token is meant for the `HipApi`
//!   that made it; the launcher has one per process, [`super::api`].)
//!   Dropping a token leaks the object, which is safe; the owner (the safe
//!   layer's `HipBackend`) frees what it holds in its `Drop`.
//!
//! A call is an `unsafe fn`, with a `# Safety` section, where the caller
//! must promise what no type here can show: a raw device address and its
//! extent, a code object's extent (HIP takes no length), a kernel's
//! parameters, a function outliving its module. cudarc's `result` layer
//! takes raw handles everywhere and so is `unsafe` for every handle; the
//! tokens keep that to the calls where the promise is really the caller's.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::fmt;
use std::ptr;

use super::sys::*;

/// A failed HIP call: which call, its code, and HIP's name and description
/// of the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HipError {
    /// The HIP function that failed (`hipMalloc`).
    pub call: &'static str,
    pub code: hipError_t,
    /// `hipGetErrorName`'s text, or `hipError_t <code>` for a code the
    /// runtime does not know.
    pub name: String,
    /// `hipGetErrorString`'s text; empty when the runtime has none beyond
    /// the name (old runtimes return the name again).
    pub desc: String,
}

impl HipError {
    /// The error of `call` returning `code`, with the runtime's text for it.
    pub fn new(api: &HipApi, call: &'static str, code: hipError_t) -> HipError {
        let (name, desc) = error_text(api, code);
        HipError { call, code, name, desc }
    }

    /// The error from the raw texts (`None`: the runtime returned null):
    /// an unknown name becomes `hipError_t <code>`, a description equal to
    /// the name is dropped.
    pub fn from_text(call: &'static str, code: hipError_t, name: Option<String>, desc: Option<String>) -> HipError {
        let name = name.unwrap_or_else(|| unnamed(code));
        let desc = desc.filter(|d| *d != name).unwrap_or_default();
        HipError { call, code, name, desc }
    }

    /// Whether the code is `code` (one of the `hipError*` constants).
    pub fn is(&self, code: c_int) -> bool {
        self.code.0 == code
    }
}

fn unnamed(code: hipError_t) -> String {
    format!("hipError_t {}", code.0)
}

impl fmt::Display for HipError {
    /// `hipMalloc failed: hipErrorOutOfMemory (2): out of memory`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.call, self.name)?;
        if self.name != unnamed(self.code) {
            write!(f, " ({})", self.code.0)?;
        }
        if !self.desc.is_empty() {
            write!(f, ": {}", self.desc)?;
        }
        Ok(())
    }
}

impl std::error::Error for HipError {}

/// `(name, description)` of an error code, as in [`HipError::from_text`].
pub fn error_text(api: &HipApi, code: hipError_t) -> (String, String) {
    let text = |p: *const c_char| {
        // SAFETY: HIP returns null or a pointer to a NUL-terminated string
        // in its own static data, which lives as long as the library (and
        // `api` keeps the library loaded); the text is copied out at once.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    // SAFETY: both take the code by value and only look up static strings;
    // any code value is accepted (unknown ones give null or a generic text).
    let (name, desc) = unsafe { ((api.hipGetErrorName)(code), (api.hipGetErrorString)(code)) };
    let e = HipError::from_text("", code, text(name), text(desc));
    (e.name, e.desc)
}

/// `Ok(())` for `hipSuccess`, else the call's [`HipError`].
fn check(api: &HipApi, call: &'static str, code: hipError_t) -> Result<(), HipError> {
    if code.0 == hipSuccess { Ok(()) } else { Err(HipError::new(api, call, code)) }
}

/// What a `hipStreamQuery` code means: `Ok(true)` the stream's work is
/// done, `Ok(false)` it is still running (`hipErrorNotReady`), else the
/// error code (of the query or of the work on the stream).
pub fn query_status(code: hipError_t) -> Result<bool, hipError_t> {
    match code.0 {
        hipSuccess => Ok(true),
        hipErrorNotReady => Ok(false),
        _ => Err(code),
    }
}

// ---------------------------------------------------------------- tokens

/// A stream made by [`stream_create_with_flags`]; destroyed by [`stream_destroy`].
#[derive(Debug)]
pub struct Stream(hipStream_t);

/// A loaded code object ([`module_load_data`]); unloaded by [`module_unload`].
#[derive(Debug)]
pub struct Module(hipModule_t);

/// A kernel of a loaded [`Module`] ([`module_get_function`]); valid while
/// that module is loaded.
#[derive(Debug)]
pub struct Function(hipFunction_t);

/// Device memory from [`malloc`]; freed by [`free`].
#[derive(Debug)]
pub struct DeviceAlloc(*mut c_void);

impl DeviceAlloc {
    /// Its device address.
    pub fn as_ptr(&self) -> *mut c_void {
        self.0
    }
}

/// Pinned host memory from [`host_malloc`]; freed by [`host_free`].
#[derive(Debug)]
pub struct HostAlloc(*mut c_void);

impl HostAlloc {
    /// Its host address.
    pub fn as_ptr(&self) -> *mut c_void {
        self.0
    }
}

// ------------------------------------------------- runtime and devices

/// `hipInit(flags)`.
pub fn init(api: &HipApi, flags: c_uint) -> Result<(), HipError> {
    // SAFETY: takes a plain value, no pointers.
    check(api, "hipInit", unsafe { (api.hipInit)(flags) })
}

/// `hipRuntimeGetVersion`.
pub fn runtime_get_version(api: &HipApi) -> Result<c_int, HipError> {
    let mut v = 0;
    // SAFETY: `v` is a live local the call writes one int to.
    check(api, "hipRuntimeGetVersion", unsafe { (api.hipRuntimeGetVersion)(&mut v) }).map(|()| v)
}

/// `hipGetDeviceCount`; a negative count reads as 0.
pub fn device_count(api: &HipApi) -> Result<u32, HipError> {
    let mut n = 0;
    // SAFETY: `n` is a live local the call writes one int to.
    check(api, "hipGetDeviceCount", unsafe { (api.hipGetDeviceCount)(&mut n) }).map(|()| n.max(0) as u32)
}

/// `hipDeviceGet(ordinal)`.
pub fn device_get(api: &HipApi, ordinal: c_int) -> Result<hipDevice_t, HipError> {
    let mut dev = hipDevice_t(0);
    // SAFETY: `dev` is a live local out-pointer; HIP checks the ordinal
    // (hipErrorInvalidDevice).
    check(api, "hipDeviceGet", unsafe { (api.hipDeviceGet)(&mut dev, ordinal) }).map(|()| dev)
}

/// `hipDeviceGetName`, into a 256-byte buffer of which HIP may fill 255.
pub fn device_get_name(api: &HipApi, dev: hipDevice_t) -> Result<String, HipError> {
    let mut name = [0u8; 256];
    // SAFETY: the buffer holds 256 bytes and HIP is told 255, so it writes
    // within it and the last byte stays NUL. `dev` is a value HIP checks.
    let e = unsafe { (api.hipDeviceGetName)(name.as_mut_ptr().cast(), name.len() as c_int - 1, dev) };
    check(api, "hipDeviceGetName", e)?;
    Ok(match CStr::from_bytes_until_nul(&name) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&name).into_owned(),
    })
}

/// `hipDeviceTotalMem`: the device's memory in bytes.
pub fn device_total_mem(api: &HipApi, dev: hipDevice_t) -> Result<usize, HipError> {
    let mut total = 0usize;
    // SAFETY: `total` is a live local out-pointer; `dev` is a value HIP checks.
    check(api, "hipDeviceTotalMem", unsafe { (api.hipDeviceTotalMem)(&mut total, dev) }).map(|()| total)
}

/// `hipDeviceGetAttribute(attr, device)`; `attr` is one of the
/// `hipDeviceAttribute*` constants.
pub fn device_get_attribute(api: &HipApi, attr: c_int, device: c_int) -> Result<c_int, HipError> {
    let mut v = 0;
    // SAFETY: `v` is a live local out-pointer; HIP checks the attribute and
    // the ordinal (hipErrorInvalidValue, hipErrorInvalidDevice).
    let e = unsafe { (api.hipDeviceGetAttribute)(&mut v, hipDeviceAttribute_t(attr), device) };
    check(api, "hipDeviceGetAttribute", e).map(|()| v)
}

/// The buffer the device properties are written into: larger than either
/// layout of `hipDeviceProp_t` (the header check asserts it).
pub type PropBuffer = [u8; DEVICE_PROP_BUFFER];

/// `hipGetDevicePropertiesR0600` (ROCm 6+ layout) into `buf`; `None` when
/// the library lacks the entry (ROCm 5).
pub fn get_device_properties_r0600(api: &HipApi, buf: &mut PropBuffer, device: c_int) -> Option<Result<(), HipError>> {
    let get = api.hipGetDevicePropertiesR0600?;
    // SAFETY: `buf` is a live exclusive buffer of DEVICE_PROP_BUFFER bytes,
    // more than sizeof(hipDeviceProp_tR0600) (hip-abi-check asserts it); HIP
    // writes only the struct. It checks the ordinal.
    Some(check(api, "hipGetDevicePropertiesR0600", unsafe { get(buf.as_mut_ptr().cast(), device) }))
}

/// `hipGetDeviceProperties` (ROCm 5's `R0000` layout) into `buf`; `None`
/// when the library lacks the entry.
pub fn get_device_properties(api: &HipApi, buf: &mut PropBuffer, device: c_int) -> Option<Result<(), HipError>> {
    let get = api.hipGetDeviceProperties?;
    // SAFETY: as above, for ROCm 5's hipDeviceProp_t (also asserted smaller).
    Some(check(api, "hipGetDeviceProperties", unsafe { get(buf.as_mut_ptr().cast(), device) }))
}

/// `hipSetDevice(ordinal)`: makes the device current on this thread.
pub fn set_device(api: &HipApi, ordinal: c_int) -> Result<(), HipError> {
    // SAFETY: a plain value; HIP checks the ordinal.
    check(api, "hipSetDevice", unsafe { (api.hipSetDevice)(ordinal) })
}

/// `hipDeviceSetLimit(limit, value)` on the current device; `limit` is a
/// `hipLimit*` constant. `None` when the library lacks the entry (it is not
/// in ROCm 5.2's headers).
pub fn device_set_limit(api: &HipApi, limit: c_int, value: usize) -> Option<Result<(), HipError>> {
    let set = api.hipDeviceSetLimit?;
    // SAFETY: plain values; HIP checks them (hipErrorInvalidValue, or
    // hipErrorOutOfMemory when it cannot reserve the stack).
    Some(check(api, "hipDeviceSetLimit", unsafe { set(hipLimit_t(limit), value) }))
}

/// `hipDeviceSynchronize`: waits for all work on the current device.
pub fn device_synchronize(api: &HipApi) -> Result<(), HipError> {
    // SAFETY: no arguments.
    check(api, "hipDeviceSynchronize", unsafe { (api.hipDeviceSynchronize)() })
}

/// `hipMemGetInfo`: `(free, total)` bytes of the current device.
pub fn mem_get_info(api: &HipApi) -> Result<(usize, usize), HipError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two live, distinct local out-pointers.
    check(api, "hipMemGetInfo", unsafe { (api.hipMemGetInfo)(&mut free, &mut total) }).map(|()| (free, total))
}

// ------------------------------------------------------------- streams

/// `hipStreamCreateWithFlags(flags)` on the current device.
pub fn stream_create_with_flags(api: &HipApi, flags: c_uint) -> Result<Stream, HipError> {
    let mut s = hipStream_t(ptr::null_mut());
    // SAFETY: `s` is a live local out-pointer; `flags` a plain value.
    let e = unsafe { (api.hipStreamCreateWithFlags)(&mut s, flags) };
    check(api, "hipStreamCreateWithFlags", e).map(|()| Stream(s))
}

/// `hipStreamQuery`: `Ok(true)` when the stream's work is done, `Ok(false)`
/// while it runs (`hipErrorNotReady` is no error here), else the error of
/// the query or of the work (a kernel's fault).
pub fn stream_query(api: &HipApi, stream: &Stream) -> Result<bool, HipError> {
    // SAFETY: a `Stream` is a live stream (only `stream_destroy` ends one,
    // and it consumes the token).
    let e = unsafe { (api.hipStreamQuery)(stream.0) };
    query_status(e).map_err(|e| HipError::new(api, "hipStreamQuery", e))
}

/// `hipStreamDestroy`. HIP finishes the stream's pending work first.
pub fn stream_destroy(api: &HipApi, stream: Stream) -> Result<(), HipError> {
    // SAFETY: the token is live and consumed, so the stream is destroyed once.
    check(api, "hipStreamDestroy", unsafe { (api.hipStreamDestroy)(stream.0) })
}

// ------------------------------------------------------------- modules

/// `hipModuleLoadData`: loads a code object on the current device.
///
/// # Safety
/// `image` must be a complete code object (an AMDGPU ELF whose headers and
/// sections all lie within `image`): HIP is given no length and reads as
/// far as the ELF headers say.
pub unsafe fn module_load_data(api: &HipApi, image: &[u8]) -> Result<Module, HipError> {
    let mut m = hipModule_t(ptr::null_mut());
    // SAFETY: `m` is a live local out-pointer; `image` is borrowed for the
    // call and, by the caller's promise, holds everything HIP reads.
    let e = unsafe { (api.hipModuleLoadData)(&mut m, image.as_ptr().cast()) };
    check(api, "hipModuleLoadData", e).map(|()| Module(m))
}

/// `hipModuleGetFunction(module, name)`. A missing kernel is
/// `hipErrorNotFound` (or `hipErrorInvalidKernelFile` in some runtimes).
pub fn module_get_function(api: &HipApi, module: &Module, name: &CStr) -> Result<Function, HipError> {
    let mut f = hipFunction_t(ptr::null_mut());
    // SAFETY: `f` is a live local out-pointer; the module is loaded (a
    // `Module` token is live until `module_unload` consumes it); `name` is
    // NUL-terminated and borrowed for the call.
    let e = unsafe { (api.hipModuleGetFunction)(&mut f, module.0, name.as_ptr()) };
    check(api, "hipModuleGetFunction", e).map(|()| Function(f))
}

/// `hipModuleGetGlobal(module, name)`: the global's device address and
/// size, `None` when the module does not define it (`hipErrorNotFound` is
/// no error here).
pub fn module_get_global(
    api: &HipApi,
    module: &Module,
    name: &CStr,
) -> Result<Option<(hipDeviceptr_t, usize)>, HipError> {
    let (mut dptr, mut bytes) = (hipDeviceptr_t(ptr::null_mut()), 0usize);
    // SAFETY: live local out-pointers; the module is loaded (as above);
    // `name` is NUL-terminated and borrowed for the call.
    let e = unsafe { (api.hipModuleGetGlobal)(&mut dptr, &mut bytes, module.0, name.as_ptr()) };
    match e.0 {
        hipErrorNotFound => Ok(None),
        _ => check(api, "hipModuleGetGlobal", e).map(|()| Some((dptr, bytes))),
    }
}

/// `hipModuleUnload`.
///
/// # Safety
/// No [`Function`] got from this module may be used afterwards (a
/// `Function` does not borrow its module, so the types cannot say it).
pub unsafe fn module_unload(api: &HipApi, module: Module) -> Result<(), HipError> {
    // SAFETY: the token is live and consumed, so the module is unloaded
    // once; its functions are not used again (the caller's promise).
    check(api, "hipModuleUnload", unsafe { (api.hipModuleUnload)(module.0) })
}

/// `hipFuncGetAttribute(attr, f)`; `attr` is one of the
/// `HIP_FUNC_ATTRIBUTE_*` constants.
pub fn func_get_attribute(api: &HipApi, f: &Function, attr: c_int) -> Result<c_int, HipError> {
    let mut v = 0;
    // SAFETY: `v` is a live local out-pointer; `f` belongs to a loaded
    // module (`module_unload`'s contract); HIP checks the attribute.
    let e = unsafe { (api.hipFuncGetAttribute)(&mut v, hipFunction_attribute(attr), f.0) };
    check(api, "hipFuncGetAttribute", e).map(|()| v)
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`: how many blocks of
/// `block_size` threads of `f` fit on one CU.
pub fn module_occupancy_max_active_blocks_per_multiprocessor(
    api: &HipApi,
    f: &Function,
    block_size: c_int,
    dynamic_shared: usize,
) -> Result<c_int, HipError> {
    let mut n = 0;
    // SAFETY: `n` is a live local out-pointer; `f` belongs to a loaded
    // module (as above); the sizes are plain values HIP checks.
    let e = unsafe {
        (api.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(&mut n, f.0, block_size, dynamic_shared)
    };
    check(api, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", e).map(|()| n)
}

/// `hipModuleLaunchKernel(f, grid, block, shared, stream, params, NULL)`.
/// `params` covers the explicit parameters only: the runtime fills the
/// hidden (`hidden_*`) ones of code object v5 itself.
///
/// # Safety
/// `params` must hold one pointer per explicit kernel parameter, each to a
/// value of that parameter's type (HIP copies them at the launch). Whatever the
/// kernel reaches through them (device and mapped host memory) must stay
/// valid, and not be used by the host in ways that race with it, until the
/// kernel has finished; a kernel's memory accesses are beyond any check.
pub unsafe fn module_launch_kernel(
    api: &HipApi,
    f: &Function,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: &Stream,
    params: &mut [*mut c_void],
) -> Result<(), HipError> {
    // SAFETY: `f` belongs to a loaded module and `stream` is live (tokens);
    // `params` is a live array for the call, its entries valid by the
    // caller's promise; `extra` is null (parameters go by `params` only).
    let e = unsafe {
        (api.hipModuleLaunchKernel)(
            f.0,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared_bytes,
            stream.0,
            params.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    check(api, "hipModuleLaunchKernel", e)
}

// -------------------------------------------------------------- memory

/// `hipMalloc(bytes)`: device memory, uninitialised.
pub fn malloc(api: &HipApi, bytes: usize) -> Result<DeviceAlloc, HipError> {
    let mut p = ptr::null_mut();
    // SAFETY: `p` is a live local out-pointer; `bytes` a plain value.
    check(api, "hipMalloc", unsafe { (api.hipMalloc)(&mut p, bytes) }).map(|()| DeviceAlloc(p))
}

/// `hipFree`. HIP waits for the device before it frees.
pub fn free(api: &HipApi, mem: DeviceAlloc) -> Result<(), HipError> {
    // SAFETY: the token is a live allocation and is consumed, so it is freed
    // once. Its address may still be held as a number, but only the
    // `unsafe` copies below take raw addresses, on their callers' promise.
    check(api, "hipFree", unsafe { (api.hipFree)(mem.0) })
}

/// `hipHostMalloc(bytes, flags)`: pinned host memory; `flags` are
/// `hipHostMalloc*` constants.
pub fn host_malloc(api: &HipApi, bytes: usize, flags: c_uint) -> Result<HostAlloc, HipError> {
    let mut p = ptr::null_mut();
    // SAFETY: `p` is a live local out-pointer; plain values.
    check(api, "hipHostMalloc", unsafe { (api.hipHostMalloc)(&mut p, bytes, flags) }).map(|()| HostAlloc(p))
}

/// `hipHostGetDevicePointer(host, flags)`: the device's address of mapped
/// host memory.
pub fn host_get_device_pointer(api: &HipApi, host: &HostAlloc, flags: c_uint) -> Result<*mut c_void, HipError> {
    let mut dev = ptr::null_mut();
    // SAFETY: `dev` is a live local out-pointer; `host` is a live
    // allocation of `host_malloc` (the token).
    let e = unsafe { (api.hipHostGetDevicePointer)(&mut dev, host.0, flags) };
    check(api, "hipHostGetDevicePointer", e).map(|()| dev)
}

/// `hipHostFree`. HIP waits for the device before it frees.
pub fn host_free(api: &HipApi, mem: HostAlloc) -> Result<(), HipError> {
    // SAFETY: the token is a live allocation and is consumed, so it is freed
    // once. Raw pointers into it that callers kept are theirs to stop using
    // (dereferencing them is already `unsafe`).
    check(api, "hipHostFree", unsafe { (api.hipHostFree)(mem.0) })
}

/// `hipMemcpyHtoD(dst, src)`: copies `src` to device memory, synchronously.
///
/// # Safety
/// `dst` must be device memory (of this runtime) with room for
/// `src.len()` bytes that nothing else uses during the copy.
pub unsafe fn memcpy_htod(api: &HipApi, dst: hipDeviceptr_t, src: &[u8]) -> Result<(), HipError> {
    // SAFETY: `src` is borrowed for the whole (synchronous) copy and HIP
    // only reads it (the header's `void*` is not const); `dst` is the
    // caller's promise.
    let e = unsafe { (api.hipMemcpyHtoD)(dst, src.as_ptr() as *mut c_void, src.len()) };
    check(api, "hipMemcpyHtoD", e)
}

/// `hipMemset(dst, value, bytes)` on the null stream.
///
/// # Safety
/// `dst` must be device memory (of this runtime) of at least `bytes` bytes.
pub unsafe fn memset(api: &HipApi, dst: *mut c_void, value: c_int, bytes: usize) -> Result<(), HipError> {
    // SAFETY: the range is the caller's promise; `value` a plain value.
    check(api, "hipMemset", unsafe { (api.hipMemset)(dst, value, bytes) })
}

/// `hipMemcpyDtoHAsync(dst, src, bytes, stream)`: queues a copy of device
/// memory into host memory; it is done when the stream says so
/// ([`stream_query`]).
///
/// # Safety
/// `src` must be device memory of at least `bytes` bytes; `dst` must be
/// host memory of at least `bytes` bytes (pinned, for a truly asynchronous
/// copy) that stays allocated, and that nothing reads or writes, until the
/// copy has completed.
pub unsafe fn memcpy_dtoh_async(
    api: &HipApi,
    dst: *mut c_void,
    src: hipDeviceptr_t,
    bytes: usize,
    stream: &Stream,
) -> Result<(), HipError> {
    // SAFETY: `stream` is live (token); both ranges, and `dst` outliving
    // the copy, are the caller's promise.
    check(api, "hipMemcpyDtoHAsync", unsafe { (api.hipMemcpyDtoHAsync)(dst, src, bytes, stream.0) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_call_code_and_description() {
        let e = HipError::from_text(
            "hipMalloc",
            hipError_t(hipErrorOutOfMemory),
            Some("hipErrorOutOfMemory".into()),
            Some("out of memory".into()),
        );
        assert_eq!(e.to_string(), "hipMalloc failed: hipErrorOutOfMemory (2): out of memory");
        assert!(e.is(hipErrorOutOfMemory) && !e.is(hipErrorInvalidValue));
        let dyn_error: &dyn std::error::Error = &e;
        assert!(dyn_error.source().is_none());
    }

    #[test]
    fn unknown_codes_and_repeated_names() {
        // A code the runtime has no name for (null pointers).
        let e = HipError::from_text("hipInit", hipError_t(9999), None, None);
        assert_eq!((e.name.as_str(), e.desc.as_str()), ("hipError_t 9999", ""));
        assert_eq!(e.to_string(), "hipInit failed: hipError_t 9999");
        // Old runtimes return the name as the description too.
        let e = HipError::from_text(
            "hipStreamQuery",
            hipError_t(hipErrorIllegalAddress),
            Some("hipErrorIllegalAddress".into()),
            Some("hipErrorIllegalAddress".into()),
        );
        assert_eq!(e.desc, "");
        assert_eq!(e.to_string(), "hipStreamQuery failed: hipErrorIllegalAddress (700)");
        // A description without a name is kept.
        let e = HipError::from_text("hipFree", hipError_t(1), None, Some("invalid argument".into()));
        assert_eq!(e.to_string(), "hipFree failed: hipError_t 1: invalid argument");
    }

    #[test]
    fn not_ready_is_not_an_error_of_a_query() {
        assert_eq!(query_status(hipError_t(hipSuccess)), Ok(true));
        assert_eq!(query_status(hipError_t(hipErrorNotReady)), Ok(false));
        assert_eq!(query_status(hipError_t(hipErrorIllegalAddress)), Err(hipError_t(hipErrorIllegalAddress)));
        assert_eq!(query_status(hipError_t(hipErrorLaunchFailure)), Err(hipError_t(hipErrorLaunchFailure)));
    }
}
