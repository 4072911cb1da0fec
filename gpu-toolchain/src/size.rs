//! `gpurun size`: where a code object's bytes go, per crate and per
//! function (what `cargo bloat` shows for a host binary).
//!
//! PTX is measured as text: each function's bytes run from its header to its
//! closing brace, since PTX text is what the driver's JIT or `ptxas` must
//! compile and its size tracks their time. An AMDGPU code object is measured
//! as machine code: each function symbol's size from the ELF symbol table
//! (read with `object`, so no llvm tool is needed).
use crate::{Error, Vendor};
use std::collections::HashMap;
use std::path::Path;

/// One function of a code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSize {
    /// The symbol as it stands in the code object.
    pub symbol: String,
    /// Demangled, without the hash.
    pub name: String,
    /// The crate the function's code comes from (see [`crate_of`]).
    pub krate: String,
    pub bytes: u64,
}

/// A code object's size, split by function.
#[derive(Clone, Debug)]
pub struct SizeReport {
    /// The whole file.
    pub file_bytes: u64,
    /// What `bytes` counts: "PTX text" or "machine code".
    pub unit: &'static str,
    /// Largest first.
    pub functions: Vec<FunctionSize>,
    /// PTX only: what the text holds outside function bodies.
    pub outside: Option<PtxOutside>,
    /// ELF (AMD) only: the file's sections other than the code, by kind.
    pub sections: Option<ElfSections>,
}

/// An ELF code object's bytes outside its functions' code, by what reads
/// them (section sizes from the section headers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElfSections {
    /// `.text`, the functions' code and the padding between them.
    pub text: u64,
    /// `.symtab` and `.strtab`: every symbol's name (the debuggers' and
    /// this report's; the loader does not read them).
    pub symbols: u64,
    /// Constant and initialized data: `.rodata`, `.data`, `.data.rel.ro`.
    pub data: u64,
    /// The other sections: `.note` (the kernels' metadata), the dynamic
    /// symbols and relocations, `.comment`, the section names.
    pub other: u64,
    /// The file's headers and the padding between sections.
    pub headers: u64,
}

/// A PTX module's text outside its function bodies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxOutside {
    /// Prototypes: a function named before its definition (or defined
    /// elsewhere) is declared first, parameters and all.
    pub prototypes: u64,
    /// Module-scope variables (`.global`, `.const`, `.shared`): string
    /// literals, panic locations, vtables, tables, as text...
    pub variables: u64,
    /// ... holding this many bytes of data (`gpu-ld` writes byte arrays as
    /// 64-bit words, about 2.3 characters a byte; `llc` as one decimal
    /// number a byte, about four).
    pub variable_data: u64,
}

/// One crate's share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrateSize {
    pub krate: String,
    pub bytes: u64,
    pub functions: usize,
}

impl SizeReport {
    pub fn function_bytes(&self) -> u64 {
        self.functions.iter().map(|f| f.bytes).sum()
    }

    /// Crates by the bytes of their functions, largest first.
    pub fn by_crate(&self) -> Vec<CrateSize> {
        let mut map: HashMap<&str, (u64, usize)> = HashMap::new();
        for f in &self.functions {
            let e = map.entry(&f.krate).or_default();
            e.0 += f.bytes;
            e.1 += 1;
        }
        let mut out: Vec<CrateSize> =
            map.into_iter().map(|(k, (bytes, functions))| CrateSize { krate: k.to_string(), bytes, functions }).collect();
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.krate.cmp(&b.krate)));
        out
    }

    /// The report as text: `top` functions and every crate.
    pub fn render(&self, top: usize) -> String {
        let total = self.function_bytes().max(1);
        let pct = |b: u64| 100.0 * b as f64 / total as f64;
        let mut s = format!("{} bytes in the file; {} bytes of {} in {} functions\n", self.file_bytes, self.function_bytes(), self.unit, self.functions.len());
        if let Some(o) = &self.outside {
            s += &format!(
                "outside them: {} bytes of prototypes; {} bytes of variables, holding {} bytes of data\n",
                o.prototypes, o.variables, o.variable_data
            );
        }
        if let Some(e) = &self.sections {
            s += &format!(
                "sections: {} bytes of code (.text); {} of symbol names (.symtab, .strtab); {} of data; {} of other sections (.note, .dynsym, .rela.dyn, ...); {} of headers and padding\n",
                e.text, e.symbols, e.data, e.other, e.headers
            );
        }
        s += "\n  share      bytes  functions  crate\n";
        for c in self.by_crate() {
            s += &format!("{:6.1}% {:>10}  {:>9}  {}\n", pct(c.bytes), c.bytes, c.functions, c.krate);
        }
        s += &format!("\n  share      bytes  crate  function (largest {top})\n");
        for f in self.functions.iter().take(top) {
            s += &format!("{:6.1}% {:>10}  {}  {}\n", pct(f.bytes), f.bytes, f.krate, f.name);
        }
        s
    }

    pub fn to_json(&self, top: usize) -> serde_json::Value {
        serde_json::json!({
            "file_bytes": self.file_bytes,
            "unit": self.unit,
            "function_bytes": self.function_bytes(),
            "function_count": self.functions.len(),
            "crates": self.by_crate().iter().map(|c| serde_json::json!({
                "crate": c.krate, "bytes": c.bytes, "functions": c.functions,
            })).collect::<Vec<_>>(),
            "functions": self.functions.iter().take(top).map(|f| serde_json::json!({
                "name": f.name, "crate": f.krate, "bytes": f.bytes, "symbol": f.symbol,
            })).collect::<Vec<_>>(),
            "outside": self.outside.as_ref().map(|o| serde_json::json!({
                "prototypes": o.prototypes, "variables": o.variables, "variable_data": o.variable_data,
            })),
            "sections": self.sections.as_ref().map(|e| serde_json::json!({
                "text": e.text, "symbols": e.symbols, "data": e.data, "other": e.other, "headers": e.headers,
            })),
        })
    }
}

/// Measures the code object at `path`.
pub fn report(path: &Path, vendor: Vendor) -> Result<SizeReport, Error> {
    let file_bytes = std::fs::metadata(path).map_err(Error::io("read", path))?.len();
    Ok(match vendor {
        Vendor::Nvidia => {
            let text = std::fs::read_to_string(path).map_err(Error::io("read", path))?;
            let mut report = from_symbols(file_bytes, "PTX text", ptx_functions(&text));
            report.outside = Some(ptx_outside(&text));
            report
        }
        Vendor::Amd => {
            let elf = std::fs::read(path).map_err(Error::io("read", path))?;
            let functions = elf_functions(&elf).map_err(|why| Error::NotElf { file: path.to_path_buf(), why })?;
            let mut report = from_symbols(file_bytes, "machine code", functions);
            report.sections = elf_sections(&elf);
            report
        }
    })
}

/// The prototypes and variables of a PTX module (see [`PtxOutside`]).
pub fn ptx_outside(ptx: &str) -> PtxOutside {
    let mut o = PtxOutside::default();
    for item in ptx_items(ptx) {
        match item {
            PtxItem::Prototype(text) => o.prototypes += text.len() as u64,
            PtxItem::Variable(line) => {
                o.variables += line.len() as u64;
                o.variable_data += variable_data(line);
            }
            PtxItem::Definition(..) => {}
        }
    }
    o
}

/// The sizes of an ELF file's sections by kind (see [`ElfSections`]);
/// `None` if `elf` does not parse as one.
pub fn elf_sections(elf: &[u8]) -> Option<ElfSections> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(elf).ok()?;
    let mut s = ElfSections::default();
    for section in file.sections() {
        // `.bss` and the like have no bytes in the file.
        let Some((_, size)) = section.file_range() else { continue };
        match section.name().ok()? {
            ".text" => s.text += size,
            ".symtab" | ".strtab" => s.symbols += size,
            ".rodata" | ".data" | ".data.rel.ro" => s.data += size,
            _ => s.other += size,
        }
    }
    s.headers = (elf.len() as u64).saturating_sub(s.text + s.symbols + s.data + s.other);
    Some(s)
}

/// The bytes a module-scope variable line declares: its element type's
/// width times its element count (`.global .align 8 .u64 name[3] = ...;`: 24).
fn variable_data(line: &str) -> u64 {
    let decl = crate::ptx_parts::variable_declaration(line);
    let width = decl
        .split_whitespace()
        .find_map(|w| {
            let w = w.strip_prefix('.')?;
            let bits: u64 = w.get(1..)?.parse().ok()?;
            matches!(w.as_bytes()[0], b'b' | b'u' | b's' | b'f').then_some(bits / 8)
        })
        .unwrap_or(0);
    let last = decl.split_whitespace().last().unwrap_or("");
    let count = last.find('[').and_then(|i| last[i + 1..last.len().saturating_sub(1)].parse::<u64>().ok()).unwrap_or(1);
    width * count
}

/// Names and attributes each `(symbol, bytes)`, largest first.
pub fn from_symbols(file_bytes: u64, unit: &'static str, raw: Vec<(String, u64)>) -> SizeReport {
    let mut functions: Vec<FunctionSize> = raw
        .into_iter()
        .map(|(symbol, bytes)| {
            let name = demangle(&symbol);
            FunctionSize { krate: crate_of(&name), name, symbol, bytes }
        })
        .collect();
    functions.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
    SizeReport { file_bytes, unit, functions, outside: None, sections: None }
}

/// Each function defined in a PTX module, with the bytes of its text
/// (header to closing brace). Prototypes (a header ending in `;`) are not
/// definitions and are skipped.
pub fn ptx_functions(ptx: &str) -> Vec<(String, u64)> {
    ptx_function_texts(ptx).into_iter().map(|(name, text)| (name.to_string(), text.len() as u64)).collect()
}

/// Each function (and kernel) defined in a PTX module, with its text from
/// header line to closing brace.
pub fn ptx_function_texts(ptx: &str) -> Vec<(&str, &str)> {
    ptx_items(ptx)
        .into_iter()
        .filter_map(|item| match item {
            PtxItem::Definition(name, text) => Some((name, text)),
            _ => None,
        })
        .collect()
}

/// A module-scope item of PTX text.
enum PtxItem<'a> {
    /// A function or kernel with its body: name, text from header to `}`.
    Definition(&'a str, &'a str),
    /// A function's prototype: its header, ending in `;`.
    Prototype(&'a str),
    /// A module-scope variable line (`.global`, `.const`, `.shared`).
    Variable(&'a str),
}

/// The definitions, prototypes and variables of a PTX module, in order.
fn ptx_items(ptx: &str) -> Vec<PtxItem<'_>> {
    let mut out = Vec::new();
    // (name, start offset) of the header being read, and whether its body began.
    let mut current: Option<(&str, usize)> = None;
    let mut in_body = false;
    let mut offset = 0;
    for line in ptx.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if let Some((name, from)) = current {
            let t = line.trim();
            if in_body {
                if line.starts_with('}') {
                    out.push(PtxItem::Definition(name, &ptx[from..offset]));
                    current = None;
                    in_body = false;
                }
            } else if t == "{" {
                in_body = true;
            } else if t.ends_with(';') {
                out.push(PtxItem::Prototype(&ptx[from..offset]));
                current = None;
            }
            continue;
        }
        if let Some(name) = crate::ptx_parts::header_name(line) {
            current = Some((name, start));
        } else if crate::ptx_parts::is_variable(line) {
            out.push(PtxItem::Variable(line));
        }
    }
    out
}

/// Why a function is in a PTX module: the shortest chain of references that
/// reaches it from a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    /// The function, demangled.
    pub target: String,
    /// From the kernel to the target, each step demangled; `None` when no
    /// kernel reaches it (an exported function kept for its own sake).
    pub chain: Option<Vec<Link>>,
}

/// One step of a [`Why`] chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub name: String,
    /// A global (a vtable, a table of pointers) rather than a function: the
    /// next step is named in its initial value.
    pub data: bool,
}

/// For each function defined in `ptx` whose demangled name contains
/// `pattern` (or whose symbol is `pattern`), why it is there: the shortest
/// chain from a kernel through calls, function addresses taken and the
/// globals whose initial values name functions (vtables). What `gpurun size
/// --why` prints; the way to ask why a `Debug` impl or a panic message is in
/// a program that seems never to use it.
pub fn ptx_why(ptx: &str, pattern: &str) -> Vec<Why> {
    let functions = ptx_function_texts(ptx);
    let globals = ptx_global_initializers(ptx);
    // Every node's text, to find the names it refers to.
    let mut texts: HashMap<&str, (&str, bool)> = HashMap::new();
    for &(name, text) in &functions {
        // The header names the function itself.
        let body = text.find('{').map_or(text, |at| &text[at..]);
        texts.insert(name, (body, false));
    }
    for &(name, init) in &globals {
        texts.entry(name).or_insert((init, true));
    }
    let mut parent: HashMap<&str, Option<&str>> = HashMap::new();
    let mut queue = std::collections::VecDeque::new();
    for &(name, text) in &functions {
        if crate::ptx_parts::is_kernel_header(text) {
            parent.insert(name, None);
            queue.push_back(name);
        }
    }
    while let Some(node) = queue.pop_front() {
        let Some(&(text, _)) = texts.get(node) else { continue };
        for word in crate::ptx_parts::identifiers(text) {
            if let Some((&name, _)) = texts.get_key_value(word) {
                if !parent.contains_key(name) {
                    parent.insert(name, Some(node));
                    queue.push_back(name);
                }
            }
        }
    }
    functions
        .iter()
        .filter_map(|&(symbol, _)| {
            let target = demangle(symbol);
            (symbol == pattern || target.contains(pattern)).then(|| {
                let chain = parent.contains_key(symbol).then(|| {
                    let mut steps = Vec::new();
                    let mut at = Some(symbol);
                    while let Some(name) = at {
                        steps.push(Link { name: demangle(name), data: texts.get(name).is_some_and(|t| t.1) });
                        at = parent[name];
                    }
                    steps.reverse();
                    steps
                });
                Why { target, chain }
            })
        })
        .collect()
}

/// Each module-scope variable of `ptx` with the text of its initial value
/// (empty without one): `.global .align 8 .u64 vtable[3] = {f, 8, 8};`.
fn ptx_global_initializers(ptx: &str) -> Vec<(&str, &str)> {
    ptx.lines()
        .filter(|l| crate::ptx_parts::is_variable(l))
        .map(|line| (crate::ptx_parts::variable_name(line), line.split_once(" = ").map_or("", |(_, init)| init)))
        .filter(|(name, _)| !name.is_empty())
        .collect()
}

/// [`ptx_why`]'s answer as JSON: `[{"function", "chain": [{"name", "data"}] | null}]`.
pub fn why_json(whys: &[Why]) -> serde_json::Value {
    whys.iter()
        .map(|w| {
            serde_json::json!({
                "function": w.target,
                "chain": w.chain.as_ref().map(|c| c.iter().map(|l| serde_json::json!({"name": l.name, "data": l.data})).collect::<Vec<_>>()),
            })
        })
        .collect()
}

/// [`ptx_why`]'s answer as text.
pub fn render_why(pattern: &str, whys: &[Why]) -> String {
    if whys.is_empty() {
        return format!("no function's name contains {pattern:?}\n");
    }
    let mut s = String::new();
    for why in whys {
        s += &format!("{}\n", why.target);
        match &why.chain {
            None => s += "    reached from no kernel: kept for its own sake (an exported symbol)\n",
            Some(chain) => {
                // The kernel first; each later step is named by the one above.
                for (i, link) in chain.iter().enumerate() {
                    let arrow = if i == 0 { "" } else { "-> " };
                    let what = if link.data { "  (data: a vtable or table naming the next)" } else { "" };
                    s += &format!("    {arrow}{}{what}\n", link.name);
                }
            }
        }
    }
    s
}

/// Each function of an ELF code object with its bytes of machine code: the
/// symbols with a size that are defined in an executable section (what
/// `llvm-nm --defined-only` marks `t`, `T` or `W`). Sorted by symbol, as
/// `llvm-nm` listed them, so that functions of equal size and name keep the
/// report's order. The error says why `elf` does not parse.
pub fn elf_functions(elf: &[u8]) -> Result<Vec<(String, u64)>, String> {
    use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SymbolKind};
    let file = object::File::parse(elf).map_err(|e| e.to_string())?;
    let executable = |index| {
        let flags = file.section_by_index(index).map(|s| s.flags());
        matches!(flags, Ok(SectionFlags::Elf { sh_flags, .. }) if sh_flags.contains(object::elf::SHF_EXECINSTR))
    };
    let mut out = Vec::new();
    // `symbols()` is the static table (`.symtab`), every function's name; the
    // dynamic one holds only the exported kernels.
    for symbol in file.symbols() {
        // An undefined, absolute or common symbol has no section index.
        let Some(index) = symbol.section_index() else { continue };
        if symbol.size() == 0 || matches!(symbol.kind(), SymbolKind::Section | SymbolKind::File) || !executable(index) {
            continue;
        }
        out.push((symbol.name().map_err(|e| e.to_string())?.to_string(), symbol.size()));
    }
    out.sort();
    Ok(out)
}

/// The symbol demangled, without its hash; the symbol itself if it is not a
/// Rust one.
pub fn demangle(symbol: &str) -> String {
    // PTX spells the `.` of LLVM's `.llvm.NNN` suffixes `_$_`.
    let symbol = &symbol.replace("_$_", ".");
    match rustc_demangle::try_demangle(symbol) {
        Ok(d) => format!("{d:#}"),
        Err(_) => symbol.to_string(),
    }
}

/// The crate a demangled function's code comes from: the first path's crate;
/// for `<T as Trait>::f` the crate of `T` (the impl is for it), or of
/// `Trait` when `T` is a primitive, a reference or a tuple. Generic
/// functions are attributed to the crate that defines them, as `cargo bloat`
/// does: `core::ptr::drop_in_place::<my::T>` counts for `core`.
pub fn crate_of(name: &str) -> String {
    let mut s = name;
    if let Some(inner) = s.strip_prefix('<') {
        // `<T as Trait>::f`: the self type first, then the trait.
        let self_type = inner.trim_start_matches(['&', '*']).trim_start_matches("mut ").trim_start_matches("const ");
        let first = path_crate(self_type);
        if first.is_some_and(|c| !is_primitive(c)) {
            s = self_type;
        } else if let Some(pos) = inner.find(" as ") {
            s = &inner[pos + 4..];
        } else {
            s = self_type;
        }
    }
    match path_crate(s) {
        Some(c) if !c.is_empty() => c.to_string(),
        _ => "[other]".to_string(),
    }
}

fn path_crate(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    // A path's first segment; "" for a type that is not a path (`[T]`, `T`).
    Some(if s[end..].starts_with("::") { &s[..end] } else { "" })
}

fn is_primitive(c: &str) -> bool {
    matches!(
        c,
        "" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "f32" | "f64" | "bool" | "char" | "str"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 8.0
.target sm_90
.func _RNvCs1_3foo3bar
(
\t.param .b64 p0
)
;
.global .align 8 .b8 table[16];
// .globl\t__gpu_start
.visible .entry __gpu_start(
\t.param .u64 p
)
.maxnreg 64
{
\tret;
}
.func  (.param .b32 func_retval0) _RNvCs1_3foo3bar(
\t.param .b64 p0
)
{
\tmov.u32 %r1, 1;
\tret;
}
";

    #[test]
    fn ptx_definitions_are_measured_and_prototypes_skipped() {
        let f = ptx_functions(PTX);
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["__gpu_start", "_RNvCs1_3foo3bar"]);
        let kernel_text = ".visible .entry __gpu_start(\n\t.param .u64 p\n)\n.maxnreg 64\n{\n\tret;\n}\n";
        assert_eq!(f[0].1, kernel_text.len() as u64);
        let report = from_symbols(PTX.len() as u64, "PTX text", f);
        assert_eq!(report.functions[0].name, "foo::bar");
        assert_eq!(report.functions[0].krate, "foo");
        assert_eq!(report.by_crate().iter().map(|c| c.krate.as_str()).collect::<Vec<_>>(), ["foo", "[other]"]);
        assert!(report.render(10).contains("foo::bar"));
    }

    /// A section of [`elf64`]: name, `sh_type`, `sh_flags`, `sh_link`,
    /// `sh_entsize`, contents.
    type Section<'a> = (&'a str, u32, u64, u32, u64, &'a [u8]);

    /// A little-endian ELF64 code object (`ET_DYN`, `EM_AMDGPU`) holding
    /// `sections` (numbered from 1) and then `.shstrtab`: the header, each
    /// section's bytes, the section names, the section headers.
    fn elf64(sections: &[Section]) -> Vec<u8> {
        let mut names = b"\0".to_vec();
        let mut headers = vec![[0u8; 64]];
        let mut elf = vec![0u8; 64];
        let shstrtab: Section = (".shstrtab", 3, 0, 0, 0, &[]);
        for (i, &(name, kind, flags, link, entsize, data)) in sections.iter().chain([&shstrtab]).enumerate() {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&(names.len() as u32).to_le_bytes());
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            // The names are complete once `.shstrtab`, the last, is named.
            let data = if i == sections.len() { names.as_slice() } else { data };
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[8..0x10].copy_from_slice(&flags.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(elf.len() as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(data.len() as u64).to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&entsize.to_le_bytes());
            elf.extend_from_slice(data);
            elf.resize(elf.len().next_multiple_of(8), 0);
            headers.push(h);
        }
        let shoff = elf.len() as u64;
        // Magic, 64-bit, little-endian, version 1; ET_DYN, EM_AMDGPU.
        elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        elf[0x10..0x12].copy_from_slice(&3u16.to_le_bytes());
        elf[0x12..0x14].copy_from_slice(&224u16.to_le_bytes());
        elf[0x14..0x18].copy_from_slice(&1u32.to_le_bytes());
        elf[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        elf[0x34..0x36].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        elf[0x3e..0x40].copy_from_slice(&(sections.len() as u16 + 1).to_le_bytes());
        elf.extend(headers.concat());
        elf
    }

    #[test]
    fn elf_sections_are_counted_by_kind() {
        let elf = elf64(&[(".text", 1, 6, 0, 0, &[0; 100]), (".strtab", 3, 0, 0, 0, &[0; 20])]);
        let names = b"\0.text\0.strtab\0.shstrtab\0".len() as u64;
        let s = elf_sections(&elf).expect("an ELF64");
        assert_eq!((s.text, s.symbols, s.data, s.other), (100, 20, 0, names));
        // The 64-byte header, the padding after each section to 8 bytes, 4 section headers.
        assert_eq!(s.headers, 64 + 4 + 4 + 7 + 4 * 64);
        assert_eq!(elf_sections(b"not an ELF file"), None);
        assert_eq!(elf_sections(&elf[..80]), None, "section headers past the end");
    }

    #[test]
    fn elf_functions_are_the_sized_symbols_of_code() {
        let strtab = b"\0_RNvCs1_3foo3bar\0empty\0__gpu_start\0weak_fn\0__gpu_start.kd\0undefined_fn\0absolute\0";
        let name = |n: &str| {
            let at = strtab.windows(n.len() + 2).position(|w| w[0] == 0 && &w[1..=n.len()] == n.as_bytes() && w[n.len() + 1] == 0);
            at.expect("in the string table") as u32 + 1
        };
        // (name, st_info = binding << 4 | type, st_shndx, st_size)
        let symbols = [
            (0, 0u8, 0u16, 0u64),
            // STB_LOCAL STT_SECTION of .text: a section, not a function.
            (0, 3, 1, 0x60),
            (name("_RNvCs1_3foo3bar"), 0x02, 1, 0x10),
            (name("empty"), 0x02, 1, 0),
            (name("__gpu_start"), 0x12, 1, 0x40),
            (name("weak_fn"), 0x22, 1, 8),
            // The kernel descriptor: an STT_OBJECT in .rodata.
            (name("__gpu_start.kd"), 0x11, 2, 64),
            (name("undefined_fn"), 0x12, 0, 4),
            // SHN_ABS.
            (name("absolute"), 0x10, 0xfff1, 4),
        ];
        let mut symtab = Vec::new();
        for (name, info, shndx, size) in symbols {
            symtab.extend_from_slice(&name.to_le_bytes());
            symtab.extend_from_slice(&[info, 0]);
            symtab.extend_from_slice(&shndx.to_le_bytes());
            symtab.extend_from_slice(&0u64.to_le_bytes());
            symtab.extend_from_slice(&size.to_le_bytes());
        }
        let elf = elf64(&[
            (".text", 1, 6, 0, 0, &[0; 0x60]),
            (".rodata", 1, 2, 0, 0, &[0; 64]),
            (".symtab", 2, 0, 4, 24, &symtab),
            (".strtab", 3, 0, 0, 0, strtab),
        ]);
        let f = elf_functions(&elf).unwrap();
        let expected = [("_RNvCs1_3foo3bar", 0x10), ("__gpu_start", 0x40), ("weak_fn", 8)];
        assert_eq!(f, expected.map(|(n, b)| (n.to_string(), b)));
        let report = from_symbols(elf.len() as u64, "machine code", f);
        assert_eq!(report.functions[0].name, "__gpu_start");
        assert_eq!(report.functions[1].name, "foo::bar");
        assert!(elf_functions(b"not an ELF file").is_err());
    }

    #[test]
    fn ptx_prototypes_and_variables_are_counted_apart() {
        let o = ptx_outside(PTX);
        assert_eq!(o.prototypes, ".func _RNvCs1_3foo3bar\n(\n\t.param .b64 p0\n)\n;\n".len() as u64);
        assert_eq!(o.variables, ".global .align 8 .b8 table[16];\n".len() as u64);
        assert_eq!(o.variable_data, 16);
        assert_eq!(variable_data(".global .align 8 .u64 anon_$_0[3] = {f, 8, 8};"), 24);
        assert_eq!(variable_data(".visible .global .align 4 .u32 counter = 7;"), 4);
        assert_eq!(variable_data(".visible .shared .align 8 .b8 __gpu_stack_slot[8];"), 8);
        let mut report = from_symbols(PTX.len() as u64, "PTX text", ptx_functions(PTX));
        report.outside = Some(o);
        assert!(report.render(10).contains("outside them: 45 bytes of prototypes; 32 bytes of variables, holding 16 bytes of data\n"), "{}", report.render(10));
    }

    #[test]
    fn why_follows_calls_addresses_and_vtables_from_the_kernel() {
        let ptx = "\
.version 8.6
.target sm_90
.func _RNvCs1_3foo5debug
(
\t.param .b64 $p0
)
;
.global .align 8 .u64 anon_$_0[3] = {_RNvCs1_3foo5debug, 8, 8};
.visible .shared .align 8 .b8 __gpu_stack_slot[8];
.visible .entry __gpu_start(
\t.param .u64 p
)
{
\t{
\tcall.uni _RNvCs1_3foo5spawn, ();
\t}
\tret;
}
.func _RNvCs1_3foo5spawn()
{
\tmov.b64 \t%rd1, anon_$_0;
\tret;
}
.func _RNvCs1_3foo5debug(
\t.param .b64 $p0
)
{
\tld.shared.b64 \t%rd1, [__gpu_stack_slot];
\tret;
}
.visible .func _RNvCs1_3foo6export()
{
\tret;
}
";
        let why = ptx_why(ptx, "foo::debug");
        assert_eq!(why.len(), 1);
        let chain = why[0].chain.as_ref().expect("reached");
        let names: Vec<(&str, bool)> = chain.iter().map(|l| (l.name.as_str(), l.data)).collect();
        assert_eq!(names, [("__gpu_start", false), ("foo::spawn", false), ("anon.0", true), ("foo::debug", false)]);
        let text = render_why("foo::debug", &why);
        assert!(text.starts_with("foo::debug\n    __gpu_start\n    -> foo::spawn\n    -> anon.0  (data"), "{text}");
        // Exported and called by nothing: no chain.
        assert_eq!(ptx_why(ptx, "export"), [Why { target: "foo::export".into(), chain: None }]);
        assert!(ptx_why(ptx, "nothing").is_empty());
        assert_eq!(why_json(&why)[0]["chain"][2]["data"], true);
    }

    #[test]
    fn crates_of_demangled_names() {
        assert_eq!(crate_of("core::fmt::write"), "core");
        assert_eq!(crate_of("<alloc::vec::Vec<u8> as core::fmt::Debug>::fmt"), "alloc");
        assert_eq!(crate_of("<&T as core::fmt::Display>::fmt"), "core");
        assert_eq!(crate_of("<u32 as core::fmt::Display>::fmt"), "core");
        assert_eq!(crate_of("<regex_automata::meta::Regex>::search"), "regex_automata");
        assert_eq!(crate_of("__gpu_start"), "[other]");
        assert_eq!(crate_of("<[T] as core::fmt::Debug>::fmt"), "core");
    }
}
