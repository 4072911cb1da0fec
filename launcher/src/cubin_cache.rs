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

/// How `gpurun run` starts its note that it reuses a cached cubin (the test
/// harness driver leaves these notes out of a test's captured output).
pub const CACHED_CUBIN_NOTE: &str = "gpurun: using the cached cubin of ";

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
    short_hex(&h.finalize())
}

/// The first 16 bytes of a digest in hex: the names of the cache's files.
fn short_hex(digest: &[u8]) -> String {
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `path` whole, through a temporary file renamed over
/// it, so a concurrent run never reads half a file; the temporary file is
/// removed if that fails.
fn store_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let stored = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
        .and_then(|()| std::fs::write(&tmp, bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if stored.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    stored
}

/// How the cubin came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Cached,
    Compiled(Duration),
}

/// The cubin for `ptx` on `arch` (`sm_90`), from the cache or from `ptxas`;
/// `Ok(None)`, having said why, when there is no `ptxas` to use (the
/// driver's JIT then compiles).
/// `name` is what progress messages call the program.
pub fn cubin_for(
    ptx: &[u8],
    name: &str,
    arch: &str,
    driver_version: i32,
    policy: CachePolicy,
) -> Result<Option<(Vec<u8>, Source)>, String> {
    let Some(ptxas) = find_ptxas() else {
        eprintln!("gpurun: no ptxas found: the driver compiles {name} for {arch} (its JIT cache keeps it)");
        return Ok(None);
    };
    let ptxas_says = ptxas_version_memo(&ptxas, policy)?;
    if let Some((major, minor)) = ptxas_release(&ptxas_says)
        && major * 1000 + minor * 10 > driver_version
    {
        // A newer ptxas may write cubins an older driver refuses; its JIT
        // takes the PTX.
        eprintln!(
            "gpurun: {} is CUDA {major}.{minor}, newer than the driver's CUDA {}.{}: the driver compiles {name}",
            ptxas.display(),
            driver_version / 1000,
            driver_version % 1000 / 10
        );
        return Ok(None);
    }
    // How the cubin is made is part of the key (a whole-program and a split
    // compile differ).
    let version = format!("{ptxas_says}; {COMPILE_SCHEME}");
    let key = cache_key(ptx, arch, driver_version, &version);
    let dir = cache_dir();
    let cached = dir.as_ref().map(|d| d.join(format!("{key}-{arch}.cubin")));
    if policy == CachePolicy::Use
        && let Some(path) = &cached
        && let Ok(bytes) = std::fs::read(path)
    {
        return Ok(Some((bytes, Source::Cached)));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = part_count(cores)?;
    let work = tempdir()?;
    let note = if policy == CachePolicy::Use { "first run only" } else { "--no-cache" };
    let what = format!("compiling {name} for {arch} with ptxas ({note})");
    let start = Instant::now();
    let nvlink = ptxas.parent().map(|d| d.join("nvlink")).filter(|p| p.is_file());
    let bytes = match nvlink {
        Some(nvlink) => match compile_split(&ptxas, &nvlink, ptx, arch, parts, cores, &work, &what) {
            Ok(b) => Ok(b),
            Err(e) => {
                eprintln!("gpurun: warning: the split compile failed ({e}); compiling the whole program at once");
                compile_whole(&ptxas, ptx, arch, &work, &what)
            }
        },
        None => compile_whole(&ptxas, ptx, arch, &work, &what),
    };
    let _ = std::fs::remove_dir_all(&work);
    let bytes = bytes?;
    let took = start.elapsed();
    if policy == CachePolicy::Use
        && let Some(path) = &cached
    {
        if let Err(e) = store_whole(path, &bytes) {
            eprintln!("gpurun: warning: could not store the cubin in {}: {e}", path.display());
        }
    }
    Ok(Some((bytes, Source::Compiled(took))))
}

/// `ptxas` on the whole module: the fallback where `nvlink` is missing or
/// the module cannot be split.
fn compile_whole(ptxas: &Path, ptx: &[u8], arch: &str, work: &Path, what: &str) -> Result<Vec<u8>, String> {
    let (input, output) = (work.join("whole.ptx"), work.join("whole.cubin"));
    std::fs::write(&input, ptx).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={arch}")).args(line_info(ptx)).arg("-o").arg(&output).arg(&input);
    run_with_progress(vec![cmd], 1, what)?;
    std::fs::read(&output).map_err(|e| format!("cannot read {}: {e}", output.display()))
}

/// The module split into parts ([`gpu_toolchain::ptx_parts`]), compiled by
/// `ptxas -c`, one process per core at a time, then linked by `nvlink`.
#[allow(clippy::too_many_arguments)]
fn compile_split(ptxas: &Path, nvlink: &Path, ptx: &[u8], arch: &str, parts: usize, jobs: usize, work: &Path, what: &str) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(ptx).map_err(|e| format!("the PTX is not UTF-8: {e}"))?;
    let (parts, max_registers) = gpu_toolchain::ptx_parts::split(text, parts).map_err(|e| e.to_string())?;
    let mut compiles = Vec::new();
    let mut objects = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let (input, object) = (work.join(format!("part{i}.ptx")), work.join(format!("part{i}.o")));
        std::fs::write(&input, part).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
        let mut cmd = Command::new(ptxas);
        cmd.arg("-c").arg(format!("-arch={arch}")).args(line_info(ptx));
        if let Some(n) = max_registers {
            // `.maxnreg` caps the kernel; under -c its callees need their own cap.
            // (ptxas reads this option's value as the next argument, not after `=`.)
            cmd.arg("--device-function-maxrregcount").arg(n.to_string());
        }
        cmd.arg("-o").arg(&object).arg(&input);
        compiles.push(cmd);
        objects.push(object);
    }
    run_with_progress(compiles, jobs, what)?;
    let output = work.join("linked.cubin");
    let mut link = Command::new(nvlink);
    link.arg(format!("-arch={arch}")).arg("-o").arg(&output).args(&objects);
    let out = link.output().map_err(|e| format!("cannot run {}: {e}", nvlink.display()))?;
    if !out.status.success() {
        return Err(format!("nvlink failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    std::fs::read(&output).map_err(|e| format!("cannot read {}: {e}", output.display()))
}

/// `-lineinfo` where the PTX has line info (`.loc`, built with `debug =
/// "line-tables-only"` or more): the cubin then maps its code to source
/// lines for the profilers (`ncu`) and `compute-sanitizer`.
fn line_info(ptx: &[u8]) -> Option<&'static str> {
    ptx.windows(6).any(|w| w == b"\t.loc\t").then_some("-lineinfo")
}

/// Names the way cubins are made, for the cache key: change it when that changes.
const COMPILE_SCHEME: &str = "ptxas -c per part, nvlink (ptx_parts v3: balanced by size^1.5, each part declaring what it names)";

/// Parts per core: more parts than cores, handed out as cores free up, so
/// that a part whose `ptxas` takes longer than its estimate delays the
/// whole compile by less. Each part costs some `ptxas` time of its own
/// (real-crates, 16 cores: 69 s of ptxas in 16 parts, 84 s in 48); 2 and
/// 3 per core loaded it equally fast on the H100's host
/// (bench-results/size-and-load/2026-11-24-first-load-parts/).
const PARTS_PER_CORE: usize = 2;

/// Parts a module is split into at most (one `ptxas` process each).
const MAX_PARTS: usize = 96;

/// How many parts to split into: `$GPURUN_PTXAS_PARTS` if set (for
/// measuring), else [`PARTS_PER_CORE`] per core, at most [`MAX_PARTS`].
fn part_count(cores: usize) -> Result<usize, String> {
    match std::env::var("GPURUN_PTXAS_PARTS") {
        Ok(v) => v.parse::<usize>().ok().filter(|&n| n > 0).ok_or(format!("GPURUN_PTXAS_PARTS={v}: expected a number of parts above 0")),
        Err(_) => Ok((cores * PARTS_PER_CORE).min(MAX_PARTS)),
    }
}

/// `(13, 0)` from `ptxas --version`'s "Cuda compilation tools, release 13.0, V13.0.88".
fn ptxas_release(version: &str) -> Option<(i32, i32)> {
    let rest = &version[version.find("release ")? + "release ".len()..];
    let (major, rest) = rest.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((major.trim().parse().ok()?, minor.parse().ok()?))
}

/// [`ptxas_version`], remembered in the cache directory per `ptxas` file
/// (its path, size, modification time and inode): running `ptxas --version`
/// costs a cached start 3–4 ms, more than the rest of the cache lookup.
/// A changed or replaced `ptxas` has another memo; `--no-cache` asks afresh.
fn ptxas_version_memo(ptxas: &Path, policy: CachePolicy) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let memo = match (policy, cache_dir(), std::fs::metadata(ptxas)) {
        (CachePolicy::Use, Some(dir), Ok(m)) => {
            let id = format!("{}\0{}\0{}\0{}\0{}", ptxas.display(), m.len(), m.mtime(), m.mtime_nsec(), m.ino());
            Some(dir.join(format!("ptxas-{}.version", short_hex(&Sha256::digest(id.as_bytes())))))
        }
        _ => None,
    };
    if let Some(path) = &memo
        && let Ok(said) = std::fs::read_to_string(path)
        && !said.is_empty()
    {
        return Ok(said);
    }
    let said = ptxas_version(ptxas)?;
    if let Some(path) = &memo {
        // A failure only costs the next start another `ptxas --version`.
        let _ = store_whole(path, said.as_bytes());
    }
    Ok(said)
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

/// Runs the compiles, `jobs` at a time in the order given, saying what
/// they do and, on a terminal, how far they are (parts done and seconds),
/// so a long compile never looks like a hang. Every command must succeed.
fn run_with_progress(cmds: Vec<Command>, jobs: usize, what: &str) -> Result<(), String> {
    let tty = std::io::stderr().is_terminal();
    let total = cmds.len();
    let at_once = if total > jobs { format!(", {jobs} at a time") } else { String::new() };
    eprintln!("gpurun: {what}{}...", if total > 1 { format!(", {total} parts{at_once}") } else { String::new() });
    let start = Instant::now();
    // Workers take the next command as soon as theirs ends.
    let queue = std::sync::Mutex::new(cmds.into_iter());
    let (finished, results) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            let (queue, finished) = (&queue, finished.clone());
            scope.spawn(move || {
                loop {
                    let Some(mut cmd) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else { break };
                    let result = match cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output() {
                        Ok(out) if out.status.success() => Ok(()),
                        Ok(out) => Err(format!("ptxas failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim())),
                        Err(e) => Err(format!("cannot run ptxas: {e}")),
                    };
                    if result.is_err() {
                        // One failure fails the compile: start no more.
                        queue.lock().unwrap_or_else(|e| e.into_inner()).by_ref().for_each(drop);
                    }
                    if finished.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(finished);
        let mut failure = None;
        let (mut done, mut last_tick) = (0, 0);
        while done < total {
            match results.recv_timeout(Duration::from_millis(250)) {
                Ok(result) => {
                    done += 1;
                    if let Err(e) = result {
                        failure.get_or_insert(e);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let secs = start.elapsed().as_secs();
            if secs != last_tick && (tty || secs % 10 == 0) {
                last_tick = secs;
                let parts = if total > 1 { format!("{done}/{total} parts, ") } else { String::new() };
                if tty {
                    eprint!("\rgpurun: {what}: {parts}{secs} s");
                } else {
                    eprintln!("gpurun: {what}: {parts}{secs} s");
                }
            }
        }
        if tty && last_tick > 0 {
            eprintln!();
        }
        match failure {
            Some(f) => Err(f),
            None => {
                eprintln!("gpurun: compiled in {:.1} s", start.elapsed().as_secs_f64());
                Ok(())
            }
        }
    })
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
    fn ptxas_release_from_its_version_text() {
        let v = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0";
        assert_eq!(ptxas_release(v), Some((13, 0)));
        assert_eq!(ptxas_release("Cuda compilation tools, release 12.8, V12.8.93"), Some((12, 8)));
        assert_eq!(ptxas_release("fake 1.0"), None);
    }

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
    fn ptxas_says_its_version_once_per_file() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("gpurun-ptxas-memo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let ptxas = root.join("ptxas");
        let asked = root.join("asked");
        let write_tool = |version: &str| {
            std::fs::write(&ptxas, format!("#!/bin/sh\necho x >> {}\necho '{version}'\n", asked.display())).unwrap();
            std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let asks = || std::fs::read_to_string(&asked).map_or(0, |s| s.lines().count());
        write_tool("fake 1.0");
        // The memo lives in the cache directory; this test names none of
        // its own, so it passes the directory by the variable the other
        // cache test also sets: run them apart with a lock.
        let _serial = ENV_LOCK.lock().unwrap();
        // SAFETY: serialised with the other test that sets this variable.
        unsafe { std::env::set_var("GPURUN_CACHE_DIR", root.join("cache")) };
        assert_eq!(ptxas_version_memo(&ptxas, CachePolicy::Use).unwrap(), "fake 1.0");
        assert_eq!(ptxas_version_memo(&ptxas, CachePolicy::Use).unwrap(), "fake 1.0");
        assert_eq!(asks(), 1, "the second start read the memo");
        // --no-cache asks again and writes nothing.
        assert_eq!(ptxas_version_memo(&ptxas, CachePolicy::Bypass).unwrap(), "fake 1.0");
        assert_eq!(asks(), 2);
        // Another ptxas in the same place (another size) is asked afresh.
        write_tool("fake 2.0.1");
        assert_eq!(ptxas_version_memo(&ptxas, CachePolicy::Use).unwrap(), "fake 2.0.1");
        assert_eq!(ptxas_version_memo(&ptxas, CachePolicy::Use).unwrap(), "fake 2.0.1");
        assert_eq!(asks(), 3);
        unsafe { std::env::remove_var("GPURUN_CACHE_DIR") };
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The tests that set `GPURUN_CACHE_DIR` run one at a time.
    static ENV_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// One test for both paths: they set process-wide variables.
    #[test]
    fn a_fake_ptxas_compiles_once_then_the_cache_answers() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("gpurun-cubin-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let tool = |name: &str, body: &str| {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        };
        // Stand-ins that log their arguments, and "compile" by copying / "link" by concatenating.
        let log = root.join("log");
        let ptxas = tool(
            "ptxas",
            &format!(
                "[ \"$1\" = --version ] && {{ echo fake 1.0; exit 0; }}\necho \"$*\" >> {}\n\
                 out=; in=; while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift;; -*) ;; *) in=$1;; esac; shift; done\n\
                 cp \"$in\" \"$out\"\n",
                log.display()
            ),
        );
        let cache = root.join("cache");
        let _serial = ENV_LOCK.lock().unwrap();
        // SAFETY: this test alone sets GPURUN_PTXAS; GPURUN_CACHE_DIR is
        // serialised by ENV_LOCK.
        unsafe {
            std::env::set_var("GPURUN_PTXAS", &ptxas);
            std::env::set_var("GPURUN_CACHE_DIR", &cache);
        }
        let compiles = || std::fs::read_to_string(&log).map_or(0, |s| s.lines().count());
        // No nvlink beside ptxas: the whole module at once.
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

        // With nvlink: parts compiled with -c and the kernel's register cap, then linked.
        tool("nvlink", "out=; ins=; while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift;; -*) ;; *) ins=\"$ins $1\";; esac; shift; done\ncat $ins > \"$out\"\n");
        let ptx = ".version 7.8\n.target sm_90\n.address_size 64\n\
                   .visible .entry __gpu_start(\n)\n.maxnreg 64\n{\n\tcall.uni f, ();\n\tret;\n}\n\
                   .func f()\n{\n\tcall.uni g, ();\n\tret;\n}\n.func g()\n{\n\tret;\n}\n";
        let before = compiles();
        let (bytes, _) = cubin_for(ptx.as_bytes(), "b", "sm_90", 13000, CachePolicy::Use).unwrap().unwrap();
        let linked = String::from_utf8(bytes).unwrap();
        let parts = compiles() - before;
        // Two parts per core, at most one per function: three here.
        assert_eq!(parts, 3);
        assert_eq!(linked.matches(".visible .entry __gpu_start(").count(), 1, "{linked}");
        assert_eq!(linked.matches(".visible .func g()\n{").count(), 1, "{linked}");
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(calls.lines().skip(before).all(|l| l.starts_with("-c -arch=sm_90 --device-function-maxrregcount 64 ")), "{calls}");
        // GPURUN_PTXAS_PARTS chooses the count.
        unsafe { std::env::set_var("GPURUN_PTXAS_PARTS", "2") };
        let before = compiles();
        cubin_for(ptx.as_bytes(), "b", "sm_90", 13000, CachePolicy::Bypass).unwrap().unwrap();
        assert_eq!(compiles() - before, 2);
        unsafe { std::env::set_var("GPURUN_PTXAS_PARTS", "none") };
        let e = cubin_for(ptx.as_bytes(), "b", "sm_90", 13000, CachePolicy::Bypass).unwrap_err();
        assert!(e.contains("GPURUN_PTXAS_PARTS=none"), "{e}");
        unsafe { std::env::remove_var("GPURUN_PTXAS_PARTS") };
        // A part that ptxas refuses fails the compile with ptxas's words (the
        // whole-program fallback then refuses it too).
        let picky = tool(
            "picky/ptxas",
            "[ \"$1\" = --version ] && { echo fake 1.0; exit 0; }\nfor a; do in=$a; done\n\
             if grep -q 'call.uni g' \"$in\"; then echo \"$in: error: no g today\" >&2; exit 1; fi\n",
        );
        std::fs::copy(root.join("nvlink"), root.join("picky/nvlink")).unwrap();
        unsafe { std::env::set_var("GPURUN_PTXAS", &picky) };
        let e = cubin_for(ptx.as_bytes(), "b", "sm_90", 13000, CachePolicy::Bypass).unwrap_err();
        assert!(e.contains("ptxas failed") && e.contains("error: no g today"), "{e}");
        // A ptxas newer than the driver is left alone: the driver's JIT compiles.
        let newer = tool("ptxas-newer", "echo 'Cuda compilation tools, release 99.0, V99.0.1'\n");
        unsafe { std::env::set_var("GPURUN_PTXAS", &newer) };
        assert!(cubin_for(ptx.as_bytes(), "b", "sm_90", 13000, CachePolicy::Use).unwrap().is_none());
        unsafe {
            std::env::remove_var("GPURUN_PTXAS");
            std::env::remove_var("GPURUN_CACHE_DIR");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// With a real `ptxas` (`GPURUN_PTXAS`, or found as usual) and a program's
/// PTX in `GPURUN_TEST_PTX`: the split compile links a cubin that has the
/// kernel. Run by scripts/test.sh where it installed CUDA's compiler tools.
#[cfg(test)]
mod real_ptxas {
    #[test]
    #[ignore = "needs ptxas and nvlink, and GPURUN_TEST_PTX"]
    fn split_compile_of_a_real_program_links_a_cubin_with_the_kernel() {
        let ptx_path = std::env::var_os("GPURUN_TEST_PTX").expect("GPURUN_TEST_PTX names a PTX file");
        let ptx = std::fs::read(&ptx_path).unwrap();
        let ptxas = super::find_ptxas().expect("ptxas");
        let nvlink = ptxas.parent().unwrap().join("nvlink");
        let work = super::tempdir().unwrap();
        let start = std::time::Instant::now();
        let cubin = super::compile_split(&ptxas, &nvlink, &ptx, "sm_90", 3 * 4, 4, &work, "test").map_err(|e| format!("{e} (parts kept in {})", work.display())).unwrap();
        eprintln!("{} bytes of PTX -> {} bytes of cubin in {:.1} s", ptx.len(), cubin.len(), start.elapsed().as_secs_f64());
        let _ = std::fs::remove_dir_all(&work);
        let code = crate::codeobj::CodeObject::from_bytes(std::path::Path::new("linked.cubin"), cubin).unwrap();
        assert!(matches!(code.kind, crate::codeobj::Kind::Cubin { .. }), "{:?}", code.kind);
        let names = crate::codeobj::elf_symbol_names(&code.bytes);
        assert!(names.iter().any(|n| n == rt_abi::symbols::KERNEL_ENTRY), "no kernel among {} symbols", names.len());
    }
}
