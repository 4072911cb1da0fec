//! Applies the std sys-layer patch: one multi-file unified diff in `git diff`
//! form, paths relative to `library/`.
//!
//! Files are replaced, never edited in place: the library tree starts as hard
//! links to the pristine rustup toolchain, and writing through a hard link
//! would corrupt that toolchain.
use std::fs;
use std::path::Path;

/// One file's part of a multi-file diff.
struct FileDiff<'a> {
    path: String,
    new_file: bool,
    text: &'a str,
}

fn split(patch: &str) -> Result<Vec<FileDiff<'_>>, String> {
    let mut starts: Vec<usize> = patch.match_indices("diff --git ").map(|(i, _)| i).filter(|&i| i == 0 || patch.as_bytes()[i - 1] == b'\n').collect();
    if starts.is_empty() {
        return Err("the std patch holds no `diff --git` sections".into());
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
            .ok_or_else(|| format!("malformed diff header: {header}"))?
            .to_string();
        let new_file = section.lines().take(4).any(|l| l.starts_with("new file mode"));
        // The unified diff proper starts at the `--- ` line; sections without
        // one (mode-only changes) carry nothing to apply.
        let Some(body_at) = section.find("\n--- ") else { continue };
        out.push(FileDiff { path, new_file, text: &section[body_at + 1..] });
    }
    Ok(out)
}

/// Applies `patch` to the tree at `library`. Returns the number of files changed.
pub fn apply(patch: &str, library: &Path) -> Result<usize, String> {
    let diffs = split(patch)?;
    for d in &diffs {
        let target = library.join(&d.path);
        let original = if d.new_file {
            String::new()
        } else {
            fs::read_to_string(&target).map_err(|e| format!("std patch: cannot read {}: {e}", target.display()))?
        };
        let parsed = diffy::Patch::from_str(d.text).map_err(|e| format!("std patch: cannot parse the diff of {}: {e}", d.path))?;
        let patched = diffy::apply(&original, &parsed).map_err(|e| {
            format!("std patch does not apply to {} ({e}): is the pinned nightly the one the patch was made for?", d.path)
        })?;
        replace_file(&target, patched.as_bytes())?;
    }
    Ok(diffs.len())
}

/// Writes `bytes` to `path` through a new inode (write a temp file, rename).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("gpu-tmp");
    fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/x/old.rs b/x/old.rs\nindex 1..2 100644\n--- a/x/old.rs\n+++ b/x/old.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\ndiff --git a/x/new.rs b/x/new.rs\nnew file mode 100644\nindex 0000000..1\n--- /dev/null\n+++ b/x/new.rs\n@@ -0,0 +1 @@\n+fresh\n";

    #[test]
    fn applies_edits_and_new_files_without_touching_hard_links() {
        let dir = std::env::temp_dir().join(format!("gpu-patch-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("x")).unwrap();
        let pristine = dir.join("pristine.rs");
        fs::write(&pristine, "one\ntwo\n").unwrap();
        fs::hard_link(&pristine, dir.join("x/old.rs")).unwrap();
        assert_eq!(apply(PATCH, &dir).unwrap(), 2);
        assert_eq!(fs::read_to_string(dir.join("x/old.rs")).unwrap(), "one\ndeux\n");
        assert_eq!(fs::read_to_string(dir.join("x/new.rs")).unwrap(), "fresh\n");
        // The hard-linked original is untouched.
        assert_eq!(fs::read_to_string(&pristine).unwrap(), "one\ntwo\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_patch_that_does_not_fit_is_an_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("gpu-patch-test2-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("x")).unwrap();
        fs::write(dir.join("x/old.rs"), "something\nelse\n").unwrap();
        let err = apply(PATCH, &dir).unwrap_err();
        assert!(err.contains("x/old.rs"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
