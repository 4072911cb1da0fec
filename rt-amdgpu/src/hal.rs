//! [`AmdHal`]: the AMD primitives, in the order of `rt-nvptx/src/hal.rs`.

use core::arch::amdgpu;
use core::sync::atomic::{Ordering, fence};

use rt_common::Hal;

unsafe extern "C" {
    /// `s_memrealtime` (gfx9/10) or `s_sendmsg_rtn_b64 REALTIME` (gfx11+):
    /// the 100 MHz constant-rate clock, whichever the target CPU has.
    #[link_name = "llvm.readsteadycounter"]
    fn readsteadycounter() -> u64;
}

/// An AMD wavefront of `WAVE` lanes.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmdHal<const WAVE: u32>;
/// gfx9xx (GCN, CDNA): 64-lane wavefronts.
pub type Wave64 = AmdHal<64>;
/// gfx10+ (RDNA) default: 32-lane wavefronts.
pub type Wave32 = AmdHal<32>;

/// Approximate nanoseconds per `s_sleep` unit (64 clocks at ~2 GHz).
const NS_PER_SLEEP_UNIT: u32 = 32;

// SAFETY: `thread_index` is the wave's global index given the launch's
// `block_warps`; the fences are Rust's (system scope: at least the scope
// named); the steady counter is device-wide at 100 MHz; `s_endpgm` ends the
// wave.
unsafe impl<const WAVE: u32> Hal for AmdHal<WAVE> {
    const LANES: u32 = WAVE;
    /// Every lane runs frames: `gpu_lanes` work runs on the whole wave.
    const PARALLEL_LANES: u32 = rt_abi::protocol::amd_frame_lanes(WAVE);
    /// The other lanes are masked off (`EXEC`) while the leader runs and
    /// cannot wait at a barrier: lane work runs in `run_lanes`.
    const LOCKSTEP_LANES: bool = true;
    const CLOCK_HZ: u64 = 100_000_000;
    const WAKES: bool = false;
    /// Scratch grows up from offset 0 of the lane's private segment; the
    /// linker's depth checks read it (`llvm.stacksave`) themselves.
    const CALL_STACK_GROWS_UP: bool = true;

    /// `v_mbcnt_lo/hi` of all ones.
    #[inline(always)]
    fn lane_id() -> u32 {
        let lo = amdgpu::mbcnt_lo(!0, 0);
        if WAVE == 64 {
            amdgpu::mbcnt_hi(!0, lo)
        } else {
            lo
        }
    }
    /// `EXEC` (ballot of true).
    #[inline(always)]
    fn lane_mask() -> u64 {
        amdgpu::ballot(true)
    }
    /// `v_cmp` into an SGPR mask (`llvm.amdgcn.ballot`).
    #[inline(always)]
    fn ballot(pred: bool) -> u64 {
        amdgpu::ballot(pred)
    }
    /// `v_readfirstlane_b32`.
    #[inline(always)]
    fn broadcast_value(value: u32) -> u32 {
        amdgpu::readfirstlane_u32(value)
    }
    /// `wave_barrier`: lanes of a wave run in lockstep; this only stops the
    /// compiler from moving code across.
    #[inline(always)]
    fn sync_lane(_mask: u64) {
        amdgpu::wave_barrier();
    }
    /// The lane's word in its `LaneStack` (`crate::stack::__gpu_stack_slot`),
    /// which the kernel entry publishes before any call: the thread
    /// table's copy in the runtime is written only by warp 0's init, and a
    /// warp beyond the table has no slot. Per lane; only the leader's is
    /// ever set (a lane function cannot unwind: `rt_common::unwind`).
    #[inline(always)]
    fn unwind_word(_rt: &rt_common::Runtime) -> *mut *mut u8 {
        let pair = crate::stack::__gpu_stack_slot.load(Ordering::Relaxed);
        // In bounds of the lane's pair (`LaneStack` is `[u64; 4]`), which
        // lives as long as the kernel; a word is a pointer's size here.
        pair.cast::<*mut u8>().wrapping_add(rt_common::stack::LANE_EXCEPTION)
    }
    /// `workgroup_id.x × block_warps + workitem_id.x / WAVE`.
    #[inline(always)]
    fn thread_index(block_warps: u32) -> u32 {
        amdgpu::workgroup_id_x() * block_warps.max(1) + amdgpu::workitem_id_x() / WAVE
    }
    /// `s_sleep` (≈ 64 clocks per unit; the unit count is an immediate, so
    /// longer sleeps are a few fixed-size `s_sleep`s).
    #[inline(always)]
    fn sleep_ns(ns: u32) {
        let mut units = ns / NS_PER_SLEEP_UNIT;
        if units == 0 {
            amdgpu::s_sleep::<0>();
            return;
        }
        while units >= 127 {
            amdgpu::s_sleep::<127>();
            units -= 127;
        }
        if units & 64 != 0 {
            amdgpu::s_sleep::<64>();
        }
        if units & 32 != 0 {
            amdgpu::s_sleep::<32>();
        }
        if units & 16 != 0 {
            amdgpu::s_sleep::<16>();
        }
        if units & 8 != 0 {
            amdgpu::s_sleep::<8>();
        }
        if units & 4 != 0 {
            amdgpu::s_sleep::<4>();
        }
        if units & 2 != 0 {
            amdgpu::s_sleep::<2>();
        }
        if units & 1 != 0 {
            amdgpu::s_sleep::<1>();
        }
    }
    /// `s_memrealtime` (100 MHz).
    #[inline(always)]
    fn fixed_frequency_clock() -> u64 {
        // SAFETY: reads a counter.
        unsafe { readsteadycounter() }
    }
    /// Acquire fence. rustc emits Rust fences at system scope; `gpu-ld`
    /// gives them agent scope (`device_scope`: `buffer_wbinvl1_vol` on
    /// gfx90a, where system scope would also invalidate L2 with
    /// `buffer_invl2`), except in the host ring's functions.
    #[inline(always)]
    fn fence_device_acquire() {
        fence(Ordering::Acquire);
    }
    /// Release fence (agent scope, see above).
    #[inline(always)]
    fn fence_device_release() {
        fence(Ordering::Release);
    }
    /// Acquire-release fence (one `fence acq_rel`, agent scope as above).
    #[inline(always)]
    fn fence_device_acq_rel() {
        fence(Ordering::AcqRel);
    }
    /// Release fence, system scope (`buffer_wbl2` on gfx90a): only the host
    /// ring's functions use it, and `gpu-ld` keeps system scope there.
    #[inline(always)]
    fn fence_system_release() {
        fence(Ordering::Release);
    }
    /// `s_endpgm`.
    #[inline(always)]
    fn end_program() -> ! {
        amdgpu::endpgm()
    }
    /// Nothing: a sleeping wave wakes by itself (`s_sleep` is bounded).
    #[inline(always)]
    fn wake(_index: u32) {}
    /// `WAVE` when the code object has `gpu-ld`'s whole-wave call, 1 where
    /// it has the runtime's fallback (see `crate::lanes`).
    #[inline(always)]
    fn lockstep_lanes() -> u32 {
        // SAFETY: no preconditions.
        unsafe { crate::lanes::__gpu_amd_wave_lanes() }
    }
    /// `gpu-ld`'s whole-wave call: `EXEC` saved, every lane on, `f(data,
    /// lane)` on all of them at once, `EXEC` restored (`crate::lanes`).
    #[inline(always)]
    unsafe fn run_lanes(f: rt_abi::abi::LaneFn, data: *const u8) {
        // SAFETY: the trait's contract.
        unsafe { crate::lanes::__gpu_amd_wave_call(f, data) }
    }
    /// Frames live in global memory (shared stacks): switch the calling
    /// lane's stack pointer and limit to `stack` for the call.
    unsafe fn call_on_stack(entry: rt_abi::abi::Entry, data: *mut u8, stack: *mut u8, len: usize) {
        // SAFETY: the trait's contract.
        unsafe { crate::stack::call_on_stack(entry, data, stack, len) }
    }
}
