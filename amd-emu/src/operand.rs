//! Operands as LLVM's AMDGPU disassembler prints them, parsed once at load.
//!
//! Scalar registers live in one file indexed as the hardware encodes them
//! (`s0..s105`, then `vcc`, `ttmp`, `m0`, `null`, `exec`), so a register
//! pair such as `vcc` or `exec` is just `Scalar { index, count: 2 }`.

/// Index of `vcc_lo` in the scalar file (`vcc_hi` is the next).
pub const VCC: u16 = 106;
/// Index of `ttmp0`.
pub const TTMP: u16 = 108;
/// Index of `m0`.
pub const M0: u16 = 124;
/// Index of `null` (reads 0, writes are dropped).
pub const NULL: u16 = 125;
/// Index of `exec_lo` (`exec_hi` is the next).
pub const EXEC: u16 = 126;
/// Index of `flat_scratch_lo` (gfx9 without architected flat scratch).
pub const FLAT_SCRATCH: u16 = 128;
/// Entries in the scalar file.
pub const SCALAR_FILE: usize = 130;

/// What an operand names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `count` consecutive scalar registers from `index` (see the constants).
    Scalar { index: u16, count: u8 },
    /// `count` consecutive VGPRs from `index`; `half` selects a 16-bit half
    /// (gfx11 true16: `v1.l`, `v1.h`).
    Vector { index: u16, count: u8, half: Half },
    /// Accumulation registers (gfx90a/gfx942 `a0`).
    Acc { index: u16, count: u8 },
    /// An integer: an inline constant (printed in decimal) or a literal.
    Int(i64),
    /// A 32-bit literal (printed in hex, or as `lit(..)`): for 64-bit float
    /// operands it is the high half.
    Literal(u32),
    /// An inline floating-point constant (`1.0`, `-0.5`, `0.15915494`): its
    /// bits depend on the operand's type.
    Float(f64),
    /// `off`: no register.
    Off,
    /// `scc`.
    Scc,
    /// `src_private_base` / `src_shared_base` and their limits.
    Aperture(Aperture),
    /// `src_execz`, `src_vccz`.
    Execz,
    Vccz,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Full,
    Lo,
    Hi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aperture {
    PrivateBase,
    PrivateLimit,
    SharedBase,
    SharedLimit,
}

/// An operand with its source modifiers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operand {
    pub kind: Kind,
    /// `-x` or `neg(x)`.
    pub neg: bool,
    /// `|x|` or `abs(x)`.
    pub abs: bool,
    /// `sext(x)` (SDWA).
    pub sext: bool,
}

impl Operand {
    pub fn new(kind: Kind) -> Operand {
        Operand { kind, neg: false, abs: false, sext: false }
    }

    /// The first register index and count, for VGPR operands.
    pub fn vgpr(&self) -> Option<(u16, u8)> {
        match self.kind {
            Kind::Vector { index, count, .. } => Some((index, count)),
            _ => None,
        }
    }

    pub fn is_vgpr(&self) -> bool {
        matches!(self.kind, Kind::Vector { .. } | Kind::Acc { .. })
    }
}

fn reg_range(s: &str) -> Option<(u16, u8)> {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (a, b) = inner.split_once(':')?;
        let (a, b): (u16, u16) = (a.parse().ok()?, b.parse().ok()?);
        if b < a {
            return None;
        }
        Some((a, (b - a + 1) as u8))
    } else {
        Some((s.parse().ok()?, 1))
    }
}

fn named(s: &str) -> Option<Kind> {
    let sc = |index, count| Some(Kind::Scalar { index, count });
    match s {
        "vcc" => sc(VCC, 2),
        "vcc_lo" => sc(VCC, 1),
        "vcc_hi" => sc(VCC + 1, 1),
        "exec" => sc(EXEC, 2),
        "exec_lo" => sc(EXEC, 1),
        "exec_hi" => sc(EXEC + 1, 1),
        "m0" => sc(M0, 1),
        "null" => sc(NULL, 1),
        "flat_scratch" => sc(FLAT_SCRATCH, 2),
        "flat_scratch_lo" => sc(FLAT_SCRATCH, 1),
        "flat_scratch_hi" => sc(FLAT_SCRATCH + 1, 1),
        "scc" => Some(Kind::Scc),
        "off" => Some(Kind::Off),
        "src_execz" | "execz" => Some(Kind::Execz),
        "src_vccz" | "vccz" => Some(Kind::Vccz),
        "src_private_base" => Some(Kind::Aperture(Aperture::PrivateBase)),
        "src_private_limit" => Some(Kind::Aperture(Aperture::PrivateLimit)),
        "src_shared_base" => Some(Kind::Aperture(Aperture::SharedBase)),
        "src_shared_limit" => Some(Kind::Aperture(Aperture::SharedLimit)),
        _ => None,
    }
}

/// Parses one operand as the disassembler prints it.
pub fn parse(text: &str) -> Option<Operand> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix("neg(").and_then(|r| r.strip_suffix(')')) {
        return parse(inner).map(|o| Operand { neg: !o.neg, ..o });
    }
    if let Some(inner) = t.strip_prefix("abs(").and_then(|r| r.strip_suffix(')')) {
        return parse(inner).map(|o| Operand { abs: true, ..o });
    }
    if let Some(inner) = t.strip_prefix("sext(").and_then(|r| r.strip_suffix(')')) {
        return parse(inner).map(|o| Operand { sext: true, ..o });
    }
    if let Some(inner) = t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        return parse(inner).map(|o| Operand { abs: true, ..o });
    }
    if let Some(inner) = t.strip_prefix('-') {
        // `-1` is an integer; `-v1`, `-|v1|`, `-1.0` carry a negation
        // (a float constant keeps its sign in the value).
        if inner.starts_with(|c: char| c.is_ascii_digit()) {
            return parse_number(t).map(Operand::new);
        }
        return parse(inner).map(|o| Operand { neg: !o.neg, ..o });
    }
    if let Some(inner) = t.strip_prefix("lit(").and_then(|r| r.strip_suffix(')')) {
        let v = parse_hex(inner)?;
        return Some(Operand::new(Kind::Literal(v as u32)));
    }
    if let Some(k) = named(t) {
        return Some(Operand::new(k));
    }
    if t.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_number(t).map(Operand::new);
    }
    let (class, rest) = t.split_at(1);
    if let Some(rest) = t.strip_prefix("ttmp") {
        let (i, n) = reg_range(rest)?;
        return Some(Operand::new(Kind::Scalar { index: TTMP + i, count: n }));
    }
    match class {
        "s" => {
            let (i, n) = reg_range(rest)?;
            Some(Operand::new(Kind::Scalar { index: i, count: n }))
        }
        "v" => {
            let (body, half) = if let Some(b) = rest.strip_suffix(".l") {
                (b, Half::Lo)
            } else if let Some(b) = rest.strip_suffix(".h") {
                (b, Half::Hi)
            } else {
                (rest, Half::Full)
            };
            let (i, n) = reg_range(body)?;
            Some(Operand::new(Kind::Vector { index: i, count: n, half }))
        }
        "a" => {
            let (i, n) = reg_range(rest)?;
            Some(Operand::new(Kind::Acc { index: i, count: n }))
        }
        _ => None,
    }
}

fn parse_hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

fn parse_number(t: &str) -> Option<Kind> {
    if let Some(v) = parse_hex(t) {
        return Some(Kind::Literal(v as u32));
    }
    if t.contains('.') || t.contains('e') {
        return t.parse::<f64>().ok().map(Kind::Float);
    }
    t.parse::<i64>().ok().map(Kind::Int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_and_constants() {
        assert_eq!(parse("s5").unwrap().kind, Kind::Scalar { index: 5, count: 1 });
        assert_eq!(parse("s[30:31]").unwrap().kind, Kind::Scalar { index: 30, count: 2 });
        assert_eq!(parse("v[4:7]").unwrap().kind, Kind::Vector { index: 4, count: 4, half: Half::Full });
        assert_eq!(parse("v6.h").unwrap().kind, Kind::Vector { index: 6, count: 1, half: Half::Hi });
        assert_eq!(parse("vcc").unwrap().kind, Kind::Scalar { index: VCC, count: 2 });
        assert_eq!(parse("exec_lo").unwrap().kind, Kind::Scalar { index: EXEC, count: 1 });
        assert_eq!(parse("ttmp2").unwrap().kind, Kind::Scalar { index: TTMP + 2, count: 1 });
        assert_eq!(parse("-16").unwrap().kind, Kind::Int(-16));
        assert_eq!(parse("0xffffffe0").unwrap().kind, Kind::Literal(0xffff_ffe0));
        assert_eq!(parse("lit(0x0)").unwrap().kind, Kind::Literal(0));
        assert_eq!(parse("-0.5").unwrap().kind, Kind::Float(-0.5));
        let o = parse("-|v3|").unwrap();
        assert!(o.neg && o.abs && o.vgpr() == Some((3, 1)));
        assert!(parse("sext(v104)").unwrap().sext);
        assert_eq!(parse("a[0:1]").unwrap().kind, Kind::Acc { index: 0, count: 2 });
        assert!(parse("bogus").is_none());
    }
}
