//! Rust's symbol names (the v0 mangling, `_R...`) without the crates'
//! disambiguators where the module needs none.
//!
//! A v0 name spells each crate it names as `C s<hash>_ <length><name>`
//! (`Cs12gY6ODllIo_3std`): the disambiguator tells two crates of one name
//! apart (two versions of one dependency). A GPU program is one module,
//! where most crate names occur with one disambiguator only; there it is
//! dead weight, about 13 characters in each of a few thousand crate roots
//! (16 KB of hello-threads' PTX). The grammar makes it optional, and the
//! demanglers show the same path without it (`{:#}`, as `cargo bloat`,
//! profilers and `gpurun size` print names).
//!
//! Dropping bytes moves everything after them, and a v0 name refers back to
//! its own earlier parts by their byte offset (`B<offset>_`), so a name is
//! rewritten by parsing it: each production copied, each disambiguator of
//! an unambiguous crate left out, each back-reference renumbered to where
//! its target now starts. A name this parser does not understand (a newer
//! production, a vendor suffix) is left as it is.

use std::collections::{HashMap, HashSet};

/// The crates a set of names spells with one disambiguator only: those
/// whose disambiguator [`without_crate_hashes`] may drop.
pub fn unambiguous_crates<'a>(names: impl IntoIterator<Item = &'a str>) -> HashSet<String> {
    let mut seen: HashMap<String, HashSet<String>> = HashMap::new();
    for name in names {
        if let Some(roots) = Rewriter::run(name, &HashSet::new()).map(|r| r.roots) {
            for (krate, hash) in roots {
                seen.entry(krate).or_default().insert(hash);
            }
        }
    }
    seen.into_iter().filter(|(_, hashes)| hashes.len() == 1).map(|(krate, _)| krate).collect()
}

/// `symbol` without the disambiguators of the crates in `drop`; `None` if
/// it is not a v0 name this parser reads, or nothing changes.
pub fn without_crate_hashes(symbol: &str, drop: &HashSet<String>) -> Option<String> {
    let r = Rewriter::run(symbol, drop)?;
    (r.out.len() + 2 < symbol.len()).then(|| format!("_R{}", r.out))
}

/// A shorter name for the local symbol `name`: without the
/// `.llvm.<number>` rustc appends to a private item one codegen unit shares
/// with another (`llvm_suffix`: how the text spells `.llvm.`; `None` keeps
/// the suffix), where `free` allows the plain name, then without the crate
/// hashes `drop` lists, where `free` allows that. `None` when neither
/// applies. `gpu-ld` renames PTX (`ptx_fixup::short_local_names`) and AMD's
/// IR (`ir_names`) by this one rule.
pub fn shorter_local_name(name: &str, llvm_suffix: Option<&str>, drop: &HashSet<String>, free: impl Fn(&str) -> bool) -> Option<String> {
    let base = match llvm_suffix.and_then(|sep| name.rsplit_once(sep)) {
        Some((base, n)) if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && free(base) => base,
        _ => name,
    };
    match without_crate_hashes(base, drop).filter(|short| free(short)) {
        Some(short) => Some(short),
        None => (base != name).then(|| base.to_string()),
    }
}

struct Rewriter<'a> {
    /// The name after `_R`: back-references count from there.
    input: &'a [u8],
    pos: usize,
    out: String,
    /// Where the production at each input offset starts in `out`.
    moved: Vec<Option<usize>>,
    drop: &'a HashSet<String>,
    /// Each crate root read: its name and disambiguator (`""` if none).
    roots: Vec<(String, String)>,
}

/// Parsing stops at the first byte it does not expect.
type Parse = Option<()>;

impl<'a> Rewriter<'a> {
    fn run(symbol: &'a str, drop: &'a HashSet<String>) -> Option<Self> {
        let input = symbol.strip_prefix("_R")?.as_bytes();
        let mut r = Rewriter { input, pos: 0, out: String::new(), moved: vec![None; input.len() + 1], drop, roots: Vec::new() };
        // An encoding version (`_R0...`) is not one rustc writes.
        if r.peek()?.is_ascii_digit() {
            return None;
        }
        r.path()?;
        // The instantiating crate, if any; nothing may follow it.
        if r.pos < input.len() {
            r.path()?;
        }
        (r.pos == input.len()).then_some(r)
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    /// Records where the production at the current offset starts.
    fn mark(&mut self) {
        self.moved[self.pos] = Some(self.out.len());
    }

    fn copy(&mut self, n: usize) -> Parse {
        let bytes = self.input.get(self.pos..self.pos + n)?;
        self.out.push_str(std::str::from_utf8(bytes).ok()?);
        self.pos += n;
        Some(())
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.out.push(b as char);
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A base-62 number and its `_`, read without copying.
    fn base62(&mut self) -> Option<u64> {
        if self.peek()? == b'_' {
            self.pos += 1;
            return Some(0);
        }
        let mut v: u64 = 0;
        loop {
            let b = self.peek()?;
            self.pos += 1;
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'z' => 10 + b - b'a',
                b'A'..=b'Z' => 36 + b - b'A',
                b'_' => return v.checked_add(1),
                _ => return None,
            };
            v = v.checked_mul(62)?.checked_add(d as u64)?;
        }
    }

    fn push_base62(&mut self, v: u64) {
        if v > 0 {
            let mut digits = Vec::new();
            let mut n = v - 1;
            loop {
                let d = (n % 62) as u8;
                digits.push(match d {
                    0..=9 => b'0' + d,
                    10..=35 => b'a' + d - 10,
                    _ => b'A' + d - 36,
                });
                n /= 62;
                if n == 0 {
                    break;
                }
            }
            self.out.extend(digits.iter().rev().map(|&d| d as char));
        }
        self.out.push('_');
    }

    /// A base-62 number copied (lifetimes, binders, disambiguators kept).
    fn copy_base62(&mut self) -> Parse {
        let v = self.base62()?;
        self.push_base62(v);
        Some(())
    }

    /// `B<offset>_`: the offset renumbered to where its target moved.
    fn backref(&mut self) -> Parse {
        let at = self.pos;
        self.pos += 1;
        let target = self.base62()? as usize;
        if target >= at {
            return None;
        }
        self.out.push('B');
        // A target is the start of a path, type or constant read before.
        let moved = self.moved[target]? as u64;
        self.push_base62(moved);
        Some(())
    }

    /// `["u"] <decimal> ["_"] <bytes>`: the text as read, and the bytes.
    fn undisambiguated(&mut self) -> Option<(&'a str, &'a str)> {
        let start = self.pos;
        if self.peek()? == b'u' {
            self.pos += 1;
        }
        let digits = self.input[self.pos..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || (digits > 1 && self.input[self.pos] == b'0') {
            return None;
        }
        let len: usize = std::str::from_utf8(&self.input[self.pos..self.pos + digits]).ok()?.parse().ok()?;
        self.pos += digits;
        if self.peek() == Some(b'_') {
            self.pos += 1;
        }
        let bytes_start = self.pos;
        self.pos = self.pos.checked_add(len).filter(|&e| e <= self.input.len())?;
        let text = |from: usize| std::str::from_utf8(&self.input[from..self.pos]).ok();
        Some((text(start)?, text(bytes_start)?))
    }

    /// `[s<n>_] <undisambiguated-identifier>`, copied.
    fn identifier(&mut self) -> Parse {
        if self.eat(b's') {
            self.copy_base62()?;
        }
        let (id, _) = self.undisambiguated()?;
        self.out.push_str(id);
        Some(())
    }

    fn path(&mut self) -> Parse {
        self.mark();
        match self.peek()? {
            b'C' => {
                self.pos += 1;
                let hash_start = self.pos;
                let hash = if self.peek()? == b's' {
                    self.pos += 1;
                    self.base62()?;
                    std::str::from_utf8(&self.input[hash_start..self.pos]).ok()?
                } else {
                    ""
                };
                let (id, name) = self.undisambiguated()?;
                self.roots.push((name.to_string(), hash.to_string()));
                self.out.push('C');
                if !self.drop.contains(name) {
                    self.out.push_str(hash);
                }
                self.out.push_str(id);
            }
            b'M' => {
                self.copy(1)?;
                self.impl_path()?;
                self.ty()?;
            }
            b'X' => {
                self.copy(1)?;
                self.impl_path()?;
                self.ty()?;
                self.path()?;
            }
            b'Y' => {
                self.copy(1)?;
                self.ty()?;
                self.path()?;
            }
            b'N' => {
                self.copy(1)?;
                if !self.peek()?.is_ascii_alphabetic() {
                    return None;
                }
                self.copy(1)?;
                self.path()?;
                self.identifier()?;
            }
            b'I' => {
                self.copy(1)?;
                self.path()?;
                while !self.eat(b'E') {
                    self.generic_arg()?;
                }
            }
            b'B' => self.backref()?,
            _ => return None,
        }
        Some(())
    }

    fn impl_path(&mut self) -> Parse {
        if self.eat(b's') {
            self.copy_base62()?;
        }
        self.path()
    }

    fn generic_arg(&mut self) -> Parse {
        match self.peek()? {
            b'L' => {
                self.copy(1)?;
                self.copy_base62()
            }
            b'K' => {
                self.copy(1)?;
                self.constant()
            }
            _ => self.ty(),
        }
    }

    /// A const generic argument: an integer, `bool` or `char` value, a
    /// placeholder, or a back-reference; other forms are not read.
    fn constant(&mut self) -> Parse {
        self.mark();
        match self.peek()? {
            b'p' => self.copy(1),
            b'B' => self.backref(),
            b'a' | b'b' | b'c' | b'h' | b'i' | b'j' | b'l' | b'm' | b'n' | b'o' | b's' | b't' | b'x' | b'y' => {
                self.copy(1)?;
                self.eat(b'n');
                let hex = self.input[self.pos..].iter().take_while(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()).count();
                self.copy(hex)?;
                self.eat(b'_').then_some(())
            }
            _ => None,
        }
    }

    fn lifetime_opt(&mut self) -> Parse {
        if self.eat(b'L') {
            self.copy_base62()?;
        }
        Some(())
    }

    fn binder_opt(&mut self) -> Parse {
        if self.eat(b'G') {
            self.copy_base62()?;
        }
        Some(())
    }

    fn ty(&mut self) -> Parse {
        self.mark();
        match self.peek()? {
            // The basic types.
            b'a' | b'b' | b'c' | b'd' | b'e' | b'f' | b'h' | b'i' | b'j' | b'l' | b'm' | b'n' | b'o' | b'p' | b's' | b't' | b'u' | b'v'
            | b'x' | b'y' | b'z' => self.copy(1),
            b'A' => {
                self.copy(1)?;
                self.ty()?;
                self.constant()
            }
            b'S' | b'P' | b'O' => {
                self.copy(1)?;
                self.ty()
            }
            b'T' => {
                self.copy(1)?;
                while !self.eat(b'E') {
                    self.ty()?;
                }
                Some(())
            }
            b'R' | b'Q' => {
                self.copy(1)?;
                self.lifetime_opt()?;
                self.ty()
            }
            b'F' => {
                self.copy(1)?;
                self.binder_opt()?;
                self.eat(b'U');
                if self.eat(b'K') && !self.eat(b'C') {
                    let (abi, _) = self.undisambiguated()?;
                    self.out.push_str(abi);
                }
                while !self.eat(b'E') {
                    self.ty()?;
                }
                self.ty()
            }
            b'D' => {
                self.copy(1)?;
                self.binder_opt()?;
                while !self.eat(b'E') {
                    self.path()?;
                    while self.eat(b'p') {
                        let (name, _) = self.undisambiguated()?;
                        self.out.push_str(name);
                        self.ty()?;
                    }
                }
                if !self.eat(b'L') {
                    return None;
                }
                self.copy_base62()
            }
            b'B' => self.backref(),
            b'C' | b'M' | b'X' | b'Y' | b'N' | b'I' => self.path(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names from hello-threads' PTX (`.` written `_$_` by `llc` is not in them).
    const NAMES: [&str; 8] = [
        "_RNvMsn_NtCsgcDIHeejn24_5alloc4syncINtB5_3ArcINtNtNtCs12gY6ODllIo_3std6thread9lifecycle6PacketyEE9drop_slowCs14VE5e3QALt_13hello_threads",
        "_RNvXsn_NtCsgcDIHeejn24_5alloc5boxedINtB5_3BoxDNtNtCslVm6pBWyrz1_4core3any3AnyNtNtBM_6marker4SendEL_ENtNtBM_3fmt5Debug3fmtCs14VE5e3QALt_13hello_threads",
        "_RINvNtCsaSQZnVqMgRv_9rt_common4ring11send_packetNtNtCsfK3ti97MaAq_8rt_nvptx3hal5NvHalNtB2_7RawRingEBO_",
        "_RINvNtCslVm6pBWyrz1_4core3ptr9drop_glueINtNvNtCs12gY6ODllIo_3std2io17default_write_fmt7AdapterINtNtNtB4_2io6cursor6CursorQShEEEBI_",
        "_RNvCsfK3ti97MaAq_8rt_nvptx7RUNTIME",
        "_RNvXs3_NtNtCslVm6pBWyrz1_4core3fmt3numjNtB5_7Display3fmt",
        "_RINvNtCs12gY6ODllIo_3std2rt10lang_startuEB2_",
        "_RNCNvCs14VE5e3QALt_13hello_threads4main0B3_",
    ];

    fn demangled(s: &str) -> String {
        format!("{:#}", rustc_demangle::try_demangle(s).unwrap_or_else(|_| panic!("{s} does not demangle")))
    }

    #[test]
    fn names_lose_their_crate_hashes_and_demangle_the_same() {
        let drop = unambiguous_crates(NAMES);
        for krate in ["std", "core", "alloc", "rt_common", "rt_nvptx", "hello_threads"] {
            assert!(drop.contains(krate), "{krate}: {drop:?}");
        }
        for name in NAMES {
            let short = without_crate_hashes(name, &drop).unwrap_or_else(|| panic!("{name} not rewritten"));
            assert!(short.len() < name.len() && !short.contains("Cs"), "{name} -> {short}");
            assert_eq!(demangled(&short), demangled(name), "{name} -> {short}");
        }
        assert_eq!(without_crate_hashes(NAMES[4], &drop).unwrap(), "_RNvC8rt_nvptx7RUNTIME");
        // Back-references renumbered: the instantiating crate `BO_` (offset
        // 51, `Cs...8rt_nvptx`) is now at 38 (`BB_`); `B2_`, before any
        // dropped hash, stays.
        assert_eq!(
            without_crate_hashes(NAMES[2], &drop).unwrap(),
            "_RINvNtC9rt_common4ring11send_packetNtNtC8rt_nvptx3hal5NvHalNtB2_7RawRingEBB_"
        );
    }

    #[test]
    fn a_crate_spelt_with_two_hashes_keeps_them() {
        let two = ["_RNvCs1_3foo1f", "_RNvCs2_3foo1g", "_RNvCs3_3bar1h"];
        let drop = unambiguous_crates(two);
        assert_eq!(drop, HashSet::from(["bar".to_string()]));
        assert_eq!(without_crate_hashes(two[0], &drop), None);
        assert_eq!(without_crate_hashes(two[2], &drop).as_deref(), Some("_RNvC3bar1h"));
    }

    #[test]
    fn names_it_does_not_read_are_left_alone() {
        let drop = HashSet::from(["std".to_string()]);
        for name in [
            "_ZN3std2rt10lang_start17h0123456789abcdefE",
            "_RNvCs12gY6ODllIo_3std1f_$_llvm_$_123",
            "_R0NvCs12gY6ODllIo_3std1f",
            "_RNvCs12gY6ODllIo_3std",
            "_RINvCs12gY6ODllIo_3std1fKRe3abcE",
            "__gpu_start",
        ] {
            assert_eq!(without_crate_hashes(name, &drop), None, "{name}");
        }
    }
}
