//! Vector floating point: arithmetic, min/max, fused multiply-add,
//! transcendental approximations, rounding, the division helpers
//! (`v_div_scale`/`v_div_fmas`/`v_div_fixup`), conversions, and the packed
//! (`v_pk_*`) forms, for f16, f32 and f64, per the RDNA3 and CDNA3 ISA
//! documents.
//!
//! How results are computed: sources are widened exactly to `f64` and the
//! operation is done there, then rounded once to the instruction's width
//! (round to nearest even). For `+ - * /` and `sqrt` this is correctly
//! rounded for f32 and f16 (f64 has more than twice their precision plus
//! two bits, so the double rounding is harmless); fused multiply-adds of
//! f32/f16 are computed with round-to-odd in f64 for the same reason, and
//! f64 ones with the host's `mul_add`. Denormals are kept, inputs and
//! results (our kernels' FLOAT_DENORM_MODE keeps them), except for
//! `v_mad_f32`/`v_mac_f32`, which the hardware always flushes.
//!
//! The hardware's `rcp`, `rsq`, `sqrt` (f32), `exp`, `log`, `sin` and
//! `cos` are approximations (about 1 ULP); the emulator computes them
//! exactly (or to within f64 rounding), which programs cannot tell from a
//! better chip. NaN results: an input NaN propagates quieted (the first
//! NaN source), an invalid operation gives the positive default NaN.

use super::Exec;
use crate::decode::Inst;
use crate::operand::{Half, Kind, Operand};
use crate::wave::{Result, Wave};

/// Width of an instruction's float type, in `aux` bits 8..10.
const H: u32 = 0;
const S: u32 = 1;
const D: u32 = 2;

// Operations of `vop` (aux bits 0..8).
const ADD: u32 = 0;
const SUB: u32 = 1;
const SUBREV: u32 = 2;
const MUL: u32 = 3;
const MUL_LEGACY: u32 = 4;
const MIN: u32 = 5;
const MAX: u32 = 6;
const MIN3: u32 = 7;
const MAX3: u32 = 8;
const MED3: u32 = 9;
const FMA: u32 = 10;
const FMA_LEGACY: u32 = 11;
/// `dst = src0 * src1 + dst`.
const FMAC: u32 = 12;
const FMAC_LEGACY: u32 = 13;
/// Unfused multiply-add (`v_mad_f32`, `v_madak`, `v_madmk`).
const MAD: u32 = 14;
const MAC: u32 = 15;
const LDEXP: u32 = 16;
const RCP: u32 = 17;
const RSQ: u32 = 18;
const SQRT: u32 = 19;
const EXP: u32 = 20;
const LOG: u32 = 21;
const SIN: u32 = 22;
const COS: u32 = 23;
const FLOOR: u32 = 24;
const CEIL: u32 = 25;
const TRUNC: u32 = 26;
const RNDNE: u32 = 27;
const FRACT: u32 = 28;
const FREXP_MANT: u32 = 29;
const DIV_FMAS: u32 = 30;
const DIV_FIXUP: u32 = 31;

// Conversions (`cvt`, aux = one of these).
const F32_I32: u32 = 0;
const F32_U32: u32 = 1;
const I32_F32: u32 = 2;
const U32_F32: u32 = 3;
const F64_I32: u32 = 4;
const F64_U32: u32 = 5;
const I32_F64: u32 = 6;
const U32_F64: u32 = 7;
const F32_F64: u32 = 8;
const F64_F32: u32 = 9;
const F32_UBYTE0: u32 = 10; // ..13 for bytes 1..3
const F16_F32: u32 = 14;
const F32_F16: u32 = 15;
const FLR_I32_F32: u32 = 16;
const RPI_I32_F32: u32 = 17;
const F16_I16: u32 = 18;
const F16_U16: u32 = 19;
const I16_F16: u32 = 20;
const U16_F16: u32 = 21;
const FREXP_EXP_F32: u32 = 22;
const FREXP_EXP_F64: u32 = 23;
const FREXP_EXP_F16: u32 = 24;
const I32_F16: u32 = 25;
const U32_F16: u32 = 26;

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let n = name.strip_prefix("v_")?;
    let cvt_op = match n {
        "cvt_f32_i32" => Some(F32_I32),
        "cvt_f32_u32" => Some(F32_U32),
        "cvt_i32_f32" => Some(I32_F32),
        "cvt_u32_f32" => Some(U32_F32),
        "cvt_f64_i32" => Some(F64_I32),
        "cvt_f64_u32" => Some(F64_U32),
        "cvt_i32_f64" => Some(I32_F64),
        "cvt_u32_f64" => Some(U32_F64),
        "cvt_f32_f64" => Some(F32_F64),
        "cvt_f64_f32" => Some(F64_F32),
        "cvt_f32_ubyte0" => Some(F32_UBYTE0),
        "cvt_f32_ubyte1" => Some(F32_UBYTE0 + 1),
        "cvt_f32_ubyte2" => Some(F32_UBYTE0 + 2),
        "cvt_f32_ubyte3" => Some(F32_UBYTE0 + 3),
        "cvt_f16_f32" => Some(F16_F32),
        "cvt_f32_f16" => Some(F32_F16),
        "cvt_flr_i32_f32" | "cvt_floor_i32_f32" => Some(FLR_I32_F32),
        "cvt_rpi_i32_f32" | "cvt_nearest_i32_f32" => Some(RPI_I32_F32),
        "cvt_f16_i16" => Some(F16_I16),
        "cvt_f16_u16" => Some(F16_U16),
        "cvt_i16_f16" => Some(I16_F16),
        "cvt_u16_f16" => Some(U16_F16),
        "cvt_i32_f16" => Some(I32_F16),
        "cvt_u32_f16" => Some(U32_F16),
        "frexp_exp_i32_f32" => Some(FREXP_EXP_F32),
        "frexp_exp_i32_f64" => Some(FREXP_EXP_F64),
        "frexp_exp_i16_f16" => Some(FREXP_EXP_F16),
        _ => None,
    };
    if let Some(c) = cvt_op {
        return Some((cvt, c));
    }
    match n {
        "cvt_pkrtz_f16_f32" | "cvt_pk_rtz_f16_f32" => return Some((pkrtz, 0)),
        "div_scale_f32" => return Some((div_scale, S)),
        "div_scale_f64" => return Some((div_scale, D)),
        _ => {}
    }
    if let Some(rest) = n.strip_prefix("pk_") {
        let (op, ty) = rest.rsplit_once('_')?;
        let width = match ty {
            "f16" => H,
            "f32" => S,
            _ => return None,
        };
        let op = match op {
            "add" => ADD,
            "mul" => MUL,
            "fma" => FMA,
            "min" if width == H => MIN,
            "max" if width == H => MAX,
            _ => return None,
        };
        return Some((packed, width << 8 | op));
    }
    let (op, ty) = n.rsplit_once('_')?;
    let width = match ty {
        "f16" => H,
        "f32" => S,
        "f64" => D,
        _ => return None,
    };
    let op = match op {
        "add" => ADD,
        "sub" => SUB,
        "subrev" => SUBREV,
        "mul" => MUL,
        "mul_legacy" | "mul_dx9_zero" if width == S => MUL_LEGACY,
        "min" => MIN,
        "max" => MAX,
        "min3" => MIN3,
        "max3" => MAX3,
        "med3" => MED3,
        "fma" => FMA,
        "fma_legacy" | "fma_dx9_zero" if width == S => FMA_LEGACY,
        "fmac" => FMAC,
        "fmac_legacy" | "fmac_dx9_zero" if width == S => FMAC_LEGACY,
        // The literal's place in the printed operands makes both
        // `dst = src0 * src1 + src2`.
        "fmaak" | "fmamk" => FMA,
        "mad" | "madak" | "madmk" if width != D => MAD,
        "mac" if width != D => MAC,
        "ldexp" => LDEXP,
        "rcp" | "rcp_iflag" => RCP,
        "rsq" => RSQ,
        "sqrt" => SQRT,
        "exp" | "exp_legacy" if width != D => EXP,
        "log" | "log_legacy" if width != D => LOG,
        "sin" if width != D => SIN,
        "cos" if width != D => COS,
        "floor" => FLOOR,
        "ceil" => CEIL,
        "trunc" => TRUNC,
        "rndne" => RNDNE,
        "fract" => FRACT,
        "frexp_mant" => FREXP_MANT,
        "div_fmas" if width != H => DIV_FMAS,
        "div_fixup" => DIV_FIXUP,
        _ => return None,
    };
    Some((vop, width << 8 | op))
}

// ------------------------------------------------------------ f16 and bits

/// An f16's value (exact), NaN payloads and quietness kept.
pub(crate) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = f64::from(h & 0x3ff);
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::from_bits(u64::from(h & 0x8000) << 48 | 0x7ff0_0000_0000_0000 | u64::from(h & 0x3ff) << 42),
        _ => sign * (1024.0 + m) * 2f64.powi(i32::from(e) - 25),
    }
}

/// An f16's value as an f32 (exact).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    f16_to_f64(h) as f32
}

/// `f` rounded to the nearest f16 (ties to even; the widening is exact, so
/// this rounds once).
pub(crate) fn f32_to_f16(f: f32) -> u16 {
    f64_to_f16(f64::from(f), false)
}

/// A bfloat16's value (the high half of an f32).
pub(crate) fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `f` rounded to the nearest bfloat16 (ties to even), NaN kept quiet.
pub(crate) fn f32_to_bf16(f: f32) -> u16 {
    let b = f.to_bits();
    if f.is_nan() {
        return (b >> 16) as u16 | 0x40;
    }
    (b.wrapping_add(0x7fff + (b >> 16 & 1)) >> 16) as u16
}

/// `x` rounded to f16, to nearest even or (`rtz`) toward zero.
pub(crate) fn f64_to_f16(x: f64, rtz: bool) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    if x.is_nan() {
        // Keep the payload's top bits, quieted.
        return sign | 0x7e00 | ((b >> 42) & 0x3ff) as u16;
    }
    if x.is_infinite() {
        return sign | 0x7c00;
    }
    let e = ((b >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Zero, or an f64 denormal: far below f16's smallest denormal.
        return sign;
    }
    let m = (b & 0x000f_ffff_ffff_ffff) | 1 << 52; // value = m * 2^(e-1075)
    let exp = e - 1023;
    // The unit of the result's last place: f16 has 11 significant bits,
    // and none below 2^-24.
    let unit = exp.max(-14) - 10;
    let shift = (unit - (e - 1075)) as u32; // >= 42
    let mut q = if shift >= 64 { 0 } else { m >> shift };
    if !rtz && shift <= 64 {
        let rem = if shift == 64 { m } else { m & ((1u64 << shift) - 1) };
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q += 1;
        }
    }
    // Adding the significand (with its leading one) to the exponent field
    // carries into the exponent exactly as rounding up needs.
    let bits = (((unit + 24) as u64) << 10) + q;
    if bits >= 0x7c00 {
        return sign | if rtz { 0x7bff } else { 0x7c00 };
    }
    sign | bits as u16
}

/// An f32's bits widened to f64 exactly, keeping a signaling NaN
/// signaling (the host's conversion may quiet it).
pub(crate) fn f32_to_f64(bits: u32) -> f64 {
    if bits & 0x7f80_0000 == 0x7f80_0000 && bits & 0x007f_ffff != 0 {
        return f64::from_bits(u64::from(bits >> 31) << 63 | 0x7ff0_0000_0000_0000 | u64::from(bits & 0x007f_ffff) << 29);
    }
    f64::from(f32::from_bits(bits))
}

/// `x` rounded to f32 (nearest even); a NaN keeps its payload's top bits.
pub(crate) fn f64_to_f32(x: f64) -> u32 {
    if x.is_nan() {
        let b = x.to_bits();
        return ((b >> 32) as u32 & 0x8000_0000) | 0x7fc0_0000 | ((b >> 29) as u32 & 0x003f_ffff);
    }
    (x as f32).to_bits()
}

fn quiet(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 1 << 51)
}

fn is_snan(x: f64) -> bool {
    x.is_nan() && x.to_bits() & 1 << 51 == 0
}

/// The bits of `x` at `width`.
fn narrow(width: u32, x: f64) -> u64 {
    match width {
        H => u64::from(f64_to_f16(x, false)),
        S => u64::from(f64_to_f32(x)),
        _ => x.to_bits(),
    }
}

/// The value of `bits` at `width` (0 f16, 1 f32, 2 f64), exactly.
pub(crate) fn widen(width: u32, bits: u64) -> f64 {
    match width {
        H => f16_to_f64(bits as u16),
        S => f32_to_f64(bits as u32),
        _ => f64::from_bits(bits),
    }
}

/// The biased exponent field of `x` at `width`.
fn exponent(width: u32, x: f64) -> i32 {
    let b = narrow(width, x);
    match width {
        H => (b >> 10 & 0x1f) as i32,
        S => (b >> 23 & 0xff) as i32,
        _ => (b >> 52 & 0x7ff) as i32,
    }
}

fn is_denorm(width: u32, x: f64) -> bool {
    x != 0.0 && x.is_finite() && exponent(width, x) == 0
}

/// A 16-bit source: a true16 half (`v1.h`) as printed; a whole VGPR's
/// high half when `hi` (its `op_sel` bit).
pub(crate) fn read16(w: &Wave, o: &Operand, lane: usize, hi: bool) -> u16 {
    match o.kind {
        Kind::Vector { half: Half::Full, .. } | Kind::Acc { .. } if hi => (w.vread(o, lane) >> 16) as u16,
        _ => w.vread16(o, lane),
    }
}

/// A float source's bits at `width` (`op_sel` bit `hi` for f16), its
/// `abs`/`neg` applied. A 32-bit literal of an f64 source is the high half.
pub(crate) fn read_bits(w: &Wave, o: &Operand, lane: usize, width: u32, hi: bool) -> u64 {
    let (bits, sign) = match width {
        H => (u64::from(read16(w, o, lane, hi)), 1u64 << 15),
        S => (u64::from(w.vread(o, lane)), 1 << 31),
        _ => match o.kind {
            Kind::Literal(v) => (u64::from(v) << 32, 1 << 63),
            _ => (w.vread64(o, lane), 1 << 63),
        },
    };
    let bits = if o.abs { bits & !sign } else { bits };
    if o.neg { bits ^ sign } else { bits }
}

/// A float source's value (see [`read_bits`]).
pub(crate) fn read(w: &Wave, o: &Operand, lane: usize, width: u32, hi: bool) -> f64 {
    widen(width, read_bits(w, o, lane, width, hi))
}

/// Writes `bits` at `width` to a vector destination. A 16-bit result goes
/// to the printed half, else to the low half with the high half zeroed (or
/// to the high half, the low kept, with `op_sel` bit 3).
pub(crate) fn write(w: &mut Wave, i: &Inst, o: &Operand, lane: usize, width: u32, bits: u64) {
    match width {
        H => match o.kind {
            Kind::Vector { half: Half::Full, .. } | Kind::Acc { .. } if i.mods.op_sel & 8 != 0 => {
                let old = w.vread(o, lane);
                w.vwrite(o, lane, (old & 0xffff) | (bits as u32) << 16);
            }
            _ => w.vwrite(o, lane, bits as u32 & 0xffff),
        },
        S => w.vwrite(o, lane, bits as u32),
        _ => w.vwrite64(o, lane, bits),
    }
}

/// The output modifiers: `mul:2`, `mul:4`, `div:2`, then `clamp` to
/// [0, 1] (a NaN clamps to 0).
fn out_mods(i: &Inst, x: f64) -> f64 {
    let x = match i.mods.omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if i.mods.clamp {
        if x > 1.0 {
            1.0
        } else if x > 0.0 {
            x
        } else {
            0.0
        }
    } else {
        x
    }
}

/// The largest value below 1.0 at `width` (what `v_fract` never exceeds).
fn below_one(width: u32) -> f64 {
    match width {
        H => f16_to_f64(0x3bff),
        S => f64::from(f32::from_bits(0x3f7f_ffff)),
        _ => f64::from_bits(0x3fef_ffff_ffff_ffff),
    }
}

// ------------------------------------------------------------ arithmetic

/// `a * b + c` rounded to f64 by round-to-odd, so that a second rounding to
/// a format of at most 51 bits is the correctly rounded fma. Exact for
/// products of f32 or f16 values (at most 48 significant bits).
fn fma_odd(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() || s == 0.0 {
        return s;
    }
    // Two-sum: the exact error of `p + c`.
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    if err == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    let away = (err > 0.0) == (s > 0.0);
    f64::from_bits(if away { s.to_bits() + 1 } else { s.to_bits() - 1 })
}

/// The fused `a * b + c` at `width`, before its rounding to `width`.
fn fma_at(width: u32, a: f64, b: f64, c: f64) -> f64 {
    if width == D { a.mul_add(b, c) } else { fma_odd(a, b, c) }
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The sign (-1, 0, 1) of the exact sum of `terms`, by an error-free
/// expansion (Shewchuk's grow-expansion): its largest nonzero component
/// has the sum's sign.
fn exact_sign(terms: &[f64]) -> i32 {
    let mut e: Vec<f64> = Vec::with_capacity(terms.len());
    for &t in terms {
        let mut q = t;
        let mut h = Vec::with_capacity(e.len() + 1);
        for &x in &e {
            let (s, err) = two_sum(q, x);
            h.push(err);
            q = s;
        }
        h.push(q);
        e = h;
    }
    e.iter().rev().find(|x| **x != 0.0).map_or(0, |x| if *x > 0.0 { 1 } else { -1 })
}

/// `(a * b + c) * 2^k` for f64 rounded once, also when the result is
/// denormal (the fma's own rounding could otherwise land on a midpoint of
/// the coarser denormal grid and round twice).
fn fma_scaled_f64(a: f64, b: f64, c: f64, k: i32) -> f64 {
    let r0 = a.mul_add(b, c);
    let res = ldexp_at(D, r0, k);
    if !r0.is_finite() || res.abs() >= f64::MIN_POSITIVE {
        return res;
    }
    // The denormal grid's spacing at r0's scale; r0 is on it or halfway.
    let u = 2f64.powi(-1074 - k);
    let back = ldexp_at(D, res, -k);
    if (r0 - back).abs() != u / 2.0 {
        return res;
    }
    // A tie: the exact value's side of r0 decides. a*b = p + pe and
    // p + c = s + e1 exactly, so a*b + c - r0 = s - r0 + e1 + pe.
    let p = a * b;
    let pe = a.mul_add(b, -p);
    let (s, e1) = two_sum(p, c);
    match exact_sign(&[s, -r0, e1, pe]) {
        0 => res,
        sign => ldexp_at(D, r0 + f64::from(sign) * u / 2.0, k),
    }
}

/// `x * 2^n` at `width`, rounded once (denormal results included).
fn ldexp_at(width: u32, x: f64, n: i32) -> f64 {
    if width != D {
        // Exact in f64 for f32/f16 values with any useful `n`.
        return x * 2f64.powi(n.clamp(-400, 400));
    }
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    // x = m * 2^e with 1 <= |m| < 2.
    let (m, e) = frexp(x);
    let (m, e) = (m * 2.0, e - 1);
    let t = i64::from(e) + i64::from(n);
    if t > 1023 {
        return m.signum() * f64::INFINITY;
    }
    if t >= -1022 {
        return m * f64::from_bits(((t + 1023) as u64) << 52);
    }
    if t >= -1074 {
        // A denormal power of two: the one multiplication rounds once.
        return m * f64::from_bits(1u64 << (t + 1074));
    }
    if t == -1075 && m.abs() > 1.0 {
        // Above half the smallest denormal: rounds up to it.
        return m.signum() * f64::from_bits(1);
    }
    m.signum() * 0.0
}

/// `(mantissa, exponent)` with `x = mantissa * 2^exponent`,
/// 0.5 <= |mantissa| < 1 (denormals normalized); zero, inf and NaN as is.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, adj) = if x.abs() < f64::MIN_POSITIVE { (x * 2f64.powi(64), -64) } else { (x, 0) };
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32;
    let m = f64::from_bits((b & !(0x7ff << 52)) | (1022 << 52));
    (m, e - 1022 + adj)
}

/// IEEE-mode `v_min`/`v_max`: a signaling NaN comes out quieted, a quiet
/// NaN loses to the other operand, and -0 < +0.
pub(crate) fn minmax(a: f64, b: f64, max: bool) -> f64 {
    if is_snan(a) {
        return quiet(a);
    }
    if is_snan(b) {
        return quiet(b);
    }
    if b.is_nan() {
        return a;
    }
    if a.is_nan() {
        return b;
    }
    let a_first = if a == b { a.is_sign_negative() != max } else { (a < b) != max };
    if a_first { a } else { b }
}

fn med3(a: f64, b: f64, c: f64) -> f64 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return minmax(minmax(a, b, false), c, false);
    }
    let hi = minmax(minmax(a, b, true), c, true);
    if hi == a {
        minmax(b, c, true)
    } else if hi == b {
        minmax(a, c, true)
    } else {
        minmax(a, b, true)
    }
}

/// `v_div_fixup`: the special cases of `num / den` (S2 / S1) around the
/// quotient `q` (S0) the division sequence computed.
fn div_fixup(width: u32, q: f64, den: f64, num: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let signed = |x: f64| if neg { -x } else { x };
    if num.is_nan() {
        return quiet(num);
    }
    if den.is_nan() {
        return quiet(den);
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        // The ISA's default NaN here has the sign bit set.
        return -f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        return signed(f64::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return signed(0.0);
    }
    let min_diff = match width {
        H => -25,
        S => -150,
        _ => -1075,
    };
    if width != H && exponent(width, num) - exponent(width, den) < min_diff {
        return signed(0.0);
    }
    if q.is_nan() {
        // Only an overflow in the scaled sequence leaves a NaN here.
        return signed(f64::INFINITY);
    }
    signed(q.abs())
}

/// Per-width constants of the division scaling: (exponent difference that
/// counts as an overflow risk, scale exponent, "tiny numerator" exponent,
/// smallest normal).
fn scale_params(width: u32) -> (i32, i32, i32, f64) {
    if width == D { (768, 128, 53, f64::MIN_POSITIVE) } else { (96, 64, 23, f64::from(f32::MIN_POSITIVE)) }
}

/// `v_div_scale`: S0 scaled (or not) so the reciprocal iteration of
/// `num / den` (S2 / S1) stays in range, and whether the quotient was
/// scaled (`v_div_fmas` undoes that). Follows the ISA's cases; where the
/// quotient keeps its value (both operands scaled alike) the flag stays 0.
fn div_scale_one(width: u32, s0: f64, den: f64, num: f64) -> (f64, bool) {
    let (big, k, tiny, min_normal) = scale_params(width);
    if num == 0.0 || den == 0.0 || !num.is_finite() || !den.is_finite() {
        // v_div_fixup handles these from the operands themselves.
        return (f64::NAN, false);
    }
    let (en, ed) = (exponent(width, num), exponent(width, den));
    if en - ed >= big {
        // The quotient is near overflow: the denominator goes up 2^k, so the
        // iteration works on a quotient 2^k smaller.
        return (if s0 == den { ldexp_at(width, s0, k) } else { s0 }, true);
    }
    if is_denorm(width, den) {
        // Both operands: the quotient keeps its value, 1/den is in range.
        return (ldexp_at(width, s0, k), false);
    }
    if (num / den).abs() < 4.0 * min_normal {
        // The quotient would be (nearly) denormal: scale the numerator, so
        // that the iteration works on a normal quotient 2^k larger.
        return (if s0 == num { ldexp_at(width, s0, k) } else { s0 }, true);
    }
    if exponent(width, 1.0 / den) == 0 {
        // 1/den would be denormal: both down, the quotient unchanged.
        return (ldexp_at(width, s0, -k), false);
    }
    if en <= tiny {
        // A tiny numerator: both up, the quotient unchanged.
        return (ldexp_at(width, s0, k), false);
    }
    (s0, false)
}

fn div_scale(w: &mut Wave, i: &Inst) -> Result {
    let width = i.aux;
    let (dst, sdst) = (&i.ops[0], &i.ops[1]);
    let mut mask = 0u64;
    for lane in w.active() {
        let s0 = read(w, &i.ops[2], lane, width, false);
        let s1 = read(w, &i.ops[3], lane, width, false);
        let s2 = read(w, &i.ops[4], lane, width, false);
        let (r, flag) = div_scale_one(width, s0, s1, s2);
        mask |= u64::from(flag) << lane;
        write(w, i, dst, lane, width, narrow(width, r));
    }
    w.mask_write(sdst, mask);
    Ok(())
}

/// Whether `op` settles NaN results itself (others: the first NaN source,
/// quieted, else the default NaN).
fn nan_exact(op: u32) -> bool {
    matches!(op, MIN | MAX | MIN3 | MAX3 | MED3 | DIV_FIXUP)
}

/// One lane of a `vop`: the result before rounding to `width`.
fn eval(width: u32, op: u32, s: [f64; 3], n: i32, vcc: bool) -> f64 {
    let [a, b, c] = s;
    match op {
        ADD => a + b,
        SUB => a - b,
        SUBREV => b - a,
        MUL => a * b,
        MUL_LEGACY => {
            if a == 0.0 || b == 0.0 {
                0.0
            } else {
                a * b
            }
        }
        MIN => minmax(a, b, false),
        MAX => minmax(a, b, true),
        MIN3 => minmax(minmax(a, b, false), c, false),
        MAX3 => minmax(minmax(a, b, true), c, true),
        MED3 => med3(a, b, c),
        FMA | FMAC => fma_at(width, a, b, c),
        FMA_LEGACY | FMAC_LEGACY => {
            if a == 0.0 || b == 0.0 {
                c + 0.0
            } else {
                fma_at(width, a, b, c)
            }
        }
        MAD | MAC => {
            // Unfused: the product rounds first. f32 flushes denormals.
            let flush = |x: f64| if width == S && is_denorm(S, x) { 0.0 * x.signum() } else { x };
            let p = widen(width, narrow(width, flush(a) * flush(b)));
            flush(widen(width, narrow(width, flush(p) + flush(c))))
        }
        LDEXP => ldexp_at(width, a, n),
        RCP => 1.0 / a,
        RSQ => 1.0 / a.sqrt(),
        SQRT => a.sqrt(),
        EXP => a.exp2(),
        LOG => a.log2(),
        // The argument is in revolutions; its fraction is exact.
        SIN => (a.fract() * std::f64::consts::TAU).sin(),
        COS => (a.fract() * std::f64::consts::TAU).cos(),
        FLOOR => a.floor(),
        CEIL => a.ceil(),
        TRUNC => a.trunc(),
        RNDNE => a.round_ties_even(),
        FRACT => {
            if a.is_infinite() {
                f64::NAN
            } else {
                a - a.floor()
            }
        }
        FREXP_MANT => frexp(a).0,
        DIV_FMAS => {
            if vcc {
                // The quotient (S2) was scaled by 2^-k if large, 2^k if small.
                let k = scale_params(width).1;
                let big = exponent(width, c) > if width == D { 1023 } else { 127 };
                let k = if big { k } else { -k };
                if width == D {
                    fma_scaled_f64(a, b, c, k)
                } else {
                    // Round-to-odd, scaled exactly: one rounding in `narrow`.
                    ldexp_at(D, fma_odd(a, b, c), k)
                }
            } else {
                fma_at(width, a, b, c)
            }
        }
        DIV_FIXUP => div_fixup(width, a, b, c),
        _ => f64::NAN,
    }
}

/// Every VOP1/VOP2/VOP3 float operation of one width: `dst, src0, src1, src2`.
fn vop(w: &mut Wave, i: &Inst) -> Result {
    let (width, op) = (i.aux >> 8, i.aux & 0xff);
    let dst = &i.ops[0];
    let srcs = &i.ops[1..];
    let nsrc = srcs.len().min(3);
    let acc = matches!(op, FMAC | FMAC_LEGACY | MAC);
    let vcc = w.vcc();
    let sel = i.mods.op_sel;
    for lane in w.active() {
        let mut s = [0.0f64; 3];
        let mut n = 0;
        for (k, o) in srcs[..nsrc].iter().enumerate() {
            if op == LDEXP && k == 1 {
                // The exponent is an integer (i16 for f16).
                let v = w.vread(o, lane);
                n = if width == H { i32::from(v as u16 as i16) } else { v as i32 };
            } else {
                s[k] = read(w, o, lane, width, sel >> k & 1 != 0);
            }
        }
        if acc {
            s[2] = read(w, &Operand::new(dst.kind), lane, width, sel & 8 != 0);
        }
        let mut r = eval(width, op, s, n, vcc >> lane & 1 != 0);
        if r.is_nan() && !nan_exact(op) {
            let used = if op == LDEXP { 1 } else { nsrc.max(if acc { 3 } else { 0 }) };
            r = s[..used].iter().copied().find(|x| x.is_nan()).map_or(f64::NAN, quiet);
        }
        let mut bits = narrow(width, out_mods(i, r));
        if op == FRACT && widen(width, bits) >= 1.0 {
            bits = narrow(width, below_one(width));
        }
        write(w, i, dst, lane, width, bits);
    }
    Ok(())
}

// ------------------------------------------------------------ conversions

/// A float's value as an integer: truncated, saturated, NaN → 0.
fn to_int(x: f64, signed: bool, bits: u32) -> u32 {
    let (lo, hi) = if signed {
        (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1) - 1.0)
    } else {
        (0.0, 2f64.powi(bits as i32) - 1.0)
    };
    if x.is_nan() {
        return 0;
    }
    x.trunc().clamp(lo, hi) as i64 as u32
}

fn cvt(w: &mut Wave, i: &Inst) -> Result {
    let op = i.aux;
    let (dst, src) = (&i.ops[0], &i.ops[1]);
    let hi = i.mods.op_sel & 1 != 0;
    for lane in w.active() {
        // (width of the result, its bits); a float result gets the output
        // modifiers.
        let fl = |x: f64| out_mods(i, x);
        let (width, bits): (u32, u64) = match op {
            F32_I32 => (S, narrow(S, fl(f64::from(w.vread(src, lane) as i32)))),
            F32_U32 => (S, narrow(S, fl(f64::from(w.vread(src, lane))))),
            I32_F32 => (S, u64::from(to_int(read(w, src, lane, S, false), true, 32))),
            U32_F32 => (S, u64::from(to_int(read(w, src, lane, S, false), false, 32))),
            F64_I32 => (D, narrow(D, fl(f64::from(w.vread(src, lane) as i32)))),
            F64_U32 => (D, narrow(D, fl(f64::from(w.vread(src, lane))))),
            I32_F64 => (S, u64::from(to_int(read(w, src, lane, D, false), true, 32))),
            U32_F64 => (S, u64::from(to_int(read(w, src, lane, D, false), false, 32))),
            F32_F64 => (S, narrow(S, fl(read(w, src, lane, D, false)))),
            F64_F32 => (D, narrow(D, fl(quiet_if_nan(read(w, src, lane, S, false))))),
            F16_F32 => (H, narrow(H, fl(read(w, src, lane, S, false)))),
            F32_F16 => (S, narrow(S, fl(quiet_if_nan(read(w, src, lane, H, hi))))),
            FLR_I32_F32 => (S, u64::from(to_int(read(w, src, lane, S, false).floor(), true, 32))),
            RPI_I32_F32 => {
                // floor(x + 0.5), the addition at f32 as the ISA has it.
                let x = read(w, src, lane, S, false);
                let y = widen(S, narrow(S, x + 0.5));
                (S, u64::from(to_int(y.floor(), true, 32)))
            }
            F16_I16 => (H, narrow(H, fl(f64::from(read16(w, src, lane, hi) as i16)))),
            F16_U16 => (H, narrow(H, fl(f64::from(read16(w, src, lane, hi))))),
            I16_F16 => (H, u64::from(to_int(read(w, src, lane, H, hi), true, 16) & 0xffff)),
            U16_F16 => (H, u64::from(to_int(read(w, src, lane, H, hi), false, 16))),
            I32_F16 => (S, u64::from(to_int(read(w, src, lane, H, hi), true, 32))),
            U32_F16 => (S, u64::from(to_int(read(w, src, lane, H, hi), false, 32))),
            FREXP_EXP_F32 | FREXP_EXP_F64 | FREXP_EXP_F16 => {
                let from = match op {
                    FREXP_EXP_F32 => S,
                    FREXP_EXP_F64 => D,
                    _ => H,
                };
                let e = frexp(read(w, src, lane, from, hi)).1;
                if from == H { (H, u64::from(e as u16)) } else { (S, u64::from(e as u32)) }
            }
            _ => {
                // v_cvt_f32_ubyteN.
                let byte = (w.vread(src, lane) >> (8 * (op - F32_UBYTE0))) & 0xff;
                (S, narrow(S, fl(f64::from(byte))))
            }
        };
        write(w, i, dst, lane, width, bits);
    }
    Ok(())
}

fn quiet_if_nan(x: f64) -> f64 {
    if x.is_nan() { quiet(x) } else { x }
}

/// `v_cvt_pk_rtz_f16_f32`: two f32 rounded toward zero into f16 halves.
fn pkrtz(w: &mut Wave, i: &Inst) -> Result {
    for lane in w.active() {
        let a = f64_to_f16(read(w, &i.ops[1], lane, S, false), true);
        let b = f64_to_f16(read(w, &i.ops[2], lane, S, false), true);
        w.vwrite(&i.ops[0], lane, u32::from(a) | u32::from(b) << 16);
    }
    Ok(())
}

// ------------------------------------------------------------ packed

/// Element `hi` (0 low, 1 high) of a packed source: `op_sel` chooses which
/// half feeds the low element, `op_sel_hi` the high one; `neg_lo`/`neg_hi`
/// negate. f32 pairs are two registers; a constant feeds both elements.
fn pk_elem(w: &Wave, i: &Inst, o: &Operand, k: usize, lane: usize, width: u32, hi: bool) -> f64 {
    let sel = if hi { i.mods.op_sel_hi } else { i.mods.op_sel } >> k & 1 != 0;
    let neg = if hi { i.mods.neg_hi } else { i.mods.neg_lo } >> k & 1 != 0;
    let bits = if width == H {
        let v = match o.kind {
            Kind::Float(_) => u32::from(w.vread16(o, lane)),
            _ => w.vread(o, lane),
        };
        u64::from(if sel { v >> 16 } else { v & 0xffff })
    } else {
        match o.kind {
            Kind::Vector { .. } | Kind::Acc { .. } => u64::from(w.vreg(o, usize::from(sel), lane)),
            Kind::Scalar { index, .. } if sel => u64::from(w.s[index as usize + 1]),
            _ => u64::from(w.vread(o, lane)),
        }
    };
    let x = widen(width, bits);
    if neg { -x } else { x }
}

fn packed(w: &mut Wave, i: &Inst) -> Result {
    let (width, op) = (i.aux >> 8, i.aux & 0xff);
    let dst = &i.ops[0];
    let srcs = &i.ops[1..];
    for lane in w.active() {
        let mut out = [0u64; 2];
        for (e, slot) in out.iter_mut().enumerate() {
            let mut s = [0.0f64; 3];
            for (k, o) in srcs.iter().take(3).enumerate() {
                s[k] = pk_elem(w, i, o, k, lane, width, e == 1);
            }
            let mut r = eval(width, op, s, 0, false);
            if r.is_nan() && !nan_exact(op) {
                r = s.iter().copied().find(|x| x.is_nan()).map_or(f64::NAN, quiet);
            }
            *slot = narrow(width, out_mods(i, r));
        }
        if width == H {
            w.vwrite(dst, lane, (out[0] | out[1] << 16) as u32);
        } else {
            w.set_vreg(dst, 0, lane, out[0] as u32);
            w.set_vreg(dst, 1, lane, out[1] as u32);
        }
    }
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

    fn set64(w: &mut Wave, reg: usize, lane: usize, x: f64) {
        w.v[reg][lane] = x.to_bits() as u32;
        w.v[reg + 1][lane] = (x.to_bits() >> 32) as u32;
    }

    fn get64(w: &Wave, reg: usize, lane: usize) -> f64 {
        f64::from_bits(u64::from(w.v[reg][lane]) | u64::from(w.v[reg + 1][lane]) << 32)
    }

    fn run_all(w: &mut Wave, prog: &str) {
        for line in prog.lines().map(str::trim).filter(|l| !l.is_empty()) {
            run(w, line).unwrap();
        }
    }

    /// xorshift64*, for reproducible operands.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn names() {
        assert!(lookup("v_add_f32").is_some());
        assert!(lookup("v_cvt_pkrtz_f16_f32").is_some());
        assert!(lookup("v_pk_fma_f32").is_some());
        assert!(lookup("v_cmp_eq_f32").is_none());
        assert!(lookup("v_add_nc_u32").is_none());
        assert!(lookup("v_add_f32_sdwa").is_none());
        assert!(crate::ops::implemented("v_rcp_iflag_f32_e32"));
        assert!(crate::ops::implemented("v_div_scale_f64"));
    }

    #[test]
    fn basic_f32_with_modifiers_and_exec() {
        let mut w = wave(Arch::Gfx1100);
        for l in 0..32 {
            w.v[1][l] = f(l as f32);
            w.v[2][l] = f(0.5);
        }
        w.set_exec(0x0000_ffff);
        run(&mut w, "v_add_f32_e32 v3, v1, v2").unwrap();
        assert_eq!(w.v[3][5], f(5.5));
        assert_eq!(w.v[3][20], 0, "inactive lane untouched");
        run(&mut w, "v_sub_f32_e32 v3, v2, v1").unwrap();
        assert_eq!(w.v[3][5], f(-4.5));
        run(&mut w, "v_subrev_f32_e32 v3, v2, v1").unwrap();
        assert_eq!(w.v[3][5], f(4.5));
        run(&mut w, "v_mul_f32_e64 v3, -|v1|, 4.0 mul:2").unwrap();
        assert_eq!(w.v[3][3], f(-24.0));
        run(&mut w, "v_add_f32_e64 v3, v1, -1.0 clamp").unwrap();
        assert_eq!((w.v[3][0], w.v[3][1], w.v[3][2]), (f(0.0), f(0.0), f(1.0)));
        run(&mut w, "v_mul_f32_e64 v3, v1, v2 div:2").unwrap();
        assert_eq!(w.v[3][3], f(0.75));
        // Denormals survive.
        w.v[4][0] = 1;
        run(&mut w, "v_add_f32_e32 v3, v4, v4").unwrap();
        assert_eq!(w.v[3][0], 2);
        // Invalid: the positive default NaN; a NaN input propagates quieted.
        w.v[5][0] = f(f32::INFINITY);
        run(&mut w, "v_sub_f32_e32 v3, v5, v5").unwrap();
        assert_eq!(w.v[3][0], 0x7fc0_0000);
        w.v[5][0] = 0xff80_0001; // a negative signaling NaN
        run(&mut w, "v_mul_f32_e32 v3, 1.0, v5").unwrap();
        assert_eq!(w.v[3][0], 0xffc0_0001);
    }

    #[test]
    fn fma_forms() {
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = f(3.0);
        w.v[2][0] = f(5.0);
        w.v[0][0] = f(1.0);
        run(&mut w, "v_fma_f32 v4, -v1, v2, 1.0").unwrap();
        assert_eq!(w.v[4][0], f(-14.0));
        run(&mut w, "v_fmac_f32_e32 v0, v1, v2").unwrap();
        assert_eq!(w.v[0][0], f(16.0));
        run(&mut w, "v_fmamk_f32 v4, v1, 0x40000000, v2").unwrap(); // 3*2+5
        assert_eq!(w.v[4][0], f(11.0));
        run(&mut w, "v_fmaak_f32 v4, v1, v2, 0x40000000").unwrap(); // 3*5+2
        assert_eq!(w.v[4][0], f(17.0));
        // Fused: (1+2^-23)^2 - 1 keeps the 2^-46 term an unfused mad loses.
        w.v[1][0] = f(1.0 + f32::EPSILON);
        run(&mut w, "v_fma_f32 v4, v1, v1, -1.0").unwrap();
        assert_eq!(w.v[4][0], f(2.0 * f32::EPSILON + f32::EPSILON * f32::EPSILON));
        run(&mut w, "v_mad_f32 v4, v1, v1, -1.0").unwrap();
        assert_eq!(w.v[4][0], f(2.0 * f32::EPSILON));
        // gfx9 v_mac: dst += a * b.
        let mut w = wave(Arch::Gfx942);
        w.v[2][63] = f(2.0);
        w.v[3][63] = f(1.5);
        run(&mut w, "v_mac_f32_e32 v2, 0x40800000, v3").unwrap();
        assert_eq!(w.v[2][63], f(8.0));
        // f64 fma with a literal: the high half.
        set64(&mut w, 4, 0, 3.0);
        run(&mut w, "v_fma_f64 v[6:7], v[4:5], 0x40000000, 1.0").unwrap();
        assert_eq!(get64(&w, 6, 0), 7.0);
        // Random f32 fmas against the host's (correctly rounded) fma.
        let mut r = Rng(0x1234_5678);
        for l in 0..64 {
            for reg in 1..4 {
                w.v[reg][l] = (r.next() as u32 & 0x8fff_ffff) | 0x3000_0000;
            }
        }
        run(&mut w, "v_fma_f32 v4, v1, v2, v3").unwrap();
        for l in 0..64 {
            let [a, b, c] = [1, 2, 3].map(|reg| f32::from_bits(w.v[reg][l]));
            assert_eq!(w.v[4][l], a.mul_add(b, c).to_bits(), "lane {l}: {a} * {b} + {c}");
        }
    }

    #[test]
    fn f64_arith() {
        let mut w = wave(Arch::Gfx1100);
        set64(&mut w, 0, 0, 1.5);
        run(&mut w, "v_add_f64 v[4:5], 0xc3300000, v[0:1]").unwrap();
        assert_eq!(get64(&w, 4, 0), 1.5 - 4503599627370496.0);
        run(&mut w, "v_mul_f64 v[4:5], -v[0:1], v[0:1]").unwrap();
        assert_eq!(get64(&w, 4, 0), -2.25);
        run(&mut w, "v_ldexp_f64 v[4:5], v[0:1], 0x3ff").unwrap();
        assert_eq!(get64(&w, 4, 0), 1.5 * 2f64.powi(1023));
        run(&mut w, "v_ldexp_f64 v[4:5], v[0:1], 0xfffffbce").unwrap(); // -1074: 1.5 * 2^-1074
        assert_eq!(get64(&w, 4, 0).to_bits(), 2, "1.5 ulp of the smallest denormal rounds to even");
        run(&mut w, "v_ldexp_f64 v[4:5], v[0:1], 0xfffffbcd").unwrap(); // -1075
        assert_eq!(get64(&w, 4, 0).to_bits(), 1);
        set64(&mut w, 0, 0, -0.0);
        set64(&mut w, 2, 0, 0.0);
        run(&mut w, "v_max_f64 v[4:5], v[0:1], v[2:3]").unwrap();
        assert_eq!(get64(&w, 4, 0).to_bits(), 0);
        run(&mut w, "v_min_f64 v[4:5], v[2:3], v[0:1]").unwrap();
        assert_eq!(get64(&w, 4, 0).to_bits(), 1 << 63);
        set64(&mut w, 0, 0, f64::NAN);
        run(&mut w, "v_min_f64 v[4:5], v[0:1], v[2:3]").unwrap();
        assert_eq!(get64(&w, 4, 0), 0.0, "a quiet NaN loses");
        set64(&mut w, 0, 0, -2.5);
        for (op, want) in [("floor", -3.0), ("ceil", -2.0), ("trunc", -2.0), ("rndne", -2.0), ("fract", 0.5)] {
            run(&mut w, &format!("v_{op}_f64_e32 v[4:5], v[0:1]")).unwrap();
            assert_eq!(get64(&w, 4, 0), want, "{op}");
        }
        set64(&mut w, 0, 0, 6.0);
        run(&mut w, "v_frexp_mant_f64_e32 v[4:5], v[0:1]").unwrap();
        assert_eq!(get64(&w, 4, 0), 0.75);
        run(&mut w, "v_frexp_exp_i32_f64_e32 v4, v[0:1]").unwrap();
        assert_eq!(w.v[4][0], 3);
        run(&mut w, "v_rsq_f64_e32 v[4:5], 4.0").unwrap();
        assert_eq!(get64(&w, 4, 0), 0.5);
        run(&mut w, "v_sqrt_f64_e32 v[4:5], v[0:1]").unwrap();
        assert_eq!(get64(&w, 4, 0), 6f64.sqrt());
    }

    #[test]
    fn min_max_nan_and_zero() {
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = 0x7fc0_0000; // qNaN
        w.v[2][0] = f(2.0);
        w.v[3][0] = 0x7f80_0001; // sNaN
        run(&mut w, "v_max_f32_e32 v4, v1, v2").unwrap();
        assert_eq!(w.v[4][0], f(2.0));
        run(&mut w, "v_min_f32_e32 v4, v2, v1").unwrap();
        assert_eq!(w.v[4][0], f(2.0));
        run(&mut w, "v_max_f32_e32 v4, v2, v3").unwrap();
        assert_eq!(w.v[4][0], 0x7fc0_0001, "a signaling NaN comes out quieted");
        run(&mut w, "v_max_f32_e64 v4, |v2|, -|v2|").unwrap();
        assert_eq!(w.v[4][0], f(2.0));
        run(&mut w, "v_med3_f32 v4, 1.0, 4.0, v2").unwrap();
        assert_eq!(w.v[4][0], f(2.0));
        run(&mut w, "v_min3_f32 v4, 1.0, 4.0, v2").unwrap();
        assert_eq!(w.v[4][0], f(1.0));
        run(&mut w, "v_max3_f32 v4, 1.0, 4.0, v2").unwrap();
        assert_eq!(w.v[4][0], f(4.0));
    }

    #[test]
    fn unary_f32() {
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = f(-2.5);
        w.v[1][1] = f(0.25);
        w.v[1][2] = f(-1e-10);
        run(&mut w, "v_fract_f32_e32 v2, v1").unwrap();
        assert_eq!((w.v[2][0], w.v[2][1], w.v[2][2]), (f(0.5), f(0.25), 0x3f7f_ffff));
        run(&mut w, "v_rndne_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(-2.0));
        run(&mut w, "v_floor_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(-3.0));
        run(&mut w, "v_ceil_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(-2.0));
        run(&mut w, "v_trunc_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(-2.0));
        run(&mut w, "v_rcp_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][1], f(4.0));
        run(&mut w, "v_rcp_iflag_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(-0.4));
        run(&mut w, "v_rsq_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][1], f(2.0));
        run(&mut w, "v_sqrt_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][1], f(0.5));
        assert_eq!(w.v[2][0], 0x7fc0_0000);
        run(&mut w, "v_exp_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], f(2f32.powf(-2.5)));
        run(&mut w, "v_log_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][1], f(-2.0));
        run(&mut w, "v_sin_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][1], f(1.0), "a quarter revolution");
        run(&mut w, "v_cos_f32_e32 v2, v1").unwrap();
        assert!(f32::from_bits(w.v[2][0]) == -1.0);
        run(&mut w, "v_ldexp_f32 v2, v1, -3").unwrap();
        assert_eq!(w.v[2][1], f(0.03125));
        w.v[1][3] = 3; // a denormal: frexp normalizes it
        run(&mut w, "v_frexp_mant_f32_e32 v2, v1").unwrap();
        assert_eq!((w.v[2][0], w.v[2][3]), (f(-0.625), f(0.75)));
        run(&mut w, "v_frexp_exp_i32_f32_e32 v2, v1").unwrap();
        assert_eq!((w.v[2][0], w.v[2][3]), (2, (-147i32) as u32));
    }

    #[test]
    fn conversions() {
        let mut w = wave(Arch::Gfx1100);
        let xs: [f32; 6] = [-1.5, 3e9, 5e9, f32::NAN, -7e9, 2.5];
        for (l, x) in xs.iter().enumerate() {
            w.v[1][l] = f(*x);
        }
        run(&mut w, "v_cvt_u32_f32_e32 v2, v1").unwrap();
        assert_eq!(&w.v[2][..6], &[0, 3_000_000_000, u32::MAX, 0, 0, 2]);
        run(&mut w, "v_cvt_i32_f32_e32 v2, v1").unwrap();
        assert_eq!(&w.v[2][..6], &[-1i32 as u32, i32::MAX as u32, i32::MAX as u32, 0, i32::MIN as u32, 2]);
        run(&mut w, "v_cvt_flr_i32_f32_e32 v2, v1").unwrap();
        assert_eq!(w.v[2][0], -2i32 as u32);
        run(&mut w, "v_cvt_rpi_i32_f32_e32 v2, v1").unwrap();
        assert_eq!((w.v[2][0], w.v[2][5]), (-1i32 as u32, 3));
        w.v[3][0] = 0xffff_ffff;
        run(&mut w, "v_cvt_f32_u32_e32 v4, v3").unwrap();
        assert_eq!(w.v[4][0], f(4294967296.0));
        run(&mut w, "v_cvt_f32_i32_e32 v4, v3").unwrap();
        assert_eq!(w.v[4][0], f(-1.0));
        run(&mut w, "v_cvt_f64_i32_e32 v[4:5], v3").unwrap();
        assert_eq!(get64(&w, 4, 0), -1.0);
        run(&mut w, "v_cvt_f64_u32_e32 v[4:5], v3").unwrap();
        assert_eq!(get64(&w, 4, 0), 4294967295.0);
        run(&mut w, "v_cvt_i32_f64_e32 v6, v[4:5]").unwrap();
        assert_eq!(w.v[6][0], i32::MAX as u32);
        run(&mut w, "v_cvt_u32_f64_e32 v6, v[4:5]").unwrap();
        assert_eq!(w.v[6][0], u32::MAX);
        set64(&mut w, 4, 0, 1.0 + 2f64.powi(-24)); // a tie: to even
        run(&mut w, "v_cvt_f32_f64_e64 v6, -v[4:5]").unwrap();
        assert_eq!(w.v[6][0], f(-1.0));
        run(&mut w, "v_cvt_f64_f32_e32 v[4:5], v1").unwrap();
        assert_eq!(get64(&w, 4, 0), -1.5);
        w.v[3][0] = 0x8040_20ff;
        for (n, want) in [(0, 255.0), (1, 32.0), (2, 64.0), (3, 128.0)] {
            run(&mut w, &format!("v_cvt_f32_ubyte{n}_e32 v4, v3")).unwrap();
            assert_eq!(w.v[4][0], f(want));
        }
    }

    #[test]
    fn half_precision() {
        let mut w = wave(Arch::Gfx1100);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even.
        w.v[1][0] = f(1.0 + 2f32.powi(-11));
        w.v[1][1] = f(65520.0);
        w.v[1][2] = f(2f32.powi(-25) * 1.5); // rounds to the smallest denormal
        w.v[1][3] = f(-0.1);
        w.v[2][0] = 0xdead_beef;
        run(&mut w, "v_cvt_f16_f32_e32 v2.h, v1").unwrap();
        assert_eq!(w.v[2][0], 0x3c00_beef, "the low half kept");
        assert_eq!(w.v[2][1] >> 16, 0x7c00);
        assert_eq!(w.v[2][2] >> 16, 0x0001);
        assert_eq!(w.v[2][3] >> 16, 0xae66);
        run(&mut w, "v_cvt_f32_f16_e32 v3, v2.h").unwrap();
        assert_eq!(w.v[3][2], f(2f32.powi(-24)));
        // Round toward zero: 65520 stays finite.
        run(&mut w, "v_cvt_pk_rtz_f16_f32_e32 v4, v1, v1").unwrap();
        assert_eq!(w.v[4][1], 0x7bff_7bff);
        assert_eq!(w.v[4][3], 0xae66_ae66);
        // true16 arithmetic on halves: 1.5 + 2.0.
        w.v[5][0] = 0x4000_3e00;
        run(&mut w, "v_add_f16_e32 v6.l, v5.l, v5.h").unwrap();
        assert_eq!(w.v[6][0] & 0xffff, 0x4300);
        run(&mut w, "v_mul_f16_e32 v6.h, -1.0, v5.l").unwrap();
        assert_eq!(w.v[6][0] >> 16, 0xbe00);
        run(&mut w, "v_fma_f16 v6.l, v5.l, v5.h, 1.0").unwrap();
        assert_eq!(w.v[6][0] & 0xffff, 0x4400);
        // gfx9 style: whole registers, op_sel picks halves.
        let mut w9 = wave(Arch::Gfx942);
        w9.v[5][0] = 0x4000_3e00;
        w9.v[6][0] = 0xffff_ffff;
        run(&mut w9, "v_add_f16_e64 v6, v5, v5 op_sel:[1,1,0]").unwrap();
        assert_eq!(w9.v[6][0], 0x0000_4400, "the high half zeroed");
        run(&mut w, "v_cvt_i16_f16_e32 v7.l, 0xc500").unwrap(); // -5.0
        assert_eq!(w.v[7][0] & 0xffff, 0xfffb);
        run(&mut w, "v_cvt_f16_u16_e32 v7.l, 0x400").unwrap();
        assert_eq!(w.v[7][0] & 0xffff, 0x6400);
        run(&mut w, "v_max_f16_e32 v7.l, v5.l, v5.h").unwrap();
        assert_eq!(w.v[7][0] & 0xffff, 0x4000);
        run(&mut w, "v_ldexp_f16_e32 v7.l, v5.l, -1").unwrap();
        assert_eq!(w.v[7][0] & 0xffff, 0x3a00);
    }

    #[test]
    fn packed() {
        let mut w = wave(Arch::Gfx90a);
        w.v[0][0] = f(1.0);
        w.v[1][0] = f(2.0);
        w.v[2][0] = f(10.0);
        w.v[3][0] = f(20.0);
        run(&mut w, "v_pk_add_f32 v[4:5], v[0:1], v[2:3]").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (f(11.0), f(22.0)));
        run(&mut w, "v_pk_mul_f32 v[4:5], v[0:1], v[2:3] op_sel:[0,1] op_sel_hi:[1,0]").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (f(20.0), f(20.0)));
        run(&mut w, "v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[0:1] neg_lo:[1,0,0]").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (f(-9.0), f(42.0)));
        w.s[6] = f(3.0);
        w.s[7] = f(4.0);
        run(&mut w, "v_pk_mul_f32 v[4:5], v[0:1], s[6:7]").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (f(3.0), f(8.0)));
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = 0x4000_3c00; // (1.0, 2.0)
        run(&mut w, "v_pk_add_f16 v2, v1, v1").unwrap();
        assert_eq!(w.v[2][0], 0x4400_4000);
        run(&mut w, "v_pk_mul_f16 v2, v1, v1 op_sel_hi:[0,1]").unwrap();
        assert_eq!(w.v[2][0], 0x4000_3c00);
    }

    /// LLVM's f32 division (std-coverage.elf, in `_RN...` near 0x371e0):
    /// v1 / v3.
    const DIV_F32: &str = "
        v_div_scale_f32 v4, null, v3, v3, v1
        v_div_scale_f32 v7, vcc_lo, v1, v3, v1
        v_rcp_f32_e32 v5, v4
        v_fma_f32 v6, -v4, v5, 1.0
        v_fmac_f32_e32 v5, v6, v5
        v_mul_f32_e32 v6, v7, v5
        v_fma_f32 v8, -v4, v6, v7
        v_fmac_f32_e32 v6, v8, v5
        v_fma_f32 v4, -v4, v6, v7
        v_div_fmas_f32 v4, v4, v5, v6
        v_div_fixup_f32 v3, v4, v3, v1";

    /// LLVM's f64 division (as near 0x5fdb0 of std-coverage.elf, with the
    /// numerator in a register): v[0:1] / v[2:3].
    const DIV_F64: &str = "
        v_div_scale_f64 v[8:9], null, v[2:3], v[2:3], v[0:1]
        v_rcp_f64_e32 v[10:11], v[8:9]
        v_fma_f64 v[12:13], -v[8:9], v[10:11], 1.0
        v_fma_f64 v[10:11], v[10:11], v[12:13], v[10:11]
        v_fma_f64 v[12:13], -v[8:9], v[10:11], 1.0
        v_fma_f64 v[10:11], v[10:11], v[12:13], v[10:11]
        v_div_scale_f64 v[12:13], vcc_lo, v[0:1], v[2:3], v[0:1]
        v_mul_f64 v[14:15], v[12:13], v[10:11]
        v_fma_f64 v[8:9], -v[8:9], v[14:15], v[12:13]
        v_div_fmas_f64 v[8:9], v[8:9], v[10:11], v[14:15]
        v_div_fixup_f64 v[8:9], v[8:9], v[2:3], v[0:1]";

    fn f32_cases() -> Vec<(f32, f32)> {
        let mut v = vec![
            (1.0, 3.0),
            (2.0, 3.0),
            (-7.0, 0.1),
            (1.0, 0.0),
            (-1.0, 0.0),
            (0.0, 0.0),
            (0.0, 5.0),
            (f32::INFINITY, 2.0),
            (3.0, f32::INFINITY),
            (f32::INFINITY, f32::INFINITY),
            (f32::NAN, 1.0),
            (f32::MAX, 0.5),
            (f32::MAX, 1.0000001),
            (f32::MAX, f32::from_bits(1)),
            (1e30, 1e-30),
            (f32::from_bits(1), 3.0),
            (f32::from_bits(0x0000_0300), 7.0),
            (f32::from_bits(7), f32::from_bits(3)),
            (1e-20, f32::from_bits(0x0001_0000)),
            (f32::MIN_POSITIVE, 3.0),
            (1e-40, 1e30),
            (-1.0, f32::MAX),
            (3.0, 2e38),
            (1e-38, 1e-3),
            (-1.0, -3.0),
            (5e-39, 5e-39),
        ];
        let mut r = Rng(42);
        while v.len() < 2 * 64 {
            let a = f32::from_bits(r.next() as u32);
            let b = f32::from_bits(r.next() as u32);
            if a.is_finite() && b.is_finite() {
                v.push((a, b));
            }
        }
        v
    }

    #[test]
    fn llvm_f32_division_is_correctly_rounded() {
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let lanes = arch.wave_size() as usize;
            for chunk in f32_cases().chunks(lanes) {
                let mut w = wave(arch);
                for (l, (a, b)) in chunk.iter().enumerate() {
                    w.v[1][l] = f(*a);
                    w.v[3][l] = f(*b);
                }
                let prog = if lanes == 64 { DIV_F32.replace("vcc_lo", "vcc") } else { DIV_F32.into() };
                run_all(&mut w, &prog);
                for (l, (a, b)) in chunk.iter().enumerate() {
                    let (got, want) = (f32::from_bits(w.v[3][l]), a / b);
                    assert!(
                        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                        "{a:e} / {b:e}: {got:e} ({:#x}), want {want:e} ({:#x})",
                        got.to_bits(),
                        want.to_bits()
                    );
                }
            }
        }
        // The brief's check: exactly 1/3.
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = f(1.0);
        w.v[3][0] = f(3.0);
        run_all(&mut w, DIV_F32);
        assert_eq!(w.v[3][0], f(1.0f32 / 3.0));
    }

    #[test]
    fn llvm_f64_division_is_correctly_rounded() {
        let mut cases: Vec<(f64, f64)> = vec![
            (1.0, 3.0),
            (-1.0, 10.0),
            (1.0, 0.0),
            (0.0, 0.0),
            (f64::INFINITY, 3.0),
            (f64::MAX, 0.5),
            (f64::MAX, f64::from_bits(1)),
            (f64::from_bits(1), 3.0),
            (f64::from_bits(12345), 7.0),
            (1e-300, 1e10),
            (1e300, 1e-300),
            (1.0, f64::MAX),
            (1e-310, 1e-310),
            (-2.0, 1e-310),
            (f64::MIN_POSITIVE, 0.75),
        ];
        let mut r = Rng(7);
        while cases.len() < 128 {
            let (a, b) = (f64::from_bits(r.next()), f64::from_bits(r.next()));
            if a.is_finite() && b.is_finite() {
                cases.push((a, b));
            }
        }
        for chunk in cases.chunks(32) {
            let mut w = wave(Arch::Gfx1100);
            for (l, (a, b)) in chunk.iter().enumerate() {
                set64(&mut w, 0, l, *a);
                set64(&mut w, 2, l, *b);
            }
            run_all(&mut w, DIV_F64);
            for (l, (a, b)) in chunk.iter().enumerate() {
                let (got, want) = (get64(&w, 8, l), a / b);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{a:e} / {b:e}: {got:e}, want {want:e}"
                );
            }
        }
        let mut w = wave(Arch::Gfx1100);
        set64(&mut w, 0, 0, 1.0);
        set64(&mut w, 2, 0, 3.0);
        run_all(&mut w, DIV_F64);
        assert_eq!(get64(&w, 8, 0), 1.0 / 3.0);
    }

    /// Many divisions with operands drawn from the extremes of the range.
    #[test]
    fn division_stress() {
        let n = if cfg!(debug_assertions) { 4000 } else { 200_000 };
        let mut r = Rng(99);
        let pick32 = |r: &mut Rng| {
            let x = r.next();
            let e = match x % 4 {
                0 => (x >> 8) % 30,
                1 => 254 - (x >> 8) % 30,
                _ => (x >> 8) % 255,
            } as u32;
            f32::from_bits((x >> 40) as u32 & 0x807f_ffff | e << 23)
        };
        let mut w = wave(Arch::Gfx1100);
        for _ in 0..n / 32 {
            let cases: Vec<(f32, f32)> = (0..32).map(|_| (pick32(&mut r), pick32(&mut r))).collect();
            for (l, (a, b)) in cases.iter().enumerate() {
                w.v[1][l] = f(*a);
                w.v[3][l] = f(*b);
            }
            w.pc = 0x1000;
            run_all(&mut w, DIV_F32);
            for (l, (a, b)) in cases.iter().enumerate() {
                let (got, want) = (f32::from_bits(w.v[3][l]), a / b);
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{a:e} / {b:e}: {got:e}, want {want:e}");
            }
        }
        let pick64 = |r: &mut Rng| {
            let x = r.next();
            let y = r.next();
            let e = match x % 4 {
                0 => (x >> 8) % 60,
                1 => 2046 - (x >> 8) % 60,
                _ => (x >> 8) % 2047,
            };
            f64::from_bits(y & 0x800f_ffff_ffff_ffff | e << 52)
        };
        for _ in 0..n / 32 {
            let cases: Vec<(f64, f64)> = (0..32).map(|_| (pick64(&mut r), pick64(&mut r))).collect();
            for (l, (a, b)) in cases.iter().enumerate() {
                set64(&mut w, 0, l, *a);
                set64(&mut w, 2, l, *b);
            }
            run_all(&mut w, DIV_F64);
            for (l, (a, b)) in cases.iter().enumerate() {
                let (got, want) = (get64(&w, 8, l), a / b);
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{a:e} / {b:e}: {got:e}, want {want:e}");
            }
        }
    }

    #[test]
    fn div_scale_flags() {
        let mut w = wave(Arch::Gfx942);
        w.v[0][0] = f(1.0);
        w.v[1][0] = f(3.0);
        w.v[0][1] = f(1e-40); // a tiny quotient: the numerator scales
        w.v[1][1] = f(3.0);
        w.set_exec(0b11);
        run(&mut w, "v_div_scale_f32 v2, s[4:5], v0, v1, v0").unwrap();
        assert_eq!((w.s[4], w.s[5]), (0b10, 0));
        assert_eq!(w.v[2][0], f(1.0));
        assert_eq!(w.v[2][1], f(1e-40 * 2f32.powi(64)));
        run(&mut w, "v_div_scale_f32 v2, s[4:5], v1, v1, v0").unwrap();
        assert_eq!(w.v[2][1], f(3.0), "the denominator does not");
    }
}
