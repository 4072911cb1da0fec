//! Depth checks for recursion on the driver's call stack (nvptx).
//!
//! [`shared_stack`](crate::shared_stack) moves frames to global memory, but
//! every call level still pushes its return address and saved registers on
//! the driver's per-lane call stack (`CU_LIMIT_STACK_SIZE`: about 16 bytes a
//! level for a small recursive function on sm_90). Only recursion makes that
//! stack's depth unbounded, so only functions on a call-graph cycle are
//! checked: on entry each compares the stack pointer (`llvm.stacksave`)
//! with the floor the runtime keeps in the lane's stack words (word 2, see
//! `rt_common::stack`) and, below it, calls the same overflow handler as a
//! frame that does not fit, which prints std's `has overflowed its stack`.
//!
//! The call graph is read from the optimized IR text: direct calls are
//! edges; an indirect call may reach any function whose address is taken
//! (vtables, function pointers), so it is an edge to all of them.
use std::collections::HashMap;

use crate::shared_stack::{OVERFLOW_SYMBOL, SLOT_SYMBOL, function_name, is_label};

/// The inlined check each recursive function calls on entry.
const CHECK: &str = "__gpu_cs.check";

/// Adds the depth check to every function on a call-graph cycle of module
/// `ir`; `None` if the module has no runtime (no `@__gpu_stack_slot`).
/// Returns the new module and the names of the checked functions.
pub fn guard(ir: &str) -> Option<(String, Vec<String>)> {
    if !ir.lines().any(|l| l.starts_with(&format!("@{SLOT_SYMBOL} ="))) {
        return None;
    }
    let recursive = recursive_functions(ir);
    let mut out = String::with_capacity(ir.len() + recursive.len() * 48);
    let mut checked = Vec::new();
    let mut lines = ir.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        if !(line.starts_with("define ") && line.trim_end().ends_with('{')) {
            continue;
        }
        let name = function_name(line);
        if !recursive.contains_key(name) || excluded(line, name) {
            continue;
        }
        // In the entry block: after its label, if it has one.
        if lines.peek().is_some_and(|l| is_label(l)) {
            out.push_str(lines.next().expect("peeked"));
        }
        out.push_str(&format!("  call void @{CHECK}()\n"));
        checked.push(name.to_string());
    }
    if !checked.is_empty() {
        out.push_str(&helper(ir));
    }
    Some((out, checked))
}

/// Functions never checked: kernels (they start the call stack), the
/// overflow handler and the linker's own helpers.
fn excluded(header: &str, name: &str) -> bool {
    header.contains(" ptx_kernel ") || name == OVERFLOW_SYMBOL || name.starts_with("__gpu_ss.") || name.starts_with("__gpu_cs.")
}

fn helper(ir: &str) -> String {
    let declare = if ir.contains("declare ptr @llvm.stacksave.p0()") { "" } else { "declare ptr @llvm.stacksave.p0()\n" };
    format!(
        r#"
{declare}
define internal void @{CHECK}() alwaysinline nounwind {{
  %slot = load ptr, ptr @{SLOT_SYMBOL}, align 8
  %floor.at = getelementptr inbounds i8, ptr %slot, i64 16
  %floor = load i64, ptr %floor.at, align 8
  %sp.ptr = call ptr @llvm.stacksave.p0()
  %sp = ptrtoint ptr %sp.ptr to i64
  %low = icmp ult i64 %sp, %floor
  br i1 %low, label %overflow, label %ok, !prof !{{!"branch_weights", i32 1, i32 1048575}}
overflow:
  call void @{OVERFLOW_SYMBOL}()
  unreachable
ok:
  ret void
}}
"#
    )
}

/// The next `@name` or `%name` token at or after byte `from` of `line`:
/// `(sigil, name, end)`.
fn next_token(line: &str, from: usize) -> Option<(u8, &str, usize)> {
    let bytes = line.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' {
            // Skip string constants (inline asm text, metadata strings).
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += 1;
            }
            i += 1;
            continue;
        }
        if c == b'@' || c == b'%' {
            let start = i + 1;
            if bytes.get(start) == Some(&b'"') {
                let end = line[start + 1..].find('"').map_or(bytes.len(), |e| start + 1 + e);
                return Some((c, &line[start + 1..end], (end + 1).min(bytes.len())));
            }
            let end = line[start..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '$' | '-')))
                .map_or(bytes.len(), |e| start + e);
            return Some((c, &line[start..end], end));
        }
        i += 1;
    }
    None
}

/// The callee of a `call`/`invoke` instruction line: `Some(Some(name))` for
/// a direct call, `Some(None)` for an indirect one, `None` if the line is
/// no call (or calls inline asm).
fn callee(line: &str) -> Option<Option<&str>> {
    let t = line.trim_start();
    if t.starts_with(';') {
        return None;
    }
    let at = [" call ", "call ", " invoke ", "invoke "].iter().find_map(|k| {
        let i = t.find(k)?;
        // `call` must be the instruction, not part of a name or string.
        (k.starts_with(' ') || i == 0).then_some(i + k.len())
    })?;
    let rest = &t[at..];
    if rest.contains(" asm ") || rest.starts_with("asm ") {
        return None;
    }
    let mut pos = 0;
    while let Some((sigil, name, end)) = next_token(rest, pos) {
        if rest.as_bytes().get(end) == Some(&b'(') {
            return Some((sigil == b'@').then_some(name));
        }
        pos = end.max(pos + 1);
    }
    None
}

/// Functions of `ir` on a call-graph cycle (indirect calls reach every
/// address-taken function), by name, with their index.
fn recursive_functions(ir: &str) -> HashMap<&str, usize> {
    // Pass 1: the defined functions.
    let mut index: HashMap<&str, usize> = HashMap::new();
    for line in ir.lines() {
        if line.starts_with("define ") {
            let n = index.len();
            index.entry(function_name(line)).or_insert(n);
        }
    }
    let n = index.len();
    let indirect = n; // a node standing for "some address-taken function"
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let mut current: Option<usize> = None;
    for line in ir.lines() {
        if line.starts_with("define ") {
            current = index.get(function_name(line)).copied();
            continue;
        }
        if line.starts_with('}') {
            current = None;
        }
        let called = callee(line);
        if let (Some(f), Some(c)) = (current, called) {
            match c {
                Some(name) => {
                    if let Some(&g) = index.get(name) {
                        edges[f].push(g);
                    }
                }
                None => edges[f].push(indirect),
            }
        }
        // Every other mention of a defined function takes its address.
        let direct = called.flatten();
        let mut pos = 0;
        let mut skipped_callee = false;
        while let Some((sigil, name, end)) = next_token(line, pos) {
            pos = end.max(pos + 1);
            if sigil != b'@' {
                continue;
            }
            if !skipped_callee && direct == Some(name) {
                skipped_callee = true;
                continue;
            }
            if let Some(&g) = index.get(name) {
                edges[indirect].push(g);
            }
        }
    }
    for e in &mut edges {
        e.sort_unstable();
        e.dedup();
    }
    let on_cycle = on_cycle(&edges);
    index.into_iter().filter(|&(_, i)| on_cycle[i]).collect()
}

/// Which nodes of the graph lie on a cycle: in a strongly connected
/// component of two or more nodes, or with an edge to themselves (Tarjan's
/// algorithm, iterative: the graphs have tens of thousands of nodes).
fn on_cycle(edges: &[Vec<usize>]) -> Vec<bool> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let (mut order, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut cyclic = vec![false; n];
    let mut next = 0;
    for root in 0..n {
        if order[root] != UNSEEN {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut work = vec![(root, 0usize)];
        while let Some(&(v, e)) = work.last() {
            if e == 0 && order[v] == UNSEEN {
                order[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(e) {
                work.last_mut().expect("v is on the work list").1 += 1;
                if order[w] == UNSEEN {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut members = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                let cycle = members.len() > 1 || edges[v].binary_search(&v).is_ok();
                for w in members {
                    cyclic[w] = cycle;
                }
            }
        }
    }
    cyclic
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = r#"@__gpu_stack_slot = global [8 x i8] zeroinitializer, align 8
@vtable = constant <{ ptr, ptr }> <{ ptr @dyn_fmt, ptr @leaf }>, align 8

define internal i64 @hash(ptr %l) unnamed_addr {
start:
  %r = tail call i64 @hash(ptr %l)
  ret i64 %r
}

define internal void @ping(i32 %n) {
  call void @pong(i32 %n)
  ret void
}

define internal void @pong(i32 %n) {
bb0:
  call fastcc void @ping(i32 %n) #3
  ret void
}

define internal void @dyn_fmt(ptr %f) {
  %x = call i64 @"quoted.name"(ptr %f)
  call void %f(ptr @leaf)
  ret void
}

define internal i64 @"quoted.name"(ptr %f) {
  call void asm sideeffect "call %x(", ""()
  ret i64 0
}

define internal void @leaf(ptr %f) {
  %y = call i64 @llvm.ctpop.i64(i64 1)
  ret void
}

define internal void @main_like() {
  call void @ping(i32 1)
  call void @leaf(ptr null)
  ret void
}

define ptx_kernel void @__gpu_start(ptr %l) {
  call void @__gpu_start(ptr %l)
  ret void
}

define void @__gpu_stack_overflow() {
  call void @__gpu_stack_overflow()
  unreachable
}
"#;

    #[test]
    fn finds_direct_mutual_and_indirect_recursion() {
        let mut names: Vec<&str> = recursive_functions(MODULE).into_keys().collect();
        names.sort();
        // dyn_fmt calls through a pointer and its own address is taken (the
        // vtable): it may call itself. leaf is address-taken but calls
        // nothing; main_like and quoted.name are on no cycle.
        assert_eq!(names, ["__gpu_stack_overflow", "__gpu_start", "dyn_fmt", "hash", "ping", "pong"]);
    }

    #[test]
    fn checks_recursive_functions_in_their_entry_block() {
        let (out, checked) = guard(MODULE).unwrap();
        let mut checked = checked;
        checked.sort();
        assert_eq!(checked, ["dyn_fmt", "hash", "ping", "pong"]);
        assert!(out.contains("define internal i64 @hash(ptr %l) unnamed_addr {\nstart:\n  call void @__gpu_cs.check()\n  %r ="));
        assert!(out.contains("define internal void @ping(i32 %n) {\n  call void @__gpu_cs.check()\n  call void @pong"));
        assert!(out.contains("define internal void @pong(i32 %n) {\nbb0:\n  call void @__gpu_cs.check()\n"));
        // Kernels and the overflow handler are never checked.
        assert!(out.contains("define ptx_kernel void @__gpu_start(ptr %l) {\n  call void @__gpu_start"));
        assert!(out.contains("define void @__gpu_stack_overflow() {\n  call void @__gpu_stack_overflow"));
        assert!(out.contains("declare ptr @llvm.stacksave.p0()\n"));
        assert!(out.contains("getelementptr inbounds i8, ptr %slot, i64 16"));
        assert_eq!(out.matches("call void @__gpu_cs.check()").count(), 4);
    }

    #[test]
    fn leaves_modules_without_the_runtime_or_recursion_alone() {
        assert!(guard("define void @f() {\n  call void @f()\n  ret void\n}\n").is_none());
        let flat = "@__gpu_stack_slot = global [8 x i8] zeroinitializer\ndefine void @f() {\n  ret void\n}\n";
        assert_eq!(guard(flat).unwrap(), (flat.to_string(), vec![]));
    }

    #[test]
    fn reads_callees() {
        assert_eq!(callee("  %r = tail call fastcc i64 @f(i64 1)"), Some(Some("f")));
        assert_eq!(callee("  call { i64, i1 } %5(ptr %x)"), Some(None));
        assert_eq!(callee("  invoke void @\"a b\"(ptr %x)"), Some(Some("a b")));
        assert_eq!(callee("  call void asm \"x\", \"\"()"), None);
        assert_eq!(callee("  %recall = add i64 1, 2"), None);
        assert_eq!(callee("  %x = call %\"T\" @g(ptr %y)"), Some(Some("g")));
    }
}
