//! Decoding with LLVM: the code object's text is disassembled by the
//! `llvm-objdump` of the toolchain (the one gpu-ld already uses, so it knows
//! every AMD arch exactly), and each printed line is parsed into an [`Inst`]
//! whose semantics [`crate::ops`] looks up by mnemonic, once, at load.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::operand::{self, Operand};
use crate::ops::{self, Exec};

/// Modifiers printed after the operands.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mods {
    /// `offset:N` (memory instructions; signed on flat/global/scratch).
    pub offset: i64,
    pub glc: bool,
    pub slc: bool,
    pub dlc: bool,
    pub sc0: bool,
    pub sc1: bool,
    pub nt: bool,
    pub clamp: bool,
    /// `mul:2` (1), `mul:4` (2), `div:2` (3).
    pub omod: u8,
    /// `op_sel:[a,b,c,d]`, bit i = element i.
    pub op_sel: u8,
    /// `op_sel_hi:[..]` (VOP3P; all ones when not printed).
    pub op_sel_hi: u8,
    pub neg_lo: u8,
    pub neg_hi: u8,
    /// Every other `key:value` or flag, as printed (SDWA selects, DPP
    /// controls, `offset0`/`offset1` of LDS pairs...).
    pub other: Vec<(Box<str>, Box<str>)>,
}

impl Mods {
    /// The value of modifier `key` (`src0_sel` → `BYTE_0`), if printed.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.other.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// One decoded instruction.
#[derive(Clone, Debug)]
pub struct Inst {
    /// Its address in the code object (ELF virtual address).
    pub addr: u64,
    /// Bytes it occupies.
    pub len: u8,
    /// As printed by LLVM (`s_load_dwordx2`, `v_add_nc_u32_e32`).
    pub mnemonic: Box<str>,
    pub ops: Vec<Operand>,
    /// The operands' text as printed, for the few read by name
    /// (`sendmsg(MSG_RTN_GET_REALTIME)`, `hwreg(...)`).
    pub text: Vec<Box<str>>,
    pub mods: Mods,
    /// Index of the function it belongs to in [`Code::functions`].
    pub func: u32,
    /// Its semantics ([`crate::ops::unknown`] when we have none).
    pub exec: Exec,
    /// Which operation of its family `exec` is (a family's own code:
    /// comparison, type...), chosen once at load.
    pub aux: u32,
    /// The second half of a gfx11 dual-issue `v_dual_*` pair.
    pub dual: Option<Box<Inst>>,
}

impl Inst {
    /// The branch target of a `s_branch`/`s_cbranch_*`/`s_call` whose last
    /// operand is a signed 16-bit word offset from the next instruction.
    pub fn branch_target(&self) -> u64 {
        let simm = match self.ops.last().map(|o| o.kind) {
            Some(operand::Kind::Int(v)) => v as u16 as i16,
            Some(operand::Kind::Literal(v)) => v as u16 as i16,
            _ => 0,
        };
        (self.addr + 4).wrapping_add_signed(i64::from(simm) * 4)
    }
}

/// A disassembled text section.
#[derive(Debug, Default)]
pub struct Code {
    pub insts: Vec<Inst>,
    /// Function names and start addresses, in address order.
    pub functions: Vec<(Box<str>, u64)>,
    /// Lowest address in `insts`.
    pub start: u64,
    /// For each 4-byte word from `start`, the index of the instruction that
    /// begins there, or `u32::MAX`.
    pub index: Vec<u32>,
}

impl Code {
    /// The instruction at `addr`, if one begins there.
    #[inline]
    pub fn at(&self, addr: u64) -> Option<&Inst> {
        let word = addr.checked_sub(self.start)? / 4;
        let i = *self.index.get(word as usize)?;
        self.insts.get(i as usize)
    }

    /// The name of the function holding `addr`.
    pub fn function_at(&self, addr: u64) -> &str {
        let i = self.functions.partition_point(|(_, a)| *a <= addr);
        if i == 0 { "?" } else { &self.functions[i - 1].0 }
    }

    /// Distinct mnemonics, with how many times each occurs.
    pub fn mnemonics(&self) -> std::collections::BTreeMap<String, usize> {
        let mut m = std::collections::BTreeMap::new();
        for i in &self.insts {
            *m.entry(i.mnemonic.to_string()).or_insert(0) += 1;
            if let Some(d) = &i.dual {
                *m.entry(d.mnemonic.to_string()).or_insert(0) += 1;
            }
        }
        m
    }

    fn build_index(&mut self) {
        self.start = self.insts.first().map_or(0, |i| i.addr);
        let end = self.insts.last().map_or(0, |i| i.addr + u64::from(i.len));
        self.index = vec![u32::MAX; ((end - self.start) / 4 + 1) as usize];
        for (n, i) in self.insts.iter().enumerate() {
            self.index[((i.addr - self.start) / 4) as usize] = n as u32;
        }
    }
}

/// Where to find LLVM's `tool` (`llvm-objdump`): in `$GPURUN_LLVM_BIN`
/// (gpurun sets it to its toolchain's), else the rustup toolchain's
/// `llvm-tools` (`rustc --print sysroot`), else `PATH`.
pub fn llvm_tool(tool: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("GPURUN_LLVM_BIN") {
        return Path::new(&dir).join(tool);
    }
    if let Ok(out) = Command::new("rustc").arg("--print").arg("sysroot").output() {
        let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if let Ok(dir) = std::fs::read_dir(Path::new(&sysroot).join("lib/rustlib")) {
            for e in dir.flatten() {
                let p = e.path().join("bin").join(tool);
                if p.exists() {
                    return p;
                }
            }
        }
    }
    PathBuf::from(tool)
}

/// The code object's notes as `llvm-readobj --notes` prints them (the
/// kernel metadata as YAML).
pub fn notes(path: &Path) -> Result<String, String> {
    let tool = llvm_tool("llvm-readobj");
    let out = Command::new(&tool)
        .arg("--notes")
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run {} (the llvm-tools rustup component): {e}", tool.display()))?;
    if !out.status.success() {
        return Err(format!("{} --notes {} failed: {}", tool.display(), path.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Disassembles the code object at `path` for `mcpu` (`gfx1100`).
pub fn disassemble(path: &Path, mcpu: &str) -> Result<Code, String> {
    let tool = llvm_tool("llvm-objdump");
    let out = Command::new(&tool)
        .args(["-d", "--no-leading-addr"])
        .arg(format!("--mcpu={mcpu}"))
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run {} (the llvm-tools rustup component): {e}", tool.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} -d --mcpu={mcpu} {} failed: {}",
            tool.display(),
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_listing(&String::from_utf8_lossy(&out.stdout))
}

/// Parses `llvm-objdump -d` output.
pub fn parse_listing(text: &str) -> Result<Code, String> {
    let mut code = Code::default();
    for line in text.lines() {
        if let Some(name) = function_header(line) {
            // The address comes from the first instruction below it.
            code.functions.push((name.into(), u64::MAX));
            continue;
        }
        if !line.starts_with('\t') && !line.starts_with(' ') {
            continue;
        }
        let Some((asm, comment)) = line.split_once("//") else { continue };
        let Some((addr, words)) = comment.trim().split_once(':') else { continue };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else { continue };
        let len = words.split_whitespace().take_while(|w| w.len() == 8 && !w.starts_with('<')).count() as u8 * 4;
        let asm = asm.trim();
        if asm.is_empty() || len == 0 {
            continue;
        }
        let func = code.functions.len().saturating_sub(1) as u32;
        if let Some(f) = code.functions.last_mut().filter(|f| f.1 == u64::MAX) {
            f.1 = addr;
        }
        let inst = parse_inst(asm, addr, len, func).map_err(|e| format!("at {addr:#x} `{asm}`: {e}"))?;
        code.insts.push(inst);
    }
    code.functions.retain(|f| f.1 != u64::MAX);
    code.build_index();
    Ok(code)
}

fn function_header(line: &str) -> Option<&str> {
    let l = line.trim_end();
    let name = l.strip_suffix(">:")?;
    let (_, name) = name.split_once('<')?;
    Some(name)
}

/// Splits at top-level `sep` (outside `()` and `[]`).
fn split_top(s: &str, sep: impl Fn(char) -> bool) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            c if depth == 0 && sep(c) => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}

fn bits(list: &str) -> u8 {
    let inner = list.trim_start_matches('[').trim_end_matches(']');
    inner.split(',').enumerate().fold(0, |acc, (i, b)| acc | (u8::from(b.trim() == "1") << i))
}

fn parse_int(v: &str) -> Option<i64> {
    let (neg, v) = match v.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, v),
    };
    let n = match v.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => v.parse().ok()?,
    };
    Some(if neg { -n } else { n })
}

fn add_modifier(mods: &mut Mods, word: &str) {
    let (k, v) = word.split_once(':').unwrap_or((word, ""));
    match k {
        // `offset:swizzle(QUAD_PERM,0,1,2,3)` (ds_swizzle_b32) is kept as
        // text in `other`.
        "offset" => match parse_int(v) {
            Some(n) => mods.offset = n,
            None => mods.other.push((k.into(), v.into())),
        },
        "glc" => mods.glc = true,
        "slc" => mods.slc = true,
        "dlc" => mods.dlc = true,
        "sc0" => mods.sc0 = true,
        "sc1" => mods.sc1 = true,
        "nt" => mods.nt = true,
        "clamp" => mods.clamp = true,
        "mul" => mods.omod = if v == "2" { 1 } else { 2 },
        "div" => mods.omod = 3,
        "op_sel" => mods.op_sel = bits(v),
        "op_sel_hi" => mods.op_sel_hi = bits(v),
        "neg_lo" => mods.neg_lo = bits(v),
        "neg_hi" => mods.neg_hi = bits(v),
        _ => mods.other.push((k.into(), v.into())),
    }
}

/// Words that are modifiers even without a `:`.
fn is_flag(word: &str) -> bool {
    matches!(word, "glc" | "slc" | "dlc" | "sc0" | "sc1" | "nt" | "clamp" | "lds" | "tfe" | "gds" | "bound_ctrl:0" | "fi:1")
        || word.split_once(':').is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        || word.contains('(') && !word.starts_with("neg(") && !word.starts_with("abs(") && !word.starts_with("sext(")
            && !word.starts_with("lit(")
}

/// Parses one instruction's text (`v_add_nc_u32_e32 v1, v2, v3`).
pub fn parse_inst(asm: &str, addr: u64, len: u8, func: u32) -> Result<Inst, String> {
    if let Some((first, second)) = asm.split_once("::") {
        let mut x = parse_inst(first.trim(), addr, len, func)?;
        let y = parse_inst(second.trim(), addr, len, func)?;
        x.dual = Some(Box::new(y));
        x.exec = ops::dual;
        return Ok(x);
    }
    let (mnemonic, rest) = asm.split_once(char::is_whitespace).unwrap_or((asm, ""));
    let mut inst = Inst {
        addr,
        len,
        mnemonic: mnemonic.into(),
        ops: Vec::new(),
        text: Vec::new(),
        mods: Mods { op_sel_hi: 0xff, ..Mods::default() },
        func,
        exec: ops::unknown,
        aux: 0,
        dual: None,
    };
    // `s_delay_alu`, `s_waitcnt` and friends: operands we need not read.
    if !ops::is_nop(mnemonic) {
        for part in split_top(rest, |c| c == ',') {
            let words = split_top(part, char::is_whitespace);
            for (n, w) in words.iter().enumerate() {
                if n == 0 && !is_flag(w) {
                    inst.text.push((*w).into());
                    match operand::parse(w) {
                        Some(o) => inst.ops.push(o),
                        None => inst.ops.push(Operand::new(operand::Kind::Off)),
                    }
                } else {
                    add_modifier(&mut inst.mods, w);
                }
            }
        }
    }
    (inst.exec, inst.aux) = ops::lookup(mnemonic);
    Ok(inst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operand::Kind;

    #[test]
    fn listing() {
        let text = "\n0000000000004400 <f>:\n\
            \ts_mov_b32 s0, 0x1234                                        // 000000004400: BE8000FF 00001234\n\
            \tflat_load_b128 v[0:3], v[40:41] offset:-8 glc               // 000000004408: DC5C0008 00002800\n\
            \ts_branch 65533                                              // 000000004410: BFA0FFFD <f+0x4>\n\
            \tv_cmp_lt_i16_sdwa s[0:1], sext(v104), v73 src0_sel:BYTE_0 src1_sel:DWORD// 000000004414: 7D4292F9 06088068\n\
            \tv_dual_mov_b32 v8, v16 :: v_dual_mov_b32 v9, v17           // 00000000441C: CA100110 08080111\n\
            \ts_waitcnt vmcnt(0) lgkmcnt(0)                               // 000000004424: BF890000\n";
        let code = parse_listing(text).unwrap();
        assert_eq!(code.insts.len(), 6);
        assert_eq!(code.functions[0], ("f".into(), 0x4400));
        let i = &code.insts[0];
        assert_eq!((i.len, i.ops[1].kind), (8, Kind::Literal(0x1234)));
        let l = &code.insts[1];
        assert_eq!((l.mods.offset, l.mods.glc, l.ops.len()), (-8, true, 2));
        assert_eq!(code.insts[2].branch_target(), 0x4410 + 4 - 12);
        let c = &code.insts[3];
        assert!(c.ops[1].sext);
        assert_eq!(c.mods.get("src0_sel"), Some("BYTE_0"));
        assert!(code.insts[4].dual.is_some());
        assert!(code.at(0x4408).is_some() && code.at(0x440c).is_none());
        assert_eq!(code.function_at(0x4424), "f");
    }
}
