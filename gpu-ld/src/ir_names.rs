//! Shorter names for what only an LLVM module itself names, before AMD's
//! `llc`: a code object carries every function's and constant's name in its
//! symbol table (`gpurun size` and the debuggers read it), so long local
//! names are bytes of every AMD program. The PTX side renames in the PTX
//! text instead (`ptx_fixup::short_local_names`), with the same rules:
//!
//! - a local Rust symbol drops the disambiguators of the crates every Rust
//!   name of the module spells with one only ([`crate::v0_names`]): it
//!   demangles to the same path;
//! - with `renumber`, the compiler's unnamed constants (`anon.<hash>.<n>`,
//!   `alloc_<hash>`, `switch.table.<fn>`: string literals, panic locations,
//!   vtables, which no tool shows by name) become `anon.<k>`, and a local
//!   name drops the `.llvm.<number>` rustc appends to a private item one
//!   codegen unit shares with another, where no other symbol has the
//!   plain name. Not for a module `llc` compiles in cached parts
//!   ([`crate::amd_parts`]): there a part's text must not change when an
//!   edit elsewhere shifts the numbering (the parts drop `.llvm.` suffixes
//!   themselves).
//!
//! Exported names keep theirs. Text between double quotes (string
//! constants, quoted names, metadata strings) is left alone.
use std::collections::{HashMap, HashSet};

/// `ir` with its local names shortened as the module's notes say, and how
/// many were.
pub fn shorten_local_names(ir: &str, renumber: bool) -> (String, usize) {
    let mut names: HashSet<&str> = HashSet::new();
    for_each_global(ir, |name| {
        names.insert(name);
    });
    let drop = crate::v0_names::unambiguous_crates(names.iter().copied().filter(|n| n.starts_with("_R")));
    let mut renames: HashMap<&str, String> = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut next_anon = 0usize;
    for line in ir.lines() {
        let local = if let Some(rest) = line.strip_prefix("define ") {
            rest.starts_with("internal ") || rest.starts_with("private ")
        } else if line.starts_with('@') {
            line.split_once(" = ").is_some_and(|(_, rest)| rest.starts_with("internal ") || rest.starts_with("private "))
        } else {
            false
        };
        let Some(at) = line.find('@').filter(|_| local) else { continue };
        let rest = &line[at + 1..];
        let name = &rest[..rest.find(|c: char| !is_ir_name_char(c)).unwrap_or(rest.len())];
        let numbered = name.strip_prefix("anon.").is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        if name.is_empty() || numbered || renames.contains_key(name) {
            continue;
        }
        let free = |n: &str, taken: &HashSet<String>| !names.contains(n) && !taken.contains(n);
        let new = if renumber && ["anon.", "alloc_", "switch.table."].iter().any(|p| name.starts_with(p)) {
            loop {
                let candidate = format!("anon.{next_anon}");
                next_anon += 1;
                if free(&candidate, &taken) {
                    break Some(candidate);
                }
            }
        } else {
            // `.llvm.<number>` off (with `renumber`), then the crate hashes.
            crate::v0_names::shorter_local_name(name, renumber.then_some(".llvm."), &drop, |n| free(n, &taken))
        };
        if let Some(new) = new {
            taken.insert(new.clone());
            renames.insert(name, new);
        }
    }
    if renames.is_empty() {
        return (ir.to_string(), 0);
    }
    let mut out = String::with_capacity(ir.len());
    let mut last = 0;
    for_each_global(ir, |name| {
        if let Some(new) = renames.get(name) {
            let at = name.as_ptr() as usize - ir.as_ptr() as usize;
            out.push_str(&ir[last..at]);
            out.push_str(new);
            last = at + name.len();
        }
    });
    out.push_str(&ir[last..]);
    (out, renames.len())
}

fn is_ir_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-')
}

/// Calls `f` with each unquoted global name of `ir` (after an `@` outside
/// double quotes), as a slice of `ir`.
fn for_each_global<'a>(ir: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = ir.as_bytes();
    let mut quoted = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => quoted = !quoted,
            b'@' if !quoted => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && is_ir_name_char(bytes[end] as char) {
                    end += 1;
                }
                if end > start {
                    f(&ir[start..end]);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "@_RNvCs12gY6ODllIo_3std4HOOK = internal global i64 0\n\
        @vt = private constant [1 x ptr] [ptr @_RNvCs12gY6ODllIo_3std1f]\n\
        @anon.0123456789abcdef0123456789abcdef.7.llvm.99 = private constant [2 x i8] c\"hi\"\n\
        @alloc_0123 = private constant [1 x i8] c\"x\"\n\
        @anon.0 = internal global i8 0\n\
        define internal void @_RNvCs12gY6ODllIo_3std1f() {\n  ret void\n}\n\
        define internal void @_RNvCs12gY6ODllIo_3std1g.llvm.5() {\n  ret void\n}\n\
        define void @_RNvCs12gY6ODllIo_3std4main() {\n  call void @_RNvCs12gY6ODllIo_3std1f()\n  \
        call void @_RNvCs12gY6ODllIo_3std1g.llvm.5()\n  \
        %x = load i64, ptr @_RNvCs12gY6ODllIo_3std4HOOK\n  %y = load i8, ptr @anon.0123456789abcdef0123456789abcdef.7.llvm.99\n  ret void\n}\n\
        @s = private constant [26 x i8] c\"@_RNvCs12gY6ODllIo_3std1f\"\n";

    #[test]
    fn rust_names_lose_crate_hashes_everywhere_outside_quotes() {
        let (out, n) = shorten_local_names(IR, false);
        // `HOOK` and `f`.
        assert_eq!(n, 2, "{out}");
        assert!(out.contains("define internal void @_RNvC3std1f()") && out.contains("call void @_RNvC3std1f()"), "{out}");
        assert!(out.contains("[ptr @_RNvC3std1f]") && out.contains("ptr @_RNvC3std4HOOK\n"), "{out}");
        // Without renumbering the `.llvm.` suffix stays (a v0 name with a
        // suffix is not one the rewriter reads) and so do the constants.
        assert!(out.contains("@_RNvCs12gY6ODllIo_3std1g.llvm.5()") && out.contains("@anon.0123456789abcdef0123456789abcdef.7.llvm.99"), "{out}");
        // Exported: kept; quoted text: kept.
        assert!(out.contains("define void @_RNvCs12gY6ODllIo_3std4main()"), "{out}");
        assert!(out.contains("c\"@_RNvCs12gY6ODllIo_3std1f\""), "{out}");
    }

    #[test]
    fn renumbering_names_constants_by_number_and_drops_llvm_suffixes() {
        let (out, n) = shorten_local_names(IR, true);
        // Constants become `anon.<k>`, skipping the `anon.0` the module has.
        assert!(out.contains("@anon.1 = private constant [2 x i8]") && out.contains("load i8, ptr @anon.1\n"), "{out}");
        assert!(out.contains("@anon.2 = private constant [1 x i8]") && out.contains("@anon.0 = internal global i8 0"), "{out}");
        assert!(out.contains("define internal void @_RNvC3std1g()") && out.contains("call void @_RNvC3std1g()"), "{out}");
        assert_eq!(n, 5, "{out}");
    }
}
