//! Gives std's atomics device scope instead of system scope (the default;
//! `GPU_SYSTEM_SCOPE=1` or `-C link-arg=--system-scope` turns it off).
//!
//! LLVM gives every Rust atomic and fence on nvptx system scope (`.sys`):
//! ordered with the host and peer devices, which costs more than ordering
//! with the other warps of the GPU (`.gpu`): on an H200 `fence.acq_rel.sys`
//! took 518 ns from one lane, `fence.acq_rel.gpu` 136 ns, and the atomics
//! themselves cost the same at both scopes (benches/micro/scope_costs.cu).
//! A GPU program's threads are all on one GPU; only the host-call ring lives in
//! memory the host reads while the kernel runs, and all its accesses are in
//! `rt_common::ring` (its `send` and `call` are never inlined), so those
//! functions keep system scope and everything else gets the device scope:
//! `syncscope("device")` on nvptx, `syncscope("agent")` on amdgcn, where a
//! system-scope release also writes back the L2 cache (`buffer_wbl2` on
//! gfx90a) and an acquire invalidates it (LLVM's AMDGPU memory model).

use crate::Target;

const ORDERINGS: [&str; 6] = ["unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst"];

/// What the v0-mangled name of every function in the ring's module
/// (`rt_abi::symbols::RING_MODULE`) contains: each path segment as its
/// length and itself (`rt_common::ring` → `9rt_common4ring`). Functions
/// whose name contains it keep system scope.
pub fn system_scope_module() -> String {
    rt_abi::symbols::RING_MODULE.split("::").map(|s| format!("{}{s}", s.len())).collect()
}

/// Rewrites module `ir` for `target`; returns it and the number of
/// instructions changed.
pub fn rewrite(ir: &str, target: Target) -> (String, usize) {
    let scope = format!(" syncscope(\"{}\")", target.device_scope());
    let mut out = String::with_capacity(ir.len() + ir.len() / 16);
    let system_scope_module = system_scope_module();
    let mut keep_system = false;
    let mut changed = 0;
    for line in ir.split_inclusive('\n') {
        if line.starts_with("define ") {
            keep_system = line.contains(&system_scope_module);
        }
        match (keep_system, scoped(line, &scope)) {
            (false, Some(new)) => {
                out.push_str(&new);
                changed += 1;
            }
            _ => out.push_str(line),
        }
    }
    (out, changed)
}

/// The line with `scope` before its ordering, if it is an atomic
/// instruction or fence without a scope.
fn scoped(line: &str, scope: &str) -> Option<String> {
    let t = line.trim_start();
    let atomic = t.starts_with("fence ")
        || t.starts_with("store atomic ")
        || t.contains(" = load atomic ")
        || t.contains(" = atomicrmw ")
        || t.contains(" = cmpxchg ");
    if !atomic || t.contains("syncscope(") {
        return None;
    }
    let (at, _) = first_ordering(line)?;
    Some(format!("{}{scope}{}", &line[..at], &line[at..]))
}

/// The first memory ordering named on an IR line (a cmpxchg names two):
/// the position of the space before it, and the ordering.
pub(crate) fn first_ordering(line: &str) -> Option<(usize, &'static str)> {
    ORDERINGS
        .iter()
        .filter_map(|&o| {
            line.match_indices(&format!(" {o}"))
                .find(|(i, m)| matches!(line[i + m.len()..].chars().next(), Some(',' | ' ' | '\n') | None))
                .map(|(i, _)| (i, o))
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_every_atomic_but_the_rings() {
        let ir = "define void @f(ptr %p, ptr %acquire) {\n\
                  %a = load atomic i64, ptr %p acquire, align 8\n\
                  store atomic i32 1, ptr %acquire release, align 4\n\
                  %b = atomicrmw add ptr %p, i64 1 monotonic, align 8\n\
                  %c = cmpxchg weak ptr %p, i64 0, i64 1 acq_rel monotonic, align 8\n\
                  fence seq_cst\n\
                  %d = load atomic i64, ptr %p syncscope(\"block\") monotonic, align 8\n\
                  %e = load i64, ptr %p, align 8\n\
                  ret void\n}\n\
                  define void @_RNvNtCs1_9rt_common4ring4send(ptr %p) {\n\
                  %a = load atomic i64, ptr %p monotonic, align 8\n\
                  ret void\n}\n";
        let (out, n) = rewrite(ir, Target::Nvptx);
        assert_eq!(n, 5);
        assert!(out.contains("%a = load atomic i64, ptr %p syncscope(\"device\") acquire, align 8\n"), "{out}");
        assert!(out.contains("store atomic i32 1, ptr %acquire syncscope(\"device\") release, align 4\n"), "{out}");
        assert!(out.contains("%b = atomicrmw add ptr %p, i64 1 syncscope(\"device\") monotonic, align 8\n"));
        assert!(out.contains("%c = cmpxchg weak ptr %p, i64 0, i64 1 syncscope(\"device\") acq_rel monotonic, align 8\n"));
        assert!(out.contains("fence syncscope(\"device\") seq_cst\n"));
        assert!(out.contains("syncscope(\"block\") monotonic"), "an explicit scope stays");
        assert!(out.contains("%e = load i64, ptr %p, align 8\n"));
        assert!(out.ends_with("define void @_RNvNtCs1_9rt_common4ring4send(ptr %p) {\n%a = load atomic i64, ptr %p monotonic, align 8\nret void\n}\n"));
        // AMD's device scope is the agent.
        let (out, n) = rewrite(ir, Target::Amdgcn);
        assert_eq!(n, 5);
        assert!(out.contains("fence syncscope(\"agent\") seq_cst\n"));
        assert!(out.contains("%b = atomicrmw add ptr %p, i64 1 syncscope(\"agent\") monotonic, align 8\n"));
    }
}
