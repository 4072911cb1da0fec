//! `gpurun doctor`: everything the toolchain needs, each with the fix.
use crate::paths::Paths;
use crate::setup;
use crate::Vendor;

/// One check: what was looked at, and either what was found or how to fix it.
/// `result` is a line of the report, not an error to act on: a failed check
/// holds the text to print (often a fix built here), so it stays a `String`;
/// the toolchain's [`crate::Error`]s that end up in it are turned into text.
pub struct Check {
    pub what: String,
    pub result: Result<String, String>,
}

/// The toolchain checks (the launcher adds the GPU driver checks).
pub fn toolchain_checks(paths: &Paths) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut add = |what: &str, result: Result<String, String>| checks.push(Check { what: what.to_string(), result });
    let channel = setup::pinned_channel(paths).map_err(|e| e.to_string());
    add("pinned nightly (rust-toolchain.toml)", channel.clone());
    let sysroot = channel.as_ref().map_err(Clone::clone).and_then(|c| {
        std::process::Command::new("rustup")
            .args(["run", c, "rustc", "--print", "sysroot"])
            .output()
            .map_err(|e| format!("rustup not found ({e}): install it from https://rustup.rs"))
            .and_then(|o| {
                if o.status.success() {
                    Ok(std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
                } else {
                    Err(format!("rustup lacks {c}: run `gpurun setup` (it installs it) or `rustup toolchain install {c}`"))
                }
            })
    });
    add("pinned toolchain installed", sysroot.as_ref().map(|s| s.display().to_string()).map_err(Clone::clone));
    if let Ok(s) = &sysroot {
        let src = s.join("lib/rustlib/src/rust/library/std");
        add(
            "rust-src component",
            if src.exists() { Ok(src.display().to_string()) } else { Err("run `rustup component add rust-src`".into()) },
        );
        add(
            "llvm-tools component (llc, opt, llvm-link, llvm-objdump)",
            setup::llvm_bin(s).map(|b| b.display().to_string()).ok_or_else(|| "run `rustup component add llvm-tools`".into()),
        );
    }
    add(
        "std port (new files and patches)",
        crate::patch::Port::read(&paths.std_port)
            .map(|p| format!("{} ({} files, {} patches)", paths.std_port.display(), p.sources.len(), p.patches.len()))
            .map_err(|e| e.to_string()),
    );
    for v in [Vendor::Amd, Vendor::Nvidia] {
        let spec = paths.target_spec(v);
        add(
            &format!("target spec {}", v.target_name()),
            if spec.exists() { Ok(spec.display().to_string()) } else { Err("missing: restore targets/*.json from git".into()) },
        );
    }
    add(
        "patched toolchain",
        match setup::is_current(paths) {
            Ok(true) => Ok(format!("{} (current)", paths.toolchain.display())),
            Ok(false) if paths.toolchain.exists() => Err("stale (the std port or the runtime changed): run `gpurun setup`".into()),
            Ok(false) => Err("not made yet: run `gpurun setup`".into()),
            Err(e) => Err(e.to_string()),
        },
    );
    add(
        "GPU linker (gpu-ld)",
        if paths.gpu_linker().exists() { Ok(paths.gpu_linker().display().to_string()) } else { Err("not installed: run `gpurun setup`".into()) },
    );
    checks
}
