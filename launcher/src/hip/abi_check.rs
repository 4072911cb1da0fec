//! Generates `launcher/hip-abi-check/check.c`: a C file that assigns every
//! real HIP function to a pointer of the signature our Rust table uses and
//! statically asserts the values, offsets and sizes we hard-code. Compiled against
//! `<hip/hip_runtime_api.h>` (CI installs Debian's `libamdhip64-dev`), it
//! fails to compile when our table and the real headers disagree.

use super::sys::{
    CONSTANTS, DEVICE_PROP_BUFFER, GCN_ARCH_NAME_OFFSET_R0000, GCN_ARCH_NAME_OFFSET_R0600, Signature, signatures,
};

/// The `#if` guard for an entry present in HIP majors `since..before`.
fn guard(since: Option<u32>, before: Option<u32>) -> Option<String> {
    match (since, before) {
        (None, None) => None,
        (Some(s), None) => Some(format!("HIP_VERSION_MAJOR >= {s}")),
        (None, Some(b)) => Some(format!("HIP_VERSION_MAJOR < {b}")),
        (Some(s), Some(b)) => Some(format!("HIP_VERSION_MAJOR >= {s} && HIP_VERSION_MAJOR < {b}")),
    }
}

fn guarded(out: &mut String, cond: Option<String>, line: &str) {
    match cond {
        Some(c) => out.push_str(&format!("#if {c}\n{line}\n#endif\n")),
        None => out.push_str(&format!("{line}\n")),
    }
}

fn pointer_decl(s: &Signature) -> String {
    let args = if s.args.is_empty() { "void".to_string() } else { s.args.join(", ") };
    format!("{} (*check_{})({args}) = {};", s.ret, s.name, s.name)
}

/// The C source.
pub fn c_source() -> String {
    let mut c = String::from(
        "/* Generated from launcher/src/hip/sys.rs by launcher/src/hip/abi_check.rs: do not edit.\n \
         * Regenerate with: GPURUN_BLESS=1 cargo test -p launcher --test hip_abi\n \
         * Compile: cc -fsyntax-only -D__HIP_PLATFORM_AMD__ -Werror=incompatible-pointer-types check.c\n */\n\
         #include <stddef.h>\n#include <hip/hip_runtime_api.h>\n\n\
         /* Every entry of the Rust table, at the signature the Rust table uses. */\n",
    );
    for s in signatures() {
        guarded(&mut c, guard(s.versions.0, s.versions.1), &pointer_decl(&s));
    }
    c.push_str("\n/* The values the launcher hard-codes. */\n");
    for (name, value, since) in CONSTANTS {
        let line = format!("_Static_assert((long long)({name}) == {value}LL, \"{name} == {value}\");");
        guarded(&mut c, since.map(|s| format!("HIP_VERSION_MAJOR >= {s}")), &line);
    }
    c.push_str("\n/* Sizes of the types the Rust table passes by value. */\n");
    for (ty, like) in [
        ("hipError_t", "int"),
        ("hipDeviceAttribute_t", "int"),
        ("hipFunction_attribute", "int"),
        ("enum hipLimit_t", "int"),
        ("hipDevice_t", "int"),
        ("hipStream_t", "void*"),
        ("hipModule_t", "void*"),
        ("hipFunction_t", "void*"),
        ("hipDeviceptr_t", "void*"),
    ] {
        c.push_str(&format!("_Static_assert(sizeof({ty}) == sizeof({like}), \"sizeof({ty})\");\n"));
    }
    c.push_str(&format!(
        "\n/* Where the arch name (gcnArchName) lies in the device properties, and that\n \
         * the buffer HIP writes them into (result::PropBuffer) holds the struct. */\n\
         #if HIP_VERSION_MAJOR >= 6\n\
         _Static_assert(offsetof(hipDeviceProp_tR0600, gcnArchName) == {GCN_ARCH_NAME_OFFSET_R0600}, \"R0600 gcnArchName\");\n\
         _Static_assert(sizeof(hipDeviceProp_tR0600) <= {DEVICE_PROP_BUFFER}, \"R0600 fits the buffer\");\n\
         #else\n\
         _Static_assert(offsetof(hipDeviceProp_t, gcnArchName) == {GCN_ARCH_NAME_OFFSET_R0000}, \"R0000 gcnArchName\");\n\
         _Static_assert(sizeof(hipDeviceProp_t) <= {DEVICE_PROP_BUFFER}, \"R0000 fits the buffer\");\n\
         #endif\n"
    ));
    c
}
