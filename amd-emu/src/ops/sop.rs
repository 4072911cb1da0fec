//! The scalar ALU (SOP1, SOP2, SOPK, SOPC): one value for the whole wave,
//! in SGPRs, with SCC as the condition code.
//!
//! Per AMD's RDNA3 and CDNA3 ISA guides. What SCC becomes differs by
//! instruction: a carry or borrow for `_u32` adds, signed overflow for
//! `_i32` adds, "result != 0" for bitwise ops, shifts, bit-field extracts
//! and counts, the comparison for `s_cmp*`, the choice for `s_min`/`s_max`,
//! and "EXEC != 0" for the `*_saveexec`/`*_wrexec` ops. The other ops leave
//! it alone. Each op is one small function generated from its formula by
//! [`def!`], so the per-instruction cost is a call through a pointer.

use super::Exec;
use crate::decode::Inst;
use crate::operand::{EXEC, Kind, M0, NULL, SCALAR_FILE};
use crate::wave::{Result, Wave};

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    table(name).map(|f| (f, 0))
}

// ------------------------------------------------------------ shapes

/// `D = f(S0, S1, SCC)` on 32 bits; `f` returns the new SCC, if it sets one.
#[inline(always)]
fn sop2(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, bool) -> (u32, Option<bool>)) -> Result {
    let (a, b) = (w.sread(&i.ops[1]), w.sread(&i.ops[2]));
    let (r, scc) = f(a, b, w.scc);
    w.swrite(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// As [`sop2`] with 64-bit sources and result.
#[inline(always)]
fn sop2w(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64, bool) -> (u64, Option<bool>)) -> Result {
    let (a, b) = (w.sread64(&i.ops[1]), w.sread64(&i.ops[2]));
    let (r, scc) = f(a, b, w.scc);
    w.swrite64(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// A 64-bit S0 and result, a 32-bit S1 (shifts, 64-bit bit-field extract).
#[inline(always)]
fn sop2wn(w: &mut Wave, i: &Inst, f: impl Fn(u64, u32) -> (u64, Option<bool>)) -> Result {
    let (a, b) = (w.sread64(&i.ops[1]), w.sread(&i.ops[2]));
    let (r, scc) = f(a, b);
    w.swrite64(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// 32-bit sources, a 64-bit result (`s_bfm_b64`).
#[inline(always)]
fn sop2nw(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> u64) -> Result {
    let (a, b) = (w.sread(&i.ops[1]), w.sread(&i.ops[2]));
    w.swrite64(&i.ops[0], f(a, b));
    Ok(())
}

/// `D = f(S0, SCC)` on 32 bits.
#[inline(always)]
fn sop1(w: &mut Wave, i: &Inst, f: impl Fn(u32, bool) -> (u32, Option<bool>)) -> Result {
    let a = w.sread(&i.ops[1]);
    let (r, scc) = f(a, w.scc);
    w.swrite(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// `D = f(S0)` on 64 bits.
#[inline(always)]
fn sop1w(w: &mut Wave, i: &Inst, f: impl Fn(u64) -> (u64, Option<bool>)) -> Result {
    let a = w.sread64(&i.ops[1]);
    let (r, scc) = f(a);
    w.swrite64(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// A 64-bit source, a 32-bit result (counts, searches).
#[inline(always)]
fn sop1wn(w: &mut Wave, i: &Inst, f: impl Fn(u64) -> (u32, Option<bool>)) -> Result {
    let a = w.sread64(&i.ops[1]);
    let (r, scc) = f(a);
    w.swrite(&i.ops[0], r);
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// A 32-bit source, a 64-bit result.
#[inline(always)]
fn sop1nw(w: &mut Wave, i: &Inst, f: impl Fn(u32) -> u64) -> Result {
    let a = w.sread(&i.ops[1]);
    w.swrite64(&i.ops[0], f(a));
    Ok(())
}

/// `D = f(D, S0)`: the ops that modify their destination (`s_bitset*`).
#[inline(always)]
fn sop1rmw(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> u32) -> Result {
    let (d, a) = (w.sread(&i.ops[0]), w.sread(&i.ops[1]));
    w.swrite(&i.ops[0], f(d, a));
    Ok(())
}

#[inline(always)]
fn sop1rmww(w: &mut Wave, i: &Inst, f: impl Fn(u64, u32) -> u64) -> Result {
    let (d, a) = (w.sread64(&i.ops[0]), w.sread(&i.ops[1]));
    w.swrite64(&i.ops[0], f(d, a));
    Ok(())
}

/// `SCC = f(S0, S1)` on 32 bits.
#[inline(always)]
fn cmp(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool) -> Result {
    w.scc = f(w.sread(&i.ops[0]), w.sread(&i.ops[1]));
    Ok(())
}

/// `SCC = f(S0, S1)`, a 64-bit S0 (S1 is 64-bit too for `s_cmp_*_u64`; the
/// bit index of `s_bitcmp*_b64` is in its low bits either way).
#[inline(always)]
fn cmpw(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> bool) -> Result {
    w.scc = f(w.sread64(&i.ops[0]), w.sread64(&i.ops[1]));
    Ok(())
}

/// The 16-bit immediate of a SOPK instruction (its last operand), as the
/// raw 16 bits: LLVM prints it in hex (`0xfffc`), or in decimal.
#[inline(always)]
fn imm16(w: &Wave, i: &Inst) -> u32 {
    i.ops.last().map_or(0, |o| w.sread(o)) & 0xffff
}

#[inline(always)]
fn sext16(v: u32) -> u32 {
    v as u16 as i16 as i32 as u32
}

/// SOPK writing its destination: `D = f(D, imm16, SCC)`; `None` leaves it.
#[inline(always)]
fn sopk(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, bool) -> (Option<u32>, Option<bool>)) -> Result {
    let (d, k) = (w.sread(&i.ops[0]), imm16(w, i));
    let (r, scc) = f(d, k, w.scc);
    if let Some(r) = r {
        w.swrite(&i.ops[0], r);
    }
    if let Some(c) = scc {
        w.scc = c;
    }
    Ok(())
}

/// `s_cmpk_*`: `SCC = f(S0, imm16)`.
#[inline(always)]
fn cmpk(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool) -> Result {
    w.scc = f(w.sread(&i.ops[0]), imm16(w, i));
    Ok(())
}

/// EXEC as the register pair holds it (all 64 bits for `_b64`, which are
/// what the `_b64` ops read and write whatever the wave size).
#[inline(always)]
fn exec_raw(w: &Wave, wide: bool) -> u64 {
    let lo = u64::from(w.s[EXEC as usize]);
    if wide { lo | u64::from(w.s[EXEC as usize + 1]) << 32 } else { lo }
}

#[inline(always)]
fn set_exec_raw(w: &mut Wave, wide: bool, e: u64) {
    w.s[EXEC as usize] = e as u32;
    if wide {
        w.s[EXEC as usize + 1] = (e >> 32) as u32;
    }
}

/// `D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0`.
#[inline(always)]
fn saveexec(w: &mut Wave, i: &Inst, wide: bool, f: impl Fn(u64, u64) -> u64) -> Result {
    let s = if wide { w.sread64(&i.ops[1]) } else { u64::from(w.sread(&i.ops[1])) };
    let old = exec_raw(w, wide);
    let mut new = f(s, old);
    if !wide {
        new &= 0xffff_ffff;
    }
    set_exec_raw(w, wide, new);
    if wide {
        w.swrite64(&i.ops[0], old);
    } else {
        w.swrite(&i.ops[0], old as u32);
    }
    w.scc = new != 0;
    Ok(())
}

/// `EXEC = f(S0, EXEC); D = EXEC; SCC = EXEC != 0`.
#[inline(always)]
fn wrexec(w: &mut Wave, i: &Inst, wide: bool, f: impl Fn(u64, u64) -> u64) -> Result {
    let s = if wide { w.sread64(&i.ops[1]) } else { u64::from(w.sread(&i.ops[1])) };
    let mut new = f(s, exec_raw(w, wide));
    if !wide {
        new &= 0xffff_ffff;
    }
    set_exec_raw(w, wide, new);
    if wide {
        w.swrite64(&i.ops[0], new);
    } else {
        w.swrite(&i.ops[0], new as u32);
    }
    w.scc = new != 0;
    Ok(())
}

// ------------------------------------------------------------ helpers

#[inline(always)]
fn nz32(r: u32) -> (u32, Option<bool>) {
    (r, Some(r != 0))
}

#[inline(always)]
fn nz64(r: u64) -> (u64, Option<bool>) {
    (r, Some(r != 0))
}

#[inline(always)]
fn keep<T>(r: T) -> (T, Option<bool>) {
    (r, None)
}

/// Signed overflow of `a + b = r` (both operands of one sign, the result of
/// the other).
#[inline(always)]
fn add_overflow(a: u32, b: u32, r: u32) -> bool {
    (a >> 31) == (b >> 31) && (a >> 31) != (r >> 31)
}

/// `(1 << n) - 1` for any `n` (all ones from 64 on).
#[inline(always)]
fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Bit-field extract: `width` bits from `offset`, zero- or sign-extended.
/// The signed forms shift arithmetically first, as the ISA's pseudo-code.
#[inline(always)]
fn bfe32(a: u32, ctl: u32, signed: bool) -> u32 {
    let (off, width) = (ctl & 0x1f, (ctl >> 16) & 0x7f);
    let shifted = if signed { ((a as i32) >> off) as u32 } else { a >> off };
    let r = shifted & low_mask(width) as u32;
    if signed && (1..32).contains(&width) { ((r << (32 - width)) as i32 >> (32 - width)) as u32 } else { r }
}

#[inline(always)]
fn bfe64(a: u64, ctl: u32, signed: bool) -> u64 {
    let (off, width) = (ctl & 0x3f, (ctl >> 16) & 0x7f);
    let shifted = if signed { ((a as i64) >> off) as u64 } else { a >> off };
    let r = shifted & low_mask(width);
    if signed && (1..64).contains(&width) { ((r << (64 - width)) as i64 >> (64 - width)) as u64 } else { r }
}

/// Index of the lowest set bit, or -1.
#[inline(always)]
fn ctz(v: u64, bits: u32) -> u32 {
    if v == 0 { u32::MAX } else { v.trailing_zeros().min(bits) }
}

/// Leading zeros of a `bits`-wide value, or -1 when it is 0.
#[inline(always)]
fn clz(v: u64, bits: u32) -> u32 {
    if v == 0 { u32::MAX } else { v.leading_zeros() - (64 - bits) }
}

/// `s_cls`: how many bits from the top equal the sign bit (counting it),
/// or -1 when all do.
#[inline(always)]
fn cls(v: u64, bits: u32) -> u32 {
    let top = (v >> (bits - 1)) & 1;
    let mask = low_mask(bits);
    let x = (v ^ if top == 1 { mask } else { 0 }) & mask;
    clz(x, bits)
}

/// `s_wqm`: each group of 4 lanes all on if any is.
#[inline(always)]
fn wqm(v: u64) -> u64 {
    let mut r = 0;
    for q in 0..16 {
        if (v >> (q * 4)) & 0xf != 0 {
            r |= 0xf << (q * 4);
        }
    }
    r
}

/// `s_quadmask`: bit `q` set if any lane of quad `q` is.
#[inline(always)]
fn quadmask(v: u64, quads: u32) -> u64 {
    (0..quads).filter(|q| (v >> (q * 4)) & 0xf != 0).fold(0, |r, q| r | 1 << q)
}

/// The SGPR a relative move (`s_movrels`/`s_movreld`) names: the operand's
/// register plus M0.
fn relative(w: &Wave, o: &crate::operand::Operand) -> Option<usize> {
    match o.kind {
        Kind::Scalar { index, .. } => {
            let r = (index as usize).wrapping_add(w.s[M0 as usize] as usize);
            (r + 1 < SCALAR_FILE && r != NULL as usize).then_some(r)
        }
        _ => None,
    }
}

fn s_movrels_b32(w: &mut Wave, i: &Inst) -> Result {
    let v = relative(w, &i.ops[1]).map_or(0, |r| w.s[r]);
    w.swrite(&i.ops[0], v);
    Ok(())
}

fn s_movrels_b64(w: &mut Wave, i: &Inst) -> Result {
    let v = relative(w, &i.ops[1]).map_or(0, |r| u64::from(w.s[r]) | u64::from(w.s[r + 1]) << 32);
    w.swrite64(&i.ops[0], v);
    Ok(())
}

fn s_movreld_b32(w: &mut Wave, i: &Inst) -> Result {
    let v = w.sread(&i.ops[1]);
    if let Some(r) = relative(w, &i.ops[0]) {
        w.s[r] = v;
    }
    Ok(())
}

fn s_movreld_b64(w: &mut Wave, i: &Inst) -> Result {
    let v = w.sread64(&i.ops[1]);
    if let Some(r) = relative(w, &i.ops[0]) {
        w.s[r] = v as u32;
        w.s[r + 1] = (v >> 32) as u32;
    }
    Ok(())
}

// ------------------------------------------------------------ the ops

/// Defines each op as a function named for its mnemonic, calling a shape
/// with the op's formula, and the table from names to them.
macro_rules! def {
    ($($name:ident = $shape:ident $(($($extra:expr),*))? |$($p:pat_param),*| $body:expr;)*) => {
        $(
            fn $name(w: &mut Wave, i: &Inst) -> Result {
                $shape(w, i, $($($extra,)*)? |$($p),*| $body)
            }
        )*
        fn table(name: &str) -> Option<Exec> {
            match name {
                $(stringify!($name) => Some($name as Exec),)*
                "s_movrels_b32" => Some(s_movrels_b32 as Exec),
                "s_movrels_b64" => Some(s_movrels_b64 as Exec),
                "s_movreld_b32" => Some(s_movreld_b32 as Exec),
                "s_movreld_b64" => Some(s_movreld_b64 as Exec),
                _ => None,
            }
        }
    };
}

def! {
    // Arithmetic.
    s_add_u32 = sop2 |a, b, _| { let (r, c) = a.overflowing_add(b); (r, Some(c)) };
    s_sub_u32 = sop2 |a, b, _| { let (r, c) = a.overflowing_sub(b); (r, Some(c)) };
    s_addc_u32 = sop2 |a, b, c| {
        let t = u64::from(a) + u64::from(b) + u64::from(c);
        (t as u32, Some(t >> 32 != 0))
    };
    s_subb_u32 = sop2 |a, b, c| {
        (a.wrapping_sub(b).wrapping_sub(u32::from(c)), Some(u64::from(b) + u64::from(c) > u64::from(a)))
    };
    s_add_i32 = sop2 |a, b, _| { let r = a.wrapping_add(b); (r, Some(add_overflow(a, b, r))) };
    s_sub_i32 = sop2 |a, b, _| {
        let r = a.wrapping_sub(b);
        (r, Some((a >> 31) != (b >> 31) && (a >> 31) != (r >> 31)))
    };
    s_mul_i32 = sop2 |a, b, _| keep(a.wrapping_mul(b));
    s_mul_hi_u32 = sop2 |a, b, _| keep(((u64::from(a) * u64::from(b)) >> 32) as u32);
    s_mul_hi_i32 = sop2 |a, b, _| keep(((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32);
    s_lshl1_add_u32 = sop2 |a, b, _| { let t = (u64::from(a) << 1) + u64::from(b); (t as u32, Some(t >> 32 != 0)) };
    s_lshl2_add_u32 = sop2 |a, b, _| { let t = (u64::from(a) << 2) + u64::from(b); (t as u32, Some(t >> 32 != 0)) };
    s_lshl3_add_u32 = sop2 |a, b, _| { let t = (u64::from(a) << 3) + u64::from(b); (t as u32, Some(t >> 32 != 0)) };
    s_lshl4_add_u32 = sop2 |a, b, _| { let t = (u64::from(a) << 4) + u64::from(b); (t as u32, Some(t >> 32 != 0)) };
    s_min_i32 = sop2 |a, b, _| { let c = (a as i32) < (b as i32); (if c { a } else { b }, Some(c)) };
    s_min_u32 = sop2 |a, b, _| { let c = a < b; (if c { a } else { b }, Some(c)) };
    s_max_i32 = sop2 |a, b, _| { let c = (a as i32) >= (b as i32); (if c { a } else { b }, Some(c)) };
    s_max_u32 = sop2 |a, b, _| { let c = a >= b; (if c { a } else { b }, Some(c)) };
    s_absdiff_i32 = sop2 |a, b, _| nz32((a.wrapping_sub(b) as i32).wrapping_abs() as u32);
    s_abs_i32 = sop1 |a, _| nz32((a as i32).wrapping_abs() as u32);
    s_sext_i32_i8 = sop1 |a, _| keep(a as u8 as i8 as i32 as u32);
    s_sext_i32_i16 = sop1 |a, _| keep(a as u16 as i16 as i32 as u32);

    // Moves and selects.
    s_mov_b32 = sop1 |a, _| keep(a);
    s_mov_b64 = sop1w |a| keep(a);
    s_cmov_b32 = sop1cond |a| a;
    s_cmov_b64 = sop1condw |a| a;
    s_cselect_b32 = sop2 |a, b, c| keep(if c { a } else { b });
    s_cselect_b64 = sop2w |a, b, c| keep(if c { a } else { b });
    s_pack_ll_b32_b16 = sop2 |a, b, _| keep((a & 0xffff) | (b << 16));
    s_pack_lh_b32_b16 = sop2 |a, b, _| keep((a & 0xffff) | (b & 0xffff_0000));
    s_pack_hh_b32_b16 = sop2 |a, b, _| keep((a >> 16) | (b & 0xffff_0000));
    s_pack_hl_b32_b16 = sop2 |a, b, _| keep((a >> 16) | (b << 16));

    // Bitwise: SCC = result != 0.
    s_and_b32 = sop2 |a, b, _| nz32(a & b);
    s_or_b32 = sop2 |a, b, _| nz32(a | b);
    s_xor_b32 = sop2 |a, b, _| nz32(a ^ b);
    s_nand_b32 = sop2 |a, b, _| nz32(!(a & b));
    s_nor_b32 = sop2 |a, b, _| nz32(!(a | b));
    s_xnor_b32 = sop2 |a, b, _| nz32(!(a ^ b));
    s_and_not1_b32 = sop2 |a, b, _| nz32(a & !b);
    s_or_not1_b32 = sop2 |a, b, _| nz32(a | !b);
    s_and_b64 = sop2w |a, b, _| nz64(a & b);
    s_or_b64 = sop2w |a, b, _| nz64(a | b);
    s_xor_b64 = sop2w |a, b, _| nz64(a ^ b);
    s_nand_b64 = sop2w |a, b, _| nz64(!(a & b));
    s_nor_b64 = sop2w |a, b, _| nz64(!(a | b));
    s_xnor_b64 = sop2w |a, b, _| nz64(!(a ^ b));
    s_and_not1_b64 = sop2w |a, b, _| nz64(a & !b);
    s_or_not1_b64 = sop2w |a, b, _| nz64(a | !b);
    s_not_b32 = sop1 |a, _| nz32(!a);
    s_not_b64 = sop1w |a| nz64(!a);
    s_wqm_b32 = sop1 |a, _| nz32(wqm(u64::from(a)) as u32);
    s_wqm_b64 = sop1w |a| nz64(wqm(a));
    s_quadmask_b32 = sop1 |a, _| nz32(quadmask(u64::from(a), 8) as u32);
    s_quadmask_b64 = sop1w |a| nz64(quadmask(a, 16));

    // Shifts: the amount is S1's low 5 (6) bits; SCC = result != 0.
    s_lshl_b32 = sop2 |a, b, _| nz32(a << (b & 31));
    s_lshr_b32 = sop2 |a, b, _| nz32(a >> (b & 31));
    s_ashr_i32 = sop2 |a, b, _| nz32(((a as i32) >> (b & 31)) as u32);
    s_lshl_b64 = sop2wn |a, b| nz64(a << (b & 63));
    s_lshr_b64 = sop2wn |a, b| nz64(a >> (b & 63));
    s_ashr_i64 = sop2wn |a, b| nz64(((a as i64) >> (b & 63)) as u64);

    // Bit fields: S1 is offset [4:0] ([5:0]) and width [22:16].
    s_bfe_u32 = sop2 |a, b, _| nz32(bfe32(a, b, false));
    s_bfe_i32 = sop2 |a, b, _| nz32(bfe32(a, b, true));
    s_bfe_u64 = sop2wn |a, b| nz64(bfe64(a, b, false));
    s_bfe_i64 = sop2wn |a, b| nz64(bfe64(a, b, true));
    s_bfm_b32 = sop2 |a, b, _| keep((((1u64 << (a & 31)) - 1) as u32) << (b & 31));
    s_bfm_b64 = sop2nw |a, b| low_mask(a & 63) << (b & 63);
    s_brev_b32 = sop1 |a, _| keep(a.reverse_bits());
    s_brev_b64 = sop1w |a| keep(a.reverse_bits());
    s_bitreplicate_b64_b32 = sop1nw |a| (0..32).fold(0u64, |r, b| r | (u64::from((a >> b) & 1) * 3) << (2 * b));
    s_bitset0_b32 = sop1rmw |d, a| d & !(1 << (a & 31));
    s_bitset1_b32 = sop1rmw |d, a| d | (1 << (a & 31));
    s_bitset0_b64 = sop1rmww |d, a| d & !(1 << (a & 63));
    s_bitset1_b64 = sop1rmww |d, a| d | (1 << (a & 63));

    // Counts and searches (the gfx9 ff1/flbit names are mapped to these).
    s_bcnt0_i32_b32 = sop1 |a, _| nz32(a.count_zeros());
    s_bcnt1_i32_b32 = sop1 |a, _| nz32(a.count_ones());
    s_bcnt0_i32_b64 = sop1wn |a| nz32(a.count_zeros());
    s_bcnt1_i32_b64 = sop1wn |a| nz32(a.count_ones());
    s_ctz_i32_b32 = sop1 |a, _| keep(ctz(u64::from(a), 32));
    s_ctz_i32_b64 = sop1wn |a| keep(ctz(a, 64));
    s_ff0_i32_b32 = sop1 |a, _| keep(ctz(u64::from(!a), 32));
    s_ff0_i32_b64 = sop1wn |a| keep(ctz(!a, 64));
    s_clz_i32_u32 = sop1 |a, _| keep(clz(u64::from(a), 32));
    s_clz_i32_u64 = sop1wn |a| keep(clz(a, 64));
    s_cls_i32 = sop1 |a, _| keep(cls(u64::from(a), 32));
    s_cls_i32_i64 = sop1wn |a| keep(cls(a, 64));

    // Comparisons.
    s_cmp_eq_i32 = cmp |a, b| a == b;
    s_cmp_lg_i32 = cmp |a, b| a != b;
    s_cmp_gt_i32 = cmp |a, b| (a as i32) > (b as i32);
    s_cmp_ge_i32 = cmp |a, b| (a as i32) >= (b as i32);
    s_cmp_lt_i32 = cmp |a, b| (a as i32) < (b as i32);
    s_cmp_le_i32 = cmp |a, b| (a as i32) <= (b as i32);
    s_cmp_eq_u32 = cmp |a, b| a == b;
    s_cmp_lg_u32 = cmp |a, b| a != b;
    s_cmp_gt_u32 = cmp |a, b| a > b;
    s_cmp_ge_u32 = cmp |a, b| a >= b;
    s_cmp_lt_u32 = cmp |a, b| a < b;
    s_cmp_le_u32 = cmp |a, b| a <= b;
    s_cmp_eq_u64 = cmpw |a, b| a == b;
    s_cmp_lg_u64 = cmpw |a, b| a != b;
    s_bitcmp0_b32 = cmp |a, b| (a >> (b & 31)) & 1 == 0;
    s_bitcmp1_b32 = cmp |a, b| (a >> (b & 31)) & 1 == 1;
    s_bitcmp0_b64 = cmpw |a, b| (a >> (b & 63)) & 1 == 0;
    s_bitcmp1_b64 = cmpw |a, b| (a >> (b & 63)) & 1 == 1;

    // SOPK: a 16-bit immediate, sign-extended for the _i32 forms.
    s_movk_i32 = sopk |_, k, _| (Some(sext16(k)), None);
    s_cmovk_i32 = sopk |_, k, c| (c.then(|| sext16(k)), None);
    s_addk_i32 = sopk |d, k, _| { let r = d.wrapping_add(sext16(k)); (Some(r), Some(add_overflow(d, sext16(k), r))) };
    s_mulk_i32 = sopk |d, k, _| (Some(d.wrapping_mul(sext16(k))), None);
    s_cmpk_eq_i32 = cmpk |a, k| a == sext16(k);
    s_cmpk_lg_i32 = cmpk |a, k| a != sext16(k);
    s_cmpk_gt_i32 = cmpk |a, k| (a as i32) > (sext16(k) as i32);
    s_cmpk_ge_i32 = cmpk |a, k| (a as i32) >= (sext16(k) as i32);
    s_cmpk_lt_i32 = cmpk |a, k| (a as i32) < (sext16(k) as i32);
    s_cmpk_le_i32 = cmpk |a, k| (a as i32) <= (sext16(k) as i32);
    s_cmpk_eq_u32 = cmpk |a, k| a == k;
    s_cmpk_lg_u32 = cmpk |a, k| a != k;
    s_cmpk_gt_u32 = cmpk |a, k| a > k;
    s_cmpk_ge_u32 = cmpk |a, k| a >= k;
    s_cmpk_lt_u32 = cmpk |a, k| a < k;
    s_cmpk_le_u32 = cmpk |a, k| a <= k;

    // EXEC: D = old EXEC, EXEC = op(S0, EXEC) ("not1" inverts EXEC, "not0" S0).
    s_and_saveexec_b32 = saveexec(false) |s, e| s & e;
    s_or_saveexec_b32 = saveexec(false) |s, e| s | e;
    s_xor_saveexec_b32 = saveexec(false) |s, e| s ^ e;
    s_nand_saveexec_b32 = saveexec(false) |s, e| !(s & e);
    s_nor_saveexec_b32 = saveexec(false) |s, e| !(s | e);
    s_xnor_saveexec_b32 = saveexec(false) |s, e| !(s ^ e);
    s_and_not0_saveexec_b32 = saveexec(false) |s, e| !s & e;
    s_and_not1_saveexec_b32 = saveexec(false) |s, e| s & !e;
    s_or_not0_saveexec_b32 = saveexec(false) |s, e| !s | e;
    s_or_not1_saveexec_b32 = saveexec(false) |s, e| s | !e;
    s_and_saveexec_b64 = saveexec(true) |s, e| s & e;
    s_or_saveexec_b64 = saveexec(true) |s, e| s | e;
    s_xor_saveexec_b64 = saveexec(true) |s, e| s ^ e;
    s_nand_saveexec_b64 = saveexec(true) |s, e| !(s & e);
    s_nor_saveexec_b64 = saveexec(true) |s, e| !(s | e);
    s_xnor_saveexec_b64 = saveexec(true) |s, e| !(s ^ e);
    s_and_not0_saveexec_b64 = saveexec(true) |s, e| !s & e;
    s_and_not1_saveexec_b64 = saveexec(true) |s, e| s & !e;
    s_or_not0_saveexec_b64 = saveexec(true) |s, e| !s | e;
    s_or_not1_saveexec_b64 = saveexec(true) |s, e| s | !e;
    // ...and D = the new EXEC.
    s_and_not0_wrexec_b32 = wrexec(false) |s, e| !s & e;
    s_and_not1_wrexec_b32 = wrexec(false) |s, e| s & !e;
    s_and_not0_wrexec_b64 = wrexec(true) |s, e| !s & e;
    s_and_not1_wrexec_b64 = wrexec(true) |s, e| s & !e;
}

/// `s_cmov_b32`: `if SCC { D = S0 }`.
#[inline(always)]
fn sop1cond(w: &mut Wave, i: &Inst, f: impl Fn(u32) -> u32) -> Result {
    if w.scc {
        let a = w.sread(&i.ops[1]);
        w.swrite(&i.ops[0], f(a));
    }
    Ok(())
}

#[inline(always)]
fn sop1condw(w: &mut Wave, i: &Inst, f: impl Fn(u64) -> u64) -> Result {
    if w.scc {
        let a = w.sread64(&i.ops[1]);
        w.swrite64(&i.ops[0], f(a));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::arch::Arch;
    use crate::operand::{EXEC, M0};
    use crate::ops::testing::{run, wave};
    use crate::wave::Wave;

    fn w32() -> Wave {
        wave(Arch::Gfx1100)
    }

    fn w64() -> Wave {
        wave(Arch::Gfx942)
    }

    fn s64(w: &Wave, r: usize) -> u64 {
        u64::from(w.s[r]) | u64::from(w.s[r + 1]) << 32
    }

    fn set64(w: &mut Wave, r: usize, v: u64) {
        w.s[r] = v as u32;
        w.s[r + 1] = (v >> 32) as u32;
    }

    #[test]
    fn names_are_found() {
        for n in ["s_add_u32", "s_and_not1_saveexec_b32", "s_andn2_saveexec_b64", "s_orn2_b64", "s_ff1_i32_b64", "s_flbit_i32_b32", "s_movk_i32"] {
            assert!(crate::ops::implemented(n), "{n}");
        }
        assert!(super::lookup("v_add_nc_u32").is_none());
    }

    #[test]
    fn add_with_carry_chain() {
        // 64-bit add done as s_add_u32 + s_addc_u32 (what s_getpc sequences do).
        let mut w = w32();
        set64(&mut w, 0, 0x0000_0001_ffff_fff0);
        run(&mut w, "s_add_u32 s0, s0, 0x20").unwrap();
        assert_eq!((w.s[0], w.scc), (0x10, true));
        run(&mut w, "s_addc_u32 s1, s1, lit(0x0)").unwrap();
        assert_eq!((s64(&w, 0), w.scc), (0x0000_0002_0000_0010, false));
        // No carry in: SCC clears.
        run(&mut w, "s_add_u32 s0, s0, 1").unwrap();
        assert_eq!((w.s[0], w.scc), (0x11, false));
        // addc with carry in producing carry out.
        w.scc = true;
        w.s[2] = u32::MAX;
        run(&mut w, "s_addc_u32 s2, s2, 0").unwrap();
        assert_eq!((w.s[2], w.scc), (0, true));
    }

    #[test]
    fn sub_with_borrow() {
        let mut w = w32();
        w.s[0] = 5;
        run(&mut w, "s_sub_u32 s1, s0, 6").unwrap();
        assert_eq!((w.s[1], w.scc), (u32::MAX, true));
        run(&mut w, "s_sub_u32 s1, s0, 5").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        w.scc = true;
        run(&mut w, "s_subb_u32 s1, s0, 5").unwrap();
        assert_eq!((w.s[1], w.scc), (u32::MAX, true));
        w.scc = true;
        run(&mut w, "s_subb_u32 s1, s0, 4").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
    }

    #[test]
    fn signed_overflow() {
        let mut w = w32();
        w.s[0] = 0x7fff_ffff;
        run(&mut w, "s_add_i32 s1, s0, 1").unwrap();
        assert_eq!((w.s[1], w.scc), (0x8000_0000, true));
        run(&mut w, "s_add_i32 s1, s0, -1").unwrap();
        assert_eq!((w.s[1], w.scc), (0x7fff_fffe, false));
        w.s[0] = 0x8000_0000;
        run(&mut w, "s_sub_i32 s1, s0, 1").unwrap();
        assert_eq!((w.s[1], w.scc), (0x7fff_ffff, true));
        run(&mut w, "s_sub_i32 s1, s0, -1").unwrap();
        assert_eq!((w.s[1], w.scc), (0x8000_0001, false));
        // s_addk_i32: the stack-pointer bump.
        w.s[32] = 0x100;
        run(&mut w, "s_addk_i32 s32, 0x50").unwrap();
        assert_eq!((w.s[32], w.scc), (0x150, false));
        run(&mut w, "s_addk_i32 s32, 0xffb0").unwrap();
        assert_eq!(w.s[32], 0x100);
        w.s[3] = 0x7fff_fff0;
        run(&mut w, "s_addk_i32 s3, 0x10").unwrap();
        assert_eq!((w.s[3], w.scc), (0x8000_0000, true));
    }

    #[test]
    fn multiplies() {
        let mut w = w32();
        w.s[0] = 0xffff_fffe; // -2
        w.s[1] = 3;
        run(&mut w, "s_mul_i32 s2, s0, s1").unwrap();
        assert_eq!(w.s[2], (-6i32) as u32);
        run(&mut w, "s_mul_hi_u32 s2, s0, s1").unwrap();
        assert_eq!(w.s[2], 2);
        run(&mut w, "s_mul_hi_i32 s2, s0, s1").unwrap();
        assert_eq!(w.s[2], u32::MAX);
        w.s[4] = 7;
        run(&mut w, "s_mulk_i32 s4, 0xfffd").unwrap();
        assert_eq!(w.s[4], (-21i32) as u32);
        w.scc = true;
        run(&mut w, "s_mul_i32 s4, s4, 0").unwrap();
        assert!(w.scc, "s_mul_i32 leaves SCC");
    }

    #[test]
    fn bitwise_and_scc() {
        let mut w = w32();
        w.s[0] = 0xf0;
        run(&mut w, "s_and_b32 s1, s0, 0x0f").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        run(&mut w, "s_or_b32 s1, s0, 0x0f").unwrap();
        assert_eq!((w.s[1], w.scc), (0xff, true));
        run(&mut w, "s_and_not1_b32 s1, -1, s0").unwrap();
        assert_eq!(w.s[1], !0xf0);
        run(&mut w, "s_or_not1_b32 s1, 0, -1").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        run(&mut w, "s_nor_b32 s1, s0, 0").unwrap();
        assert_eq!(w.s[1], !0xf0);
        run(&mut w, "s_xnor_b32 s1, s0, s0").unwrap();
        assert_eq!(w.s[1], u32::MAX);
        run(&mut w, "s_nand_b32 s1, -1, -1").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        run(&mut w, "s_not_b32 s1, s0").unwrap();
        assert_eq!((w.s[1], w.scc), (!0xf0, true));
        // 64-bit, wave64 masks in pairs.
        let mut w = w64();
        set64(&mut w, 4, 0xffff_0000_0000_ffff);
        run(&mut w, "s_and_b64 s[6:7], s[4:5], exec").unwrap();
        assert_eq!((s64(&w, 6), w.scc), (0xffff_0000_0000_ffff, true));
        run(&mut w, "s_andn2_b64 s[6:7], exec, s[4:5]").unwrap();
        assert_eq!(s64(&w, 6), 0x0000_ffff_ffff_0000);
        run(&mut w, "s_xor_b64 s[6:7], s[4:5], s[4:5]").unwrap();
        assert_eq!((s64(&w, 6), w.scc), (0, false));
        run(&mut w, "s_orn2_b64 s[6:7], 0, -1").unwrap();
        assert_eq!(s64(&w, 6), 0);
        run(&mut w, "s_not_b64 s[6:7], s[4:5]").unwrap();
        assert_eq!(s64(&w, 6), 0x0000_ffff_ffff_0000);
        // A 32-bit literal is zero-extended for 64-bit ops.
        run(&mut w, "s_or_b64 s[6:7], 0, 0x80000000").unwrap();
        assert_eq!(s64(&w, 6), 0x8000_0000);
        run(&mut w, "s_nor_b64 s[6:7], s[4:5], 0").unwrap();
        assert_eq!(s64(&w, 6), 0x0000_ffff_ffff_0000);
    }

    #[test]
    fn shifts() {
        let mut w = w32();
        w.s[0] = 0x8000_0001;
        run(&mut w, "s_lshl_b32 s1, s0, 1").unwrap();
        assert_eq!((w.s[1], w.scc), (2, true));
        run(&mut w, "s_lshl_b32 s1, s0, 33").unwrap(); // amount mod 32
        assert_eq!(w.s[1], 2);
        run(&mut w, "s_lshr_b32 s1, s0, 31").unwrap();
        assert_eq!(w.s[1], 1);
        run(&mut w, "s_ashr_i32 s1, s0, 31").unwrap();
        assert_eq!(w.s[1], u32::MAX);
        run(&mut w, "s_lshr_b32 s1, 1, 1").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        set64(&mut w, 2, 0x8000_0000_0000_0001);
        run(&mut w, "s_lshl_b64 s[4:5], s[2:3], 3").unwrap();
        assert_eq!(s64(&w, 4), 8);
        run(&mut w, "s_lshr_b64 s[4:5], s[2:3], 32").unwrap();
        assert_eq!(s64(&w, 4), 0x8000_0000);
        run(&mut w, "s_ashr_i64 s[4:5], s[2:3], 63").unwrap();
        assert_eq!(s64(&w, 4), u64::MAX);
        w.s[0] = 0x8000_0000;
        run(&mut w, "s_lshl1_add_u32 s1, s0, 1").unwrap();
        assert_eq!((w.s[1], w.scc), (1, true), "the bit shifted out is a carry");
        run(&mut w, "s_lshl4_add_u32 s1, 2, 3").unwrap();
        assert_eq!((w.s[1], w.scc), (35, false));
    }

    #[test]
    fn bit_fields() {
        let mut w = w32();
        w.s[0] = 0x0000_ff00;
        run(&mut w, "s_bfe_u32 s1, s0, 0x80004").unwrap(); // 8 bits from 4
        assert_eq!(w.s[1], 0xf0);
        run(&mut w, "s_bfe_i32 s1, s0, 0x40008").unwrap(); // 4 bits from 8: 0xf → -1
        assert_eq!((w.s[1], w.scc), (u32::MAX, true));
        run(&mut w, "s_bfe_i32 s1, s0, 0x8").unwrap(); // width 0
        assert_eq!((w.s[1], w.scc), (0, false));
        // What our code objects do: sign-extend the low 32 bits to 64.
        set64(&mut w, 2, 0x1234_5678_8000_0000);
        run(&mut w, "s_bfe_i64 s[6:7], s[2:3], 0x200000").unwrap();
        assert_eq!(s64(&w, 6), 0xffff_ffff_8000_0000);
        run(&mut w, "s_bfe_u64 s[6:7], s[2:3], 0x100020").unwrap();
        assert_eq!(s64(&w, 6), 0x5678);
        run(&mut w, "s_bfe_u64 s[6:7], s[2:3], 0x400000").unwrap(); // width 64
        assert_eq!(s64(&w, 6), 0x1234_5678_8000_0000);
        run(&mut w, "s_bfm_b32 s1, 4, 8").unwrap();
        assert_eq!(w.s[1], 0xf00);
        run(&mut w, "s_bfm_b64 s[4:5], 8, 32").unwrap();
        assert_eq!(s64(&w, 4), 0xff_0000_0000);
        run(&mut w, "s_brev_b32 s1, 1").unwrap();
        assert_eq!(w.s[1], 0x8000_0000);
        run(&mut w, "s_brev_b64 s[4:5], 1").unwrap();
        assert_eq!(s64(&w, 4), 1 << 63);
        w.s[1] = 0;
        run(&mut w, "s_bitset1_b32 s1, 37").unwrap(); // bit 5
        assert_eq!(w.s[1], 0x20);
        run(&mut w, "s_bitset0_b32 s1, 5").unwrap();
        assert_eq!(w.s[1], 0);
        set64(&mut w, 4, 0);
        run(&mut w, "s_bitset1_b64 s[4:5], 40").unwrap();
        assert_eq!(s64(&w, 4), 1 << 40);
        run(&mut w, "s_bitset0_b64 s[4:5], 40").unwrap();
        assert_eq!(s64(&w, 4), 0);
        run(&mut w, "s_bitreplicate_b64_b32 s[4:5], 5").unwrap();
        assert_eq!(s64(&w, 4), 0b11_00_11);
    }

    #[test]
    fn counts_and_searches() {
        let mut w = w32();
        w.s[0] = 0x0000_00f0;
        run(&mut w, "s_bcnt1_i32_b32 s1, s0").unwrap();
        assert_eq!((w.s[1], w.scc), (4, true));
        run(&mut w, "s_bcnt1_i32_b32 s1, 0").unwrap();
        assert_eq!((w.s[1], w.scc), (0, false));
        run(&mut w, "s_bcnt0_i32_b32 s1, s0").unwrap();
        assert_eq!(w.s[1], 28);
        set64(&mut w, 2, 0xffff_0000_0000_0000);
        run(&mut w, "s_bcnt1_i32_b64 s1, s[2:3]").unwrap();
        assert_eq!(w.s[1], 16);
        run(&mut w, "s_bcnt0_i32_b64 s1, s[2:3]").unwrap();
        assert_eq!(w.s[1], 48);
        run(&mut w, "s_ctz_i32_b32 s1, s0").unwrap();
        assert_eq!(w.s[1], 4);
        run(&mut w, "s_ctz_i32_b32 s1, 0").unwrap();
        assert_eq!(w.s[1], u32::MAX);
        run(&mut w, "s_ff1_i32_b64 s1, s[2:3]").unwrap(); // gfx9 name
        assert_eq!(w.s[1], 48);
        run(&mut w, "s_ff0_i32_b32 s1, 0xff").unwrap();
        assert_eq!(w.s[1], 8);
        run(&mut w, "s_clz_i32_u32 s1, s0").unwrap();
        assert_eq!(w.s[1], 24);
        run(&mut w, "s_flbit_i32_b32 s1, 0").unwrap(); // gfx9 name
        assert_eq!(w.s[1], u32::MAX);
        run(&mut w, "s_clz_i32_u64 s1, s[2:3]").unwrap();
        assert_eq!(w.s[1], 0);
        set64(&mut w, 2, 1);
        run(&mut w, "s_clz_i32_u64 s1, s[2:3]").unwrap();
        assert_eq!(w.s[1], 63);
        // The ISA guide's examples for s_flbit_i32 / s_cls_i32.
        for (v, n) in [(0x4000_0000u32, 1u32), (0x8000_0000, 1), (0x0fff_ffff, 4), (0xffff_0000, 16), (0, u32::MAX), (u32::MAX, u32::MAX)] {
            w.s[0] = v;
            run(&mut w, "s_cls_i32 s1, s0").unwrap();
            assert_eq!(w.s[1], n, "cls {v:#x}");
        }
        set64(&mut w, 2, 0xffff_ffff_0000_0000);
        run(&mut w, "s_flbit_i32_i64 s1, s[2:3]").unwrap();
        assert_eq!(w.s[1], 32);
    }

    #[test]
    fn min_max_abs_sext() {
        let mut w = w32();
        w.s[0] = (-5i32) as u32;
        run(&mut w, "s_min_i32 s1, s0, 3").unwrap();
        assert_eq!((w.s[1], w.scc), ((-5i32) as u32, true));
        run(&mut w, "s_min_u32 s1, s0, 3").unwrap();
        assert_eq!((w.s[1], w.scc), (3, false));
        run(&mut w, "s_max_i32 s1, s0, 3").unwrap();
        assert_eq!((w.s[1], w.scc), (3, false));
        run(&mut w, "s_max_u32 s1, s0, 3").unwrap();
        assert_eq!((w.s[1], w.scc), ((-5i32) as u32, true));
        run(&mut w, "s_max_i32 s1, 3, 3").unwrap();
        assert!(w.scc, "max: SCC = S0 >= S1");
        run(&mut w, "s_abs_i32 s1, s0").unwrap();
        assert_eq!((w.s[1], w.scc), (5, true));
        run(&mut w, "s_abs_i32 s1, 0x80000000").unwrap();
        assert_eq!(w.s[1], 0x8000_0000);
        run(&mut w, "s_absdiff_i32 s1, 3, s0").unwrap();
        assert_eq!(w.s[1], 8);
        run(&mut w, "s_sext_i32_i8 s1, 0x180").unwrap();
        assert_eq!(w.s[1], 0xffff_ff80);
        run(&mut w, "s_sext_i32_i16 s1, 0x7fff").unwrap();
        assert_eq!(w.s[1], 0x7fff);
    }

    #[test]
    fn moves_and_selects() {
        let mut w = w32();
        run(&mut w, "s_movk_i32 s1, 0x80").unwrap();
        assert_eq!(w.s[1], 0x80);
        run(&mut w, "s_movk_i32 s1, 0xfffc").unwrap();
        assert_eq!(w.s[1], (-4i32) as u32);
        w.scc = false;
        run(&mut w, "s_cmovk_i32 s1, 0x5").unwrap();
        assert_eq!(w.s[1], (-4i32) as u32);
        run(&mut w, "s_cmov_b32 s1, 5").unwrap();
        assert_eq!(w.s[1], (-4i32) as u32);
        run(&mut w, "s_cselect_b32 s3, s1, 0").unwrap();
        assert_eq!(w.s[3], 0);
        w.scc = true;
        run(&mut w, "s_cmovk_i32 s1, 0x5").unwrap();
        assert_eq!(w.s[1], 5);
        run(&mut w, "s_cselect_b32 s3, s1, 0").unwrap();
        assert_eq!(w.s[3], 5);
        run(&mut w, "s_cselect_b64 s[4:5], -1, 0").unwrap();
        assert_eq!(s64(&w, 4), u64::MAX);
        run(&mut w, "s_cmov_b64 s[4:5], 0").unwrap();
        assert_eq!(s64(&w, 4), 0);
        run(&mut w, "s_mov_b64 s[4:5], -2").unwrap();
        assert_eq!(s64(&w, 4), (-2i64) as u64);
        run(&mut w, "s_mov_b32 s2, 0x1234").unwrap();
        assert_eq!(w.s[2], 0x1234);
        run(&mut w, "s_pack_ll_b32_b16 s1, 0x11112222, 0x33334444").unwrap();
        assert_eq!(w.s[1], 0x4444_2222);
        run(&mut w, "s_pack_lh_b32_b16 s1, 0x11112222, 0x33334444").unwrap();
        assert_eq!(w.s[1], 0x3333_2222);
        run(&mut w, "s_pack_hh_b32_b16 s1, 0x11112222, 0x33334444").unwrap();
        assert_eq!(w.s[1], 0x3333_1111);
        run(&mut w, "s_pack_hl_b32_b16 s1, 0x11112222, 0x33334444").unwrap();
        assert_eq!(w.s[1], 0x4444_1111);
        // Relative moves index from M0.
        w.s[M0 as usize] = 2;
        w.s[12] = 77;
        run(&mut w, "s_movrels_b32 s0, s10").unwrap();
        assert_eq!(w.s[0], 77);
        run(&mut w, "s_movreld_b32 s20, 9").unwrap();
        assert_eq!(w.s[22], 9);
    }

    #[test]
    fn comparisons() {
        let mut w = w32();
        w.s[0] = (-1i32) as u32;
        let cases = [
            ("s_cmp_eq_u32 s0, -1", true),
            ("s_cmp_lg_u32 s0, -1", false),
            ("s_cmp_gt_i32 s0, 0", false),
            ("s_cmp_gt_u32 s0, 0", true),
            ("s_cmp_ge_i32 s0, -1", true),
            ("s_cmp_lt_i32 s0, 0", true),
            ("s_cmp_lt_u32 s0, 0", false),
            ("s_cmp_le_i32 s0, -2", false),
            ("s_cmp_le_u32 s0, -1", true),
            ("s_cmp_ge_u32 s0, 0", true),
            ("s_cmp_eq_i32 s0, 0xffffffff", true),
            ("s_cmp_lg_i32 s0, 0", true),
            ("s_bitcmp0_b32 s0, 5", false),
            ("s_bitcmp1_b32 s0, 31", true),
            ("s_bitcmp1_b32 0x20, 37", true),
            ("s_cmpk_eq_i32 s0, 0xffff", true),
            ("s_cmpk_eq_u32 s0, 0xffff", false),
            ("s_cmpk_lt_u32 s0, 0xfe0", false),
            ("s_cmpk_lt_i32 s0, 0x0", true),
            ("s_cmpk_gt_u32 s0, 0xffff", true),
            ("s_cmpk_ge_i32 s0, 0xffff", true),
            ("s_cmpk_le_u32 s0, 0x1", false),
            ("s_cmpk_lg_i32 s0, 0x3e8", true),
            ("s_cmpk_lg_u32 s0, 0x3e8", true),
            ("s_cmpk_gt_i32 s0, 0x0", false),
            ("s_cmpk_le_i32 s0, 0xffff", true),
            ("s_cmpk_ge_u32 s0, 0x0", true),
        ];
        for (asm, want) in cases {
            w.scc = !want;
            run(&mut w, asm).unwrap();
            assert_eq!(w.scc, want, "{asm}");
        }
        set64(&mut w, 2, 0x1_0000_0000);
        run(&mut w, "s_cmp_eq_u64 s[2:3], 0").unwrap();
        assert!(!w.scc, "u64 compares all 64 bits");
        run(&mut w, "s_cmp_lg_u64 s[2:3], 0").unwrap();
        assert!(w.scc);
        run(&mut w, "s_bitcmp1_b64 s[2:3], 32").unwrap();
        assert!(w.scc);
        run(&mut w, "s_bitcmp0_b64 s[2:3], 32").unwrap();
        assert!(!w.scc);
    }

    #[test]
    fn saveexec_wave32() {
        // if/else as our code objects do it: and_saveexec, then and_not1_saveexec.
        let mut w = w32();
        w.s[EXEC as usize] = 0x0000_ffff;
        w.s[4] = 0x00ff_00ff;
        run(&mut w, "s_and_saveexec_b32 s0, s4").unwrap();
        assert_eq!((w.s[0], w.exec(), w.scc), (0x0000_ffff, 0xff, true));
        run(&mut w, "s_and_not1_saveexec_b32 s0, s0").unwrap();
        // EXEC = saved & ~EXEC: the lanes that took the else side.
        assert_eq!((w.s[0], w.exec(), w.scc), (0xff, 0xff00, true));
        run(&mut w, "s_or_b32 exec_lo, exec_lo, s0").unwrap();
        assert_eq!(w.exec(), 0xffff);
        w.s[4] = 0;
        run(&mut w, "s_and_saveexec_b32 s1, s4").unwrap();
        assert_eq!((w.s[1], w.exec(), w.scc), (0xffff, 0, false));
        run(&mut w, "s_or_saveexec_b32 s1, -1").unwrap();
        assert_eq!((w.s[1], w.exec(), w.scc), (0, 0xffff_ffff, true));
        run(&mut w, "s_xor_saveexec_b32 s1, 0xffff").unwrap();
        assert_eq!(w.exec(), 0xffff_0000);
        run(&mut w, "s_or_not1_saveexec_b32 s1, 0").unwrap();
        assert_eq!(w.exec(), 0x0000_ffff);
        run(&mut w, "s_and_not0_saveexec_b32 s1, 0xff").unwrap();
        assert_eq!(w.exec(), 0x0000_ff00);
        run(&mut w, "s_or_not0_saveexec_b32 s1, -1").unwrap();
        assert_eq!(w.exec(), 0x0000_ff00);
        run(&mut w, "s_nand_saveexec_b32 s1, -1").unwrap();
        assert_eq!(w.exec(), 0xffff_00ff);
        run(&mut w, "s_nor_saveexec_b32 s1, 0").unwrap();
        assert_eq!(w.exec(), 0x0000_ff00);
        run(&mut w, "s_xnor_saveexec_b32 s1, 0").unwrap();
        assert_eq!(w.exec(), 0xffff_00ff);
        assert_eq!(w.s[EXEC as usize + 1], 0, "wave32: exec_hi untouched");
        run(&mut w, "s_and_not1_wrexec_b32 s1, -1").unwrap();
        assert_eq!((w.s[1], w.exec()), (0x0000_ff00, 0x0000_ff00));
        run(&mut w, "s_and_not0_wrexec_b32 s1, 0xf000").unwrap();
        assert_eq!((w.s[1], w.exec(), w.scc), (0x0f00, 0x0f00, true));
    }

    #[test]
    fn saveexec_wave64() {
        let mut w = w64();
        set64(&mut w, 4, 0xffff_0000_0000_0001);
        run(&mut w, "s_and_saveexec_b64 s[0:1], s[4:5]").unwrap();
        assert_eq!((s64(&w, 0), w.exec(), w.scc), (u64::MAX, 0xffff_0000_0000_0001, true));
        run(&mut w, "s_andn2_saveexec_b64 s[0:1], s[0:1]").unwrap(); // gfx9 name
        assert_eq!((s64(&w, 0), w.exec()), (0xffff_0000_0000_0001, 0x0000_ffff_ffff_fffe));
        run(&mut w, "s_or_saveexec_b64 s[2:3], s[0:1]").unwrap();
        assert_eq!((s64(&w, 2), w.exec()), (0x0000_ffff_ffff_fffe, u64::MAX));
        run(&mut w, "s_xor_saveexec_b64 s[2:3], -1").unwrap();
        assert_eq!((w.exec(), w.scc), (0, false));
        run(&mut w, "s_orn2_saveexec_b64 s[2:3], 0").unwrap();
        assert_eq!(w.exec(), u64::MAX);
        run(&mut w, "s_andn1_saveexec_b64 s[2:3], 0xffff").unwrap();
        assert_eq!(w.exec(), !0xffff);
        run(&mut w, "s_orn1_saveexec_b64 s[2:3], -1").unwrap();
        assert_eq!(w.exec(), !0xffff);
        run(&mut w, "s_andn2_wrexec_b64 s[2:3], -1").unwrap();
        assert_eq!((s64(&w, 2), w.exec()), (0xffff, 0xffff));
        run(&mut w, "s_andn1_wrexec_b64 s[2:3], 0xff").unwrap();
        assert_eq!((s64(&w, 2), w.exec()), (0xff00, 0xff00));
        run(&mut w, "s_nand_saveexec_b64 s[2:3], 0").unwrap();
        assert_eq!(w.exec(), u64::MAX);
        run(&mut w, "s_nor_saveexec_b64 s[2:3], 0").unwrap();
        assert_eq!(w.exec(), 0);
        run(&mut w, "s_xnor_saveexec_b64 s[2:3], 0").unwrap();
        assert_eq!(w.exec(), u64::MAX);
        // The 32-bit forms on wave64 touch exec_lo only.
        run(&mut w, "s_and_saveexec_b32 s2, 0").unwrap();
        assert_eq!(w.exec(), 0xffff_ffff_0000_0000);
    }

    #[test]
    fn wqm_and_quadmask() {
        let mut w = w64();
        run(&mut w, "s_wqm_b32 s0, 0x10002").unwrap();
        assert_eq!((w.s[0], w.scc), (0xf000f, true));
        set64(&mut w, 2, 0x8000_0000_0000_0010);
        run(&mut w, "s_wqm_b64 s[4:5], s[2:3]").unwrap();
        assert_eq!(s64(&w, 4), 0xf000_0000_0000_00f0);
        run(&mut w, "s_quadmask_b64 s[4:5], s[2:3]").unwrap();
        assert_eq!(s64(&w, 4), 0x8002);
        run(&mut w, "s_quadmask_b32 s0, 0").unwrap();
        assert_eq!((w.s[0], w.scc), (0, false));
    }
}
