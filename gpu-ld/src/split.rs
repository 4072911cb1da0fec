//! Splits the optimized, rewritten module into parts that `llc` compiles at
//! the same time, one per core (NVPTX only).
//!
//! Why: after the whole-program `opt`, `llc` is the longest step of a link
//! (22 s of a 48 s rebuild of `examples/real-crates` on two cores, 70 % of
//! it instruction selection spread over a thousand functions), and it runs
//! on one core. Nothing whole-program is left for it to do: every function
//! compiles on its own. `ptxas` later sees the merged PTX whole, so no
//! optimization is lost. AMD has a split of its own ([`crate::amd_parts`]):
//! its parts are linked as objects, must keep the kernel's register figures,
//! and are cached across links.
//!
//! Each part holds every line that is not a definition (types, declarations,
//! attributes, metadata), every global variable (defined in part 0,
//! `external` in the others), its share of the function definitions, a
//! declaration of every other function, and a copy of each `alwaysinline`
//! function (the `always-inline` pass then inlines it where it is used).
//! Symbols with local linkage become `hidden` so the parts can reach each
//! other, renamed as NVPTX would rename them (`.` to `_$_`); the caller
//! makes them local again in the merged PTX
//! ([`gpu_toolchain::ptx_parts::merge`]).
use std::collections::{HashMap, HashSet};

use crate::ir_text::{closing_paren, function_name, split_type};

/// The parts, and the PTX names of the symbols that were local before.
pub struct Split {
    pub parts: Vec<String>,
    pub localized: HashSet<String>,
}

enum Item<'a> {
    /// Copied into every part.
    Common(&'a str),
    /// `appending` globals (`llvm.compiler.used`): part 0 only.
    FirstPart(&'a str),
    Global { line: &'a str, local: bool },
    Function { lines: &'a [&'a str], local: bool, always_inline: bool, owner: usize },
}

/// Splits `ir` (LLVM assembly) into `parts` modules. `None` when it has
/// fewer functions to share than parts, or something this splitter does not
/// handle (aliases, ifuncs, comdats, unnamed globals).
pub fn split(ir: &str, parts: usize) -> Option<Split> {
    let lines: Vec<&str> = ir.lines().collect();
    let inline_groups = inline_groups(&lines);

    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("define ") {
            let (body, local) = function_at(&lines, i)?;
            let always_inline = is_always_inline(line, &inline_groups);
            items.push(Item::Function { lines: body, local, always_inline, owner: 0 });
            i += body.len();
            continue;
        }
        if line.starts_with('$') {
            return None;
        }
        if line.starts_with('@') {
            let linkage = line.split(" = ").nth(1)?.split_whitespace().next()?;
            let rest = &line[line.find(" = ")? + 3..];
            if [" alias ", " ifunc "].iter().any(|k| rest.split(['[', '{', '<', '(']).next().unwrap_or("").contains(k)) {
                return None;
            }
            if linkage == "appending" {
                items.push(Item::FirstPart(line));
            } else {
                items.push(Item::Global { line, local: matches!(linkage, "internal" | "private") });
            }
        } else if !line.starts_with(';') {
            items.push(Item::Common(line));
        }
        i += 1;
    }

    // Largest first, each to the lightest part; part 0 carries the globals.
    let sizes: Vec<(usize, usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(k, item)| match item {
            Item::Function { lines, always_inline: false, .. } => Some((k, lines.iter().map(|l| l.len() + 1).sum())),
            _ => None,
        })
        .collect();
    if sizes.len() < parts || parts < 2 {
        return None;
    }
    let mut load = vec![0usize; parts];
    load[0] = items.iter().map(|it| if let Item::Global { line, .. } = it { line.len() } else { 0 }).sum();
    let mut order = sizes;
    order.sort_by_key(|&(_, size)| std::cmp::Reverse(size));
    for (k, size) in order {
        let p = (0..parts).min_by_key(|&p| load[p]).expect("parts >= 2");
        load[p] += size;
        if let Item::Function { owner, .. } = &mut items[k] {
            *owner = p;
        }
    }

    // Local symbols become hidden, under names PTX accepts.
    let mut names: HashSet<&str> = HashSet::new();
    let mut local_names: Vec<&str> = Vec::new();
    for item in &items {
        let (name, local) = match item {
            Item::Global { line, local } => (global_name(line), *local),
            Item::Function { lines, local, always_inline, .. } => (function_name(lines[0]), *local && !always_inline),
            _ => continue,
        };
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return None; // unnamed globals (`@0`) cannot be made external
        }
        names.insert(name);
        if local {
            local_names.push(name);
        }
    }
    let mut renames: HashMap<String, String> = HashMap::new();
    let mut localized = HashSet::new();
    for name in local_names {
        let mut clean = ptx_name(name);
        if clean != name {
            let base = clean.clone();
            let mut n = 0;
            while names.contains(clean.as_str()) {
                n += 1;
                clean = format!("{base}_$_{n}");
            }
            renames.insert(name.to_string(), clean.clone());
        }
        localized.insert(clean);
    }

    let mut out: Vec<String> = (0..parts).map(|_| String::with_capacity(ir.len() / parts + ir.len() / 8)).collect();
    for item in &items {
        for (p, s) in out.iter_mut().enumerate() {
            match item {
                Item::Common(line) => push_line(s, line, &renames),
                Item::FirstPart(line) if p == 0 => push_line(s, line, &renames),
                Item::FirstPart(_) => {}
                Item::Global { line, local } if p == 0 => push_line(s, &made_hidden(line, *local, "= "), &renames),
                Item::Global { line, local } => push_line(s, &global_declaration(line, *local)?, &renames),
                Item::Function { lines, always_inline: true, local, .. } => {
                    // One exported (`__gpu_unwind_catch`: kept through `opt`,
                    // named in the PTX) is defined in part 0 alone; the other
                    // parts' copies are only for inlining.
                    let head = if *local || p == 0 { lines[0].to_string() } else { available_externally(lines[0]) };
                    push_line(s, &head, &renames);
                    for l in &lines[1..] {
                        push_line(s, l, &renames);
                    }
                }
                Item::Function { lines, local, owner, .. } if *owner == p => {
                    push_line(s, &made_hidden(lines[0], *local, "define "), &renames);
                    for l in &lines[1..] {
                        push_line(s, l, &renames);
                    }
                }
                Item::Function { lines, local, .. } => push_line(s, &function_declaration(lines[0], *local)?, &renames),
            }
        }
    }
    Some(Split { parts: out, localized })
}

/// The attribute groups (`#N`) that hold `alwaysinline`.
pub(crate) fn inline_groups<'a>(lines: &[&'a str]) -> HashSet<&'a str> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("attributes "))
        .filter(|l| l.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w == "alwaysinline"))
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// Whether the function of `define` line `header` is `alwaysinline`,
/// itself or through one of `groups` ([`inline_groups`]).
pub(crate) fn is_always_inline(header: &str, groups: &HashSet<&str>) -> bool {
    let after_params = header.find('(').and_then(|p| closing_paren(&header[p..]).map(|c| &header[p + c + 1..])).unwrap_or("");
    after_params.split_whitespace().any(|t| t == "alwaysinline" || groups.contains(t))
}

/// The function whose `define` line is `lines[i]`: its lines through the
/// closing `}`, and whether its linkage is local.
pub(crate) fn function_at<'a>(lines: &'a [&'a str], i: usize) -> Option<(&'a [&'a str], bool)> {
    let end = i + lines[i..].iter().position(|l| *l == "}")?;
    let local = matches!(lines[i].split_whitespace().nth(1), Some("internal" | "private"));
    Some((&lines[i..=end], local))
}

/// The name NVPTX gives a symbol: `.` and other characters PTX does not
/// allow become `_$_`, as LLVM's NVPTXAssignValidGlobalNames does.
fn ptx_name(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            s.push(c);
        } else {
            s.push_str("_$_");
        }
    }
    s
}

pub(crate) fn global_name(line: &str) -> &str {
    let rest = &line[1..];
    &rest[..rest.find(" = ").unwrap_or(rest.len())]
}

/// `line` with its local linkage (the word after `after`) made `hidden`.
pub(crate) fn made_hidden(line: &str, local: bool, after: &str) -> String {
    if !local {
        return line.to_string();
    }
    let at = line.find(after).map_or(0, |p| p + after.len());
    let rest = &line[at..];
    let word = rest.find(' ').map_or(rest.len(), |e| e);
    format!("{}hidden{}", &line[..at], &rest[word..])
}

/// A `define` header of an exported function with its linkage made
/// `available_externally`: LLVM inlines it where it is used and emits no
/// definition, so the module that defines it is the only one.
fn available_externally(header: &str) -> String {
    const LINKAGES: [&str; 6] = ["external", "weak", "weak_odr", "linkonce", "linkonce_odr", "available_externally"];
    let rest = header.strip_prefix("define ").unwrap_or(header);
    let rest = match rest.split_once(' ') {
        Some((word, after)) if LINKAGES.contains(&word) => after,
        _ => rest,
    };
    format!("define available_externally {rest}")
}

/// `define` header → `declare` (arguments may keep their names; metadata
/// attachments such as `!dbg !12`, which a declaration may not carry, go).
pub(crate) fn function_declaration(header: &str, local: bool) -> Option<String> {
    let head = made_hidden(header, local, "define ");
    let mut body = head.strip_prefix("define ")?.trim_end().strip_suffix('{')?.trim_end();
    // Attachments come last, each `!kind !N`.
    while let Some((rest, node)) = body.rsplit_once(' ')
        && node.starts_with('!')
        && let Some((rest, kind)) = rest.rsplit_once(' ')
        && kind.starts_with('!')
    {
        body = rest.trim_end();
    }
    Some(format!("declare {body}"))
}

/// A global variable's definition → an `external` declaration of the same
/// type and alignment.
pub(crate) fn global_declaration(line: &str, local: bool) -> Option<String> {
    let name = global_name(line);
    let rest = &line[line.find(" = ")? + 3..];
    let mut kept = vec!["external"];
    if local {
        kept.push("hidden");
    }
    let mut tail = rest;
    loop {
        let word_end = tail.find(' ')?;
        let word = &tail[..word_end];
        tail = &tail[word_end + 1..];
        match word {
            "global" | "constant" => {
                kept.push(word);
                break;
            }
            "private" | "internal" | "dso_local" | "externally_initialized" => {}
            w => kept.push(w),
        }
    }
    let (ty, _) = split_type(tail.trim_start());
    let align = line.rfind(", align ").map(|p| {
        let n = &line[p + ", align ".len()..];
        &n[..n.find(|c: char| !c.is_ascii_digit()).unwrap_or(n.len())]
    });
    let mut decl = format!("@{name} = {} {ty}", kept.join(" "));
    if let Some(a) = align {
        decl.push_str(", align ");
        decl.push_str(a);
    }
    Some(decl)
}

/// Appends `line` with every renamed `@symbol` outside string constants
/// replaced.
fn push_line(out: &mut String, line: &str, renames: &HashMap<String, String>) {
    let mut copied = 0;
    if !renames.is_empty() && line.contains('@') {
        scan(line, |r, range| {
            if let Ref::Symbol(name) = r
                && let Some(new) = renames.get(name)
            {
                out.push_str(&line[copied..range.start + 1]);
                out.push_str(new);
                copied = range.end;
            }
        });
    }
    out.push_str(&line[copied..]);
    out.push('\n');
}

/// A reference in a line of LLVM assembly.
#[derive(Clone, Copy)]
pub(crate) enum Ref<'a> {
    Symbol(&'a str),
    Metadata(u32),
    Attributes(u32),
}

/// Calls `f` with each `@symbol`, `!N` and `#N` of `line` outside string
/// constants, with its byte range.
pub(crate) fn scan<'a>(line: &'a str, mut f: impl FnMut(Ref<'a>, std::ops::Range<usize>)) {
    let b = line.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            in_string = !in_string;
        } else if !in_string && matches!(c, b'@' | b'!' | b'#') {
            let start = i + 1;
            let mut end = start;
            if c == b'@' {
                while end < b.len() && (b[end].is_ascii_alphanumeric() || b"-$._".contains(&b[end])) {
                    end += 1;
                }
                if end > start {
                    f(Ref::Symbol(&line[start..end]), i..end);
                }
            } else {
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
                if end > start
                    && let Ok(n) = line[start..end].parse()
                {
                    f(if c == b'!' { Ref::Metadata(n) } else { Ref::Attributes(n) }, i..end);
                }
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
}

pub(crate) fn for_each_ref<'a>(line: &'a str, mut f: impl FnMut(Ref<'a>)) {
    scan(line, |r, _| f(r));
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"; ModuleID = 'x'
target triple = "nvptx64-nvidia-cuda"

%T = type { i64, ptr }

@llvm.compiler.used = appending global [1 x ptr] [ptr @flag], section "llvm.metadata"
@alloc.1 = private unnamed_addr constant <{ [4 x i8] }> <{ [4 x i8] c"a@b." }>, align 1
@flag = local_unnamed_addr global [8 x i8] zeroinitializer, align 8
@vtable = internal unnamed_addr constant <{ ptr, [8 x i8] }> <{ ptr @small.llvm.1, [8 x i8] zeroinitializer }>, align 8

; Function Attrs: nounwind
define internal fastcc void @big(ptr %0) unnamed_addr #0 {
start:
  call void @small.llvm.1(ptr @alloc.1)
  call void @helper()
  call void @helper()
  ret void
}

define internal void @small.llvm.1(ptr %p) unnamed_addr #0 {
  store ptr @vtable, ptr %p, align 8
  ret void
}

define internal void @helper() alwaysinline nounwind {
  ret void
}

define internal void @also_inline() unnamed_addr #1 {
  ret void
}

define void @exported_inline() #1 {
  ret void
}

define ptx_kernel void @__gpu_start(ptr %lb) unnamed_addr #0 {
  call fastcc void @big(ptr %lb)
  call void @also_inline()
  ret void
}

declare void @llvm.trap() #0

attributes #0 = { nounwind }
attributes #1 = { alwaysinline nounwind }
"#;

    #[test]
    fn each_function_once_every_other_declared() {
        let s = split(IR, 2).expect("splits");
        assert_eq!(s.parts.len(), 2);
        let all = s.parts.join("\n=====\n");
        for f in ["@big(", "@small_$_llvm_$_1(", "@__gpu_start("] {
            assert_eq!(all.matches(&format!("define hidden fastcc void {f}")).count() + all.matches(&format!("define hidden void {f}")).count() + all.matches(&format!("define ptx_kernel void {f}")).count(), 1, "{f}\n{all}");
        }
        for p in &s.parts {
            assert!(p.contains("target triple") && p.contains("%T = type") && p.contains("attributes #1"), "{p}");
            assert!(p.contains("declare void @llvm.trap() #0"));
            // alwaysinline functions are copied, local, into every part.
            assert!(p.contains("define internal void @helper() alwaysinline nounwind {"), "{p}");
            assert!(p.contains("define internal void @also_inline() unnamed_addr #1 {"), "{p}");
            assert!(!p.contains("small.llvm.1"), "renamed everywhere: {p}");
            assert!(!p.contains("; Function Attrs"));
        }
        let (first, second) = (&s.parts[0], &s.parts[1]);
        // An exported alwaysinline function: defined in part 0, inline-only elsewhere.
        assert!(first.contains("define void @exported_inline() #1 {"), "{first}");
        assert!(second.contains("define available_externally void @exported_inline() #1 {"), "{second}");
        assert_eq!(available_externally("define linkonce_odr hidden void @f() #1 {"), "define available_externally hidden void @f() #1 {");
        assert!(first.contains("@alloc_$_1 = hidden unnamed_addr constant <{ [4 x i8] }> <{ [4 x i8] c\"a@b.\" }>, align 1"), "{first}");
        assert!(first.contains("@vtable = hidden unnamed_addr constant <{ ptr, [8 x i8] }> <{ ptr @small_$_llvm_$_1,"), "{first}");
        assert!(first.contains("@llvm.compiler.used = appending"));
        assert!(first.contains("c\"a@b.\""), "strings untouched: {first}");
        assert!(!second.contains("@llvm.compiler.used"));
        assert!(second.contains("@alloc_$_1 = external hidden unnamed_addr constant <{ [4 x i8] }>, align 1"), "{second}");
        assert!(second.contains("@flag = external local_unnamed_addr global [8 x i8], align 8"), "{second}");
        assert!(second.contains("@vtable = external hidden unnamed_addr constant <{ ptr, [8 x i8] }>, align 8"), "{second}");
        assert!(all.contains("declare hidden fastcc void @big(ptr %0) unnamed_addr #0"), "{all}");
        let mut localized: Vec<&str> = s.localized.iter().map(String::as_str).collect();
        localized.sort();
        assert_eq!(localized, ["alloc_$_1", "big", "small_$_llvm_$_1", "vtable"]);
    }

    #[test]
    fn declarations_drop_metadata_attachments() {
        let d = function_declaration("define internal void @f(ptr noundef %0) unnamed_addr #6 !dbg !994 !prof !3 {", true);
        assert_eq!(d.as_deref(), Some("declare hidden void @f(ptr noundef %0) unnamed_addr #6"));
        let d = function_declaration("define void @g() #0 {", false);
        assert_eq!(d.as_deref(), Some("declare void @g() #0"));
    }

    #[test]
    fn declines_small_or_unusual_modules() {
        assert!(split(IR, 4).is_none(), "3 functions to share among 4 parts");
        assert!(split(IR, 1).is_none());
        assert!(split(&IR.replace("%T = type", "$c = comdat any\n%T = type"), 2).is_none());
        assert!(split(&format!("{IR}\n@a = internal alias i8, ptr @flag\n"), 2).is_none());
    }
}
