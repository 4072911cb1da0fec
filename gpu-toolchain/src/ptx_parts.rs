//! One PTX module as parts, and parts as one module.
//!
//! [`split`]: the launcher splits a module into parts that `ptxas -c`
//! compiles separately, in parallel, and `nvlink` links back into one cubin.
//! Why: `ptxas` compiling a whole program (the default, no `-c`) spends most
//! of its time on whole-program work that grows faster than the code: on
//! this project's programs it took 9.9 s for a 1.2 MB PTX compiled whole
//! against 2.5 s with `-c`, and a 25 MB one had not finished in 300 s, while
//! its 16 parts took 130 s of CPU in all (15 s the largest) and `nvlink`
//! 0.3 s. Parts also let a many-core host compile at once.
//!
//! Each part holds: the header (`.version`, `.target`, `.address_size`), a
//! prototype of each function it defines or names (`.visible` where this
//! part defines it, `.extern` elsewhere), the module-scope variables
//! (defined, `.visible`, in the part with the least work; `.extern` in the
//! others, those they name), and its share of the function definitions,
//! each made `.visible` so the other parts can call it. LLVM names every
//! symbol of the module uniquely, so nothing clashes. Declaring only what a
//! part names matters: with every declaration in every part, real-crates'
//! 16 parts took 121 s of `ptxas` on the H100's host, and 69 s without.
//!
//! [`merge`]: `gpu-ld` compiles an LLVM module split into parts with one
//! `llc` per core, and joins their PTX back into the one module `llc` would
//! have written.
use crate::error::PtxError;
use std::collections::HashSet;
use std::fmt::Write as _;

/// A function definition: its header (lines before `{`) and whole text.
pub(crate) struct Definition<'a> {
    pub(crate) is_kernel: bool,
    pub(crate) head: Vec<&'a str>,
    pub(crate) text: &'a str,
}

/// The parts of a module: what every part repeats, and the definitions.
pub(crate) struct Module<'a> {
    pub(crate) header: Vec<&'a str>,
    /// Source files of the `.loc` line info (`.file 3 "src/x.rs"`): number, path.
    pub(crate) files: Vec<(u32, &'a str)>,
    /// Prototypes of functions the module does not define (`.extern .func`).
    pub(crate) externs: Vec<String>,
    /// Module-scope variables, one line each.
    pub(crate) variables: Vec<&'a str>,
    pub(crate) definitions: Vec<Definition<'a>>,
    /// `.maxnreg N` of the kernel: every part gets `--maxrregcount N`, as
    /// whole-program `ptxas` applies the kernel's cap to what it calls.
    max_registers: Option<u32>,
}

const LINKAGE: [&str; 3] = [".visible ", ".weak ", ".extern "];

/// The linkage a header line opens with (`".visible "`), or `""`.
pub(crate) fn linkage(line: &str) -> &'static str {
    LINKAGE.into_iter().find(|l| line.trim_start().starts_with(l)).unwrap_or("")
}

fn strip_linkage(s: &str) -> &str {
    LINKAGE.iter().find_map(|l| s.strip_prefix(l)).unwrap_or(s).trim_start()
}

/// Whether `line` declares a module-scope variable (`.global`, `.const`,
/// `.shared`, after any linkage).
pub(crate) fn is_variable(line: &str) -> bool {
    let rest = strip_linkage(line);
    [".global", ".const", ".shared"].iter().any(|s| rest.starts_with(s))
}

/// Whether a function header line (after any linkage) opens a kernel.
pub(crate) fn is_kernel_header(line: &str) -> bool {
    strip_linkage(line).starts_with(".entry")
}

/// The function named by a PTX function or kernel header line
/// (`.visible .func (.param .b32 func_retval0) name(`), definition or
/// prototype; `None` for any other line.
pub fn header_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_end();
    for prefix in [".visible ", ".weak ", ".extern "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start();
    }
    let rest = rest.strip_prefix(".func").or_else(|| rest.strip_prefix(".entry"))?;
    let mut rest = rest.trim_start();
    if rest.starts_with('(') {
        // The return parameter, `(.param .b32 func_retval0)`.
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Byte offset of `line` (a slice of `text`) in `text`.
fn offset(text: &str, line: &str) -> usize {
    line.as_ptr() as usize - text.as_ptr() as usize
}

pub(crate) fn parse(ptx: &str) -> Result<Module<'_>, PtxError> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut m = Module { header: Vec::new(), files: Vec::new(), externs: Vec::new(), variables: Vec::new(), definitions: Vec::new(), max_registers: None };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        // A function or kernel header (definition or prototype).
        if header_name(line).is_some() {
            // The header runs to a `{` line (a definition) or a line ending in `;` (a prototype).
            let mut j = i;
            while j < lines.len() && lines[j].trim() != "{" && !lines[j].trim_end().ends_with(';') {
                j += 1;
            }
            if j == lines.len() {
                return Err(PtxError::UnterminatedHeader { line: i + 1 });
            }
            if lines[j].trim() == "{" {
                let mut k = j;
                while k < lines.len() && !lines[k].starts_with('}') {
                    k += 1;
                }
                if k == lines.len() {
                    return Err(PtxError::UnterminatedBody { line: i + 1 });
                }
                let is_kernel = is_kernel_header(line);
                let head = lines[i..j].to_vec();
                if is_kernel {
                    for h in &head {
                        // `.maxnreg 64    // @__gpu_start`
                        if let Some(n) = h.trim().strip_prefix(".maxnreg") {
                            m.max_registers = n.split_whitespace().next().and_then(|n| n.parse().ok());
                        }
                    }
                }
                let end = offset(ptx, lines[k]) + lines[k].len();
                m.definitions.push(Definition { is_kernel, head, text: &ptx[offset(ptx, line)..end] });
                i = k + 1;
            } else {
                if line.starts_with(".extern") {
                    m.externs.push(lines[i..=j].join("\n"));
                }
                // Other prototypes are written anew for every part.
                i = j + 1;
            }
            continue;
        }
        if is_variable(line) {
            if !t.ends_with(';') {
                return Err(PtxError::MultiLineVariable { line: i + 1 });
            }
            m.variables.push(line);
        } else if t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size") {
            m.header.push(line);
        } else if t.starts_with(".section") {
            // DWARF (`.section .debug_info { ... }`, written with any debug
            // info): its labels and offsets describe one module as `llc`
            // wrote it, so parts cannot share it. Dropped; the line info
            // (`.file`, `.loc`) stays, which is what `ptxas -lineinfo` and
            // the profilers read.
            i = section_end(&lines, i)? + 1;
            continue;
        } else if let Some(rest) = t.strip_prefix(".file") {
            // `.file 3 "path"` (with line info, `debug = "line-tables-only"`).
            let (n, path) = rest.trim_start().split_once(char::is_whitespace).ok_or(PtxError::UnknownLine { line: i + 1, text: t.to_string() })?;
            let n = n.parse().map_err(|_| PtxError::UnknownLine { line: i + 1, text: t.to_string() })?;
            m.files.push((n, path.trim()));
        } else if !(t.is_empty() || t.starts_with("//")) {
            return Err(PtxError::UnknownLine { line: i + 1, text: t.to_string() });
        }
        i += 1;
    }
    if m.header.is_empty() {
        return Err(PtxError::NoHeader);
    }
    Ok(m)
}

/// The last line of the `.section` that opens at `lines[i]`.
/// `.section .debug_macinfo { }` opens and closes on one line.
fn section_end(lines: &[&str], i: usize) -> Result<usize, PtxError> {
    let t = lines[i].trim();
    if t.contains('{') && t.ends_with('}') {
        return Ok(i);
    }
    (i + 1..lines.len()).find(|&k| lines[k].trim() == "}").ok_or(PtxError::UnterminatedBody { line: i + 1 })
}

/// A `.target` line without `debug`, which promises DWARF sections; other
/// lines as they are.
fn without_debug_target(line: &str) -> String {
    match line.trim_start().strip_prefix(".target") {
        Some(t) => format!(".target {}", t.split(',').map(str::trim).filter(|w| *w != "debug").collect::<Vec<_>>().join(", ")),
        None => line.to_string(),
    }
}

/// The header lines, without the `debug` of `.target sm_90, debug`: that
/// promises the DWARF sections, which [`parse`] drops.
pub(crate) fn header_text(header: &[&str]) -> String {
    let lines: Vec<String> = header.iter().map(|h| without_debug_target(h)).collect();
    lines.join("\n")
}

/// `ptx` without its DWARF sections and the `debug` of its `.target`, as
/// [`merge`] writes a module: the line info (`.file`, `.loc`) stays, which
/// is what `ptxas -lineinfo` and the profilers read, and the module is
/// the same whether `gpu-ld` ran one `llc` or several. `None` if `ptx` has
/// no DWARF.
pub fn without_dwarf(ptx: &str) -> Result<Option<String>, PtxError> {
    let lines: Vec<&str> = ptx.lines().collect();
    if !lines.iter().any(|l| l.trim_start().starts_with(".section")) {
        return Ok(None);
    }
    let mut out = String::with_capacity(ptx.len());
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with(".section") {
            i = section_end(&lines, i)? + 1;
            continue;
        }
        out.push_str(&without_debug_target(lines[i]));
        out.push('\n');
        i += 1;
    }
    Ok(Some(out))
}

/// The prototype of a definition, with the linkage given.
pub(crate) fn prototype(d: &Definition, linkage: &str) -> String {
    let mut s = String::from(linkage);
    for (i, h) in d.head.iter().enumerate() {
        let t = h.trim();
        if [".maxnreg", ".maxntid", ".reqntid", ".minnctapersm", ".pragma"].iter().any(|p| t.starts_with(p)) {
            continue;
        }
        let h = if i == 0 { strip_linkage(h) } else { h };
        // `.noreturn // @name`: the comment would swallow the `;`.
        let h = h.split("//").next().unwrap_or(h);
        s.push_str(h.trim_end());
        s.push('\n');
    }
    s.push_str(";\n");
    s
}

/// A variable's declaration for the parts that do not define it.
fn extern_variable(line: &str) -> String {
    let decl = strip_linkage(line.trim());
    let decl = match decl.find(" = ") {
        Some(p) => &decl[..p],
        None => decl.trim_end_matches(';'),
    };
    format!(".extern {decl};")
}

/// The words of PTX text that could name a symbol: runs of letters, digits,
/// `_` and `$` (LLVM writes every other character of a symbol as `_$_`).
pub(crate) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).filter(|w| !w.is_empty())
}

/// `ptxas`'s work on a function of `bytes` of PTX, in arbitrary units: it
/// grows as the size to the power 1.5. Measured on real-crates' 16 parts
/// (ptxas 13.0, -c): `regex_automata::meta::strategy::new`, 27,500 lines,
/// took 10.9 s alone, while 88 functions of 40,000 lines in all (the
/// largest 12,000) took 9.2 s; balanced by size alone, the part holding
/// the largest function took twice as long as any other.
fn ptxas_cost(bytes: usize) -> u64 {
    let b = bytes as f64;
    (b * b.sqrt()) as u64
}

/// Splits `ptx` into at most `parts` modules (fewer if it has fewer
/// functions), balancing `ptxas`'s work. Returns them and the register cap for
/// `ptxas --maxrregcount`, if the kernel has one.
pub fn split(ptx: &str, parts: usize) -> Result<(Vec<String>, Option<u32>), PtxError> {
    let m = parse(ptx)?;
    let parts = parts.clamp(1, m.definitions.len().max(1));
    // Largest first, each to the part with the least work, where a
    // function's work grows faster than its size (see [`ptxas_cost`]).
    let cost: Vec<u64> = m.definitions.iter().map(|d| ptxas_cost(d.text.len())).collect();
    let mut order: Vec<usize> = (0..m.definitions.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost[i]));
    let mut load = vec![0u64; parts];
    let mut owner = vec![0usize; m.definitions.len()];
    for i in order {
        let p = (0..parts).min_by_key(|&p| load[p]).expect("at least one part");
        owner[i] = p;
        load[p] += cost[i];
    }
    // Each part declares only what its own text names: every part declaring
    // every function and variable of a large program (1,400 prototypes and
    // 6,700 variables in real-crates) made about half of each part's text.
    let mut named: Vec<HashSet<&str>> = vec![HashSet::new(); parts];
    for (i, d) in m.definitions.iter().enumerate() {
        named[owner[i]].extend(identifiers(d.text));
    }
    // The part with the least work defines the variables (their initializers
    // name functions and variables): part 0 holds the costliest function,
    // which bounds the whole compile, and a large program's data is
    // seconds of ptxas too.
    let data_part = (0..parts).min_by_key(|&p| load[p]).expect("at least one part");
    for v in &m.variables {
        named[data_part].extend(identifiers(v));
    }
    // Names once, not once per part.
    let extern_names: Vec<Option<&str>> = m.externs.iter().map(|e| header_name(e)).collect();
    let definition_names: Vec<Option<&str>> = m.definitions.iter().map(|d| header_name(d.head[0])).collect();
    let mut out = Vec::with_capacity(parts);
    for (p, named) in named.iter().enumerate() {
        let mut s = header_text(&m.header);
        s.push_str("\n\n");
        // Every part keeps the whole file table: its `.loc`s keep their numbers.
        for (n, path) in &m.files {
            let _ = writeln!(s, ".file {n} {path}");
        }
        for (e, name) in m.externs.iter().zip(&extern_names) {
            if name.is_some_and(|n| named.contains(n)) {
                s.push_str(e);
                s.push('\n');
            }
        }
        for (i, d) in m.definitions.iter().enumerate() {
            let declared = owner[i] == p || definition_names[i].is_some_and(|n| named.contains(n));
            if !d.is_kernel && declared {
                s.push_str(&prototype(d, if owner[i] == p { ".visible " } else { ".extern " }));
            }
        }
        for v in &m.variables {
            if p == data_part {
                let _ = writeln!(s, ".visible {}", strip_linkage(v.trim()));
            } else if named.contains(variable_name(v)) {
                s.push_str(&extern_variable(v));
                s.push('\n');
            }
        }
        for (i, d) in m.definitions.iter().enumerate() {
            if owner[i] == p {
                s.push_str(".visible ");
                s.push_str(strip_linkage(d.text));
                s.push('\n');
            }
        }
        out.push(s);
    }
    Ok((out, m.max_registers))
}

/// A module-scope variable line without its initializer and `;`
/// (`.global .align 8 .b8 name[16] = {...};` → `.global .align 8 .b8 name[16]`).
pub(crate) fn variable_declaration(line: &str) -> &str {
    let decl = line.trim();
    decl.find(" = ").map_or(decl.trim_end_matches(';'), |p| &decl[..p])
}

/// The name a module-scope variable line declares (`.global .align 8 .b8 name[16] = {...};`).
pub(crate) fn variable_name(line: &str) -> &str {
    let last = variable_declaration(line).split_whitespace().last().unwrap_or("");
    &last[..last.find('[').unwrap_or(last.len())]
}

/// Joins PTX modules that `llc` wrote for the parts of one LLVM module
/// into one module: the first part's header, the prototypes of functions
/// that no part defines, a prototype of every function defined, every
/// variable defined, and every definition. `local` names the symbols the
/// split made external: they lose `.visible` again, as `llc` would have
/// written them from the whole module.
pub fn merge(parts: &[String], local: &HashSet<String>) -> Result<String, PtxError> {
    let modules = parts.iter().map(|p| parse(p)).collect::<Result<Vec<_>, _>>()?;
    let first = modules.first().ok_or(PtxError::NoParts)?;
    let mut defined = HashSet::new();
    for d in modules.iter().flat_map(|m| &m.definitions) {
        let name = header_name(d.head[0]).ok_or(PtxError::UnnamedDefinition)?;
        if !defined.insert(name) {
            return Err(PtxError::FunctionTwice { name: name.to_string() });
        }
    }
    let linkage = |name: &str| if local.contains(name) { "" } else { ".visible " };
    let mut s = header_text(&first.header);
    s.push_str("\n\n");
    let mut seen = HashSet::new();
    for e in modules.iter().flat_map(|m| &m.externs) {
        let name = header_name(e).unwrap_or("");
        if !defined.contains(name) && seen.insert(name) {
            s.push_str(e);
            s.push('\n');
        }
    }
    for d in modules.iter().flat_map(|m| &m.definitions).filter(|d| !d.is_kernel) {
        let name = header_name(d.head[0]).unwrap_or("");
        s.push_str(&prototype(d, linkage(name)));
    }
    let mut variables = HashSet::new();
    for v in modules.iter().flat_map(|m| &m.variables).filter(|v| !v.trim_start().starts_with(".extern")) {
        let name = variable_name(v);
        if !variables.insert(name) {
            return Err(PtxError::VariableTwice { name: name.to_string() });
        }
        let _ = writeln!(s, "{}{}", linkage(name), strip_linkage(v.trim()));
    }
    for v in modules.iter().flat_map(|m| &m.variables).filter(|v| v.trim_start().starts_with(".extern")) {
        let name = variable_name(v);
        if !variables.contains(name) && variables.insert(name) {
            let _ = writeln!(s, "{}", v.trim());
        }
    }
    // Each part numbered its source files from 1: one table for the whole
    // module, and each part's `.loc`s renumbered into it.
    let mut files: Vec<&str> = Vec::new();
    let mut renumber: Vec<std::collections::HashMap<u32, usize>> = Vec::new();
    for m in &modules {
        let mut map = std::collections::HashMap::new();
        for &(n, path) in &m.files {
            let global = files.iter().position(|f| *f == path).unwrap_or_else(|| {
                files.push(path);
                files.len() - 1
            });
            map.insert(n, global + 1);
        }
        renumber.push(map);
    }
    for (m, map) in modules.iter().zip(&renumber) {
        for d in &m.definitions {
            let name = header_name(d.head[0]).unwrap_or("");
            s.push_str(if d.is_kernel { ".visible " } else { linkage(name) });
            let text = strip_linkage(d.text);
            if map.iter().all(|(&from, &to)| from as usize == to) {
                s.push_str(text);
            } else {
                for line in text.lines() {
                    s.push_str(&renumbered_loc(line, map).unwrap_or_else(|| line.to_string()));
                    s.push('\n');
                }
                s.pop();
            }
            s.push('\n');
        }
    }
    for (i, path) in files.iter().enumerate() {
        let _ = writeln!(s, ".file {} {path}", i + 1);
    }
    Ok(s)
}

/// A `.loc FILE LINE COL` line with its file renumbered by `map`; `None`
/// for any other line.
fn renumbered_loc(line: &str, map: &std::collections::HashMap<u32, usize>) -> Option<String> {
    let t = line.trim_start();
    let rest = t.strip_prefix(".loc")?;
    let rest = rest.trim_start();
    let (n, tail) = rest.split_once(char::is_whitespace)?;
    let to = map.get(&n.parse().ok()?)?;
    Some(format!("{}.loc\t{to} {}", &line[..line.len() - t.len()], tail.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90
.address_size 64

.func  (.param .b32 func_retval0) helper
(
\t.param .b64 helper_param_0
)
;
.func die
(
)
.noreturn;
.extern .func vprintf
(
\t.param .b64 p
)
;
.global .align 8 .u64 table[2] = {helper, 8};
.visible .global .align 4 .b8 flag[4];
\t// .globl\t__gpu_start
.visible .entry __gpu_start(
\t.param .u64 lb
)
.maxnreg 64                                       // @__gpu_start
{
\tld.global.u32 %r2, [flag];
\tadd.u32 %r2, %r2, 1;
\tadd.u32 %r2, %r2, 2;
\tadd.u32 %r2, %r2, 3;
\tcall.uni vprintf, (%rd1);
\tcall.uni die, ();
\tret;
}
.func  (.param .b32 func_retval0) helper(
\t.param .b64 helper_param_0
)
{
\tmov.u32 %r1, 1;
\tld.global.u32 %r3, [flag];
\tret;
}
.func die()
.noreturn // @die
{
\ttrap;
}
";

    #[test]
    fn without_dwarf_keeps_the_line_info_and_drops_the_sections() {
        let ptx = ".version 7.8\n.target sm_90, debug\n.address_size 64\n\n.func f()\n{\n\t.loc\t1 3 4\n\tret;\n}\n\t.file\t1 \"/src/a.rs\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n\t}\n\t.section\t.debug_macinfo\t{\t}\n";
        let out = without_dwarf(ptx).unwrap().unwrap();
        assert_eq!(out, ".version 7.8\n.target sm_90\n.address_size 64\n\n.func f()\n{\n\t.loc\t1 3 4\n\tret;\n}\n\t.file\t1 \"/src/a.rs\"\n");
        assert!(without_dwarf(&out).unwrap().is_none());
        assert!(without_dwarf(".section .debug_info\n{\n.b8 1\n").is_err());
    }

    #[test]
    fn parts_declare_what_others_define() {
        let (parts, regs) = split(PTX, 2).unwrap();
        assert_eq!((parts.len(), regs), (2, Some(64)));
        let all = parts.join("\n=====\n");
        // Each definition once, made visible.
        assert_eq!(all.matches(".visible .entry __gpu_start(").count(), 1, "{all}");
        assert_eq!(all.matches("mov.u32 %r1, 1;").count(), 1);
        assert_eq!(all.matches("ld.global.u32 %r2, [flag];").count(), 1);
        for p in &parts {
            assert!(p.starts_with(".version 7.8\n.target sm_90\n.address_size 64\n"), "{p}");
        }
        // The kernel (calls die and vprintf, reads flag) and helper are the
        // largest: one part each; die goes with helper.
        let kernel = parts.iter().position(|p| p.contains(".entry __gpu_start")).unwrap();
        let (k, h) = (&parts[kernel], &parts[1 - kernel]);
        assert!(h.contains("mov.u32 %r1, 1;") && h.contains("\ttrap;"), "{h}");
        // A part declares what it names, and only that.
        assert!(k.contains(".extern .func vprintf"), "{k}");
        assert!(!h.contains("vprintf"), "{h}");
        assert!(k.contains(".extern .func die()\n.noreturn \n;") || k.contains(".extern .func die()\n.noreturn\n;"), "{k}");
        assert!(h.contains(".visible .func die()\n.noreturn \n;") || h.contains(".visible .func die()\n.noreturn\n;"), "{h}");
        assert!(h.contains(".visible .func  (.param .b32 func_retval0) helper(\n\t.param .b64 helper_param_0\n)\n;"), "{h}");
        // The kernel's part has the most work; the other defines the variables.
        assert_eq!(kernel, 0);
        assert!(h.contains(".visible .global .align 8 .u64 table[2] = {helper, 8};"), "{h}");
        assert!(h.contains(".visible .global .align 4 .b8 flag[4];"), "{h}");
        // The kernel's part declares the variable it reads, not the one it does not name.
        assert!(k.contains(".extern .global .align 4 .b8 flag[4];"), "{k}");
        assert!(!k.contains("table") && !k.contains("helper"), "{k}");
    }

    #[test]
    fn the_data_names_what_its_part_declares() {
        // One part per function: the data goes to the part with the least
        // work (die's), which then declares helper for the table.
        let (parts, _) = split(PTX, 3).unwrap();
        let data = parts.iter().find(|p| p.contains("table[2] = {helper, 8};")).unwrap();
        assert!(data.contains("\ttrap;"), "{data}");
        assert!(data.contains(".extern .func  (.param .b32 func_retval0) helper(\n\t.param .b64 helper_param_0\n)\n;"), "{data}");
    }

    #[test]
    fn more_parts_than_functions_and_unknown_lines() {
        assert_eq!(split(PTX, 64).unwrap().0.len(), 3);
        assert_eq!(split(PTX, 0).unwrap().0.len(), 1);
        let odd = PTX.replace(".address_size 64", ".address_size 64\n.alias a, b;");
        assert_eq!(
            split(&odd, 2).unwrap_err().to_string(),
            "a module-scope line this splitter does not know, at line 8: .alias a, b;"
        );
    }

    #[test]
    fn line_info_survives_split_and_merge() {
        // llc numbers each part's files from 1; merged, one table.
        let a = ".version 7.8\n.target sm_90, debug\n.address_size 64\n\n.func f()\n{\n\t.loc\t1 3 4\n\tret;\n}\n\t.file\t1 \"/src/a.rs\"\n";
        let b = ".version 7.8\n.target sm_90\n.address_size 64\n\n.func g()\n{\n\t.loc\t1 5 6\n\t.loc\t2 7 8\n\tret;\n}\n\t.file\t1 \"/src/b.rs\"\n\t.file\t2 \"/src/a.rs\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n\t}\n\t.section\t.debug_macinfo\t{\t}\n";
        let local: HashSet<String> = ["f", "g"].iter().map(|s| s.to_string()).collect();
        let whole = merge(&[a.to_string(), b.to_string()], &local).unwrap();
        assert!(whole.contains("{\n\t.loc\t1 3 4\n\tret;\n}"), "{whole}");
        assert!(whole.contains("{\n\t.loc\t2 5 6\n\t.loc\t1 7 8\n\tret;\n}"), "{whole}");
        assert!(whole.contains(".file 1 \"/src/a.rs\"\n.file 2 \"/src/b.rs\"\n"), "{whole}");
        // DWARF sections describe one part's layout: dropped, and the target
        // no longer promises them.
        assert!(whole.starts_with(".version 7.8\n.target sm_90\n"), "{whole}");
        assert!(!whole.contains(".section") && !whole.contains(".b8 1"), "{whole}");
        // Split again, every part has the table and its functions' .locs.
        let (parts, _) = split(&whole, 2).unwrap();
        for p in &parts {
            assert!(p.contains(".file 1 \"/src/a.rs\"\n.file 2 \"/src/b.rs\"\n"), "{p}");
        }
        assert!(parts.iter().any(|p| p.contains("\t.loc\t2 5 6\n\t.loc\t1 7 8")));
    }

    #[test]
    fn merge_undoes_split() {
        let (parts, _) = split(PTX, 2).unwrap();
        let local: HashSet<String> = ["helper", "die", "table"].iter().map(|s| s.to_string()).collect();
        let whole = merge(&parts, &local).unwrap();
        assert!(whole.starts_with(".version 7.8\n.target sm_90\n.address_size 64\n"), "{whole}");
        assert_eq!(whole.matches(".extern .func vprintf").count(), 1, "{whole}");
        assert!(!whole.contains(".extern .func  (.param .b32 func_retval0) helper"), "{whole}");
        // Prototypes before variables (a variable may hold a function's address), then definitions.
        let proto = whole.find(".func  (.param .b32 func_retval0) helper(\n\t.param .b64 helper_param_0\n)\n;").expect("prototype");
        let table = whole.find("\n.global .align 8 .u64 table[2] = {helper, 8};").expect("table, local again");
        let body = whole.find("mov.u32 %r1, 1;").unwrap();
        assert!(proto < table && table < body, "{whole}");
        assert!(whole.contains("\n.visible .global .align 4 .b8 flag[4];"), "{whole}");
        assert!(!whole.contains(".extern .global"), "{whole}");
        assert!(whole.contains("\n.visible .entry __gpu_start("), "{whole}");
        assert!(whole.contains("\n.func  (.param .b32 func_retval0) helper(\n\t.param .b64 helper_param_0\n)\n{"), "{whole}");
        // Merged again, each part is whole: splitting it gives the same parts.
        assert_eq!(split(&whole, 2).unwrap().0, parts);
        let twice = [parts[0].clone(), parts[0].clone()];
        assert_eq!(merge(&twice, &local).unwrap_err().to_string(), "__gpu_start is defined in two parts");
    }
}
