//! The hardware abstraction the runtime is generic over.
//!
//! One small trait, zero-sized vendor types, static dispatch (as wgpu-hal's
//! `Api`). `rt-amdgpu` (`Wave64`, `Wave32`) and `rt-nvptx` (`NvHal`) list the
//! same functions in the same order; the CPU harness has `CpuHal<LANES>`.
//!
//! # Memory scope
//! Rust atomics carry no scope: on nvptx they are system scope (`.sys`), on
//! amdgcn they are system scope too (gfx90a: `buffer_wbl2` on release). The
//! runtime therefore uses `Relaxed` atomics for its handoffs and places the
//! ordering in the HAL's *scoped* fences: `fence_device_*` between warps of the
//! device (locks, spawn/join, heap), `fence_system_*` for the host-visible ring.
//! A fence pairs with a fence on the other side in the usual C++ way
//! (release fence; relaxed store → relaxed load; acquire fence).

/// A GPU vendor's (or the CPU harness's) primitives.
///
/// Every function is called by the leader lane of a warp (the lane running a
/// thread), except `lane_id`, `lane_mask`, `ballot`, `broadcast_value`,
/// `sync_lane` and `thread_index`, which the kernel entry and the lane loop
/// ([`crate::lanes`]) call on every lane.
///
/// # Safety
/// The runtime relies on these facts, which implementations must uphold:
/// `thread_index` is unique per warp of the launch and stable for the warp's
/// life; `warp_private` is the same place for the warp's whole life, zero
/// before the warp's first runtime call and used by no other warp; `fence_*`
/// order memory at least at the scope they name; `fixed_frequency_clock` is
/// monotonic, device-wide and ticks at `CLOCK_HZ`; `end_program` never returns and the warp runs no more runtime code.
pub unsafe trait Hal: 'static {
    /// Lanes per warp (wavefront), a compile-time property of the target.
    const LANES: u32;
    /// Lanes that run lane-parallel work ([`crate::lanes`]) concurrently:
    /// `LANES` where the non-leader lanes can be woken while the leader runs
    /// a thread (NVIDIA: they wait at `bar.warp.sync`), 1 where they cannot
    /// (AMD: masked off by EXEC under the leader's branch; the CPU harness).
    /// Where it is > 1, the kernel entry must run [`crate::lanes::lane_loop`]
    /// on the non-leader lanes and `sync_lane` must be a real warp barrier.
    const PARALLEL_LANES: u32 = 1;
    /// Whether lane-parallel work runs on the whole warp in one call,
    /// [`Hal::run_lanes`], instead of being handed to lanes that wait at a
    /// barrier ([`crate::lanes::lane_loop`]). True where the other lanes
    /// cannot wait while the leader runs: AMD (a wave's lanes share one
    /// program counter; `run_lanes` turns them on in `EXEC` for the call)
    /// and the CPU harness (which runs the lanes one after another). Such
    /// lanes run in lockstep and cannot wait for one another.
    const LOCKSTEP_LANES: bool = false;
    /// Ticks per second of [`Hal::fixed_frequency_clock`].
    const CLOCK_HZ: u64;
    /// Whether [`Hal::wake`] does anything (then finishing threads look up
    /// their joiner to wake it; GPUs skip that load).
    const WAKES: bool;

    /// Index of the calling lane in its warp, `0..LANES`.
    fn lane_id() -> u32;
    /// Bit mask of the lanes executing this call.
    fn lane_mask() -> u64;
    /// Bit `i` is set iff lane `i` executes this call with `pred` true.
    fn ballot(pred: bool) -> u64;
    /// `value` of the lowest active lane, returned on every active lane.
    fn broadcast_value(value: u32) -> u32;
    /// Waits until every lane of `mask` has reached a `sync_lane` (warp barrier).
    fn sync_lane(mask: u64);
    /// Index of the calling warp in the launch. `block_warps` is the launch's
    /// warps per block, for vendors that cannot read the block size.
    fn thread_index(block_warps: u32) -> u32;
    /// The thread table's address, `launch.threads` (what the caller's
    /// `Runtime::my_slot` indexes). NVIDIA reads a copy in shared memory
    /// instead, which no fence empties (`rt_nvptx::start`).
    #[inline(always)]
    fn thread_table(launch: &rt_abi::protocol::LaunchBlock) -> u64 {
        launch.threads
    }
    /// The calling warp's private state ([`WarpPrivate`]); `own` is the
    /// caller's own slot. In the slot by default; NVIDIA keeps it in the
    /// block's shared memory (`rt_nvptx::start`) and ignores `own`.
    ///
    /// [`WarpPrivate`]: crate::slot::WarpPrivate
    #[inline(always)]
    fn warp_private(own: &crate::slot::Slot) -> &crate::slot::WarpPrivate {
        &own.private
    }
    /// The calling warp's private state found without its slot in hand, for
    /// paths that must stay one load ([`crate::unwind`]'s word, read after
    /// every call that may unwind): through [`Runtime::my_slot`] by default;
    /// NVIDIA finds it by `%tid.x` alone.
    ///
    /// [`Runtime::my_slot`]: crate::Runtime::my_slot
    #[inline(always)]
    fn my_warp_private(rt: &crate::Runtime) -> &crate::slot::WarpPrivate
    where
        Self: Sized,
    {
        Self::warp_private(rt.my_slot::<Self>())
    }
    /// Where the calling warp's exception in flight is ([`crate::unwind`]),
    /// read after every call that may unwind, from the kernel's start on:
    /// also before warp 0 has initialised the runtime, and in warps beyond
    /// the thread table. [`WarpPrivate::exception`] by default (NVIDIA's is
    /// in shared memory, reset first thing); AMD keeps it in the lane's
    /// [`LaneStack`], which the kernel entry publishes before any call,
    /// since its default would find the slot through the runtime's copy of
    /// the launch block, written only by warp 0's init.
    ///
    /// [`WarpPrivate::exception`]: crate::slot::WarpPrivate::exception
    /// [`LaneStack`]: crate::stack::LaneStack
    #[inline(always)]
    fn unwind_word(rt: &crate::Runtime) -> *mut *mut u8
    where
        Self: Sized,
    {
        Self::my_warp_private(rt).exception.get()
    }
    /// Lets the warp sleep for about `ns` nanoseconds without issuing
    /// instructions; may end early or late (a hint, like `nanosleep`).
    fn sleep_ns(ns: u32);
    /// The calling lane's position on the driver's call stack (return
    /// addresses and saved registers; it grows down), as a generic address,
    /// or 0 where the runtime cannot read it (AMD, whose scratch stack grows
    /// up and whose depth checks compare it themselves; the CPU harness).
    #[inline(always)]
    fn call_stack_pointer() -> u64 {
        0
    }
    /// Whether the driver's call stack grows up (AMD scratch: from offset 0
    /// of the lane's private segment), so that the depth checks compare
    /// against a ceiling rather than a floor.
    const CALL_STACK_GROWS_UP: bool = false;
    /// A device-wide constant-rate clock ticking at [`Hal::CLOCK_HZ`].
    fn fixed_frequency_clock() -> u64;
    /// Acquire fence at device scope: other warps' released writes are visible.
    fn fence_device_acquire();
    /// Release fence at device scope: prior writes are visible to other warps
    /// that acquire after reading a later store.
    fn fence_device_release();
    /// Both fences at once, where the hardware has one instruction for it
    /// (NVIDIA's acquire and release fences are the same `fence.acq_rel`).
    #[inline(always)]
    fn fence_device_acq_rel() {
        Self::fence_device_acquire();
        Self::fence_device_release();
    }
    /// Release fence at system scope (publish to the host).
    fn fence_system_release();
    /// Ends the calling warp; the other lanes of the warp are released.
    fn end_program() -> !;
    /// Runs `entry(data)` with its stack frames on `stack` (`len` bytes, 16-byte
    /// aligned) instead of the warp's own stack. Called only for launches
    /// with shared stacks (`LaunchBlock::stacks` non-zero), whose code keeps
    /// its frames in global memory; elsewhere stacks are the platform's own
    /// and this just calls `entry(data)`.
    ///
    /// # Safety
    /// `entry(data)` is sound to call here; `stack` is valid for `len` bytes
    /// and used by nothing else until this returns.
    unsafe fn call_on_stack(entry: rt_abi::abi::Entry, data: *mut u8, stack: *mut u8, len: usize) {
        let _ = (stack, len);
        // SAFETY: the caller's contract.
        unsafe { entry(data) }
    }
    /// Where [`Hal::LOCKSTEP_LANES`]: the lanes [`Hal::run_lanes`] runs its
    /// function on, `0..lockstep_lanes()` (1 where this code object cannot
    /// run the other lanes: AMD code not linked by `gpu-ld`).
    #[inline(always)]
    fn lockstep_lanes() -> u32 {
        1
    }
    /// Where [`Hal::LOCKSTEP_LANES`]: calls `f(data, lane)` on every lane
    /// `0..lockstep_lanes()` of the calling warp, each lane with its own
    /// stack and its own [`Hal::lane_id`], and returns when all have
    /// returned. Called on the leader lane, with only it active.
    ///
    /// # Safety
    /// `f(data, lane)` is sound to call on every lane (`data` in memory every
    /// lane reaches: heap or static, not the caller's stack).
    #[inline(always)]
    unsafe fn run_lanes(f: rt_abi::abi::LaneFn, data: *const u8) {
        // SAFETY: the caller's contract.
        unsafe { f(data, 0) }
    }
    /// Hint that warp `index` may have work: GPUs do nothing (a sleeping warp
    /// wakes by itself within its sleep); the CPU harness unparks the thread.
    fn wake(index: u32);
}

/// `f`, hidden from the optimizer on amdgpu, so a call through it is never
/// inlined (elsewhere `f` itself). rustc drops `#[inline(never)]` on amdgpu,
/// and a few boundaries must hold: the host-call ring's accesses stay in the
/// ring's own functions (the GPU linker keeps system scope there only), and
/// the kernel's own frame holds nothing but the stack pointer pair (the
/// linker moves every other frame). Pass a function *pointer* (`fn` type),
/// not a function item, whose type would name the callee.
#[inline(always)]
pub fn out_of_line<F: Copy>(f: F) -> F {
    #[cfg(target_arch = "amdgpu")]
    return core::hint::black_box(f);
    #[cfg(not(target_arch = "amdgpu"))]
    f
}

/// Nanoseconds for `ticks` of `H`'s clock.
#[inline]
pub fn ticks_to_ns<H: Hal>(ticks: u64) -> u64 {
    const NS: u64 = 1_000_000_000;
    if NS % H::CLOCK_HZ == 0 {
        ticks.wrapping_mul(NS / H::CLOCK_HZ)
    } else {
        ((ticks as u128 * NS as u128) / H::CLOCK_HZ as u128) as u64
    }
}
