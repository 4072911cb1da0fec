//! Moves every function's stack frame from private memory to a per-lane
//! stack in global memory, so a pointer to a local is valid in every thread
//! (`thread::scope` closures borrowing the parent's locals).
//!
//! GPU private memory is per lane: NVIDIA `.local` and AMD scratch map the
//! same address to a different byte in each lane, so a `&T` to a stack value
//! read by another warp reads that warp's own stack. This pass rewrites the
//! optimized LLVM IR (text, from `llvm-dis`) before `llc`: each function's
//! entry-block `alloca`s become offsets into one frame carved from the lane's
//! *shadow stack*, and every `ret` gives the frame back.
//!
//! On amdgcn allocas live in address space 5 (scratch) and everything derived
//! from them is typed `ptr addrspace(5)`; in a rewritten function those
//! become flat `ptr`s (flat loads and stores reach global memory), private
//! casts become no-op bitcasts, and the memory intrinsics named for
//! address space 5 are renamed for the flat one ([`Report::renamed`]).
//!
//! The contract with the runtime (`rt_common::stack` and the vendor crates'
//! `stack` modules):
//! - `@__gpu_stack_slot` holds the generic (flat) address of the calling
//!   lane's `[stack pointer, limit]` pair. That pair lives in the kernel's
//!   own (private) frame, at the same generic address in every lane, so one
//!   global serves all lanes and each reaches its own pair. Every lane
//!   stores it at kernel start; on nvptx it then lives in shared memory, one
//!   copy per block ([`crate::block_shared`]).
//! - `@__gpu_stack_overflow` is called (and does not return) when a frame
//!   would go below the limit.
//! - Kernels (`ptx_kernel`, `amdgpu_kernel`) and the overflow handler are not
//!   rewritten: the kernel sets the pair up, the handler runs when the stack
//!   is exhausted.
//!
//! A module that does not define `@__gpu_stack_slot` (no runtime) is left
//! alone. Register spills and the call ABI's register saves stay in private
//! memory: they are never shared. `alloca`s outside the entry block
//! (dynamically sized: Rust emits none) and types this pass cannot size
//! keep their private frame; [`Report`] lists them (on amdgcn the whole
//! function then stays private).
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use crate::Target;

/// The global holding the address of each lane's `[sp, limit]` pair.
pub const SLOT_SYMBOL: &str = "__gpu_stack_slot";
/// Called when a frame does not fit: reports and aborts.
pub const OVERFLOW_SYMBOL: &str = "__gpu_stack_overflow";
/// Defined (as 1) in a module whose frames were moved; the launcher looks
/// for it to give the program its stacks.
pub use gpu_toolchain::protocol_names::SHARED_STACKS_SYMBOL;

/// What the pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Functions whose frame moved to the shared stack.
    pub functions: usize,
    /// `alloca`s rewritten.
    pub allocas: usize,
    /// `@function: why` for frames (or allocas) left private.
    pub left_private: Vec<String>,
    /// amdgcn: intrinsics renamed from address space 5 to the flat one
    /// (`llvm.memcpy.p5.p0.i64` → `llvm.memcpy.p0.p0.i64`), new → old name.
    pub renamed: BTreeMap<String, String>,
}

/// Rewrites module `ir` for `target`; `None` if it has no runtime (no
/// `@__gpu_stack_slot`).
pub fn rewrite(ir: &str, target: Target) -> Option<(String, Report)> {
    if !defines_global(ir, SLOT_SYMBOL) {
        return None;
    }
    let types = named_types(ir);
    let mut out = String::with_capacity(ir.len() + ir.len() / 8);
    let mut report = Report::default();
    let mut lines = ir.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if !(line.starts_with("define ") && line.trim_end().ends_with('{')) {
            out.push_str(line);
            continue;
        }
        let mut body: Vec<&str> = Vec::new();
        for l in lines.by_ref() {
            if l.trim_end() == "}" {
                body.push(l);
                break;
            }
            body.push(l);
        }
        rewrite_function(line, &body, &types, target, &mut out, &mut report);
    }
    out.push_str(&flat_intrinsic_declarations(ir, &report.renamed));
    out.push_str(&helpers(target));
    Some((out, report))
}

fn defines_global(ir: &str, name: &str) -> bool {
    let plain = format!("@{name} = ");
    let quoted = format!("@\"{name}\" = ");
    ir.lines().any(|l| (l.starts_with(&plain) || l.starts_with(&quoted)) && !l.contains(" external "))
}

/// `@name` of a `define` line.
pub(crate) fn function_name(header: &str) -> &str {
    let at = header.find('@').map_or(header.len(), |i| i + 1);
    let rest = &header[at..];
    match rest.strip_prefix('"') {
        Some(q) => &q[..q.find('"').unwrap_or(q.len())],
        None => &rest[..rest.find('(').unwrap_or(rest.len())],
    }
}

pub(crate) fn is_label(line: &str) -> bool {
    // `start:                                  ; preds = %bb3` or `7:`
    if line.starts_with(char::is_whitespace) || line.trim().is_empty() {
        return false;
    }
    let head = line.split(';').next().unwrap_or("").trim_end();
    head.ends_with(':') && !head.contains(' ')
}

struct Alloca<'a> {
    line: usize,
    name: &'a str,
    size: u64,
    align: u64,
}

fn rewrite_function(
    header: &str,
    body: &[&str],
    types: &HashMap<String, String>,
    target: Target,
    all_out: &mut String,
    report: &mut Report,
) {
    let name = function_name(header);
    let keep = |out: &mut String| {
        out.push_str(header);
        body.iter().for_each(|l| out.push_str(l));
    };
    if header.contains(target.kernel_keyword()) || name == OVERFLOW_SYMBOL || name.starts_with("__gpu_ss.") {
        return keep(all_out);
    }
    // The entry block: up to the first label after the first line.
    let entry_end = body.iter().enumerate().skip(1).find(|(_, l)| is_label(l)).map_or(body.len(), |(i, _)| i);
    let mut allocas = Vec::new();
    for (i, l) in body.iter().enumerate() {
        let Some((dst, rest)) = parse_alloca(l) else { continue };
        if i >= entry_end {
            report.left_private.push(format!("@{name}: {dst} is allocated outside the entry block"));
            continue;
        }
        match alloca_layout(rest, types, target) {
            Ok((size, align)) => allocas.push(Alloca { line: i, name: dst, size, align }),
            Err(why) => report.left_private.push(format!("@{name}: {dst}: {why}")),
        }
    }
    let private_left = report.left_private.iter().any(|w| w.starts_with(&format!("@{name}: ")));
    if allocas.is_empty() || (target == Target::Amdgcn && private_left) {
        // On amdgcn a function's private pointers all become flat, so a
        // frame is moved whole or not at all.
        return keep(all_out);
    }
    let mut out = String::new();
    let out = &mut out;
    // Frame layout: allocas in order, each at its alignment.
    let frame_align = allocas.iter().map(|a| a.align).max().unwrap_or(1).max(8);
    let mut offsets = HashMap::new();
    let mut size = 0u64;
    for a in &allocas {
        size = size.next_multiple_of(a.align);
        offsets.insert(a.line, size);
        size += a.size;
    }
    let size = size.next_multiple_of(frame_align);
    let rewritten: Vec<&str> = allocas.iter().map(|a| a.name).collect();

    out.push_str(header);
    let first_is_label = body.first().is_some_and(|l| is_label(l));
    let prologue = format!(
        "  %__ss.old = call i64 @__gpu_ss.get()\n  %__ss.base = call ptr @__gpu_ss.enter(i64 %__ss.old, i64 {size}, i64 -{frame_align})\n"
    );
    if !first_is_label {
        out.push_str(&prologue);
    }
    let epilogue = "  call void @__gpu_ss.set(i64 %__ss.old)\n";
    for (i, l) in body.iter().enumerate() {
        if let Some(&off) = offsets.get(&i) {
            let dst = allocas.iter().find(|a| a.line == i).map(|a| a.name).unwrap_or_default();
            let _ = writeln!(out, "  {dst} = getelementptr inbounds i8, ptr %__ss.base, i64 {off}");
        } else if is_frame_marker(l, &rewritten) {
            // lifetime markers and debug records must name an alloca.
        } else if l.trim_start().starts_with("ret ") || l.trim() == "ret void" {
            let prev_musttail = i > 0 && body[i - 1].contains("musttail call");
            if prev_musttail {
                // A musttail call must be right before `ret`: give the frame
                // back before it (its arguments cannot point into the frame).
                let at = out.rfind(body[i - 1]).expect("previous line was written");
                out.insert_str(at, epilogue);
            } else {
                out.push_str(epilogue);
            }
            out.push_str(l);
        } else {
            out.push_str(l);
        }
        if i == 0 && first_is_label {
            out.push_str(&prologue);
        }
    }
    if target == Target::Amdgcn {
        all_out.push_str(&flatten_private(out, &mut report.renamed));
    } else {
        all_out.push_str(out);
    }
    report.functions += 1;
    report.allocas += allocas.len();
}

/// amdgcn: a rewritten function's private pointers become flat (see the
/// module docs). Records renamed intrinsics in `renamed`.
fn flatten_private(function: &str, renamed: &mut BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(function.len());
    for line in function.split_inclusive('\n') {
        let mut l = line.replace("ptr addrspace(5)", "ptr");
        // `addrspacecast` from flat to flat is not valid IR; it is now a
        // no-op: constant ones (`addrspacecast (ptr null to ptr)`) become
        // their operand, instructions a bitcast.
        let mut from = 0;
        while let Some(found) = l[from..].find("addrspacecast (ptr ") {
            let at = from + found;
            let open = at + "addrspacecast ".len();
            let operand_at = open + "(ptr ".len();
            let inner = closing_paren(&l[open..]).map(|close| &l[operand_at..open + close]);
            match inner.and_then(|i| i.strip_suffix(" to ptr")).filter(|o| !o.starts_with("addrspace(")) {
                Some(operand) => {
                    let operand = operand.to_string();
                    let end = operand_at + operand.len() + " to ptr)".len();
                    l.replace_range(at..end, &operand);
                }
                None => from = operand_at,
            }
        }
        let mut from = 0;
        while let Some(found) = l[from..].find("addrspacecast ptr ") {
            let at = from + found;
            let rest = &l[at + "addrspacecast ptr ".len()..];
            let to = top_level_to(rest);
            if !rest.starts_with("addrspace(") && to.is_some_and(|t| t.starts_with("ptr") && !t.starts_with("ptr addrspace(")) {
                l.replace_range(at..at + "addrspacecast".len(), "bitcast");
            }
            from = at + "addrspacecast".len();
        }
        for (old, new) in private_intrinsics(&l) {
            l = l.replace(&format!("@{old}("), &format!("@{new}("));
            renamed.insert(new, old);
        }
        out.push_str(&l);
    }
    out
}

/// What follows the ` to ` of a cast operand `s` (the first one outside
/// parentheses: the operand may be a constant expression with casts).
fn top_level_to(s: &str) -> Option<&str> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ' ' if depth == 0 && s[i..].starts_with(" to ") => return Some(&s[i + " to ".len()..]),
            _ => {}
        }
    }
    None
}

/// The index of the `)` closing the `(` that `s` starts with.
pub(crate) fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `(name, flat name)` of each `@llvm.*` callee of `line` whose mangled
/// suffix names address space 5 (`.p5`).
fn private_intrinsics(line: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in line.match_indices("@llvm.") {
        let name: String = line[at + 1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_').collect();
        let parts: Vec<&str> = name.split('.').collect();
        if parts.contains(&"p5") {
            let flat = parts.iter().map(|p| if *p == "p5" { "p0" } else { p }).collect::<Vec<_>>().join(".");
            found.push((name, flat));
        }
    }
    found
}

/// Declarations of the renamed intrinsics the module does not declare yet,
/// made from the old ones with flat pointers.
fn flat_intrinsic_declarations(ir: &str, renamed: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (new, old) in renamed {
        if ir.lines().any(|l| l.starts_with("declare ") && l.contains(&format!("@{new}("))) {
            continue;
        }
        let Some(decl) = ir.lines().find(|l| l.starts_with("declare ") && l.contains(&format!("@{old}("))) else {
            // Not declared: the IR was already invalid; llc will say so.
            continue;
        };
        let _ = writeln!(out, "{}", decl.replace(&format!("@{old}("), &format!("@{new}(")).replace("ptr addrspace(5)", "ptr"));
    }
    out
}

/// `%x = alloca <rest>` → (`%x`, `<rest>`).
fn parse_alloca(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    let (dst, rhs) = t.split_once(" = ")?;
    if !dst.starts_with('%') {
        return None;
    }
    Some((dst, rhs.strip_prefix("alloca ")?))
}

/// `llvm.lifetime.*` calls and `#dbg_declare` records naming a rewritten alloca.
fn is_frame_marker(line: &str, names: &[&str]) -> bool {
    let t = line.trim_start();
    let marker = (t.starts_with("call void @llvm.lifetime.") || t.starts_with("tail call void @llvm.lifetime."))
        || t.starts_with("#dbg_declare(")
        || t.starts_with("#dbg_assign(");
    marker && names.iter().any(|n| mentions(t, n))
}

/// Whether `text` uses the value `name` (not a longer name starting alike).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let next = text[i + name.len()..].chars().next();
        !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '$' || c == '-')
    })
}

/// Size and alignment of `<type>[, <count>], align N[, ...]`; an error if
/// it is dynamic, in another address space or of a type we cannot size.
fn alloca_layout(rest: &str, types: &HashMap<String, String>, target: Target) -> Result<(u64, u64), String> {
    let (ty, after) = split_type(rest.trim_start());
    let after = after.trim_start();
    let after = after.strip_prefix(',').ok_or("unexpected alloca syntax")?.trim_start();
    let Some(align_and_more) = after.strip_prefix("align ") else {
        return Err(format!("dynamic or unusual alloca (`{}`)", rest.trim()));
    };
    let align: u64 = align_and_more.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("").parse().map_err(|_| "no alignment")?;
    let space = align_and_more.split_once("addrspace(").map(|(_, n)| n.split(')').next().unwrap_or(""));
    if space != target.alloca_space() {
        return Err("alloca in another address space".into());
    }
    let (size, _) = type_layout(ty, types, 0)?;
    Ok((size, align.max(1)))
}

/// The first type of `s` and what follows it.
pub(crate) fn split_type(s: &str) -> (&str, &str) {
    let bytes = s.as_bytes();
    let close = match bytes.first() {
        Some(b'[') => Some(b']'),
        Some(b'{') => Some(b'}'),
        Some(b'<') => Some(b'>'),
        _ => None,
    };
    if let Some(close) = close {
        let open = bytes[0];
        let mut depth = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == open || (open == b'<' && b == b'{') || (open == b'{' && b == b'[') {
                depth += 1;
            } else if b == close || (open == b'<' && b == b'}') || (open == b'{' && b == b']') {
                depth -= 1;
                if depth == 0 {
                    // `<{ ... }>`: a packed struct.
                    return (&s[..=i], &s[i + 1..]);
                }
            }
        }
        return (s, "");
    }
    let end = s.find([',', ' ']).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// (size, ABI alignment) of an LLVM type under the NVPTX data layout.
fn type_layout(ty: &str, types: &HashMap<String, String>, depth: u32) -> Result<(u64, u64), String> {
    let ty = ty.trim();
    if depth > 32 {
        return Err(format!("type `{ty}` nests too deep"));
    }
    let simple = match ty {
        "ptr" => Some((8, 8)),
        "half" | "bfloat" => Some((2, 2)),
        "float" => Some((4, 4)),
        "double" => Some((8, 8)),
        "fp128" => Some((16, 16)),
        _ => None,
    };
    if let Some(l) = simple {
        return Ok(l);
    }
    if let Some(bits) = ty.strip_prefix('i').and_then(|b| b.parse::<u64>().ok()) {
        let bytes = bits.div_ceil(8).next_power_of_two();
        return Ok((bytes, bytes.min(16)));
    }
    if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let (n, elem) = inner.split_once(" x ").ok_or_else(|| format!("cannot read array type `{ty}`"))?;
        let n: u64 = n.trim().parse().map_err(|_| format!("cannot read array type `{ty}`"))?;
        let (size, align) = type_layout(elem, types, depth + 1)?;
        return Ok((n * size.next_multiple_of(align), align));
    }
    if let Some(inner) = ty.strip_prefix("<{").and_then(|t| t.strip_suffix("}>")) {
        let mut size = 0;
        for f in fields(inner) {
            size += type_layout(f, types, depth + 1)?.0;
        }
        return Ok((size, 1));
    }
    if let Some(inner) = ty.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        let (n, elem) = inner.split_once(" x ").ok_or_else(|| format!("cannot read vector type `{ty}`"))?;
        let n: u64 = n.trim().parse().map_err(|_| format!("cannot read vector type `{ty}`"))?;
        let (size, _) = type_layout(elem, types, depth + 1)?;
        let bytes = (n * size).next_power_of_two();
        return Ok((bytes, bytes));
    }
    if let Some(inner) = ty.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut size, mut align) = (0u64, 1u64);
        for f in fields(inner) {
            let (s, a) = type_layout(f, types, depth + 1)?;
            size = size.next_multiple_of(a) + s;
            align = align.max(a);
        }
        return Ok((size.next_multiple_of(align), align));
    }
    if ty.starts_with('%') {
        let def = types.get(ty).ok_or_else(|| format!("unknown type `{ty}`"))?;
        return type_layout(def, types, depth + 1);
    }
    Err(format!("cannot size type `{ty}`"))
}

/// The comma-separated top-level fields of a struct body.
fn fields(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let (f, after) = split_type(rest);
        out.push(f);
        rest = after.trim_start().strip_prefix(',').unwrap_or(after).trim_start();
        if after.trim().is_empty() {
            break;
        }
    }
    out
}

/// `%T = type {...}` definitions.
fn named_types(ir: &str) -> HashMap<String, String> {
    ir.lines()
        .filter(|l| l.starts_with('%'))
        .filter_map(|l| l.split_once(" = type "))
        .map(|(n, t)| (n.to_string(), t.trim().to_string()))
        .collect()
}

/// The frame helpers the rewritten functions call; `opt -passes=always-inline`
/// inlines them. A frame below the limit, or one that wrapped around, is an
/// overflow.
fn helpers(target: Target) -> String {
    // Globals are in address space 1 on amdgcn, the generic one on nvptx.
    let (space, global) = match target {
        Target::Nvptx => ("", "ptr"),
        Target::Amdgcn => (" addrspace(1)", "ptr addrspace(1)"),
    };
    format!(
        r#"
@{SHARED_STACKS_SYMBOL} ={space} constant i32 1, align 4

define internal i64 @__gpu_ss.get() alwaysinline nounwind {{
  %slot = load ptr, {global} @{SLOT_SYMBOL}, align 8
  %sp = load i64, ptr %slot, align 8
  ret i64 %sp
}}

define internal ptr @__gpu_ss.enter(i64 %sp, i64 %size, i64 %mask) alwaysinline nounwind {{
  %slot = load ptr, {global} @{SLOT_SYMBOL}, align 8
  %limit.at = getelementptr inbounds i8, ptr %slot, i64 8
  %limit = load i64, ptr %limit.at, align 8
  %below = sub i64 %sp, %size
  %new = and i64 %below, %mask
  %low = icmp ult i64 %new, %limit
  %wrapped = icmp ugt i64 %new, %sp
  %bad = or i1 %low, %wrapped
  br i1 %bad, label %overflow, label %ok, !prof !{{!"branch_weights", i32 1, i32 1048575}}
overflow:
  call void @{OVERFLOW_SYMBOL}()
  unreachable
ok:
  store i64 %new, ptr %slot, align 8
  %base = inttoptr i64 %new to ptr
  ret ptr %base
}}

define internal void @__gpu_ss.set(i64 %sp) alwaysinline nounwind {{
  %slot = load ptr, {global} @{SLOT_SYMBOL}, align 8
  store i64 %sp, ptr %slot, align 8
  ret void
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = r#"%Pair = type { i32, i64 }
@__gpu_stack_slot = global [8 x i8] zeroinitializer, align 8

define internal void @f(ptr %p) unnamed_addr #0 {
start:
  %a = alloca [24 x i8], align 8
  %ab = alloca i32, align 4
  %p2 = alloca %Pair, align 8
  call void @llvm.lifetime.start.p0(ptr nonnull %a)
  call void @g(ptr %a, ptr %ab, ptr %p2)
  call void @llvm.lifetime.end.p0(ptr nonnull %a)
  br i1 true, label %bb1, label %bb2

bb1:                                              ; preds = %start
  ret void

bb2:                                              ; preds = %start
  ret void
}

define internal i32 @nolocals(i32 %x) {
  %y = add i32 %x, 1
  ret i32 %y
}

define ptx_kernel void @__gpu_start(ptr %l) {
  %pair = alloca [16 x i8], align 8
  ret void
}

define void @__gpu_stack_overflow() {
  %m = alloca [64 x i8], align 8
  unreachable
}

define internal i64 @unnamed_entry(i64 %0) {
  %2 = alloca [4096 x i8], align 4096
  call void @h(ptr %2)
  %3 = load i64, ptr %2, align 8
  ret i64 %3
}
"#;

    #[test]
    fn moves_entry_allocas_into_one_frame_and_frees_it_at_every_ret() {
        let (out, report) = rewrite(MODULE, Target::Nvptx).unwrap();
        assert_eq!(report, Report { functions: 2, allocas: 4, ..Default::default() });
        // Frame of @f: [24 x i8] at 0, i32 at 24, %Pair (16 bytes, align 8) at 32 → 48.
        assert!(out.contains("start:\n  %__ss.old = call i64 @__gpu_ss.get()\n  %__ss.base = call ptr @__gpu_ss.enter(i64 %__ss.old, i64 48, i64 -8)\n"), "{out}");
        assert!(out.contains("  %a = getelementptr inbounds i8, ptr %__ss.base, i64 0\n"));
        assert!(out.contains("  %ab = getelementptr inbounds i8, ptr %__ss.base, i64 24\n"));
        assert!(out.contains("  %p2 = getelementptr inbounds i8, ptr %__ss.base, i64 32\n"));
        assert!(!out.contains("llvm.lifetime"), "lifetime markers of rewritten allocas go");
        assert_eq!(out.matches("  call void @__gpu_ss.set(i64 %__ss.old)\n  ret void\n").count(), 2);
        // An unlabelled entry block gets the prologue first; alignment 4096 is kept.
        assert!(out.contains("define internal i64 @unnamed_entry(i64 %0) {\n  %__ss.old = call i64 @__gpu_ss.get()\n  %__ss.base = call ptr @__gpu_ss.enter(i64 %__ss.old, i64 4096, i64 -4096)\n  %2 = getelementptr inbounds i8, ptr %__ss.base, i64 0\n"), "{out}");
        // Kernels, the overflow handler and frameless functions are untouched.
        assert!(out.contains("define ptx_kernel void @__gpu_start(ptr %l) {\n  %pair = alloca [16 x i8], align 8\n"));
        assert!(out.contains("define void @__gpu_stack_overflow() {\n  %m = alloca [64 x i8], align 8\n"));
        assert!(out.contains("define internal i32 @nolocals(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}"));
        assert!(out.contains("define internal ptr @__gpu_ss.enter("));
    }

    #[test]
    fn leaves_modules_without_the_runtime_and_odd_allocas_alone() {
        assert!(rewrite("define void @f() {\n  %a = alloca i32, align 4\n  ret void\n}\n", Target::Nvptx).is_none());
        let ir = "@__gpu_stack_slot = global ptr null\ndefine void @f(i64 %n) {\nstart:\n  br label %more\nmore:\n  %d = alloca i8, i64 %n, align 1\n  %o = alloca %Opaque, align 8\n  ret void\n}\n";
        let (out, report) = rewrite(ir, Target::Nvptx).unwrap();
        assert_eq!(report.functions, 0);
        assert_eq!(report.left_private, vec!["@f: %d is allocated outside the entry block", "@f: %o is allocated outside the entry block"]);
        assert!(out.contains("  %d = alloca i8, i64 %n, align 1\n"));
        let ir = "@__gpu_stack_slot = global ptr null\ndefine void @f(i64 %n) {\n  %o = alloca %Opaque, align 8\n  %d = alloca i8, i64 %n, align 1\n  ret void\n}\n";
        let (_, report) = rewrite(ir, Target::Nvptx).unwrap();
        assert_eq!(report.left_private.len(), 2, "{:?}", report.left_private);
        assert!(report.left_private[0].contains("unknown type `%Opaque`"));
        assert!(report.left_private[1].contains("dynamic"));
    }

    const AMD_MODULE: &str = r#"@__gpu_stack_slot = addrspace(1) global [8 x i8] zeroinitializer, align 8

define internal i64 @f(ptr %p) {
start:
  %a = alloca [16 x i8], align 8, addrspace(5)
  %b = alloca i32, align 4, addrspace(5)
  call void @llvm.lifetime.start.p5(ptr addrspace(5) %a)
  %g = getelementptr inbounds i8, ptr addrspace(5) %a, i32 8
  store i64 1, ptr addrspace(5) %g, align 8
  call void @llvm.memcpy.p0.p5.i64(ptr %p, ptr addrspace(5) %a, i64 16, i1 false)
  %flat = addrspacecast ptr addrspace(5) %b to ptr
  %glob = addrspacecast ptr addrspace(1) @__gpu_stack_slot to ptr
  %back = addrspacecast ptr getelementptr (i8, ptr addrspacecast (ptr addrspace(1) @__gpu_stack_slot to ptr), i64 8) to ptr addrspace(1)
  %null = icmp eq ptr %flat, addrspacecast (ptr addrspace(5) null to ptr)
  %q = select i1 %null, ptr addrspace(5) %a, ptr addrspace(5) addrspacecast (ptr inttoptr (i64 -1 to ptr) to ptr addrspace(5))
  call void @g(ptr %flat)
  %v = load i64, ptr addrspace(5) %q, align 8
  ret i64 %v
}

define amdgpu_kernel void @__gpu_start(ptr %l) {
  %pair = alloca [16 x i8], align 8, addrspace(5)
  call void @llvm.memcpy.p0.p5.i64(ptr %l, ptr addrspace(5) %pair, i64 16, i1 false)
  ret void
}

declare void @llvm.lifetime.start.p5(ptr addrspace(5) captures(none))
declare void @llvm.memcpy.p0.p5.i64(ptr noalias writeonly captures(none), ptr addrspace(5) noalias readonly captures(none), i64, i1 immarg)
"#;

    #[test]
    fn amdgcn_frames_become_flat_pointers_into_the_shared_stack() {
        let (out, report) = rewrite(AMD_MODULE, Target::Amdgcn).unwrap();
        assert_eq!((report.functions, report.allocas), (1, 2), "{:?}", report.left_private);
        let f = &out[out.find("define internal i64 @f").unwrap()..out.find("define amdgpu_kernel").unwrap()];
        assert!(f.contains("%__ss.base = call ptr @__gpu_ss.enter(i64 %__ss.old, i64 24, i64 -8)"), "{f}");
        assert!(f.contains("  %a = getelementptr inbounds i8, ptr %__ss.base, i64 0\n"));
        assert!(f.contains("  %b = getelementptr inbounds i8, ptr %__ss.base, i64 16\n"));
        assert!(!f.contains("addrspace(5)") && !f.contains("llvm.lifetime"), "{f}");
        assert!(f.contains("%g = getelementptr inbounds i8, ptr %a, i32 8\n  store i64 1, ptr %g, align 8\n"));
        assert!(f.contains("call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %a, i64 16, i1 false)"), "{f}");
        // Private-to-flat casts are no-ops now; casts from other spaces stay.
        assert!(f.contains("%flat = bitcast ptr %b to ptr\n"), "{f}");
        assert!(f.contains("%glob = addrspacecast ptr addrspace(1) @__gpu_stack_slot to ptr\n"), "{f}");
        assert!(f.contains("%back = addrspacecast ptr getelementptr (i8, ptr addrspacecast (ptr addrspace(1) @__gpu_stack_slot to ptr), i64 8) to ptr addrspace(1)\n"), "{f}");
        assert!(f.contains("%null = icmp eq ptr %flat, null\n"), "{f}");
        assert!(f.contains("select i1 %null, ptr %a, ptr inttoptr (i64 -1 to ptr)\n"), "{f}");
        assert_eq!(report.renamed.get("llvm.memcpy.p0.p0.i64").map(String::as_str), Some("llvm.memcpy.p0.p5.i64"));
        assert!(out.contains("declare void @llvm.memcpy.p0.p0.i64(ptr noalias writeonly captures(none), ptr noalias readonly captures(none), i64, i1 immarg)\n"), "{out}");
        // The kernel keeps its private frame; globals are in address space 1.
        assert!(out.contains("  %pair = alloca [16 x i8], align 8, addrspace(5)\n  call void @llvm.memcpy.p0.p5.i64(ptr %l, ptr addrspace(5) %pair"));
        assert!(out.contains("@__gpu_shared_stacks = addrspace(1) constant i32 1"));
        assert!(out.contains("%slot = load ptr, ptr addrspace(1) @__gpu_stack_slot, align 8"));
        // nvptx refuses allocas in another address space.
        let (_, nv) = rewrite(AMD_MODULE, Target::Nvptx).unwrap();
        assert_eq!(nv.functions, 0);
    }

    #[test]
    fn amdgcn_functions_with_a_private_alloca_left_stay_whole() {
        let ir = "@__gpu_stack_slot = addrspace(1) global ptr null\ndefine void @f(i64 %n) {\nstart:\n  %a = alloca i32, align 4, addrspace(5)\n  br label %more\nmore:\n  %d = alloca i8, i64 %n, align 1, addrspace(5)\n  store i32 0, ptr addrspace(5) %a, align 4\n  ret void\n}\n";
        let (out, report) = rewrite(ir, Target::Amdgcn).unwrap();
        assert_eq!(report.functions, 0);
        assert!(out.contains("  %a = alloca i32, align 4, addrspace(5)\n"), "{out}");
        assert!(out.contains("store i32 0, ptr addrspace(5) %a"));
    }

    #[test]
    fn sizes_llvm_types_like_the_nvptx_data_layout() {
        let types = named_types("%S = type { i8, [3 x i16], ptr }\n%P = type <{ i8, i32 }>\n");
        let l = |t: &str| type_layout(t, &types, 0).unwrap();
        assert_eq!(l("i1"), (1, 1));
        assert_eq!(l("i128"), (16, 16));
        assert_eq!(l("[5 x i32]"), (20, 4));
        assert_eq!(l("%S"), (16, 8));
        assert_eq!(l("%P"), (5, 1));
        assert_eq!(l("<4 x float>"), (16, 16));
        assert_eq!(l("{ double, i8 }"), (16, 8));
        assert_eq!(l("[2 x { i64, i8 }]"), (32, 8));
    }

    #[test]
    fn finds_names_only_as_whole_values() {
        assert!(mentions("call void @llvm.lifetime.start.p0(ptr %a)", "%a"));
        assert!(!mentions("call void @llvm.lifetime.start.p0(ptr %ab)", "%a"));
        assert!(!mentions("call void @llvm.lifetime.start.p0(ptr %a.i)", "%a"));
    }
}
