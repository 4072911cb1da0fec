//! The raw HIP table: the few `libamdhip64` entry points the launcher uses,
//! loaded at run time with `libloading` (no ROCm at build time), and the
//! enum/flag values we pass them.
//!
//! One macro declares each function once and produces both the Rust
//! function-pointer field and its C signature; [`super::abi_check`] turns
//! those signatures (and [`CONSTANTS`]) into a C file that CI compiles
//! against the real `<hip/hip_runtime_api.h>`, so a mismatch with the real
//! headers fails the build of that file.
#![allow(non_snake_case, non_camel_case_types, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// How a Rust type is spelled in C (for the header check).
pub trait CType {
    fn c_name() -> String;
}

macro_rules! c_type {
    ($($t:ty => $c:literal),* $(,)?) => { $(impl CType for $t { fn c_name() -> String { $c.into() } })* };
}
c_type! { c_int => "int", c_uint => "unsigned int", usize => "size_t", c_void => "void", c_char => "char" }
impl<T: CType> CType for *mut T {
    fn c_name() -> String {
        format!("{}*", T::c_name())
    }
}
impl<T: CType> CType for *const T {
    fn c_name() -> String {
        format!("const {}*", T::c_name())
    }
}

macro_rules! handle {
    ($($(#[$m:meta])* $name:ident($inner:ty) => $c:literal;)*) => {$(
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(pub $inner);
        impl CType for $name { fn c_name() -> String { $c.into() } }
    )*};
}
handle! {
    /// `hipError_t` (a C enum, returned as `int`).
    hipError_t(c_int) => "hipError_t";
    hipDeviceAttribute_t(c_int) => "hipDeviceAttribute_t";
    hipFunction_attribute(c_int) => "hipFunction_attribute";
    hipLimit_t(c_int) => "enum hipLimit_t";
    hipDevice_t(c_int) => "hipDevice_t";
    hipStream_t(*mut c_void) => "hipStream_t";
    hipModule_t(*mut c_void) => "hipModule_t";
    hipFunction_t(*mut c_void) => "hipFunction_t";
    hipDeviceptr_t(*mut c_void) => "hipDeviceptr_t";
    /// The ROCm 5 (`R0000`) `hipDeviceProp_t`, as an opaque buffer.
    hipDeviceProp_t(u8) => "hipDeviceProp_t";
    /// The ROCm 6+ `hipDeviceProp_tR0600`, as an opaque buffer.
    hipDeviceProp_tR0600(u8) => "hipDeviceProp_tR0600";
}

/// A function's C signature, and the HIP major versions whose headers have it.
#[derive(Clone, Debug)]
pub struct Signature {
    pub name: &'static str,
    pub ret: String,
    pub args: Vec<String>,
    /// `(since, before)` major versions, for `#if` guards.
    pub versions: (Option<u32>, Option<u32>),
}

macro_rules! hip_api {
    ($(
        $(#[$m:meta])*
        $([$since:expr, $before:expr])? $req:ident fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;
    )*) => {
        /// The loaded table. Optional entries are `None` when the library
        /// predates them.
        pub struct HipApi {
            $( $(#[$m])* pub $name: hip_api!(@field $req, unsafe extern "C" fn($($ty),*) -> $ret), )*
            pub path: String,
            _lib: libloading::Library,
        }

        impl HipApi {
            /// Resolves every entry point; a missing required one is `Err(name)`.
            ///
            /// # Safety
            /// `lib` must be a HIP runtime whose functions have these signatures
            /// (checked against the real headers by the ABI check in CI).
            pub unsafe fn load(lib: libloading::Library, path: String) -> Result<HipApi, &'static str> {
                Ok(HipApi {
                    $( $name: {
                        type F = unsafe extern "C" fn($($ty),*) -> $ret;
                        // SAFETY: the caller vouches for the signature; the
                        // pointer stays valid while `_lib` is loaded.
                        let sym = unsafe { lib.get::<F>(concat!(stringify!($name), "\0").as_bytes()) };
                        hip_api!(@resolve $req, sym, stringify!($name))
                    }, )*
                    path,
                    _lib: lib,
                })
            }
        }

        /// The C signatures of the table, for the header check.
        pub fn signatures() -> Vec<Signature> {
            vec![$(Signature {
                name: stringify!($name),
                ret: <$ret as CType>::c_name(),
                args: vec![$(<$ty as CType>::c_name()),*],
                versions: hip_api!(@versions $([$since, $before])?),
            }),*]
        }
    };
    (@field required, $f:ty) => { $f };
    (@field optional, $f:ty) => { Option<$f> };
    (@resolve required, $sym:expr, $n:expr) => { *$sym.map_err(|_| $n)? };
    (@resolve optional, $sym:expr, $n:expr) => { $sym.ok().map(|s| *s) };
    (@versions) => { (None, None) };
    (@versions [$since:expr, $before:expr]) => { ($since, $before) };
}

hip_api! {
    required fn hipInit(flags: c_uint) -> hipError_t;
    required fn hipDriverGetVersion(version: *mut c_int) -> hipError_t;
    required fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t;
    required fn hipGetDeviceCount(count: *mut c_int) -> hipError_t;
    required fn hipDeviceGet(device: *mut hipDevice_t, ordinal: c_int) -> hipError_t;
    required fn hipSetDevice(device: c_int) -> hipError_t;
    required fn hipDeviceGetAttribute(value: *mut c_int, attr: hipDeviceAttribute_t, device: c_int) -> hipError_t;
    required fn hipDeviceGetName(name: *mut c_char, len: c_int, device: hipDevice_t) -> hipError_t;
    required fn hipDeviceTotalMem(bytes: *mut usize, device: hipDevice_t) -> hipError_t;
    required fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t;
    required fn hipDeviceSynchronize() -> hipError_t;
    required fn hipModuleLoadData(module: *mut hipModule_t, image: *const c_void) -> hipError_t;
    required fn hipModuleGetFunction(function: *mut hipFunction_t, module: hipModule_t, name: *const c_char) -> hipError_t;
    required fn hipModuleGetGlobal(dptr: *mut hipDeviceptr_t, bytes: *mut usize, module: hipModule_t, name: *const c_char) -> hipError_t;
    required fn hipModuleUnload(module: hipModule_t) -> hipError_t;
    required fn hipModuleLaunchKernel(
        f: hipFunction_t, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint,
        shared: c_uint, stream: hipStream_t, params: *mut *mut c_void, extra: *mut *mut c_void
    ) -> hipError_t;
    required fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks: *mut c_int, f: hipFunction_t, block_size: c_int, dynamic_shared: usize
    ) -> hipError_t;
    required fn hipFuncGetAttribute(value: *mut c_int, attr: hipFunction_attribute, f: hipFunction_t) -> hipError_t;
    required fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t;
    required fn hipFree(ptr: *mut c_void) -> hipError_t;
    required fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> hipError_t;
    required fn hipMemcpyHtoD(dst: hipDeviceptr_t, src: *mut c_void, size: usize) -> hipError_t;
    required fn hipMemcpyDtoHAsync(dst: *mut c_void, src: hipDeviceptr_t, size: usize, stream: hipStream_t) -> hipError_t;
    /// Deprecated in ROCm 6.x for `hipExtHostAlloc` but still exported.
    required fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t;
    required fn hipHostFree(ptr: *mut c_void) -> hipError_t;
    required fn hipHostGetDevicePointer(dev: *mut *mut c_void, host: *mut c_void, flags: c_uint) -> hipError_t;
    required fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) -> hipError_t;
    required fn hipStreamQuery(stream: hipStream_t) -> hipError_t;
    required fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t;
    required fn hipStreamDestroy(stream: hipStream_t) -> hipError_t;
    required fn hipGetErrorName(e: hipError_t) -> *const c_char;
    required fn hipGetErrorString(e: hipError_t) -> *const c_char;
    /// ROCm 5's layout (`R0000`); ROCm 6+ headers map the name to R0600.
    [None, Some(6)] optional fn hipGetDeviceProperties(props: *mut hipDeviceProp_t, device: c_int) -> hipError_t;
    [Some(6), None] optional fn hipGetDevicePropertiesR0600(props: *mut hipDeviceProp_tR0600, device: c_int) -> hipError_t;
    /// Not in ROCm 5.2's headers.
    [Some(6), None] optional fn hipDeviceSetLimit(limit: hipLimit_t, value: usize) -> hipError_t;
}

macro_rules! constants {
    ($($(#[$m:meta])* $([$since:expr])? $name:ident: $ty:ty = $v:expr;)*) => {
        $($(#[$m])* pub const $name: $ty = $v;)*
        /// `(name, value, since major version)`, for the header check.
        pub const CONSTANTS: &[(&str, i64, Option<u32>)] = &[$((stringify!($name), $v as i64, constants!(@since $($since)?))),*];
    };
    (@since) => { None };
    (@since $s:expr) => { Some($s) };
}

constants! {
    hipSuccess: c_int = 0;
    hipErrorInvalidValue: c_int = 1;
    hipErrorOutOfMemory: c_int = 2;
    hipErrorInsufficientDriver: c_int = 35;
    hipErrorNoDevice: c_int = 100;
    hipErrorInvalidDevice: c_int = 101;
    hipErrorInvalidImage: c_int = 200;
    hipErrorNoBinaryForGpu: c_int = 209;
    hipErrorInvalidKernelFile: c_int = 218;
    hipErrorNotFound: c_int = 500;
    hipErrorNotReady: c_int = 600;
    hipErrorIllegalAddress: c_int = 700;
    hipErrorAssert: c_int = 710;
    hipErrorLaunchFailure: c_int = 719;
    hipDeviceAttributeMaxThreadsPerBlock: c_int = 56;
    hipDeviceAttributeMaxThreadsPerMultiProcessor: c_int = 57;
    hipDeviceAttributeMultiprocessorCount: c_int = 63;
    hipDeviceAttributeWarpSize: c_int = 87;
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: c_int = 0;
    HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: c_int = 3;
    HIP_FUNC_ATTRIBUTE_NUM_REGS: c_int = 4;
    hipHostMallocPortable: c_uint = 0x1;
    hipHostMallocMapped: c_uint = 0x2;
    /// Fine-grained (coherent) host memory: system-scope atomics reach the host.
    hipHostMallocCoherent: c_uint = 0x4000_0000;
    hipStreamNonBlocking: c_uint = 0x1;
    [6] hipLimitStackSize: c_int = 0;
}

/// Offset of `gcnArchName` in ROCm 5's `hipDeviceProp_t` (R0000).
pub const GCN_ARCH_NAME_OFFSET_R0000: usize = 396;
/// Offset of `gcnArchName` in ROCm 6's `hipDeviceProp_tR0600`.
pub const GCN_ARCH_NAME_OFFSET_R0600: usize = 1160;
/// Bytes of the property buffer we pass: larger than either struct (792 and
/// 1472 bytes), with room for growth; hip-abi-check asserts that it holds
/// the struct.
pub const DEVICE_PROP_BUFFER: usize = 8192;
