//! amdgcn: the whole-wave call that runs `gpu_lanes::for_each_lane` work on
//! every lane of a wavefront (the runtime's half and the protocol:
//! `rt-amdgpu/src/lanes.rs`, `rt_common::lanes`).
//!
//! While a wave's leader lane runs a thread, the other lanes are masked off
//! in `EXEC` (the kernel entry's `if lane == 0` branch). To run lane work
//! the leader calls `__gpu_amd_wave_call(f, data)`, which this module links
//! in ahead of the program's bitcode (so its strong definitions replace the
//! runtime's weak one-lane fallbacks: [`ir`]); it calls a hand-written
//! function in module assembly ([`asm_module`], linked in after `opt`),
//! `__gpu_amd_whole_wave_call`, that:
//!
//! 1. reads `f`, `data` and the leader's packed work-item id (`v31`) into
//!    SGPRs with `v_readfirstlane` while only the caller's lanes are on;
//! 2. saves `EXEC` and turns every lane on (`s_or_saveexec_b64 s, -1`;
//!    `_b32` on wave32);
//! 3. saves `v40` (all lanes) in its own scratch frame and keeps the return
//!    address, the caller's `s34`/`s35` and the saved `EXEC` in its lanes
//!    and in `s34`/`s35` (callee-saved: `f` keeps them);
//! 4. gives each lane its lane id (`v_mbcnt_lo`/`_hi`) in `v2`, `data` in
//!    `v[0:1]`, and its own work-item id in `v31` (the wave's first id plus
//!    the lane: launches are 1-D with whole waves per block), and calls `f`
//!    (`s_swappc_b64`) with the caller's implicit arguments (`s[0:15]`,
//!    `s32`, `s33`) untouched;
//! 5. restores `s30`/`s31`, `s34`/`s35`, `v40` and then `EXEC`, and returns.
//!
//! Why it is sound (the inactive lanes hold nothing `f` may clobber): every
//! frame below it is suspended at a call, and LLVM keeps nothing live across
//! a call in a caller-saved register, in any lane (a call's register mask
//! clobbers the whole register); callee-saved VGPRs `f` saves and restores
//! in every lane, since it runs with every lane on (`v40` here likewise);
//! SGPRs are shared by the wave and follow the calling convention. Private
//! memory (register spills and saves) is addressed from the wave's one
//! stack pointer `s32`, above which the masked-off lanes have nothing (their
//! deepest frame is the kernel's `start_wave`, below the leader's). The
//! frames `gpu-ld` moved to global memory come from each lane's own stack
//! (`__gpu_stack_slot` names a per-lane pair; the launcher gives every lane
//! of a wave one, `rt_abi::protocol::amd_frame_lanes`). LLVM cannot do
//! this as an ordinary call between two `EXEC` changes: it sets a call's
//! arguments up wherever it likes, before the change (seen in `llc` output).
//!
//! Written for gfx9 (wave64; MUBUF scratch, or flat scratch on gfx94x and
//! gfx95x) and gfx11 (wave32, flat scratch). Other CPUs get no whole-wave
//! call: the runtime's fallback runs lane 0 alone.

/// The hand-written function (module assembly); what the runtime calls
/// (strong here, weak in rt-amdgpu); the lane count the runtime reports
/// (strong here, weak in rt-amdgpu).
pub use rt_abi::symbols::{
    AMD_WAVE_CALL as WAVE_CALL, AMD_WAVE_LANES as WAVE_LANES, AMD_WHOLE_WAVE_CALL as WHOLE_WAVE_CALL,
};

/// Bytes of private memory a lane the function's frame takes (it saves
/// `v40`; 16 keeps the stack 16-byte aligned).
const FRAME_BYTES: u32 = 16;

/// How `cpu` runs the call, or `None` where it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flavor {
    wave: u32,
    /// Scratch through flat `scratch_*` instructions (stack pointer in
    /// bytes a lane); else MUBUF `buffer_*` through `s[0:3]` (stack pointer
    /// in bytes a lane × the wave size).
    flat_scratch: bool,
    /// gfx11 mnemonics (`scratch_store_b32`, `v_add_nc_u32`).
    gfx11: bool,
}

fn flavor(cpu: &str) -> Option<Flavor> {
    let digits = cpu.strip_prefix("gfx")?;
    if digits.len() == 3 && digits.starts_with('9') {
        let flat = digits.starts_with("94") || digits.starts_with("95");
        Some(Flavor { wave: 64, flat_scratch: flat, gfx11: false })
    } else if digits.len() == 4 && digits.starts_with("11") {
        Some(Flavor { wave: 32, flat_scratch: true, gfx11: true })
    } else {
        None
    }
}

/// The wave size the whole-wave call runs on for `cpu`, if it has one.
pub fn wave_lanes(cpu: &str) -> Option<u32> {
    flavor(cpu).map(|f| f.wave)
}

/// How far right to shift the stack pointer (`s32`) on `cpu` for a lane's
/// byte offset in its scratch: 0 with flat scratch, log2 of the wave size
/// with MUBUF scratch; `None` for a cpu of unknown scratch addressing.
pub fn stack_pointer_lane_shift(cpu: &str) -> Option<u32> {
    flavor(cpu).map(|f| if f.flat_scratch { 0 } else { f.wave.trailing_zeros() })
}

/// The instructions of `__gpu_amd_whole_wave_call` for `f`.
fn body(f: Flavor) -> Vec<String> {
    let w64 = f.wave == 64;
    let sp_units = if f.flat_scratch { FRAME_BYTES } else { FRAME_BYTES * f.wave };
    let (store, load) = match (f.flat_scratch, f.gfx11) {
        (true, true) => ("scratch_store_b32 off, v40, s32", "scratch_load_b32 v40, off, s32"),
        (true, false) => ("scratch_store_dword off, v40, s32", "scratch_load_dword v40, off, s32"),
        (false, _) => ("buffer_store_dword v40, off, s[0:3], s32", "buffer_load_dword v40, off, s[0:3], s32"),
    };
    let mut b: Vec<String> = Vec::new();
    let mut i = |s: &str| b.push(s.to_string());
    i("s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)");
    // 1. Uniform values from the first lane the caller runs (the leader).
    i("v_readfirstlane_b32 s16, v0");
    i("v_readfirstlane_b32 s17, v1");
    i("v_readfirstlane_b32 s18, v2");
    i("v_readfirstlane_b32 s19, v3");
    i("v_readfirstlane_b32 s20, v31");
    // 2. Every lane on; the caller's mask in s22(/s23).
    i(if w64 { "s_or_saveexec_b64 s[22:23], -1" } else { "s_or_saveexec_b32 s22, -1" });
    // 3. A frame of our own: v40 (every lane), then the return address and
    //    the caller's s34/s35 in v40's lanes, the mask in s34/s35.
    i(store);
    i("v_writelane_b32 v40, s30, 0");
    i("v_writelane_b32 v40, s31, 1");
    i("v_writelane_b32 v40, s34, 2");
    if w64 {
        i("v_writelane_b32 v40, s35, 3");
        i("s_mov_b64 s[34:35], s[22:23]");
    } else {
        i("s_mov_b32 s34, s22");
    }
    i(&format!("s_add_u32 s32, s32, {sp_units:#x}"));
    // 4. Each lane's id, work-item id and arguments; the call.
    i(&format!("s_and_b32 s20, s20, {:#x}", !(f.wave - 1)));
    i("v_mbcnt_lo_u32_b32 v2, -1, 0");
    if w64 {
        i("v_mbcnt_hi_u32_b32 v2, -1, v2");
    }
    // Wait states between the SGPRs v_readfirstlane wrote and the VALU
    // reads of them below (module assembly gets no hazard recognizer).
    i("s_nop 4");
    i(if f.gfx11 { "v_add_nc_u32_e32 v31, s20, v2" } else { "v_add_u32_e32 v31, s20, v2" });
    i("v_mov_b32_e32 v0, s18");
    i("v_mov_b32_e32 v1, s19");
    i("s_swappc_b64 s[30:31], s[16:17]");
    // 5. Back: the frame, the saved registers, then the caller's mask.
    i(&format!("s_sub_u32 s32, s32, {sp_units:#x}"));
    i("v_readlane_b32 s30, v40, 0");
    i("v_readlane_b32 s31, v40, 1");
    if w64 {
        i("s_mov_b64 s[16:17], s[34:35]");
        i("v_readlane_b32 s34, v40, 2");
        i("v_readlane_b32 s35, v40, 3");
    } else {
        i("s_mov_b32 s16, s34");
        i("v_readlane_b32 s34, v40, 2");
    }
    i(load);
    i("s_waitcnt vmcnt(0)");
    i(if w64 { "s_mov_b64 exec, s[16:17]" } else { "s_mov_b32 exec_lo, s16" });
    i("s_setpc_b64 s[30:31]");
    b
}

/// The LLVM module `gpu-ld` links first for `cpu` (no target triple or
/// data layout: it takes the program's): the strong definitions of
/// [`WAVE_LANES`] and [`WAVE_CALL`], which calls [`WHOLE_WAVE_CALL`]; or
/// `None` where `cpu` has no whole-wave call.
pub fn ir(cpu: &str) -> Option<String> {
    let f = flavor(cpu)?;
    let name = WHOLE_WAVE_CALL;
    Some(format!(
        "; gpu-ld: gpu_lanes on every lane of the wave (gpu-ld/src/amd_lanes.rs)\n\
         declare hidden void @{name}(ptr, ptr)\n\n\
         define i32 @{WAVE_LANES}() {{\n  ret i32 {}\n}}\n\n\
         define void @{WAVE_CALL}(ptr %f, ptr %data) {{\n  call void @{name}(ptr %f, ptr %data)\n  ret void\n}}\n",
        f.wave
    ))
}

/// [`WHOLE_WAVE_CALL`] itself, as an LLVM module of module assembly for
/// `cpu`, linked into the program after `opt` (which would parse the
/// assembly for a generic GPU and refuse gfx9 and gfx11 instructions) and
/// assembled by `llc` for `cpu`.
pub fn asm_module(cpu: &str) -> Option<String> {
    let f = flavor(cpu)?;
    let name = WHOLE_WAVE_CALL;
    let mut lines: Vec<String> = vec![
        ".text".into(),
        format!(".globl {name}"),
        format!(".hidden {name}"),
        ".p2align 8".into(),
        format!(".type {name},@function"),
        format!("{name}:"),
    ];
    lines.extend(body(f).into_iter().map(|l| format!("  {l}")));
    lines.push(format!(".size {name}, .-{name}"));
    let mut m = String::from("; gpu-ld: the whole-wave call for gpu_lanes (gpu-ld/src/amd_lanes.rs)\n");
    for l in lines {
        m.push_str(&format!("module asm \"{l}\"\n"));
    }
    m.push_str(&format!("\ndeclare hidden void @{name}(ptr, ptr)\n"));
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavors_of_the_tested_cpus() {
        assert_eq!(flavor("gfx90a"), Some(Flavor { wave: 64, flat_scratch: false, gfx11: false }));
        assert_eq!(flavor("gfx942"), Some(Flavor { wave: 64, flat_scratch: true, gfx11: false }));
        assert_eq!(flavor("gfx1100"), Some(Flavor { wave: 32, flat_scratch: true, gfx11: true }));
        assert_eq!(flavor("gfx1030"), None);
        assert_eq!(flavor("gfx1200"), None);
        assert_eq!(ir("gfx1201"), None);
        assert_eq!(asm_module("gfx1201"), None);
    }

    #[test]
    fn wave64_turns_every_lane_on_around_the_call_and_restores_exec() {
        let m = asm_module("gfx90a").unwrap();
        let pos = |s: &str| m.find(s).unwrap_or_else(|| panic!("no `{s}` in\n{m}"));
        let on = pos("s_or_saveexec_b64 s[22:23], -1");
        let call = pos("s_swappc_b64 s[30:31], s[16:17]");
        let off = pos("s_mov_b64 exec, s[16:17]");
        assert!(pos("v_readfirstlane_b32 s17, v1") < on, "f must be read before every lane is on");
        assert!(on < pos("v_mbcnt_hi_u32_b32 v2, -1, v2") && pos("v_mov_b32_e32 v1, s19") < call);
        assert!(on < pos("v_add_u32_e32 v31, s20, v2"));
        assert!(call < pos("buffer_load_dword v40, off, s[0:3], s32") && pos("s_waitcnt vmcnt(0)\"") < off);
        assert!(m.contains("s_add_u32 s32, s32, 0x400") && m.contains("s_sub_u32 s32, s32, 0x400"));
        let ir = ir("gfx90a").unwrap();
        assert!(ir.contains("define i32 @__gpu_amd_wave_lanes() {\n  ret i32 64\n}"), "{ir}");
        assert!(ir.contains("call void @__gpu_amd_whole_wave_call(ptr %f, ptr %data)") && !ir.contains("module asm"));
    }

    #[test]
    fn wave32_and_flat_scratch() {
        let m = asm_module("gfx1100").unwrap();
        assert!(m.contains("s_or_saveexec_b32 s22, -1") && m.contains("s_mov_b32 exec_lo, s16"));
        assert!(!m.contains("v_mbcnt_hi") && m.contains("v_add_nc_u32_e32 v31, s20, v2"));
        assert!(m.contains("scratch_store_b32 off, v40, s32") && m.contains("s_add_u32 s32, s32, 0x10"));
        assert!(ir("gfx1100").unwrap().contains("ret i32 32"));
        let m = asm_module("gfx942").unwrap();
        assert!(m.contains("scratch_store_dword off, v40, s32") && m.contains("s_or_saveexec_b64"));
    }
}
