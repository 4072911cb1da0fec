//! Instruction semantics, per AMD's ISA documents (RDNA3 for gfx1100, CDNA3
//! for gfx942, CDNA2 for gfx90a), looked up once per instruction at load by
//! its mnemonic as LLVM prints it.
//!
//! gfx9 spells many instructions differently from gfx11
//! (`global_load_dwordx2` for `global_load_b64`, `s_andn2_b64` for
//! `s_and_not1_b64`); [`canonical`] maps them to one name, so each
//! operation is written once. Encoding suffixes (`_e32`, `_e64`) do not
//! change what an instruction does (LLVM prints the implicit VCC operands
//! of the short forms), so they are dropped too; `_sdwa` and `_dpp` are
//! kept, because their sources are selected or permuted.
//!
//! Each family module has `lookup(name) -> Option<(Exec, aux)>`; `aux` says
//! which operation of the family it is.

use crate::decode::Inst;
use crate::wave::{FaultKind, Result, Wave, fault};

pub mod flow;
pub mod lane;
pub mod lds;
pub mod smem;
pub mod sop;
pub mod vcmp;
pub mod vfloat;
pub mod vint;
pub mod vmem;

/// An instruction's semantics.
pub type Exec = fn(&mut Wave, &Inst) -> Result;

/// The semantics of an instruction the emulator does not know: the run
/// stops there, naming it (the wave adds the address and function).
pub fn unknown(_w: &mut Wave, i: &Inst) -> Result {
    Err(fault(
        FaultKind::Unsupported,
        format!("the emulator does not implement `{}` (please report it with this message)", i.mnemonic),
    ))
}

/// Instructions that change nothing the emulator models: waits for
/// counters (every access completes before the next instruction), hints,
/// and cache maintenance (the emulator has no caches).
pub fn is_nop(name: &str) -> bool {
    matches!(
        name,
        "s_nop"
            | "s_delay_alu"
            | "s_waitcnt"
            | "s_waitcnt_vscnt"
            | "s_waitcnt_vmcnt"
            | "s_waitcnt_lgkmcnt"
            | "s_waitcnt_expcnt"
            | "s_waitcnt_depctr"
            | "s_clause"
            | "s_set_inst_prefetch_distance"
            | "s_inst_prefetch"
            | "s_code_end"
            | "s_icache_inv"
            | "s_dcache_inv"
            | "s_dcache_wb"
            | "s_ttracedata"
            | "s_setprio"
            | "buffer_gl0_inv"
            | "buffer_gl1_inv"
            | "buffer_wbl2"
            | "buffer_inv"
            | "buffer_wbinvl1"
            | "buffer_wbinvl1_vol"
            | "buffer_invl2"
    )
}

fn nop(_w: &mut Wave, _i: &Inst) -> Result {
    Ok(())
}

/// gfx9 spellings → gfx11 ones, and the encoding suffix dropped.
pub fn canonical(name: &str) -> String {
    let mut n = name.to_string();
    for suffix in ["_e32", "_e64"] {
        if let Some(s) = n.strip_suffix(suffix) {
            n = s.to_string();
        }
    }
    // Whole-name aliases first.
    let whole = match n.as_str() {
        "v_add_u32" => Some("v_add_nc_u32"),
        "v_sub_u32" => Some("v_sub_nc_u32"),
        "v_subrev_u32" => Some("v_subrev_nc_u32"),
        "v_add_u16" => Some("v_add_nc_u16"),
        "v_sub_u16" => Some("v_sub_nc_u16"),
        "v_subrev_u16" => Some("v_subrev_nc_u16"),
        "v_add_i32" => Some("v_add_nc_i32"),
        "v_sub_i32" => Some("v_sub_nc_i32"),
        "v_addc_co_u32" => Some("v_add_co_ci_u32"),
        "v_subb_co_u32" => Some("v_sub_co_ci_u32"),
        "v_subbrev_co_u32" => Some("v_subrev_co_ci_u32"),
        "v_ffbh_u32" => Some("v_clz_i32_u32"),
        "v_ffbl_b32" => Some("v_ctz_i32_b32"),
        "v_ffbh_i32" => Some("v_cls_i32"),
        "v_mad_legacy_u16" => Some("v_mad_u16"),
        "v_mad_legacy_i16" => Some("v_mad_i16"),
        "s_ff1_i32_b32" => Some("s_ctz_i32_b32"),
        "s_ff1_i32_b64" => Some("s_ctz_i32_b64"),
        "s_flbit_i32_b32" => Some("s_clz_i32_u32"),
        "s_flbit_i32_b64" => Some("s_clz_i32_u64"),
        "s_flbit_i32" => Some("s_cls_i32"),
        "s_flbit_i32_i64" => Some("s_cls_i32_i64"),
        _ => None,
    };
    if let Some(w) = whole {
        return w.into();
    }
    let parts = [
        ("s_andn2_", "s_and_not1_"),
        ("s_orn2_", "s_or_not1_"),
        ("s_andn1_", "s_and_not0_"),
        ("s_orn1_", "s_or_not0_"),
    ];
    for (from, to) in parts {
        if let Some(rest) = n.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    // Memory: dword → b32, x2 → 64 bits, ubyte → u8...
    if let Some((class, op)) = n.split_once('_').filter(|(c, _)| matches!(*c, "s" | "global" | "flat" | "scratch" | "buffer" | "ds")) {
        if class == "s" && !op.starts_with("load_") && !op.starts_with("store_") && !op.starts_with("buffer_load") {
            return n;
        }
        let op = op
            .replace("dwordx4", "b128")
            .replace("dwordx3", "b96")
            .replace("dwordx2", "b64")
            .replace("dwordx8", "b256")
            .replace("dwordx16", "b512")
            .replace("dword", "b32")
            .replace("short_d16_hi", "d16_hi_b16")
            .replace("short_d16", "d16_b16")
            .replace("ubyte_d16_hi", "d16_hi_u8")
            .replace("ubyte_d16", "d16_u8")
            .replace("sbyte_d16_hi", "d16_hi_i8")
            .replace("sbyte_d16", "d16_i8")
            .replace("byte_d16_hi", "d16_hi_b8")
            .replace("ubyte", "u8")
            .replace("sbyte", "i8")
            .replace("ushort", "u16")
            .replace("sshort", "i16");
        let op = match op.as_str() {
            "store_byte" => "store_b8".to_string(),
            "store_short" => "store_b16".to_string(),
            _ => op,
        };
        if let Some(atomic) = op.strip_prefix("atomic_") {
            let (base, wide) = match atomic.strip_suffix("_x2") {
                Some(b) => (b, true),
                None => (atomic, false),
            };
            // gfx9 names atomics without a type; gfx11 with one.
            let typed = match base {
                "add" | "sub" | "inc" | "dec" => format!("{base}_{}", if wide { "u64" } else { "u32" }),
                "umax" | "umin" => format!("{}_{}", &base[1..], if wide { "u64" } else { "u32" }),
                "smax" | "smin" => format!("{}_{}", &base[1..], if wide { "i64" } else { "i32" }),
                "and" | "or" | "xor" | "swap" | "cmpswap" => format!("{base}_{}", if wide { "b64" } else { "b32" }),
                other => other.to_string(),
            };
            return format!("{class}_atomic_{typed}");
        }
        return format!("{class}_{op}");
    }
    n
}

/// The semantics of `mnemonic`, and its `aux`, if the emulator has them.
pub fn find(mnemonic: &str) -> Option<(Exec, u32)> {
    if is_nop(mnemonic) {
        return Some((nop, 0));
    }
    let name = canonical(mnemonic);
    // gfx11 `v_dual_*` halves are lane.rs's (`dual` reads their `aux`).
    if name.starts_with("v_dual_") {
        return lane::lookup(&name);
    }
    let families: [fn(&str) -> Option<(Exec, u32)>; 9] =
        [flow::lookup, sop::lookup, smem::lookup, vint::lookup, vfloat::lookup, vcmp::lookup, lane::lookup, vmem::lookup, lds::lookup];
    families.iter().find_map(|f| f(&name))
}

/// As [`find`], with [`unknown`] for what it does not know.
pub fn lookup(mnemonic: &str) -> (Exec, u32) {
    find(mnemonic).unwrap_or((unknown, 0))
}

/// A gfx11 `v_dual_X :: v_dual_Y` pair: both halves read their sources
/// before either writes (`lane::dual`).
pub fn dual(w: &mut Wave, i: &Inst) -> Result {
    lane::dual(w, i)
}

/// Whether the emulator implements `mnemonic`.
pub fn implemented(mnemonic: &str) -> bool {
    find(mnemonic).is_some()
}

#[cfg(test)]
pub mod testing;

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn gfx9_names() {
        assert_eq!(canonical("global_load_dwordx2"), "global_load_b64");
        assert_eq!(canonical("s_load_dwordx4"), "s_load_b128");
        assert_eq!(canonical("flat_load_ubyte"), "flat_load_u8");
        assert_eq!(canonical("flat_store_short"), "flat_store_b16");
        assert_eq!(canonical("flat_atomic_cmpswap_x2"), "flat_atomic_cmpswap_b64");
        assert_eq!(canonical("flat_atomic_umax_x2"), "flat_atomic_max_u64");
        assert_eq!(canonical("global_atomic_add"), "global_atomic_add_u32");
        assert_eq!(canonical("s_andn2_saveexec_b64"), "s_and_not1_saveexec_b64");
        assert_eq!(canonical("v_addc_co_u32_e32"), "v_add_co_ci_u32");
        assert_eq!(canonical("v_cmp_eq_u32_e64"), "v_cmp_eq_u32");
        assert_eq!(canonical("v_cmp_lt_i16_sdwa"), "v_cmp_lt_i16_sdwa");
        assert_eq!(canonical("s_mov_b64"), "s_mov_b64");
        assert_eq!(canonical("global_load_short_d16_hi"), "global_load_d16_hi_b16");
    }
}

/// SDWA: the (shift, width) a select names; `None` for `DWORD` (or none).
fn sdwa_field(sel: Option<&str>) -> Option<(u32, u32)> {
    Some(match sel? {
        "BYTE_0" => (0, 8),
        "BYTE_1" => (8, 8),
        "BYTE_2" => (16, 8),
        "BYTE_3" => (24, 8),
        "WORD_0" => (0, 16),
        "WORD_1" => (16, 16),
        _ => return None,
    })
}

/// SDWA (gfx9 sub-dword addressing): the bits of `v` a source select
/// (`src0_sel:BYTE_1`) names, zero- or (`sext`) sign-extended.
pub fn sdwa_select(v: u32, sel: Option<&str>, sext: bool) -> u32 {
    let Some((shift, bits)) = sdwa_field(sel) else { return v };
    let x = (v >> shift) & ((1u32 << bits) - 1);
    if sext { ((x << (32 - bits)) as i32 >> (32 - bits)) as u32 } else { x }
}

/// SDWA: the destination register's new value when `result` is written to
/// the part `dst_sel` names; `dst_unused` says what the rest becomes
/// (`UNUSED_PAD`: zeros, `UNUSED_SEXT`: the sign, `UNUSED_PRESERVE`: `old`).
pub fn sdwa_write(old: u32, result: u32, dst_sel: Option<&str>, dst_unused: Option<&str>) -> u32 {
    let Some((shift, bits)) = sdwa_field(dst_sel) else { return result };
    let field = ((1u32 << bits) - 1) << shift;
    let placed = (result << shift) & field;
    match dst_unused.unwrap_or("UNUSED_PAD") {
        "UNUSED_PRESERVE" => (old & !field) | placed,
        "UNUSED_SEXT" => {
            let top = shift + bits;
            let sign = placed >> (top - 1) & 1;
            let high = if sign == 1 && top < 32 { u32::MAX << top } else { 0 };
            placed | high
        }
        _ => placed,
    }
}

#[cfg(test)]
mod sdwa_tests {
    use super::*;

    #[test]
    fn selects() {
        assert_eq!(sdwa_select(0x1234_80ff, Some("BYTE_1"), false), 0x80);
        assert_eq!(sdwa_select(0x1234_80ff, Some("BYTE_1"), true), 0xffff_ff80);
        assert_eq!(sdwa_select(0x1234_80ff, Some("WORD_1"), false), 0x1234);
        assert_eq!(sdwa_select(0x1234_80ff, None, true), 0x1234_80ff);
        assert_eq!(sdwa_write(0xaaaa_aaaa, 0x1ff, Some("BYTE_1"), Some("UNUSED_PRESERVE")), 0xaaaa_ffaa);
        assert_eq!(sdwa_write(0xaaaa_aaaa, 0x1ff, Some("BYTE_1"), Some("UNUSED_PAD")), 0x0000_ff00);
        assert_eq!(sdwa_write(0, 0x80, Some("BYTE_0"), Some("UNUSED_SEXT")), 0xffff_ff80);
        assert_eq!(sdwa_write(0, 0x1234, Some("WORD_0"), None), 0x1234);
    }
}
