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
