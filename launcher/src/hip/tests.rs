use super::abi_check::c_source;
use super::sys::signatures;

#[test]
fn c_signatures_follow_the_rust_types() {
    let sigs = signatures();
    let launch = sigs.iter().find(|s| s.name == "hipModuleLaunchKernel").unwrap();
    assert_eq!(launch.ret, "hipError_t");
    assert_eq!(launch.args[0], "hipFunction_t");
    assert_eq!(launch.args[9], "void**");
    let name = sigs.iter().find(|s| s.name == "hipGetErrorName").unwrap();
    assert_eq!(name.ret, "const char*");
    let get = sigs.iter().find(|s| s.name == "hipModuleGetFunction").unwrap();
    assert_eq!(get.args, ["hipFunction_t*", "hipModule_t", "const char*"]);
    let r0600 = sigs.iter().find(|s| s.name == "hipGetDevicePropertiesR0600").unwrap();
    assert_eq!(r0600.versions, (Some(6), None));
}

#[test]
fn c_source_guards_version_specific_entries() {
    let c = c_source();
    assert!(c.contains("hipError_t (*check_hipDeviceSynchronize)(void) = hipDeviceSynchronize;"), "{c}");
    assert!(c.contains("#if HIP_VERSION_MAJOR >= 6\nhipError_t (*check_hipDeviceSetLimit)(enum hipLimit_t, size_t) = hipDeviceSetLimit;\n#endif"), "{c}");
    assert!(c.contains("_Static_assert((long long)(hipErrorNotReady) == 600LL"), "{c}");
    assert!(c.contains("offsetof(hipDeviceProp_tR0600, gcnArchName) == 1160"), "{c}");
}

// ---- HipError → BackendError: the messages and exit codes the launcher
// printed before the split (the expected strings follow the old format
// strings of hip/mod.rs).

use std::path::PathBuf;

use super::*;
use crate::backend::h100;
use crate::exit;

fn err(call: &'static str, code: std::ffi::c_int, name: &str, desc: &str) -> HipError {
    HipError { call, code: hipError_t(code), name: name.into(), desc: desc.into() }
}

fn code_object() -> CodeObject {
    CodeObject { path: PathBuf::from("hello.elf"), bytes: Vec::new(), kind: Kind::Fatbin }
}

const LIB: &str = "/opt/rocm/lib/libamdhip64.so";

#[test]
fn failed_calls_are_api_errors_named_by_the_call() {
    let oom = err("hipMalloc", hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory");
    let e = BackendError::from(oom.clone());
    assert!(matches!(e, BackendError::Api { call: "hipMalloc", .. }), "{e:?}");
    assert_eq!(e.to_string(), "hipMalloc failed: hipErrorOutOfMemory (out of memory)");
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
    let e = api_error(oom.clone(), "lower --heap-size, --stack-size or --threads");
    assert_eq!(
        e.to_string(),
        "hipMalloc failed: hipErrorOutOfMemory (out of memory). lower --heap-size, --stack-size or --threads"
    );
    // The launcher's own names for some steps.
    let e = api_as("hipHostMalloc(coherent, mapped)", HipError { call: "hipHostMalloc", ..oom }, "");
    assert_eq!(e.to_string(), "hipHostMalloc(coherent, mapped) failed: hipErrorOutOfMemory (out of memory)");
    let not_ready = err("hipStreamQuery", hipErrorNotReady, "hipErrorNotReady", "");
    let e = api_as(READ_BACK, not_ready, "the copy did not complete");
    assert_eq!(e.to_string(), "hipMemcpyDtoHAsync (thread table) failed: hipErrorNotReady. the copy did not complete");
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
}

#[test]
fn init_failures_mean_no_device() {
    let no_device = err("hipInit", hipErrorNoDevice, "hipErrorNoDevice", "no ROCm-capable device");
    let e = init_failed(LIB, &no_device, Kfd::Missing);
    assert_eq!(
        e.to_string(),
        "no AMD GPU: the HIP runtime loaded (/opt/rocm/lib/libamdhip64.so) but found no AMD GPU \
         (hipInit: hipErrorNoDevice): /dev/kfd does not exist: no amdgpu kernel driver is loaded here \
         (in a container, pass the GPU in: --device /dev/kfd --device /dev/dri)"
    );
    assert_eq!(e.exit_code(), exit::NO_DEVICE);
    assert!(e.is_no_device());
    // Debian's HIP 5.2 without /dev/kfd.
    let invalid = err("hipInit", hipErrorInvalidDevice, "hipErrorInvalidDevice", "");
    let e = init_failed(LIB, &invalid, Kfd::NoAccess);
    assert!(e.to_string().contains("found no AMD GPU (hipInit: hipErrorInvalidDevice): /dev/kfd exists but"), "{e}");
    assert!(e.to_string().ends_with("add the user to its group (render or video)"), "{e}");
    let e = init_failed(LIB, &invalid, Kfd::Usable);
    assert!(e.to_string().contains("/dev/kfd is there and open to you: check that the amdgpu driver"), "{e}");
    let e =
        init_failed(LIB, &err("hipInit", hipErrorInsufficientDriver, "hipErrorInsufficientDriver", "x"), Kfd::Usable);
    assert_eq!(
        e.to_string(),
        "no AMD GPU: the HIP runtime (/opt/rocm/lib/libamdhip64.so) needs a newer amdgpu kernel driver \
         (hipInit: hipErrorInsufficientDriver)"
    );
    let e = init_failed(LIB, &err("hipInit", 999, "hipErrorUnknown", "unknown error"), Kfd::Missing);
    assert_eq!(
        e.to_string(),
        format!(
            "no AMD GPU: hipInit failed in /opt/rocm/lib/libamdhip64.so: hipErrorUnknown (unknown error); {}",
            Kfd::Missing.hint()
        )
    );
    assert_eq!(e.exit_code(), exit::NO_DEVICE);
    let e = init_aborted(LIB, Kfd::Missing);
    let aborted = "no AMD GPU: the HIP runtime loaded (/opt/rocm/lib/libamdhip64.so) but aborted the process in \
                   hipInit: /dev/kfd does not exist";
    assert!(e.to_string().starts_with(aborted), "{e}");
    assert_eq!(e.exit_code(), exit::NO_DEVICE);
}

#[test]
fn kfd_probe_matches_the_file() {
    let kfd = Kfd::probe();
    assert_eq!(kfd == Kfd::Missing, !std::path::Path::new(Kfd::PATH).exists(), "{kfd:?}");
}

#[test]
fn no_devices_counted_is_no_device() {
    assert_eq!(count_or_no_device(LIB, Ok(2)).unwrap(), 2);
    for r in [Ok(0), Err(err("hipGetDeviceCount", hipErrorNoDevice, "hipErrorNoDevice", ""))] {
        let e = count_or_no_device(LIB, r).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no AMD GPU: the HIP runtime loaded and initialised (/opt/rocm/lib/libamdhip64.so) but sees no AMD GPU \
             (hipGetDeviceCount)"
        );
        assert_eq!(e.exit_code(), exit::NO_DEVICE);
    }
    let e = count_or_no_device(LIB, Err(err("hipGetDeviceCount", hipErrorInvalidValue, "hipErrorInvalidValue", "")))
        .unwrap_err();
    assert_eq!(e.to_string(), "hipGetDeviceCount failed: hipErrorInvalidValue");
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
}

#[test]
fn refused_code_objects_and_missing_entries() {
    let code = code_object();
    let invalid = err("hipModuleLoadData", hipErrorInvalidImage, "hipErrorInvalidImage", "invalid kernel image");
    let e = load_refused(&code, &h100(), &invalid);
    assert_eq!(
        e.to_string(),
        "hello.elf: the HIP runtime refused an NVIDIA fatbinary on H100 (sm_90): hipErrorInvalidImage \
         (invalid kernel image)"
    );
    assert_eq!(e.exit_code(), exit::CODE_OBJECT);
    for code_value in [hipErrorNotFound, hipErrorInvalidKernelFile] {
        let e = entry_error(&code, err("hipModuleGetFunction", code_value, "x", ""));
        assert!(e.to_string().starts_with("hello.elf: no kernel `__gpu_start`;"), "{e}");
        assert_eq!(e.exit_code(), exit::CODE_OBJECT);
    }
    let e = entry_error(&code, err("hipModuleGetFunction", hipErrorInvalidValue, "hipErrorInvalidValue", ""));
    assert_eq!(e.to_string(), "hipModuleGetFunction failed: hipErrorInvalidValue");
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
}

#[test]
fn refused_stack_sizes_are_usage_errors() {
    let opt = "--call-stack-size";
    let e = stack_error(err("hipDeviceSetLimit", hipErrorInvalidValue, "hipErrorInvalidValue", ""), 1 << 20, opt);
    assert_eq!(
        e.to_string(),
        "--call-stack-size 1048576: hipDeviceSetLimit(hipLimitStackSize) failed with hipErrorInvalidValue: \
         the driver does not accept that per-lane size; pass a smaller --call-stack-size"
    );
    assert_eq!(e.exit_code(), exit::USAGE);
    let oom = err("hipDeviceSetLimit", hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory");
    let e = stack_error(oom, 1 << 20, opt);
    assert!(e.to_string().contains("failed with hipErrorOutOfMemory: the device cannot reserve"), "{e}");
    assert_eq!(e.exit_code(), exit::USAGE);
    let e = stack_error(err("hipDeviceSetLimit", 999, "hipErrorUnknown", ""), 1 << 20, opt);
    assert_eq!(e.to_string(), "hipDeviceSetLimit(hipLimitStackSize) failed: hipErrorUnknown. lower --call-stack-size");
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
}

#[test]
fn stream_errors_are_faults_with_hints() {
    let desc = "an illegal memory access was encountered";
    let illegal = err("hipStreamQuery", hipErrorIllegalAddress, "hipErrorIllegalAddress", desc);
    let e = fault(illegal, 32768);
    assert_eq!(
        e.to_string(),
        "the GPU kernel failed: hipErrorIllegalAddress (an illegal memory access was encountered). A thread accessed \
         memory it may not (a runtime bug, an unsafe block, or a stack overflow: try a --call-stack-size above 32768)"
    );
    assert_eq!(e.exit_code(), exit::DEVICE_FAULT);
    for c in [hipErrorLaunchFailure, hipErrorAssert] {
        let e = fault(err("hipStreamQuery", c, "n", ""), 0);
        assert_eq!(e.to_string(), "the GPU kernel failed: n. A thread trapped (abort, an unreachable path) or faulted");
    }
    let e = fault(err("hipStreamQuery", 999, "hipErrorUnknown", ""), 0);
    assert!(matches!(&e, BackendError::Fault { hint, .. } if hint.is_empty()), "{e:?}");
    assert_eq!(e.to_string(), "the GPU kernel failed: hipErrorUnknown");
}
