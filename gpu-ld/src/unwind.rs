//! Unwinding without exception tables: `invoke`, `landingpad` and `resume`
//! lowered to ordinary calls and branches on one word per thread.
//!
//! Neither LLVM GPU backend emits exception tables, and the hardware has no
//! way to walk a stack. So the unwinder is the program itself: each warp (a
//! std thread) has one word, the exception in flight (null: none), kept by
//! the runtime (`rt_common`), and after `opt` this pass rewrites the module
//! so that every frame checks it where an unwind could arrive:
//!
//! - `invoke f(..) to %normal unwind %pad` becomes `call f(..)` and a branch
//!   to `%pad` when an exception is in flight, else to `%normal`;
//! - `landingpad` becomes the runtime's [`CATCH`], which takes the exception
//!   (the word is null again while the pad runs its drops), as `{ptr, i32}`;
//!   every clause (`cleanup`, `catch`, an empty `filter`) enters the pad:
//!   Rust's catch is catch-all and its filters are abort pads;
//! - `resume` gives the exception back ([`RESUME`]) and returns;
//! - after any other call that may unwind, in a function that may unwind:
//!   return when an exception is in flight. A call that LLVM proved never
//!   returns (followed by `unreachable`) returns only by unwinding, so it
//!   returns without the check.
//!
//! A panic starts by calling [`RAISE`], which std's panic runtime declares
//! and nothing defines until here: during `opt` it is an unknown function
//! that may unwind, so LLVM keeps every caller of a panic may-unwind. This
//! pass makes it the runtime's [`RESUME`]. Returning from an unwinding
//! frame returns a zero value of the function's type, which no caller reads:
//! each caller checks the word first.
//!
//! What "may unwind" means is LLVM's, read from the optimized module: a
//! call unwinds unless the call or its callee is `nounwind` (the whole
//! program's `opt` has inferred it where it holds), or it calls an
//! intrinsic or inline asm without `unwind`. A module with no `invoke`, no
//! `landingpad` and no [`RAISE`] (built with `panic=abort`) is not touched.
//!
//! The check costs a load of the warp's word (a shared-memory load on
//! NVIDIA, a scratch load on AMD), a compare and a branch the hardware
//! predicts as not taken, after calls that were not inlined. A function
//! with several checks computes the word's address once, on entry
//! ([`WORD`]); one with a single check asks for the word ([`EXCEPTION`]).

use std::collections::{HashMap, HashSet};

use crate::ir_text::{call_parts, closing_paren, function_name, is_label, Callee};

pub use rt_abi::symbols::{
    UNWIND_CATCH as CATCH, UNWIND_EXCEPTION as EXCEPTION, UNWIND_RAISE as RAISE, UNWIND_RESUME as RESUME, UNWIND_WORD as WORD,
};

/// The runtime functions the lowered module calls, kept through `opt`.
pub const RUNTIME: [&str; 4] = [EXCEPTION, WORD, CATCH, RESUME];

/// The raise, linked in before `opt` where the program unwinds: it sets the
/// word ([`RESUME`]) and then runs an empty inline asm that may unwind, so
/// LLVM keeps every caller of a panic may-unwind, while AMD's attributor
/// sees what it reads (a declaration only would make it assume the worst
/// for every function that can panic, and the kernel would be passed every
/// implicit input). The lowering's check after that asm returns.
pub fn raise_ir() -> String {
    format!(
        "; gpu-ld: the panic runtime's raise (gpu-ld/src/unwind.rs)\n\
         declare void @{RESUME}(ptr)\n\n\
         define void @{RAISE}(ptr %e) {{\n  call void @{RESUME}(ptr %e)\n  call void asm sideeffect unwind \"\", \"\"()\n  ret void\n}}\n"
    )
}

/// What [`lower`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub invokes: usize,
    pub landing_pads: usize,
    pub resumes: usize,
    /// Calls followed by a check of the exception word.
    pub checked_calls: usize,
    /// Calls that never return normally, made to return when unwinding.
    pub unwinding_returns: usize,
}

/// Why a module cannot be lowered.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// It unwinds, but the runtime's functions are not in it.
    NoRuntime(&'static str),
    /// Something this pass does not lower (funclet pads, type ids).
    Unsupported(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NoRuntime(name) => write!(
                f,
                "the program unwinds (it was built with panic=unwind) but has no GPU unwinding runtime \
                 ({name} is not defined): build it with this installation's std, or with panic = \"abort\""
            ),
            Refused::Unsupported(what) => write!(f, "cannot lower unwinding: {what}"),
        }
    }
}

/// Whether `ir` unwinds at all: it has landing pads, invokes or raises.
pub fn unwinds(ir: &str) -> bool {
    let raise = format!("@{RAISE}(");
    ir.lines().any(|l| {
        let t = l.trim_start();
        invoke_keyword(l).is_some() || t.contains(" = landingpad ") || t.starts_with("resume ") || (!t.starts_with(';') && l.contains(&raise))
    })
}

/// `ir` with unwinding lowered, or `None` when it does not unwind.
/// `word_once`: a function with several checks finds the word's address on
/// entry ([`WORD`]), which needs an address the runtime can tell from the
/// first instruction of the kernel on (NVIDIA: the warp's entry in shared
/// memory, by `%tid`; AMD: beside the lane's stack pointer, which the
/// kernel entry publishes before any call: `Hal::unwind_word`).
pub fn lower(ir: &str, word_once: bool) -> Result<Option<(String, Report)>, Refused> {
    if !unwinds(ir) {
        return Ok(None);
    }
    for name in RUNTIME {
        if !ir.lines().any(|l| l.starts_with("define ") && function_name(l) == name) {
            return Err(Refused::NoRuntime(name));
        }
    }
    for word in ["catchswitch", "cleanuppad", "catchpad", "llvm.eh.typeid.for"] {
        if ir.lines().any(|l| !l.trim_start().starts_with(';') && l.contains(word)) {
            return Err(Refused::Unsupported(format!("`{word}` (Rust's landing pads have none)")));
        }
    }
    let module = Module::read(ir);
    let mut report = Report::default();
    let mut out = String::with_capacity(ir.len() + ir.len() / 8);
    let lines: Vec<&str> = ir.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("define ") && line.trim_end().ends_with('{') {
            let line = without_personality(line);
            let line = line.as_str();
            let end = (i + 1..lines.len()).find(|&k| lines[k] == "}").unwrap_or(lines.len());
            let f = Function { header: line, body: &lines[i + 1..end] };
            f.lower(&module, word_once, &mut out, &mut report)?;
            out.push_str("}\n");
            i = end + 1;
            continue;
        }
        if line.starts_with("declare ") && function_name(line) == RAISE {
            i += 1;
            continue;
        }
        if let Some(group) = attribute_group(line)
            && !module.nounwind_groups.contains(group)
        {
            // A group of functions or calls that may unwind: "never returns"
            // is no longer true of them once unwinding returns.
            let line = line.replace(" noreturn ", " ");
            // A group must name something: a string attribute LLVM ignores.
            out.push_str(&line.replace("= { }", "= { \"gpu-ld-unwinds\" }"));
            out.push('\n');
            i += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out.push_str(&format!("!{} = !{{!\"branch_weights\", i32 1, i32 {UNLIKELY}}}\n", module.weights_node));
    // A raise only declared (not linked in by [`raise_ir`]): its calls set the word.
    let raise = format!("@{RAISE}(");
    let defined = ir.lines().any(|l| l.starts_with("define ") && function_name(l) == RAISE);
    let out = if !defined && out.contains(&raise) { out.replace(&raise, &format!("@{RESUME}(")) } else { out };
    Ok(Some((out, report)))
}

/// How much likelier the normal path is than unwinding, for block placement.
const UNLIKELY: u32 = 1 << 20;

/// The unwinding blocks' label prefix (a dot keeps it from any rustc name).
const LABEL: &str = "uw.";

/// What the rewrite of one function needs to know of the module.
struct Module<'a> {
    /// Attribute groups that hold `nounwind`.
    nounwind_groups: HashSet<&'a str>,
    /// Functions defined or declared `nounwind`.
    nounwind_functions: HashSet<&'a str>,
    /// The metadata node this pass adds for its branch weights.
    weights_node: usize,
}

impl<'a> Module<'a> {
    fn read(ir: &'a str) -> Module<'a> {
        let mut nounwind_groups = HashSet::new();
        let mut max_node = 0;
        for line in ir.lines() {
            if let Some(group) = attribute_group(line)
                && line.split_whitespace().any(|w| w == "nounwind")
            {
                nounwind_groups.insert(group);
            }
            if let Some(n) = line.strip_prefix('!').and_then(|l| l.split(' ').next()).and_then(|n| n.parse::<usize>().ok()) {
                max_node = max_node.max(n);
            }
        }
        let mut nounwind_functions = HashSet::new();
        for line in ir.lines().filter(|l| l.starts_with("define ") || l.starts_with("declare ")) {
            let name = function_name(line);
            let attrs = after_parameters(line);
            let nounwind = name.starts_with("llvm.")
                || attrs.split_whitespace().any(|w| w == "nounwind" || w.strip_prefix('#').is_some_and(|g| nounwind_groups.contains(g)));
            if nounwind && name != RAISE {
                nounwind_functions.insert(name);
            }
        }
        Module { nounwind_groups, nounwind_functions, weights_node: max_node + 1 }
    }

    /// Whether the call or invoke on `line` may unwind.
    fn may_unwind(&self, line: &str) -> bool {
        let Some((callee, open)) = call_parts(line) else {
            // Inline asm unwinds only when it says so (`asm sideeffect unwind`).
            let t = line.trim_start();
            let asm = t.split_once("call ").map(|(_, r)| r).filter(|r| r.contains("asm "));
            return asm.is_some_and(|r| r.split('"').next().is_some_and(|head| head.contains(" unwind ")));
        };
        if let Callee::Direct(name) = callee
            && self.nounwind_functions.contains(name)
        {
            return false;
        }
        let rest = &line[open..];
        let attrs = closing_paren(rest).map_or("", |c| &rest[c + 1..]);
        let attrs = attrs.split(", !").next().unwrap_or("");
        !attrs.split_whitespace().any(|w| w == "nounwind" || w.strip_prefix('#').is_some_and(|g| self.nounwind_groups.contains(g)))
    }
}

/// `N` of `attributes #N = { ... }`.
fn attribute_group(line: &str) -> Option<&str> {
    line.strip_prefix("attributes #")?.split(' ').next()
}

/// The text of a `define`/`declare` line after its parameter list.
fn after_parameters(line: &str) -> &str {
    let name_at = line.find('@').unwrap_or(0);
    let open = line[name_at..].find('(').map_or(line.len(), |o| name_at + o);
    closing_paren(&line[open..]).map_or("", |c| &line[open + c + 1..])
}

struct Function<'a> {
    header: &'a str,
    body: &'a [&'a str],
}

impl Function<'_> {
    fn lower(&self, module: &Module, word_once: bool, out: &mut String, report: &mut Report) -> Result<(), Refused> {
        let name = function_name(self.header);
        let attrs = after_parameters(self.header);
        let may_unwind = !attrs.split_whitespace().any(|w| w == "nounwind" || w.strip_prefix('#').is_some_and(|g| module.nounwind_groups.contains(g)));
        let touched = self.body.iter().any(|l| {
            let t = l.trim_start();
            t.contains("invoke ") || t.contains(" landingpad ") || t.starts_with("resume ") || (may_unwind && module.may_unwind(l))
        });
        if !touched {
            out.push_str(self.header);
            out.push('\n');
            for l in self.body {
                out.push_str(l);
                out.push('\n');
            }
            return Ok(());
        }
        let ret = return_type(self.header).ok_or_else(|| Refused::Unsupported(format!("the return type of `{name}`")))?;
        out.push_str(self.header);
        out.push('\n');
        let weights = format!(", !prof !{}", module.weights_node);
        let mut body: Vec<String> = Vec::with_capacity(self.body.len() + 16);
        // The blocks that were split: their label, and their last part's.
        let mut moved: HashMap<String, String> = HashMap::new();
        // The function's own label of the block being read (the part being
        // written may be a `uw.cN` after a check).
        let mut origin = entry_label(self.header);
        let mut fresh = 0usize;
        let mut returns = false;
        let mut k = 0;
        while k < self.body.len() {
            let line = self.body[k];
            k += 1;
            let t = line.trim_start();
            if is_label(line) {
                origin = label_name(line).to_string();
                body.push(line.to_string());
                continue;
            }
            if t.starts_with(';') || t.is_empty() {
                body.push(line.to_string());
                continue;
            }
            if let Some((value, _)) = t.split_once(" = landingpad ") {
                // The clauses follow on their own lines.
                while k < self.body.len() && is_clause(self.body[k]) {
                    k += 1;
                }
                fresh += 1;
                let taken = format!("%{LABEL}{fresh}");
                body.push(format!("  {taken} = call ptr @{CATCH}()"));
                body.push(format!("  {value} = insertvalue {{ ptr, i32 }} {{ ptr poison, i32 0 }}, ptr {taken}, 0"));
                report.landing_pads += 1;
                continue;
            }
            if let Some(operand) = t.strip_prefix("resume ") {
                fresh += 1;
                let e = format!("%{LABEL}{fresh}");
                let (ty, value) = split_operand(operand);
                body.push(format!("  {e} = extractvalue {ty} {value}, 0"));
                body.push(format!("  call void @{RESUME}(ptr {e})"));
                body.push(format!("  br label %{LABEL}ret"));
                returns = true;
                report.resumes += 1;
                continue;
            }
            if let Some(at) = invoke_keyword(line) {
                // `to label %a unwind label %b` may be on the next line.
                let mut text = line.to_string();
                while !text.contains(" unwind label ") && k < self.body.len() {
                    text.push(' ');
                    text.push_str(self.body[k].trim());
                    k += 1;
                }
                let (call, normal, pad, metadata) =
                    split_invoke(&text, at).ok_or_else(|| Refused::Unsupported(format!("an invoke in `{name}`: {text}")))?;
                fresh += 1;
                body.push(format!("{call}{metadata}"));
                body.extend(check(fresh, &pad, &normal, &weights));
                report.invokes += 1;
                continue;
            }
            if may_unwind && module.may_unwind(line) && !t.starts_with("musttail ") && !t.contains(" musttail call ") {
                body.push(line.to_string());
                // The next instruction, past comments.
                let next = (k..self.body.len()).find(|&n| !self.body[n].trim_start().starts_with(';'));
                if next.is_some_and(|n| self.body[n].trim() == "unreachable") {
                    let n = next.unwrap_or(k);
                    body.extend(self.body[k..n].iter().map(|l| l.to_string()));
                    body.push(format!("  br label %{LABEL}ret"));
                    k = n + 1;
                    returns = true;
                    report.unwinding_returns += 1;
                    continue;
                }
                fresh += 1;
                let cont = format!("{LABEL}c{fresh}");
                body.extend(check(fresh, &format!("%{LABEL}ret"), &format!("%{cont}"), &weights));
                body.push(format!("{cont}:"));
                moved.insert(origin.clone(), cont);
                returns = true;
                report.checked_calls += 1;
                continue;
            }
            body.push(line.to_string());
        }
        let checks = body.iter().filter(|l| l.ends_with(&format!(" = call ptr @{EXCEPTION}()"))).count();
        if word_once && checks >= 2 {
            // Several checks: the word's address once, on entry, and a load each.
            for line in body.iter_mut().filter(|l| l.ends_with(&format!(" = call ptr @{EXCEPTION}()"))) {
                let value = line.trim_start().split(' ').next().unwrap_or_default().to_string();
                *line = format!("  {value} = load ptr, ptr %{LABEL}w, align 8");
            }
            let entry = usize::from(body.first().is_some_and(|l| is_label(l)));
            body.insert(entry, format!("  %{LABEL}w = call ptr @{WORD}()"));
        }
        // A split block's successors now come from its last part.
        for line in &mut body {
            if !moved.is_empty() && line.contains(" = phi ") {
                *line = renamed_incoming(line, &moved);
            }
            out.push_str(line);
            out.push('\n');
        }
        if returns {
            out.push_str(&format!("{LABEL}ret:\n"));
            if ret == "void" {
                out.push_str("  ret void\n");
            } else {
                out.push_str(&format!("  ret {ret} zeroinitializer\n"));
            }
        }
        Ok(())
    }
}

/// The check after call number `n`: to `exception` when one is in flight,
/// else to `normal`.
fn check(n: usize, exception: &str, normal: &str, weights: &str) -> [String; 3] {
    [
        format!("  %{LABEL}{n} = call ptr @{EXCEPTION}()"),
        format!("  %{LABEL}{n}.c = icmp ne ptr %{LABEL}{n}, null"),
        format!("  br i1 %{LABEL}{n}.c, label {exception}, label {normal}{weights}"),
    ]
}

/// A phi's incoming blocks renamed by `moved`.
fn renamed_incoming(line: &str, moved: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(at) = rest.find(" ]") {
        let before = &rest[..at];
        let label_start = before.rfind(", %").map(|p| p + 3);
        match label_start {
            Some(s) => {
                let label = before[s..].trim_matches('"');
                out.push_str(&rest[..s]);
                match moved.get(label) {
                    Some(to) => out.push_str(to),
                    None => out.push_str(&before[s..]),
                }
            }
            None => out.push_str(before),
        }
        out.push_str(" ]");
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// The name of a label line (`bb3:`, `7:`, `"a b":`).
fn label_name(line: &str) -> &str {
    let head = line.split(';').next().unwrap_or("").trim_end();
    head.strip_suffix(':').unwrap_or(head).trim_matches('"')
}

/// The entry block's name when the function does not label it: the next
/// number after its unnamed parameters.
fn entry_label(header: &str) -> String {
    let name_at = header.find('@').unwrap_or(0);
    let open = header[name_at..].find('(').map_or(header.len(), |o| name_at + o);
    let params = closing_paren(&header[open..]).map_or("", |c| &header[open + 1..open + c]);
    let unnamed = params
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| w.strip_prefix('%').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        .count();
    unnamed.to_string()
}

fn is_clause(line: &str) -> bool {
    let t = line.trim_start();
    line.starts_with(char::is_whitespace) && (t == "cleanup" || t.starts_with("catch ") || t.starts_with("filter "))
}

/// Where `invoke` starts in an instruction line, if it is one.
fn invoke_keyword(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    if t.starts_with("invoke ") {
        return Some(indent);
    }
    let (_, rhs) = t.split_once(" = ")?;
    rhs.starts_with("invoke ").then(|| indent + t.find(" = invoke ").map_or(0, |p| p + 3))
}

/// An invoke as `(call line, normal label, pad label, metadata)`.
fn split_invoke(text: &str, at: usize) -> Option<(String, String, String, String)> {
    let to = text.find(" to label ")?;
    let call = format!("{}call{}", &text[..at], &text[at + "invoke".len()..to]);
    let rest = &text[to + " to label ".len()..];
    let (normal, rest) = rest.split_once(" unwind label ")?;
    let (pad, metadata) = match rest.find(", !") {
        Some(m) => (&rest[..m], &rest[m..]),
        None => (rest.trim_end(), ""),
    };
    Some((call, normal.trim().to_string(), pad.trim().to_string(), metadata.to_string()))
}

/// `{ ptr, i32 } %x` as (type, value).
fn split_operand(operand: &str) -> (&str, &str) {
    let (ty, value) = crate::ir_text::split_type(operand.trim());
    let value = value.trim();
    (ty, value.split(", !").next().unwrap_or(value).trim())
}

/// The return type of a `define` line (`void`, `i64`, `{ptr,i64}`: spaces
/// are left out, which LLVM reads the same).
fn return_type(header: &str) -> Option<String> {
    let name_at = header.find(" @")?;
    let before = header[..name_at].trim_end();
    if before.ends_with(')') {
        // `ptr addrspace(N)`
        let open = before.rfind(" addrspace(")?;
        let start = before[..open].rfind(' ').map_or(0, |p| p + 1);
        return Some(before[start..].to_string());
    }
    crate::ir_text::trailing_type(before)
}

/// A `define` line without its `personality`: no landing pad is left.
fn without_personality(header: &str) -> String {
    let Some(at) = header.find(" personality ") else { return header.to_string() };
    let rest = &header[at + " personality ".len()..];
    // `personality ptr @name` up to the next space.
    let mut words = rest.splitn(3, ' ');
    let (_ty, _name) = (words.next(), words.next());
    format!("{} {}", &header[..at], words.next().unwrap_or("{"))
}

#[cfg(test)]
mod tests;
