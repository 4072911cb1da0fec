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
//! How a rewritten function finds its lane's stack pointer and limit is the
//! [`Protocol`]: through the pair on every call ([`Protocol::Pair`], the
//! default), or, on nvptx with `GPU_STACK_ARGS=1`, as two arguments the
//! rewritten functions pass each other ([`Protocol::Args`]), with the pair
//! read only where code the pass does not rewrite (the kernel, the overflow
//! handler) or code that switches stacks (it refers to the slot:
//! `call_on_stack`) calls in.
//!
//! A module that does not define `@__gpu_stack_slot` (no runtime) is left
//! alone. Register spills and the call ABI's register saves stay in private
//! memory: they are never shared. `alloca`s outside the entry block
//! (dynamically sized: Rust emits none) and types this pass cannot size
//! keep their private frame; [`Report`] lists them (on amdgcn the whole
//! function then stays private).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

use crate::Target;
use crate::ir_text::{Callee, address_uses, call_parts, closing_paren, function_name, is_label, split_type};

/// The global holding the address of each lane's `[sp, limit]` pair; what a
/// frame that does not fit calls (it reports and aborts).
pub use rt_abi::symbols::{STACK_OVERFLOW as OVERFLOW_SYMBOL, STACK_SLOT as SLOT_SYMBOL};
/// Defined (as 1) in a module whose frames were moved; the launcher looks
/// for it to give the program its stacks.
pub use rt_abi::symbols::SHARED_STACKS_SYMBOL;

/// The stack pointer parameter of a function rewritten under
/// [`Protocol::Args`] (the frames' pointer at the call: the caller's frame
/// bottom).
pub const SP_PARAM: &str = "%__ss.sp";
/// Its limit parameter (the pair's limit when the chain was entered).
pub const LIMIT_PARAM: &str = "%__ss.limit";

/// How a rewritten function learns its lane's stack pointer and limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// Every frame loads the slot, then the pair, stores its stack pointer
    /// there and restores it at `ret`: a chain of dependent loads and a
    /// store on every framed call (about 100 ns on an H200:
    /// `xtask/probes/frame_costs.cu`).
    #[default]
    Pair,
    /// Rewritten functions take [`SP_PARAM`] and [`LIMIT_PARAM`] as two
    /// trailing `i64` parameters, carve their frames below the first and
    /// pass their frame's bottom to what they call. Every function with a
    /// frame takes them, every function whose address is taken (every
    /// indirect call passes them), and every caller of one of these; a
    /// leaf without a frame keeps its signature. The pair is the truth only
    /// at the edges:
    /// - code the pass does not rewrite (kernels, the overflow handler)
    ///   reads it before each call;
    /// - a function that refers to the slot (the stack switch,
    ///   `call_on_stack`) publishes its own frame's bottom in it on entry,
    ///   restores what it held on return, and reads it before each call,
    ///   so a switch it makes reaches its callees;
    /// - a frame that does not fit (and the recursion check) publishes the
    ///   caller's pointer before calling the handler, whose report then
    ///   runs below the live frames.
    ///
    /// nvptx only: amdgcn's whole-wave call (`amd_lanes`) calls lane work
    /// with its arguments in fixed registers.
    ///
    /// Not the default (`GPU_STACK_ARGS=1` asks for it), measured on an H200
    /// against the pair (`bench-results/link-ab/2026-11-28-stack-args/`): a
    /// framed call 163 → 102 ns, formatting 7–19 % faster, one `println!`
    /// 4 %; but hello-threads' PTX 13 % larger, spawn_join 3 % and barrier
    /// N=all 4 % slower, and 1,000 levels of recursion no longer fit the
    /// default call stack (the two values a recursive function keeps across
    /// its call are saved on the driver's stack at every level: std's
    /// overflow report at 1,000 where the pair's protocol reaches it).
    Args,
}

/// What the pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The protocol the rewritten functions use.
    pub protocol: Protocol,
    /// Why [`Protocol::Args`] was asked for and not used.
    pub pair_because: Option<String>,
    /// Under [`Protocol::Args`]: functions that take the stack arguments.
    pub takers: usize,
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

/// Rewrites module `ir` for `target` under protocol `wanted` (or the pair
/// where the module cannot take arguments: [`Report::pair_because`]);
/// `None` if it has no runtime (no `@__gpu_stack_slot`).
pub fn rewrite(ir: &str, target: Target, wanted: Protocol) -> Option<(String, Report)> {
    if !defines_global(ir, SLOT_SYMBOL) {
        return None;
    }
    let types = named_types(ir);
    let mut out = String::with_capacity(ir.len() + ir.len() / 8);
    let mut report = Report::default();
    let takes_args = match wanted {
        Protocol::Pair => None,
        Protocol::Args => match stack_argument_takers(ir, target) {
            Ok(takers) => Some(takers),
            Err(why) => {
                report.pair_because = Some(why);
                None
            }
        },
    };
    if let Some(takers) = &takes_args {
        report.protocol = wanted;
        report.takers = takers.len();
    }
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
        match &takes_args {
            Some(takers) => rewrite_function_args(line, &body, &types, takers, &mut out, &mut report),
            None => rewrite_function(line, &body, &types, target, &mut out, &mut report),
        }
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
    let (frame, private_left) = frame_of(name, body, types, target, report);
    let Some(Frame { allocas, offsets, size, align: frame_align }) = frame else { return keep(all_out) };
    if target == Target::Amdgcn && private_left {
        // On amdgcn a function's private pointers all become flat, so a
        // frame is moved whole or not at all.
        return keep(all_out);
    }
    let mut out = String::new();
    let out = &mut out;
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

/// A function's shared frame: its entry block's allocas, each at its offset.
struct Frame<'a> {
    allocas: Vec<Alloca<'a>>,
    /// Body line of an alloca → its offset in the frame.
    offsets: HashMap<usize, u64>,
    /// Bytes, a multiple of `align`.
    size: u64,
    /// At least 8.
    align: u64,
}

/// The frame of function `name` (`None`: it has no alloca to move), and
/// whether an alloca stays private (recorded in `report`).
fn frame_of<'a>(
    name: &str,
    body: &[&'a str],
    types: &HashMap<String, String>,
    target: Target,
    report: &mut Report,
) -> (Option<Frame<'a>>, bool) {
    // The entry block: up to the first label after the first line.
    let entry_end = body.iter().enumerate().skip(1).find(|(_, l)| is_label(l)).map_or(body.len(), |(i, _)| i);
    let mut allocas = Vec::new();
    let mut private_left = false;
    for (i, l) in body.iter().enumerate() {
        let Some((dst, rest)) = parse_alloca(l) else { continue };
        if i >= entry_end {
            report.left_private.push(format!("@{name}: {dst} is allocated outside the entry block"));
            private_left = true;
            continue;
        }
        match alloca_layout(rest, types, target) {
            Ok((size, align)) => allocas.push(Alloca { line: i, name: dst, size, align }),
            Err(why) => {
                report.left_private.push(format!("@{name}: {dst}: {why}"));
                private_left = true;
            }
        }
    }
    if allocas.is_empty() {
        return (None, private_left);
    }
    // Frame layout: allocas in order, each at its alignment.
    let align = allocas.iter().map(|a| a.align).max().unwrap_or(1).max(8);
    let mut offsets = HashMap::new();
    let mut size = 0u64;
    for a in &allocas {
        size = size.next_multiple_of(a.align);
        offsets.insert(a.line, size);
        size += a.size;
    }
    let size = size.next_multiple_of(align);
    (Some(Frame { allocas, offsets, size, align }), private_left)
}

/// Whether defined function `name` (its `define` line `header`) takes the
/// stack arguments under [`Protocol::Args`]: all but kernels, the
/// overflow handler and the pass's helpers.
fn takes_stack_arguments(header: &str, name: &str, target: Target) -> bool {
    !(header.contains(target.kernel_keyword()) || name == OVERFLOW_SYMBOL || name.starts_with("__gpu_ss."))
}

/// The defined functions of `ir` that take the stack arguments: those with
/// a frame, or whose address is taken (an indirect call passes them), or
/// that refer to the slot, and every function that calls one of these or
/// calls through a pointer. The rest (leaves without frames: the
/// allocator's and the atomics' paths) keep their signatures, so their
/// callers keep no stack pointer live across them for nothing: passing it
/// everywhere made `Box` new+drop 11 % slower on an H200.
///
/// `Err`: why the module cannot take [`Protocol::Args`] (amdgcn; a
/// function that would take the arguments has variable ones; a function an
/// indirect call could reach without them, a declared one, a kernel or the
/// handler, has its address taken).
fn stack_argument_takers(ir: &str, target: Target) -> Result<HashSet<String>, String> {
    if target != Target::Nvptx {
        return Err("amdgcn's whole-wave call passes lane work its arguments in fixed registers".into());
    }
    struct Function<'a> {
        calls: Vec<&'a str>,
        needs: bool,
    }
    let mut functions: HashMap<&str, Function> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    // Functions an indirect call could reach without their taking the
    // arguments: declared ones (not intrinsics), kernels, the handler.
    let mut without: HashSet<&str> = HashSet::new();
    let mut varargs: Option<&str> = None;
    // Address uses, each name once, in the order first met.
    let mut taken: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut current: Option<&str> = None;
    let slot = format!("@{SLOT_SYMBOL}");
    for line in ir.lines() {
        let defined = line.starts_with("define ");
        if defined || line.starts_with("declare ") {
            let name = function_name(line);
            current = None;
            if defined && takes_stack_arguments(line, name, target) {
                if varargs.is_none() && parameters(line).is_some_and(|p| p.contains("...")) {
                    varargs = Some(name);
                }
                functions.insert(name, Function { calls: Vec::new(), needs: false });
                order.push(name);
                current = Some(name);
            } else if !name.starts_with("llvm.") {
                without.insert(name);
            }
            continue;
        }
        if line.starts_with('}') {
            current = None;
            continue;
        }
        let called = call_parts(line).map(|(c, _)| c);
        if let Some(f) = current.and_then(|c| functions.get_mut(c)) {
            match &called {
                Some(Callee::Direct(name)) => f.calls.push(name),
                Some(Callee::Indirect(_)) => f.needs = true,
                None => {}
            }
            if parse_alloca(line).is_some() || mentions(line, &slot) {
                f.needs = true;
            }
        }
        for name in address_uses(line, called.as_ref()) {
            if seen.insert(name) {
                taken.push(name);
            }
        }
    }
    if let Some(name) = varargs {
        return Err(format!("@{name} takes variable arguments"));
    }
    if let Some(name) = taken.iter().find(|name| without.contains(*name)) {
        return Err(format!("@{name} takes no stack arguments and its address is taken"));
    }
    for name in &taken {
        if let Some(f) = functions.get_mut(name) {
            f.needs = true;
        }
    }
    // Callers of those that need the arguments need them: to a fixed point.
    loop {
        let mut changed = false;
        for name in &order {
            if functions[name].needs {
                continue;
            }
            if functions[name].calls.iter().any(|c| functions.get(c).is_some_and(|g| g.needs)) {
                functions.get_mut(name).expect("listed").needs = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(functions.into_iter().filter(|(_, f)| f.needs).map(|(n, _)| n.to_string()).collect())
}

/// The text between the parentheses of a `define`/`declare` line's
/// parameter list.
fn parameters(header: &str) -> Option<&str> {
    let (open, close) = parameter_parens(header)?;
    Some(&header[open + 1..close])
}

/// Byte offsets of the `(` and `)` around a header's parameters.
fn parameter_parens(header: &str) -> Option<(usize, usize)> {
    let at = header.find('@')? + 1;
    let after_name = match header[at..].strip_prefix('"') {
        Some(q) => at + 1 + q.find('"')? + 1,
        None => at + header[at..].find('(')?,
    };
    if header.as_bytes().get(after_name) != Some(&b'(') {
        return None;
    }
    Some((after_name, after_name + closing_paren(&header[after_name..])?))
}

/// `text` with `, i64 sp, i64 limit` (or without the comma, for an empty
/// list) inserted before the `)` at `close`, which closes the list opened
/// at `open`.
fn append_pair(text: &str, open: usize, close: usize, sp: &str, limit: &str) -> String {
    let comma = if text[open + 1..close].trim().is_empty() { "" } else { ", " };
    format!("{}{comma}i64 {sp}, i64 {limit}{}", &text[..close], &text[close..])
}

/// The `(` and `)` of `line`'s call arguments when it calls a function
/// that takes the stack arguments: a direct call to one of `takers`, or
/// any indirect call.
fn stack_call(line: &str, takers: &HashSet<String>) -> Option<(usize, usize)> {
    let (callee, open) = call_parts(line)?;
    let passes = match callee {
        Callee::Direct(name) => takers.contains(name),
        Callee::Indirect(_) => true,
    };
    if !passes {
        return None;
    }
    Some((open, open + closing_paren(&line[open..])?))
}

/// [`Protocol::Args`]: rewrites one function (see [`Protocol::Args`]).
fn rewrite_function_args(
    header: &str,
    body: &[&str],
    types: &HashMap<String, String>,
    takers: &HashSet<String>,
    all_out: &mut String,
    report: &mut Report,
) {
    let name = function_name(header);
    if name.starts_with("__gpu_ss.") {
        all_out.push_str(header);
        body.iter().for_each(|l| all_out.push_str(l));
        return;
    }
    let mut reloads = 0;
    // Before a call from code that does not have the arguments (or reads
    // them from the pair): read the pair, name the two values.
    let mut reload = |out: &mut String, or_zero: bool| {
        reloads += 1;
        let (sp, limit) = match or_zero {
            true => ("@__gpu_ss.word_or_zero(i64 0)", "@__gpu_ss.word_or_zero(i64 8)"),
            false => ("@__gpu_ss.get()", "@__gpu_ss.limit()"),
        };
        let _ = writeln!(out, "  %__ss.c{reloads}.sp = call i64 {sp}");
        let _ = writeln!(out, "  %__ss.c{reloads}.limit = call i64 {limit}");
        (format!("%__ss.c{reloads}.sp"), format!("%__ss.c{reloads}.limit"))
    };
    if !takers.contains(name) && takes_stack_arguments(header, name, Target::Nvptx) {
        // A leaf without a frame (nor callees that need the arguments).
        all_out.push_str(header);
        body.iter().for_each(|l| all_out.push_str(l));
        return;
    }
    if !takers.contains(name) {
        // Kernels and the handler: their frames stay private; their calls
        // read the pair (or zeros before the kernel has set it up, where a
        // frame then overflows as it did under the pair's protocol).
        all_out.push_str(header);
        for l in body {
            match stack_call(l, takers) {
                Some((open, close)) => {
                    let (sp, limit) = reload(all_out, true);
                    all_out.push_str(&append_pair(l, open, close, &sp, &limit));
                }
                None => all_out.push_str(l),
            }
        }
        return;
    }
    let boundary = body.iter().any(|l| mentions(l, &format!("@{SLOT_SYMBOL}")));
    let (frame, _) = frame_of(name, body, types, Target::Nvptx, report);
    let rewritten: Vec<&str> = frame.as_ref().map_or(Vec::new(), |f| f.allocas.iter().map(|a| a.name).collect());
    let (open, close) = parameter_parens(header).expect("a define line has parameters");
    let mut out = append_pair(header, open, close, SP_PARAM, LIMIT_PARAM);
    let mut prologue = String::new();
    if boundary {
        prologue.push_str("  %__ss.saved = call i64 @__gpu_ss.get()\n");
    }
    let own_sp = match &frame {
        Some(f) => {
            let _ = writeln!(
                prologue,
                "  %__ss.base = call ptr @__gpu_ss.enter_args(i64 {SP_PARAM}, i64 {}, i64 -{}, i64 {LIMIT_PARAM})\n  %__ss.new = ptrtoint ptr %__ss.base to i64",
                f.size, f.align
            );
            "%__ss.new"
        }
        None => SP_PARAM,
    };
    if boundary {
        let _ = writeln!(prologue, "  call void @__gpu_ss.set(i64 {own_sp})");
    }
    let epilogue = "  call void @__gpu_ss.set(i64 %__ss.saved)\n";
    let first_is_label = body.first().is_some_and(|l| is_label(l));
    if !first_is_label {
        out.push_str(&prologue);
    }
    for (i, l) in body.iter().enumerate() {
        let musttail = l.contains("musttail call");
        if let Some(off) = frame.as_ref().and_then(|f| f.offsets.get(&i)) {
            let dst = parse_alloca(l).map(|(d, _)| d).unwrap_or_default();
            let _ = writeln!(out, "  {dst} = getelementptr inbounds i8, ptr %__ss.base, i64 {off}");
        } else if is_frame_marker(l, &rewritten) {
            // lifetime markers and debug records must name an alloca.
        } else if l.trim_start().starts_with("ret ") || l.trim() == "ret void" {
            let after_musttail = i > 0 && body[i - 1].contains("musttail call");
            if boundary && !after_musttail {
                out.push_str(epilogue);
            }
            out.push_str(l);
        } else if let Some((open, close)) = stack_call(l, takers) {
            let (sp, limit) = if musttail {
                // The frame is gone at a musttail call (its arguments
                // cannot point into it): the callee gets what we got.
                if boundary {
                    out.push_str(epilogue);
                }
                (SP_PARAM.to_string(), LIMIT_PARAM.to_string())
            } else if boundary {
                reload(&mut out, false)
            } else {
                (own_sp.to_string(), LIMIT_PARAM.to_string())
            };
            out.push_str(&append_pair(l, open, close, &sp, &limit));
        } else {
            if musttail && boundary {
                out.push_str(epilogue);
            }
            out.push_str(l);
        }
        if i == 0 && first_is_label {
            out.push_str(&prologue);
        }
    }
    all_out.push_str(&out);
    if let Some(f) = &frame {
        report.functions += 1;
        report.allocas += f.allocas.len();
    }
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

define internal ptr @__gpu_ss.enter_args(i64 %sp, i64 %size, i64 %mask, i64 %limit) alwaysinline nounwind {{
  %below = sub i64 %sp, %size
  %new = and i64 %below, %mask
  %low = icmp ult i64 %new, %limit
  %wrapped = icmp ugt i64 %new, %sp
  %bad = or i1 %low, %wrapped
  br i1 %bad, label %overflow, label %ok, !prof !{{!"branch_weights", i32 1, i32 1048575}}
overflow:
  call void @__gpu_ss.set(i64 %sp)
  call void @{OVERFLOW_SYMBOL}()
  unreachable
ok:
  %base = inttoptr i64 %new to ptr
  ret ptr %base
}}

define internal i64 @__gpu_ss.limit() alwaysinline nounwind {{
  %slot = load ptr, {global} @{SLOT_SYMBOL}, align 8
  %limit.at = getelementptr inbounds i8, ptr %slot, i64 8
  %limit = load i64, ptr %limit.at, align 8
  ret i64 %limit
}}

define internal i64 @__gpu_ss.word_or_zero(i64 %at) alwaysinline nounwind {{
  %slot = load ptr, {global} @{SLOT_SYMBOL}, align 8
  %unset = icmp eq ptr %slot, null
  br i1 %unset, label %zero, label %set
zero:
  ret i64 0
set:
  %word.at = getelementptr inbounds i8, ptr %slot, i64 %at
  %word = load i64, ptr %word.at, align 8
  ret i64 %word
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
        let (out, report) = rewrite(MODULE, Target::Nvptx, Protocol::Pair).unwrap();
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

    const ARGS_MODULE: &str = r#"@__gpu_stack_slot = global [8 x i8] zeroinitializer, align 8
@vtable = constant [1 x ptr] [ptr @leaf]

define internal void @f(ptr %fp) {
start:
  %a = alloca [24 x i8], align 8
  call void @g(ptr %a)
  call void %fp(ptr %a)
  %r = call i64 @leaf(i64 1)
  call void asm sideeffect "", "l"(ptr %a)
  call void @llvm.memset.p0.i64(ptr %a, i8 0, i64 24, i1 false)
  ret void
}

define internal void @g(ptr %p) {
  %n = call i64 @plain_leaf(i64 3)
  %x = call i64 @leaf(i64 2)
  %y = call i64 @tailer(i64 %x)
  ret void
}

define internal i64 @tailer(i64 %x) {
  %y = musttail call i64 @leaf(i64 %x)
  ret i64 %y
}

define internal i64 @leaf(i64 %x) {
  ret i64 %x
}

define internal i64 @plain_leaf(i64 %x) {
  %y = call i64 @plain_leaf2(i64 %x)
  ret i64 %y
}

define internal i64 @plain_leaf2(i64 %x) {
  ret i64 %x
}

define internal void @switch(ptr %entry) {
  %s = alloca i64, align 8
  %pair = load ptr, ptr @__gpu_stack_slot, align 8
  store i64 0, ptr %pair, align 8
  call void %entry(ptr %s)
  ret void
}

define ptx_kernel void @__gpu_start(ptr %l) {
  %pair = alloca [24 x i8], align 8
  call void @f(ptr @g)
  ret void
}

define void @__gpu_stack_overflow() {
  call void @g(ptr null)
  unreachable
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)
"#;

    /// The body of function `name` in `ir`, header included.
    fn function<'a>(ir: &'a str, name: &str) -> &'a str {
        let start = ir.match_indices("define ").map(|(i, _)| i).find(|&i| ir[i..].lines().next().unwrap().contains(&format!(" @{name}("))).unwrap();
        &ir[start..start + ir[start..].find("\n}\n").unwrap() + 3]
    }

    #[test]
    fn args_protocol_passes_the_stack_to_every_rewritten_function() {
        let (out, report) = rewrite(ARGS_MODULE, Target::Nvptx, Protocol::Args).unwrap();
        assert_eq!((report.protocol, report.pair_because.as_deref()), (Protocol::Args, None));
        assert_eq!((report.functions, report.allocas), (2, 2));
        let f = function(&out, "f");
        assert!(f.starts_with("define internal void @f(ptr %fp, i64 %__ss.sp, i64 %__ss.limit) {\nstart:\n  %__ss.base = call ptr @__gpu_ss.enter_args(i64 %__ss.sp, i64 24, i64 -8, i64 %__ss.limit)\n  %__ss.new = ptrtoint ptr %__ss.base to i64\n  %a = getelementptr"), "{f}");
        // Direct and indirect calls pass the frame's bottom; intrinsics and
        // inline asm get nothing; nothing is restored at `ret`.
        assert!(f.contains("call void @g(ptr %a, i64 %__ss.new, i64 %__ss.limit)\n"), "{f}");
        assert!(f.contains("call void %fp(ptr %a, i64 %__ss.new, i64 %__ss.limit)\n"), "{f}");
        assert!(f.contains("%r = call i64 @leaf(i64 1, i64 %__ss.new, i64 %__ss.limit)\n"), "{f}");
        assert!(f.contains("call void asm sideeffect \"\", \"l\"(ptr %a)\n"), "{f}");
        assert!(f.contains("call void @llvm.memset.p0.i64(ptr %a, i8 0, i64 24, i1 false)\n  ret void\n"), "{f}");
        assert!(!f.contains("__gpu_ss.get") && !f.contains("__gpu_ss.set"), "{f}");
        // A frameless function passes on what it got, a musttail call too.
        let g = function(&out, "g");
        assert!(g.contains("%x = call i64 @leaf(i64 2, i64 %__ss.sp, i64 %__ss.limit)\n  %y = call i64 @tailer(i64 %x, i64 %__ss.sp, i64 %__ss.limit)\n"), "{g}");
        let tailer = function(&out, "tailer");
        assert!(tailer.contains("  %y = musttail call i64 @leaf(i64 %x, i64 %__ss.sp, i64 %__ss.limit)\n  ret i64 %y\n"), "{tailer}");
        assert!(function(&out, "leaf").starts_with("define internal i64 @leaf(i64 %x, i64 %__ss.sp, i64 %__ss.limit) {\n  ret i64 %x\n"));
        // Frameless functions that reach no frame (nor a pointer) keep
        // their signatures, and their callers pass nothing.
        assert!(g.contains("  %n = call i64 @plain_leaf(i64 3)\n"), "{g}");
        assert!(function(&out, "plain_leaf").starts_with("define internal i64 @plain_leaf(i64 %x) {\n  %y = call i64 @plain_leaf2(i64 %x)\n"));
        // The stack switch publishes its frame, reads the pair before each
        // call and restores the pair at `ret`.
        let sw = function(&out, "switch");
        assert!(sw.contains("  %__ss.saved = call i64 @__gpu_ss.get()\n  %__ss.base = call ptr @__gpu_ss.enter_args(i64 %__ss.sp, i64 8, i64 -8, i64 %__ss.limit)\n  %__ss.new = ptrtoint ptr %__ss.base to i64\n  call void @__gpu_ss.set(i64 %__ss.new)\n"), "{sw}");
        assert!(sw.contains("  %__ss.c1.sp = call i64 @__gpu_ss.get()\n  %__ss.c1.limit = call i64 @__gpu_ss.limit()\n  call void %entry(ptr %s, i64 %__ss.c1.sp, i64 %__ss.c1.limit)\n  call void @__gpu_ss.set(i64 %__ss.saved)\n  ret void\n"), "{sw}");
        // The kernel and the handler keep their headers and frames; their
        // calls read the pair (zeros before it is set up).
        let k = function(&out, "__gpu_start");
        assert!(k.starts_with("define ptx_kernel void @__gpu_start(ptr %l) {\n  %pair = alloca [24 x i8], align 8\n  %__ss.c1.sp = call i64 @__gpu_ss.word_or_zero(i64 0)\n  %__ss.c1.limit = call i64 @__gpu_ss.word_or_zero(i64 8)\n  call void @f(ptr @g, i64 %__ss.c1.sp, i64 %__ss.c1.limit)\n"), "{k}");
        assert!(function(&out, "__gpu_stack_overflow").contains("call void @g(ptr null, i64 %__ss.c1.sp, i64 %__ss.c1.limit)"));
        // A frame that does not fit publishes its caller's pointer first.
        let enter = function(&out, "__gpu_ss.enter_args");
        assert!(enter.contains("overflow:\n  call void @__gpu_ss.set(i64 %sp)\n  call void @__gpu_stack_overflow()\n"), "{enter}");
        // The pair's protocol is still there for A/B runs.
        let (pair, report) = rewrite(ARGS_MODULE, Target::Nvptx, Protocol::Pair).unwrap();
        assert_eq!(report.protocol, Protocol::Pair);
        assert!(function(&pair, "leaf").starts_with("define internal i64 @leaf(i64 %x) {"));
    }

    /// The argument protocol's output, with a recursive function's depth
    /// check, is IR that LLVM compiles to PTX, in which a framed function
    /// takes the two arguments and reads no slot outside its overflow path.
    #[test]
    fn args_protocol_output_compiles_with_llc() {
        let Ok(bin) = crate::llvm_bin() else {
            eprintln!("SKIPPED: no llvm-tools in the pinned toolchain");
            return;
        };
        let module = format!(
            "target triple = \"nvptx64-nvidia-cuda\"\n{ARGS_MODULE}\n\
             define internal i64 @rec(i64 %n) {{\n  %s = alloca i64, align 8\n  store i64 %n, ptr %s, align 8\n  \
             %z = icmp eq i64 %n, 0\n  br i1 %z, label %done, label %more\nmore:\n  %m = sub i64 %n, 1\n  \
             %r = call i64 @rec(i64 %m)\n  ret i64 %r\ndone:\n  ret i64 0\n}}\n\
             define void @__gpu_use_rec(ptr %out) {{\n  %r = call i64 @rec(i64 9)\n  store i64 %r, ptr %out, align 8\n  ret void\n}}\n"
        )
        .replace("define ptx_kernel void @__gpu_start(ptr %l) {", "define ptx_kernel void @__gpu_start(ptr %l) {\n  call void @__gpu_use_rec(ptr %l)");
        let (rewritten, report) = rewrite(&module, Target::Nvptx, Protocol::Args).unwrap();
        assert_eq!(report.protocol, Protocol::Args, "{:?}", report.pair_because);
        let (guarded, checked) = crate::call_stack::guard(&rewritten, crate::call_stack::Depth::Nvptx).unwrap();
        assert_eq!(checked, ["rec"]);
        assert!(guarded.contains("call void @__gpu_cs.check(i64 %__ss.sp)"), "{guarded}");
        let dir = std::env::temp_dir().join(format!("gpu-ld-stack-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ll, bc, ptx) = (dir.join("rewritten.ll"), dir.join("inlined.bc"), dir.join("out.ptx"));
        std::fs::write(&ll, &guarded).unwrap();
        let run = |tool: &str, args: &[std::ffi::OsString]| {
            let out = std::process::Command::new(bin.join(tool)).args(args).output().unwrap();
            assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run("opt", &["-passes=always-inline".into(), "-o".into(), bc.clone().into(), ll.into()]);
        let mut llc: Vec<std::ffi::OsString> = vec!["-mcpu=sm_90".into(), "-O3".into(), "-o".into(), ptx.clone().into()];
        llc.extend(crate::int128_float::LLC_NVPTX_ARGS.iter().map(|a| a.into()));
        llc.push(bc.into());
        run("llc", &llc);
        let ptx = std::fs::read_to_string(&ptx).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        // @f keeps its one parameter and takes the two; its body reads the
        // slot only on the overflow path (after the branch to it).
        let f_at = ptx.find(".func f(").expect("f is defined");
        let f = &ptx[f_at..f_at + ptx[f_at..].find("\n}\n").unwrap()];
        let header = &f[..f.find(')').unwrap()];
        assert_eq!(header.matches(".param .b64").count(), 3, "{f}");
        let first_slot = f.find("[__gpu_stack_slot]");
        let first_call = f.find("call.uni").expect("f calls");
        assert!(first_slot.is_none_or(|at| at > first_call), "f reads the slot before its calls: {f}");
    }

    #[test]
    fn args_protocol_refuses_modules_an_indirect_call_could_break() {
        let varargs = ARGS_MODULE.replace("define internal i64 @leaf(i64 %x) {", "define internal i64 @leaf(i64 %x, ...) {");
        let taken = format!("{ARGS_MODULE}declare void @extern_fn(ptr)\n@table = constant [1 x ptr] [ptr @extern_fn]\n");
        let kernel_taken = ARGS_MODULE.replace("call void @f(ptr @g)", "call void @f(ptr @__gpu_start)");
        for (ir, why) in [
            (varargs.as_str(), "@leaf takes variable arguments"),
            (taken.as_str(), "@extern_fn takes no stack arguments and its address is taken"),
            (kernel_taken.as_str(), "@__gpu_start takes no stack arguments and its address is taken"),
        ] {
            let (out, report) = rewrite(ir, Target::Nvptx, Protocol::Args).unwrap();
            assert_eq!((report.protocol, report.pair_because.as_deref()), (Protocol::Pair, Some(why)));
            assert!(out.contains("call i64 @__gpu_ss.get()"), "the pair's protocol instead");
        }
        // A direct call to a declared function is no use of its address.
        let called = format!("{ARGS_MODULE}declare void @extern_fn(ptr)\ndefine internal void @h() {{\n  call void @extern_fn(ptr null)\n  ret void\n}}\n");
        let (out, report) = rewrite(&called, Target::Nvptx, Protocol::Args).unwrap();
        assert_eq!(report.protocol, Protocol::Args);
        assert!(out.contains("  call void @extern_fn(ptr null)\n"));
        let (_, amd) = rewrite(AMD_MODULE, Target::Amdgcn, Protocol::Args).unwrap();
        assert_eq!(amd.protocol, Protocol::Pair);
    }

    #[test]
    fn leaves_modules_without_the_runtime_and_odd_allocas_alone() {
        assert!(rewrite("define void @f() {\n  %a = alloca i32, align 4\n  ret void\n}\n", Target::Nvptx, Protocol::Pair).is_none());
        let ir = "@__gpu_stack_slot = global ptr null\ndefine void @f(i64 %n) {\nstart:\n  br label %more\nmore:\n  %d = alloca i8, i64 %n, align 1\n  %o = alloca %Opaque, align 8\n  ret void\n}\n";
        let (out, report) = rewrite(ir, Target::Nvptx, Protocol::Pair).unwrap();
        assert_eq!(report.functions, 0);
        assert_eq!(report.left_private, vec!["@f: %d is allocated outside the entry block", "@f: %o is allocated outside the entry block"]);
        assert!(out.contains("  %d = alloca i8, i64 %n, align 1\n"));
        let ir = "@__gpu_stack_slot = global ptr null\ndefine void @f(i64 %n) {\n  %o = alloca %Opaque, align 8\n  %d = alloca i8, i64 %n, align 1\n  ret void\n}\n";
        let (_, report) = rewrite(ir, Target::Nvptx, Protocol::Pair).unwrap();
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
        let (out, report) = rewrite(AMD_MODULE, Target::Amdgcn, Protocol::Pair).unwrap();
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
        let (_, nv) = rewrite(AMD_MODULE, Target::Nvptx, Protocol::Pair).unwrap();
        assert_eq!(nv.functions, 0);
    }

    #[test]
    fn amdgcn_functions_with_a_private_alloca_left_stay_whole() {
        let ir = "@__gpu_stack_slot = addrspace(1) global ptr null\ndefine void @f(i64 %n) {\nstart:\n  %a = alloca i32, align 4, addrspace(5)\n  br label %more\nmore:\n  %d = alloca i8, i64 %n, align 1, addrspace(5)\n  store i32 0, ptr addrspace(5) %a, align 4\n  ret void\n}\n";
        let (out, report) = rewrite(ir, Target::Amdgcn, Protocol::Pair).unwrap();
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
