//! `--emulate ARCH`: run AMD code objects on the `amd-emu` ISA emulator,
//! through gpurun's own HIP backend, unchanged. The backend loads
//! `libhip_emu.so` (the `hip-emu` crate, built next to `gpurun`) where it
//! would load `libamdhip64`, and that library answers every HIP call by
//! emulating an AMD GPU of the chosen arch. Emulation proves that our code
//! objects and the launcher's HIP path work; it says nothing of speed.

use std::path::PathBuf;

/// The archs the emulator runs.
pub const ARCHS: [&str; 3] = ["gfx1100", "gfx942", "gfx90a"];

/// The library's file name.
pub const LIBRARY: &str = "libhip_emu.so";

/// Where the emulator library is: `$GPURUN_HIP_EMU_LIB`, else next to the
/// running `gpurun` (cargo puts a workspace's cdylibs beside its binaries),
/// or one folder up (a test binary in `target/*/deps`).
pub fn library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("GPURUN_HIP_EMU_LIB") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find gpurun's own path: {e}"))?;
    let dir = exe.parent().ok_or("gpurun's path has no folder")?;
    let candidates = [dir.join(LIBRARY), dir.join("..").join(LIBRARY)];
    candidates.iter().find(|p| p.exists()).cloned().ok_or_else(|| {
        format!(
            "the emulator library {LIBRARY} is not next to gpurun ({}); build it with \
             `cargo build --release -p hip-emu` (./gpurun does)",
            dir.display()
        )
    })
}

/// Checks `arch` and finds the library: the environment [`enable`] sets.
pub fn environment(arch: &str) -> Result<Vec<(&'static str, String)>, String> {
    if !ARCHS.contains(&arch) {
        return Err(format!("--emulate {arch}: the emulator runs {}", ARCHS.join(", ")));
    }
    let lib = library()?;
    Ok(vec![("GPURUN_HIP_LIB", lib.display().to_string()), ("GPURUN_EMULATE", arch.to_string())])
}

/// Points the HIP backend at the emulator for `arch`. Called by `main`
/// before gpurun starts any thread.
pub fn enable(arch: &str) -> Result<(), String> {
    for (k, v) in environment(arch)? {
        // SAFETY: `main` calls this before any other thread exists, so no
        // thread reads the environment concurrently.
        unsafe { std::env::set_var(k, v) };
    }
    Ok(())
}
