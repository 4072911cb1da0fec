//! PTX compiled ahead of the launch, once: `ptxas` turns a program's PTX
//! into a cubin for the device's arch, and the cubin is kept in the user's
//! cache directory, keyed by the PTX's content, the arch, the driver and the
//! `ptxas` version. A cached load reads the cubin and compiles nothing.
//! Without `ptxas` the driver's JIT compiles the PTX at load (with its own
//! cache, `~/.nv/ComputeCache`).
//!
//! Why: the driver's JIT shows no progress and compiles on every process
//! whose JIT cache misses; `ptxas` is the same compiler, run where we can
//! say what is happening and keep the result.
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// What to do about the cache on this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// Read the cache, compile and store on a miss.
    Use,
    /// Compile afresh and store nothing (`gpurun run --no-cache`).
    Bypass,
}

/// Where cubins are kept: `$GPURUN_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/gpurun/cubin`, else `~/.cache/gpurun/cubin`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GPURUN_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("gpurun").join("cubin"))
}

/// `ptxas`: `$GPURUN_PTXAS`, else on `PATH`, else under `$CUDA_HOME`,
/// `$CUDA_PATH` or `/usr/local/cuda`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GPURUN_PTXAS") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let homes = ["CUDA_HOME", "CUDA_PATH"].into_iter().filter_map(std::env::var_os).map(PathBuf::from);
    on_path
        .chain(homes.map(|h| h.join("bin")))
        .chain(std::iter::once(PathBuf::from("/usr/local/cuda/bin")))
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

/// The cache key: every input that changes the cubin.
pub fn cache_key(ptx: &[u8], arch: &str, driver_version: i32, ptxas_version: &str) -> String {
    let mut h = Sha256::new();
    for part in [ptx, arch.as_bytes(), driver_version.to_string().as_bytes(), ptxas_version.as_bytes()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// How the cubin came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Cached,
    Compiled(Duration),
}

/// The cubin for `ptx` on `arch` (`sm_90`), from the cache or from `ptxas`;
/// `Ok(None)` when there is no `ptxas` (the driver's JIT then compiles).
/// `name` is what progress messages call the program.
pub fn cubin_for(
    ptx: &[u8],
    name: &str,
    arch: &str,
    driver_version: i32,
    policy: CachePolicy,
) -> Result<Option<(Vec<u8>, Source)>, String> {
    let Some(ptxas) = find_ptxas() else { return Ok(None) };
    let version = ptxas_version(&ptxas)?;
    let key = cache_key(ptx, arch, driver_version, &version);
    let dir = cache_dir();
    let cached = dir.as_ref().map(|d| d.join(format!("{key}-{arch}.cubin")));
    if policy == CachePolicy::Use
        && let Some(path) = &cached
        && let Ok(bytes) = std::fs::read(path)
    {
        return Ok(Some((bytes, Source::Cached)));
    }
    let work = tempdir()?;
    let (input, output) = (work.join("in.ptx"), work.join("out.cubin"));
    std::fs::write(&input, ptx).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let note = if policy == CachePolicy::Use { "first run only" } else { "--no-cache" };
    let start = Instant::now();
    let result = run_with_progress(
        Command::new(&ptxas).arg(format!("-arch={arch}")).arg("-o").arg(&output).arg(&input),
        &format!("compiling {name} for {arch} with ptxas ({note})"),
    );
    let bytes = result.and_then(|()| std::fs::read(&output).map_err(|e| format!("cannot read {}: {e}", output.display())));
    let _ = std::fs::remove_dir_all(&work);
    let bytes = bytes?;
    let took = start.elapsed();
    if policy == CachePolicy::Use
        && let Some(path) = &cached
    {
        // Written whole and renamed: a concurrent run never reads half a cubin.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let stored = std::fs::create_dir_all(path.parent().expect("a file in the cache dir"))
            .and_then(|()| std::fs::write(&tmp, &bytes))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = stored {
            let _ = std::fs::remove_file(&tmp);
            eprintln!("gpurun: warning: could not store the cubin in {}: {e}", path.display());
        }
    }
    Ok(Some((bytes, Source::Compiled(took))))
}

fn ptxas_version(ptxas: &Path) -> Result<String, String> {
    let out = Command::new(ptxas).arg("--version").output().map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    if !out.status.success() {
        return Err(format!("{} --version failed", ptxas.display()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn tempdir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("gpurun-ptxas-{}-{}", std::process::id(), crate::run::random_seed()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Runs `cmd`, saying what it does and, on a terminal, how long it has been
/// at it (a count of seconds), so a long compile never looks like a hang.
fn run_with_progress(cmd: &mut Command, what: &str) -> Result<(), String> {
    let tty = std::io::stderr().is_terminal();
    eprintln!("gpurun: {what}...");
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().map_err(|e| format!("cannot run ptxas: {e}"))?;
    let stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut last_tick = 0;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        let secs = start.elapsed().as_secs();
        if secs != last_tick && (tty || secs % 10 == 0) {
            last_tick = secs;
            if tty {
                eprint!("\rgpurun: {what}: {secs} s");
            } else {
                eprintln!("gpurun: {what}: {secs} s");
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    if tty && last_tick > 0 {
        eprintln!();
    }
    let log = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("ptxas failed ({status}):\n{}", log.trim()));
    }
    eprintln!("gpurun: compiled in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// What the cache holds: (entries, bytes).
pub fn usage(dir: &Path) -> (usize, u64) {
    let Ok(rd) = std::fs::read_dir(dir) else { return (0, 0) };
    rd.filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cubin"))
        .fold((0, 0), |(n, b), e| (n + 1, b + e.metadata().map_or(0, |m| m.len())))
}

/// Removes the cache; returns what it held.
pub fn clean(dir: &Path) -> std::io::Result<(usize, u64)> {
    let held = usage(dir);
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(held),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((0, 0)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_every_input() {
        let base = cache_key(b"ptx", "sm_90", 13000, "ptxas 13.0");
        assert_eq!(base.len(), 32);
        assert_eq!(base, cache_key(b"ptx", "sm_90", 13000, "ptxas 13.0"));
        for other in [
            cache_key(b"ptx2", "sm_90", 13000, "ptxas 13.0"),
            cache_key(b"ptx", "sm_80", 13000, "ptxas 13.0"),
            cache_key(b"ptx", "sm_90", 12080, "ptxas 13.0"),
            cache_key(b"ptx", "sm_90", 13000, "ptxas 12.8"),
            // Parts are length-prefixed: moving bytes between them changes the key.
            cache_key(b"ptxs", "m_90", 13000, "ptxas 13.0"),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn a_fake_ptxas_compiles_once_then_the_cache_answers() {
        let root = std::env::temp_dir().join(format!("gpurun-cubin-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // A stand-in for ptxas that counts its compiles and "compiles" by copying.
        let ptxas = root.join("ptxas");
        let count = root.join("count");
        std::fs::write(
            &ptxas,
            format!(
                "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo fake 1.0; exit 0; }}\necho x >> {}\n\
                 out=; in=; while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift;; -arch=*) ;; *) in=$1;; esac; shift; done\n\
                 cp \"$in\" \"$out\"\n",
                count.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cache = root.join("cache");
        // SAFETY: this test alone reads these variables (cubin_for and
        // cache_dir), and no other test sets them.
        unsafe {
            std::env::set_var("GPURUN_PTXAS", &ptxas);
            std::env::set_var("GPURUN_CACHE_DIR", &cache);
        }
        let compiles = || std::fs::read_to_string(&count).map_or(0, |s| s.lines().count());
        let (bytes, how) = cubin_for(b"PTX-A", "a", "sm_90", 13000, CachePolicy::Use).unwrap().unwrap();
        assert_eq!((bytes.as_slice(), compiles()), (&b"PTX-A"[..], 1));
        assert!(matches!(how, Source::Compiled(_)));
        let (bytes, how) = cubin_for(b"PTX-A", "a", "sm_90", 13000, CachePolicy::Use).unwrap().unwrap();
        assert_eq!((bytes.as_slice(), how, compiles()), (&b"PTX-A"[..], Source::Cached, 1));
        // Another arch, or --no-cache, compiles again.
        cubin_for(b"PTX-A", "a", "sm_80", 13000, CachePolicy::Use).unwrap().unwrap();
        assert_eq!(compiles(), 2);
        let (_, how) = cubin_for(b"PTX-A", "a", "sm_90", 13000, CachePolicy::Bypass).unwrap().unwrap();
        assert!(matches!(how, Source::Compiled(_)));
        assert_eq!(compiles(), 3);
        assert_eq!(usage(&cache).0, 2);
        assert_eq!(clean(&cache).unwrap().0, 2);
        assert_eq!(usage(&cache), (0, 0));
        unsafe {
            std::env::remove_var("GPURUN_PTXAS");
            std::env::remove_var("GPURUN_CACHE_DIR");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
