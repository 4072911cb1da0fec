//! PTX written shorter for the same machine code.
//!
//! `llc` writes two things that make a program's PTX longer than it needs to
//! be, and neither reaches the machine code `ptxas` makes from it:
//!
//! - **Constant byte arrays** (string literals, panic locations' file
//!   names) as one decimal number per byte, `{47, 114, 117, ...}`: about
//!   four characters of text for each byte of data. [`pack_byte_array`]
//!   writes a module-local array as 64-bit words instead (little-endian, as
//!   NVPTX lays them out): about 2.3 characters a byte.
//! - **Prototypes** of the functions a definition names before their own
//!   definition, and (after [`crate::ptx_parts::merge`]) of every function.
//!   [`compact`] writes the definitions and variables callees first, so a
//!   prototype is left only where a function is named before it can be
//!   defined: recursion, and variables (vtables) that must come before
//!   their definition.
//!
//! PTX must declare a symbol before its first use, so the order is a
//! depth-first walk of the references: each variable and function after
//! what it names. A function named by something on the walk's own path (a
//! cycle) gets a prototype. A variable cannot be declared ahead of its
//! definition, so a variable found on such a cycle is written first, with
//! everything it names declared, as `llc` writes all of them.
use crate::error::PtxError;
use crate::ptx_parts::{self, identifiers, variable_name};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

/// What [`compact`] did, for `gpu-ld`'s verbose report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Byte arrays written as 64-bit words.
    pub packed_arrays: usize,
    /// Function definitions, and how many of them still need a prototype.
    pub functions: usize,
    pub prototypes: usize,
    /// Variables written before every definition (see the module's notes).
    pub variables_first: usize,
}

/// A module-local `.b8` array with an initializer of plain numbers, written
/// as `.b64` words (the last one padded with zeros) aligned to at least 8;
/// `None` when `line` is not such an array or the words would not be
/// shorter. Arrays other modules or the host could name (`.visible`,
/// `.weak`, `.extern`) keep their type and size.
pub fn pack_byte_array(line: &str) -> Option<String> {
    let t = line.trim();
    let (decl, init) = t.split_once(" = {")?;
    let init = init.strip_suffix("};")?;
    let mut words = decl.split_whitespace();
    let space = words.next()?;
    if space != ".global" && space != ".const" {
        return None;
    }
    let mut align = 1u64;
    let mut next = words.next()?;
    if next == ".align" {
        align = words.next()?.parse().ok()?;
        next = words.next()?;
    }
    if next != ".b8" {
        return None;
    }
    let array = words.next()?;
    if words.next().is_some() {
        return None;
    }
    let (name, len) = array.strip_suffix(']')?.split_once('[')?;
    let len: usize = len.parse().ok()?;
    // `llc` leaves out trailing zeros; the words do too.
    let bytes = init.split(',').map(|b| b.trim().parse::<u8>().ok()).collect::<Option<Vec<u8>>>()?;
    if bytes.len() > len {
        return None;
    }
    let mut packed = format!("{space} .align {} .b64 {name}[{}] = {{", align.max(8), len.div_ceil(8));
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        let _ = write!(packed, "{}{}", if i == 0 { "" } else { ", " }, u64::from_le_bytes(word));
    }
    packed.push_str("};");
    (packed.len() < t.len()).then_some(packed)
}

/// The bytes a module-scope variable's initializer holds, when it is made
/// of plain numbers of one integer type (`.b8`, `.u8`, `.b16` ... `.b64`;
/// little-endian): `None` for addresses (`generic(...)`), floats, or no
/// initializer. Lets a tool find a string constant whatever width the
/// PTX writes it in.
pub fn variable_bytes(line: &str) -> Option<Vec<u8>> {
    let (decl, init) = line.trim().split_once(" = {")?;
    let init = init.strip_suffix("};")?;
    let width = decl.split_whitespace().find_map(|w| match w {
        ".b8" | ".u8" | ".s8" => Some(1),
        ".b16" | ".u16" | ".s16" => Some(2),
        ".b32" | ".u32" | ".s32" => Some(4),
        ".b64" | ".u64" | ".s64" => Some(8),
        _ => None,
    })?;
    let mut out = Vec::new();
    for value in init.split(',') {
        let value = value.trim();
        let v: u64 = match value.strip_prefix('-') {
            Some(neg) => neg.parse::<u64>().ok()?.wrapping_neg(),
            None => value.parse().ok()?,
        };
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    Some(out)
}

/// `ptx` (one whole module, comments already dropped) with its byte arrays
/// packed and its definitions ordered callees first (see the module's
/// notes); the text `ptxas` reads differs, the machine code does not.
pub fn compact(ptx: &str) -> Result<(String, Compacted), PtxError> {
    let m = ptx_parts::parse(ptx)?;
    let mut report = Compacted { functions: m.definitions.iter().filter(|d| !d.is_kernel).count(), ..Compacted::default() };

    // The symbols this module defines: its variables, then its functions.
    let (declared_vars, defined_vars): (Vec<&str>, Vec<&str>) = m.variables.iter().partition(|v| v.trim_start().starts_with(".extern"));
    // Borrowed from `ptx` but for the packed arrays.
    let mut texts: Vec<Cow<str>> = Vec::with_capacity(defined_vars.len() + m.definitions.len());
    for v in &defined_vars {
        match pack_byte_array(v) {
            Some(packed) => {
                texts.push(Cow::Owned(packed));
                report.packed_arrays += 1;
            }
            None => texts.push(Cow::Borrowed(v.trim())),
        }
    }
    let vars = defined_vars.len();
    let mut names: Vec<&str> = defined_vars.iter().map(|v| variable_name(v)).collect();
    for d in &m.definitions {
        names.push(crate::ptx_parts::header_name(d.head[0]).ok_or(PtxError::UnnamedDefinition)?);
        texts.push(Cow::Borrowed(d.text));
    }
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let is_function = |i: usize| i >= vars;
    // What each item names, in the order it first names it.
    let refs: Vec<Vec<usize>> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut seen = Vec::new();
            for w in identifiers(text) {
                if let Some(&j) = index.get(w)
                    && j != i
                    && !seen.contains(&j)
                {
                    seen.push(j);
                }
            }
            seen
        })
        .collect();

    // Walk until no variable lies on a cycle; each round puts at least one
    // more variable first, so it ends.
    let n = texts.len();
    let mut first = vec![false; n];
    let (order, mut prototype) = loop {
        match walk(&refs, &first, is_function) {
            Ok(found) => break found,
            Err(v) => {
                // The variable and every variable it names, transitively.
                let mut todo = vec![v];
                while let Some(v) = todo.pop() {
                    if !first[v] {
                        first[v] = true;
                        todo.extend(refs[v].iter().copied().filter(|&r| !is_function(r)));
                    }
                }
            }
        }
    };
    for v in (0..vars).filter(|&v| first[v]) {
        for &r in &refs[v] {
            prototype[r] |= is_function(r);
        }
    }

    let mut s = ptx_parts::header_text(&m.header);
    s.push_str("\n\n");
    for e in &m.externs {
        s.push_str(e);
        s.push('\n');
    }
    for (k, d) in m.definitions.iter().enumerate() {
        if prototype[vars + k] && !d.is_kernel {
            s.push_str(&ptx_parts::prototype(d, ptx_parts::linkage(d.head[0])));
            report.prototypes += 1;
        }
    }
    for v in &declared_vars {
        s.push_str(v.trim());
        s.push('\n');
    }
    for v in (0..vars).filter(|&v| first[v]) {
        s.push_str(&texts[v]);
        s.push('\n');
        report.variables_first += 1;
    }
    for i in order {
        s.push_str(&texts[i]);
        s.push('\n');
    }
    for (n, path) in &m.files {
        let _ = writeln!(s, ".file {n} {path}");
    }
    Ok((s, report))
}

/// A depth-first walk of `refs` from every item not already written
/// (`first`), in their order: the items callees first, and which functions
/// are named before their definition. `Err(v)`: variable `v` lies on a
/// cycle.
fn walk(refs: &[Vec<usize>], first: &[bool], is_function: impl Fn(usize) -> bool) -> Result<(Vec<usize>, Vec<bool>), usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnPath,
        Written,
    }
    let n = refs.len();
    let mut state: Vec<State> = first.iter().map(|&f| if f { State::Written } else { State::New }).collect();
    let mut prototype = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != State::New {
            continue;
        }
        state[root] = State::OnPath;
        path.push((root, 0));
        while let Some(top) = path.last_mut() {
            let (item, next) = *top;
            if let Some(&r) = refs[item].get(next) {
                top.1 += 1;
                match state[r] {
                    State::New => {
                        state[r] = State::OnPath;
                        path.push((r, 0));
                    }
                    State::OnPath if is_function(r) => prototype[r] = true,
                    State::OnPath => return Err(r),
                    State::Written => {}
                }
            } else {
                path.pop();
                state[item] = State::Written;
                order.push(item);
            }
        }
    }
    Ok((order, prototype))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_array_becomes_words_that_hold_the_same_bytes() {
        let line = ".global .align 1 .b8 anon_$_1[11] = {104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100};";
        let packed = pack_byte_array(line).unwrap();
        assert_eq!(packed, ".global .align 8 .b64 anon_$_1[2] = {8031924123371070824, 6581362};");
        assert!(packed.len() < line.len());
        let mut bytes = variable_bytes(&packed).unwrap();
        assert_eq!(bytes.split_off(11), [0; 5], "the last word is padded with zeros");
        assert_eq!(bytes, b"hello world");
        assert_eq!(variable_bytes(line).unwrap(), b"hello world");
    }

    #[test]
    fn only_local_arrays_of_plain_bytes_are_packed() {
        let bytes = "= {104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100};";
        for kept in [
            format!(".visible .global .align 1 .b8 s[11] {bytes}"),
            format!(".global .align 8 .u64 s[11] {bytes}"),
            ".global .align 8 .u64 t[2] = {generic(s), 11};".to_string(),
            ".global .align 1 .b8 s[1] = {104, 101};".to_string(),
            ".global .align 8 .b8 HOOK[24] = {};".to_string(),
            ".global .align 1 .b8 s[1] = {7};".to_string(),
            ".shared .align 8 .b8 w[64];".to_string(),
        ] {
            assert_eq!(pack_byte_array(&kept), None, "{kept}");
        }
        assert_eq!(variable_bytes(".global .align 8 .u64 t[2] = {generic(s), 11};"), None);
        // Trailing zeros left out of the initializer stay left out.
        let zeros = ".global .align 8 .b8 z[24] = {0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};";
        assert_eq!(pack_byte_array(zeros).unwrap(), ".global .align 8 .b64 z[3] = {8192, 0, 7};");
        assert_eq!(variable_bytes(".global .align 4 .b32 t[2] = {1, -1};").unwrap(), [1, 0, 0, 0, 255, 255, 255, 255]);
    }

    const MODULE: &str = "\
.version 8.6
.target sm_90
.address_size 64
.func  (.param .b32 func_retval0) fmt(
\t.param .b64 $p0
)
;
.func leaf
(
\t.param .b64 $p0
)
;
.func rec
(
\t.param .b64 $p0
)
;
.global .align 1 .b8 msg[11] = {104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100};
.global .align 8 .u64 vtable[2] = {fmt, 8};
.global .align 8 .u64 loc[2] = {generic(msg), 11};
.visible .entry __gpu_start()
{
\tcall.uni rec, (param0);
\tmov.b64 %rd1, vtable;
\tret;
}
.func  (.param .b32 func_retval0) fmt(
\t.param .b64 $p0
)
{
\tmov.b64 %rd1, loc;
\tcall.uni leaf, (param0);
\tret;
}
.func rec(
\t.param .b64 $p0
)
{
\tcall.uni leaf, (param0);
\tcall.uni rec, (param0);
\tcall.uni odd, (param0);
\tret;
}
.func odd(
\t.param .b64 $p0
)
{
\tcall.uni rec, (param0);
\tret;
}
.func leaf(
\t.param .b64 $p0
)
{
\tret;
}
";

    #[test]
    fn definitions_come_after_what_they_name_and_keep_only_the_prototypes_needed() {
        let (out, report) = compact(MODULE).unwrap();
        let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} missing from:\n{out}"));
        // Every symbol is defined before the first line that names it,
        // unless a prototype declares it.
        assert!(at(".func leaf(") < at("call.uni leaf"), "{out}");
        assert!(at(".b64 msg[2]") < at("generic(msg)"), "{out}");
        assert!(at(".u64 loc[2]") < at("mov.b64 %rd1, loc;"), "{out}");
        assert!(at("fmt(\n\t.param .b64 $p0\n)\n{") < at("{fmt, 8}"), "{out}");
        assert!(at(".u64 vtable[2]") < at("mov.b64 %rd1, vtable;"), "{out}");
        // `rec` and `odd` call each other: the one the walk reaches first
        // keeps a prototype (a function's own header declares it for its
        // own calls); `leaf` and `fmt` lose theirs.
        assert_eq!(out.matches("\n;\n").count(), 1, "{out}");
        assert!(out.contains(".func rec(\n\t.param .b64 $p0\n)\n;\n"), "{out}");
        assert!(at(".func odd(") < at(".func rec(\n\t.param .b64 $p0\n)\n{"), "{out}");
        assert_eq!(report, Compacted { packed_arrays: 1, functions: 4, prototypes: 1, variables_first: 0 });
        // Nothing lost: the same definitions and variables.
        for item in ["__gpu_start()\n{", ".func leaf(", ".func rec(\n\t.param .b64 $p0\n)\n{", "{fmt, 8}", "{generic(msg), 11}"] {
            assert_eq!(out.matches(item).count(), 1, "{item}: {out}");
        }
        // A second pass finds nothing more to pack or leave out (it may
        // break the cycle at its other function).
        let (again, report_again) = compact(&out).unwrap();
        assert_eq!((again.len(), report_again.prototypes, report_again.packed_arrays), (out.len(), 1, 0));
    }

    #[test]
    fn a_variable_on_a_cycle_comes_first_with_its_functions_declared() {
        // `fmt` names the vtable that names `fmt`: the vtable must precede
        // `fmt`'s definition, so `fmt` is declared ahead of it.
        let module = MODULE.replace("mov.b64 %rd1, loc;", "mov.b64 %rd1, vtable;");
        let (out, report) = compact(&module).unwrap();
        assert_eq!(report.variables_first, 1, "{out}");
        let proto = out.find("fmt(\n\t.param .b64 $p0\n)\n;").expect("fmt declared");
        let vtable = out.find(".u64 vtable[2]").unwrap();
        let definition = out.find("fmt(\n\t.param .b64 $p0\n)\n{").unwrap();
        assert!(proto < vtable && vtable < definition, "{out}");
    }
}
