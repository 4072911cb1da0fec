//! Puts the GPU std port (`gpu-toolchain/std/`) into a made `library/` tree: its
//! new files (`library/**`, copied to the same path) and its edits of
//! upstream files (`patches/*.patch`, each a multi-file unified diff in
//! `git diff` form, paths relative to `library/`, applied in name order).
//!
//! Files are replaced, never edited in place: the library tree starts as hard
//! links to the pristine rustup toolchain, and writing through a hard link
//! would corrupt that toolchain.
use crate::error::Error;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One file's part of a multi-file diff.
struct FileDiff<'a> {
    path: String,
    new_file: bool,
    text: &'a str,
}

/// The file diffs of `patch` (the text of the patch file `name`); text before
/// the first `diff --git` (the patch's comment) is skipped.
fn split<'a>(name: &str, patch: &'a str) -> Result<Vec<FileDiff<'a>>, Error> {
    let bad = |why: String| Error::BadPatch { patch: name.to_string(), why };
    let mut starts: Vec<usize> = patch.match_indices("diff --git ").map(|(i, _)| i).filter(|&i| i == 0 || patch.as_bytes()[i - 1] == b'\n').collect();
    if starts.is_empty() {
        return Err(bad("holds no `diff --git` sections".into()));
    }
    starts.push(patch.len());
    let mut out = Vec::new();
    for w in starts.windows(2) {
        let section = &patch[w[0]..w[1]];
        let header = section.lines().next().unwrap_or_default();
        // `diff --git a/PATH b/PATH`
        let path = header
            .strip_prefix("diff --git a/")
            .and_then(|rest| rest.split(" b/").next())
            .ok_or_else(|| bad(format!("malformed diff header: {header}")))?
            .to_string();
        let new_file = section.lines().take(4).any(|l| l.starts_with("new file mode"));
        // The unified diff proper starts at the `--- ` line; sections without
        // one (mode-only changes) carry nothing to apply.
        let Some(body_at) = section.find("\n--- ") else { continue };
        out.push(FileDiff { path, new_file, text: &section[body_at + 1..] });
    }
    Ok(out)
}

/// The std port in `dir`: its new files (under `library/`, sorted) and its
/// patches (`patches/*.patch`, in name order), as paths relative to `dir`.
pub struct Port {
    pub dir: PathBuf,
    pub sources: Vec<PathBuf>,
    pub patches: Vec<PathBuf>,
}

impl Port {
    pub fn read(dir: &Path) -> Result<Port, Error> {
        let rel = |files: Vec<PathBuf>| -> Vec<PathBuf> {
            files.into_iter().map(|f| f.strip_prefix(dir).expect("under the port").to_path_buf()).collect()
        };
        let listed = |sub: &str| files_under(&dir.join(sub)).map_err(Error::io("read", dir.join(sub)));
        let sources = rel(listed("library")?);
        let patches: Vec<_> = rel(listed("patches")?).into_iter().filter(|p| p.extension().is_some_and(|e| e == "patch")).collect();
        if sources.is_empty() || patches.is_empty() {
            return Err(Error::PortIncomplete { dir: dir.to_path_buf() });
        }
        Ok(Port { dir: dir.to_path_buf(), sources, patches })
    }

    /// Every file the port is made of, relative to its folder: sources, then patches.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.sources.iter().chain(&self.patches)
    }

    /// Copies the new files into `library`, then applies the patches in
    /// order. Returns the number of std files written.
    pub fn install(&self, library: &Path) -> Result<usize, Error> {
        for rel in &self.sources {
            let from = self.dir.join(rel);
            let to = library.join(rel.strip_prefix("library").expect("a source"));
            // The port adds files; an upstream file is changed by a patch, so
            // that a newer nightly's change to it is noticed.
            if to.exists() {
                return Err(Error::PortReplacesUpstream { file: from, upstream: to, patches: self.dir.join("patches") });
            }
            replace_file(&to, &fs::read(&from).map_err(Error::io("read", &from))?)?;
        }
        let mut patched = 0;
        for rel in &self.patches {
            let file = self.dir.join(rel);
            let text = fs::read_to_string(&file).map_err(Error::io("read", &file))?;
            patched += apply(&file.display().to_string(), &text, library)?;
        }
        Ok(self.sources.len() + patched)
    }
}

/// Applies `patch` (the text of the patch file `name`) to the tree at
/// `library`. Returns the number of files changed.
pub fn apply(name: &str, patch: &str, library: &Path) -> Result<usize, Error> {
    let diffs = split(name, patch)?;
    for d in &diffs {
        let target = library.join(&d.path);
        let original = if d.new_file {
            String::new()
        } else {
            fs::read_to_string(&target).map_err(|source| Error::PatchTargetMissing {
                patch: name.to_string(),
                file: target.clone(),
                source,
            })?
        };
        let parsed = diffy::Patch::from_str(d.text).map_err(|e| Error::BadPatch {
            patch: name.to_string(),
            why: format!("cannot parse the diff of {}: {e}", d.path),
        })?;
        let patched = diffy::apply(&original, &parsed).map_err(|e| Error::PatchDoesNotApply {
            patch: name.to_string(),
            file: d.path.clone(),
            why: e.to_string(),
        })?;
        replace_file(&target, patched.as_bytes())?;
    }
    Ok(diffs.len())
}

/// The files under `dir`, recursively, sorted.
pub(crate) fn files_under(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `bytes` to `path` through a new inode (write a temp file, rename).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(Error::io("create", dir))?;
    }
    let tmp = path.with_extension("gpu-tmp");
    fs::write(&tmp, bytes).map_err(Error::io("write", &tmp))?;
    fs::rename(&tmp, path).map_err(Error::io("replace", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/x/old.rs b/x/old.rs\nindex 1..2 100644\n--- a/x/old.rs\n+++ b/x/old.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\ndiff --git a/x/new.rs b/x/new.rs\nnew file mode 100644\nindex 0000000..1\n--- /dev/null\n+++ b/x/new.rs\n@@ -0,0 +1 @@\n+fresh\n";

    /// A fresh, empty folder for one test.
    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpu-patch-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn applies_edits_and_new_files_without_touching_hard_links() {
        let dir = temp("apply");
        let pristine = dir.join("pristine.rs");
        write(&pristine, "one\ntwo\n");
        fs::create_dir_all(dir.join("x")).unwrap();
        fs::hard_link(&pristine, dir.join("x/old.rs")).unwrap();
        assert_eq!(apply("test.patch", PATCH, &dir).unwrap(), 2);
        assert_eq!(fs::read_to_string(dir.join("x/old.rs")).unwrap(), "one\ndeux\n");
        assert_eq!(fs::read_to_string(dir.join("x/new.rs")).unwrap(), "fresh\n");
        // The hard-linked original is untouched.
        assert_eq!(fs::read_to_string(&pristine).unwrap(), "one\ntwo\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_patch_that_does_not_fit_is_an_error_naming_the_file() {
        let dir = temp("misfit");
        write(&dir.join("x/old.rs"), "something\nelse\n");
        let err = apply("test.patch", PATCH, &dir).unwrap_err().to_string();
        assert!(err.contains("x/old.rs") && err.contains("test.patch"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A port folder: `library/` sources and `patches/`, each patch with a
    /// comment before its first diff.
    fn port(dir: &Path, patches: &[(&str, &str)]) -> Port {
        write(&dir.join("library/std/src/sys/thing/gpu.rs"), "//! the GPU thing\n");
        for (name, body) in patches {
            write(&dir.join("patches").join(name), &format!("{name}: what it is for.\n\n{body}"));
        }
        write(&dir.join("patches/README.md"), "not a patch\n");
        Port::read(dir).unwrap()
    }

    const FIRST: &str = "diff --git a/std/src/sys/thing/mod.rs b/std/src/sys/thing/mod.rs\n--- a/std/src/sys/thing/mod.rs\n+++ b/std/src/sys/thing/mod.rs\n@@ -1,2 +1,3 @@\n mod unix;\n+mod gpu;\n mod unsupported;\n";
    // Applies only on top of FIRST: shows the order.
    const SECOND: &str = "diff --git a/std/src/sys/thing/mod.rs b/std/src/sys/thing/mod.rs\n--- a/std/src/sys/thing/mod.rs\n+++ b/std/src/sys/thing/mod.rs\n@@ -1,3 +1,3 @@\n mod unix;\n-mod gpu;\n+pub mod gpu;\n mod unsupported;\n";

    #[test]
    fn copies_the_sources_then_applies_the_patches_in_name_order() {
        let dir = temp("port");
        // Written second first: the names give the order.
        let port = port(&dir.join("port"), &[("02-second.patch", SECOND), ("01-first.patch", FIRST)]);
        assert_eq!(port.patches, [PathBuf::from("patches/01-first.patch"), PathBuf::from("patches/02-second.patch")]);
        let library = dir.join("library");
        let pristine = dir.join("pristine.rs");
        write(&pristine, "mod unix;\nmod unsupported;\n");
        fs::create_dir_all(library.join("std/src/sys/thing")).unwrap();
        fs::hard_link(&pristine, library.join("std/src/sys/thing/mod.rs")).unwrap();

        assert_eq!(port.install(&library).unwrap(), 3);
        let read = |p: &str| fs::read_to_string(library.join(p)).unwrap();
        assert_eq!(read("std/src/sys/thing/gpu.rs"), "//! the GPU thing\n");
        assert_eq!(read("std/src/sys/thing/mod.rs"), "mod unix;\npub mod gpu;\nmod unsupported;\n");
        assert_eq!(fs::read_to_string(&pristine).unwrap(), "mod unix;\nmod unsupported;\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_port_patch_that_does_not_apply_names_the_patch_file_and_the_std_file() {
        let dir = temp("port-misfit");
        let port = port(&dir.join("port"), &[("01-first.patch", FIRST)]);
        let library = dir.join("library");
        // Upstream changed the file the patch edits.
        write(&library.join("std/src/sys/thing/mod.rs"), "mod unix;\nmod hermit;\nmod unsupported;\n");
        let err = port.install(&library).unwrap_err().to_string();
        assert!(err.contains("patches/01-first.patch") && err.contains("std/src/sys/thing/mod.rs"), "{err}");
        // Upstream removed it.
        fs::remove_file(library.join("std/src/sys/thing/mod.rs")).unwrap();
        fs::remove_file(library.join("std/src/sys/thing/gpu.rs")).unwrap();
        let err = port.install(&library).unwrap_err().to_string();
        assert!(err.contains("patches/01-first.patch") && err.contains("std/src/sys/thing/mod.rs"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_source_never_replaces_an_upstream_file() {
        let dir = temp("port-clash");
        let port = port(&dir.join("port"), &[("01-first.patch", FIRST)]);
        let library = dir.join("library");
        write(&library.join("std/src/sys/thing/gpu.rs"), "upstream's own\n");
        let err = port.install(&library).unwrap_err().to_string();
        assert!(err.contains("library/std/src/sys/thing/gpu.rs") && err.contains("patch"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
