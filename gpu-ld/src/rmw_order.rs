//! Gives NVIDIA's read-modify-write atomics the ordering they ask for.
//!
//! The pinned LLVM (22.1) lowers an `atomicrmw` on nvptx to a plain PTX
//! `atom` whatever its ordering: `fetch_add(1, Release)` becomes a relaxed
//! `atom.add.u64`, with no fence. Only `cmpxchg`, loads and stores get
//! their ordering (`atom.release.gpu.cas`, `ld.acquire`, `st.release`).
//! (Fixed upstream after 22 by llvm/llvm-project#179553.) A release RMW
//! that hands over data (a mutex's unlock, `Arc`'s last decrement) would
//! not order the writes before it.
//!
//! This pass rewrites each `atomicrmw` whose ordering is stronger than
//! `monotonic` as the PTX ABI's fence mapping: a release fence before a
//! relaxed RMW and an acquire fence after it, as its ordering asks
//! (`seq_cst`: a `seq_cst` fence before), each fence in the RMW's own
//! scope. LLVM lowers those fences correctly (`fence.release.gpu` and
//! `fence.acquire.gpu` at PTX 8.6, `fence.acq_rel.gpu` before it;
//! `fence.sc.gpu`). AMDGPU lowers orderings itself and is left alone.

use std::fmt::Write;

/// `(leading fence, trailing fence)` orderings for an RMW `ordering`.
fn fences(ordering: &str) -> Option<(Option<&'static str>, Option<&'static str>)> {
    Some(match ordering {
        "release" => (Some("release"), None),
        "acquire" => (None, Some("acquire")),
        "acq_rel" => (Some("release"), Some("acquire")),
        "seq_cst" => (Some("seq_cst"), Some("acquire")),
        _ => return None,
    })
}

/// The line split around its ordering, if it is an `atomicrmw` stronger
/// than monotonic: `(before, scope, ordering, after)`, `scope` being the
/// `syncscope("…") ` text or empty.
fn split_rmw(line: &str) -> Option<(&str, &str, &'static str, &str)> {
    if !line.contains(" = atomicrmw ") {
        return None;
    }
    let (at, ordering) = crate::device_scope::first_ordering(line)?;
    fences(ordering)?;
    let before = &line[..at];
    let after = &line[at + 1 + ordering.len()..];
    let (before, scope) = match before.rfind(" syncscope(\"") {
        Some(s) if before[s..].ends_with("\")") => (&before[..s], &before[s + 1..]),
        _ => (before, ""),
    };
    Some((before, scope, ordering, after))
}

/// Rewrites module `ir`; returns it and the number of RMWs given fences.
pub fn rewrite(ir: &str) -> (String, usize) {
    let mut out = String::with_capacity(ir.len() + ir.len() / 32);
    let mut changed = 0;
    for line in ir.split_inclusive('\n') {
        let Some((before, scope, ordering, after)) = split_rmw(line) else {
            out.push_str(line);
            continue;
        };
        let (lead, trail) = fences(ordering).expect("a known ordering");
        let indent = &line[..line.len() - line.trim_start().len()];
        let scope = if scope.is_empty() { String::new() } else { format!("{scope} ") };
        if let Some(o) = lead {
            let _ = writeln!(out, "{indent}fence {scope}{o}");
        }
        let newline = if after.ends_with('\n') { "" } else { "\n" };
        let _ = write!(out, "{before} {scope}monotonic{after}{newline}");
        if let Some(o) = trail {
            let _ = writeln!(out, "{indent}fence {scope}{o}");
        }
        changed += 1;
    }
    (out, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_rmws_get_fences_in_their_scope() {
        let ir = "define void @f(ptr %p) {\n\
                  \x20 %a = atomicrmw add ptr %p, i64 1 syncscope(\"device\") release, align 8\n\
                  \x20 %b = atomicrmw xchg ptr %p, i32 0 acquire, align 4, !dbg !7\n\
                  \x20 %c = atomicrmw volatile umax ptr %p, i64 %a syncscope(\"device\") acq_rel, align 8\n\
                  \x20 %d = atomicrmw sub ptr %p, i64 1 seq_cst, align 8\n\
                  \x20 %e = atomicrmw add ptr %p, i64 1 syncscope(\"device\") monotonic, align 8\n\
                  \x20 %f = cmpxchg ptr %p, i64 0, i64 1 syncscope(\"device\") release monotonic, align 8\n\
                  \x20 %release = load atomic i64, ptr %p acquire, align 8\n\
                  \x20 ret void\n}\n";
        let (out, n) = rewrite(ir);
        assert_eq!(n, 4, "{out}");
        let want = "define void @f(ptr %p) {\n\
                    \x20 fence syncscope(\"device\") release\n\
                    \x20 %a = atomicrmw add ptr %p, i64 1 syncscope(\"device\") monotonic, align 8\n\
                    \x20 %b = atomicrmw xchg ptr %p, i32 0 monotonic, align 4, !dbg !7\n\
                    \x20 fence acquire\n\
                    \x20 fence syncscope(\"device\") release\n\
                    \x20 %c = atomicrmw volatile umax ptr %p, i64 %a syncscope(\"device\") monotonic, align 8\n\
                    \x20 fence syncscope(\"device\") acquire\n\
                    \x20 fence seq_cst\n\
                    \x20 %d = atomicrmw sub ptr %p, i64 1 monotonic, align 8\n\
                    \x20 fence acquire\n\
                    \x20 %e = atomicrmw add ptr %p, i64 1 syncscope(\"device\") monotonic, align 8\n\
                    \x20 %f = cmpxchg ptr %p, i64 0, i64 1 syncscope(\"device\") release monotonic, align 8\n\
                    \x20 %release = load atomic i64, ptr %p acquire, align 8\n\
                    \x20 ret void\n}\n";
        assert_eq!(out, want);
    }

    /// Through the pinned `llc`: without the pass a release RMW is a bare
    /// `atom` (the bug; when this fails, LLVM orders RMWs itself and the
    /// pass may go), with it a fence comes first and stays.
    #[test]
    fn llc_keeps_the_fences_it_would_have_left_out() {
        let Ok(bin) = crate::llvm_bin() else {
            eprintln!("SKIPPED: no llvm-tools in the pinned toolchain");
            return;
        };
        let body = "target triple = \"nvptx64-nvidia-cuda\"\n\
                    define i64 @unlock(ptr %p) {\n\
                    \x20 %r = atomicrmw add ptr %p, i64 1 syncscope(\"device\") release, align 8\n\
                    \x20 ret i64 %r\n}\n";
        let dir = std::env::temp_dir().join(format!("gpu-ld-rmw-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ptx = |name: &str, text: &str| {
            let path = dir.join(format!("{name}.ll"));
            std::fs::write(&path, text).unwrap();
            let out = std::process::Command::new(bin.join("llc"))
                .args(["-mcpu=sm_90", "-O3", "-o", "-"])
                .args(crate::nvptx_llc_args("sm_90").unwrap())
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            text.lines().map(str::trim).filter(|l| l.starts_with("atom") || l.starts_with("fence")).map(String::from).collect::<Vec<_>>()
        };
        let bare = ptx("before", body);
        assert_eq!(bare.len(), 1, "{bare:?}");
        assert!(bare[0].starts_with("atom.add"), "{bare:?}");
        let (fenced, n) = rewrite(body);
        assert_eq!(n, 1);
        let fenced = ptx("after", &fenced);
        assert_eq!(fenced.len(), 2, "{fenced:?}");
        // PTX 8.6 (gpu-ld's ISA for sm_90) has a release fence of its own.
        assert!(fenced[0].starts_with("fence.release.gpu") && fenced[1].starts_with("atom.add"), "{fenced:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
