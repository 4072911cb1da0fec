//! Cross-lane operations: reading and writing one lane
//! (`v_readfirstlane`, `v_readlane`, `v_writelane`), accumulation-register
//! moves (gfx90a/gfx942), lane permutes (`v_permlane*`), DPP (any vector
//! operation with a `_dpp` suffix: its first source comes from another
//! lane), and gfx11 dual-issue `v_dual_X :: v_dual_Y` pairs.

use super::vfloat::{bf16_to_f32, f16_to_f32, f32_to_f64, f64_to_f32, minmax};
use super::{Exec, canonical, find};
use crate::decode::{Inst, Mods};
use crate::operand::Kind;
use crate::wave::{Result, Wave};

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    if let Some(op) = name.strip_prefix("v_dual_") {
        return vopd_code(op).map(|c| (dual_half as Exec, c | VOPD_KNOWN));
    }
    if let Some(base) = name.strip_suffix("_dpp") {
        return find(base).map(|_| (dpp as Exec, 0));
    }
    match name {
        "v_readfirstlane_b32" => Some((readfirstlane, 0)),
        "v_readlane_b32" => Some((readlane, 0)),
        "v_writelane_b32" => Some((writelane, 0)),
        "v_accvgpr_read_b32" | "v_accvgpr_write_b32" | "v_accvgpr_mov_b32" | "v_accvgpr_read" | "v_accvgpr_write" => {
            Some((accmov, 0))
        }
        "v_permlane16_b32" => Some((permlane16, 0)),
        "v_permlanex16_b32" => Some((permlane16, 1)),
        "v_permlane64_b32" => Some((permlane64, 0)),
        "v_permlane16_swap_b32" => Some((permlane_swap, 16)),
        "v_permlane32_swap_b32" => Some((permlane_swap, 32)),
        _ => None,
    }
}

// ------------------------------------------------------------ one lane

/// `v_readfirstlane_b32 sdst, vsrc`: the first active lane (lane 0 when
/// EXEC is 0).
fn readfirstlane(w: &mut Wave, i: &Inst) -> Result {
    let e = w.exec();
    let lane = if e == 0 { 0 } else { e.trailing_zeros() as usize };
    let v = w.vread(&i.ops[1], lane);
    w.swrite(&i.ops[0], v);
    Ok(())
}

/// `v_readlane_b32 sdst, vsrc, lane` (lane modulo the wave size).
fn readlane(w: &mut Wave, i: &Inst) -> Result {
    let lane = w.sread(&i.ops[2]) as usize & (w.lanes - 1);
    let v = w.vread(&i.ops[1], lane);
    w.swrite(&i.ops[0], v);
    Ok(())
}

/// `v_writelane_b32 vdst, ssrc, lane`: writes that lane whatever EXEC says.
fn writelane(w: &mut Wave, i: &Inst) -> Result {
    let lane = w.sread(&i.ops[2]) as usize & (w.lanes - 1);
    let v = w.sread(&i.ops[1]);
    w.vwrite(&i.ops[0], lane, v);
    Ok(())
}

/// `v_accvgpr_read/write/mov_b32`: a move between VGPRs, AccVGPRs and
/// constants, in the active lanes (`vread`/`vwrite` know `a0`).
fn accmov(w: &mut Wave, i: &Inst) -> Result {
    let (d, s) = (i.ops[0], i.ops[1]);
    for l in w.active() {
        let v = w.vread(&s, l);
        w.vwrite(&d, l, v);
    }
    Ok(())
}

// ------------------------------------------------------------ permutes

/// A copy of a source in every lane, taken before any write.
fn column(w: &Wave, o: &crate::operand::Operand) -> [u32; 64] {
    let mut c = [0u32; 64];
    for (l, x) in c.iter_mut().enumerate().take(w.lanes) {
        *x = w.vread(o, l);
    }
    c
}

/// gfx11 `v_permlane16_b32 vdst, vsrc, sel_lo, sel_hi` (aux 1: `x16`, from
/// the other row of each pair): in each row of 16 lanes, lane i takes the
/// lane the i-th nibble of `{sel_hi, sel_lo}` names.
fn permlane16(w: &mut Wave, i: &Inst) -> Result {
    let src = column(w, &i.ops[1]);
    let sel = u64::from(w.sread(&i.ops[2])) | u64::from(w.sread(&i.ops[3])) << 32;
    for l in w.active() {
        let row = if i.aux == 1 { (l / 16) ^ 1 } else { l / 16 };
        let from = row * 16 + (sel >> (4 * (l % 16)) & 0xf) as usize;
        w.vwrite(&i.ops[0], l, src[from]);
    }
    Ok(())
}

/// gfx11 `v_permlane64_b32`: wave64 halves swapped; nothing on wave32.
fn permlane64(w: &mut Wave, i: &Inst) -> Result {
    if w.lanes != 64 {
        return Ok(());
    }
    let src = column(w, &i.ops[1]);
    for l in w.active() {
        w.vwrite(&i.ops[0], l, src[l ^ 32]);
    }
    Ok(())
}

/// gfx950 `v_permlane16_swap_b32 vdst, vsrc` (aux 16) and `_32_` (aux
/// 32): each lane of `vsrc` in the lower half of a block of 2×aux lanes
/// trades with the matching lane of `vdst` in the upper half.
fn permlane_swap(w: &mut Wave, i: &Inst) -> Result {
    let (d, s) = (i.ops[0], i.ops[1]);
    let n = i.aux as usize;
    for block in (0..w.lanes).step_by(2 * n) {
        for l in block..block + n {
            let (a, b) = (w.vread(&s, l), w.vread(&d, l + n));
            w.vwrite(&s, l, b);
            w.vwrite(&d, l + n, a);
        }
    }
    Ok(())
}

// ------------------------------------------------------------ DPP

/// Where a DPP16/DPP8 lane takes its first source from.
#[derive(Clone, Copy, Debug)]
enum Ctrl {
    Quad([u8; 4]),
    RowShl(usize),
    RowShr(usize),
    RowRor(usize),
    RowMirror,
    RowHalfMirror,
    /// gfx9 `row_bcast:15`: lane 15 of each row to the next row.
    Bcast15,
    /// gfx9 `row_bcast:31`: lane 31 to rows 2 and 3.
    Bcast31,
    WaveShl,
    WaveShr,
    WaveRol,
    WaveRor,
    /// `row_share:n` (gfx10+), `row_newbcast:n` (gfx90a): lane n of the row.
    Share(usize),
    /// `row_xmask:n`: lane (i ^ n) of the row.
    Xmask(usize),
    Dpp8([u8; 8]),
}

fn num(v: &str) -> usize {
    match v.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16).unwrap_or(0),
        None => v.parse().unwrap_or(0),
    }
}

fn list<const N: usize>(v: &str) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, x) in out.iter_mut().zip(v.trim_matches(|c| c == '[' || c == ']').split(',')) {
        *o = x.trim().parse().unwrap_or(0);
    }
    out
}

fn dpp_ctrl(m: &Mods) -> Option<Ctrl> {
    m.other.iter().find_map(|(k, v)| {
        let n = num(v);
        Some(match &**k {
            "quad_perm" => Ctrl::Quad(list(v)),
            "dpp8" => Ctrl::Dpp8(list(v)),
            "row_shl" => Ctrl::RowShl(n),
            "row_shr" => Ctrl::RowShr(n),
            "row_ror" => Ctrl::RowRor(n),
            "row_mirror" => Ctrl::RowMirror,
            "row_half_mirror" => Ctrl::RowHalfMirror,
            "row_bcast" if n == 15 => Ctrl::Bcast15,
            "row_bcast" => Ctrl::Bcast31,
            "wave_shl" => Ctrl::WaveShl,
            "wave_shr" => Ctrl::WaveShr,
            "wave_rol" => Ctrl::WaveRol,
            "wave_ror" => Ctrl::WaveRor,
            "row_share" | "row_newbcast" => Ctrl::Share(n),
            "row_xmask" => Ctrl::Xmask(n),
            _ => return None,
        })
    })
}

/// The lane `l` reads, or None where that is outside its row or the wave.
fn dpp_source(c: Ctrl, l: usize, lanes: usize) -> Option<usize> {
    let (row, i) = (l & !15, l & 15);
    match c {
        Ctrl::Quad(q) => Some((l & !3) + q[l & 3] as usize),
        Ctrl::Dpp8(q) => Some((l & !7) + q[l & 7] as usize),
        Ctrl::RowShl(n) => (i + n < 16).then_some(l + n),
        Ctrl::RowShr(n) => (i >= n).then(|| l - n),
        Ctrl::RowRor(n) => Some(row + ((i + 16 - (n & 15)) & 15)),
        Ctrl::RowMirror => Some(row + 15 - i),
        Ctrl::RowHalfMirror => Some(row + (i & 8) + 7 - (i & 7)),
        Ctrl::Bcast15 => (row > 0).then(|| row - 1),
        Ctrl::Bcast31 => (l >= 32).then_some(31),
        Ctrl::WaveShl => (l + 1 < lanes).then_some(l + 1),
        Ctrl::WaveShr => (l > 0).then(|| l - 1),
        Ctrl::WaveRol => Some((l + 1) % lanes),
        Ctrl::WaveRor => Some((l + lanes - 1) % lanes),
        Ctrl::Share(n) => Some(row + (n & 15)),
        Ctrl::Xmask(n) => Some(row + (i ^ (n & 15))),
    }
}

/// `X_dpp`: X with its first source read through the DPP control.
///
/// The permuted source is built as an extra VGPR past the wave's file,
/// and X runs on a copy of the instruction pointing at it with EXEC
/// narrowed to the lanes DPP lets it write: lanes a row or bank mask
/// disables, and lanes whose source is invalid (outside the row or wave,
/// or inactive without `fi:1`) unless `bound_ctrl` makes them read 0.
fn dpp(w: &mut Wave, i: &Inst) -> Result {
    let base = i.mnemonic.strip_suffix("_dpp").unwrap_or(&i.mnemonic);
    let (Some((exec, aux)), Some(ctrl)) = (find(base), dpp_ctrl(&i.mods)) else {
        return super::unknown(w, i);
    };
    let name = canonical(base);
    // The first source follows the destinations: none for a gfx11 v_cmpx,
    // a VGPR and a carry mask for the `_co_` ops.
    let src0 = if name.starts_with("v_cmp") {
        usize::from(!i.ops.first().is_some_and(|o| matches!(o.kind, Kind::Vector { .. })))
    } else if name.contains("_co_") {
        2
    } else {
        1
    };
    let Some(&s0) = i.ops.get(src0) else { return super::unknown(w, i) };
    // A single VGPR: 64-bit DPP (gfx90a `row_newbcast` on f64) is not done.
    let Kind::Vector { index, half, count: 1 } = s0.kind else { return super::unknown(w, i) };
    let m = &i.mods;
    let row_mask = m.get("row_mask").map_or(0xf, num);
    let bank_mask = m.get("bank_mask").map_or(0xf, num);
    // LLVM prints `bound_ctrl:0` for the bit set before gfx11 (a historical
    // quirk), `bound_ctrl:1` from gfx11 on.
    let bound = match m.get("bound_ctrl") {
        Some("1") => true,
        Some(_) => !w.arch.is_rdna(),
        None => false,
    };
    let fi = m.get("fi").is_some_and(|v| v != "0");
    let is_dpp8 = matches!(ctrl, Ctrl::Dpp8(_));

    let exec_mask = w.exec();
    let src = w.v[index as usize];
    let mut col = [0u32; 64];
    let mut write = 0u64;
    for l in w.active() {
        if !is_dpp8 && (row_mask >> (l / 16) & 1 == 0 || bank_mask >> ((l & 15) / 4) & 1 == 0) {
            continue;
        }
        let from = dpp_source(ctrl, l, w.lanes).filter(|&s| s < w.lanes);
        match from {
            Some(s) if fi || exec_mask >> s & 1 != 0 => col[l] = src[s],
            // DPP8 reads 0 from an inactive lane.
            Some(_) if is_dpp8 => col[l] = 0,
            _ if bound => col[l] = 0,
            _ => continue,
        }
        write |= 1 << l;
    }

    let mut j = i.clone();
    j.exec = exec;
    j.aux = aux;
    j.mnemonic = base.into();
    let tmp = w.v.len();
    j.ops[src0].kind = Kind::Vector { index: tmp as u16, count: 1, half };
    w.v.push(col);
    w.set_exec(write);
    let r = exec(w, &j);
    w.v.truncate(tmp);
    // v_cmpx writes EXEC itself.
    if !name.starts_with("v_cmpx") {
        w.set_exec(exec_mask);
    }
    r
}

// ------------------------------------------------------------ VOPD

// The RDNA3 VOPD operations (the ISA's opcode numbers).
const FMAC: u32 = 0;
const FMAAK: u32 = 1;
const FMAMK: u32 = 2;
const MUL: u32 = 3;
const ADD: u32 = 4;
const SUB: u32 = 5;
const SUBREV: u32 = 6;
const MUL_DX9: u32 = 7;
const MOV: u32 = 8;
const CNDMASK: u32 = 9;
const MAX: u32 = 10;
const MIN: u32 = 11;
const DOT2_F16: u32 = 12;
const DOT2_BF16: u32 = 13;
const ADD_U32: u32 = 16;
const LSHLREV: u32 = 17;
const AND: u32 = 18;
/// Set in a `v_dual_*` half's `aux` when we know the operation: the
/// decoder pairs halves whatever their lookup said.
const VOPD_KNOWN: u32 = 0x100;

fn vopd_code(op: &str) -> Option<u32> {
    Some(match op {
        "fmac_f32" => FMAC,
        "fmaak_f32" => FMAAK,
        "fmamk_f32" => FMAMK,
        "mul_f32" => MUL,
        "add_f32" => ADD,
        "sub_f32" => SUB,
        "subrev_f32" => SUBREV,
        "mul_dx9_zero_f32" => MUL_DX9,
        "mov_b32" => MOV,
        "cndmask_b32" => CNDMASK,
        "max_f32" | "max_num_f32" => MAX,
        "min_f32" | "min_num_f32" => MIN,
        "dot2acc_f32_f16" => DOT2_F16,
        "dot2acc_f32_bf16" => DOT2_BF16,
        "add_nc_u32" => ADD_U32,
        "lshlrev_b32" => LSHLREV,
        "and_b32" => AND,
        _ => return None,
    })
}

/// One VOPD half's result in lane `l` (its destination is `ops[0]`).
fn vopd_eval(w: &Wave, h: &Inst, l: usize) -> u32 {
    let o = &h.ops;
    let f = |n: usize| w.fread(&o[n], l);
    let u = |n: usize| w.vread(&o[n], l);
    let r = match h.aux & !VOPD_KNOWN {
        MOV => return u(1),
        CNDMASK => return if w.vcc() >> l & 1 != 0 { u(2) } else { u(1) },
        ADD_U32 => return u(1).wrapping_add(u(2)),
        LSHLREV => return u(2) << (u(1) & 31),
        AND => return u(1) & u(2),
        FMAC => f(1).mul_add(f(2), f(0)),
        // fmaak: d, s0, s1, K; fmamk: d, s0, K, s1: both s0 × (printed 2nd) + (printed 3rd).
        FMAAK | FMAMK => f(1).mul_add(f(2), f(3)),
        MUL => f(1) * f(2),
        ADD => f(1) + f(2),
        SUB => f(1) - f(2),
        SUBREV => f(2) - f(1),
        MUL_DX9 => {
            if f(1) == 0.0 || f(2) == 0.0 {
                0.0
            } else {
                f(1) * f(2)
            }
        }
        // Widened bit-exactly: a signaling NaN must stay signaling.
        MAX => f32::from_bits(f64_to_f32(minmax(f32_to_f64(f(1).to_bits()), f32_to_f64(f(2).to_bits()), true))),
        MIN => f32::from_bits(f64_to_f32(minmax(f32_to_f64(f(1).to_bits()), f32_to_f64(f(2).to_bits()), false))),
        DOT2_F16 | DOT2_BF16 => {
            let cvt = if h.aux & !VOPD_KNOWN == DOT2_F16 { f16_to_f32 } else { bf16_to_f32 };
            let (a, b) = (u(1), u(2));
            let mut acc = f(0);
            acc += cvt(a as u16) * cvt(b as u16);
            acc += cvt((a >> 16) as u16) * cvt((b >> 16) as u16);
            acc
        }
        _ => unreachable!("VOPD code {}", h.aux),
    };
    r.to_bits()
}

/// A gfx11 `v_dual_X :: v_dual_Y` pair: both halves read their sources
/// (and the cndmask's VCC) in every active lane before either writes.
pub fn dual(w: &mut Wave, i: &Inst) -> Result {
    let Some(y) = i.dual.as_deref() else { return super::unknown(w, i) };
    for h in [i, y] {
        if h.aux & VOPD_KNOWN == 0 {
            return super::unknown(w, h);
        }
    }
    let (mut rx, mut ry) = ([0u32; 64], [0u32; 64]);
    for l in w.active() {
        rx[l] = vopd_eval(w, i, l);
        ry[l] = vopd_eval(w, y, l);
    }
    for l in w.active() {
        w.vwrite(&i.ops[0], l, rx[l]);
        w.vwrite(&y.ops[0], l, ry[l]);
    }
    Ok(())
}

/// One `v_dual_*` half on its own (the decoder always pairs them).
fn dual_half(w: &mut Wave, i: &Inst) -> Result {
    let mut r = [0u32; 64];
    for l in w.active() {
        r[l] = vopd_eval(w, i, l);
    }
    for l in w.active() {
        w.vwrite(&i.ops[0], l, r[l]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, wave};
    use crate::arch::Arch;
    use crate::operand::{EXEC, VCC};
    use crate::wave::Wave;

    fn iota(w: &mut Wave, reg: usize, mul: u32, add: u32) {
        for l in 0..64 {
            w.v[reg][l] = l as u32 * mul + add;
        }
    }

    #[test]
    fn readfirstlane_readlane_writelane() {
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let mut w = wave(arch);
            iota(&mut w, 1, 10, 0);
            w.set_exec(0b1100);
            run(&mut w, "v_readfirstlane_b32 s0, v1").unwrap();
            assert_eq!(w.s[0], 20);
            w.set_exec(0);
            run(&mut w, "v_readfirstlane_b32 s0, v1").unwrap();
            assert_eq!(w.s[0], 0, "lane 0 when EXEC is 0");
            run(&mut w, "v_readlane_b32 s31, v1, 5").unwrap();
            assert_eq!(w.s[31], 50, "readlane ignores EXEC");
            w.s[4] = w.lanes as u32 + 3;
            run(&mut w, "v_readlane_b32 s31, v1, s4").unwrap();
            assert_eq!(w.s[31], 30, "lane index modulo the wave size");
            w.s[30] = 0x1234;
            run(&mut w, "v_writelane_b32 v40, s30, 1").unwrap();
            assert_eq!(w.v[40][1], 0x1234, "writelane ignores EXEC");
            assert_eq!(w.v[40][0], 0);
            run(&mut w, "v_writelane_b32 v40, 7, s4").unwrap();
            assert_eq!(w.v[40][3], 7);
        }
        let mut w = wave(Arch::Gfx942);
        iota(&mut w, 1, 1, 0);
        w.set_exec(1 << 40);
        run(&mut w, "v_readfirstlane_b32 s0, v1").unwrap();
        assert_eq!(w.s[0], 40);
        run(&mut w, "v_readlane_b32 s1, v1, 63").unwrap();
        assert_eq!(w.s[1], 63);
    }

    #[test]
    fn accvgpr_moves() {
        let mut w = wave(Arch::Gfx942);
        iota(&mut w, 3, 1, 100);
        w.set_exec(u64::MAX >> 1);
        run(&mut w, "v_accvgpr_write_b32 a5, v3").unwrap();
        assert_eq!((w.acc[5][0], w.acc[5][62], w.acc[5][63]), (100, 162, 0));
        run(&mut w, "v_accvgpr_mov_b32 a6, a5").unwrap();
        run(&mut w, "v_accvgpr_read_b32 v31, a6").unwrap();
        assert_eq!((w.v[31][1], w.v[31][63]), (101, 0));
        run(&mut w, "v_accvgpr_write_b32 a0, 0").unwrap();
        assert_eq!(w.acc[0][0], 0);
    }

    #[test]
    fn permlanes() {
        let mut w = wave(Arch::Gfx1100);
        iota(&mut w, 1, 1, 0);
        // Reverse each row.
        w.s[0] = 0x89ab_cdef;
        w.s[1] = 0x0123_4567;
        run(&mut w, "v_permlane16_b32 v0, v1, s0, s1").unwrap();
        assert_eq!((w.v[0][0], w.v[0][15], w.v[0][16], w.v[0][31]), (15, 0, 31, 16));
        w.s[0] = 0;
        w.s[1] = 0;
        run(&mut w, "v_permlanex16_b32 v0, v1, s0, s1").unwrap();
        assert_eq!((w.v[0][0], w.v[0][15], w.v[0][16]), (16, 16, 0));
        // In place, with an inactive lane kept.
        w.set_exec(!1u64);
        w.s[0] = 0x1111_1111;
        w.s[1] = 0x1111_1111;
        run(&mut w, "v_permlane16_b32 v1, v1, s0, s1").unwrap();
        assert_eq!((w.v[1][0], w.v[1][2], w.v[1][17]), (0, 1, 17));
    }

    #[test]
    fn dual_reads_before_writes() {
        let mut w = wave(Arch::Gfx1100);
        iota(&mut w, 0, 1, 0);
        iota(&mut w, 1, 1, 100);
        w.set_exec(0xffff_fffe);
        run(&mut w, "v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v1, v0").unwrap();
        assert_eq!((w.v[0][3], w.v[1][3]), (103, 3), "swapped");
        assert_eq!((w.v[0][0], w.v[1][0]), (0, 100), "inactive lane kept");
        w.s[VCC as usize] = 0b1000;
        run(&mut w, "v_dual_cndmask_b32 v1, 0, v1 :: v_dual_cndmask_b32 v0, 16, v0").unwrap();
        assert_eq!((w.v[1][3], w.v[0][3], w.v[1][2], w.v[0][2]), (3, 103, 0, 16));
        w.v[2][1] = 2.0f32.to_bits();
        w.v[3][1] = 0.5f32.to_bits();
        run(&mut w, "v_dual_mul_f32 v4, 0x40400000, v2 :: v_dual_add_f32 v5, -2.0, v3").unwrap();
        assert_eq!((f32::from_bits(w.v[4][1]), f32::from_bits(w.v[5][1])), (6.0, -1.5));
        run(&mut w, "v_dual_sub_f32 v4, v2, v3 :: v_dual_subrev_f32 v5, v2, v3").unwrap();
        assert_eq!((f32::from_bits(w.v[4][1]), f32::from_bits(w.v[5][1])), (1.5, -1.5));
        w.v[6][1] = 1.0f32.to_bits();
        run(&mut w, "v_dual_fmac_f32 v6, v2, v3 :: v_dual_fmaak_f32 v7, v2, v3, 0x41200000").unwrap();
        assert_eq!((f32::from_bits(w.v[6][1]), f32::from_bits(w.v[7][1])), (2.0, 11.0));
        run(&mut w, "v_dual_fmamk_f32 v6, v2, 0x41200000, v3 :: v_dual_add_nc_u32 v8, 5, v0").unwrap();
        // v0 in lane 1 is 16 (the cndmask above).
        assert_eq!((f32::from_bits(w.v[6][1]), w.v[8][1]), (20.5, 21));
        w.v[0][1] = 0x1234;
        run(&mut w, "v_dual_lshlrev_b32 v8, 4, v0 :: v_dual_and_b32 v9, 0xf0, v0").unwrap();
        assert_eq!((w.v[8][1], w.v[9][1]), (0x12340, 0x30));
        // IEEE max/min: a quiet NaN loses, +0 > -0, a signaling NaN wins quieted.
        w.v[2][1] = f32::NAN.to_bits();
        w.v[3][1] = (-0.0f32).to_bits();
        w.v[10][1] = 0;
        run(&mut w, "v_dual_max_f32 v4, v2, v3 :: v_dual_min_f32 v5, v10, v3").unwrap();
        assert_eq!((w.v[4][1], w.v[5][1]), ((-0.0f32).to_bits(), (-0.0f32).to_bits()));
        run(&mut w, "v_dual_max_f32 v4, v10, v3 :: v_dual_mul_dx9_zero_f32 v5, v10, v2").unwrap();
        assert_eq!((w.v[4][1], w.v[5][1]), (0, 0));
        w.v[2][1] = 0x7f80_0001;
        run(&mut w, "v_dual_max_f32 v4, v10, v2 :: v_dual_mov_b32 v5, 1.0").unwrap();
        assert_eq!((w.v[4][1], w.v[5][1]), (0x7fc0_0001, 0x3f80_0000));
        // dot2acc: 1.0×2.0 + 0.5×(-4.0) + 10 = 10.
        w.v[2][1] = 0x3800_3c00; // (0.5, 1.0)
        w.v[3][1] = 0xc400_4000; // (-4.0, 2.0)
        w.v[4][1] = 10.0f32.to_bits();
        run(&mut w, "v_dual_dot2acc_f32_f16 v4, v2, v3 :: v_dual_mov_b32 v5, 0").unwrap();
        assert_eq!(f32::from_bits(w.v[4][1]), 10.0);
        // bf16: (2.0, 3.0)·(1.5, -1.0) + 0 = 0.
        w.v[2][1] = 0x4040_4000;
        w.v[3][1] = 0xbf80_3fc0;
        w.v[4][1] = 0;
        run(&mut w, "v_dual_dot2acc_f32_bf16 v4, v2, v3 :: v_dual_mov_b32 v5, 0").unwrap();
        assert_eq!(f32::from_bits(w.v[4][1]), 0.0);
        // A half we do not know stops the run instead of doing something else.
        assert!(run(&mut w, "v_dual_bogus_f32 v4, v2, v3 :: v_dual_mov_b32 v5, 0").is_err());
    }

    #[test]
    fn half_conversions() {
        use crate::ops::vfloat::f16_to_f32;
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), f32::from_bits(0x3380_0000), "smallest denormal, 2^-24");
        assert_eq!(f16_to_f32(0x8200).to_bits(), (-(0x200 as f32) * 2f32.powi(-24)).to_bits());
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
    }

    /// `v_mov_b32_dpp v1, v0 CTRL` with v0 = lane number, v1 = 1000 + lane
    /// before; the result in lanes 0..64.
    fn dpp(arch: Arch, ctrl: &str, exec: u64) -> Vec<u32> {
        let mut w = wave(arch);
        iota(&mut w, 0, 1, 0);
        iota(&mut w, 1, 1, 1000);
        w.set_exec(exec);
        run(&mut w, &format!("v_mov_b32_dpp v1, v0 {ctrl}")).unwrap();
        assert_eq!(w.exec(), exec & w.lane_mask(), "EXEC restored");
        assert_eq!(w.v.len(), 256, "the temporary register is gone");
        w.v[1][..w.lanes].to_vec()
    }

    #[test]
    fn dpp_controls() {
        let all = u64::MAX;
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let r = dpp(arch, "quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf", all);
            assert_eq!(&r[..8], &[3, 2, 1, 0, 7, 6, 5, 4]);
            let r = dpp(arch, "row_shl:1 row_mask:0xf bank_mask:0xf", all);
            assert_eq!((r[0], r[14], r[15], r[16]), (1, 15, 1015, 17), "lane 15 invalid: kept");
            let r = dpp(arch, "row_shr:2 row_mask:0xf bank_mask:0xf", all);
            assert_eq!((r[0], r[1], r[2], r[17], r[18]), (1000, 1001, 0, 1017, 16));
            let r = dpp(arch, "row_ror:1 row_mask:0xf bank_mask:0xf", all);
            assert_eq!((r[0], r[1], r[15], r[16]), (15, 0, 14, 31));
            let r = dpp(arch, "row_mirror row_mask:0xf bank_mask:0xf", all);
            assert_eq!((r[0], r[5], r[15], r[16]), (15, 10, 0, 31));
            let r = dpp(arch, "row_half_mirror row_mask:0xf bank_mask:0xf", all);
            assert_eq!((r[0], r[7], r[8], r[15], r[16]), (7, 0, 15, 8, 23));
            // Row and bank masks: disabled lanes keep their value.
            let r = dpp(arch, "row_shl:1 row_mask:0x1 bank_mask:0x5", all);
            assert_eq!((r[0], r[3], r[4], r[8], r[12], r[16]), (1, 4, 1004, 9, 1012, 1016));
            // Inactive source lane: invalid, so kept; fi:1 reads it anyway.
            let r = dpp(arch, "quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", 0b0111);
            assert_eq!(&r[..4], &[1, 0, 1002, 1003]);
        }
        // bound_ctrl: invalid lanes read 0 (printed `:1` on gfx11, `:0` before).
        let r = dpp(Arch::Gfx1100, "row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1", u64::MAX);
        assert_eq!((r[14], r[15]), (15, 0));
        let r = dpp(Arch::Gfx942, "row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0", u64::MAX);
        assert_eq!((r[0], r[1], r[16]), (0, 0, 0));
        let r = dpp(Arch::Gfx1100, "quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf fi:1", 0b0111);
        assert_eq!(&r[..4], &[1, 0, 3, 1003]);
        // gfx9 wave shifts and broadcasts.
        let r = dpp(Arch::Gfx942, "wave_shr:1 row_mask:0xf bank_mask:0xf", u64::MAX);
        assert_eq!((r[0], r[1], r[63]), (1000, 0, 62));
        let r = dpp(Arch::Gfx942, "wave_rol:1 row_mask:0xf bank_mask:0xf", u64::MAX);
        assert_eq!((r[0], r[63]), (1, 0));
        let r = dpp(Arch::Gfx942, "row_bcast:15 row_mask:0xa bank_mask:0xf", u64::MAX);
        assert_eq!((r[0], r[16], r[31], r[32], r[48]), (1000, 15, 15, 1032, 47));
        let r = dpp(Arch::Gfx942, "row_bcast:31 row_mask:0xc bank_mask:0xf", u64::MAX);
        assert_eq!((r[31], r[32], r[63]), (1031, 31, 31));
        // gfx11 row_share / row_xmask / dpp8.
        let r = dpp(Arch::Gfx1100, "row_share:3 row_mask:0xf bank_mask:0xf", u64::MAX);
        assert_eq!((r[0], r[15], r[16]), (3, 3, 19));
        let r = dpp(Arch::Gfx1100, "row_xmask:1 row_mask:0xf bank_mask:0xf", u64::MAX);
        assert_eq!((r[0], r[1], r[17]), (1, 0, 16));
        let r = dpp(Arch::Gfx1100, "dpp8:[7,6,5,4,3,2,1,0]", u64::MAX);
        assert_eq!((r[0], r[7], r[8]), (7, 0, 15));
    }

    #[test]
    fn dpp_on_alu_ops() {
        // A prefix-sum step: v0 += v0 from the lane below (row_shr:1).
        let mut w = wave(Arch::Gfx1100);
        iota(&mut w, 0, 0, 1);
        run(&mut w, "v_add_nc_u32_dpp v0, v0, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1").unwrap();
        assert_eq!((w.v[0][0], w.v[0][1], w.v[0][15], w.v[0][16]), (1, 2, 2, 1));
        // Only the first source is permuted, even when the second names the same register.
        let mut w = wave(Arch::Gfx942);
        iota(&mut w, 2, 1, 0);
        run(&mut w, "v_sub_u32_dpp v3, v2, v2 quad_perm:[0,0,0,0] row_mask:0xf bank_mask:0xf").unwrap();
        assert_eq!(&w.v[3][..4], &[0, -1i32 as u32, -2i32 as u32, -3i32 as u32]);
        // With a carry out (gfx9 `v_add_co_u32_dpp v, vcc, src0, src1`).
        w.v[4][0] = u32::MAX;
        w.v[4][1] = 0;
        w.v[5][0] = 1;
        w.v[5][1] = 1;
        w.s[EXEC as usize] = 0b11;
        w.s[EXEC as usize + 1] = 0;
        run(&mut w, "v_add_co_u32_dpp v6, vcc, v4, v5 quad_perm:[1,0,2,3] row_mask:0xf bank_mask:0xf").unwrap();
        assert_eq!((w.v[6][0], w.v[6][1]), (1, 0));
        assert_eq!(w.vcc(), 0b10);
    }
}

