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

/// `dlopen` messages repeat the path; keep the reason.
fn short_dl_error(msg: &str, path: &str) -> String {
    let m = msg.strip_prefix(&format!("{path}: ")).unwrap_or(msg);
    let m = m.rsplit_once(&format!("{path}: ")).map_or(m, |(_, r)| r);
    if m.contains("cannot open shared object file") && !path.contains('/') {
        "not found by the dynamic loader (LD_LIBRARY_PATH, ld.so.cache)".into()
    } else {
        m.to_string()
    }
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
    fn missing_paths_are_all_reported() {
        let c = vec!["/nonexistent/libfoo.so".to_string(), "libgpurun-test-nonexistent.so".to_string()];
        let tried = load_first(&c).unwrap_err();
        assert_eq!(tried.len(), 2);
        assert_eq!(tried[0].error, "not found");
        assert!(tried[1].error.contains("dynamic loader"), "{:?}", tried[1]);
    }
}
