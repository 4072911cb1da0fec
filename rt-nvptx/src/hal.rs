//! [`NvHal`]: the NVIDIA primitives, in the order of `rt-amdgpu/src/hal.rs`.

use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering, fence};

use rt_abi::protocol::NVIDIA_MAX_BLOCK_WARPS;
use rt_common::Hal;
use rt_common::slot::WarpPrivate;

/// An NVIDIA warp: 32 lanes; `%globaltimer` in ns.
#[derive(Clone, Copy, Debug, Default)]
pub struct NvHal;

// SAFETY: `thread_index` is the warp's global index (blocks are whole warps);
// the device fences are Rust's (system scope, or device scope from `gpu-ld`:
// at least the scope named), the system fence `.sys`; `%globaltimer` is
// a device-wide ns timer; `exit` ends the thread for good.
unsafe impl Hal for NvHal {
    const LANES: u32 = 32;
    /// The other 31 lanes run `lanes::lane_loop` (see `start.rs`).
    const PARALLEL_LANES: u32 = rt_abi::protocol::NVIDIA_FRAME_LANES;
    const CLOCK_HZ: u64 = 1_000_000_000;
    const WAKES: bool = false;

    /// `stacksave` (PTX 7.3), as the generic address the linker's
    /// `llvm.stacksave` checks compare against.
    #[inline(always)]
    fn call_stack_pointer() -> u64 {
        let r: u64;
        // SAFETY: reads the stack pointer; no memory is touched.
        unsafe {
            asm!(
                "{{ .reg .b64 sp; stacksave.u64 sp; cvta.local.u64 {r}, sp; }}",
                r = out(reg64) r,
                options(nomem, nostack, preserves_flags)
            )
        };
        r
    }
    /// `%laneid`.
    #[inline(always)]
    fn lane_id() -> u32 {
        let r: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nomem, nostack, pure)) };
        r
    }
    /// `activemask.b32`.
    #[inline(always)]
    fn lane_mask() -> u64 {
        let r: u32;
        // SAFETY: reads the active mask. Not `pure`: it depends on divergence.
        unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nomem, nostack)) };
        r as u64
    }
    /// `vote.sync.ballot.b32` over the active lanes.
    #[inline(always)]
    fn ballot(pred: bool) -> u64 {
        let mask = Self::lane_mask() as u32;
        let r: u32;
        // SAFETY: every lane of `mask` executes this same instruction.
        unsafe {
            asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {pred}, 0; vote.sync.ballot.b32 {r}, p, {mask}; }}",
                pred = in(reg32) pred as u32, mask = in(reg32) mask, r = out(reg32) r,
                options(nomem, nostack),
            )
        };
        r as u64
    }
    /// `shfl.sync.idx.b32` from the lowest active lane.
    #[inline(always)]
    fn broadcast_value(value: u32) -> u32 {
        let mask = Self::lane_mask() as u32;
        let r: u32;
        // SAFETY: every lane of `mask` executes this same instruction.
        unsafe {
            asm!(
                "shfl.sync.idx.b32 {r}, {v}, {src}, 31, {mask};",
                r = out(reg32) r, v = in(reg32) value, src = in(reg32) mask.trailing_zeros(),
                mask = in(reg32) mask, options(nomem, nostack),
            )
        };
        r
    }
    /// `bar.warp.sync` (exited lanes count as arrived).
    #[inline(always)]
    fn sync_lane(mask: u64) {
        // SAFETY: the caller names lanes that all reach a `sync_lane`.
        unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask as u32, options(nostack)) };
    }
    /// `(%ctaid.x × %ntid.x + %tid.x) / 32` (the argument is not needed).
    #[inline(always)]
    fn thread_index(_block_warps: u32) -> u32 {
        let (block, dim, tid): (u32, u32, u32);
        // SAFETY: reads special registers.
        unsafe {
            asm!(
                "mov.u32 {b}, %ctaid.x; mov.u32 {d}, %ntid.x; mov.u32 {t}, %tid.x;",
                b = out(reg32) block, d = out(reg32) dim, t = out(reg32) tid,
                options(nomem, nostack, pure),
            )
        };
        (block * dim + tid) / Self::LANES
    }
    /// The kernel entry's copy (`start::__gpu_thread_table`), in shared
    /// memory: a fence empties the SM's L1, and the launch block's copy
    /// there was an L2 round trip again after each.
    #[inline(always)]
    fn thread_table(_launch: &rt_abi::protocol::LaunchBlock) -> u64 {
        __gpu_thread_table.load(Ordering::Relaxed)
    }
    /// The calling warp's entry of `start::__gpu_warp_private`, in the
    /// block's shared memory (`own` is not read).
    #[inline(always)]
    fn warp_private(_own: &rt_common::slot::Slot) -> &rt_common::slot::WarpPrivate {
        Self::warp_private_here()
    }
    /// The same entry, without a slot (and the thread table's load).
    #[inline(always)]
    fn my_warp_private(_rt: &rt_common::Runtime) -> &rt_common::slot::WarpPrivate {
        Self::warp_private_here()
    }
    /// `nanosleep.u32` (sm_70+; the hardware sleeps 0..2×, capped near 1 ms).
    #[inline(always)]
    fn sleep_ns(ns: u32) {
        // SAFETY: a scheduling hint only.
        unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nomem, nostack)) };
    }
    /// `%globaltimer` (ns; ticks every 32 ns on H100).
    #[inline(always)]
    fn fixed_frequency_clock() -> u64 {
        let r: u64;
        // SAFETY: reads a special register; volatile (not pure): it changes.
        unsafe { asm!("mov.u64 {r}, %globaltimer;", r = out(reg64) r, options(nomem, nostack)) };
        r
    }
    /// An acquire fence. The device fences are Rust's, as on AMD: `gpu-ld`
    /// gives them device scope (`.gpu`; system scope under
    /// `GPU_SYSTEM_SCOPE=1`), and for sm_90 it writes PTX 8.6, where this is
    /// `fence.acquire.gpu` (no `MEMBAR` of its own) and a release is
    /// `fence.release.gpu` (181 ns instead of `fence.acq_rel`'s 335 on an
    /// H100; `gpu_ld::SPLIT_FENCES_PTX_ISA`). At an older PTX ISA all three
    /// are `fence.acq_rel.gpu`.
    #[inline(always)]
    fn fence_device_acquire() {
        fence(Ordering::Acquire);
    }
    /// A release fence (see above).
    #[inline(always)]
    fn fence_device_release() {
        fence(Ordering::Release);
    }
    /// One `fence.acq_rel.gpu`.
    #[inline(always)]
    fn fence_device_acq_rel() {
        fence(Ordering::AcqRel);
    }
    /// `fence.acq_rel.sys`, written out: the ring's fence keeps system scope
    /// wherever it is inlined (`gpu-ld` gives Rust's fences device scope
    /// outside the ring's functions).
    #[inline(always)]
    fn fence_system_release() {
        // SAFETY: a fence; a compiler barrier too (no `nomem`).
        unsafe { asm!("fence.acq_rel.sys;", options(nostack)) };
    }
    /// `exit`.
    #[inline(always)]
    fn end_program() -> ! {
        // SAFETY: ends this thread; lanes waiting in `bar.warp.sync` for it
        // are released (exited threads count as arrived).
        unsafe { asm!("exit;", options(noreturn, nostack)) }
    }
    /// Nothing: a sleeping warp wakes by itself (`nanosleep` is bounded).
    #[inline(always)]
    fn wake(_index: u32) {}
    /// Frames live in global memory (shared stacks): switch the lane's
    /// stack pointer and limit to `stack` for the call.
    unsafe fn call_on_stack(entry: rt_abi::abi::Entry, data: *mut u8, stack: *mut u8, len: usize) {
        // SAFETY: the trait's contract.
        unsafe { crate::stack::call_on_stack(entry, data, stack, len) }
    }
}

impl NvHal {
    /// The calling warp's entry of `start::__gpu_warp_private`: its place in
    /// the block, `%tid.x / 32` (below `NVIDIA_MAX_BLOCK_WARPS`: a block has at
    /// most 1,024 threads, so the mask changes nothing).
    #[inline(always)]
    pub(crate) fn warp_private_here() -> &'static rt_common::slot::WarpPrivate {
        let tid: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {t}, %tid.x;", t = out(reg32) tid, options(nomem, nostack, pure)) };
        &__gpu_warp_private[(tid / Self::LANES) as usize % rt_abi::protocol::NVIDIA_MAX_BLOCK_WARPS]
    }
}

/// The thread table's address (`LaunchBlock::threads`), stored by every lane
/// at kernel start and read by `NvHal::thread_table`: the same value in every
/// lane, so the copy in each block's shared memory that `gpu-ld` makes of it
/// holds what this global would (gpu-ld/src/block_shared.rs).
#[unsafe(no_mangle)]
pub static __gpu_thread_table: AtomicU64 = AtomicU64::new(0);

/// Each warp's private state ([`WarpPrivate`]: its heap cache, std's
/// reserved thread-locals), indexed by the warp's place in its block and
/// read by `NvHal::warp_private`. `gpu-ld` moves it to shared memory, one
/// copy per block (gpu-ld/src/block_shared.rs), where no fence
/// empties it; each warp's leader zeroes its own entry at start
/// (`start::run_leader`) before anything reads it.
#[unsafe(no_mangle)]
pub static __gpu_warp_private: [WarpPrivate; NVIDIA_MAX_BLOCK_WARPS] =
    [const { WarpPrivate::new() }; NVIDIA_MAX_BLOCK_WARPS];

rt_abi::assert_symbol!(__gpu_thread_table, rt_abi::symbols::THREAD_TABLE);
rt_abi::assert_symbol!(__gpu_warp_private, rt_abi::symbols::WARP_PRIVATE);
