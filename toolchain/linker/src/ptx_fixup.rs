//! Repairs of `llc`'s PTX that ptxas would reject, and its comments dropped.
//!
//! LLVM 22's NVPTX backend turns a compare-and-swap on an atomic it can prove
//! lives on the stack (e.g. `let m = Mutex::new(()); m.lock()`) into
//! `atom.<sem>.<scope>.local.cas.bN`, but `atom` has no `.local` state space:
//! ptxas fails with "State space incorrect for instruction 'atom'". Local
//! memory is private to the thread, so a plain load, compare and conditional
//! store is an exact replacement.

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
/// is kept.
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
        if !code.is_empty() {
            out.push_str(code);
            out.push('\n');
        }
    }
    out
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
}
