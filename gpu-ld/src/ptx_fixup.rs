//! Repairs of `llc`'s PTX that ptxas would reject, and its comments dropped.
//!
//! LLVM 22's NVPTX backend turns a compare-and-swap on an atomic it can prove
//! lives on the stack (e.g. `let m = Mutex::new(()); m.lock()`) into
//! `atom.<sem>.<scope>.local.cas.bN`, but `atom` has no `.local` state space:
//! ptxas fails with "State space incorrect for instruction 'atom'". Local
//! memory is private to the thread, so a plain load, compare and conditional
//! store is an exact replacement.

use std::collections::{HashMap, HashSet};

/// Rewrites every `atom…local.cas` line of `ptx`; returns the text and the
/// number of lines rewritten.
pub fn fix_local_cas(ptx: &str) -> (String, usize) {
    let mut out = String::with_capacity(ptx.len());
    let mut fixed = 0;
    for line in ptx.split_inclusive('\n') {
        match rewrite_line(line) {
            Some(new) => {
                out.push_str(&new);
                fixed += 1;
            }
            None => out.push_str(line),
        }
    }
    (out, fixed)
}

/// `atom.acquire.sys.local.cas.b32 %r1, [%rd2], %r3, %r4;` → a block with a
/// load, `setp.eq`, predicated store and `mov` to the destination.
fn rewrite_line(line: &str) -> Option<String> {
    let body = line.trim_start();
    let (op, rest) = body.split_once(char::is_whitespace)?;
    if !op.starts_with("atom.") || !op.contains(".local.") || !op.contains(".cas.") {
        return None;
    }
    let ty = op.rsplit('.').next()?; // b32 / b64 / b16
    if !matches!(ty, "b16" | "b32" | "b64") {
        return None;
    }
    let operands = rest.trim().strip_suffix(';')?;
    let parts: Vec<&str> = operands.split(',').map(str::trim).collect();
    let [dst, addr, cmp, new] = parts[..] else { return None };
    let indent = &line[..line.len() - body.len()];
    let newline = if line.ends_with('\n') { "\n" } else { "" };
    Some(format!(
        "{indent}{{ .reg .pred %cas_p; .reg .{ty} %cas_t; ld.local.{ty} %cas_t, {addr}; \
         setp.eq.{ty} %cas_p, %cas_t, {cmp}; @%cas_p st.local.{ty} {addr}, {new}; mov.{ty} {dst}, %cas_t; }}{newline}"
    ))
}

/// Caps the registers per lane of kernel `entry` with a `.maxnreg`
/// directive (between its parameter list and its body), so the driver's JIT
/// and ptxas both honour it. Returns `None` if the entry is not found.
pub fn set_maxnreg(ptx: &str, entry: &str, regs: u32) -> Option<String> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    // The parameter list ends at the first ')' after the entry's name.
    let close = start + ptx[start..].find(')')?;
    let mut out = String::with_capacity(ptx.len() + 16);
    out.push_str(&ptx[..=close]);
    out.push_str(&format!("\n.maxnreg {regs}"));
    out.push_str(&ptx[close + 1..]);
    Some(out)
}

/// `ptx` without its comments (`// ...` to the end of a line), and without
/// the lines that held nothing else. `llc` writes one or more comment lines
/// per function and basic block (`// -- Begin function`, `// %bb.3:`, `//
/// begin inline asm`): 10 % of hello-threads' PTX, which the driver and
/// ptxas would only read past. `//` inside a quoted string (a `.file` path)
/// is kept. And `llc` separates an instruction from its operands by a space
/// and a tab (`mov.b64 \t%rd1, %rd2;`): 13 KB of hello-threads' PTX; the
/// tab alone is kept.
pub fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.lines() {
        let mut quoted = false;
        let mut end = line.len();
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'"' => quoted = !quoted,
                b'/' if !quoted && bytes.get(i + 1) == Some(&b'/') => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let code = line[..end].trim_end();
        if code.contains('"') {
            out.push_str(code);
        } else {
            let mut rest = code;
            while let Some(at) = rest.find(" \t") {
                out.push_str(&rest[..at]);
                rest = &rest[at + 1..];
            }
            out.push_str(rest);
        }
        if !code.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// `ptx` with shorter names for what only the module itself names, and the
/// number of names changed (a parameter's counted once):
/// - the compiler's unnamed constants (`anon.<hash>.<n>`, `switch.table.<fn>`,
///   `alloc_<hash>`; `llc` writes `.` as `_$_`) become `anon_$_<k>`: string
///   literals, panic locations and vtables, which no tool shows by name;
/// - a local function whose name ends in the `.llvm.<number>` that rustc
///   gives a private function one codegen unit exports to another drops it
///   where no other symbol has that name: it demangles again;
/// - a local Rust symbol drops the disambiguators of the crates the module
///   spells with one only ([`crate::v0_names`]): it demangles to the same
///   path;
/// - a function's parameters, which `llc` names `<function>_param_<i>` in
///   its prototype, its definition and each load of them, become `$p<i>`:
///   a parameter's name is scoped to its function and reaches no tool (the
///   machine code addresses parameters by offset);
/// - likewise the parameters of a call (`param<i>` and `retval<i>`, declared
///   in the call's own block) and a function's return parameter
///   (`func_retval<i>`) become `$a<i>`, `$r<i>` and `$f<i>`: 16 KB of
///   hello-threads' 520 KB.
///
/// Names that leave the module (`.visible`, `.extern`, `.weak`) keep their
/// names. The first two were 56 KB of hello-threads' 979 KB of PTX, the
/// parameters 83 KB of the 932 KB left.
pub fn short_local_names(ptx: &str) -> (String, usize) {
    let mut kept: HashSet<&str> = HashSet::new();
    let mut local: Vec<&str> = Vec::new();
    let mut declared: HashSet<&str> = HashSet::new();
    let mut tokens: HashSet<&str> = HashSet::new();
    for line in ptx.lines() {
        match declared_name(line) {
            Some((name, true)) => {
                kept.insert(name);
                declared.insert(name);
            }
            Some((name, false)) => {
                local.push(name);
                declared.insert(name);
            }
            None => {}
        }
        for_each_identifier(line, |t| {
            tokens.insert(t);
        });
    }
    // Crates every Rust name of the module spells with one disambiguator.
    let unambiguous = crate::v0_names::unambiguous_crates(tokens.iter().copied().filter(|t| t.starts_with("_R")));
    let mut renames: HashMap<&str, String> = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut next_anon = 0usize;
    for &name in &local {
        if kept.contains(name) || renames.contains_key(name) {
            continue;
        }
        let short_already = name.strip_prefix("anon_$_").is_some_and(is_number);
        let new = if !short_already && ["anon_$_", "switch_$_table_$_", "alloc_$_"].iter().any(|p| name.starts_with(p)) {
            loop {
                let candidate = format!("anon_$_{next_anon}");
                next_anon += 1;
                if !tokens.contains(candidate.as_str()) {
                    break candidate;
                }
            }
        } else {
            // `llc` writes `.llvm.` as `_$_llvm_$_`.
            let free = |n: &str| !tokens.contains(n) && !taken.contains(n);
            match crate::v0_names::shorter_local_name(name, Some("_$_llvm_$_"), &unambiguous, free) {
                Some(short) => short,
                None => continue,
            }
        };
        taken.insert(new.clone());
        renames.insert(name, new);
    }
    // `$` cannot begin a Rust symbol; the prefix is one no identifier of
    // the module uses with a number after it (else parameters keep names).
    let param_prefix = ["$p", "$p_$_"]
        .into_iter()
        .find(|p| !tokens.iter().any(|t| t.strip_prefix(p).is_some_and(is_number)));
    // `<function>_param_<i>` of a function the module declares: its index.
    fn param_index<'a>(t: &'a str, declared: &HashSet<&str>) -> Option<&'a str> {
        let (function, index) = t.rsplit_once("_param_")?;
        (is_number(index) && declared.contains(function) && !declared.contains(t)).then_some(index)
    }
    // A call's parameters and a function's return parameter: `llc`'s name
    // and ours, kept where the module declares a symbol of the one or names
    // an identifier of the other.
    let scoped: Vec<(&str, &'static str)> = [("param", "$a"), ("retval", "$r"), ("func_retval", "$f")]
        .into_iter()
        .filter(|&(from, to)| {
            let numbered = |prefix: &str, t: &&str| t.strip_prefix(prefix).is_some_and(is_number);
            !declared.iter().any(|t| numbered(from, t)) && !tokens.iter().any(|t| numbered(to, t))
        })
        .collect();
    // `param3` → (`$a`, `3`).
    fn scoped_index<'t>(t: &'t str, scoped: &[(&str, &'static str)]) -> Option<(&'static str, &'t str)> {
        scoped.iter().find_map(|&(from, to)| t.strip_prefix(from).filter(|i| is_number(i)).map(|i| (to, i)))
    }
    let mut params: HashSet<&str> = HashSet::new();
    let mut call_names: HashSet<&str> = HashSet::new();
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let mut last = 0;
        for_each_identifier(line, |t| {
            let (new, index) = match (renames.get(t), param_prefix) {
                (Some(new), _) => (new.as_str(), ""),
                (None, prefix) => match (prefix.and_then(|p| Some((p, param_index(t, &declared)?))), scoped_index(t, &scoped)) {
                    (Some((prefix, index)), _) => {
                        params.insert(t);
                        (prefix, index)
                    }
                    (None, Some((to, index))) => {
                        call_names.insert(t);
                        (to, index)
                    }
                    (None, None) => return,
                },
            };
            // `t` is a slice of `line`: its offset.
            let at = t.as_ptr() as usize - line.as_ptr() as usize;
            out.push_str(&line[last..at]);
            out.push_str(new);
            out.push_str(index);
            last = at + t.len();
        });
        out.push_str(&line[last..]);
    }
    (out, renames.len() + params.len() + call_names.len())
}

/// The symbol a PTX line declares or defines at module level, a function
/// (`.func`, `.entry`, with or without a return parameter) or a variable
/// (`.global`, `.const`, `.shared`), and whether its name leaves the module
/// (`.visible`, `.extern`, `.weak`).
fn declared_name(line: &str) -> Option<(&str, bool)> {
    let mut rest = line;
    for prefix in [".visible ", ".extern ", ".weak "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let exported = rest.len() < line.len();
    let rest = rest.trim_start();
    if let Some(f) = rest.strip_prefix(".func").or_else(|| rest.strip_prefix(".entry")) {
        let f = f.trim_start();
        // A return parameter list first: `(.param .b32 func_retval0) name(`.
        let f = if f.starts_with('(') { f[f.find(')')? + 1..].trim_start() } else { f };
        return first_identifier(f).map(|name| (name, exported));
    }
    if rest.starts_with(".global ") || rest.starts_with(".const ") || rest.starts_with(".shared ") {
        // The name is the last identifier before the size, initializer or end.
        let head = &rest[..rest.find(['[', '=', ';']).unwrap_or(rest.len())];
        return head.split_whitespace().last().filter(|w| !w.starts_with('.')).map(|name| (name, exported));
    }
    None
}

/// Whether `s` is a decimal number (one digit or more).
fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn first_identifier(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !is_identifier_char(c)).unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Calls `f` with each identifier of `line` outside quoted strings (a
/// `.file` path): registers (`%r1`) and directives (`.b8`) are not
/// identifiers, labels (`$L__BB0_1`) are.
fn for_each_identifier<'a>(line: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += 1;
            }
            i += 1;
        } else if b == b'%' || b == b'.' || b.is_ascii_digit() {
            // A register, directive, state space or number: skip the word.
            i += 1;
            while i < bytes.len() && is_identifier_char(bytes[i] as char) {
                i += 1;
            }
        } else if b.is_ascii_alphabetic() || b == b'_' || b == b'$' {
            let start = i;
            while i < bytes.len() && is_identifier_char(bytes[i] as char) {
                i += 1;
            }
            f(&line[start..i]);
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_local_cas_and_leaves_the_rest() {
        let ptx = "\tld.global.b32 %r1, [%rd1];\n\tatom.acquire.sys.local.cas.b32 \t%r5, [%rd3+8], %r6, 1;\n\tatom.global.cas.b64 %rd1, [%rd2], %rd3, %rd4;\n";
        let (out, n) = fix_local_cas(ptx);
        assert_eq!(n, 1);
        assert!(out.contains("\t{ .reg .pred %cas_p; .reg .b32 %cas_t; ld.local.b32 %cas_t, [%rd3+8]; setp.eq.b32 %cas_p, %cas_t, %r6; @%cas_p st.local.b32 [%rd3+8], 1; mov.b32 %r5, %cas_t; }\n"), "{out}");
        assert!(out.contains("atom.global.cas.b64 %rd1, [%rd2], %rd3, %rd4;"));
        assert!(out.starts_with("\tld.global.b32 %r1, [%rd1];\n"));
        assert!(!out.contains(".local.cas"));
    }

    #[test]
    fn maxnreg_goes_between_params_and_body() {
        let ptx = "// .globl\t__gpu_start\n.visible .entry __gpu_start(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let out = set_maxnreg(ptx, "__gpu_start", 64).unwrap();
        assert_eq!(out, "// .globl\t__gpu_start\n.visible .entry __gpu_start(\n\t.param .u64 p\n)\n.maxnreg 64\n{\n\tret;\n}\n");
        assert!(set_maxnreg(ptx, "other", 64).is_none());
    }

    #[test]
    fn strips_comments_and_the_lines_that_held_only_them() {
        let ptx = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.5\n.file 1 \"/a//b.rs\"\n\
                   .visible .entry __gpu_start( // @__gpu_start\n\t.param .u64 p\n)\n{\n// %bb.0:\n\tret;  // done\n}\n";
        assert_eq!(
            strip_comments(ptx),
            ".version 8.5\n.file 1 \"/a//b.rs\"\n.visible .entry __gpu_start(\n\t.param .u64 p\n)\n{\n\tret;\n}\n"
        );
    }

    #[test]
    fn shortens_unnamed_constants_and_llvm_suffixes_of_local_names_only() {
        let ptx = ".extern .func ext_$_llvm_$_7(\n\t.param .b64 p\n);\n\
                   .func  (.param .b32 func_retval0) _RNvf_$_llvm_$_123(\n\t.param .b64 p\n);\n\
                   .func twice_$_llvm_$_1();\n\
                   .func twice();\n\
                   .global .align 1 .b8 anon_$_0123456789abcdef0123456789abcdef_$_4[3] = {65, 66, 67};\n\
                   .global .align 8 .u64 switch_$_table_$__RNvf_$_llvm_$_123[1] = {generic(anon_$_0123456789abcdef0123456789abcdef_$_4)};\n\
                   .visible .global .align 8 .b8 anon_$_ffffffffffffffffffffffffffffffff_$_1[8];\n\
                   .file 1 \"/src/anon_$_0123456789abcdef0123456789abcdef_$_4.rs\"\n\
                   .visible .entry __gpu_start(\n\t.param .u64 p\n)\n{\n\
                   \tmov.b64 %rd1, anon_$_0123456789abcdef0123456789abcdef_$_4;\n\
                   \tcall.uni (retval0), _RNvf_$_llvm_$_123, (param0);\n\
                   \tcall.uni twice_$_llvm_$_1, ();\n\
                   \tcall.uni ext_$_llvm_$_7, (param0);\n\
                   $L__BB0_1:\n\tret;\n}\n";
        let (out, n) = short_local_names(ptx);
        // Three symbols, and the call's and return's parameter names.
        assert_eq!(n, 6, "{out}");
        // The constant, everywhere it is named (not inside the quoted path).
        assert!(out.contains(".global .align 1 .b8 anon_$_0[3] = {65, 66, 67};"), "{out}");
        assert!(out.contains("mov.b64 %rd1, anon_$_0;"), "{out}");
        assert!(out.contains("{generic(anon_$_0)}"), "{out}");
        assert!(out.contains("\"/src/anon_$_0123456789abcdef0123456789abcdef_$_4.rs\""), "{out}");
        // The switch table is a constant too; the function drops its suffix.
        assert!(out.contains(".u64 anon_$_1[1]"), "{out}");
        assert!(out.contains(".func  (.param .b32 $f0) _RNvf(") && out.contains("call.uni ($r0), _RNvf, ($a0);"), "{out}");
        // Kept: a suffix whose base another function has, and what leaves the module.
        assert!(out.contains("call.uni twice_$_llvm_$_1, ();") && out.contains(".func twice();"), "{out}");
        assert!(out.contains("call.uni ext_$_llvm_$_7, ($a0);"), "{out}");
        assert!(out.contains(".visible .global .align 8 .b8 anon_$_ffffffffffffffffffffffffffffffff_$_1[8];"), "{out}");
        assert!(out.contains("$L__BB0_1:"), "{out}");
        // Nothing to shorten: unchanged.
        assert_eq!(short_local_names(&out).1, 0);
    }

    #[test]
    fn parameters_are_named_by_their_index() {
        let ptx = ".func  (.param .b32 func_retval0) _RNvf_$_llvm_$_9(\n\t.param .b64 _RNvf_$_llvm_$_9_param_0,\n\t.param .align 8 .b8 _RNvf_$_llvm_$_9_param_1[16]\n)\n;\n\
                   .visible .func g(\n\t.param .b64 g_param_0\n)\n{\n\
                   \tld.param.b64 %rd1, [g_param_0];\n\
                   \tmov.b64 %rd2, g_param_0;\n\
                   \tcall.uni (retval0), _RNvf_$_llvm_$_9, (param0, param1);\n\
                   \tmov.b64 %rd3, h_param_0;\n\
                   \tret;\n}\n\
                   .func  (.param .b32 func_retval0) _RNvf_$_llvm_$_9(\n\t.param .b64 _RNvf_$_llvm_$_9_param_0,\n\t.param .align 8 .b8 _RNvf_$_llvm_$_9_param_1[16]\n)\n{\n\
                   \tld.param.b64 %rd1, [_RNvf_$_llvm_$_9_param_1+8];\n\tret;\n}\n\
                   .global .align 8 .u64 h_param_0;\n";
        let (out, n) = short_local_names(ptx);
        // f's suffix, f's two parameters, g's one; the call's three and f's return.
        assert_eq!(n, 8, "{out}");
        assert!(out.contains(".func  (.param .b32 $f0) _RNvf(\n\t.param .b64 $p0,\n\t.param .align 8 .b8 $p1[16]\n)\n;"), "{out}");
        assert!(out.contains(".visible .func g(\n\t.param .b64 $p0\n)"), "{out}");
        assert!(out.contains("ld.param.b64 %rd1, [$p0];") && out.contains("mov.b64 %rd2, $p0;"), "{out}");
        assert!(out.contains("ld.param.b64 %rd1, [$p1+8];"), "{out}");
        // The call's own parameters are named by theirs; a variable named like
        // a parameter, of no declared function, keeps its name.
        assert!(out.contains("call.uni ($r0), _RNvf, ($a0, $a1);"), "{out}");
        assert!(out.contains(".global .align 8 .u64 h_param_0;") && out.contains("mov.b64 %rd3, h_param_0;"), "{out}");
        assert_eq!(short_local_names(&out).1, 0);
        // A module already using `$p<n>` gets another prefix.
        let (taken, _) = short_local_names(".func g(\n\t.param .b64 g_param_0\n)\n{\n\tmov.b64 %rd1, $p7;\n\tld.param.b64 %rd1, [g_param_0];\n}\n");
        assert!(taken.contains("[$p_$_0]") && taken.contains("$p7;"), "{taken}");
        // A module with a symbol named like a call's parameter keeps `llc`'s
        // names for those; the others still change.
        let symbol = ".global .align 8 .u64 param3;\n.func f()\n{\n\tcall.uni (retval0), g, (param0);\n\tmov.b64 %rd1, param3;\n}\n";
        let (kept, _) = short_local_names(symbol);
        assert!(kept.contains("call.uni ($r0), g, (param0);") && kept.contains("mov.b64 %rd1, param3;"), "{kept}");
    }

    #[test]
    fn local_rust_names_drop_crate_hashes_the_module_does_not_need() {
        let ptx = ".visible .func _RNvCs12gY6ODllIo_3std4exit()\n;\n\
                   .func _RNvCs12gY6ODllIo_3std1f_$_llvm_$_5()\n{\n\tcall.uni _RNvCs12gY6ODllIo_3std4exit, ();\n}\n\
                   .func _RNvCs1_3two1g()\n{\n\tret;\n}\n\
                   .func _RNvCs2_3two1h()\n{\n\tcall.uni _RNvCs1_3two1g, ();\n}\n";
        let (out, n) = short_local_names(ptx);
        assert_eq!(n, 1, "{out}");
        // The suffix and the hash both go; the exported name and the crate
        // spelt with two hashes keep theirs.
        assert!(out.contains(".func _RNvC3std1f()"), "{out}");
        assert!(out.contains("call.uni _RNvCs12gY6ODllIo_3std4exit, ();"), "{out}");
        assert!(out.contains(".func _RNvCs1_3two1g()") && out.contains("call.uni _RNvCs1_3two1g, ();"), "{out}");
    }

    #[test]
    fn an_instruction_keeps_one_tab_before_its_operands() {
        let ptx = "\tmov.b64 \t%rd1, %rd2;\n.file 1 \"/a \tb.rs\"\n";
        assert_eq!(strip_comments(ptx), "\tmov.b64\t%rd1, %rd2;\n.file 1 \"/a \tb.rs\"\n");
    }
}
