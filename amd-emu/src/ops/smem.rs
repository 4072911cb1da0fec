//! Scalar memory (SMEM): loads into SGPRs (kernel arguments, the dispatch
//! packet, globals found through `s_getpc`), and gfx9's scalar stores and
//! atomics.
//!
//! The address is the 64-bit SGPR pair `sbase` plus the offset: the third
//! operand, which LLVM prints as an immediate (`0x80`, `-0x20`), an SGPR
//! (`s2`, added as an unsigned 32-bit value) or `null`, plus an `offset:`
//! modifier when it prints both. The hardware ignores the low two bits
//! (SMEM accesses are dword-aligned), and so does the emulator. The
//! `s_buffer_*` forms take a buffer resource (four SGPRs) instead: base in
//! bits [47:0], the size in bytes (NUM_RECORDS) in the third dword; dwords
//! past the end read as 0 and are not written.

use super::{Exec, vmem};
use crate::decode::Inst;
use crate::memory;
use crate::operand::{Kind, NULL, Operand, SCALAR_FILE};
use crate::wave::{Result, Wave};

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let dwords = |w: &str| match w {
        "b32" => Some(1),
        "b64" => Some(2),
        "b96" => Some(3),
        "b128" => Some(4),
        "b256" => Some(8),
        "b512" => Some(16),
        _ => None,
    };
    // gfx9's scalar stores and buffer stores keep their `dword` names.
    let gfx9 = |w: &str| match w {
        "dword" => Some(1),
        "dwordx2" => Some(2),
        "dwordx4" => Some(4),
        _ => None,
    };
    if let Some(n) = name.strip_prefix("s_load_").and_then(dwords) {
        return Some((s_load, n));
    }
    if let Some(n) = name.strip_prefix("s_buffer_load_").and_then(dwords) {
        return Some((s_buffer_load, n));
    }
    if let Some(n) = name.strip_prefix("s_store_").and_then(|w| dwords(w).or_else(|| gfx9(w))) {
        return Some((s_store, n));
    }
    if let Some(n) = name.strip_prefix("s_buffer_store_").and_then(|w| dwords(w).or_else(|| gfx9(w))) {
        return Some((s_buffer_store, n));
    }
    if let Some(rest) = name.strip_prefix("s_atomic_") {
        return atomic_code(rest).map(|a| (s_atomic as Exec, a));
    }
    if let Some(rest) = name.strip_prefix("s_buffer_atomic_") {
        return atomic_code(rest).map(|a| (s_buffer_atomic as Exec, a));
    }
    match name {
        // Cache control and address-translation probes: the emulator has
        // no caches and no translation.
        "s_dcache_discard" | "s_dcache_discard_x2" | "s_dcache_wb_vol" | "s_dcache_inv_vol" | "s_gl1_inv"
        | "s_atc_probe" | "s_atc_probe_buffer" => Some((nop, 0)),
        _ => None,
    }
}

fn nop(_: &mut Wave, _: &Inst) -> Result {
    Ok(())
}

// ------------------------------------------------------------ addresses

/// The immediate or register offset (third operand) plus `offset:`.
fn offset(w: &Wave, i: &Inst) -> i64 {
    let third = match i.ops.get(2) {
        Some(o) => match o.kind {
            Kind::Scalar { .. } => i64::from(w.sread(o)),
            Kind::Int(v) => v,
            // Offsets are 21-bit signed: a printed literal is never above
            // 0xfffff, so reading it as i32 changes nothing but is safe.
            Kind::Literal(v) => i64::from(v as i32),
            // A negative offset is printed `-0x20`, which the operand
            // parser does not read as a number.
            _ => i.text.get(2).and_then(|t| parse_signed_hex(t)).unwrap_or(0),
        },
        None => 0,
    };
    third + i.mods.offset
}

fn parse_signed_hex(t: &str) -> Option<i64> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let v = match body.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => body.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The dword-aligned address of a global SMEM access.
fn address(w: &Wave, i: &Inst) -> u64 {
    w.sread64(&i.ops[1]).wrapping_add_signed(offset(w, i)) & !3
}

/// A buffer resource: (base, size in bytes).
fn resource(w: &Wave, o: &Operand) -> (u64, u32) {
    match o.kind {
        Kind::Scalar { index, .. } if (index as usize) + 3 < SCALAR_FILE => {
            let s = &w.s[index as usize..];
            (u64::from(s[0]) | u64::from(s[1] & 0xffff) << 32, s[2])
        }
        _ => (0, 0),
    }
}

/// The first SGPR of a data operand, unless it is `null`.
fn sgprs(o: &Operand) -> Option<usize> {
    match o.kind {
        Kind::Scalar { index, .. } if index != NULL => Some(index as usize),
        _ => None,
    }
}

fn write_sgprs(w: &mut Wave, o: &Operand, vals: &[u32]) {
    if let Some(first) = sgprs(o) {
        for (k, v) in vals.iter().enumerate() {
            if let Some(r) = w.s.get_mut(first + k) {
                *r = *v;
            }
        }
    }
}

fn read_sgprs(w: &Wave, o: &Operand, n: usize) -> [u32; 16] {
    let mut vals = [0u32; 16];
    if let Some(first) = sgprs(o) {
        for (k, v) in vals.iter_mut().take(n).enumerate() {
            *v = w.s.get(first + k).copied().unwrap_or(0);
        }
    }
    vals
}

// ------------------------------------------------------------ loads and stores

fn s_load(w: &mut Wave, i: &Inst) -> Result {
    let n = i.aux as usize;
    let addr = address(w, i);
    let p = w.global_ptr(addr, n * 4, 0)?;
    let mut bytes = [0u8; 64];
    // SAFETY: global_ptr checked that the n dwords lie in device memory.
    unsafe { memory::read(p, &mut bytes[..n * 4]) };
    let vals: Vec<u32> = bytes[..n * 4].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    write_sgprs(w, &i.ops[0], &vals);
    Ok(())
}

fn s_store(w: &mut Wave, i: &Inst) -> Result {
    let n = i.aux as usize;
    let vals = read_sgprs(w, &i.ops[0], n);
    let addr = address(w, i);
    let p = w.global_ptr(addr, n * 4, 0)?;
    let bytes: Vec<u8> = vals[..n].iter().flat_map(|v| v.to_le_bytes()).collect();
    // SAFETY: global_ptr checked that the n dwords lie in device memory.
    unsafe { memory::write(p, &bytes) };
    Ok(())
}

/// The buffer offset of an `s_buffer_*` access (unsigned, dword-aligned).
fn buffer_offset(w: &Wave, i: &Inst) -> u64 {
    (offset(w, i) as u64 & 0xffff_ffff) & !3
}

fn s_buffer_load(w: &mut Wave, i: &Inst) -> Result {
    let n = i.aux as usize;
    let (base, size) = resource(w, &i.ops[1]);
    let off = buffer_offset(w, i);
    let mut vals = [0u32; 16];
    for (k, v) in vals.iter_mut().take(n).enumerate() {
        let o = off + 4 * k as u64;
        if o + 4 <= u64::from(size) {
            let p = w.global_ptr(base + o, 4, 0)?;
            let mut b = [0u8; 4];
            // SAFETY: global_ptr checked the dword lies in device memory.
            unsafe { memory::read(p, &mut b) };
            *v = u32::from_le_bytes(b);
        }
    }
    write_sgprs(w, &i.ops[0], &vals[..n]);
    Ok(())
}

fn s_buffer_store(w: &mut Wave, i: &Inst) -> Result {
    let n = i.aux as usize;
    let vals = read_sgprs(w, &i.ops[0], n);
    let (base, size) = resource(w, &i.ops[1]);
    let off = buffer_offset(w, i);
    for (k, v) in vals.iter().take(n).enumerate() {
        let o = off + 4 * k as u64;
        if o + 4 <= u64::from(size) {
            let p = w.global_ptr(base + o, 4, 0)?;
            // SAFETY: global_ptr checked the dword lies in device memory.
            unsafe { memory::write(p, &v.to_le_bytes()) };
        }
    }
    Ok(())
}

// ------------------------------------------------------------ atomics

/// Added to vmem's atomic code for the 64-bit (`_x2`) forms.
const WIDE: u32 = 0x100;

/// The atomic `rest` names (`add`, `smin_x2`), in vmem's codes: the same
/// operations as the vector atomics, spelled the gfx9 scalar way.
fn atomic_code(rest: &str) -> Option<u32> {
    let (op, wide) = match rest.strip_suffix("_x2") {
        Some(o) => (o, true),
        None => (rest, false),
    };
    let (base, signed) = match op {
        "smin" => ("min", true),
        "smax" => ("max", true),
        "umin" => ("min", false),
        "umax" => ("max", false),
        "swap" | "cmpswap" | "add" | "sub" | "and" | "or" | "xor" | "inc" | "dec" => (op, false),
        _ => return None,
    };
    let ty = match (wide, signed) {
        (false, false) => "u32",
        (false, true) => "i32",
        (true, false) => "u64",
        (true, true) => "i64",
    };
    let (code, _) = vmem::parse_atomic(base, ty)?;
    Some(code | if wide { WIDE } else { 0 })
}

/// Runs the atomic at `addr`; with `glc` the old value goes to the data registers.
fn atomic_at(w: &mut Wave, i: &Inst, addr: u64) -> Result {
    let wide = i.aux & WIDE != 0;
    let op = i.aux & !WIDE;
    let n = if wide { 2 } else { 1 };
    let data = read_sgprs(w, &i.ops[0], 2 * n);
    let join = |lo: u32, hi: u32| if wide { u64::from(lo) | u64::from(hi) << 32 } else { u64::from(lo) };
    let src = join(data[0], data[1]);
    let cmp = if wide { join(data[2], data[3]) } else { u64::from(data[1]) };
    let old = if wide {
        let addr = addr & !7;
        let p = w.global_ptr(addr, 8, 0)?;
        // SAFETY: checked to be device memory, and 8-byte aligned above.
        unsafe { memory::rmw64(p, |o| vmem::apply(op, true, o, src, cmp)) }
    } else {
        let p = w.global_ptr(addr, 4, 0)?;
        // SAFETY: checked to be device memory; the address is dword-aligned.
        u64::from(unsafe { memory::rmw32(p, |o| vmem::apply(op, false, u64::from(o), src, cmp) as u32) })
    };
    // `glc` (gfx940: `sc0`) returns the old value in the data registers.
    if i.mods.glc || i.mods.sc0 {
        write_sgprs(w, &i.ops[0], &[old as u32, (old >> 32) as u32][..n]);
    }
    Ok(())
}

fn s_atomic(w: &mut Wave, i: &Inst) -> Result {
    let addr = address(w, i);
    atomic_at(w, i, addr)
}

fn s_buffer_atomic(w: &mut Wave, i: &Inst) -> Result {
    let (base, size) = resource(w, &i.ops[1]);
    let off = buffer_offset(w, i);
    let len = if i.aux & WIDE != 0 { 8 } else { 4 };
    if off + len > u64::from(size) {
        // Out of range: nothing happens (and a return reads 0).
        if i.mods.glc || i.mods.sc0 {
            write_sgprs(w, &i.ops[0], &[0, 0][..len as usize / 4]);
        }
        return Ok(());
    }
    atomic_at(w, i, base + off)
}

#[cfg(test)]
mod tests {
    use crate::arch::Arch;
    use crate::ops::testing::{TestMem, run, wave};
    use crate::wave::{FaultKind, Stop, Wave};

    fn set64(w: &mut Wave, r: usize, v: u64) {
        w.s[r] = v as u32;
        w.s[r + 1] = (v >> 32) as u32;
    }

    /// Memory holding dword k = 0x1000 + k.
    fn mem() -> TestMem {
        let mut m = TestMem::new(256);
        for k in 0..32u64 {
            m.0[k as usize] = (0x1000 + 2 * k) | (0x1001 + 2 * k) << 32;
        }
        m
    }

    fn dword(m: &TestMem, k: usize) -> u32 {
        let b = m.bytes();
        u32::from_le_bytes(b[k * 4..k * 4 + 4].try_into().unwrap())
    }

    #[test]
    fn gfx11_loads() {
        let m = mem();
        let mut w = wave(Arch::Gfx1100);
        set64(&mut w, 0, m.addr());
        run(&mut w, "s_load_b64 s[36:37], s[0:1], null").unwrap();
        assert_eq!((w.s[36], w.s[37]), (0x1000, 0x1001));
        run(&mut w, "s_load_b32 s2, s[0:1], 0x4").unwrap();
        assert_eq!(w.s[2], 0x1001);
        run(&mut w, "s_load_b128 s[4:7], s[0:1], 0x10").unwrap();
        assert_eq!(w.s[4..8], [0x1004, 0x1005, 0x1006, 0x1007]);
        run(&mut w, "s_load_b512 s[40:55], s[0:1], null").unwrap();
        assert_eq!((w.s[40], w.s[55]), (0x1000, 0x100f));
        run(&mut w, "s_load_b256 s[8:15], s[0:1], 0x20").unwrap();
        assert_eq!((w.s[8], w.s[15]), (0x1008, 0x100f));
        // An SGPR offset, and both.
        w.s[20] = 8;
        run(&mut w, "s_load_b32 s2, s[0:1], s20").unwrap();
        assert_eq!(w.s[2], 0x1002);
        run(&mut w, "s_load_b32 s2, s[0:1], s20 offset:0x10").unwrap();
        assert_eq!(w.s[2], 0x1006);
        // A negative offset.
        set64(&mut w, 0, m.addr() + 0x40);
        run(&mut w, "s_load_b32 s2, s[0:1], -0x20").unwrap();
        assert_eq!(w.s[2], 0x1008);
        // The low two bits of the address are ignored.
        set64(&mut w, 0, m.addr() + 6);
        run(&mut w, "s_load_b32 s2, s[0:1], null").unwrap();
        assert_eq!(w.s[2], 0x1001);
    }

    #[test]
    fn gfx9_loads_and_stores() {
        let m = mem();
        let mut w = wave(Arch::Gfx942);
        set64(&mut w, 2, m.addr());
        run(&mut w, "s_load_dwordx2 s[4:5], s[2:3], 0x80").unwrap();
        assert_eq!((w.s[4], w.s[5]), (0x1020, 0x1021));
        run(&mut w, "s_load_dword s6, s[2:3], 0x7c").unwrap();
        assert_eq!(w.s[6], 0x101f);
        run(&mut w, "s_load_dwordx4 s[8:11], s[2:3], 0x0").unwrap();
        assert_eq!(w.s[8..12], [0x1000, 0x1001, 0x1002, 0x1003]);
        w.s[12] = 0xdead;
        w.s[13] = 0xbeef;
        run(&mut w, "s_store_dwordx2 s[12:13], s[2:3], 0x8").unwrap();
        assert_eq!((dword(&m, 2), dword(&m, 3)), (0xdead, 0xbeef));
        run(&mut w, "s_store_dword s12, s[2:3], 0x0 glc").unwrap();
        assert_eq!(dword(&m, 0), 0xdead);
    }

    #[test]
    fn outside_device_memory_faults() {
        let mut w = wave(Arch::Gfx1100);
        set64(&mut w, 0, 0x10);
        match run(&mut w, "s_load_b64 s[2:3], s[0:1], null") {
            Err(Stop::Fault(f)) => assert_eq!(f.kind, FaultKind::Memory),
            _ => panic!("must fault"),
        }
        // Past the end of a registered range.
        let m = TestMem::new(16);
        set64(&mut w, 0, m.addr());
        assert!(run(&mut w, "s_load_b128 s[4:7], s[0:1], null").is_ok());
        assert!(run(&mut w, "s_load_b128 s[4:7], s[0:1], 0x4").is_err());
    }

    #[test]
    fn buffer_loads() {
        let m = mem();
        let mut w = wave(Arch::Gfx1100);
        // Resource: base, stride 0 in the high bits of dword 1, 0x18 bytes.
        set64(&mut w, 4, m.addr() | 0x1234_0000_0000_0000);
        w.s[6] = 0x18;
        w.s[7] = 0;
        run(&mut w, "s_buffer_load_b64 s[0:1], s[4:7], 0x8").unwrap();
        assert_eq!((w.s[0], w.s[1]), (0x1002, 0x1003));
        // The last dword is past NUM_RECORDS: it reads 0.
        run(&mut w, "s_buffer_load_b128 s[8:11], s[4:7], 0x8").unwrap();
        assert_eq!(w.s[8..12], [0x1002, 0x1003, 0x1004, 0x1005]);
        run(&mut w, "s_buffer_load_b128 s[8:11], s[4:7], 0xc").unwrap();
        assert_eq!(w.s[8..12], [0x1003, 0x1004, 0x1005, 0]);
        let mut w = wave(Arch::Gfx942);
        set64(&mut w, 4, m.addr());
        w.s[6] = 0x100;
        run(&mut w, "s_buffer_load_dword s0, s[4:7], 0x10").unwrap();
        assert_eq!(w.s[0], 0x1004);
        w.s[1] = 0x77;
        run(&mut w, "s_buffer_store_dword s1, s[4:7], 0x10").unwrap();
        assert_eq!(dword(&m, 4), 0x77);
        w.s[6] = 0x10;
        run(&mut w, "s_buffer_store_dword s1, s[4:7], 0x10").unwrap();
        assert_eq!(dword(&m, 4), 0x77, "out of range: dropped");
    }

    #[test]
    fn atomics() {
        let m = mem();
        let mut w = wave(Arch::Gfx942);
        set64(&mut w, 2, m.addr());
        w.s[5] = 5;
        run(&mut w, "s_atomic_add s5, s[2:3], 0x0 glc").unwrap();
        assert_eq!((w.s[5], dword(&m, 0)), (0x1000, 0x1005));
        w.s[5] = 5;
        run(&mut w, "s_atomic_sub s5, s[2:3], 0x0").unwrap();
        assert_eq!((w.s[5], dword(&m, 0)), (5, 0x1000), "no glc: data kept");
        // cmpswap: data = new value, compare value.
        w.s[6] = 0xaaaa;
        w.s[7] = 0x1001;
        run(&mut w, "s_atomic_cmpswap s[6:7], s[2:3], 0x4 glc").unwrap();
        assert_eq!((w.s[6], dword(&m, 1)), (0x1001, 0xaaaa));
        w.s[6] = 0xbbbb;
        run(&mut w, "s_atomic_cmpswap s[6:7], s[2:3], 0x4 glc").unwrap();
        assert_eq!((w.s[6], dword(&m, 1)), (0xaaaa, 0xaaaa), "compare failed");
        w.s[8] = (-1i32) as u32;
        run(&mut w, "s_atomic_smin s8, s[2:3], 0x8").unwrap();
        assert_eq!(dword(&m, 2), u32::MAX);
        w.s[8] = 3;
        run(&mut w, "s_atomic_umin s8, s[2:3], 0x8").unwrap();
        assert_eq!(dword(&m, 2), 3);
        w.s[8] = 2;
        run(&mut w, "s_atomic_inc s8, s[2:3], 0x8").unwrap();
        assert_eq!(dword(&m, 2), 0, "inc wraps at the data value");
        run(&mut w, "s_atomic_dec s8, s[2:3], 0x8").unwrap();
        assert_eq!(dword(&m, 2), 2, "dec from 0 wraps to the data value");
        // 64-bit.
        set64(&mut w, 10, 0x1_0000_0001);
        run(&mut w, "s_atomic_add_x2 s[10:11], s[2:3], 0x10 glc").unwrap();
        assert_eq!((w.s[10], w.s[11]), (0x1004, 0x1005));
        assert_eq!((dword(&m, 4), dword(&m, 5)), (0x1005, 0x1006));
        set64(&mut w, 12, 7);
        set64(&mut w, 14, 0x0000_1006_0000_1005);
        run(&mut w, "s_atomic_cmpswap_x2 s[12:15], s[2:3], 0x10").unwrap();
        assert_eq!((dword(&m, 4), dword(&m, 5)), (7, 0));
    }

    #[test]
    fn cache_ops_are_nops() {
        let mut w = wave(Arch::Gfx942);
        run(&mut w, "s_dcache_discard s[2:3], 0x0").unwrap();
        run(&mut w, "s_dcache_wb_vol").unwrap();
    }
}
