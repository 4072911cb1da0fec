//! Program flow and the machine: branches, calls, the end of the program,
//! traps, sleeping, the workgroup barrier, clocks, messages and the
//! hardware registers (`s_getreg`/`s_setreg`).
//!
//! Addresses: the wave's `pc` is the code object's address, while the
//! program sees host addresses (it adds PC-relative offsets to what
//! `s_getpc_b64` returns to find its globals), so `s_getpc`/`s_swappc`/
//! `s_call` return `image_base + ` the next instruction's address and
//! `s_setpc`/`s_swappc` subtract `image_base` from where they jump.

use std::cell::Cell;

use super::Exec;
use crate::decode::Inst;
use crate::memory::{PRIVATE_APERTURE, SHARED_APERTURE};
use crate::wave::{FaultKind, Result, Stop, Wave, fault};

pub fn lookup(name: &str) -> Option<(Exec, u32)> {
    let f: Exec = match name {
        "s_branch" => s_branch,
        "s_cbranch_scc0" => |w, i| {
            let taken = !w.scc;
            branch_if(w, i, taken)
        },
        "s_cbranch_scc1" => |w, i| {
            let taken = w.scc;
            branch_if(w, i, taken)
        },
        "s_cbranch_vccz" => |w, i| {
            let taken = w.vcc() == 0;
            branch_if(w, i, taken)
        },
        "s_cbranch_vccnz" => |w, i| {
            let taken = w.vcc() != 0;
            branch_if(w, i, taken)
        },
        "s_cbranch_execz" => |w, i| {
            let taken = w.exec() == 0;
            branch_if(w, i, taken)
        },
        "s_cbranch_execnz" => |w, i| {
            let taken = w.exec() != 0;
            branch_if(w, i, taken)
        },
        // Taken only under a debugger, which the emulator never is.
        "s_cbranch_cdbgsys" | "s_cbranch_cdbguser" | "s_cbranch_cdbgsys_or_user" | "s_cbranch_cdbgsys_and_user" => nop,
        "s_getpc_b64" => s_getpc_b64,
        "s_setpc_b64" => s_setpc_b64,
        "s_swappc_b64" => s_swappc_b64,
        "s_call_b64" => s_call_b64,
        "s_endpgm" | "s_endpgm_saved" | "s_endpgm_ordered_ps_done" => |_, _| Err(Stop::End),
        "s_trap" => s_trap,
        "s_sethalt" => s_sethalt,
        "s_sleep" => s_sleep,
        "s_barrier" => |w, _| {
            w.group.barrier();
            Ok(())
        },
        "s_memrealtime" => |w, i| {
            w.swrite64(&i.ops[0], w.shared.realtime());
            Ok(())
        },
        "s_memtime" => |w, i| {
            w.swrite64(&i.ops[0], w.shared.memtime());
            Ok(())
        },
        "s_sendmsg_rtn_b32" | "s_sendmsg_rtn_b64" => s_sendmsg_rtn,
        "s_sendmsg" => s_sendmsg,
        "s_sendmsghalt" => |_, _| Err(fault(FaultKind::Trap, "s_sendmsghalt: the program halted the wave")),
        "s_getreg_b32" => s_getreg_b32,
        "s_setreg_b32" | "s_setreg_imm32_b32" => s_setreg,
        "s_round_mode" => |w, i| {
            let v = w.sread(&i.ops[0]);
            set_mode(w, (mode(w) & !0xf) | (v & 0xf));
            Ok(())
        },
        "s_denorm_mode" => |w, i| {
            let v = w.sread(&i.ops[0]);
            set_mode(w, (mode(w) & !0xf0) | ((v & 0xf) << 4));
            Ok(())
        },
        // No effect here: the microcode version (a hint to the hardware),
        // kill (graphics), waking waves that sleep (ours sleep a bounded time),
        // and the decrement/increment of a performance level.
        "s_version" | "s_setkill" | "s_wakeup" | "s_incperflevel" | "s_decperflevel" => nop,
        _ => return None,
    };
    Some((f, 0))
}

fn nop(_: &mut Wave, _: &Inst) -> Result {
    Ok(())
}

// ------------------------------------------------------------ branches

fn s_branch(w: &mut Wave, i: &Inst) -> Result {
    w.next_pc = i.branch_target();
    Ok(())
}

#[inline(always)]
fn branch_if(w: &mut Wave, i: &Inst, taken: bool) -> Result {
    if taken {
        w.next_pc = i.branch_target();
    }
    Ok(())
}

/// The host address of the next instruction.
#[inline(always)]
fn return_address(w: &Wave) -> u64 {
    w.image_base.wrapping_add(w.next_pc)
}

fn s_getpc_b64(w: &mut Wave, i: &Inst) -> Result {
    w.swrite64(&i.ops[0], return_address(w));
    Ok(())
}

fn s_setpc_b64(w: &mut Wave, i: &Inst) -> Result {
    // A target outside the code object faults at the next fetch.
    w.next_pc = w.sread64(&i.ops[0]).wrapping_sub(w.image_base);
    Ok(())
}

fn s_swappc_b64(w: &mut Wave, i: &Inst) -> Result {
    // The target is read before the return address is written: they may
    // be the same registers.
    let target = w.sread64(&i.ops[1]);
    w.swrite64(&i.ops[0], return_address(w));
    w.next_pc = target.wrapping_sub(w.image_base);
    Ok(())
}

fn s_call_b64(w: &mut Wave, i: &Inst) -> Result {
    w.swrite64(&i.ops[0], return_address(w));
    w.next_pc = i.branch_target();
    Ok(())
}

// ------------------------------------------------------------ stopping

fn s_trap(w: &mut Wave, i: &Inst) -> Result {
    let n = i.ops.first().map_or(0, |o| w.sread(o)) & 0xff;
    Err(fault(FaultKind::Trap, format!("s_trap {n}: the program aborted (a trap)")))
}

/// `s_sethalt 1` halts the wave (our code objects do it after `s_trap`,
/// should the trap handler return); `s_sethalt 0` resumes, a no-op here.
fn s_sethalt(w: &mut Wave, i: &Inst) -> Result {
    let n = i.ops.first().map_or(0, |o| w.sread(o));
    if n & 1 != 0 { Err(fault(FaultKind::Trap, format!("s_sethalt {n}: the program halted the wave"))) } else { Ok(()) }
}

/// `s_sleep N` waits about 64×N clocks: a microsecond per unit here, so a
/// spinning wave lets others (and the host-call server) run; `s_sleep 0`
/// only yields.
fn s_sleep(w: &mut Wave, i: &Inst) -> Result {
    let n = i.ops.first().map_or(0, |o| w.sread(o)) & 0x7f;
    if n == 0 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(u64::from(n)));
    }
    Ok(())
}

// ------------------------------------------------------------ messages

/// The text of an operand printed as `name(...)` (`sendmsg(...)`,
/// `hwreg(...)`): the decoder keeps it as a modifier, or as an operand's
/// text.
fn call_text<'a>(i: &'a Inst, name: &str) -> Option<&'a str> {
    let inner = |t: &'a str| t.strip_prefix(name).and_then(|r| r.strip_prefix('(')).and_then(|r| r.strip_suffix(')'));
    i.mods.other.iter().find_map(|(k, _)| inner(k)).or_else(|| i.text.iter().find_map(|t| inner(t)))
}

/// `s_sendmsg_rtn`: the message's answer. The realtime clock is the only
/// one a compute program needs; the others (doorbell, TMA/TBA, the IDs)
/// read 0 (the trap sequence reads the doorbell only to signal the queue,
/// after `s_trap` has already stopped the wave here).
fn s_sendmsg_rtn(w: &mut Wave, i: &Inst) -> Result {
    let msg = call_text(i, "sendmsg").unwrap_or("");
    let v = match msg.split(',').next().map(str::trim) {
        Some("MSG_RTN_GET_REALTIME") => w.shared.realtime(),
        _ => 0,
    };
    if i.mnemonic.ends_with("_b64") {
        w.swrite64(&i.ops[0], v);
    } else {
        w.swrite(&i.ops[0], v as u32);
    }
    Ok(())
}

/// `s_sendmsg`: messages to the rest of the GPU. `MSG_INTERRUPT` raises a
/// host interrupt (the trap sequence's report to the queue, after `s_trap`
/// has stopped the wave here); the graphics messages (GS, VGPR
/// deallocation, ...) have nothing to act on in a compute emulator.
fn s_sendmsg(_w: &mut Wave, _i: &Inst) -> Result {
    Ok(())
}

// ------------------------------------------------------------ hardware registers

/// MODE at wave start: round to nearest, f32 and f64 denormals kept
/// (FLOAT_DENORM_MODE 0xf in [7:4]), DX10 clamp and IEEE mode on, as our
/// kernels' descriptors ask.
const DEFAULT_MODE: u32 = 0x3f0;

thread_local! {
    /// MODE, per wave: each wave runs on its own thread; the key (launch,
    /// wave) makes a thread that ran another wave start from the default.
    static MODE: Cell<(usize, u32, u32)> = const { Cell::new((0, 0, DEFAULT_MODE)) };
}

fn wave_key(w: &Wave) -> (usize, u32) {
    (std::sync::Arc::as_ptr(&w.shared) as usize, w.id)
}

/// The wave's MODE register. Stored so that programs read back what they
/// set; the emulator's float ops do not change with it (round to nearest,
/// denormals kept).
fn mode(w: &Wave) -> u32 {
    let (s, id) = wave_key(w);
    MODE.with(|m| {
        let (ks, kid, v) = m.get();
        if (ks, kid) == (s, id) { v } else { DEFAULT_MODE }
    })
}

fn set_mode(w: &Wave, v: u32) {
    let (s, id) = wave_key(w);
    MODE.with(|m| m.set((s, id, v)));
}

/// A `hwreg(...)` operand: register, offset of the field, its size.
#[derive(Debug, PartialEq)]
struct HwReg<'a> {
    reg: &'a str,
    offset: u32,
    size: u32,
}

fn hwreg(i: &Inst) -> Option<HwReg<'_>> {
    let t = call_text(i, "hwreg")?;
    let mut parts = t.split(',').map(str::trim);
    let reg = parts.next()?;
    let num = |s: Option<&str>, d: u32| {
        s.and_then(|s| match s.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        })
        .unwrap_or(d)
    };
    let offset = num(parts.next(), 0) & 31;
    let size = num(parts.next(), 32).clamp(1, 32);
    Some(HwReg { reg, offset, size })
}

/// The registers' names (LLVM prints a number for one it has no name for
/// on the target).
fn reg_name<'a>(w: &Wave, reg: &'a str) -> &'a str {
    match reg {
        "1" => "HW_REG_MODE",
        "2" => "HW_REG_STATUS",
        "4" if !w.arch.is_rdna() => "HW_REG_HW_ID",
        "15" => "HW_REG_SH_MEM_BASES",
        "20" if w.arch == crate::arch::Arch::Gfx942 => "HW_REG_XCC_ID",
        "23" if w.arch.is_rdna() => "HW_REG_HW_ID1",
        other => other,
    }
}

/// A hardware register's value, as far as the emulator models it.
fn read_hwreg(w: &Wave, reg: &str) -> u32 {
    let id = w.id;
    match reg_name(w, reg) {
        "HW_REG_MODE" => mode(w),
        // SCC [0], EXECZ [9], VCCZ [10].
        "HW_REG_STATUS" => u32::from(w.scc) | u32::from(w.exec() == 0) << 9 | u32::from(w.vcc() == 0) << 10,
        // gfx9: WAVE_ID [3:0], SIMD_ID [5:4], CU_ID [11:8], SE_ID [14:13],
        // made up from the wave's index so that each wave has its own.
        "HW_REG_HW_ID" => (id & 0xf) | ((id >> 4) & 3) << 4 | ((id >> 6) & 0xf) << 8 | ((id >> 10) & 3) << 13,
        // gfx11: WAVE_ID [4:0], SIMD_ID [9:8], WGP_ID [13:10], SA_ID [16], SE_ID [20:18].
        "HW_REG_HW_ID1" => {
            (id & 0xf) | ((id >> 4) & 3) << 8 | ((id >> 6) & 0xf) << 10 | ((id >> 10) & 1) << 16 | ((id >> 11) & 7) << 18
        }
        // PRIVATE_BASE [15:0] and SHARED_BASE [31:16]: bits 63:48 of the
        // apertures (what the compiler uses to build flat addresses).
        "HW_REG_SH_MEM_BASES" => (SHARED_APERTURE >> 16) << 16 | (PRIVATE_APERTURE >> 16),
        // One XCC; the rest (IB_STS, GPR_ALLOC, TRAPSTS...) read 0.
        _ => 0,
    }
}

fn s_getreg_b32(w: &mut Wave, i: &Inst) -> Result {
    let v = match hwreg(i) {
        Some(h) => ((u64::from(read_hwreg(w, h.reg)) >> h.offset) & ((1u64 << h.size) - 1)) as u32,
        None => 0,
    };
    w.swrite(&i.ops[0], v);
    Ok(())
}

/// `s_setreg_b32 hwreg(...), sN` / `s_setreg_imm32_b32 hwreg(...), imm`:
/// only MODE is kept; writes to the others change nothing modelled.
fn s_setreg(w: &mut Wave, i: &Inst) -> Result {
    let Some(h) = hwreg(i) else { return Ok(()) };
    let v = i.ops.last().map_or(0, |o| w.sread(o));
    if reg_name(w, h.reg) == "HW_REG_MODE" {
        let mask = (((1u64 << h.size) - 1) << h.offset) as u32;
        set_mode(w, (mode(w) & !mask) | ((v << h.offset) & mask));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::arch::Arch;
    use crate::dispatch::Group;
    use crate::ops::testing::{run, wave};
    use crate::wave::{FaultKind, Stop, Wave};

    fn s64(w: &Wave, r: usize) -> u64 {
        u64::from(w.s[r]) | u64::from(w.s[r + 1]) << 32
    }

    #[test]
    fn branches() {
        let mut w = wave(Arch::Gfx1100);
        // pc 0x1000: target = 0x1004 + 4 * simm16 (printed unsigned).
        run(&mut w, "s_branch 3").unwrap();
        assert_eq!(w.pc, 0x1010);
        run(&mut w, "s_branch 65535").unwrap();
        assert_eq!(w.pc, 0x1010);
        w.scc = false;
        run(&mut w, "s_cbranch_scc1 4").unwrap();
        assert_eq!(w.pc, 0x1014);
        run(&mut w, "s_cbranch_scc0 4").unwrap();
        assert_eq!(w.pc, 0x1028);
        w.scc = true;
        run(&mut w, "s_cbranch_scc0 4").unwrap();
        assert_eq!(w.pc, 0x102c);
        run(&mut w, "s_cbranch_scc1 65534").unwrap();
        assert_eq!(w.pc, 0x1028);
    }

    #[test]
    fn exec_and_vcc_branches_see_the_wave_lanes_only() {
        for arch in [Arch::Gfx1100, Arch::Gfx942] {
            let mut w = wave(arch);
            w.pc = 0x2000;
            run(&mut w, "s_cbranch_execz 8").unwrap();
            assert_eq!(w.pc, 0x2004, "{arch:?}");
            w.set_exec(0);
            // Garbage in exec_hi does not count on wave32 (nor does vcc_hi).
            w.s[crate::operand::EXEC as usize + 1] = 1;
            run(&mut w, "s_cbranch_execnz 8").unwrap();
            let after = if arch == Arch::Gfx1100 { 0x2008 } else { 0x2028 };
            assert_eq!(w.pc, after, "{arch:?}");
            w.pc = 0x2000;
            w.set_vcc(0);
            w.s[crate::operand::VCC as usize + 1] = 1;
            run(&mut w, "s_cbranch_vccz 8").unwrap();
            let after = if arch == Arch::Gfx1100 { 0x2024 } else { 0x2004 };
            assert_eq!(w.pc, after, "{arch:?}");
            w.pc = 0x2000;
            w.set_vcc(1 << 5);
            run(&mut w, "s_cbranch_vccnz 8").unwrap();
            assert_eq!(w.pc, 0x2024, "{arch:?}");
            w.pc = 0x2000;
            run(&mut w, "s_cbranch_vccz 8").unwrap();
            assert_eq!(w.pc, 0x2004, "{arch:?}");
        }
    }

    #[test]
    fn pc_is_a_host_address() {
        let mut w = wave(Arch::Gfx1100);
        w.pc = 0x4400;
        // What our code does: getpc, add the PC-relative offset, call.
        run(&mut w, "s_getpc_b64 s[0:1]").unwrap();
        assert_eq!(s64(&w, 0), 0x7000_0000 + 0x4404);
        run(&mut w, "s_add_u32 s0, s0, 0x100").unwrap();
        run(&mut w, "s_addc_u32 s1, s1, lit(0x0)").unwrap();
        w.pc = 0x4410;
        run(&mut w, "s_swappc_b64 s[30:31], s[0:1]").unwrap();
        assert_eq!(w.pc, 0x4504);
        assert_eq!(s64(&w, 30), 0x7000_4414);
        // Return.
        run(&mut w, "s_setpc_b64 s[30:31]").unwrap();
        assert_eq!(w.pc, 0x4414);
        // swappc with the same pair for both.
        w.s[30] = 0x7000_5000;
        w.s[31] = 0;
        run(&mut w, "s_swappc_b64 s[30:31], s[30:31]").unwrap();
        assert_eq!((w.pc, s64(&w, 30)), (0x5000, 0x7000_4418));
        run(&mut w, "s_call_b64 s[30:31], 4").unwrap();
        assert_eq!((w.pc, s64(&w, 30)), (0x5014, 0x7000_5004));
    }

    #[test]
    fn end_trap_halt() {
        let mut w = wave(Arch::Gfx942);
        assert!(matches!(run(&mut w, "s_endpgm"), Err(Stop::End)));
        match run(&mut w, "s_trap 2") {
            Err(Stop::Fault(f)) => {
                assert_eq!(f.kind, FaultKind::Trap);
                assert!(f.message.contains("s_trap 2"), "{}", f.message);
            }
            _ => panic!("s_trap must fault"),
        }
        assert!(matches!(run(&mut w, "s_sethalt 5"), Err(Stop::Fault(f)) if f.kind == FaultKind::Trap));
        run(&mut w, "s_sethalt 0").unwrap();
        for nop in ["s_version UC_VERSION_GFX10", "s_setkill 1", "s_wakeup", "s_cbranch_cdbgsys 3", "s_sendmsg sendmsg(MSG_INTERRUPT)"] {
            let pc = w.pc;
            run(&mut w, nop).unwrap();
            assert_eq!(w.pc, pc + 4, "{nop}");
        }
    }

    #[test]
    fn sleep_and_barrier() {
        let mut w = wave(Arch::Gfx1100);
        run(&mut w, "s_sleep 0").unwrap();
        run(&mut w, "s_sleep 2").unwrap();
        // A group of one wave passes its barrier; two waves meet.
        run(&mut w, "s_barrier").unwrap();
        let g = Arc::new(Group::new(64, 2));
        w.group = g.clone();
        let other = std::thread::spawn(move || g.barrier());
        run(&mut w, "s_barrier").unwrap();
        other.join().unwrap();
    }

    #[test]
    fn clocks_and_messages() {
        let mut w = wave(Arch::Gfx1100);
        std::thread::sleep(std::time::Duration::from_millis(1));
        run(&mut w, "s_sendmsg_rtn_b64 s[0:1], sendmsg(MSG_RTN_GET_REALTIME)").unwrap();
        let t0 = s64(&w, 0);
        assert!(t0 >= 100_000, "a millisecond is 100000 ticks at 100 MHz: {t0}");
        run(&mut w, "s_sendmsg_rtn_b32 s2, sendmsg(MSG_RTN_GET_REALTIME)").unwrap();
        assert!(w.s[2] >= t0 as u32);
        w.s[3] = 5;
        run(&mut w, "s_sendmsg_rtn_b32 s3, sendmsg(MSG_RTN_GET_DOORBELL)").unwrap();
        assert_eq!(w.s[3], 0);
        let mut w = wave(Arch::Gfx942);
        std::thread::sleep(std::time::Duration::from_millis(1));
        run(&mut w, "s_memrealtime s[8:9]").unwrap();
        run(&mut w, "s_memtime s[10:11]").unwrap();
        assert!(s64(&w, 8) >= 100_000 && s64(&w, 10) >= 1_000_000);
    }

    #[test]
    fn hardware_registers() {
        let mut w = wave(Arch::Gfx1100);
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_MODE)").unwrap();
        assert_eq!(w.s[0], super::DEFAULT_MODE);
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_MODE, 4, 4)").unwrap();
        assert_eq!(w.s[0], 0xf);
        run(&mut w, "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 3").unwrap();
        w.s[1] = 0x5;
        run(&mut w, "s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s1").unwrap();
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 8)").unwrap();
        assert_eq!(w.s[0], 0x53);
        run(&mut w, "s_round_mode 0x0").unwrap();
        run(&mut w, "s_denorm_mode 15").unwrap();
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_MODE)").unwrap();
        assert_eq!(w.s[0], super::DEFAULT_MODE);
        // Another wave on this thread starts from the default.
        let mut other = wave(Arch::Gfx1100);
        run(&mut w, "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 3").unwrap();
        run(&mut other, "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)").unwrap();
        assert_eq!(other.s[0], 0);

        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_SH_MEM_BASES, 16, 16)").unwrap();
        assert_eq!(w.s[0], crate::memory::SHARED_APERTURE >> 16);
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_SH_MEM_BASES)").unwrap();
        assert_eq!(w.s[0] & 0xffff, crate::memory::PRIVATE_APERTURE >> 16);
        w.id = 0x23; // wave 3 of SIMD 2
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_HW_ID1)").unwrap();
        assert_eq!(w.s[0], 3 | 2 << 8);
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_HW_ID1, 0, 5)").unwrap();
        assert_eq!(w.s[0], 3);
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_IB_STS)").unwrap();
        assert_eq!(w.s[0], 0);
        let mut w = wave(Arch::Gfx942);
        w.id = 0x13;
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_HW_ID)").unwrap();
        assert_eq!(w.s[0], 3 | 1 << 4);
        w.s[0] = 9;
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_XCC_ID)").unwrap();
        assert_eq!(w.s[0], 0);
        w.scc = true;
        run(&mut w, "s_getreg_b32 s0, hwreg(HW_REG_STATUS, 0, 1)").unwrap();
        assert_eq!(w.s[0], 1);
    }

    #[test]
    fn hwreg_operand_forms() {
        let i = crate::decode::parse_inst("s_getreg_b32 s0, hwreg(HW_REG_MODE, 4, 4)", 0, 4, 0).unwrap();
        assert_eq!(super::hwreg(&i), Some(super::HwReg { reg: "HW_REG_MODE", offset: 4, size: 4 }));
        let i = crate::decode::parse_inst("s_getreg_b32 s0, hwreg(25)", 0, 4, 0).unwrap();
        assert_eq!(super::hwreg(&i), Some(super::HwReg { reg: "25", offset: 0, size: 32 }));
    }
}
