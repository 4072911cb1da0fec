//! LDS (`ds_*`): loads and stores of every width, the two-address forms,
//! atomics, and the cross-lane operations that go through the LDS unit
//! without touching it (`ds_swizzle_b32`, `ds_permute_b32`,
//! `ds_bpermute_b32`).
//!
//! gfx9 and gfx11 spell these differently (`ds_read_b32`/`ds_load_b32`,
//! `ds_write2_b32`/`ds_store_2addr_b32`, `ds_cmpst_b32`/`ds_cmpstore_b32`),
//! and [`super::canonical`] leaves them as printed, so both are matched
//! here. Operands as LLVM prints them: loads `dst, addr`; stores
//! `addr, data`; atomics `[dst,] addr, data[, data2]` (`_rtn_` in the name
//! says a destination is printed). The address is a 32-bit VGPR plus the
//! unsigned `offset:`; M0 does not limit it on gfx9+.
//!
//! Waves of a workgroup share the LDS, so its atomics are host atomics.

use super::Exec;
use super::vmem::{self, atomic};
use crate::decode::Inst;
use crate::memory;
use crate::operand::{M0, Operand};
use crate::wave::{FaultKind, Result, Wave, fault};

/// The host pointer of `len` LDS bytes at `base + offset` in `lane`.
fn lds(w: &mut Wave, base: u32, offset: u32, len: usize, lane: usize) -> Result<*mut u8> {
    w.lds_ptr(u64::from(base.wrapping_add(offset)), len, lane)
}

fn offset(i: &Inst) -> u32 {
    i.mods.offset as u32 & 0xffff
}

/// `offset0`/`offset1` of the two-address forms (in elements; 0 when not
/// printed).
fn offset_n(i: &Inst, key: &str) -> u32 {
    i.mods.get(key).and_then(|v| match v.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }).unwrap_or(0)
}

fn no_gds(i: &Inst) -> Result {
    if i.mods.has("gds") {
        return Err(fault(FaultKind::Unsupported, "the emulator has no GDS (`gds` on a ds_ instruction)"));
    }
    Ok(())
}

fn load(w: &mut Wave, i: &Inst) -> Result {
    no_gds(i)?;
    let code = i.aux;
    let len = vmem::size(code);
    let (dst, addr, off) = (i.ops[0], i.ops[1], offset(i));
    for lane in w.active() {
        let p = lds(w, w.vread(&addr, lane), off, len, lane)?;
        let mut buf = [0u8; 16];
        // SAFETY: `lds_ptr` checked `len` bytes at `p`.
        unsafe { memory::read(p, &mut buf[..len]) };
        vmem::finish_load(w, &dst, lane, code, &buf);
    }
    Ok(())
}

fn store(w: &mut Wave, i: &Inst) -> Result {
    no_gds(i)?;
    let code = i.aux;
    let len = vmem::size(code);
    let (addr, data, off) = (i.ops[0], i.ops[1], offset(i));
    for lane in w.active() {
        let p = lds(w, w.vread(&addr, lane), off, len, lane)?;
        let bytes = vmem::store_bytes(w, &data, lane, code);
        // SAFETY: `lds_ptr` checked `len` bytes at `p`.
        unsafe { memory::write(p, &bytes[..len]) };
    }
    Ok(())
}

/// Element size (4 or 8) and stride (1, or 64 for `st64`) of the
/// two-address forms: `aux = size | stride64 << 8`.
fn pair_geometry(i: &Inst) -> (usize, u32, u32) {
    let size = (i.aux & 0xff) as usize;
    let unit = size as u32 * if i.aux & 1 << 8 != 0 { 64 } else { 1 };
    (size, offset_n(i, "offset0") * unit, offset_n(i, "offset1") * unit)
}

/// `ds_read2_b32 v[0:1], v2 offset0:1 offset1:2` / `ds_load_2addr_*`.
fn load2(w: &mut Wave, i: &Inst) -> Result {
    let (size, o0, o1) = pair_geometry(i);
    let (dst, addr) = (i.ops[0], i.ops[1]);
    let words = size / 4;
    for lane in w.active() {
        let base = w.vread(&addr, lane);
        for (k, off) in [o0, o1].into_iter().enumerate() {
            let p = lds(w, base, off, size, lane)?;
            let mut buf = [0u8; 8];
            // SAFETY: `lds_ptr` checked `size` bytes at `p`.
            unsafe { memory::read(p, &mut buf[..size]) };
            for n in 0..words {
                let v = u32::from_le_bytes(buf[4 * n..4 * n + 4].try_into().expect("4 bytes"));
                w.set_vreg(&dst, k * words + n, lane, v);
            }
        }
    }
    Ok(())
}

/// The bytes of `size` (4 or 8) from `data` in `lane`.
fn element(w: &Wave, data: &Operand, size: usize, lane: usize) -> [u8; 8] {
    let mut b = [0u8; 8];
    for n in 0..size / 4 {
        b[4 * n..4 * n + 4].copy_from_slice(&w.vreg(data, n, lane).to_le_bytes());
    }
    b
}

/// `ds_write2_b32 v2, v0, v1 offset0:1 offset1:2` / `ds_store_2addr_*`.
fn store2(w: &mut Wave, i: &Inst) -> Result {
    let (size, o0, o1) = pair_geometry(i);
    let (addr, d0, d1) = (i.ops[0], i.ops[1], i.ops[2]);
    for lane in w.active() {
        let base = w.vread(&addr, lane);
        for (off, d) in [(o0, d0), (o1, d1)] {
            let p = lds(w, base, off, size, lane)?;
            let b = element(w, &d, size, lane);
            // SAFETY: `lds_ptr` checked `size` bytes at `p`.
            unsafe { memory::write(p, &b[..size]) };
        }
    }
    Ok(())
}

/// `ds_wrxchg2_rtn_b32 v[0:1], v2, v3, v4 offset0:1 offset1:2`: two
/// exchanges, the old values returned in order.
fn xchg2(w: &mut Wave, i: &Inst) -> Result {
    let (size, o0, o1) = pair_geometry(i);
    let wide = size == 8;
    let (dst, addr, d0, d1) = (i.ops[0], i.ops[1], i.ops[2], i.ops[3]);
    for lane in w.active() {
        let base = w.vread(&addr, lane);
        let mut olds = [0u64; 2];
        for (k, (off, d)) in [(o0, d0), (o1, d1)].into_iter().enumerate() {
            let p = lds(w, base, off, size, lane)?;
            let new = u64::from_le_bytes(element(w, &d, size, lane));
            olds[k] = vmem::rmw(p, false, wide, lane, |_| new)?;
        }
        for (k, old) in olds.into_iter().enumerate() {
            let words = size / 4;
            for n in 0..words {
                w.set_vreg(&dst, k * words + n, lane, (old >> (32 * n)) as u32);
            }
        }
    }
    Ok(())
}

/// `aux = op | wide << 8 | returns << 9 | (data, data2) swapped << 10`.
const WIDE: u32 = 1 << 8;
const RTN: u32 = 1 << 9;
/// gfx9 `ds_cmpst_*`: `data` is the comparand and `data2` the new value,
/// the other way round from gfx11 `ds_cmpstore_*` and the flat cmpswap.
const SWAPPED: u32 = 1 << 10;

fn atomic_op(w: &mut Wave, i: &Inst) -> Result {
    no_gds(i)?;
    let op = i.aux & 0xff;
    let wide = i.aux & WIDE != 0;
    let (dst, rest) = if i.aux & RTN != 0 { (Some(i.ops[0]), &i.ops[1..]) } else { (None, &i.ops[..]) };
    let addr = rest[0];
    let data = rest.get(1).copied();
    let data2 = rest.get(2).copied();
    let off = offset(i);
    let len = if wide { 8 } else { 4 };
    let read = |w: &Wave, o: Option<Operand>, lane: usize| match o {
        Some(o) if wide => u64::from(w.vreg(&o, 0, lane)) | u64::from(w.vreg(&o, 1, lane)) << 32,
        Some(o) => u64::from(w.vreg(&o, 0, lane)),
        None => 0,
    };
    for lane in w.active() {
        let p = lds(w, w.vread(&addr, lane), off, len, lane)?;
        let (mut d, mut d2) = (read(w, data, lane), read(w, data2, lane));
        if i.aux & SWAPPED != 0 {
            (d, d2) = (d2, d);
        }
        let old = vmem::rmw(p, false, wide, lane, |old| vmem::apply(op, wide, old, d, d2))?;
        if let Some(dst) = &dst {
            vmem::atomic_return(w, dst, wide, lane, old);
        }
    }
    Ok(())
}

/// The 16-bit swizzle pattern of `ds_swizzle_b32`: printed as
/// `offset:swizzle(MODE,...)` (kept as text by the decoder) or a number.
fn swizzle_pattern(i: &Inst) -> Option<u32> {
    let Some(text) = i.mods.get("offset") else {
        return Some(offset(i));
    };
    let inner = text.strip_prefix("swizzle(")?.strip_suffix(')')?;
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    let num = |k: usize| -> Option<u32> {
        let a = args.get(k)?;
        match a.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => a.parse().ok(),
        }
    };
    // The bitmask mode: lane j = ((i & and) | or) ^ xor within 32 lanes.
    let bitmask = |and: u32, or: u32, xor: u32| (and & 0x1f) | (or & 0x1f) << 5 | (xor & 0x1f) << 10;
    Some(match args[0] {
        "QUAD_PERM" => 0x8000 | num(1)? | num(2)? << 2 | num(3)? << 4 | num(4)? << 6,
        "BITMASK_PERM" => {
            let s = args.get(1)?.trim_matches('"').as_bytes();
            if s.len() != 5 {
                return None;
            }
            let (mut and, mut or, mut xor) = (0, 0, 0);
            // The first character controls lane-id bit 4.
            for (k, c) in s.iter().enumerate() {
                let bit = 1 << (4 - k);
                match c {
                    b'0' => {}
                    b'1' => or |= bit,
                    b'p' => and |= bit,
                    b'i' => {
                        and |= bit;
                        xor |= bit;
                    }
                    _ => return None,
                }
            }
            bitmask(and, or, xor)
        }
        "SWAP" => bitmask(0x1f, 0, num(1)?),
        "REVERSE" => bitmask(0x1f, 0, num(1)?.checked_sub(1)?),
        "BROADCAST" => bitmask(0x1f & !(num(1)?.checked_sub(1)?), num(2)?, 0),
        "FFT" => 0xe000 | num(1)? & 0x1f,
        "ROTATE" => 0xc000 | (num(1)? & 1) << 10 | (num(2)? & 0x1f) << 5,
        _ => return None,
    })
}

/// The lane `lane` reads under swizzle `p`.
fn swizzle_source(p: u32, lane: usize) -> usize {
    let i = lane as u32;
    let group = i & !0x1f;
    let j = if p >= 0xe000 {
        // FFT: the lane id's low five bits reversed, shifted past the
        // bits `mask` keeps.
        let mask = p & 0x1f;
        let rev = (i & 0x1f).reverse_bits() >> 27;
        (rev >> mask.count_ones()) | (i & mask) | (i & 0x20)
    } else if p >= 0xc000 {
        // Rotate within 32 lanes; offset[10] = 1 rotates right (lane i
        // takes lane i - n), 0 left.
        let n = p >> 5 & 0x1f;
        let k = if p & 1 << 10 != 0 { i.wrapping_sub(n) } else { i + n };
        group | (k & 0x1f)
    } else if p & 0x8000 != 0 {
        // Quad permute: each lane of four picks one by two bits.
        (i & !3) | (p >> ((i & 3) * 2) & 3)
    } else {
        let (and, or, xor) = (p & 0x1f, p >> 5 & 0x1f, p >> 10 & 0x1f);
        group | ((((i & and) | or) ^ xor) & 0x1f)
    };
    j as usize
}

/// `ds_swizzle_b32 v1, v2 offset:swizzle(...)`: a lane reading an inactive
/// lane gets 0.
fn swizzle(w: &mut Wave, i: &Inst) -> Result {
    let Some(p) = swizzle_pattern(i) else {
        return Err(fault(
            FaultKind::Unsupported,
            format!("ds_swizzle_b32 with a pattern the emulator cannot read: {:?}", i.mods.get("offset")),
        ));
    };
    let (dst, src) = (i.ops[0], i.ops[1]);
    let exec = w.exec();
    let lanes = w.lanes;
    let input: Vec<u32> = (0..lanes).map(|l| w.vread(&src, l)).collect();
    for lane in w.active() {
        let j = swizzle_source(p, lane);
        let v = if j < lanes && exec >> j & 1 == 1 { input[j] } else { 0 };
        w.vwrite(&dst, lane, v);
    }
    Ok(())
}

/// The lane a permute address names: the byte address / 4, modulo the
/// wave on CDNA; modulo 32 on RDNA (a wave64 there is two halves).
fn permute_lane(w: &Wave, addr: u32, lane: usize) -> usize {
    let n = addr as usize / 4;
    if w.arch.is_rdna() { (lane & !31) | (n % 32) } else { n % w.lanes }
}

/// `ds_permute_b32 dst, addr, data` (aux 0: each lane pushes its data to
/// the lane it names, the highest lane winning) and `ds_bpermute_b32`
/// (aux 1: each lane pulls from the lane it names; 0 from an inactive one).
fn permute(w: &mut Wave, i: &Inst) -> Result {
    let (dst, addr, data) = (i.ops[0], i.ops[1], i.ops[2]);
    let off = offset(i);
    let exec = w.exec();
    let lanes = w.lanes;
    let mut tmp = vec![0u32; lanes];
    if i.aux == 0 {
        for lane in w.active() {
            let to = permute_lane(w, w.vread(&addr, lane).wrapping_add(off), lane);
            tmp[to] = w.vread(&data, lane);
        }
    } else {
        for (lane, t) in tmp.iter_mut().enumerate() {
            let from = permute_lane(w, w.vread(&addr, lane).wrapping_add(off), lane);
            if exec >> from & 1 == 1 {
                *t = w.vread(&data, from);
            }
        }
    }
    for lane in w.active() {
        w.vwrite(&dst, lane, tmp[lane]);
    }
    Ok(())
}

/// `ds_append vdst` (aux 0) / `ds_consume` (aux 1): one atomic add (or
/// subtract) of the active lane count at `M0[15:0] + offset`; every active
/// lane gets the old value.
fn append(w: &mut Wave, i: &Inst) -> Result {
    no_gds(i)?;
    let exec = w.exec();
    let Some(first) = w.active().next() else { return Ok(()) };
    let count = exec.count_ones();
    let p = lds(w, w.s[M0 as usize] & 0xffff, offset(i), 4, first)?;
    let consume = i.aux == 1;
    let old = vmem::rmw(p, false, false, first, |x| {
        let x = x as u32;
        u64::from(if consume { x.wrapping_sub(count) } else { x.wrapping_add(count) })
    })?;
    let dst = i.ops[0];
    for lane in w.active() {
        w.vwrite(&dst, lane, old as u32);
    }
    Ok(())
}

/// `ds_read_addtid_b32 vdst` (aux 0) / `ds_write_addtid_b32 vdata`
/// (aux 1): lane l at `offset + M0[15:0] + 4 * l`.
fn addtid(w: &mut Wave, i: &Inst) -> Result {
    no_gds(i)?;
    let base = (w.s[M0 as usize] & 0xffff).wrapping_add(offset(i));
    let reg = i.ops[0];
    for lane in w.active() {
        let p = lds(w, base, 4 * lane as u32, 4, lane)?;
        if i.aux == 0 {
            let mut b = [0u8; 4];
            // SAFETY: `lds_ptr` checked 4 bytes at `p`.
            unsafe { memory::read(p, &mut b) };
            w.vwrite(&reg, lane, u32::from_le_bytes(b));
        } else {
            // SAFETY: as above.
            unsafe { memory::write(p, &w.vread(&reg, lane).to_le_bytes()) };
        }
    }
    Ok(())
}

fn nop(_w: &mut Wave, _i: &Inst) -> Result {
    Ok(())
}

/// Element size of a `b32`/`b64` two-address form.
fn pair_size(ty: &str) -> Option<u32> {
    match ty {
        "b32" => Some(4),
        "b64" => Some(8),
        _ => None,
    }
}

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let op = name.strip_prefix("ds_")?;
    let fixed: Option<(Exec, u32)> = match op {
        "swizzle_b32" => Some((swizzle, 0)),
        "permute_b32" => Some((permute, 0)),
        "bpermute_b32" => Some((permute, 1)),
        "append" => Some((append, 0)),
        "consume" => Some((append, 1)),
        "nop" => Some((nop, 0)),
        "read_addtid_b32" | "load_addtid_b32" => Some((addtid, 0)),
        "write_addtid_b32" | "store_addtid_b32" => Some((addtid, 1)),
        _ => None,
    };
    if fixed.is_some() {
        return fixed;
    }
    let pairs: [(&str, Exec, bool); 12] = [
        ("read2_", load2, false),
        ("read2st64_", load2, true),
        ("load_2addr_", load2, false),
        ("load_2addr_stride64_", load2, true),
        ("write2_", store2, false),
        ("write2st64_", store2, true),
        ("store_2addr_", store2, false),
        ("store_2addr_stride64_", store2, true),
        ("wrxchg2_rtn_", xchg2, false),
        ("wrxchg2st64_rtn_", xchg2, true),
        ("storexchg_2addr_rtn_", xchg2, false),
        ("storexchg_2addr_stride64_rtn_", xchg2, true),
    ];
    for (prefix, f, st64) in pairs {
        // `load_2addr_` is also the start of `load_2addr_stride64_`.
        if let Some(size) = op.strip_prefix(prefix).and_then(pair_size) {
            return Some((f, size | u32::from(st64) << 8));
        }
    }
    if let Some(t) = op.strip_prefix("read_").or_else(|| op.strip_prefix("load_")) {
        return vmem::parse_load(t).map(|c| (load as Exec, c));
    }
    if let Some(t) = op.strip_prefix("write_").or_else(|| op.strip_prefix("store_")) {
        return vmem::parse_store(t).map(|c| (store as Exec, c));
    }
    let (plain, rtn) = match op.split_once("_rtn_") {
        Some((a, b)) => (format!("{a}_{b}"), true),
        None => (op.to_string(), false),
    };
    let (base, ty) = plain.rsplit_once('_')?;
    let (code, wide, swapped) = match base {
        "wrxchg" | "storexchg" => (atomic::SWAP, pair_size(ty)? == 8, false),
        "cmpst" | "cmpstore" => {
            let (c, wide) = vmem::parse_atomic("cmpswap", ty)?;
            (c, wide, base == "cmpst")
        }
        "csub" => return None,
        _ => {
            let (c, wide) = vmem::parse_atomic(base, ty)?;
            (c, wide, false)
        }
    };
    Some((atomic_op as Exec, code | u32::from(wide) << 8 | u32::from(rtn) << 9 | u32::from(swapped) << 10))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::ops::testing::{run, wave};

    fn lds_u32(w: &mut Wave, off: u64) -> u32 {
        let p = w.lds_ptr(off, 4, 0).unwrap();
        let mut b = [0u8; 4];
        // SAFETY: checked by lds_ptr.
        unsafe { memory::read(p, &mut b) };
        u32::from_le_bytes(b)
    }

    fn set_lds(w: &mut Wave, off: u64, bytes: &[u8]) {
        let p = w.lds_ptr(off, bytes.len(), 0).unwrap();
        // SAFETY: checked by lds_ptr.
        unsafe { memory::write(p, bytes) };
    }

    #[test]
    fn names() {
        for m in [
            "ds_read_b32", "ds_load_b128", "ds_read_u8_d16_hi", "ds_load_i16", "ds_write_b8_d16_hi",
            "ds_store_b16_d16_hi", "ds_read2_b64", "ds_read2st64_b32", "ds_load_2addr_stride64_b64",
            "ds_write2_b32", "ds_store_2addr_b64", "ds_add_u32", "ds_add_rtn_u64", "ds_max_rtn_i32",
            "ds_cmpst_rtn_b64", "ds_cmpstore_b32", "ds_wrxchg_rtn_b32", "ds_storexchg_rtn_b64",
            "ds_wrxchg2st64_rtn_b64", "ds_swizzle_b32", "ds_bpermute_b32", "ds_permute_b32", "ds_append",
            "ds_consume", "ds_min_f32", "ds_add_rtn_f32", "ds_pk_add_rtn_f16", "ds_mskor_b32", "ds_rsub_u32",
            "ds_inc_rtn_u32", "ds_dec_u64", "ds_cmpst_f32", "ds_read_addtid_b32",
        ] {
            assert!(lookup(m).is_some(), "{m}");
        }
        for m in ["ds_add_src2_u32", "ds_gws_init", "ds_ordered_count", "ds_csub_u32", "global_load_b32"] {
            assert!(lookup(m).is_none(), "{m}");
        }
    }

    #[test]
    fn loads_and_stores_of_every_width() {
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let gfx9 = arch == Arch::Gfx942;
            let (rd, wr) = if gfx9 { ("ds_read", "ds_write") } else { ("ds_load", "ds_store") };
            let mut w = wave(arch);
            w.set_exec(0b11);
            w.v[1][0] = 0x100;
            w.v[1][1] = 0x200;
            for (r, v) in [0x8877_6655u32, 0x4433_2211, 0xccbb_aa99, 0x00ff_eedd].into_iter().enumerate() {
                w.v[4 + r][0] = v;
                w.v[4 + r][1] = v ^ 0xffff_ffff;
            }
            run(&mut w, &format!("{wr}_b128 v1, v[4:7] offset:16")).unwrap();
            assert_eq!((lds_u32(&mut w, 0x110), lds_u32(&mut w, 0x11c)), (0x8877_6655, 0x00ff_eedd));
            assert_eq!(lds_u32(&mut w, 0x210), !0x8877_6655);
            run(&mut w, &format!("{rd}_b96 v[8:10], v1 offset:20")).unwrap();
            assert_eq!((w.v[8][0], w.v[10][0], w.v[8][1]), (0x4433_2211, 0x00ff_eedd, !0x4433_2211));
            run(&mut w, &format!("{rd}_b64 v[8:9], v1 offset:16")).unwrap();
            assert_eq!((w.v[8][0], w.v[9][0]), (0x8877_6655, 0x4433_2211));
            run(&mut w, &format!("{rd}_i8 v8, v1 offset:19")).unwrap();
            assert_eq!(w.v[8][0], 0xffff_ff88);
            run(&mut w, &format!("{rd}_u8 v8, v1 offset:19")).unwrap();
            assert_eq!(w.v[8][0], 0x88);
            run(&mut w, &format!("{rd}_i16 v8, v1 offset:18")).unwrap();
            assert_eq!(w.v[8][0], 0xffff_8877);
            run(&mut w, &format!("{rd}_u16 v8, v1 offset:18")).unwrap();
            assert_eq!(w.v[8][0], 0x8877);
            w.v[8][0] = 0x1234_5678;
            run(&mut w, &format!("{rd}_u8_d16_hi v8, v1 offset:19")).unwrap();
            assert_eq!(w.v[8][0], 0x0088_5678);
            run(&mut w, &format!("{rd}_i8_d16 v8, v1 offset:19")).unwrap();
            assert_eq!(w.v[8][0], 0x0088_ff88);
            run(&mut w, &format!("{rd}_u16_d16 v8, v1 offset:16")).unwrap();
            assert_eq!(w.v[8][0], 0x0088_6655);
            w.v[2][0] = 0xabcd_ef01;
            run(&mut w, &format!("{wr}_b8 v1, v2")).unwrap();
            run(&mut w, &format!("{wr}_b8_d16_hi v1, v2 offset:1")).unwrap();
            run(&mut w, &format!("{wr}_b16_d16_hi v1, v2 offset:2")).unwrap();
            assert_eq!(lds_u32(&mut w, 0x100), 0xabcd_cd01);
            run(&mut w, &format!("{wr}_b16 v1, v2 offset:2")).unwrap();
            run(&mut w, &format!("{wr}_b32 v1, v2 offset:4")).unwrap();
            assert_eq!((lds_u32(&mut w, 0x100), lds_u32(&mut w, 0x104)), (0xef01_cd01, 0xabcd_ef01));
            // Outside the LDS: a fault.
            w.v[1][1] = 4094;
            assert!(run(&mut w, &format!("{rd}_b32 v8, v1")).is_err());
        }
    }

    #[test]
    fn two_address_forms() {
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        w.v[2][0] = 0x40;
        w.v[4][0] = 11;
        w.v[5][0] = 22;
        // Offsets count elements: 0x40 + 4 and 0x40 + 9 * 4.
        run(&mut w, "ds_store_2addr_b32 v2, v4, v5 offset0:1 offset1:9").unwrap();
        assert_eq!((lds_u32(&mut w, 0x44), lds_u32(&mut w, 0x64)), (11, 22));
        run(&mut w, "ds_load_2addr_b32 v[6:7], v2 offset1:9").unwrap();
        assert_eq!((w.v[6][0], w.v[7][0]), (0, 22));
        // b64 elements, stride 64: 0x40 + 1 * 512.
        w.v[8][0] = 1;
        w.v[9][0] = 2;
        w.v[10][0] = 3;
        w.v[11][0] = 4;
        run(&mut w, "ds_write2st64_b64 v2, v[8:9], v[10:11] offset0:1 offset1:2").unwrap();
        assert_eq!((lds_u32(&mut w, 0x244), lds_u32(&mut w, 0x440), lds_u32(&mut w, 0x444)), (2, 3, 4));
        run(&mut w, "ds_read2st64_b64 v[12:15], v2 offset0:2 offset1:1").unwrap();
        assert_eq!((w.v[12][0], w.v[13][0], w.v[14][0], w.v[15][0]), (3, 4, 1, 2));
        run(&mut w, "ds_wrxchg2_rtn_b32 v[16:17], v2, v5, v4 offset0:1 offset1:9").unwrap();
        assert_eq!((w.v[16][0], w.v[17][0]), (11, 22));
        assert_eq!((lds_u32(&mut w, 0x44), lds_u32(&mut w, 0x64)), (22, 11));
    }

    #[test]
    fn atomics() {
        let mut w = wave(Arch::Gfx942);
        w.set_exec(0b111);
        for lane in 0..3 {
            w.v[0][lane] = 0x10;
            w.v[1][lane] = lane as u32 + 1;
        }
        run(&mut w, "ds_add_u32 v0, v1 offset:8").unwrap();
        assert_eq!(lds_u32(&mut w, 0x18), 6);
        run(&mut w, "ds_add_rtn_u32 v2, v0, v1 offset:8").unwrap();
        assert_eq!((w.v[2][0], w.v[2][1], w.v[2][2], lds_u32(&mut w, 0x18)), (6, 7, 9, 12));
        run(&mut w, "ds_rsub_rtn_u32 v2, v0, v1 offset:8").unwrap();
        // 1 - 12, 2 - that, 3 - that.
        assert_eq!(w.v[2][1], 1u32.wrapping_sub(12));
        assert_eq!(lds_u32(&mut w, 0x18), 3u32.wrapping_sub(2u32.wrapping_sub(1u32.wrapping_sub(12))));
        // gfx9 cmpst: data0 = compare, data1 = new.
        w.set_exec(1);
        set_lds(&mut w, 0x20, &5u32.to_le_bytes());
        w.v[0][0] = 0x20;
        w.v[3][0] = 5;
        w.v[4][0] = 77;
        run(&mut w, "ds_cmpst_rtn_b32 v5, v0, v3, v4").unwrap();
        assert_eq!((w.v[5][0], lds_u32(&mut w, 0x20)), (5, 77));
        // gfx11 cmpstore: data = new, data2 = compare.
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        set_lds(&mut w, 0x20, &5u32.to_le_bytes());
        w.v[0][0] = 0x20;
        w.v[3][0] = 5;
        w.v[4][0] = 77;
        run(&mut w, "ds_cmpstore_rtn_b32 v5, v0, v4, v3").unwrap();
        assert_eq!((w.v[5][0], lds_u32(&mut w, 0x20)), (5, 77));
        run(&mut w, "ds_cmpstore_b32 v0, v4, v3").unwrap();
        assert_eq!(lds_u32(&mut w, 0x20), 77);
        // 64-bit: max_u64 and exchange.
        set_lds(&mut w, 0x28, &0x1_0000_0000u64.to_le_bytes());
        w.v[6][0] = 7;
        w.v[7][0] = 1;
        run(&mut w, "ds_max_rtn_u64 v[8:9], v0, v[6:7] offset:8").unwrap();
        assert_eq!((w.v[8][0], w.v[9][0], lds_u32(&mut w, 0x28)), (0, 1, 7));
        run(&mut w, "ds_storexchg_rtn_b64 v[8:9], v0, v[4:5] offset:8").unwrap();
        assert_eq!((w.v[8][0], w.v[9][0], lds_u32(&mut w, 0x28)), (7, 1, 77));
        // mskor: (old & ~mask) | bits.
        set_lds(&mut w, 0x30, &0xffu32.to_le_bytes());
        w.v[10][0] = 0x0f;
        w.v[11][0] = 0x100;
        run(&mut w, "ds_mskor_b32 v0, v10, v11 offset:16").unwrap();
        assert_eq!(lds_u32(&mut w, 0x30), 0x1f0);
        // Float add.
        set_lds(&mut w, 0x34, &1.5f32.to_bits().to_le_bytes());
        w.v[12][0] = 2.0f32.to_bits();
        run(&mut w, "ds_add_rtn_f32 v13, v0, v12 offset:20").unwrap();
        assert_eq!((w.v[13][0], lds_u32(&mut w, 0x34)), (1.5f32.to_bits(), 3.5f32.to_bits()));
        // Misaligned atomic: a fault.
        assert!(run(&mut w, "ds_add_u32 v0, v12 offset:2").is_err());
    }

    #[test]
    fn swizzle_modes() {
        let mut w = wave(Arch::Gfx1100);
        for lane in 0..32 {
            w.v[2][lane] = 100 + lane as u32;
        }
        let pick = |w: &Wave| (0..32).map(|l| w.v[1][l].wrapping_sub(100)).collect::<Vec<_>>();
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(QUAD_PERM,1,0,3,3)").unwrap();
        assert_eq!(&pick(&w)[..8], &[1, 0, 3, 3, 5, 4, 7, 7]);
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,1)").unwrap();
        assert_eq!(&pick(&w)[..4], &[1, 0, 3, 2]);
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(REVERSE,8)").unwrap();
        assert_eq!(&pick(&w)[..9], &[7, 6, 5, 4, 3, 2, 1, 0, 15]);
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(BROADCAST,4,2)").unwrap();
        assert_eq!(&pick(&w)[..8], &[2, 2, 2, 2, 6, 6, 6, 6]);
        // "pppp1": lane bit 0 forced on.
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(BITMASK_PERM,\"pppp1\")").unwrap();
        assert_eq!(&pick(&w)[..4], &[1, 1, 3, 3]);
        // FFT 0: the five-bit reversal; 0x1f: no swizzle.
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(FFT,0)").unwrap();
        assert_eq!(&pick(&w)[..4], &[0, 16, 8, 24]);
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(FFT,31)").unwrap();
        assert_eq!(&pick(&w)[..4], &[0, 1, 2, 3]);
        // A raw pattern: 0x8000 | quad (0, 0, 0, 0).
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:0x8000").unwrap();
        assert_eq!(&pick(&w)[4..8], &[4, 4, 4, 4]);
        // Reading an inactive lane gives 0; inactive lanes are not written.
        w.set_exec(0b1101);
        w.v[1][1] = 9;
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,1)").unwrap();
        assert_eq!((w.v[1][0], w.v[1][1], w.v[1][2], w.v[1][3]), (0, 9, 103, 102));
        // wave64 (gfx942): the bitmask mode works within each 32 lanes.
        let mut w = wave(Arch::Gfx942);
        for lane in 0..64 {
            w.v[2][lane] = lane as u32;
        }
        run(&mut w, "ds_swizzle_b32 v1, v2 offset:swizzle(BROADCAST,32,5)").unwrap();
        assert_eq!((w.v[1][0], w.v[1][31], w.v[1][32], w.v[1][63]), (5, 5, 37, 37));
    }

    #[test]
    fn permutes() {
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let mut w = wave(arch);
            let n = w.lanes;
            for lane in 0..n {
                w.v[2][lane] = 1000 + lane as u32;
                // Rotate by one: lane l names lane l+1 (byte address * 4),
                // the last one wrapping past the wave.
                w.v[1][lane] = 4 * (lane as u32 + 1);
            }
            w.set_exec(w.lane_mask() & !(1 << 5));
            run(&mut w, "ds_bpermute_b32 v3, v1, v2").unwrap();
            assert_eq!(w.v[3][0], 1001);
            assert_eq!(w.v[3][4], 0, "lane 5 is inactive: reads 0");
            assert_eq!(w.v[3][n - 1], 1000);
            // offset:4 adds one lane.
            run(&mut w, "ds_bpermute_b32 v3, v1, v2 offset:4").unwrap();
            assert_eq!(w.v[3][0], 1002);
            // permute: lane l sends to lane l+1.
            run(&mut w, "ds_permute_b32 v4, v1, v2").unwrap();
            assert_eq!(w.v[4][1], 1000);
            assert_eq!(w.v[4][6], 0, "lane 5 sent nothing");
            assert_eq!(w.v[4][0], 1000 + n as u32 - 1);
            // Two lanes naming one: the higher wins.
            w.set_exec(0b111);
            w.v[1][0] = 8;
            w.v[1][1] = 8;
            w.v[1][2] = 0;
            run(&mut w, "ds_permute_b32 v4, v1, v2").unwrap();
            assert_eq!((w.v[4][0], w.v[4][1], w.v[4][2]), (1002, 0, 1001));
        }
    }

    #[test]
    fn append_consume_and_addtid() {
        let mut w = wave(Arch::Gfx942);
        w.set_exec(0xf0f);
        w.s[M0 as usize] = 0x40;
        set_lds(&mut w, 0x44, &10u32.to_le_bytes());
        run(&mut w, "ds_append v1 offset:4").unwrap();
        assert_eq!((w.v[1][0], w.v[1][11], w.v[1][4], lds_u32(&mut w, 0x44)), (10, 10, 0, 18));
        run(&mut w, "ds_consume v1 offset:4").unwrap();
        assert_eq!((w.v[1][0], lds_u32(&mut w, 0x44)), (18, 10));
        w.v[2][3] = 0x33;
        run(&mut w, "ds_write_addtid_b32 v2 offset:8").unwrap();
        assert_eq!(lds_u32(&mut w, 0x48 + 12), 0x33);
        run(&mut w, "ds_read_addtid_b32 v5 offset:8").unwrap();
        assert_eq!(w.v[5][3], 0x33);
    }

    #[test]
    fn lds_atomics_are_atomic_across_threads() {
        // Two waves of one workgroup (threads sharing the Group) adding at
        // once: no update is lost.
        let w0 = wave(Arch::Gfx1100);
        let group = w0.group.clone();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let g = group.clone();
                std::thread::spawn(move || {
                    let mut w = wave(Arch::Gfx1100);
                    w.group = g;
                    for lane in 0..32 {
                        w.v[1][lane] = 1;
                    }
                    for _ in 0..200 {
                        run(&mut w, "ds_add_u32 v0, v1").unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let mut w = w0;
        assert_eq!(lds_u32(&mut w, 0), 4 * 200 * 32);
    }
}
