//! The HIP table against the real HIP headers: the generated C file must be
//! committed as generated, and must compile against `<hip/hip_runtime_api.h>`
//! (CI installs Debian's `libamdhip64-dev`). Without the header or a C
//! compiler the compile step says why it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("hip-abi-check/check.c")
}

#[test]
fn committed_check_is_current() {
    let generated = launcher::hip::abi_check::c_source();
    let path = committed();
    if std::env::var_os("GPURUN_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is stale: regenerate it with GPURUN_BLESS=1 cargo test -p launcher --test hip_abi",
        path.display()
    );
}

/// The directory holding `hip/hip_runtime_api.h`, if any.
fn hip_include() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("HIP_INCLUDE") {
        dirs.push(d.into());
    }
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            dirs.push(PathBuf::from(d).join("include"));
        }
    }
    dirs.extend(["/opt/rocm/include".into(), "/usr/include".into()]);
    dirs.into_iter().find(|d| d.join("hip/hip_runtime_api.h").exists())
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// Compiles C source against the HIP headers; `Err(stderr)` on failure.
fn compile(include: &Path, source: &str, name: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("gpurun-hip-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, source).unwrap();
    let out = Command::new(cc())
        .args(["-fsyntax-only", "-std=c11", "-D__HIP_PLATFORM_AMD__", "-Werror=incompatible-pointer-types"])
        .args(["-Werror=int-conversion", "-Werror=discarded-qualifiers"])
        .arg(format!("-I{}", include.display()))
        .arg(&file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cc()))?;
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

fn skip_reason() -> Option<String> {
    if hip_include().is_none() {
        return Some("no hip/hip_runtime_api.h (install libamdhip64-dev, or set HIP_INCLUDE)".into());
    }
    if Command::new(cc()).arg("--version").output().is_err() {
        return Some(format!("no C compiler ({})", cc()));
    }
    None
}

#[test]
fn table_matches_the_real_headers() {
    if let Some(why) = skip_reason() {
        println!("SKIPPED: HIP header check: {why}");
        return;
    }
    let include = hip_include().unwrap();
    let source = launcher::hip::abi_check::c_source();
    if let Err(e) = compile(&include, &source, "check.c") {
        panic!("the HIP table disagrees with {}/hip/hip_runtime_api.h:\n{e}", include.display());
    }
    println!("HIP header check passed against {}", include.display());
}

#[test]
fn the_check_catches_a_wrong_signature() {
    if let Some(why) = skip_reason() {
        println!("SKIPPED: HIP header negative control: {why}");
        return;
    }
    let include = hip_include().unwrap();
    let base = "#include <stddef.h>\n#include <hip/hip_runtime_api.h>\n";
    let wrong_arg = format!("{base}hipError_t (*p)(int) = hipInit;\n");
    assert!(compile(&include, &wrong_arg, "wrong_arg.c").is_err(), "a wrong parameter type must not compile");
    let wrong_const = format!("{base}hipError_t (*p)(void*, const char*) = hipModuleGetFunction;\n");
    assert!(compile(&include, &wrong_const, "wrong_arity.c").is_err(), "a wrong signature must not compile");
    let wrong_value = format!("{base}_Static_assert(hipErrorNotReady == 601, \"x\");\n");
    assert!(compile(&include, &wrong_value, "wrong_value.c").is_err(), "a wrong constant must not compile");
}
