//! MUBUF buffer loads, stores and atomics (`buffer_load_dword`, named
//! `buffer_load_b32` by [`super::super::canonical`]), declared from
//! `vmem.rs`, whose data types and atomic operations they share.
//!
//! Operands as LLVM prints them: `vdata, vaddr, srsrc, soffset`, then
//! `offen`/`idxen`/`offset:N`. `vdata` is a load's destination, a store's
//! source, and an atomic's data and (with `glc`, `sc0` on gfx940) its
//! returned old value. `vaddr` is `off`, the index (`idxen`), the offset
//! (`offen`) or the pair {index, offset} (both).
//!
//! The resource (V#, four SGPRs) says which of two things the access is:
//! - ADD_TID_ENABLE set (word 3 bit 23): the private segment buffer the
//!   dispatch gives gfx9 kernels without architected flat scratch (gfx90a),
//!   see `dispatch::PRIVATE_SEGMENT_RSRC_WORD3`. The hardware swizzles it so
//!   each lane sees its own bytes; here it is the lane's private segment, at
//!   `(base + soffset) / wave size + offset + vaddr`. The base (which the
//!   prologue moves by the wave's scratch offset) and `soffset` (the stack
//!   pointer `s32` of called functions) count bytes of the whole wave's
//!   interleaved scratch, the wave size times a lane's bytes (LLVM shifts
//!   them right by log2(wave size) to make a lane's address); `vaddr` and the
//!   instruction's offset count a lane's bytes.
//! - otherwise: a buffer in device memory at `base + soffset + offset +
//!   vaddr offset + index * stride`, range-checked as gfx9 does (the SGPR
//!   offset is not part of the check): a raw buffer (stride 0) per dword
//!   against NUM_RECORDS bytes, a structured one by index against
//!   NUM_RECORDS elements; reads out of range return 0, writes are dropped,
//!   atomics are all or nothing.
//!
//! Not here: the `format` and `lds` forms, `tfe` (they fault as
//! unsupported), and ADD_TID with `idxen`.

use super::{
    atomic, atomic_data, atomic_return, apply, finish_load, parse_atomic, parse_load, parse_store, rmw, size,
    store_bytes,
};
use crate::decode::Inst;
use crate::memory;
use crate::operand::Kind;
use crate::ops::Exec;
use crate::wave::{FaultKind, Result, Wave, fault};

/// Word 3's ADD_TID_ENABLE (gfx9 and later).
pub const ADD_TID_ENABLE: u32 = 1 << 23;

/// What a V# says about where accesses go.
struct Resource {
    base: u64,
    stride: u64,
    records: u64,
    add_tid: bool,
}

/// The instruction's resource and per-wave parts.
struct Access {
    r: Resource,
    soffset: u64,
    idxen: bool,
    offen: bool,
}

fn access(w: &Wave, i: &Inst) -> Result<Access> {
    for m in ["lds", "tfe"] {
        if i.mods.has(m) {
            return Err(fault(FaultKind::Unsupported, format!("the emulator does not implement `{}` with `{m}`", i.mnemonic)));
        }
    }
    let Kind::Scalar { index, .. } = i.ops[2].kind else {
        return Err(fault(FaultKind::Unsupported, format!("`{}`: a resource that is not four SGPRs", i.mnemonic)));
    };
    let word = |k: usize| w.s[index as usize + k];
    let r = Resource {
        base: u64::from(word(0)) | u64::from(word(1) & 0xffff) << 32,
        stride: u64::from(word(1) >> 16 & 0x3fff),
        records: u64::from(word(2)),
        add_tid: word(3) & ADD_TID_ENABLE != 0,
    };
    let soffset = i.ops.get(3).map_or(0, |o| u64::from(w.sread(o)));
    let (idxen, offen) = (i.mods.has("idxen"), i.mods.has("offen"));
    if r.add_tid && idxen {
        return Err(fault(FaultKind::Unsupported, format!("`{}`: `idxen` on a scratch (ADD_TID) resource", i.mnemonic)));
    }
    Ok(Access { r, soffset, idxen, offen })
}

/// Where one lane's access goes.
enum Place {
    /// Offset in the lane's private segment.
    Private(u64),
    /// Device memory at `addr`; `off` is the range-checked offset, `index_ok`
    /// whether a structured buffer's index is in range.
    Buffer { addr: u64, off: u64, index_ok: bool },
}

fn place(w: &Wave, i: &Inst, a: &Access, lane: usize) -> Result<Place> {
    let vaddr = &i.ops[1];
    let (index, voff) = match (a.idxen, a.offen) {
        (true, true) => (w.vreg(vaddr, 0, lane), w.vreg(vaddr, 1, lane)),
        (true, false) => (w.vread(vaddr, lane), 0),
        (false, true) => (0, w.vread(vaddr, lane)),
        (false, false) => (0, 0),
    };
    // MUBUF offsets are unsigned (12 bits).
    let off = u64::from(voff) + i.mods.offset as u64;
    if a.r.add_tid {
        let wave_bytes = a.r.base.wrapping_add(a.soffset);
        let lanes = w.lanes as u64;
        if wave_bytes % lanes != 0 {
            return Err(fault(
                FaultKind::Memory,
                format!(
                    "memory access fault: lane {lane}: scratch base + soffset {wave_bytes:#x} is not a multiple of \
                     the wave size"
                ),
            ));
        }
        return Ok(Place::Private(wave_bytes / lanes + off));
    }
    let addr = a.r.base.wrapping_add(a.soffset).wrapping_add(off).wrapping_add(u64::from(index) * a.r.stride);
    Ok(Place::Buffer { addr, off, index_ok: a.r.stride == 0 || u64::from(index) < a.r.records })
}

/// Whether `len` bytes at range-checked offset `off` are in the buffer.
fn in_range(r: &Resource, index_ok: bool, off: u64, len: u64) -> bool {
    if r.stride != 0 { index_ok } else { off + len <= r.records }
}

/// The parts a raw buffer checks separately: each dword, or the whole
/// access when it is smaller.
fn chunks(len: usize) -> impl Iterator<Item = (usize, usize)> {
    let (step, n) = if len <= 4 { (len, 1) } else { (4, len / 4) };
    (0..n).map(move |k| (k * step, step))
}

fn load(w: &mut Wave, i: &Inst) -> Result {
    let code = i.aux >> 4;
    let len = size(code);
    let a = access(w, i)?;
    let dst = i.ops[0];
    for lane in w.active() {
        let mut buf = [0u8; 16];
        match place(w, i, &a, lane)? {
            Place::Private(off) => {
                let p = w.scratch_ptr(off, len, lane)?;
                // SAFETY: `scratch_ptr` checked `len` bytes at `p`.
                unsafe { memory::read(p, &mut buf[..len]) };
            }
            Place::Buffer { addr, off, index_ok } => {
                for (at, n) in chunks(len) {
                    if in_range(&a.r, index_ok, off + at as u64, n as u64) {
                        let p = w.global_ptr(addr.wrapping_add(at as u64), n, lane)?;
                        // SAFETY: `global_ptr` checked `n` bytes at `p`.
                        unsafe { memory::read(p, &mut buf[at..at + n]) };
                    }
                }
            }
        }
        finish_load(w, &dst, lane, code, &buf);
    }
    Ok(())
}

fn store(w: &mut Wave, i: &Inst) -> Result {
    let code = i.aux >> 4;
    let len = size(code);
    let a = access(w, i)?;
    let data = i.ops[0];
    for lane in w.active() {
        let bytes = store_bytes(w, &data, lane, code);
        match place(w, i, &a, lane)? {
            Place::Private(off) => {
                let p = w.scratch_ptr(off, len, lane)?;
                // SAFETY: `scratch_ptr` checked `len` bytes at `p`.
                unsafe { memory::write(p, &bytes[..len]) };
            }
            Place::Buffer { addr, off, index_ok } => {
                for (at, n) in chunks(len) {
                    if in_range(&a.r, index_ok, off + at as u64, n as u64) {
                        let p = w.global_ptr(addr.wrapping_add(at as u64), n, lane)?;
                        // SAFETY: `global_ptr` checked `n` bytes at `p`.
                        unsafe { memory::write(p, &bytes[at..at + n]) };
                    }
                }
            }
        }
    }
    Ok(())
}

fn atomic_op(w: &mut Wave, i: &Inst) -> Result {
    let op = i.aux >> 4 & 0xff;
    let wide = i.aux & 1 << 12 != 0;
    let len = if wide { 8 } else { 4 };
    let a = access(w, i)?;
    let data = i.ops[0];
    let returns = i.mods.glc || i.mods.sc0;
    let pair = matches!(op, atomic::CMPSWAP | atomic::FCMPSWAP);
    for lane in w.active() {
        let (ptr, private) = match place(w, i, &a, lane)? {
            Place::Private(off) => (Some(w.scratch_ptr(off, len, lane)?), true),
            Place::Buffer { addr, off, index_ok } if in_range(&a.r, index_ok, off, len as u64) => {
                (Some(w.global_ptr(addr, len, lane)?), false)
            }
            // Out of range: nothing changes, and 0 comes back.
            Place::Buffer { .. } => (None, false),
        };
        let (d, d2) = atomic_data(w, &data, pair, wide, lane);
        let old = match ptr {
            Some(p) => rmw(p, private, wide, lane, |old| apply(op, wide, old, d, d2))?,
            None => 0,
        };
        if returns {
            atomic_return(w, &data, wide, lane, old);
        }
    }
    Ok(())
}

/// `buffer_*` loads, stores and atomics (canonical names).
pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let op = name.strip_prefix("buffer_")?;
    if let Some(t) = op.strip_prefix("load_") {
        return parse_load(t).map(|c| (load as Exec, c << 4));
    }
    if let Some(t) = op.strip_prefix("store_") {
        return parse_store(t).map(|c| (store as Exec, c << 4));
    }
    let (base, ty) = op.strip_prefix("atomic_")?.rsplit_once('_')?;
    let (code, wide) = parse_atomic(base, ty)?;
    if matches!(code, atomic::RSUB | atomic::MSKOR) {
        return None;
    }
    Some((atomic_op as Exec, code << 4 | u32::from(wide) << 12))
}

#[cfg(test)]
mod tests {
    use crate::arch::Arch;
    use crate::dispatch::PRIVATE_SEGMENT_RSRC_WORD3;
    use crate::memory;
    use crate::ops::testing::{TEST_PRIVATE, TestMem, run, wave};
    use crate::wave::{Stop, Wave};

    /// A wave with s[0:3] as the dispatch sets the private segment buffer
    /// (and the prologue's `s_add_u32 s0, s0, s11` of a zero wave offset).
    fn scratch_wave(arch: Arch) -> Wave {
        let mut w = wave(arch);
        w.s[..4].copy_from_slice(&[0, 0, u32::MAX, PRIVATE_SEGMENT_RSRC_WORD3]);
        w
    }

    fn scratch_u32(w: &Wave, lane: usize, off: usize) -> u32 {
        let at = lane * TEST_PRIVATE as usize + off;
        u32::from_le_bytes(w.scratch[at..at + 4].try_into().unwrap())
    }

    fn put(m: &TestMem, off: usize, bytes: &[u8]) {
        // SAFETY: inside the test's registered memory.
        unsafe { memory::write((m.addr() as *mut u8).add(off), bytes) };
    }

    fn u32_at(m: &TestMem, off: usize) -> u32 {
        u32::from_le_bytes(m.bytes()[off..off + 4].try_into().unwrap())
    }

    /// s[4:7] = a plain V#: base, stride, NUM_RECORDS, no ADD_TID.
    fn plain(w: &mut Wave, base: u64, stride: u32, records: u32) {
        w.s[4] = base as u32;
        w.s[5] = (base >> 32) as u32 | stride << 16;
        w.s[6] = records;
        w.s[7] = 0x0002_0000;
    }

    #[test]
    fn names() {
        for m in [
            "buffer_load_dword", "buffer_store_dword", "buffer_load_ubyte", "buffer_load_sbyte", "buffer_load_ushort",
            "buffer_load_sshort", "buffer_store_byte", "buffer_store_short", "buffer_load_dwordx2", "buffer_load_dwordx3",
            "buffer_load_dwordx4", "buffer_store_dwordx4", "buffer_load_short_d16", "buffer_load_short_d16_hi",
            "buffer_load_ubyte_d16_hi", "buffer_store_short_d16_hi", "buffer_store_byte_d16_hi", "buffer_atomic_add",
            "buffer_atomic_cmpswap_x2", "buffer_atomic_add_f32", "buffer_load_b32", "buffer_store_b128",
            "buffer_atomic_add_u32", "v_pk_mov_b32",
        ] {
            assert!(crate::ops::implemented(m), "{m}");
        }
        for m in ["buffer_load_format_x", "buffer_store_lds_dword", "buffer_load_lds_dword"] {
            assert!(!crate::ops::implemented(m), "{m}");
        }
    }

    #[test]
    fn scratch_as_hipcc_gfx90a_uses_it() {
        let mut w = scratch_wave(Arch::Gfx90a);
        for lane in 0..64 {
            w.v[0][lane] = 1000 + lane as u32;
            // A per-lane byte offset into the private array (offen).
            w.v[5][lane] = 16 + 4 * (lane as u32 % 3);
        }
        // `buffer_store_dword v0, off, s[0:3], 0 offset:16`: each lane's byte 16.
        run(&mut w, "buffer_store_dword v0, off, s[0:3], 0 offset:16").unwrap();
        w.v[0] = [0; 64];
        run(&mut w, "buffer_store_dword v0, off, s[0:3], 0 offset:20").unwrap();
        w.v[0][2] = 7;
        run(&mut w, "buffer_store_dword v0, off, s[0:3], 0 offset:24").unwrap();
        assert_eq!((scratch_u32(&w, 0, 16), scratch_u32(&w, 63, 16), scratch_u32(&w, 2, 24)), (1000, 1063, 7));
        // `buffer_load_dword v4, v5, s[0:3], 0 offen`: lane 0 reads 16, lane 1
        // 20, lane 2 24, lane 63 (63 % 3 = 0) 16.
        run(&mut w, "buffer_load_dword v4, v5, s[0:3], 0 offen").unwrap();
        assert_eq!((w.v[4][0], w.v[4][1], w.v[4][2], w.v[4][63]), (1000, 0, 7, 1063));
        // offen store, then offen + offset load of the same place.
        w.v[6][1] = 0xabcd;
        run(&mut w, "buffer_store_dword v6, v5, s[0:3], 0 offen offset:100").unwrap();
        assert_eq!(scratch_u32(&w, 1, 120), 0xabcd);
        w.v[7][1] = 20;
        run(&mut w, "buffer_load_dword v8, v7, s[0:3], 0 offen offset:100").unwrap();
        assert_eq!(w.v[8][1], 0xabcd);
        // EXEC: inactive lanes neither read nor write.
        w.set_exec(0b10);
        w.v[8][0] = 0x55;
        run(&mut w, "buffer_load_dword v8, off, s[0:3], 0 offset:16").unwrap();
        assert_eq!((w.v[8][0], w.v[8][1]), (0x55, 1001));
        // Past the lane's segment: a fault.
        let e = run(&mut w, "buffer_load_dword v8, off, s[0:3], 0 offset:1022");
        assert!(matches!(e, Err(Stop::Fault(f)) if f.message.contains("lane 1")));
    }

    #[test]
    fn scratch_soffset_and_base_count_the_whole_wave() {
        // A called function's frame: s32 = 0x400 is 1024 wave bytes, 16 per
        // lane on wave64, so `offset:4` is the lane's byte 20.
        let mut w = scratch_wave(Arch::Gfx90a);
        w.s[32] = 0x400;
        w.v[1][9] = 0x1234_5678;
        w.set_exec(1 << 9);
        run(&mut w, "buffer_store_dword v1, off, s[0:3], s32 offset:4").unwrap();
        assert_eq!(scratch_u32(&w, 9, 20), 0x1234_5678);
        // A base moved by 0x800 (32 bytes a lane) and soffset 0: the same as
        // offset 32.
        w.s[0] = 0x800;
        run(&mut w, "buffer_load_dword v2, off, s[0:3], 0 offset:4").unwrap();
        assert_eq!(w.v[2][9], scratch_u32(&w, 9, 36));
        run(&mut w, "buffer_store_dword v1, off, s[0:3], 0").unwrap();
        assert_eq!(scratch_u32(&w, 9, 32), 0x1234_5678);
        // wave32: 0x400 is 32 bytes a lane.
        let mut w = scratch_wave(Arch::Gfx1100);
        w.s[33] = 0x400;
        w.v[1][31] = 99;
        run(&mut w, "buffer_store_b32 v1, off, s[0:3], s33 offset:8").unwrap();
        assert_eq!(scratch_u32(&w, 31, 40), 99);
        // Not a multiple of the wave size: no lane layout fits.
        w.s[33] = 0x401;
        assert!(run(&mut w, "buffer_load_b32 v1, off, s[0:3], s33").is_err());
    }

    #[test]
    fn scratch_widths_and_d16() {
        let mut w = scratch_wave(Arch::Gfx90a);
        w.set_exec(1);
        w.v[10][0] = 0x4433_2211;
        w.v[11][0] = 0x8877_6655;
        w.v[12][0] = 0xccbb_aa99;
        w.v[13][0] = 0x00ff_ee81;
        run(&mut w, "buffer_store_dwordx4 v[10:13], off, s[0:3], 0 offset:32").unwrap();
        let cases: &[(&str, &[u32])] = &[
            ("buffer_load_ubyte v20, off, s[0:3], 0 offset:44", &[0x81]),
            ("buffer_load_sbyte v20, off, s[0:3], 0 offset:44", &[0xffff_ff81]),
            ("buffer_load_ushort v20, off, s[0:3], 0 offset:44", &[0xee81]),
            ("buffer_load_sshort v20, off, s[0:3], 0 offset:44", &[0xffff_ee81]),
            ("buffer_load_dwordx2 v[20:21], off, s[0:3], 0 offset:36", &[0x8877_6655, 0xccbb_aa99]),
            ("buffer_load_dwordx3 v[20:22], off, s[0:3], 0 offset:32", &[0x4433_2211, 0x8877_6655, 0xccbb_aa99]),
            ("buffer_load_dwordx4 v[20:23], off, s[0:3], 0 offset:32", &[0x4433_2211, 0x8877_6655, 0xccbb_aa99, 0x00ff_ee81]),
            // d16: the other half of the register is kept (0xdead_beef before).
            ("buffer_load_short_d16 v20, off, s[0:3], 0 offset:34", &[0xdead_4433]),
            ("buffer_load_short_d16_hi v20, off, s[0:3], 0 offset:34", &[0x4433_beef]),
            ("buffer_load_ubyte_d16_hi v20, off, s[0:3], 0 offset:44", &[0x0081_beef]),
            ("buffer_load_sbyte_d16 v20, off, s[0:3], 0 offset:44", &[0xdead_ff81]),
        ];
        for (asm, want) in cases {
            for r in 20..24 {
                w.v[r][0] = 0xdead_beef;
            }
            run(&mut w, asm).unwrap();
            for (n, v) in want.iter().enumerate() {
                assert_eq!(w.v[20 + n][0], *v, "{asm} word {n}");
            }
        }
        // Narrow stores: byte, short, and the high halves.
        run(&mut w, "buffer_store_byte v10, off, s[0:3], 0 offset:64").unwrap();
        run(&mut w, "buffer_store_byte_d16_hi v10, off, s[0:3], 0 offset:65").unwrap();
        run(&mut w, "buffer_store_short_d16_hi v11, off, s[0:3], 0 offset:66").unwrap();
        assert_eq!(scratch_u32(&w, 0, 64), 0x8877_3311);
        run(&mut w, "buffer_store_short v12, off, s[0:3], 0 offset:66").unwrap();
        assert_eq!(scratch_u32(&w, 0, 64), 0xaa99_3311);
    }

    #[test]
    fn plain_buffers_in_device_memory() {
        let m = TestMem::new(64);
        for n in 0..16u32 {
            put(&m, 4 * n as usize, &(0x100 + n).to_le_bytes());
        }
        let mut w = wave(Arch::Gfx942);
        w.set_exec(0b11);
        // Raw, 32 bytes: base + soffset + offset + vaddr.
        plain(&mut w, m.addr(), 0, 32);
        w.v[1][0] = 4;
        w.v[1][1] = 28;
        run(&mut w, "buffer_load_dword v2, v1, s[4:7], 0 offen offset:4").unwrap();
        // Lane 0: byte 8 (word 2); lane 1: byte 32, past NUM_RECORDS: 0.
        assert_eq!((w.v[2][0], w.v[2][1]), (0x102, 0));
        // soffset moves the address but not the range check: lane 1 now
        // reads offset 28 (word 7 + 2 words of soffset = word 9).
        w.s[8] = 8;
        w.v[1][1] = 24;
        run(&mut w, "buffer_load_dword v2, v1, s[4:7], s8 offen offset:4").unwrap();
        assert_eq!((w.v[2][0], w.v[2][1]), (0x104, 0x109));
        // x4 at offset 24: the first two dwords are in, the last two out.
        w.set_exec(1);
        run(&mut w, "buffer_load_dwordx4 v[4:7], off, s[4:7], 0 offset:24").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0], w.v[6][0], w.v[7][0]), (0x106, 0x107, 0, 0));
        // Stores: the in-range part only.
        w.v[10][0] = 0xaa;
        w.v[11][0] = 0xbb;
        run(&mut w, "buffer_store_dwordx2 v[10:11], off, s[4:7], 0 offset:28").unwrap();
        assert_eq!((u32_at(&m, 28), u32_at(&m, 32)), (0xaa, 0x108));
        // Structured: stride 8, 4 records; idxen, and idxen with offen.
        plain(&mut w, m.addr(), 8, 4);
        w.v[1][0] = 2;
        run(&mut w, "buffer_load_dword v2, v1, s[4:7], 0 idxen offset:4").unwrap();
        assert_eq!(w.v[2][0], 0x105);
        w.v[1][0] = 4;
        run(&mut w, "buffer_load_dword v2, v1, s[4:7], 0 idxen").unwrap();
        assert_eq!(w.v[2][0], 0);
        w.v[2][0] = 1;
        w.v[3][0] = 4;
        run(&mut w, "buffer_load_dword v9, v[2:3], s[4:7], 0 idxen offen").unwrap();
        assert_eq!(w.v[9][0], 0x103);
    }

    #[test]
    fn buffer_atomics() {
        let m = TestMem::new(32);
        put(&m, 8, &10u32.to_le_bytes());
        let mut w = wave(Arch::Gfx90a);
        w.set_exec(0b11);
        plain(&mut w, m.addr(), 0, 16);
        w.v[1][0] = 3;
        w.v[1][1] = 4;
        // No glc: v1 stays data.
        run(&mut w, "buffer_atomic_add v1, off, s[4:7], 0 offset:8").unwrap();
        assert_eq!((u32_at(&m, 8), w.v[1][0]), (17, 3));
        // glc: the old values come back in vdata, lanes in order.
        run(&mut w, "buffer_atomic_add v1, off, s[4:7], 0 offset:8 glc").unwrap();
        assert_eq!((u32_at(&m, 8), w.v[1][0], w.v[1][1]), (24, 17, 20));
        // cmpswap: v[2:3] = {new, compare}; out of range: nothing, 0 back.
        w.set_exec(1);
        w.v[2][0] = 5;
        w.v[3][0] = 24;
        run(&mut w, "buffer_atomic_cmpswap v[2:3], off, s[4:7], 0 offset:8 glc").unwrap();
        assert_eq!((u32_at(&m, 8), w.v[2][0]), (5, 24));
        run(&mut w, "buffer_atomic_add v2, off, s[4:7], 0 offset:16 glc").unwrap();
        assert_eq!((u32_at(&m, 16), w.v[2][0]), (0, 0));
        // On scratch: the lane's own word.
        let mut w = scratch_wave(Arch::Gfx90a);
        w.set_exec(0b100);
        w.v[1][2] = 6;
        run(&mut w, "buffer_atomic_add v1, off, s[0:3], 0 offset:12 glc").unwrap();
        assert_eq!((scratch_u32(&w, 2, 12), w.v[1][2], scratch_u32(&w, 1, 12)), (6, 0, 0));
        w.v[1][2] = 5;
        run(&mut w, "buffer_atomic_sub v1, off, s[0:3], 0 offset:12").unwrap();
        assert_eq!((scratch_u32(&w, 2, 12), w.v[1][2]), (1, 5));
    }

    #[test]
    fn pk_mov_b32() {
        let mut w = wave(Arch::Gfx90a);
        w.s[0] = 0x1111;
        w.s[1] = 0x2222;
        // The 64-bit copy hipcc emits.
        run(&mut w, "v_pk_mov_b32 v[0:1], s[0:1], s[0:1] op_sel:[0,1]").unwrap();
        assert_eq!((w.v[0][5], w.v[1][5]), (0x1111, 0x2222));
        // Swapped halves, from VGPRs, the destination overlapping a source.
        for lane in 0..64 {
            w.v[2][lane] = lane as u32;
            w.v[3][lane] = 100 + lane as u32;
        }
        w.set_exec(1 << 63 | 1);
        run(&mut w, "v_pk_mov_b32 v[2:3], v[2:3], v[2:3] op_sel:[1,0]").unwrap();
        assert_eq!((w.v[2][63], w.v[3][63], w.v[2][0], w.v[3][0]), (163, 63, 100, 0));
        assert_eq!((w.v[2][1], w.v[3][1]), (1, 101));
        // Both elements from src1's low word and a constant.
        run(&mut w, "v_pk_mov_b32 v[4:5], 7, s[0:1]").unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (7, 0x1111));
    }
}
