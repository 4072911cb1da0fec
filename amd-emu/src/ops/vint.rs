//! Vector integer ALU (VOP1/VOP2/VOP3/VOP3SD, and gfx9 SDWA): moves,
//! selects, adds with carries, logic, shifts, bit fields, multiplies,
//! min/max, byte permutes and sums of absolute differences.
//!
//! Most operations are pure functions of up to three lane values, kept in
//! tables ([`OPS32`], [`OPS16`], [`OPS64`]) that one loop each runs; `aux`
//! is the table index. What touches lane masks (carries, `v_cndmask`), the
//! lane number (`v_mbcnt`) or two destinations (`v_swap`, `v_mad_u64_u32`)
//! has its own function.
//!
//! 16-bit operations: on gfx11 (true16) the operands name their half
//! (`v1.l`, `v1.h`) and a write keeps the other half; a full register with
//! `op_sel` selects the high half. On gfx9 the VOP1/VOP2 16-bit operations
//! zero the high half of the destination, while the VOP3-only ones with
//! `op_sel` (`v_mad_u16`, `v_med3_u16`...) keep it (LLVM's
//! `zeroesHigh16BitsOfDest` says the same).

use super::{Exec, canonical, sdwa_select, sdwa_write};
use crate::decode::Inst;
use crate::operand::{Half, Kind, Operand};
use crate::wave::{Result, Wave};

type F32 = fn(u32, u32, u32) -> u32;
type F16 = fn(u16, u16, u16) -> u16;
type F64 = fn(u64, u64, u64) -> u64;

/// `aux` bit marking an [`OPS16`] index (for SDWA, which serves both).
const TABLE16: u32 = 1 << 16;

fn u24(a: u32) -> u64 {
    u64::from(a & 0xff_ffff)
}

fn i24(a: u32) -> i64 {
    i64::from(((a << 8) as i32) >> 8)
}

/// -1 for 0 (no bit found), as `v_clz`/`v_ctz`/`v_cls` return.
fn found(x: u32, n: u32) -> u32 {
    if x == 0 { u32::MAX } else { n }
}

fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.min(b).max(a.max(b).min(c))
}

/// `v_perm_b32`: byte `sel` of `{hi, lo}`, or a constant / sign fill.
fn perm_byte(data: u64, sel: u32) -> u32 {
    let sign = |bit: u32| if data >> bit & 1 != 0 { 0xff } else { 0 };
    match sel {
        13.. => 0xff,
        12 => 0,
        11 => sign(63),
        10 => sign(47),
        9 => sign(31),
        8 => sign(15),
        s => (data >> (s * 8)) as u32 & 0xff,
    }
}

fn perm(a: u32, b: u32, c: u32) -> u32 {
    let data = u64::from(a) << 32 | u64::from(b);
    (0..4).fold(0, |r, k| r | perm_byte(data, c >> (8 * k) & 0xff) << (8 * k))
}

fn sad_u8(a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(c, |acc, k| {
        let (x, y) = (a >> (8 * k) & 0xff, b >> (8 * k) & 0xff);
        acc.wrapping_add(x.abs_diff(y))
    })
}

fn msad_u8(a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(c, |acc, k| {
        let (x, y) = (a >> (8 * k) & 0xff, b >> (8 * k) & 0xff);
        if y == 0 { acc } else { acc.wrapping_add(x.abs_diff(y)) }
    })
}

fn lerp_u8(a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(0, |r, k| {
        let s = (a >> (8 * k) & 0xff) + (b >> (8 * k) & 0xff) + (c >> (8 * k) & 1);
        r | (s >> 1 & 0xff) << (8 * k)
    })
}

fn bfe_i32(a: u32, b: u32, c: u32) -> u32 {
    let w = c & 31;
    if w == 0 {
        return 0;
    }
    let field = (a >> (b & 31)) << (32 - w);
    ((field as i32) >> (32 - w)) as u32
}

/// Name, operation, and its saturating form for `clamp` where it has one.
#[rustfmt::skip]
static OPS32: &[(&str, F32, Option<F32>)] = &[
    ("v_mov_b32", |a, _, _| a, None),
    ("v_not_b32", |a, _, _| !a, None),
    ("v_bfrev_b32", |a, _, _| a.reverse_bits(), None),
    ("v_clz_i32_u32", |a, _, _| found(a, a.leading_zeros()), None),
    ("v_ctz_i32_b32", |a, _, _| found(a, a.trailing_zeros()), None),
    ("v_cls_i32", |a, _, _| { let x = a ^ ((a as i32 >> 31) as u32); found(x, x.leading_zeros()) }, None),
    ("v_bcnt_u32_b32", |a, b, _| a.count_ones().wrapping_add(b), None),
    ("v_prng_b32", |a, _, _| (a << 1) ^ if a >> 31 != 0 { 197 } else { 0 }, None),
    ("v_add_nc_u32", |a, b, _| a.wrapping_add(b), Some(|a, b, _| a.saturating_add(b))),
    ("v_sub_nc_u32", |a, b, _| a.wrapping_sub(b), Some(|a, b, _| a.saturating_sub(b))),
    ("v_subrev_nc_u32", |a, b, _| b.wrapping_sub(a), Some(|a, b, _| b.saturating_sub(a))),
    ("v_add_nc_i32", |a, b, _| a.wrapping_add(b), Some(|a, b, _| (a as i32).saturating_add(b as i32) as u32)),
    ("v_sub_nc_i32", |a, b, _| a.wrapping_sub(b), Some(|a, b, _| (a as i32).saturating_sub(b as i32) as u32)),
    ("v_and_b32", |a, b, _| a & b, None),
    ("v_or_b32", |a, b, _| a | b, None),
    ("v_xor_b32", |a, b, _| a ^ b, None),
    ("v_xnor_b32", |a, b, _| !(a ^ b), None),
    ("v_lshlrev_b32", |a, b, _| b << (a & 31), None),
    ("v_lshrrev_b32", |a, b, _| b >> (a & 31), None),
    ("v_ashrrev_i32", |a, b, _| ((b as i32) >> (a & 31)) as u32, None),
    ("v_and_or_b32", |a, b, c| (a & b) | c, None),
    ("v_or3_b32", |a, b, c| a | b | c, None),
    ("v_xor3_b32", |a, b, c| a ^ b ^ c, None),
    ("v_add3_u32", |a, b, c| a.wrapping_add(b).wrapping_add(c), None),
    ("v_xad_u32", |a, b, c| (a ^ b).wrapping_add(c), None),
    ("v_lshl_add_u32", |a, b, c| (a << (b & 31)).wrapping_add(c), None),
    ("v_add_lshl_u32", |a, b, c| a.wrapping_add(b) << (c & 31), None),
    ("v_lshl_or_b32", |a, b, c| (a << (b & 31)) | c, None),
    ("v_alignbit_b32", |a, b, c| ((u64::from(a) << 32 | u64::from(b)) >> (c & 31)) as u32, None),
    ("v_alignbyte_b32", |a, b, c| ((u64::from(a) << 32 | u64::from(b)) >> ((c & 3) * 8)) as u32, None),
    ("v_bfe_u32", |a, b, c| (a >> (b & 31)) & ((1u32 << (c & 31)) - 1), None),
    ("v_bfe_i32", bfe_i32, None),
    ("v_bfi_b32", |a, b, c| (a & b) | (!a & c), None),
    ("v_bfm_b32", |a, b, _| ((1u32 << (a & 31)) - 1) << (b & 31), None),
    ("v_mul_lo_u32", |a, b, _| a.wrapping_mul(b), None),
    ("v_mul_hi_u32", |a, b, _| ((u64::from(a) * u64::from(b)) >> 32) as u32, None),
    ("v_mul_hi_i32", |a, b, _| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32, None),
    ("v_mul_u32_u24", |a, b, _| (u24(a) * u24(b)) as u32, None),
    ("v_mul_hi_u32_u24", |a, b, _| ((u24(a) * u24(b)) >> 32) as u32, None),
    ("v_mul_i32_i24", |a, b, _| (i24(a) * i24(b)) as u32, None),
    ("v_mul_hi_i32_i24", |a, b, _| ((i24(a) * i24(b)) >> 32) as u32, None),
    ("v_mad_u32_u24", |a, b, c| ((u24(a) * u24(b)) as u32).wrapping_add(c), None),
    ("v_mad_i32_i24", |a, b, c| ((i24(a) * i24(b)) as u32).wrapping_add(c), None),
    ("v_min_u32", |a, b, _| a.min(b), None),
    ("v_max_u32", |a, b, _| a.max(b), None),
    ("v_min_i32", |a, b, _| (a as i32).min(b as i32) as u32, None),
    ("v_max_i32", |a, b, _| (a as i32).max(b as i32) as u32, None),
    ("v_min3_u32", |a, b, c| a.min(b).min(c), None),
    ("v_max3_u32", |a, b, c| a.max(b).max(c), None),
    ("v_med3_u32", med3::<u32>, None),
    ("v_min3_i32", |a, b, c| (a as i32).min(b as i32).min(c as i32) as u32, None),
    ("v_max3_i32", |a, b, c| (a as i32).max(b as i32).max(c as i32) as u32, None),
    ("v_med3_i32", |a, b, c| med3(a as i32, b as i32, c as i32) as u32, None),
    ("v_maxmin_u32", |a, b, c| a.max(b).min(c), None),
    ("v_minmax_u32", |a, b, c| a.min(b).max(c), None),
    ("v_maxmin_i32", |a, b, c| (a as i32).max(b as i32).min(c as i32) as u32, None),
    ("v_minmax_i32", |a, b, c| (a as i32).min(b as i32).max(c as i32) as u32, None),
    ("v_perm_b32", perm, None),
    ("v_sad_u8", sad_u8, None),
    ("v_sad_hi_u8", |a, b, c| (sad_u8(a, b, 0) << 16).wrapping_add(c), None),
    ("v_sad_u16", |a, b, c| c.wrapping_add((a & 0xffff).abs_diff(b & 0xffff)).wrapping_add((a >> 16).abs_diff(b >> 16)), None),
    ("v_sad_u32", |a, b, c| a.abs_diff(b).wrapping_add(c), None),
    ("v_msad_u8", msad_u8, None),
    ("v_lerp_u8", lerp_u8, None),
    ("v_cvt_pk_u16_u32", |a, b, _| a.min(0xffff) | b.min(0xffff) << 16, None),
    ("v_cvt_pk_i16_i32", |a, b, _| {
        let s = |x: u32| (x as i32).clamp(-0x8000, 0x7fff) as u32 & 0xffff;
        s(a) | s(b) << 16
    }, None),
];

/// Name, operation, saturating form, and whether it is a gfx9 VOP3 op with
/// `op_sel` (keeps the destination's other half there).
#[rustfmt::skip]
static OPS16: &[(&str, F16, Option<F16>, bool)] = &[
    ("v_mov_b16", |a, _, _| a, None, false),
    ("v_not_b16", |a, _, _| !a, None, false),
    ("v_add_nc_u16", |a, b, _| a.wrapping_add(b), Some(|a, b, _| a.saturating_add(b)), false),
    ("v_sub_nc_u16", |a, b, _| a.wrapping_sub(b), Some(|a, b, _| a.saturating_sub(b)), false),
    ("v_subrev_nc_u16", |a, b, _| b.wrapping_sub(a), Some(|a, b, _| b.saturating_sub(a)), false),
    ("v_add_nc_i16", |a, b, _| a.wrapping_add(b), Some(|a, b, _| (a as i16).saturating_add(b as i16) as u16), false),
    ("v_sub_nc_i16", |a, b, _| a.wrapping_sub(b), Some(|a, b, _| (a as i16).saturating_sub(b as i16) as u16), false),
    ("v_mul_lo_u16", |a, b, _| a.wrapping_mul(b), None, false),
    ("v_lshlrev_b16", |a, b, _| b << (a & 15), None, false),
    ("v_lshrrev_b16", |a, b, _| b >> (a & 15), None, false),
    ("v_ashrrev_i16", |a, b, _| ((b as i16) >> (a & 15)) as u16, None, false),
    ("v_and_b16", |a, b, _| a & b, None, false),
    ("v_or_b16", |a, b, _| a | b, None, false),
    ("v_xor_b16", |a, b, _| a ^ b, None, false),
    ("v_min_u16", |a, b, _| a.min(b), None, false),
    ("v_max_u16", |a, b, _| a.max(b), None, false),
    ("v_min_i16", |a, b, _| (a as i16).min(b as i16) as u16, None, false),
    ("v_max_i16", |a, b, _| (a as i16).max(b as i16) as u16, None, false),
    ("v_mad_u16", |a, b, c| a.wrapping_mul(b).wrapping_add(c), None, true),
    ("v_mad_i16", |a, b, c| a.wrapping_mul(b).wrapping_add(c), None, true),
    ("v_min3_u16", |a, b, c| a.min(b).min(c), None, true),
    ("v_max3_u16", |a, b, c| a.max(b).max(c), None, true),
    ("v_med3_u16", med3::<u16>, None, true),
    ("v_min3_i16", |a, b, c| (a as i16).min(b as i16).min(c as i16) as u16, None, true),
    ("v_max3_i16", |a, b, c| (a as i16).max(b as i16).max(c as i16) as u16, None, true),
    ("v_med3_i16", |a, b, c| med3(a as i16, b as i16, c as i16) as u16, None, true),
];

/// Name, operation, and which sources (bit n: source n) are 64-bit.
#[rustfmt::skip]
static OPS64: &[(&str, F64, u8)] = &[
    ("v_mov_b64", |a, _, _| a, 0b001),
    ("v_lshlrev_b64", |a, b, _| b << (a & 63), 0b010),
    ("v_lshrrev_b64", |a, b, _| b >> (a & 63), 0b010),
    ("v_ashrrev_i64", |a, b, _| ((b as i64) >> (a & 63)) as u64, 0b010),
    // gfx940: the shift is S1[2:0].
    ("v_lshl_add_u64", |a, b, c| (a << (b & 7)).wrapping_add(c), 0b101),
];

/// gfx9 names that `canonical` leaves as they are.
fn alias(name: &str) -> &str {
    match name {
        "v_add_i16" => "v_add_nc_i16",
        "v_sub_i16" => "v_sub_nc_i16",
        _ => name,
    }
}

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    if name == "v_cndmask_b32_sdwa" {
        return Some((cndmask_sdwa, 0));
    }
    if let Some(base) = name.strip_suffix("_sdwa") {
        let base = canonical(base);
        let base = alias(&base);
        if let Some(n) = OPS32.iter().position(|o| o.0 == base) {
            return Some((sdwa, n as u32));
        }
        return OPS16.iter().position(|o| o.0 == base).map(|n| (sdwa as Exec, n as u32 | TABLE16));
    }
    let name = alias(name);
    let special: Option<(Exec, u32)> = match name {
        "v_mov_b32" => Some((mov32, 0)),
        "v_cndmask_b32" => Some((cndmask32, 0)),
        "v_cndmask_b16" => Some((cndmask16, 0)),
        "v_swap_b32" => Some((swap32, 0)),
        "v_swap_b16" => Some((swap16, 0)),
        "v_add_co_u32" => Some((carry, ADD)),
        "v_sub_co_u32" => Some((carry, SUB)),
        "v_subrev_co_u32" => Some((carry, SUBREV)),
        "v_add_co_ci_u32" => Some((carry, ADD | CARRY_IN)),
        "v_sub_co_ci_u32" => Some((carry, SUB | CARRY_IN)),
        "v_subrev_co_ci_u32" => Some((carry, SUBREV | CARRY_IN)),
        "v_mad_u64_u32" => Some((mad64, 0)),
        "v_mad_i64_i32" => Some((mad64, 1)),
        "v_mad_u32_u16" => Some((mad32_16, 0)),
        "v_mad_i32_i16" => Some((mad32_16, 1)),
        "v_mbcnt_lo_u32_b32" => Some((mbcnt, 0)),
        "v_mbcnt_hi_u32_b32" => Some((mbcnt, 1)),
        "v_pk_mov_b32" => Some((pk_mov, 0)),
        "v_movrels_b32" => Some((movrel, 1)),
        "v_movreld_b32" => Some((movrel, 2)),
        "v_movrelsd_b32" => Some((movrel, 3)),
        _ => None,
    };
    if special.is_some() {
        return special;
    }
    if let Some(n) = OPS32.iter().position(|o| o.0 == name) {
        return Some((alu32, n as u32));
    }
    if let Some(n) = OPS16.iter().position(|o| o.0 == name) {
        return Some((alu16, n as u32));
    }
    OPS64.iter().position(|o| o.0 == name).map(|n| (alu64 as Exec, n as u32))
}

// ------------------------------------------------------------ helpers

const OFF: Operand = Operand { kind: Kind::Off, neg: false, abs: false, sext: false };

/// Operand `n`, or `off` (reads 0) where the instruction has fewer.
#[inline]
fn op(i: &Inst, n: usize) -> Operand {
    i.ops.get(n).copied().unwrap_or(OFF)
}

/// `abs`/`neg` on a 32-bit value's sign bit (float operands of
/// `v_cndmask` and moves in VOP3 form).
#[inline]
fn sign_mods(v: u32, o: &Operand, sign: u32) -> u32 {
    let v = if o.abs { v & !sign } else { v };
    if o.neg { v ^ sign } else { v }
}

/// A 16-bit source, `n` the source number for `op_sel`.
#[inline]
fn read16(w: &Wave, i: &Inst, o: &Operand, n: u32, lane: usize) -> u16 {
    match o.kind {
        Kind::Vector { half: Half::Full, .. } | Kind::Acc { .. } | Kind::Scalar { .. } => {
            let v = w.vread(o, lane);
            if i.mods.op_sel >> n & 1 != 0 { (v >> 16) as u16 } else { v as u16 }
        }
        _ => w.vread16(o, lane),
    }
}

/// Writes a 16-bit result to `ops[0]` (see the module's note on halves).
/// LLVM prints `op_sel` with one entry per source and the destination's
/// last: `dst_bit` is its position.
#[inline]
fn write16(w: &mut Wave, i: &Inst, lane: usize, v: u16, zero_high: bool, dst_bit: usize) {
    let d = &i.ops[0];
    match d.kind {
        Kind::Vector { half: Half::Full, .. } | Kind::Acc { .. } => {
            let old = w.vread(d, lane);
            let new = if i.mods.op_sel >> dst_bit & 1 != 0 {
                (old & 0xffff) | u32::from(v) << 16
            } else if zero_high {
                u32::from(v)
            } else {
                (old & 0xffff_0000) | u32::from(v)
            };
            w.vwrite(d, lane, new);
        }
        _ => w.vwrite(d, lane, u32::from(v)),
    }
}

// ------------------------------------------------------------ table ops

fn alu32(w: &mut Wave, i: &Inst) -> Result {
    let (_, f, sat) = OPS32[i.aux as usize];
    let f = if i.mods.clamp { sat.unwrap_or(f) } else { f };
    let (d, a, b, c) = (i.ops[0], op(i, 1), op(i, 2), op(i, 3));
    for l in w.active() {
        let r = f(w.vread(&a, l), w.vread(&b, l), w.vread(&c, l));
        w.vwrite(&d, l, r);
    }
    Ok(())
}

fn alu16(w: &mut Wave, i: &Inst) -> Result {
    let (_, f, sat, opsel) = OPS16[i.aux as usize];
    let f = if i.mods.clamp { sat.unwrap_or(f) } else { f };
    // gfx9: VOP1/VOP2 16-bit results zero the high half; so does
    // v_mad_legacy_u16 without op_sel[3].
    let zero_high = !w.arch.is_rdna() && (!opsel || i.mnemonic.contains("legacy"));
    let (a, b, c) = (op(i, 1), op(i, 2), op(i, 3));
    let dst_bit = i.ops.len() - 1;
    for l in w.active() {
        let r = f(read16(w, i, &a, 0, l), read16(w, i, &b, 1, l), read16(w, i, &c, 2, l));
        write16(w, i, l, r, zero_high, dst_bit);
    }
    Ok(())
}

fn alu64(w: &mut Wave, i: &Inst) -> Result {
    let (_, f, wide) = OPS64[i.aux as usize];
    let (d, srcs) = (i.ops[0], [op(i, 1), op(i, 2), op(i, 3)]);
    let read = |w: &Wave, n: usize, l| {
        if wide >> n & 1 != 0 { w.vread64(&srcs[n], l) } else { u64::from(w.vread(&srcs[n], l)) }
    };
    for l in w.active() {
        let r = f(read(w, 0, l), read(w, 1, l), read(w, 2, l));
        w.vwrite64(&d, l, r);
    }
    Ok(())
}

/// gfx9 `v_cndmask_b32_sdwa d, a, b, vcc`: the selected `b` where the
/// lane's VCC bit is set, else the selected `a`, placed per `dst_sel`.
fn cndmask_sdwa(w: &mut Wave, i: &Inst) -> Result {
    let (d, a, b) = (i.ops[0], op(i, 1), op(i, 2));
    let mask = i.ops.get(3).map_or_else(|| w.vcc(), |m| w.mask_read(m));
    let m = &i.mods;
    let (sel0, sel1, dsel, unused) = (m.get("src0_sel"), m.get("src1_sel"), m.get("dst_sel"), m.get("dst_unused"));
    for l in w.active() {
        let x = sdwa_select(w.vread(&a, l), sel0, a.sext);
        let y = sdwa_select(w.vread(&b, l), sel1, b.sext);
        let r = if mask >> l & 1 != 0 { y } else { x };
        let old = w.vread(&d, l);
        w.vwrite(&d, l, sdwa_write(old, r, dsel, unused));
    }
    Ok(())
}

/// gfx9 SDWA: sources selected (and sign-extended) per `src0_sel`/
/// `src1_sel`, the result placed per `dst_sel`/`dst_unused`.
fn sdwa(w: &mut Wave, i: &Inst) -> Result {
    let (f32_op, f16_op) = if i.aux & TABLE16 != 0 {
        (None, Some(OPS16[(i.aux & 0xffff) as usize].1))
    } else {
        (Some(OPS32[i.aux as usize].1), None)
    };
    let (d, a, b) = (i.ops[0], op(i, 1), op(i, 2));
    let m = &i.mods;
    let (sel0, sel1, dsel, unused) = (m.get("src0_sel"), m.get("src1_sel"), m.get("dst_sel"), m.get("dst_unused"));
    for l in w.active() {
        let x = sdwa_select(w.vread(&a, l), sel0, a.sext);
        let y = sdwa_select(w.vread(&b, l), sel1, b.sext);
        let r = match (f32_op, f16_op) {
            (Some(f), _) => f(x, y, 0),
            (_, Some(f)) => u32::from(f(x as u16, y as u16, 0)),
            _ => unreachable!(),
        };
        let old = w.vread(&d, l);
        w.vwrite(&d, l, sdwa_write(old, r, dsel, unused));
    }
    Ok(())
}

// ------------------------------------------------------------ specials

/// `v_mov_b32` (the most frequent instruction: a loop of its own).
fn mov32(w: &mut Wave, i: &Inst) -> Result {
    let (d, s) = (i.ops[0], i.ops[1]);
    if s.abs || s.neg {
        for l in w.active() {
            let v = sign_mods(w.vread(&s, l), &s, 1 << 31);
            w.vwrite(&d, l, v);
        }
    } else {
        for l in w.active() {
            let v = w.vread(&s, l);
            w.vwrite(&d, l, v);
        }
    }
    Ok(())
}

/// `v_cndmask_b32 d, s0, s1, mask`: s1 where the mask's bit is set. The
/// VOPD form has no mask operand: it is VCC.
fn cndmask32(w: &mut Wave, i: &Inst) -> Result {
    let (d, a, b) = (i.ops[0], i.ops[1], i.ops[2]);
    let mask = if i.ops.len() > 3 { w.mask_read(&i.ops[3]) } else { w.vcc() };
    for l in w.active() {
        let v = if mask >> l & 1 != 0 { sign_mods(w.vread(&b, l), &b, 1 << 31) } else { sign_mods(w.vread(&a, l), &a, 1 << 31) };
        w.vwrite(&d, l, v);
    }
    Ok(())
}

fn cndmask16(w: &mut Wave, i: &Inst) -> Result {
    let (a, b) = (i.ops[1], i.ops[2]);
    let mask = if i.ops.len() > 3 { w.mask_read(&i.ops[3]) } else { w.vcc() };
    let zero_high = !w.arch.is_rdna();
    for l in w.active() {
        let v = if mask >> l & 1 != 0 {
            sign_mods(u32::from(read16(w, i, &b, 1, l)), &b, 1 << 15)
        } else {
            sign_mods(u32::from(read16(w, i, &a, 0, l)), &a, 1 << 15)
        };
        write16(w, i, l, v as u16, zero_high, 3);
    }
    Ok(())
}

fn swap32(w: &mut Wave, i: &Inst) -> Result {
    let (x, y) = (i.ops[0], i.ops[1]);
    for l in w.active() {
        let (a, b) = (w.vread(&x, l), w.vread(&y, l));
        w.vwrite(&x, l, b);
        w.vwrite(&y, l, a);
    }
    Ok(())
}

/// gfx11 `v_swap_b16 v1.l, v2.h`: the halves named (vread/vwrite keep
/// the other halves).
fn swap16(w: &mut Wave, i: &Inst) -> Result {
    let (x, y) = (i.ops[0], i.ops[1]);
    for l in w.active() {
        let (a, b) = (w.vread(&x, l) & 0xffff, w.vread(&y, l) & 0xffff);
        w.vwrite(&x, l, b);
        w.vwrite(&y, l, a);
    }
    Ok(())
}

const ADD: u32 = 0;
const SUB: u32 = 1;
const SUBREV: u32 = 2;
const CARRY_IN: u32 = 4;

/// `v_add_co_u32 d, sdst, s0, s1` and the `_ci` forms with a carry-in
/// mask as the last operand: the carry (borrow) out of each active lane
/// goes to SDST, whose inactive lanes' bits are 0.
fn carry(w: &mut Wave, i: &Inst) -> Result {
    let (d, sd, a, b) = (i.ops[0], i.ops[1], i.ops[2], i.ops[3]);
    let cin = if i.aux & CARRY_IN != 0 { w.mask_read(&i.ops[4]) } else { 0 };
    let kind = i.aux & 3;
    let clamp = i.mods.clamp;
    let mut out = 0u64;
    for l in w.active() {
        let (x, y, c) = (u64::from(w.vread(&a, l)), u64::from(w.vread(&b, l)), cin >> l & 1);
        let (r, co) = match kind {
            ADD => {
                let s = x + y + c;
                (s as u32, s >> 32 != 0)
            }
            SUB => (x.wrapping_sub(y).wrapping_sub(c) as u32, y + c > x),
            _ => (y.wrapping_sub(x).wrapping_sub(c) as u32, x + c > y),
        };
        // Clamp saturates to the bound crossed.
        let r = match (clamp && co, kind) {
            (true, ADD) => u32::MAX,
            (true, _) => 0,
            _ => r,
        };
        w.vwrite(&d, l, r);
        out |= u64::from(co) << l;
    }
    w.mask_write(&sd, out);
    Ok(())
}

/// `v_mad_u64_u32 d[2], sdst, s0, s1, s2[64]` (aux 1: signed): bit 64 of
/// the 65-bit result goes to SDST.
fn mad64(w: &mut Wave, i: &Inst) -> Result {
    let (d, sd, a, b, c) = (i.ops[0], i.ops[1], i.ops[2], i.ops[3], i.ops[4]);
    let signed = i.aux == 1;
    let mut out = 0u64;
    for l in w.active() {
        let (x, y, z) = (w.vread(&a, l), w.vread(&b, l), w.vread64(&c, l));
        let r: u128 = if signed {
            (i128::from(x as i32) * i128::from(y as i32) + i128::from(z as i64)) as u128
        } else {
            u128::from(x) * u128::from(y) + u128::from(z)
        };
        w.vwrite64(&d, l, r as u64);
        out |= ((r >> 64) as u64 & 1) << l;
    }
    w.mask_write(&sd, out);
    Ok(())
}

/// `v_mad_u32_u16`/`v_mad_i32_i16`: 16-bit factors (op_sel), 32-bit addend.
fn mad32_16(w: &mut Wave, i: &Inst) -> Result {
    let (d, a, b, c) = (i.ops[0], i.ops[1], i.ops[2], i.ops[3]);
    for l in w.active() {
        let (x, y) = (read16(w, i, &a, 0, l), read16(w, i, &b, 1, l));
        let p = if i.aux == 1 { (i32::from(x as i16) * i32::from(y as i16)) as u32 } else { u32::from(x) * u32::from(y) };
        let r = p.wrapping_add(w.vread(&c, l));
        w.vwrite(&d, l, r);
    }
    Ok(())
}

/// `v_mbcnt_lo/hi_u32_b32 d, mask, add`: the set bits of `mask` in the
/// lanes below this one (lanes 0-31 for lo, 32-63 for hi), plus `add`.
fn mbcnt(w: &mut Wave, i: &Inst) -> Result {
    let (d, a, b) = (i.ops[0], i.ops[1], i.ops[2]);
    for l in w.active() {
        let below = (1u64 << l) - 1;
        let part = if i.aux == 0 { below as u32 } else { (below >> 32) as u32 };
        let r = (w.vread(&a, l) & part).count_ones().wrapping_add(w.vread(&b, l));
        w.vwrite(&d, l, r);
    }
    Ok(())
}

/// gfx90a/gfx942 `v_pk_mov_b32 d[2], s0[2], s1[2] op_sel:[a,b]`: the low
/// dword from s0 (its high one with op_sel a), the high dword from s1.
fn pk_mov(w: &mut Wave, i: &Inst) -> Result {
    let (d, a, b) = (i.ops[0], i.ops[1], i.ops[2]);
    let sel = i.mods.op_sel;
    for l in w.active() {
        let x = w.vread64(&a, l) >> (32 * (sel & 1));
        let y = w.vread64(&b, l) >> (32 * (sel >> 1 & 1));
        w.vwrite64(&d, l, (x & 0xffff_ffff) | y << 32);
    }
    Ok(())
}

/// `v_movrels_b32` (aux 1: source indexed by M0), `v_movreld_b32` (2:
/// destination indexed), `v_movrelsd_b32` (3: both).
fn movrel(w: &mut Wave, i: &Inst) -> Result {
    let m0 = w.s[crate::operand::M0 as usize] as u16;
    let shift = |o: Operand, on: bool| match o.kind {
        Kind::Vector { index, count, half } if on => {
            Operand { kind: Kind::Vector { index: index.wrapping_add(m0), count, half }, ..o }
        }
        _ => o,
    };
    let d = shift(i.ops[0], i.aux & 2 != 0);
    let s = shift(i.ops[1], i.aux & 1 != 0);
    for o in [d, s] {
        if let Kind::Vector { index, .. } = o.kind {
            if index as usize >= w.v.len() {
                return Err(crate::wave::fault(
                    crate::wave::FaultKind::Memory,
                    format!("{} indexes v{index} with M0 = {m0}, past the wave's VGPRs", i.mnemonic),
                ));
            }
        }
    }
    for l in w.active() {
        let v = w.vread(&s, l);
        w.vwrite(&d, l, v);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, wave};
    use crate::arch::Arch;
    use crate::operand::{EXEC, VCC};

    const ARCHS: [Arch; 2] = [Arch::Gfx1100, Arch::Gfx942];


    /// Lane 0 of `asm` with v1, v2, v3 = a, b, c; v0 after.
    fn t3(w: &mut crate::wave::Wave, asm: &str, a: u32, b: u32, c: u32) -> u32 {
        w.v[1][0] = a;
        w.v[2][0] = b;
        w.v[3][0] = c;
        run(w, asm).unwrap();
        w.v[0][0]
    }

    #[test]
    fn every_table_name_is_found() {
        for (n, ..) in super::OPS32 {
            assert!(super::lookup(n).is_some(), "{n}");
        }
        for (n, ..) in super::OPS16 {
            assert!(super::lookup(n).is_some(), "{n}");
        }
        for (n, ..) in super::OPS64 {
            assert!(super::lookup(n).is_some(), "{n}");
        }
        for n in ["v_add_u32_e32", "v_sub_u32_sdwa", "v_addc_co_u32_e64", "v_mad_legacy_u16", "v_ffbh_u32_e32", "v_add_i16"] {
            assert!(crate::ops::implemented(n), "{n}");
        }
    }

    #[test]
    fn mov_respects_exec() {
        for arch in ARCHS {
            let mut w = wave(arch);
            w.set_exec(0b1010);
            for l in 0..4 {
                w.v[1][l] = 100 + l as u32;
                w.v[0][l] = 7;
            }
            run(&mut w, "v_mov_b32_e32 v0, v1").unwrap();
            assert_eq!(&w.v[0][..4], &[7, 101, 7, 103]);
            run(&mut w, "v_mov_b32_e32 v2, 0x1234").unwrap();
            assert_eq!(&w.v[2][..4], &[0, 0x1234, 0, 0x1234]);
            run(&mut w, "v_mov_b32_e32 v2, -1").unwrap();
            assert_eq!(w.v[2][1], u32::MAX);
        }
        let mut w = wave(Arch::Gfx942);
        w.set_exec(1 << 63);
        w.v[2][63] = 0xdead;
        w.v[3][63] = 0xbeef;
        run(&mut w, "v_mov_b64_e32 v[0:1], v[2:3]").unwrap();
        assert_eq!((w.v[0][63], w.v[1][63], w.v[0][0]), (0xdead, 0xbeef, 0));
        run(&mut w, "v_mov_b64_e32 v[0:1], -1").unwrap();
        assert_eq!((w.v[0][63], w.v[1][63]), (u32::MAX, u32::MAX));
        run(&mut w, "v_mov_b64_e32 v[0:1], 0x80000000").unwrap();
        assert_eq!((w.v[0][63], w.v[1][63]), (0x8000_0000, 0), "a literal is zero-extended");
    }

    #[test]
    fn true16_moves_and_logic() {
        let mut w = wave(Arch::Gfx1100);
        w.v[0][0] = 0xaaaa_bbbb;
        w.v[1][0] = 0x1234_5678;
        run(&mut w, "v_mov_b16_e32 v0.l, 41").unwrap();
        assert_eq!(w.v[0][0], 0xaaaa_0029);
        run(&mut w, "v_mov_b16_e32 v0.h, v1.l").unwrap();
        assert_eq!(w.v[0][0], 0x5678_0029);
        run(&mut w, "v_and_b16 v1.h, 0xff, v1.h op_sel:[0,1,1]").unwrap();
        assert_eq!(w.v[1][0], 0x0034_5678);
        // A full register with op_sel: the high half.
        w.v[2][0] = 0x0003_0001;
        run(&mut w, "v_lshlrev_b16 v3, v2, 1 op_sel:[1,0,1]").unwrap();
        assert_eq!(w.v[3][0], 0x0008_0000);
    }

    #[test]
    fn gfx9_16bit_high_half() {
        let mut w = wave(Arch::Gfx942);
        w.v[13][0] = 0xffff_fffc;
        run(&mut w, "v_add_u16_e32 v13, 8, v13").unwrap();
        assert_eq!(w.v[13][0], 4, "VOP2 16-bit ops zero the high half on gfx9");
        w.v[6][0] = 0xaaaa_0000;
        w.v[10][0] = 3;
        w.s[2] = 5;
        w.v[9][0] = 1;
        run(&mut w, "v_mad_legacy_u16 v6, v10, s2, v9").unwrap();
        assert_eq!(w.v[6][0], 16);
        w.v[6][0] = 0xaaaa_0000;
        run(&mut w, "v_mad_u16 v6, v10, s2, v9").unwrap();
        assert_eq!(w.v[6][0], 0xaaaa_0010, "op_sel-capable VOP3 16-bit ops keep it");
        run(&mut w, "v_mad_u16 v6, v10, s2, v9 op_sel:[0,0,0,1]").unwrap();
        assert_eq!(w.v[6][0], 0x0010_0010);
        w.v[10][0] = 0x0002_0003;
        run(&mut w, "v_mad_legacy_u16 v6, v10, s2, v9 op_sel:[1,0,0,0]").unwrap();
        assert_eq!(w.v[6][0], 11);
        w.v[1][0] = 0x8000;
        run(&mut w, "v_ashrrev_i16_e32 v2, 15, v1").unwrap();
        assert_eq!(w.v[2][0], 0xffff);
        w.v[1][0] = 0xfff0;
        run(&mut w, "v_add_u16_e64 v2, v1, 0x20 clamp").unwrap();
        assert_eq!(w.v[2][0], 0xffff);
        run(&mut w, "v_sub_u16_e32 v2, 5, v1").unwrap();
        assert_eq!(w.v[2][0], 0x15);
    }

    #[test]
    fn mad_u16_true16_opsel() {
        let mut w = wave(Arch::Gfx1100);
        w.v[0][0] = 0x0005_0003; // l = 3, h = 5
        w.v[1][0] = 0xbeef_0000;
        run(&mut w, "v_mad_u16 v1.l, 0xff9c, v0.l, v0.h op_sel:[0,0,1,0]").unwrap();
        // -100 * 3 + 5 = -295
        assert_eq!(w.v[1][0], 0xbeef_0000 | (-295i32 as u32 & 0xffff));
        w.v[2][0] = 0x0002_0000;
        run(&mut w, "v_mul_lo_u16 v2.l, v2.h, 41 op_sel:[1,0,0]").unwrap();
        assert_eq!(w.v[2][0], 0x0002_0052);
        w.v[3][0] = 0x7fff;
        w.v[4][0] = 0x8000;
        run(&mut w, "v_max_i16 v5.l, v3.l, v4.l").unwrap();
        assert_eq!(w.v[5][0], 0x7fff);
        run(&mut w, "v_max_u16 v5.l, v3.l, v4.l").unwrap();
        assert_eq!(w.v[5][0], 0x8000);
    }

    #[test]
    fn add_co_and_carry_in() {
        for arch in ARCHS {
            let mut w = wave(arch);
            let (vcc, mask) = if arch == Arch::Gfx1100 { ("vcc_lo", 0xf) } else { ("vcc", 0xf) };
            w.set_exec(mask);
            // 64-bit add of (lane0: 0xffffffff_ffffffff + 1), (lane1: 1 + 2).
            w.v[0][0] = u32::MAX;
            w.v[1][0] = u32::MAX;
            w.v[0][1] = 1;
            w.v[2][0] = 1;
            w.v[2][1] = 2;
            w.s[VCC as usize] = 0xffff_ffff;
            w.s[VCC as usize + 1] = 0xffff_ffff;
            let add = if arch == Arch::Gfx1100 { "v_add_co_u32" } else { "v_add_co_u32_e32" };
            run(&mut w, &format!("{add} v4, {vcc}, v0, v2")).unwrap();
            assert_eq!(&w.v[4][..2], &[0, 3]);
            assert_eq!(w.vcc(), 0b0001, "carry from lane 0 only; inactive lanes 0");
            let addc = if arch == Arch::Gfx1100 { "v_add_co_ci_u32_e64 v5, null, 0, v1, vcc_lo" } else { "v_addc_co_u32_e64 v5, s[0:1], 0, v1, vcc" };
            run(&mut w, addc).unwrap();
            assert_eq!(&w.v[5][..2], &[0, 0]);
            if arch == Arch::Gfx942 {
                assert_eq!(w.s[0], 1, "carry out of lane 0 again");
            }
        }
    }

    #[test]
    fn sub_borrow_and_clamp() {
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(0b11);
        w.v[0][0] = 3;
        w.v[1][0] = 5;
        w.v[0][1] = 5;
        w.v[1][1] = 3;
        run(&mut w, "v_sub_co_u32 v2, s4, v0, v1").unwrap();
        assert_eq!(&w.v[2][..2], &[-2i32 as u32, 2]);
        assert_eq!(w.s[4], 0b01);
        run(&mut w, "v_subrev_co_u32 v2, s4, v0, v1").unwrap();
        assert_eq!(&w.v[2][..2], &[2, -2i32 as u32]);
        assert_eq!(w.s[4], 0b10);
        // borrow in: lane 0: 3 - 3 - 1 = -1 with borrow; lane 1: 5 - 3 - 0.
        w.v[1][0] = 3;
        w.s[6] = 0b01;
        run(&mut w, "v_sub_co_ci_u32_e64 v2, s4, v0, v1, s6").unwrap();
        assert_eq!(&w.v[2][..2], &[u32::MAX, 2]);
        assert_eq!(w.s[4], 0b01);
        run(&mut w, "v_subrev_co_ci_u32_e64 v2, s4, v1, v0, s6").unwrap();
        assert_eq!(&w.v[2][..2], &[u32::MAX, 2]);
        run(&mut w, "v_sub_nc_u32_e64 v2, v1, v0 clamp").unwrap();
        assert_eq!(&w.v[2][..2], &[0, 0]);
        w.v[0][0] = 0x7fff_ffff;
        w.v[1][0] = 1;
        run(&mut w, "v_add_nc_i32 v2, v0, v1 clamp").unwrap();
        assert_eq!(w.v[2][0], 0x7fff_ffff);
        run(&mut w, "v_add_nc_i32 v2, v0, v1").unwrap();
        assert_eq!(w.v[2][0], 0x8000_0000);
        run(&mut w, "v_add_co_u32 v2, s4, -1, v1 clamp").unwrap();
        assert_eq!(w.v[2][0], u32::MAX);
    }

    #[test]
    fn cndmask() {
        let mut w = wave(Arch::Gfx1100);
        w.s[0] = 0b0110;
        run(&mut w, "v_cndmask_b32_e64 v0, 0, 1, s0").unwrap();
        assert_eq!(&w.v[0][..4], &[0, 1, 1, 0]);
        w.s[VCC as usize] = 0b1;
        w.v[1][0] = 0x3f80_0000;
        run(&mut w, "v_cndmask_b32_e32 v2, 0, v1, vcc_lo").unwrap();
        assert_eq!(&w.v[2][..2], &[0x3f80_0000, 0]);
        run(&mut w, "v_cndmask_b32_e64 v2, 0, -v1, vcc_lo").unwrap();
        assert_eq!(w.v[2][0], 0xbf80_0000);
        w.v[3][0] = 0x1111_2222;
        run(&mut w, "v_cndmask_b16 v3.h, v3.l, -2, s0").unwrap();
        assert_eq!(&w.v[3][..3], &[0x2222_2222, 0xfffe_0000, 0xfffe_0000]);
        let mut w = wave(Arch::Gfx942);
        w.s[VCC as usize + 1] = 1 << 31;
        run(&mut w, "v_cndmask_b32_e64 v0, 5, 6, vcc").unwrap();
        assert_eq!((w.v[0][62], w.v[0][63]), (5, 6));
    }

    #[test]
    fn logic_shifts_bitfields() {
        let mut w = wave(Arch::Gfx1100);
        assert_eq!(t3(&mut w, "v_and_or_b32 v0, v1, v2, v3", 0xf0f0, 0xff00, 1), 0xf001);
        assert_eq!(t3(&mut w, "v_or3_b32 v0, v1, v2, v3", 1, 2, 4), 7);
        assert_eq!(t3(&mut w, "v_xor3_b32 v0, v1, v2, v3", 1, 3, 4), 6);
        assert_eq!(t3(&mut w, "v_xnor_b32_e32 v0, v1, v2", 0, 0, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_not_b32_e32 v0, v1", 0x0f0f_0f0f, 0, 0), 0xf0f0_f0f0);
        assert_eq!(t3(&mut w, "v_lshlrev_b32_e32 v0, v1, v2", 33, 1, 0), 2, "shift amount mod 32");
        assert_eq!(t3(&mut w, "v_lshrrev_b32_e32 v0, v1, v2", 4, 0x8000_0000, 0), 0x0800_0000);
        assert_eq!(t3(&mut w, "v_ashrrev_i32_e32 v0, v1, v2", 4, 0x8000_0000, 0), 0xf800_0000);
        assert_eq!(t3(&mut w, "v_lshl_add_u32 v0, v1, v2, v3", 3, 4, 5), 53);
        assert_eq!(t3(&mut w, "v_add_lshl_u32 v0, v1, v2, v3", 3, 4, 1), 14);
        assert_eq!(t3(&mut w, "v_lshl_or_b32 v0, v1, v2, v3", 1, 8, 1), 0x101);
        assert_eq!(t3(&mut w, "v_xad_u32 v0, v1, v2, v3", 5, 3, 10), 16);
        assert_eq!(t3(&mut w, "v_add3_u32 v0, v1, v2, v3", u32::MAX, 2, 3), 4);
        assert_eq!(t3(&mut w, "v_alignbit_b32 v0, v1, v2, v3", 0x1234_5678, 0x9abc_def0, 8), 0x789a_bcde);
        assert_eq!(t3(&mut w, "v_alignbit_b32 v0, v1, v2, v3", 0x1234_5678, 0x9abc_def0, 32), 0x9abc_def0);
        assert_eq!(t3(&mut w, "v_alignbyte_b32 v0, v1, v2, v3", 0x1234_5678, 0x9abc_def0, 1), 0x789a_bcde);
        assert_eq!(t3(&mut w, "v_bfe_u32 v0, v1, v2, v3", 0xabcd_1234, 8, 8), 0x12);
        assert_eq!(t3(&mut w, "v_bfe_u32 v0, v1, v2, v3", 0xabcd_1234, 8, 0), 0);
        assert_eq!(t3(&mut w, "v_bfe_i32 v0, v1, v2, v3", 0xabcd_1234, 12, 4), 1);
        assert_eq!(t3(&mut w, "v_bfe_i32 v0, v1, v2, v3", 0xabcd_8234, 12, 4), 0xffff_fff8);
        assert_eq!(t3(&mut w, "v_bfe_i32 v0, v1, v2, v3", 0x8000_0000, 0, 0), 0);
        assert_eq!(t3(&mut w, "v_bfi_b32 v0, v1, v2, v3", 0xff00, 0x1234, 0xabcd), 0x12cd);
        assert_eq!(t3(&mut w, "v_bfm_b32 v0, v1, v2", 4, 8, 0), 0xf00);
        assert_eq!(t3(&mut w, "v_bfrev_b32_e32 v0, v1", 1, 0, 0), 0x8000_0000);
        assert_eq!(t3(&mut w, "v_bcnt_u32_b32 v0, v1, v2", 0xff, 3, 0), 11);
        assert_eq!(t3(&mut w, "v_clz_i32_u32_e32 v0, v1", 0x0001_0000, 0, 0), 15);
        assert_eq!(t3(&mut w, "v_clz_i32_u32_e32 v0, v1", 0, 0, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_ctz_i32_b32_e32 v0, v1", 0x0001_0000, 0, 0), 16);
        assert_eq!(t3(&mut w, "v_ctz_i32_b32_e32 v0, v1", 0, 0, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_cls_i32_e32 v0, v1", 0x4000_0000, 0, 0), 1);
        assert_eq!(t3(&mut w, "v_cls_i32_e32 v0, v1", 0xffff_fff0, 0, 0), 28);
        assert_eq!(t3(&mut w, "v_cls_i32_e32 v0, v1", u32::MAX, 0, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_cls_i32_e32 v0, v1", 0, 0, 0), u32::MAX);
        // gfx9 names of the same.
        let mut g = wave(Arch::Gfx942);
        assert_eq!(t3(&mut g, "v_ffbh_u32_e32 v0, v1", 1, 0, 0), 31);
        assert_eq!(t3(&mut g, "v_ffbl_b32_e32 v0, v1", 8, 0, 0), 3);
    }

    #[test]
    fn multiplies() {
        let mut w = wave(Arch::Gfx942);
        assert_eq!(t3(&mut w, "v_mul_lo_u32 v0, v1, v2", 0x1_0001, 0x1_0001, 0), 0x0002_0001);
        assert_eq!(t3(&mut w, "v_mul_hi_u32 v0, v1, v2", u32::MAX, u32::MAX, 0), 0xffff_fffe);
        assert_eq!(t3(&mut w, "v_mul_hi_i32 v0, v1, v2", -2i32 as u32, 3, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_mul_u32_u24_e32 v0, v1, v2", 0xff00_0002, 3, 0), 6);
        assert_eq!(t3(&mut w, "v_mul_hi_u32_u24_e32 v0, v1, v2", 0xff_ffff, 0xff_ffff, 0), 0xffff);
        assert_eq!(t3(&mut w, "v_mul_i32_i24_e32 v0, v1, v2", 0x00ff_ffff, 5, 0), -5i32 as u32);
        assert_eq!(t3(&mut w, "v_mul_hi_i32_i24_e32 v0, v1, v2", 0x00ff_ffff, 5, 0), u32::MAX);
        assert_eq!(t3(&mut w, "v_mad_u32_u24 v0, v1, v2, v3", 7, 6, 100), 142);
        assert_eq!(t3(&mut w, "v_mad_i32_i24 v0, v1, v2, v3", 0x00ff_fffe, 6, 100), 88);
    }

    #[test]
    fn mad_u64_u32() {
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(0b11);
        w.v[8][0] = u32::MAX;
        w.s[50] = u32::MAX;
        w.v[4][0] = 5;
        w.v[5][0] = 0;
        w.v[8][1] = 2;
        w.v[4][1] = u32::MAX;
        w.v[5][1] = u32::MAX;
        run(&mut w, "v_mad_u64_u32 v[6:7], s2, v8, s50, v[4:5]").unwrap();
        // (2^32-1)^2 + 5 = 0xfffffffe_00000006
        assert_eq!((w.v[6][0], w.v[7][0]), (6, 0xffff_fffe));
        // (2^32-1)*2 + 2^64-1 overflows.
        assert_eq!((w.v[6][1], w.v[7][1]), (0xffff_fffd, 1));
        assert_eq!(w.s[2], 0b10);
        run(&mut w, "v_mad_u64_u32 v[6:7], null, v8, 24, -1").unwrap();
        assert_eq!((w.v[6][1], w.v[7][1]), (47, 0), "-1 is a 64-bit -1");
        w.v[0][0] = -3i32 as u32;
        run(&mut w, "v_mad_i64_i32 v[10:11], null, v0, 5, 0").unwrap();
        assert_eq!((w.v[10][0], w.v[11][0]), (-15i32 as u32, u32::MAX));
        let mut g = wave(Arch::Gfx942);
        g.v[1][40] = 3;
        g.v[0][40] = 1;
        g.v[1][40] = 0;
        g.v[2][40] = 4;
        run(&mut g, "v_mad_u64_u32 v[0:1], s[2:3], v2, 24, v[0:1]").unwrap();
        assert_eq!((g.v[0][40], g.v[1][40]), (97, 0));
        assert_eq!((g.s[2], g.s[3]), (0, 0));
    }

    #[test]
    fn shifts_64() {
        let mut w = wave(Arch::Gfx942);
        w.v[2][0] = 0x8000_0001;
        w.v[3][0] = 0x8000_0000;
        run(&mut w, "v_lshlrev_b64 v[0:1], 1, v[2:3]").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (2, 1));
        run(&mut w, "v_lshrrev_b64 v[0:1], 33, v[2:3]").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (0x4000_0000, 0));
        run(&mut w, "v_ashrrev_i64 v[0:1], 63, v[2:3]").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (u32::MAX, u32::MAX));
        w.v[6][0] = 1;
        w.v[7][0] = 0;
        run(&mut w, "v_lshl_add_u64 v[0:1], v[2:3], 0, -1").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (0x8000_0000, 0x8000_0000));
        run(&mut w, "v_lshl_add_u64 v[0:1], v[6:7], 3, v[6:7]").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (9, 0));
        w.s[0] = 0xffff_ffff;
        w.s[1] = 0;
        run(&mut w, "v_lshl_add_u64 v[0:1], v[6:7], 0, s[0:1]").unwrap();
        assert_eq!((w.v[0][0], w.v[1][0]), (0, 1));
    }

    #[test]
    fn min_max_med() {
        let mut w = wave(Arch::Gfx1100);
        let m1 = u32::MAX;
        assert_eq!(t3(&mut w, "v_max_u32_e32 v0, v1, v2", m1, 1, 0), m1);
        assert_eq!(t3(&mut w, "v_max_i32_e32 v0, v1, v2", m1, 1, 0), 1);
        assert_eq!(t3(&mut w, "v_min_u32_e32 v0, v1, v2", m1, 1, 0), 1);
        assert_eq!(t3(&mut w, "v_min_i32_e64 v0, v1, v2", m1, 1, 0), m1);
        assert_eq!(t3(&mut w, "v_min3_u32 v0, v1, v2, v3", 5, 2, 9), 2);
        assert_eq!(t3(&mut w, "v_max3_i32 v0, v1, v2, v3", m1, -5i32 as u32, -2i32 as u32), m1);
        assert_eq!(t3(&mut w, "v_med3_u32 v0, v1, v2, v3", 9, 2, 5), 5);
        assert_eq!(t3(&mut w, "v_med3_i32 v0, v1, v2, v3", m1, 7, 0), 0);
    }

    #[test]
    fn perm_sad_mbcnt() {
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = 0x8877_6655; // bytes 4-7 of the pair
        w.v[2][0] = 0x4433_2211; // bytes 0-3
        w.v[3][0] = 0x0c07_0400;
        run(&mut w, "v_perm_b32 v0, v1, v2, v3").unwrap();
        assert_eq!(w.v[0][0], 0x0088_5511);
        w.v[3][0] = 0x0b0a_090d;
        run(&mut w, "v_perm_b32 v0, v1, v2, v3").unwrap();
        // byte 7 (0x88) sign set, byte 5 (0x66) not, byte 3 (0x44) not.
        assert_eq!(w.v[0][0], 0xff00_00ff);
        w.v[1][0] = 0x0102_0304;
        w.v[2][0] = 0x0401_0400;
        run(&mut w, "v_sad_u8 v0, v1, v2, 10").unwrap();
        assert_eq!(w.v[0][0], 10 + 3 + 1 + 1 + 4);
        run(&mut w, "v_msad_u8 v0, v1, v2, 0").unwrap();
        assert_eq!(w.v[0][0], 3 + 1 + 1);
        run(&mut w, "v_sad_u32 v0, v2, v1, 1").unwrap();
        assert_eq!(w.v[0][0], 0x0401_0400 - 0x0102_0304 + 1);
        // mbcnt_lo(-1, 0) is the lane number (wave32).
        run(&mut w, "v_mbcnt_lo_u32_b32 v4, -1, 0").unwrap();
        assert_eq!(&w.v[4][..4], &[0, 1, 2, 3]);
        assert_eq!(w.v[4][31], 31);
        w.s[0] = 0b1011;
        run(&mut w, "v_mbcnt_lo_u32_b32 v4, s0, 100").unwrap();
        assert_eq!(&w.v[4][..5], &[100, 101, 102, 102, 103]);
        let mut g = wave(Arch::Gfx942);
        run(&mut g, "v_mbcnt_lo_u32_b32 v0, -1, 0").unwrap();
        run(&mut g, "v_mbcnt_hi_u32_b32 v4, -1, v0").unwrap();
        assert_eq!((g.v[4][0], g.v[4][31], g.v[4][32], g.v[4][63]), (0, 31, 32, 63));
    }

    #[test]
    fn swap_and_exec_zero() {
        let mut w = wave(Arch::Gfx1100);
        w.v[3][0] = 1;
        w.v[5][0] = 2;
        w.v[3][1] = 3;
        w.v[5][1] = 4;
        w.set_exec(1);
        run(&mut w, "v_swap_b32 v3, v5").unwrap();
        assert_eq!((w.v[3][0], w.v[5][0], w.v[3][1], w.v[5][1]), (2, 1, 3, 4));
        w.s[EXEC as usize] = 0;
        run(&mut w, "v_add_nc_u32_e32 v3, 7, v3").unwrap();
        assert_eq!(w.v[3][0], 2);
    }

    #[test]
    fn cndmask_sdwa_selects_per_lane() {
        let mut w = wave(Arch::Gfx942);
        for l in 0..64 {
            w.v[73][l] = 0xaaaa_0000 | l as u32;
            w.v[78][l] = 0x5000 + l as u32;
        }
        w.set_vcc(0b10);
        run(&mut w, "v_cndmask_b32_sdwa v6, v73, v78, vcc dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD").unwrap();
        // Lane 0: VCC clear, src0's low word; lane 1: VCC set, src1 whole.
        assert_eq!((w.v[6][0], w.v[6][1], w.v[6][2]), (0, 0x5001, 2));
    }

    #[test]
    fn sdwa_forms() {
        let mut w = wave(Arch::Gfx942);
        w.v[2][0] = 0xaabb_ccdd;
        w.v[4][0] = 0x1000_0000;
        run(&mut w, "v_or_b32_sdwa v0, v2, v4 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD").unwrap();
        assert_eq!(w.v[0][0], 0x1000_00dd);
        w.v[3][0] = 0x1234_5678;
        run(&mut w, "v_or_b32_sdwa v3, v2, v4 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD").unwrap();
        // (0xdd | 0x10000000) placed in the high word: 0x00dd << 16.
        assert_eq!(w.v[3][0], 0x00dd_0000);
        w.v[5][0] = 0xffff_ffff;
        w.v[8][0] = 0x0000_00f0;
        run(&mut w, "v_and_b32_sdwa v5, v5, v8 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD src1_sel:DWORD").unwrap();
        assert_eq!(w.v[5][0], 0xffff_f0ff);
        w.v[7][0] = 0x0003_0005;
        w.v[8][0] = 0x0009_0007;
        run(&mut w, "v_sub_u32_sdwa v6, v7, v8 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_0").unwrap();
        assert_eq!(w.v[6][0], -2i32 as u32);
        w.v[1][0] = 0x8001;
        w.v[0][0] = 0x0000_0102;
        run(&mut w, "v_lshlrev_b32_sdwa v9, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_0").unwrap();
        assert_eq!(w.v[9][0], 0x8001 << 2);
        w.v[1][0] = 0x80;
        run(&mut w, "v_lshlrev_b32_sdwa v9, 1, sext(v1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:BYTE_0").unwrap();
        assert_eq!(w.v[9][0], 0xffff_ff00);
        w.v[1][0] = 0xffff;
        w.v[2][0] = 0x0002_0000;
        w.v[3][0] = 0x5555_7777;
        run(&mut w, "v_add_u16_sdwa v3, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0 src1_sel:WORD_1").unwrap();
        // 0xffff + 2 wraps to 1 in 16 bits, into the high word.
        assert_eq!(w.v[3][0], 0x0001_7777);
    }

    #[test]
    fn movrel_and_pk_mov() {
        let mut w = wave(Arch::Gfx942);
        w.s[crate::operand::M0 as usize] = 2;
        w.v[3][0] = 33;
        run(&mut w, "v_movrels_b32_e32 v0, v1").unwrap();
        assert_eq!(w.v[0][0], 33);
        run(&mut w, "v_movreld_b32_e32 v10, v0").unwrap();
        assert_eq!((w.v[12][0], w.v[10][0]), (33, 0));
        run(&mut w, "v_movrelsd_b32_e32 v20, v1").unwrap();
        assert_eq!(w.v[22][0], 33);
        w.s[crate::operand::M0 as usize] = 10_000;
        assert!(run(&mut w, "v_movrels_b32_e32 v0, v1").is_err());
        w.v[4][1] = 1;
        w.v[5][1] = 2;
        w.v[6][1] = 3;
        w.v[7][1] = 4;
        run(&mut w, "v_pk_mov_b32 v[0:1], v[4:5], v[6:7] op_sel:[1,0]").unwrap();
        assert_eq!((w.v[0][1], w.v[1][1]), (2, 3));
    }

    #[test]
    fn pack_and_lerp() {
        let mut w = wave(Arch::Gfx1100);
        w.v[1][0] = 0x1_0000;
        w.v[2][0] = 5;
        run(&mut w, "v_cvt_pk_u16_u32 v0, v1, v2").unwrap();
        assert_eq!(w.v[0][0], 0x0005_ffff);
        w.v[1][0] = -40000i32 as u32;
        w.v[2][0] = 40000;
        run(&mut w, "v_cvt_pk_i16_i32 v0, v1, v2").unwrap();
        assert_eq!(w.v[0][0], 0x7fff_8000);
        w.v[1][0] = 0x0001_0203;
        w.v[2][0] = 0x0001_0101;
        w.v[3][0] = 0x0101_0101;
        run(&mut w, "v_lerp_u8 v0, v1, v2, v3").unwrap();
        assert_eq!(w.v[0][0], 0x0001_0202);
    }
}
