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
