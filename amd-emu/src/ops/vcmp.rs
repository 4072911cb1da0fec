//! Vector compares (VOPC and their VOP3 forms): `v_cmp_{op}_{type}`,
//! `v_cmpx_{op}_{type}`, `v_cmp_class_*`, `v_cmpx_class_*`, and gfx9's
//! `_sdwa` forms.
//!
//! The predicate's code is also its truth table: bit 0 "less", bit 1
//! "equal", bit 2 "greater", bit 3 "unordered" (a NaN operand). So `lt` is
//! 1, `le` 3, `o` 7, `nge` (not >=, true on NaN) 9, `tru` 15; integer `ne`
//! is 5 (`lg`) and integer `t` is 7. The result has one bit per active lane
//! (0 for inactive lanes). `v_cmp` writes its destination (VCC, an SGPR or
//! a pair); `v_cmpx` writes EXEC, and on gfx9, where it has a destination
//! too, that as well.

use std::cmp::Ordering;

use super::vfloat::{read, read16, widen};
use super::{Exec, sdwa_select};
use crate::decode::Inst;
use crate::operand::Operand;
use crate::wave::{Result, Wave};

const I16: u32 = 0;
const U16: u32 = 1;
const I32: u32 = 2;
const U32: u32 = 3;
const I64: u32 = 4;
const U64: u32 = 5;
const F16: u32 = 6;
const F32: u32 = 7;
const F64: u32 = 8;

/// aux: predicate (bits 0..4), type (4..8), these flags.
const CMPX: u32 = 1 << 8;
const SDWA: u32 = 1 << 9;

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let (name, sdwa) = match name.strip_suffix("_sdwa") {
        Some(n) => (n, SDWA),
        None => (name, 0),
    };
    let (rest, cmpx) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (r, CMPX)
    } else {
        (name.strip_prefix("v_cmp_")?, 0)
    };
    let (op, ty) = rest.rsplit_once('_')?;
    let ty = match ty {
        "i16" => I16,
        "u16" => U16,
        "i32" => I32,
        "u32" => U32,
        "i64" => I64,
        "u64" => U64,
        "f16" => F16,
        "f32" => F32,
        "f64" => F64,
        _ => return None,
    };
    let float = ty >= F16;
    if op == "class" {
        return float.then_some((class, ty << 4 | cmpx | sdwa));
    }
    let pred = match op {
        "f" => 0,
        "lt" => 1,
        "eq" => 2,
        "le" => 3,
        "gt" => 4,
        "lg" => 5,
        "ne" if !float => 5,
        "ge" => 6,
        "o" if float => 7,
        "t" | "tru" if !float => 7,
        "u" if float => 8,
        "nge" if float => 9,
        "nlg" if float => 10,
        "ngt" if float => 11,
        "nle" if float => 12,
        "neq" if float => 13,
        "nlt" if float => 14,
        "tru" | "t" if float => 15,
        _ => return None,
    };
    Some((compare, pred | ty << 4 | cmpx | sdwa))
}

/// The destination (if printed) and the two sources.
fn operands(i: &Inst) -> (Option<&Operand>, &Operand, &Operand) {
    match i.ops.as_slice() {
        [d, a, b, ..] => (Some(d), a, b),
        [a, b] => (None, a, b),
        _ => unreachable!("a compare has two sources"),
    }
}

/// Writes a compare's lane mask: the destination, and EXEC for `v_cmpx`.
fn finish(w: &mut Wave, i: &Inst, dst: Option<&Operand>, mask: u64) {
    if let Some(d) = dst {
        w.mask_write(d, mask);
    }
    if i.aux & CMPX != 0 {
        w.set_exec(mask);
    }
}

/// Source `k`'s raw bits in `lane`, selected as SDWA says.
fn raw(w: &Wave, i: &Inst, o: &Operand, k: usize, lane: usize, bits: u32) -> u64 {
    if i.aux & SDWA != 0 {
        let sel = i.mods.get(if k == 0 { "src0_sel" } else { "src1_sel" });
        return u64::from(sdwa_select(w.vread(o, lane), sel, o.sext));
    }
    match bits {
        16 => u64::from(read16(w, o, lane, i.mods.op_sel >> k & 1 != 0)),
        32 => u64::from(w.vread(o, lane)),
        _ => w.vread64(o, lane),
    }
}

/// A float source in `lane` as f64, modifiers applied.
fn float(w: &Wave, i: &Inst, o: &Operand, k: usize, lane: usize, ty: u32) -> f64 {
    let width = match ty {
        F16 => 0,
        F32 => 1,
        _ => 2,
    };
    if i.aux & SDWA == 0 {
        return read(w, o, lane, width, i.mods.op_sel >> k & 1 != 0);
    }
    let x = widen(width, raw(w, i, o, k, lane, 32));
    let x = if o.abs { x.abs() } else { x };
    if o.neg { -x } else { x }
}

/// An integer source in `lane`, extended to i128 per the type.
fn int(w: &Wave, i: &Inst, o: &Operand, k: usize, lane: usize, ty: u32) -> i128 {
    let bits = match ty {
        I16 | U16 => 16,
        I32 | U32 => 32,
        _ => 64,
    };
    let v = raw(w, i, o, k, lane, bits);
    match ty {
        I16 => i128::from(v as u16 as i16),
        U16 => i128::from(v as u16),
        I32 => i128::from(v as u32 as i32),
        U32 => i128::from(v as u32),
        I64 => i128::from(v as i64),
        _ => i128::from(v),
    }
}

fn compare(w: &mut Wave, i: &Inst) -> Result {
    let (pred, ty) = (i.aux & 0xf, i.aux >> 4 & 0xf);
    let (dst, a, b) = operands(i);
    let mut mask = 0u64;
    for lane in w.active() {
        let ord = if ty >= F16 {
            float(w, i, a, 0, lane, ty).partial_cmp(&float(w, i, b, 1, lane, ty))
        } else {
            Some(int(w, i, a, 0, lane, ty).cmp(&int(w, i, b, 1, lane, ty)))
        };
        let bit = match ord {
            Some(Ordering::Less) => 1,
            Some(Ordering::Equal) => 2,
            Some(Ordering::Greater) => 4,
            None => 8,
        };
        if pred & bit != 0 {
            mask |= 1 << lane;
        }
    }
    finish(w, i, dst, mask);
    Ok(())
}

/// The class bit of a value: 0 signaling NaN, 1 quiet NaN, 2 -inf,
/// 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
fn class_bit(x: f64, ty: u32) -> u32 {
    let neg = x.is_sign_negative();
    let pick = |n: u32, p: u32| if neg { n } else { p };
    if x.is_nan() {
        return if x.to_bits() & 1 << 51 == 0 { 0 } else { 1 };
    }
    if x.is_infinite() {
        return pick(2, 9);
    }
    if x == 0.0 {
        return pick(5, 6);
    }
    let min_normal = match ty {
        F16 => 2f64.powi(-14),
        F32 => f64::from(f32::MIN_POSITIVE),
        _ => f64::MIN_POSITIVE,
    };
    if x.abs() < min_normal { pick(4, 7) } else { pick(3, 8) }
}

fn class(w: &mut Wave, i: &Inst) -> Result {
    let ty = i.aux >> 4 & 0xf;
    let (dst, a, b) = operands(i);
    let mut mask = 0u64;
    for lane in w.active() {
        let x = float(w, i, a, 0, lane, ty);
        if w.vread(b, lane) >> class_bit(x, ty) & 1 != 0 {
            mask |= 1 << lane;
        }
    }
    finish(w, i, dst, mask);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::ops::testing::{run, wave};

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn names() {
        for n in ["v_cmp_eq_u32", "v_cmpx_ne_u64", "v_cmp_lt_i16_sdwa", "v_cmp_nlt_f64", "v_cmp_class_f16", "v_cmpx_tru_f32"] {
            assert!(lookup(n).is_some(), "{n}");
        }
        for n in ["v_cmp_o_u32", "v_cmp_class_u32", "v_cmp_eq_b32", "v_cndmask_b32"] {
            assert!(lookup(n).is_none(), "{n}");
        }
        assert!(crate::ops::implemented("v_cmpx_lt_i16_e32"));
        assert!(crate::ops::implemented("v_cmp_gt_i16_sdwa"));
    }

    #[test]
    fn wave32_vcc_and_exec_masking() {
        let mut w = wave(Arch::Gfx1100);
        for l in 0..32 {
            w.v[1][l] = l as u32;
        }
        w.s[106] = 0xffff_ffff;
        w.set_exec(0x0000_ff0f);
        run(&mut w, "v_cmp_lt_u32_e32 vcc_lo, 9, v1").unwrap();
        assert_eq!(w.s[106], 0x0000_fc00, "inactive lanes read 0");
        run(&mut w, "v_cmp_eq_u32_e64 s5, v1, 3").unwrap();
        assert_eq!(w.s[5], 0b1000);
        run(&mut w, "v_cmp_ne_u32_e64 s5, v1, 3").unwrap();
        assert_eq!(w.s[5], 0xff07);
        // Signed against unsigned: -1 is the largest u32.
        run(&mut w, "v_cmp_gt_i32_e64 s6, -1, v1").unwrap();
        assert_eq!(w.s[6], 0);
        run(&mut w, "v_cmp_gt_u32_e64 s6, -1, v1").unwrap();
        assert_eq!(w.s[6], 0xff0f);
        run(&mut w, "v_cmp_t_u32_e64 s6, v1, v1").unwrap();
        assert_eq!(w.s[6], 0xff0f);
        run(&mut w, "v_cmp_f_u32_e64 s6, v1, v1").unwrap();
        assert_eq!(w.s[6], 0);
    }

    #[test]
    fn cmpx_writes_exec() {
        // gfx11: no destination, EXEC only.
        let mut w = wave(Arch::Gfx1100);
        for l in 0..32 {
            w.v[1][l] = l as u32;
        }
        w.s[106] = 0x1234;
        w.set_exec(0xffff_fff0);
        run(&mut w, "v_cmpx_gt_u32_e32 20, v1").unwrap();
        assert_eq!(w.exec(), 0x000f_fff0);
        assert_eq!(w.s[106], 0x1234, "VCC untouched");
        // gfx9 (wave64): the destination and EXEC.
        let mut w = wave(Arch::Gfx942);
        for l in 0..64 {
            w.v[1][l] = l as u32;
        }
        run(&mut w, "v_cmpx_le_u32_e64 s[0:1], 40, v1").unwrap();
        let want = !((1u64 << 40) - 1);
        assert_eq!(w.exec(), want);
        assert_eq!((w.s[0], w.s[1]), (want as u32, (want >> 32) as u32));
    }

    #[test]
    fn wave64_pairs_and_64_bit() {
        let mut w = wave(Arch::Gfx942);
        for l in 0..64 {
            w.v[2][l] = l as u32;
            w.v[3][l] = if l % 2 == 0 { 0 } else { 0x8000_0000 };
        }
        // v[2:3] is negative as i64 in odd lanes.
        run(&mut w, "v_cmp_lt_i64_e64 s[4:5], v[2:3], 0").unwrap();
        assert_eq!(u64::from(w.s[4]) | u64::from(w.s[5]) << 32, 0xaaaa_aaaa_aaaa_aaaa);
        run(&mut w, "v_cmp_lt_u64_e32 vcc, v[2:3], 0x80000000").unwrap();
        assert_eq!(w.vcc(), 0x5555_5555_5555_5555, "a literal is zero-extended");
        run(&mut w, "v_cmp_gt_u64_e64 s[4:5], -1, v[2:3]").unwrap();
        assert_eq!(u64::from(w.s[4]) | u64::from(w.s[5]) << 32, u64::MAX, "-1 sign-extends to the largest u64");
        let mut w = wave(Arch::Gfx1100);
        w.v[0][0] = 5;
        w.v[1][0] = 1;
        w.v[2][0] = 5;
        w.v[3][0] = 0;
        run(&mut w, "v_cmpx_ne_u64_e32 v[0:1], v[2:3]").unwrap();
        assert_eq!(w.exec(), 1);
        run(&mut w, "v_cmpx_eq_u64_e64 s[0:1], v[0:1]").unwrap();
        assert_eq!(w.exec(), 0);
    }

    #[test]
    fn sixteen_bit() {
        let mut w = wave(Arch::Gfx1100);
        w.v[0][0] = 0x0005_ffff; // .l = -1, .h = 5
        w.v[0][1] = 0x002d_002b; // .l = 43, .h = 45
        w.set_exec(0b11);
        run(&mut w, "v_cmpx_lt_i16_e32 44, v0.h").unwrap();
        assert_eq!(w.exec(), 0b10);
        w.set_exec(0b11);
        run(&mut w, "v_cmp_lt_u16_e64 s0, 44, v0.l").unwrap();
        assert_eq!(w.s[0], 0b01, "0xffff is a large u16");
        run(&mut w, "v_cmp_lt_i16_e64 s0, 0xffbf, v0.l").unwrap();
        assert_eq!(w.s[0], 0b11, "-65 < -1 and < 43");
        run(&mut w, "v_cmp_eq_u16_e64 s0, 5, v0.h op_sel:[0,1,0]").unwrap();
        assert_eq!(w.s[0], 0b01, "op_sel printed with a .h operand selects once");
        // gfx9: whole registers, the low 16 bits.
        let mut w = wave(Arch::Gfx942);
        w.v[1][0] = 0x1234_8000;
        run(&mut w, "v_cmp_gt_i16_e64 s[2:3], 0, v1").unwrap();
        assert_eq!(w.s[2] & 1, 1);
    }

    #[test]
    fn sdwa() {
        let mut w = wave(Arch::Gfx942);
        w.v[104][0] = 0x0000_0080; // byte 0: 128, or -128 sign-extended
        w.v[73][0] = 0;
        w.v[104][1] = 0x0000_0005;
        w.v[73][1] = 7;
        w.set_exec(0b11);
        run(&mut w, "v_cmp_lt_i16_sdwa s[0:1], sext(v104), v73 src0_sel:BYTE_0 src1_sel:DWORD").unwrap();
        assert_eq!(w.s[0], 0b11);
        run(&mut w, "v_cmp_lt_i16_sdwa s[0:1], v104, v73 src0_sel:BYTE_0 src1_sel:DWORD").unwrap();
        assert_eq!(w.s[0], 0b10);
        w.s[4] = 0x80;
        run(&mut w, "v_cmp_ne_u16_sdwa s[4:5], v104, s4 src0_sel:BYTE_0 src1_sel:DWORD").unwrap();
        assert_eq!(w.s[4], 0b10);
        w.v[3][0] = 0xffff_0000 | 0x8000;
        w.v[75][0] = 0;
        run(&mut w, "v_cmp_lt_i32_sdwa s[62:63], sext(v3), v75 src0_sel:WORD_0 src1_sel:DWORD").unwrap();
        assert_eq!(w.s[62] & 1, 1);
    }

    #[test]
    fn float_predicates() {
        let mut w = wave(Arch::Gfx1100);
        // Lanes: 1 vs 2, 2 vs 2, 3 vs 2, NaN vs 2.
        for (l, a) in [1.0f32, 2.0, 3.0, f32::NAN].iter().enumerate() {
            w.v[1][l] = f(*a);
            w.v[2][l] = f(2.0);
        }
        w.set_exec(0b1111);
        let want = [
            ("f", 0b0000),
            ("lt", 0b0001),
            ("eq", 0b0010),
            ("le", 0b0011),
            ("gt", 0b0100),
            ("lg", 0b0101),
            ("ge", 0b0110),
            ("o", 0b0111),
            ("u", 0b1000),
            ("nge", 0b1001),
            ("nlg", 0b1010),
            ("ngt", 0b1011),
            ("nle", 0b1100),
            ("neq", 0b1101),
            ("nlt", 0b1110),
            ("tru", 0b1111),
        ];
        for (op, m) in want {
            run(&mut w, &format!("v_cmp_{op}_f32_e64 s0, v1, v2")).unwrap();
            assert_eq!(w.s[0], m, "f32 {op}");
        }
        // f64, with modifiers and a literal (the high half).
        for (l, a) in [-1.0f64, 2.0, -3.0, f64::NAN].iter().enumerate() {
            w.v[4][l] = a.to_bits() as u32;
            w.v[5][l] = (a.to_bits() >> 32) as u32;
        }
        run(&mut w, "v_cmp_lt_f64_e64 s0, |v[4:5]|, 0x40000000").unwrap();
        assert_eq!(w.s[0], 0b0001);
        run(&mut w, "v_cmp_ge_f64_e64 s0, -v[4:5], 1.0").unwrap();
        assert_eq!(w.s[0], 0b0101);
        run(&mut w, "v_cmp_o_f64_e32 vcc_lo, v[4:5], v[4:5]").unwrap();
        assert_eq!(w.s[106], 0b0111);
        run(&mut w, "v_cmpx_neq_f32_e64 0x7f800000, |v1|").unwrap();
        assert_eq!(w.exec(), 0b1111);
        // f16 on halves: -0 == +0.
        w.v[6][0] = 0x8000_0000;
        w.set_exec(1);
        run(&mut w, "v_cmp_eq_f16_e32 vcc_lo, v6.l, v6.h").unwrap();
        assert_eq!(w.s[106], 1);
        run(&mut w, "v_cmp_gt_f16_e64 s0, 1.0, v6.h").unwrap();
        assert_eq!(w.s[0], 1);
    }

    #[test]
    fn class() {
        let mut w = wave(Arch::Gfx1100);
        let vals = [0x7f80_0001u32, 0x7fc0_0000, 0xff80_0000, f(-1.0), 0x8000_0001, 0x8000_0000, 0, 1, f(1.0), 0x7f80_0000];
        for (l, v) in vals.iter().enumerate() {
            w.v[1][l] = *v;
            w.v[2][l] = 1 << l;
        }
        w.set_exec(0x3ff);
        run(&mut w, "v_cmp_class_f32_e64 vcc_lo, v1, v2").unwrap();
        assert_eq!(w.s[106], 0x3ff, "each lane is its own class");
        run(&mut w, "v_cmp_class_f32_e64 vcc_lo, v1, 0x260").unwrap(); // -0, +0, +inf
        assert_eq!(w.s[106], 1 << 5 | 1 << 6 | 1 << 9);
        run(&mut w, "v_cmp_class_f32_e64 s0, |v1|, 0x100").unwrap(); // +normal
        assert_eq!(w.s[0], 1 << 3 | 1 << 8);
        let mut w = wave(Arch::Gfx942);
        let ds = [f64::from_bits(1), -f64::MIN_POSITIVE, f64::NAN, f64::NEG_INFINITY];
        for (l, d) in ds.iter().enumerate() {
            w.v[2][l] = d.to_bits() as u32;
            w.v[3][l] = (d.to_bits() >> 32) as u32;
        }
        w.set_exec(0b1111);
        run(&mut w, "v_cmp_class_f64_e64 s[0:1], v[2:3], 0x1f8").unwrap(); // finite nonzero... & ±0
        assert_eq!(w.s[0], 0b0011);
        w.v[7][0] = 0x204;
        run(&mut w, "v_cmpx_class_f64_e64 s[0:1], v[2:3], 0x204").unwrap(); // ±inf
        assert_eq!(w.exec(), 0b1000);
        w.v[8][0] = 0x3c00_0001;
        w.set_exec(1);
        run(&mut w, "v_cmp_class_f16_e64 s[0:1], v8, 0x80").unwrap(); // +denormal
        assert_eq!(w.s[0], 1);
    }
}
