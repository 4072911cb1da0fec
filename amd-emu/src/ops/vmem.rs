//! FLAT, GLOBAL and SCRATCH loads, stores and atomics (names as
//! [`super::canonical`] makes them: gfx11's `global_load_b32`, and gfx9's
//! `global_load_dword` mapped to it).
//!
//! Operands as LLVM prints them:
//! - load: `dst, vaddr[, saddr]`; store: `vaddr, data[, saddr]`;
//! - atomic: `[dst,] vaddr, data[, saddr]`: the old value comes back (and is
//!   printed first) only with `glc` (gfx10/11, gfx90a) or `sc0` (gfx940), so
//!   the operands are counted;
//! - flat: a 64-bit VGPR address, which the apertures route to scratch, LDS
//!   or global memory;
//! - global: a 64-bit VGPR address with `off`, or an SGPR pair base plus an
//!   unsigned 32-bit VGPR offset;
//! - scratch: an offset in the lane's private segment, the sum of the SGPR,
//!   the VGPR (either may be `off`) and the instruction's offset.
//!
//! The types, widths and atomic operations here are shared with the LDS
//! family (`lds.rs`).

// MUBUF (`buffer_*`): its own file, sharing this one's types and atomics.
#[path = "buffer.rs"]
mod buffer;

use super::Exec;
use super::vfloat::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use crate::decode::Inst;
use crate::memory::{self, PRIVATE_APERTURE};
use crate::operand::{Half, Kind, Operand};
use crate::wave::{FaultKind, Result, Wave, fault};

// ------------------------------------------------------------ data types

/// What a load returns or a store writes: `aux >> 4` of loads and stores.
pub(crate) mod data {
    pub const U8: u32 = 0;
    pub const I8: u32 = 1;
    pub const U16: u32 = 2;
    pub const I16: u32 = 3;
    pub const B32: u32 = 4;
    pub const B64: u32 = 5;
    pub const B96: u32 = 6;
    pub const B128: u32 = 7;
    /// Loads into the low half of the VGPR, keeping the high.
    pub const D16_U8: u32 = 8;
    pub const D16_I8: u32 = 9;
    pub const D16_B16: u32 = 10;
    /// Loads into the high half, keeping the low.
    pub const D16_HI_U8: u32 = 11;
    pub const D16_HI_I8: u32 = 12;
    pub const D16_HI_B16: u32 = 13;
    /// Stores of the low byte / short.
    pub const B8: u32 = 14;
    pub const B16: u32 = 15;
    /// Stores of the high half's low byte / the high short.
    pub const D16_HI_B8: u32 = 16;
    pub const D16_HI_STORE_B16: u32 = 17;
}

/// Bytes a load or store of `code` moves.
pub(crate) fn size(code: u32) -> usize {
    use data::*;
    match code {
        U8 | I8 | D16_U8 | D16_I8 | D16_HI_U8 | D16_HI_I8 | B8 | D16_HI_B8 => 1,
        U16 | I16 | D16_B16 | D16_HI_B16 | B16 | D16_HI_STORE_B16 => 2,
        B32 => 4,
        B64 => 8,
        B96 => 12,
        _ => 16,
    }
}

/// A load's type from the part of its name after `load_` (gfx11 and the
/// canonical gfx9 spellings, and the LDS ones: `u8_d16_hi`).
pub(crate) fn parse_load(t: &str) -> Option<u32> {
    use data::*;
    Some(match t {
        "u8" => U8,
        "i8" => I8,
        "u16" => U16,
        "i16" => I16,
        "b32" => B32,
        "b64" => B64,
        "b96" => B96,
        "b128" => B128,
        "d16_u8" | "u8_d16" => D16_U8,
        "d16_i8" | "i8_d16" => D16_I8,
        "d16_b16" | "u16_d16" => D16_B16,
        "d16_hi_u8" | "u8_d16_hi" => D16_HI_U8,
        "d16_hi_i8" | "i8_d16_hi" => D16_HI_I8,
        "d16_hi_b16" | "u16_d16_hi" => D16_HI_B16,
        _ => return None,
    })
}

/// A store's type from the part of its name after `store_`.
pub(crate) fn parse_store(t: &str) -> Option<u32> {
    use data::*;
    Some(match t {
        "b8" => B8,
        "b16" => B16,
        "b32" => B32,
        "b64" => B64,
        "b96" => B96,
        "b128" => B128,
        "d16_hi_b8" | "b8_d16_hi" => D16_HI_B8,
        "d16_hi_b16" | "b16_d16_hi" => D16_HI_STORE_B16,
        _ => return None,
    })
}

/// Writes a loaded value (`bytes`, little-endian) to `dst` in `lane`.
pub(crate) fn finish_load(w: &mut Wave, dst: &Operand, lane: usize, code: u32, bytes: &[u8; 16]) {
    use data::*;
    let word = |n: usize| u32::from_le_bytes([bytes[4 * n], bytes[4 * n + 1], bytes[4 * n + 2], bytes[4 * n + 3]]);
    let b = u32::from(bytes[0]);
    let h = u32::from(u16::from_le_bytes([bytes[0], bytes[1]]));
    let hi_half = matches!(dst.kind, Kind::Vector { half: Half::Hi, .. });
    // The 16-bit forms replace one half of the whole register (a true16
    // `.h` destination names the high half even without `_hi`).
    let d16 = |w: &mut Wave, v: u32, hi: bool| {
        let old = w.vreg(dst, 0, lane);
        let new = if hi || hi_half { (old & 0xffff) | (v << 16) } else { (old & 0xffff_0000) | (v & 0xffff) };
        w.set_vreg(dst, 0, lane, new);
    };
    match code {
        U8 => w.vwrite(dst, lane, b),
        I8 => w.vwrite(dst, lane, b as u8 as i8 as i32 as u32),
        U16 => w.vwrite(dst, lane, h),
        I16 => w.vwrite(dst, lane, h as u16 as i16 as i32 as u32),
        B32 => w.vwrite(dst, lane, word(0)),
        B64 | B96 | B128 => {
            for n in 0..size(code) / 4 {
                w.set_vreg(dst, n, lane, word(n));
            }
        }
        D16_U8 => d16(w, b, false),
        D16_I8 => d16(w, b as u8 as i8 as u16 as u32, false),
        D16_B16 => d16(w, h, false),
        D16_HI_U8 => d16(w, b, true),
        D16_HI_I8 => d16(w, b as u8 as i8 as u16 as u32, true),
        D16_HI_B16 => d16(w, h, true),
        _ => {}
    }
}

/// The bytes a store of `code` writes from `data` in `lane`.
pub(crate) fn store_bytes(w: &Wave, data: &Operand, lane: usize, code: u32) -> [u8; 16] {
    use data::*;
    let mut out = [0u8; 16];
    let v = match code {
        // `vread` reads a true16 half (`v1.h`) as its 16 bits.
        B8 | B16 => w.vread(data, lane),
        D16_HI_B8 | D16_HI_STORE_B16 => w.vreg(data, 0, lane) >> 16,
        _ => {
            for n in 0..size(code) / 4 {
                out[4 * n..4 * n + 4].copy_from_slice(&w.vreg(data, n, lane).to_le_bytes());
            }
            return out;
        }
    };
    out[..4].copy_from_slice(&v.to_le_bytes());
    out
}

// ------------------------------------------------------------ atomics

/// Atomic operations (`aux >> 4 & 0xff` of atomics; LDS shares them).
pub(crate) mod atomic {
    pub const ADD: u32 = 0;
    pub const SUB: u32 = 1;
    pub const RSUB: u32 = 2;
    pub const MIN_I: u32 = 3;
    pub const MAX_I: u32 = 4;
    pub const MIN_U: u32 = 5;
    pub const MAX_U: u32 = 6;
    pub const AND: u32 = 7;
    pub const OR: u32 = 8;
    pub const XOR: u32 = 9;
    pub const INC: u32 = 10;
    pub const DEC: u32 = 11;
    pub const SWAP: u32 = 12;
    /// `data` is the new value, `data2` the comparand.
    pub const CMPSWAP: u32 = 13;
    /// Subtraction clamped at 0 (`global_atomic_csub_u32`).
    pub const CSUB: u32 = 14;
    /// `(old & ~data) | data2` (LDS).
    pub const MSKOR: u32 = 15;
    pub const FADD: u32 = 16;
    pub const FMIN: u32 = 17;
    pub const FMAX: u32 = 18;
    /// As `CMPSWAP`, compared as floats.
    pub const FCMPSWAP: u32 = 19;
    pub const PK_ADD_F16: u32 = 20;
    pub const PK_ADD_BF16: u32 = 21;
}

/// An atomic's operation and whether it is 64-bit, from `base` (`add`,
/// `cmpswap`, `pk_add`) and `ty` (`u32`, `i64`, `f32`...).
pub(crate) fn parse_atomic(base: &str, ty: &str) -> Option<(u32, bool)> {
    use atomic::*;
    let wide = match ty {
        "u32" | "i32" | "b32" | "f32" | "f16" | "bf16" => false,
        "u64" | "i64" | "b64" | "f64" => true,
        _ => return None,
    };
    let float = ty.starts_with('f') || ty == "bf16";
    let signed = ty.starts_with('i');
    let op = match (base, float) {
        ("add", false) => ADD,
        ("add", true) => FADD,
        ("sub", false) => SUB,
        ("rsub", false) => RSUB,
        ("csub", false) => CSUB,
        ("min", false) => {
            if signed {
                MIN_I
            } else {
                MIN_U
            }
        }
        ("max", false) => {
            if signed {
                MAX_I
            } else {
                MAX_U
            }
        }
        ("min", true) => FMIN,
        ("max", true) => FMAX,
        ("and", false) => AND,
        ("or", false) => OR,
        ("xor", false) => XOR,
        ("inc", false) => INC,
        ("dec", false) => DEC,
        ("swap", false) => SWAP,
        ("cmpswap", false) => CMPSWAP,
        ("cmpswap", true) => FCMPSWAP,
        ("mskor", false) => MSKOR,
        ("pk_add", true) if ty == "f16" => PK_ADD_F16,
        ("pk_add", true) if ty == "bf16" => PK_ADD_BF16,
        _ => return None,
    };
    Some((op, wide))
}

/// The value an atomic `op` leaves in memory over `old` (values of 32-bit
/// operations are in the low half).
pub(crate) fn apply(op: u32, wide: bool, old: u64, d: u64, d2: u64) -> u64 {
    use atomic::*;
    let mask = if wide { u64::MAX } else { 0xffff_ffff };
    let (old, d, d2) = (old & mask, d & mask, d2 & mask);
    let signed = |x: u64| if wide { x as i64 } else { i64::from(x as u32 as i32) };
    let f32s = |x: u64| f32::from_bits(x as u32);
    let f64s = f64::from_bits;
    let fop = |f: fn(f64, f64) -> f64| -> u64 {
        if wide {
            f(f64s(old), f64s(d)).to_bits()
        } else {
            u64::from((f(f64::from(f32s(old)), f64::from(f32s(d))) as f32).to_bits())
        }
    };
    let new = match op {
        ADD => old.wrapping_add(d),
        SUB => old.wrapping_sub(d),
        RSUB => d.wrapping_sub(old),
        CSUB => old.saturating_sub(d),
        MIN_I => if signed(d) < signed(old) { d } else { old },
        MAX_I => if signed(d) > signed(old) { d } else { old },
        MIN_U => d.min(old),
        MAX_U => d.max(old),
        AND => old & d,
        OR => old | d,
        XOR => old ^ d,
        // Wraps at the operand: counts 0..=d.
        INC => if old >= d { 0 } else { old + 1 },
        DEC => if old == 0 || old > d { d } else { old - 1 },
        SWAP => d,
        CMPSWAP => if old == d2 { d } else { old },
        MSKOR => (old & !d) | d2,
        // f32 + f32 rounded once through f64 is the f32 sum (f64 holds it
        // exactly enough: 53 >= 2*24+2); denormals are kept.
        FADD => {
            if wide {
                (f64s(old) + f64s(d)).to_bits()
            } else {
                u64::from((f32s(old) + f32s(d)).to_bits())
            }
        }
        // IEEE minNum/maxNum: a NaN operand yields the other.
        FMIN => fop(f64::min),
        FMAX => fop(f64::max),
        FCMPSWAP => {
            let equal = if wide { f64s(old) == f64s(d2) } else { f32s(old) == f32s(d2) };
            if equal { d } else { old }
        }
        PK_ADD_F16 | PK_ADD_BF16 => {
            let bf = op == PK_ADD_BF16;
            let to = |h: u64| if bf { bf16_to_f32(h as u16) } else { f16_to_f32(h as u16) };
            let from = |f: f32| u64::from(if bf { f32_to_bf16(f) } else { f32_to_f16(f) });
            // One f32 addition then one rounding to 16 bits is the correctly
            // rounded 16-bit sum (24 >= 2*11+2).
            let lo = from(to(old & 0xffff) + to(d & 0xffff));
            let hi = from(to(old >> 16) + to(d >> 16));
            lo | hi << 16
        }
        _ => old,
    };
    new & mask
}

/// Where an atomic acts: memory other waves (or the host) share, updated
/// with a host atomic, or the lane's own scratch, updated plainly.
pub(crate) fn rmw(ptr: *mut u8, private: bool, wide: bool, lane: usize, f: impl Fn(u64) -> u64) -> Result<u64> {
    let len = if wide { 8 } else { 4 };
    if private {
        let mut buf = [0u8; 8];
        // SAFETY: `ptr` came from `scratch_ptr`/`flat_ptr` for `len` bytes.
        unsafe { memory::read(ptr, &mut buf[..len]) };
        let old = u64::from_le_bytes(buf);
        let new = f(old);
        // SAFETY: as above.
        unsafe { memory::write(ptr, &new.to_le_bytes()[..len]) };
        return Ok(old);
    }
    if (ptr as usize) % len != 0 {
        return Err(fault(
            FaultKind::Memory,
            format!("memory access fault: lane {lane} made a misaligned {len}-byte atomic access at {ptr:p}"),
        ));
    }
    // SAFETY: the pointer came from `global_ptr`/`lds_ptr` for `len` bytes
    // and is aligned to `len` (checked above).
    Ok(unsafe {
        if wide { memory::rmw64(ptr, f) } else { u64::from(memory::rmw32(ptr, |x| f(u64::from(x)) as u32)) }
    })
}

// ------------------------------------------------------------ addressing

const FLAT: u32 = 0;
const GLOBAL: u32 = 1;
const SCRATCH: u32 = 2;

fn is_off(o: Option<&Operand>) -> bool {
    o.is_none_or(|o| o.kind == Kind::Off)
}

/// The host pointer of `len` bytes the instruction addresses in `lane`
/// (`vaddr`, `saddr` as printed), and whether it is the lane's scratch.
fn address(
    w: &mut Wave,
    i: &Inst,
    seg: u32,
    vaddr: &Operand,
    saddr: Option<&Operand>,
    len: usize,
    lane: usize,
) -> Result<(*mut u8, bool)> {
    let off = i.mods.offset;
    match seg {
        FLAT => {
            let a = w.vread64(vaddr, lane).wrapping_add_signed(off);
            let private = (a >> 32) as u32 == PRIVATE_APERTURE;
            Ok((w.flat_ptr(a, len, lane)?, private))
        }
        GLOBAL => {
            let a = match saddr {
                Some(s) if !is_off(Some(s)) => w.sread64(s).wrapping_add(u64::from(w.vread(vaddr, lane))),
                _ => w.vread64(vaddr, lane),
            };
            Ok((w.global_ptr(a.wrapping_add_signed(off), len, lane)?, false))
        }
        _ => {
            let mut a = off as u32;
            if !is_off(Some(vaddr)) {
                a = a.wrapping_add(w.vread(vaddr, lane));
            }
            if let Some(s) = saddr.filter(|s| !is_off(Some(s))) {
                a = a.wrapping_add(w.sread(s));
            }
            Ok((w.scratch_ptr(u64::from(a), len, lane)?, true))
        }
    }
}

// ------------------------------------------------------------ semantics

fn load(w: &mut Wave, i: &Inst) -> Result {
    let (seg, code) = (i.aux & 3, i.aux >> 4);
    let len = size(code);
    let (dst, vaddr, saddr) = (i.ops[0], i.ops[1], i.ops.get(2).copied());
    for lane in w.active() {
        let (ptr, _) = address(w, i, seg, &vaddr, saddr.as_ref(), len, lane)?;
        let mut buf = [0u8; 16];
        // SAFETY: `address` checked `len` bytes at `ptr`.
        unsafe { memory::read(ptr, &mut buf[..len]) };
        finish_load(w, &dst, lane, code, &buf);
    }
    Ok(())
}

fn store(w: &mut Wave, i: &Inst) -> Result {
    let (seg, code) = (i.aux & 3, i.aux >> 4);
    let len = size(code);
    let (vaddr, data, saddr) = (i.ops[0], i.ops[1], i.ops.get(2).copied());
    for lane in w.active() {
        let (ptr, _) = address(w, i, seg, &vaddr, saddr.as_ref(), len, lane)?;
        let bytes = store_bytes(w, &data, lane, code);
        // SAFETY: `address` checked `len` bytes at `ptr`.
        unsafe { memory::write(ptr, &bytes[..len]) };
    }
    Ok(())
}

/// The `(data, data2)` of an atomic in `lane`: cmpswap's data operand is
/// the pair {new value, comparand}.
pub(crate) fn atomic_data(w: &Wave, data: &Operand, pair: bool, wide: bool, lane: usize) -> (u64, u64) {
    let get = |n: usize| {
        if wide {
            u64::from(w.vreg(data, 2 * n, lane)) | u64::from(w.vreg(data, 2 * n + 1, lane)) << 32
        } else {
            u64::from(w.vreg(data, n, lane))
        }
    };
    if pair { (get(0), get(1)) } else { (get(0), 0) }
}

/// Writes an atomic's returned (old) value.
pub(crate) fn atomic_return(w: &mut Wave, dst: &Operand, wide: bool, lane: usize, old: u64) {
    w.set_vreg(dst, 0, lane, old as u32);
    if wide {
        w.set_vreg(dst, 1, lane, (old >> 32) as u32);
    }
}

fn atomic_op(w: &mut Wave, i: &Inst) -> Result {
    let seg = i.aux & 3;
    let op = i.aux >> 4 & 0xff;
    let wide = i.aux & 1 << 12 != 0;
    // Flat has no saddr: `[dst,] vaddr, data`.
    let plain = if seg == FLAT { 2 } else { 3 };
    let (dst, rest) = if i.ops.len() > plain { (Some(i.ops[0]), &i.ops[1..]) } else { (None, &i.ops[..]) };
    let (vaddr, data, saddr) = (rest[0], rest[1], rest.get(2).copied());
    let pair = matches!(op, atomic::CMPSWAP | atomic::FCMPSWAP);
    for lane in w.active() {
        let (ptr, private) = address(w, i, seg, &vaddr, saddr.as_ref(), if wide { 8 } else { 4 }, lane)?;
        let (d, d2) = atomic_data(w, &data, pair, wide, lane);
        let old = rmw(ptr, private, wide, lane, |old| apply(op, wide, old, d, d2))?;
        if let Some(dst) = &dst {
            atomic_return(w, dst, wide, lane, old);
        }
    }
    Ok(())
}

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    if name.starts_with("buffer_") {
        return buffer::lookup(name);
    }
    let (seg, op) = if let Some(r) = name.strip_prefix("flat_") {
        (FLAT, r)
    } else if let Some(r) = name.strip_prefix("global_") {
        (GLOBAL, r)
    } else if let Some(r) = name.strip_prefix("scratch_") {
        (SCRATCH, r)
    } else {
        return None;
    };
    if let Some(t) = op.strip_prefix("load_") {
        return parse_load(t).map(|c| (load as Exec, seg | c << 4));
    }
    if let Some(t) = op.strip_prefix("store_") {
        return parse_store(t).map(|c| (store as Exec, seg | c << 4));
    }
    let (base, ty) = op.strip_prefix("atomic_")?.rsplit_once('_')?;
    let (code, wide) = parse_atomic(base, ty)?;
    if matches!(code, atomic::RSUB | atomic::MSKOR) {
        return None;
    }
    Some((atomic_op as Exec, seg | code << 4 | u32::from(wide) << 12))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::memory::SHARED_APERTURE;
    use crate::ops::testing::{TestMem, run, wave};

    /// This family's mnemonics in our gfx1100 and gfx942 code objects.
    const SEEN: &[&str] = &[
        "scratch_load_b32", "scratch_store_b32", "flat_load_b64", "flat_store_b128", "flat_load_b128",
        "global_load_b64", "flat_store_b64", "scratch_load_b64", "flat_store_b32", "flat_load_b32",
        "scratch_load_b128", "global_load_b32", "scratch_store_b128", "scratch_store_b64", "flat_load_d16_u8",
        "flat_store_b8", "flat_atomic_cmpswap_b64", "flat_store_b16", "global_atomic_cmpswap_b64",
        "flat_load_u8", "flat_load_d16_b16", "flat_load_d16_i8", "global_store_b64", "global_load_d16_u8",
        "flat_atomic_add_u32", "scratch_store_b96", "scratch_load_b96", "flat_store_b96", "flat_load_d16_hi_u8",
        "flat_atomic_cmpswap_b32", "flat_store_d16_hi_b8", "flat_atomic_add_u64", "flat_store_d16_hi_b16",
        "flat_load_b96", "flat_atomic_swap_b32", "global_load_d16_b16", "global_load_b128",
        "global_atomic_add_u64", "global_atomic_cmpswap_b32", "flat_load_d16_hi_b16", "global_store_b128",
        "scratch_store_b16", "global_atomic_add_u32", "global_load_d16_hi_u8", "global_load_u8",
        "scratch_load_d16_b16", "global_atomic_swap_b32", "global_load_d16_i8", "global_load_d16_hi_b16",
        "flat_load_u16", "flat_atomic_swap_b64", "scratch_store_d16_hi_b16", "global_store_b8",
        "global_store_b32", "flat_load_d16_hi_i8", "scratch_load_d16_hi_b16", "global_load_i16",
        "global_load_d16_hi_i8", "global_atomic_swap_b64", "global_load_u16",
        // gfx942
        "scratch_store_dword", "scratch_load_dword", "flat_load_dwordx2", "global_load_dwordx2",
        "flat_store_dwordx4", "flat_store_dword", "flat_store_dwordx2", "flat_load_dwordx4", "flat_load_dword",
        "global_load_dword", "global_store_dwordx2", "flat_store_byte", "scratch_load_dwordx2",
        "scratch_store_dwordx2", "global_atomic_cmpswap_x2", "flat_store_short", "flat_load_ubyte",
        "scratch_store_dwordx4", "global_load_ubyte", "flat_load_ushort", "scratch_load_dwordx4",
        "flat_load_sbyte", "global_load_ushort", "global_store_dwordx4", "flat_atomic_sub_x2",
        "global_atomic_cmpswap", "flat_store_dwordx3", "global_atomic_add", "global_atomic_add_x2",
        "global_load_dwordx4", "flat_atomic_cmpswap", "flat_atomic_add_x2", "global_load_sbyte",
        "flat_load_dwordx3", "global_atomic_swap", "global_atomic_sub", "flat_atomic_umax_x2", "flat_atomic_or",
        "flat_atomic_cmpswap_x2", "flat_atomic_add",
    ];

    #[test]
    fn every_mnemonic_we_use_is_known() {
        for m in SEEN {
            assert!(lookup(&crate::ops::canonical(m)).is_some(), "{m} ({})", crate::ops::canonical(m));
        }
        for m in [
            "global_atomic_add_f32", "global_atomic_pk_add_f16", "global_atomic_pk_add_bf16", "flat_atomic_add_f64",
            "global_atomic_min_f64", "global_atomic_max_f32", "global_atomic_csub_u32", "flat_atomic_inc_u32",
            "flat_atomic_dec_x2", "global_atomic_smin", "global_atomic_umin_x2", "flat_atomic_xor_x2",
            "global_load_short_d16_hi", "global_store_byte_d16_hi", "flat_load_sshort", "global_atomic_cmpswap_f32",
        ] {
            assert!(lookup(&crate::ops::canonical(m)).is_some(), "{m}");
        }
        assert!(lookup("global_load_lds_b32").is_none());
        assert!(lookup("ds_load_b32").is_none());
    }

    fn put(m: &TestMem, off: usize, bytes: &[u8]) {
        // SAFETY: inside the test's registered memory.
        unsafe { memory::write((m.addr() as *mut u8).add(off), bytes) };
    }

    fn u32_at(m: &TestMem, off: usize) -> u32 {
        u32::from_le_bytes(m.bytes()[off..off + 4].try_into().unwrap())
    }

    fn u64_at(m: &TestMem, off: usize) -> u64 {
        u64::from_le_bytes(m.bytes()[off..off + 8].try_into().unwrap())
    }

    fn set64(w: &mut Wave, reg: usize, lane: usize, v: u64) {
        w.v[reg][lane] = v as u32;
        w.v[reg + 1][lane] = (v >> 32) as u32;
    }

    #[test]
    fn global_loads_of_every_width() {
        let m = TestMem::new(64);
        put(&m, 0, &[0x81, 0xff, 0x34, 0x12, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        set64(&mut w, 2, 0, m.addr());
        let cases: &[(&str, &[u32])] = &[
            ("global_load_u8 v10, v[2:3], off", &[0x81]),
            ("global_load_i8 v10, v[2:3], off", &[0xffff_ff81]),
            ("global_load_u16 v10, v[2:3], off", &[0xff81]),
            ("global_load_i16 v10, v[2:3], off", &[0xffff_ff81]),
            ("global_load_i16 v10, v[2:3], off offset:2", &[0x1234]),
            ("global_load_b32 v10, v[2:3], off", &[0x1234_ff81]),
            ("global_load_b64 v[10:11], v[2:3], off offset:4", &[0x0807_0605, 0x0c0b_0a09]),
            ("global_load_b96 v[10:12], v[2:3], off offset:4", &[0x0807_0605, 0x0c0b_0a09, 0x100f_0e0d]),
            ("global_load_b128 v[10:13], v[2:3], off offset:4", &[0x0807_0605, 0x0c0b_0a09, 0x100f_0e0d, 0x1413_1211]),
            ("global_load_dwordx2 v[10:11], v[2:3], off", &[0x1234_ff81, 0x0807_0605]),
            ("global_load_sbyte v10, v[2:3], off offset:2", &[0x34]),
        ];
        for (asm, want) in cases {
            for r in 10..14 {
                w.v[r][0] = 0xdead_beef;
            }
            run(&mut w, asm).unwrap();
            for (n, v) in want.iter().enumerate() {
                assert_eq!(w.v[10 + n][0], *v, "{asm} word {n}");
            }
        }
    }

    #[test]
    fn d16_loads_keep_the_other_half() {
        let m = TestMem::new(16);
        put(&m, 0, &[0x81, 0xff, 0x34, 0x12]);
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        set64(&mut w, 2, 0, m.addr());
        let cases = [
            ("flat_load_d16_u8 v10, v[2:3]", 0xaaaa_0081),
            ("flat_load_d16_i8 v10, v[2:3]", 0xaaaa_ff81),
            ("flat_load_d16_b16 v10, v[2:3]", 0xaaaa_ff81),
            ("flat_load_d16_hi_u8 v10, v[2:3]", 0x0081_aaaa),
            ("flat_load_d16_hi_i8 v10, v[2:3]", 0xff81_aaaa),
            ("flat_load_d16_hi_b16 v10, v[2:3] offset:2", 0x1234_aaaa),
            ("flat_load_ubyte_d16_hi v10, v[2:3] offset:2", 0x0034_aaaa),
            ("flat_load_short_d16 v10, v[2:3] offset:2", 0xaaaa_1234),
        ];
        for (asm, want) in cases {
            w.v[10][0] = 0xaaaa_aaaa;
            run(&mut w, asm).unwrap();
            assert_eq!(w.v[10][0], want, "{asm}");
        }
    }

    #[test]
    fn stores_of_every_width() {
        let m = TestMem::new(64);
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        set64(&mut w, 2, 0, m.addr());
        w.v[4][0] = 0x4433_2211;
        w.v[5][0] = 0x8877_6655;
        w.v[6][0] = 0xccbb_aa99;
        w.v[7][0] = 0x00ff_eedd;
        run(&mut w, "global_store_b128 v[2:3], v[4:7], off").unwrap();
        assert_eq!((u64_at(&m, 0), u64_at(&m, 8)), (0x8877_6655_4433_2211, 0x00ff_eedd_ccbb_aa99));
        run(&mut w, "global_store_b96 v[2:3], v[4:6], off offset:16").unwrap();
        assert_eq!((u64_at(&m, 16), u32_at(&m, 24), u32_at(&m, 28)), (0x8877_6655_4433_2211, 0xccbb_aa99, 0));
        run(&mut w, "global_store_b8 v[2:3], v4, off offset:32").unwrap();
        run(&mut w, "global_store_d16_hi_b8 v[2:3], v4, off offset:33").unwrap();
        run(&mut w, "flat_store_b16 v[2:3], v5 offset:34").unwrap();
        assert_eq!(u32_at(&m, 32), 0x6655_3311);
        run(&mut w, "flat_store_d16_hi_b16 v[2:3], v5 offset:36").unwrap();
        run(&mut w, "flat_store_short_d16_hi v[2:3], v6 offset:38").unwrap();
        assert_eq!(u32_at(&m, 36), 0xccbb_8877);
        run(&mut w, "flat_store_dwordx2 v[2:3], v[6:7] offset:40").unwrap();
        assert_eq!(u64_at(&m, 40), 0x00ff_eedd_ccbb_aa99);
        run(&mut w, "global_store_dword v[2:3], v7, off offset:48").unwrap();
        assert_eq!(u32_at(&m, 48), 0x00ff_eedd);
    }

    #[test]
    fn global_saddr_and_negative_offset() {
        // `global_load_b32 v1, v2, s[4:5] offset:-16`: SGPR base plus an
        // unsigned VGPR offset, each lane its own.
        let m = TestMem::new(256);
        for n in 0..64 {
            put(&m, n * 4, &(n as u32 * 3).to_le_bytes());
        }
        let mut w = wave(Arch::Gfx942);
        w.s[4] = m.addr() as u32;
        w.s[5] = (m.addr() >> 32) as u32;
        for lane in 0..64 {
            w.v[2][lane] = lane as u32 * 4 + 16;
        }
        w.set_exec(0x8000_0000_0000_0005);
        run(&mut w, "global_load_dword v1, v2, s[4:5] offset:-16").unwrap();
        assert_eq!((w.v[1][0], w.v[1][2], w.v[1][63], w.v[1][1]), (0, 6, 189, 0));
        // gfx942 store operand order: vaddr, data, saddr.
        w.v[3][0] = 0x55;
        w.set_exec(1);
        run(&mut w, "global_store_dword v2, v3, s[4:5] sc0 sc1").unwrap();
        assert_eq!(u32_at(&m, 16), 0x55);
    }

    #[test]
    fn scratch_addressing_per_lane() {
        let mut w = wave(Arch::Gfx1100);
        w.s[32] = 16;
        for lane in 0..32 {
            w.v[40][lane] = 100 + lane as u32;
        }
        // gfx11 store: vaddr off, data, saddr.
        run(&mut w, "scratch_store_b32 off, v40, s32 offset:8").unwrap();
        for lane in 0..32 {
            let at = lane * 1024 + 24;
            assert_eq!(u32::from_le_bytes(w.scratch[at..at + 4].try_into().unwrap()), 100 + lane as u32);
        }
        run(&mut w, "scratch_load_b32 v1, off, s32 offset:8").unwrap();
        assert_eq!((w.v[1][0], w.v[1][31]), (100, 131));
        // VGPR offset, no SGPR.
        w.v[2][3] = 20;
        run(&mut w, "scratch_load_b32 v5, v2, off offset:4").unwrap();
        assert_eq!(w.v[5][3], 103);
        // Both off: the offset alone.
        run(&mut w, "scratch_load_b32 v6, off, off offset:24").unwrap();
        assert_eq!(w.v[6][7], 107);
        // gfx9 spelling, gfx942 wave64.
        let mut w = wave(Arch::Gfx942);
        w.s[33] = 8;
        w.v[7][63] = 0x1234_5678;
        w.v[8][63] = 0x9abc_def0;
        run(&mut w, "scratch_store_dwordx2 off, v[7:8], s33 offset:4").unwrap();
        run(&mut w, "scratch_load_dword v9, off, s33 offset:8").unwrap();
        assert_eq!(w.v[9][63], 0x9abc_def0);
        run(&mut w, "scratch_store_d16_hi_b16 off, v8, s33 offset:1").unwrap();
        run(&mut w, "scratch_load_d16_b16 v10, off, s33 offset:1").unwrap();
        assert_eq!(w.v[10][63] & 0xffff, 0x9abc);
        // Past the private segment: a fault naming the lane.
        let e = run(&mut w, "scratch_load_dword v9, off, s33 offset:1020");
        assert!(matches!(e, Err(crate::wave::Stop::Fault(f)) if f.message.contains("lane 0")));
    }

    #[test]
    fn flat_apertures() {
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(0b110);
        for lane in 0..32 {
            set64(&mut w, 40, lane, u64::from(PRIVATE_APERTURE) << 32 | 64);
            w.v[0][lane] = lane as u32 * 7;
        }
        run(&mut w, "flat_store_b32 v[40:41], v0 offset:16").unwrap();
        assert_eq!(w.scratch[2 * 1024 + 80], 14);
        run(&mut w, "scratch_load_b32 v1, off, off offset:80").unwrap();
        assert_eq!((w.v[1][1], w.v[1][2], w.v[1][0]), (7, 14, 0));
        // LDS through the shared aperture.
        set64(&mut w, 40, 1, u64::from(SHARED_APERTURE) << 32 | 8);
        w.set_exec(0b10);
        run(&mut w, "flat_store_b32 v[40:41], v0").unwrap();
        run(&mut w, "flat_atomic_add_u32 v3, v[40:41], v0 glc").unwrap();
        assert_eq!(w.v[3][1], 7);
        run(&mut w, "flat_load_b32 v4, v[40:41]").unwrap();
        assert_eq!(w.v[4][1], 14);
        // Unmapped memory faults.
        set64(&mut w, 40, 1, 0x10);
        assert!(run(&mut w, "flat_load_b32 v4, v[40:41]").is_err());
    }

    #[test]
    fn atomics_return_the_old_value_only_when_asked() {
        let m = TestMem::new(64);
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(0b11);
        for lane in 0..2 {
            set64(&mut w, 2, lane, m.addr());
        }
        w.v[4][0] = 5;
        w.v[4][1] = 7;
        w.v[9][0] = 0xdead;
        // No glc: two operands, v4 is data; lanes add in order.
        run(&mut w, "flat_atomic_add_u32 v[2:3], v4 offset:4").unwrap();
        assert_eq!((u32_at(&m, 4), w.v[9][0]), (12, 0xdead));
        run(&mut w, "flat_atomic_add_u32 v9, v[2:3], v4 offset:4 glc").unwrap();
        assert_eq!((u32_at(&m, 4), w.v[9][0], w.v[9][1]), (24, 12, 17));
        // global with saddr, returning (gfx942 `sc0`).
        let mut w = wave(Arch::Gfx942);
        w.set_exec(1);
        w.s[2] = m.addr() as u32;
        w.s[3] = (m.addr() >> 32) as u32;
        w.v[1][0] = 4;
        w.v[2][0] = 1;
        run(&mut w, "global_atomic_sub v0, v1, v2, s[2:3] sc0").unwrap();
        assert_eq!((w.v[0][0], u32_at(&m, 4)), (24, 23));
        run(&mut w, "global_atomic_add v1, v2, s[2:3]").unwrap();
        assert_eq!((w.v[1][0], u32_at(&m, 4)), (4, 24));
    }

    #[test]
    fn cmpswap_32_and_64() {
        let m = TestMem::new(64);
        put(&m, 0, &10u32.to_le_bytes());
        put(&m, 8, &0x1_0000_0000u64.to_le_bytes());
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(1);
        set64(&mut w, 0, 0, m.addr());
        // v[2:3] = {new, compare}.
        w.v[2][0] = 99;
        w.v[3][0] = 11;
        run(&mut w, "flat_atomic_cmpswap_b32 v5, v[0:1], v[2:3] glc").unwrap();
        assert_eq!((w.v[5][0], u32_at(&m, 0)), (10, 10));
        w.v[3][0] = 10;
        run(&mut w, "flat_atomic_cmpswap_b32 v5, v[0:1], v[2:3] glc").unwrap();
        assert_eq!((w.v[5][0], u32_at(&m, 0)), (10, 99));
        // v[4:7] = {new v[4:5], compare v[6:7]}, saddr form.
        w.s[2] = m.addr() as u32;
        w.s[3] = (m.addr() >> 32) as u32;
        w.v[8][0] = 8;
        set64(&mut w, 4, 0, 0xffff_ffff_0000_0001);
        set64(&mut w, 6, 0, 0x1_0000_0000);
        run(&mut w, "global_atomic_cmpswap_b64 v[13:14], v8, v[4:7], s[2:3] glc").unwrap();
        assert_eq!((w.v[13][0], w.v[14][0], u64_at(&m, 8)), (0, 1, 0xffff_ffff_0000_0001));
        // gfx942, no return.
        let mut w = wave(Arch::Gfx942);
        w.set_exec(1);
        set64(&mut w, 0, 0, m.addr() + 8);
        set64(&mut w, 2, 0, 5);
        set64(&mut w, 4, 0, 0xffff_ffff_0000_0001);
        run(&mut w, "global_atomic_cmpswap_x2 v[0:1], v[2:5], off").unwrap();
        assert_eq!(u64_at(&m, 8), 5);
    }

    #[test]
    fn atomic_operations() {
        use atomic::*;
        assert_eq!(apply(ADD, false, 0xffff_ffff, 2, 0), 1);
        assert_eq!(apply(ADD, true, 0xffff_ffff, 2, 0), 0x1_0000_0001);
        assert_eq!(apply(SUB, false, 0, 1, 0), 0xffff_ffff);
        assert_eq!(apply(MIN_I, false, 5, 0xffff_fffe, 0), 0xffff_fffe);
        assert_eq!(apply(MIN_U, false, 5, 0xffff_fffe, 0), 5);
        assert_eq!(apply(MAX_I, true, 5, u64::MAX, 0), 5);
        assert_eq!(apply(MAX_U, true, 5, u64::MAX, 0), u64::MAX);
        assert_eq!(apply(INC, false, 3, 4, 0), 4);
        assert_eq!(apply(INC, false, 4, 4, 0), 0);
        assert_eq!(apply(DEC, false, 0, 4, 0), 4);
        assert_eq!(apply(DEC, false, 9, 4, 0), 4);
        assert_eq!(apply(DEC, false, 3, 4, 0), 2);
        assert_eq!(apply(CSUB, false, 3, 4, 0), 0);
        assert_eq!(apply(CSUB, false, 9, 4, 0), 5);
        assert_eq!(apply(MSKOR, false, 0xff, 0x0f, 0x100), 0x1f0);
        assert_eq!(apply(FADD, false, 1.5f32.to_bits().into(), 2.25f32.to_bits().into(), 0), 3.75f32.to_bits().into());
        assert_eq!(apply(FADD, true, 1.5f64.to_bits(), 2.25f64.to_bits(), 0), 3.75f64.to_bits());
        let nan = u64::from(f32::NAN.to_bits());
        assert_eq!(apply(FMIN, false, nan, 2f32.to_bits().into(), 0), 2f32.to_bits().into());
        assert_eq!(apply(FMAX, false, 1f32.to_bits().into(), 2f32.to_bits().into(), 0), 2f32.to_bits().into());
        // -0.0 == 0.0 for the float compare-and-swap.
        assert_eq!(apply(FCMPSWAP, false, 0x8000_0000, 7, 0), 7);
        // f16 pairs: 1.0 + 2.0 = 3.0 (0x4200), 0.5 + 0.5 = 1.0 (0x3c00).
        assert_eq!(apply(PK_ADD_F16, false, 0x3c00_3800, 0x4000_3800, 0), 0x4200_3c00);
        // bf16: 1.0 (0x3f80) + 1.0 = 2.0 (0x4000).
        assert_eq!(apply(PK_ADD_BF16, false, 0x3f80_3f80, 0x3f80_0000, 0), 0x4000_3f80);
    }

    #[test]
    fn half_conversions() {
        for h in [0u16, 1, 0x3ff, 0x400, 0x3c00, 0x7bff, 0x7c00, 0x8001, 0xfbff] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
        }
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02);
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0);
        assert_eq!(f32_to_f16(2f32.powi(-25) * 1.5), 1);
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(f32_to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
    }

    #[test]
    fn atomics_64_and_inc_dec_through_memory() {
        let m = TestMem::new(64);
        let mut w = wave(Arch::Gfx942);
        w.set_exec(0b111);
        for lane in 0..3 {
            set64(&mut w, 0, lane, m.addr() + 16);
            set64(&mut w, 2, lane, 2);
        }
        // Wraps at 2: 0 → 1 → 2 → 0, returning 0, 1, 2.
        run(&mut w, "flat_atomic_inc v4, v[0:1], v2 sc0").unwrap();
        assert_eq!((w.v[4][0], w.v[4][1], w.v[4][2], u32_at(&m, 16)), (0, 1, 2, 0));
        run(&mut w, "flat_atomic_dec v4, v[0:1], v2 sc0").unwrap();
        assert_eq!((w.v[4][0], w.v[4][1], w.v[4][2], u32_at(&m, 16)), (0, 2, 1, 0));
        put(&m, 24, &u64::MAX.to_le_bytes());
        w.set_exec(1);
        set64(&mut w, 0, 0, m.addr() + 24);
        run(&mut w, "flat_atomic_add_x2 v[4:5], v[0:1], v[2:3] sc0").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0], u64_at(&m, 24)), (u32::MAX, u32::MAX, 1));
        run(&mut w, "flat_atomic_umax_x2 v[0:1], v[2:3]").unwrap();
        assert_eq!(u64_at(&m, 24), 2);
        run(&mut w, "flat_atomic_sub_x2 v[0:1], v[0:1], v[2:3] sc0").unwrap();
        assert_eq!(u64_at(&m, 24), 0);
        // Misaligned: a fault, not a torn update.
        set64(&mut w, 0, 0, m.addr() + 26);
        assert!(run(&mut w, "flat_atomic_or v0, v[0:1], v2 sc0").is_err());
    }

    #[test]
    fn exec_masking_and_faults_stop_the_instruction() {
        let m = TestMem::new(16);
        let mut w = wave(Arch::Gfx1100);
        w.set_exec(0);
        // No lanes: nothing is touched, not even an unmapped address.
        run(&mut w, "global_load_b32 v1, v[2:3], off").unwrap();
        w.set_exec(0b101);
        set64(&mut w, 2, 0, m.addr());
        set64(&mut w, 2, 2, 8);
        w.v[1][0] = 1;
        w.v[1][1] = 1;
        let e = run(&mut w, "global_load_b32 v1, v[2:3], off");
        let lane2 = |f: &crate::wave::Fault| f.kind == FaultKind::Memory && f.message.contains("lane 2");
        assert!(matches!(e, Err(crate::wave::Stop::Fault(f)) if lane2(&f)));
        assert_eq!((w.v[1][0], w.v[1][1]), (0, 1));
    }
}
