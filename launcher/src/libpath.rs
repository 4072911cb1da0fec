//! Finding a vendor library at run time, remembering every path tried so a
//! failure can name them all.

use std::path::Path;

/// One path tried and why it failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tried {
    pub path: String,
    pub error: String,
}

/// The paths to try for a library: the override variable's paths alone when
/// it is set (`:`-separated), else `dirs × names` then the bare `names`
/// (searched by the dynamic loader: `LD_LIBRARY_PATH`, `ld.so.cache`).
pub fn candidates(override_var: &str, dirs: &[String], names: &[&str], bare_first: bool) -> Vec<String> {
    if let Some(v) = std::env::var_os(override_var) {
        return v.to_string_lossy().split(':').filter(|s| !s.is_empty()).map(str::to_string).collect();
    }
    let mut out = Vec::new();
    let bare = names.iter().map(|n| n.to_string());
    if bare_first {
        out.extend(bare.clone());
    }
    for d in dirs {
        for n in names {
            let p = format!("{}/{n}", d.trim_end_matches('/'));
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    if !bare_first {
        out.extend(bare);
    }
    out
}

/// Loads the first candidate that opens.
pub fn load_first(candidates: &[String]) -> Result<(libloading::Library, String), Vec<Tried>> {
    let mut tried = Vec::new();
    for c in candidates {
        if c.contains('/') && !Path::new(c).exists() {
            tried.push(Tried { path: c.clone(), error: "not found".into() });
            continue;
        }
        // SAFETY: loading a vendor driver library runs its initialisers; these
        // are the libraries the vendor ships for exactly this use.
        match unsafe { libloading::Library::new(c) } {
            Ok(lib) => return Ok((lib, c.clone())),
            Err(e) => tried.push(Tried { path: c.clone(), error: short_dl_error(&error_chain(&e), c) }),
        }
    }
    Err(tried)
}

/// An error and its sources (libloading puts `dlerror()`'s text in the source).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s = inner.to_string();
        src = inner.source();
    }
    s
}

/// `dlopen` messages repeat the path; keep the reason. A library that is
/// there but needs one that is not (`libamdhip64.so: libhsa-runtime64.so.1:
/// cannot open shared object file`) says so: the loader did find it.
fn short_dl_error(msg: &str, path: &str) -> String {
    let m = msg.strip_prefix(&format!("{path}: ")).unwrap_or(msg);
    let m = m.rsplit_once(&format!("{path}: ")).map_or(m, |(_, r)| r);
    const CANNOT_OPEN: &str = ": cannot open shared object file";
    match m.split_once(CANNOT_OPEN) {
        Some((lib, _)) if !lib.is_empty() && lib != path && !lib.contains(' ') => {
            format!("found, but a library it needs is missing: {m}")
        }
        _ if m.contains("cannot open shared object file") && !path.contains('/') => {
            "not found by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache)".into()
        }
        _ => m.to_string(),
    }
}

/// `name` with the file the loader resolved it to, when it is a bare name
/// (no `/`) of a library this process has mapped: `libamdhip64.so →
/// /usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153`. Otherwise, or where
/// `/proc/self/maps` says nothing, `name` itself.
pub fn with_mapped_file(name: &str) -> String {
    if name.contains('/') {
        return name.to_string();
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    match mapped_file(&maps, name) {
        Some(file) => format!("{name} → {file}"),
        None => name.to_string(),
    }
}

/// The first file in a `/proc/<pid>/maps` text whose file name starts with
/// `name` (the loader follows `libx.so` to `libx.so.5.2.1`).
fn mapped_file<'a>(maps: &'a str, name: &str) -> Option<&'a str> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.starts_with('/') && Path::new(p).file_name().is_some_and(|f| f.to_string_lossy().starts_with(name)))
}

/// `/usr/lib/<arch>-linux-gnu` for this host.
pub fn multiarch_dir() -> String {
    format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_dirs_then_names() {
        // SAFETY-free: use a variable name nobody sets.
        let c = candidates("GPURUN_TEST_UNSET_VAR", &["/a".into(), "/b/".into()], &["x.so", "x.so.1"], false);
        assert_eq!(c, ["/a/x.so", "/a/x.so.1", "/b/x.so", "/b/x.so.1", "x.so", "x.so.1"]);
        let c = candidates("GPURUN_TEST_UNSET_VAR", &["/a".into()], &["x.so"], true);
        assert_eq!(c, ["x.so", "/a/x.so"]);
    }

    #[test]
    fn a_missing_dependency_is_not_a_missing_library() {
        let hsa = "libhsa-runtime64.so.1: cannot open shared object file: No such file or directory";
        // dlopen's texts for a bare name and for a path.
        for (path, msg) in [
            ("libamdhip64.so", hsa.to_string()),
            ("/opt/rocm/lib/libamdhip64.so", format!("/opt/rocm/lib/libamdhip64.so: {hsa}")),
        ] {
            assert_eq!(short_dl_error(&msg, path), format!("found, but a library it needs is missing: {hsa}"));
        }
        let own = "libamdhip64.so: cannot open shared object file: No such file or directory";
        let not_found = "not found by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache)";
        assert_eq!(short_dl_error(own, "libamdhip64.so"), not_found);
        assert_eq!(short_dl_error("/x/lib.so: invalid ELF header", "/x/lib.so"), "invalid ELF header");
    }

    #[test]
    fn bare_names_show_the_file_the_loader_mapped() {
        let maps = "7f00-7f01 r--p 00000000 fe:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7f02-7f03 r-xp 00000000 fe:01 2 /usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153\n\
                    7f04-7f05 rw-p 00000000 00:00 0 [heap]\n";
        assert_eq!(mapped_file(maps, "libamdhip64.so"), Some("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153"));
        assert_eq!(mapped_file(maps, "libcuda.so"), None);
        assert_eq!(with_mapped_file("/opt/rocm/lib/libamdhip64.so"), "/opt/rocm/lib/libamdhip64.so");
        assert_eq!(with_mapped_file("libgpurun-test-unmapped.so"), "libgpurun-test-unmapped.so");
    }

    #[test]
    fn missing_paths_are_all_reported() {
        let c = vec!["/nonexistent/libfoo.so".to_string(), "libgpurun-test-nonexistent.so".to_string()];
        let tried = load_first(&c).unwrap_err();
        assert_eq!(tried.len(), 2);
        assert_eq!(tried[0].error, "not found");
        assert!(tried[1].error.contains("dynamic loader"), "{:?}", tried[1]);
    }
}
