//! Depth checks for recursion on the driver's call stack.
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
//! Under [`shared_stack`](crate::shared_stack)'s argument protocol the check
//! is given the function's frames' stack pointer and publishes it in the
//! lane's words first, so the handler's report runs below the live frames.
//!
//! On amdgcn the call stack is the lane's scratch, which grows up from
//! offset 0 of its private segment: the same word holds a ceiling, and past
//! it the check calls the runtime's `CALL_STACK_OVERFLOW` handler, so the
//! report knows which stack ran out. The check reads the stack pointer
//! `s32` itself, scaled to a lane's bytes for the cpu
//! ([`amd_lanes::stack_pointer_lane_shift`](crate::amd_lanes::stack_pointer_lane_shift)):
//! `llvm.stacksave` shifts it right by the wave size's log2 even with flat
//! scratch, where it already counts a lane's bytes.
//!
//! The call graph is read from the optimized IR text: direct calls are
//! edges; an indirect call may reach any function whose address is taken
//! (vtables, function pointers) and whose signature is the call's, so it is
//! an edge to all of them (to every address-taken function where a
//! signature does not parse). Calls into functions that never return
//! (`noreturn`: panics, aborts) are left out, but for a function's calls
//! to itself: a cycle through one is a failure reported while reporting a
//! failure, which the runtime bounds, and counting it would check the
//! allocator and the host ring, which may abort.
use std::collections::HashMap;

use crate::ir_text::{Callee, address_uses, callee, function_name, is_label, signature};
use crate::Target;
use crate::shared_stack::{OVERFLOW_SYMBOL, SLOT_SYMBOL, SP_PARAM};
use rt_abi::symbols::CALL_STACK_OVERFLOW;

/// The inlined check each recursive function calls on entry.
const CHECK: &str = "__gpu_cs.check";

/// Adds the depth check to every function on a call-graph cycle of module
/// `ir`; `None` if the module has no runtime (no `@__gpu_stack_slot`).
/// Returns the new module and the names of the checked functions.
/// How the checks read the call stack's position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// nvptx: `llvm.stacksave`, compared with a floor.
    Nvptx,
    /// amdgcn: `s32` shifted right by this, compared with a ceiling.
    Amdgcn { sp_shift: u32 },
}

impl Depth {
    fn target(self) -> Target {
        match self {
            Depth::Nvptx => Target::Nvptx,
            Depth::Amdgcn { .. } => Target::Amdgcn,
        }
    }
}

pub fn guard(ir: &str, depth: Depth) -> Option<(String, Vec<String>)> {
    let target = depth.target();
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
        if !recursive.contains_key(name) || excluded(line, name, target) {
            continue;
        }
        // In the entry block: after its label, if it has one.
        if lines.peek().is_some_and(|l| is_label(l)) {
            out.push_str(lines.next().expect("peeked"));
        }
        // Under the argument protocol the overflow handler learns the
        // frames' stack pointer from the check; under the pair's, the pair
        // has it (-1: nothing to publish).
        let frames_sp = if line.contains(SP_PARAM) { SP_PARAM } else { "-1" };
        out.push_str(&format!("  call void @{CHECK}(i64 {frames_sp})\n"));
        checked.push(name.to_string());
    }
    if !checked.is_empty() {
        out.push_str(&match depth {
            Depth::Nvptx => helper(ir),
            Depth::Amdgcn { sp_shift } => amd_helper(ir, sp_shift),
        });
    }
    Some((out, checked))
}

/// Functions never checked: kernels (they start the call stack), the
/// overflow handlers and the linker's own helpers.
fn excluded(header: &str, name: &str, target: Target) -> bool {
    header.contains(target.kernel_keyword())
        || name == OVERFLOW_SYMBOL
        || name == CALL_STACK_OVERFLOW
        || name.starts_with("__gpu_ss.")
        || name.starts_with("__gpu_cs.")
}

/// The amdgcn check: the lane's scratch offset (`s32 >> sp_shift`) above
/// the ceiling in the lane's words calls the call stack's own handler.
/// Frames' stack pointers are never published here: amdgcn uses the pair
/// protocol only.
fn amd_helper(ir: &str, sp_shift: u32) -> String {
    let handler = if ir.contains(&format!("@{CALL_STACK_OVERFLOW}(")) {
        String::new()
    } else {
        format!("declare void @{CALL_STACK_OVERFLOW}()\n")
    };
    format!(
        r#"
{handler}
define internal void @{CHECK}(i64 %frames.sp) alwaysinline nounwind {{
  %slot = load ptr, ptr addrspace(1) @{SLOT_SYMBOL}, align 8
  %ceiling.at = getelementptr inbounds i8, ptr %slot, i64 16
  %ceiling = load i64, ptr %ceiling.at, align 8
  %sp.raw = call i32 asm sideeffect "s_mov_b32 $0, s32", "=s"()
  %sp.32 = lshr i32 %sp.raw, {sp_shift}
  %sp = zext i32 %sp.32 to i64
  %high = icmp ugt i64 %sp, %ceiling
  br i1 %high, label %overflow, label %ok, !prof !{{!"branch_weights", i32 1, i32 1048575}}
overflow:
  call void @{CALL_STACK_OVERFLOW}()
  unreachable
ok:
  ret void
}}
"#
    )
}

fn helper(ir: &str) -> String {
    let declare = if ir.contains("declare ptr @llvm.stacksave.p0()") { "" } else { "declare ptr @llvm.stacksave.p0()\n" };
    format!(
        r#"
{declare}
define internal void @{CHECK}(i64 %frames.sp) alwaysinline nounwind {{
  %slot = load ptr, ptr @{SLOT_SYMBOL}, align 8
  %floor.at = getelementptr inbounds i8, ptr %slot, i64 16
  %floor = load i64, ptr %floor.at, align 8
  %sp.ptr = call ptr @llvm.stacksave.p0()
  %sp = ptrtoint ptr %sp.ptr to i64
  %low = icmp ult i64 %sp, %floor
  br i1 %low, label %overflow, label %ok, !prof !{{!"branch_weights", i32 1, i32 1048575}}
overflow:
  %publish = icmp ne i64 %frames.sp, -1
  br i1 %publish, label %store, label %report
store:
  store i64 %frames.sp, ptr %slot, align 8
  br label %report
report:
  call void @{OVERFLOW_SYMBOL}()
  unreachable
ok:
  ret void
}}
"#
    )
}

/// The signature of a `define` line's function, if it parses.
fn defined_signature(header: &str) -> Option<String> {
    let at = header.find(" @")? + 1;
    let name_end = at + 1 + header[at + 1..].find('(')?;
    let before = header[..at].trim_end();
    // `define [linkage] [cc] [attrs] RET @name(`: the return type ends `before`.
    signature(before, &header[name_end..])
}

/// Functions of `ir` on a call-graph cycle, by name, with their index. An
/// indirect call may reach every address-taken function of its signature
/// (of any signature, if it does not parse).
fn recursive_functions(ir: &str) -> HashMap<&str, usize> {
    // Pass 1: the defined functions, their signatures, and which never
    // return (`noreturn`, in the header or an attribute group).
    let noreturn_groups: Vec<&str> = ir
        .lines()
        .filter(|l| l.starts_with("attributes #") && l.contains(" noreturn "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut signatures: Vec<Option<String>> = Vec::new();
    let mut noreturn: Vec<bool> = Vec::new();
    for line in ir.lines() {
        if line.starts_with("define ") {
            let n = index.len();
            if let std::collections::hash_map::Entry::Vacant(e) = index.entry(function_name(line)) {
                e.insert(n);
                signatures.push(defined_signature(line));
                let after = line.rfind(')').map_or("", |i| &line[i..]);
                noreturn.push(
                    line.contains(" noreturn ")
                        || after.split_whitespace().any(|t| noreturn_groups.contains(&t)),
                );
            }
        }
    }
    let n = index.len();
    // Nodes past the functions stand for "an address-taken function": one
    // per signature seen at an indirect call, and `any` for calls not read.
    let any = n;
    let mut by_signature: HashMap<String, usize> = HashMap::new();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let mut address_taken = vec![false; n];
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
        if let (Some(f), Some(c)) = (current, &called) {
            let to = match c {
                // A call into a function that never returns (panic, abort)
                // is no recursion unless it is the function itself: a cycle
                // through one is a failure inside a failure report, which
                // the runtime bounds (a second abort traps).
                Callee::Direct(name) => index.get(name).copied().filter(|&g| g == f || !noreturn[g]),
                Callee::Indirect(None) => Some(any),
                Callee::Indirect(Some(sig)) => Some(*by_signature.entry(sig.clone()).or_insert_with(|| {
                    edges.push(Vec::new());
                    edges.len() - 1
                })),
            };
            edges[f].extend(to);
        }
        // Every other mention of a defined function takes its address.
        for name in address_uses(line, called.as_ref()) {
            if let Some(&g) = index.get(name) {
                address_taken[g] = true;
            }
        }
    }
    for (g, taken) in address_taken.iter().enumerate() {
        if !taken || noreturn[g] {
            continue;
        }
        edges[any].push(g);
        match &signatures[g] {
            Some(sig) => {
                if let Some(&node) = by_signature.get(sig) {
                    edges[node].push(g);
                }
            }
            // A function whose signature does not parse may be any call's target.
            None => by_signature.values().for_each(|&node| edges[node].push(g)),
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
@vtable = constant <{ ptr, ptr, ptr }> <{ ptr @dyn_fmt, ptr @leaf, ptr @typed }>, align 8

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

define internal i64 @typed(i64 %x) {
  call void %p(ptr null)
  ret i64 0
}

define internal ptr @alloc_like(i64 %n) {
  call void @abort_like()
  ret ptr null
}

define internal void @abort_like() #9 {
  %p = call ptr @alloc_like(i64 1)
  unreachable
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

attributes #9 = { noreturn nounwind }
"#;

    #[test]
    fn finds_direct_mutual_and_indirect_recursion() {
        let mut names: Vec<&str> = recursive_functions(MODULE).into_keys().collect();
        names.sort();
        // dyn_fmt calls a `void (ptr)` through a pointer and its own address
        // is taken (the vtable): it may call itself. leaf is address-taken
        // but calls nothing; typed calls a `void (ptr)` through a pointer
        // but is an `i64 (i64)`, which no indirect call reaches; alloc_like
        // and abort_like meet only through a call into a noreturn function;
        // main_like and quoted.name are on no cycle.
        assert_eq!(names, ["__gpu_stack_overflow", "__gpu_start", "dyn_fmt", "hash", "ping", "pong"]);
    }

    #[test]
    fn checks_recursive_functions_in_their_entry_block() {
        let (out, checked) = guard(MODULE, Depth::Nvptx).unwrap();
        let mut checked = checked;
        checked.sort();
        assert_eq!(checked, ["dyn_fmt", "hash", "ping", "pong"]);
        assert!(out.contains("define internal i64 @hash(ptr %l) unnamed_addr {\nstart:\n  call void @__gpu_cs.check(i64 -1)\n  %r ="));
        assert!(out.contains("define internal void @ping(i32 %n) {\n  call void @__gpu_cs.check(i64 -1)\n  call void @pong"));
        assert!(out.contains("define internal void @pong(i32 %n) {\nbb0:\n  call void @__gpu_cs.check(i64 -1)\n"));
        // Kernels and the overflow handler are never checked.
        assert!(out.contains("define ptx_kernel void @__gpu_start(ptr %l) {\n  call void @__gpu_start"));
        assert!(out.contains("define void @__gpu_stack_overflow() {\n  call void @__gpu_stack_overflow"));
        assert!(out.contains("declare ptr @llvm.stacksave.p0()\n"));
        assert!(out.contains("getelementptr inbounds i8, ptr %slot, i64 16"));
        assert_eq!(out.matches("call void @__gpu_cs.check(i64 -1)").count(), 4);
    }

    #[test]
    fn amdgcn_checks_compare_scratch_with_a_ceiling() {
        let amd = MODULE
            .replace("@__gpu_stack_slot = global", "@__gpu_stack_slot = addrspace(1) global")
            .replace(" ptx_kernel ", " amdgpu_kernel ");
        let (out, mut checked) = guard(&amd, Depth::Amdgcn { sp_shift: 6 }).unwrap();
        checked.sort();
        assert_eq!(checked, ["dyn_fmt", "hash", "ping", "pong"]);
        assert!(out.contains("define amdgpu_kernel void @__gpu_start(ptr %l) {\n  call void @__gpu_start"));
        assert!(out.contains("call i32 asm sideeffect \"s_mov_b32 $0, s32\", \"=s\"()"));
        assert!(out.contains("lshr i32 %sp.raw, 6"));
        assert!(out.contains("load ptr, ptr addrspace(1) @__gpu_stack_slot"));
        assert!(out.contains("%high = icmp ugt i64 %sp, %ceiling"));
        assert!(out.contains("call void @__gpu_call_stack_overflow()"));
        assert!(out.contains("declare void @__gpu_call_stack_overflow()\n"));
    }

    #[test]
    fn leaves_modules_without_the_runtime_or_recursion_alone() {
        assert!(guard("define void @f() {\n  call void @f()\n  ret void\n}\n", Depth::Nvptx).is_none());
        let flat = "@__gpu_stack_slot = global [8 x i8] zeroinitializer\ndefine void @f() {\n  ret void\n}\n";
        assert_eq!(guard(flat, Depth::Nvptx).unwrap(), (flat.to_string(), vec![]));
    }

    #[test]
    fn reads_defined_signatures() {
        let h = "define internal fastcc noundef zeroext i1 @f(ptr noalias noundef align 8 dereferenceable(16) %0, i64 %1) unnamed_addr #3 {";
        assert_eq!(defined_signature(h).as_deref(), Some("i1(ptr,i64)"));
        assert_eq!(defined_signature("define { i64, i1 } @g() {").as_deref(), Some("{i64,i1}()"));
        assert_eq!(defined_signature("define void @\"q.n\"(ptr %a, ...) {"), None);
    }

    #[test]
    fn reads_callees() {
        use Callee::*;
        assert_eq!(callee("  %r = tail call fastcc i64 @f(i64 1)"), Some(Direct("f")));
        assert_eq!(callee("  call { i64, i1 } %5(ptr %x)"), Some(Indirect(Some("{i64,i1}(ptr)".into()))));
        assert_eq!(
            callee("  %7 = tail call noundef zeroext i1 %5(ptr noundef nonnull align 1 %self, ptr noundef align 8 %f) #4"),
            Some(Indirect(Some("i1(ptr,ptr)".into())))
        );
        assert_eq!(callee("  call i32 (ptr, ...) %f(ptr %x, i32 1)"), Some(Indirect(None)));
        assert_eq!(callee("  call void %g({ ptr, i64 } %a, [2 x i8] %b)"), Some(Indirect(Some("void({ptr,i64},[2xi8])".into()))));
        assert_eq!(callee("  invoke void @\"a b\"(ptr %x)"), Some(Direct("a b")));
        assert_eq!(callee("  call void asm \"x\", \"\"()"), None);
        assert_eq!(callee("  %recall = add i64 1, 2"), None);
        assert_eq!(callee("  %x = call %\"T\" @g(ptr %y)"), Some(Direct("g")));
    }
}
