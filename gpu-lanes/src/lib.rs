//! Explicit lane-parallel work inside a GPU `std::thread`.
//!
//! Each `std::thread` of a GPU program is one warp (NVIDIA: 32 lanes) or
//! wavefront (AMD), and the thread's code runs on one lane of it (lane 0).
//! [`for_each_lane`] lends the thread the rest of its warp for one call:
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
//!
//! let data: Arc<Vec<u32>> = Arc::new((0..1000).collect());
//! let n = gpu_lanes::lanes();
//! let partial: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
//! let (d, p) = (data.clone(), partial.clone());
//! gpu_lanes::for_each_lane(move |lane| {
//!     // lane l reads l, l + n, l + 2n, ...: neighbouring lanes read
//!     // neighbouring words (coalesced loads on a GPU).
//!     let s: u64 = d.iter().skip(lane).step_by(n).map(|&x| x as u64).sum();
//!     p[lane].store(s, Relaxed);
//! });
//! let total: u64 = partial.iter().map(|x| x.load(Relaxed)).sum();
//! assert_eq!(total, 999 * 1000 / 2);
//! ```
//!
//! # What runs where
//! | target | [`lanes()`] | how `f` runs |
//! |---|---|---|
//! | NVIDIA (`target_os = "cuda"`) | 32 | concurrently, one call per lane of the warp |
//! | AMD (`target_os = "amdhsa"`), built by `gpurun build` / the `-std` target | 64 (gfx9xx), 32 (gfx11xx) | in lockstep, one call per lane of the wavefront (see below) |
//! | AMD, rustc's built-in `amdgcn-amd-amdhsa` target, or another gfx | 1 | `f(0)` on lane 0 |
//! | host | 1 | `f(0)` on the calling thread |
//!
//! The one contract everywhere: `f` is called once for every lane index in
//! `0..lanes()`, and `for_each_lane` returns when all calls have returned
//! (everything they wrote is then visible to the caller). Write code that is
//! correct for any `lanes()`; it is fast where `lanes()` is 32.
//!
//! On AMD the other lanes of a wavefront share the leader's program counter
//! and are masked off (`EXEC`) by the branch that runs the thread, so they
//! cannot wait for work as NVIDIA's lanes do. `for_each_lane` therefore
//! runs `f` through a whole-wave call that the GPU linker (`gpu-ld`) links
//! into the program: it saves `EXEC`, turns every lane on, calls `f` on all
//! of them at once (each lane with its own lane id and its own 8 KiB
//! stack), and restores `EXEC`. The lanes run in lockstep: a lane of `f`
//! must never wait for another lane of the same call (a spin lock shared
//! by the lanes would hang the wave). Code linked without `gpu-ld` (rustc's
//! built-in `amdgcn-amd-amdhsa` target) has no such call and runs `f(0)`
//! alone; `lanes()` then says 1. No AMD GPU has run this yet: it is shown
//! by the code objects' disassembly and by the CPU harness, which runs the
//! same lane logic with 64 and 32 lanes.
//!
//! # Why `'static` and a heap copy of the closure
//! GPU stacks are per-lane private memory (NVIDIA `.local`, AMD scratch): an
//! address on lane 0's stack, read by lane 5, reads lane 5's own stack. A
//! closure that borrows the calling thread's locals would therefore read
//! garbage on the other lanes; `F: 'static` rules that out in the type
//! system. What a `'static` closure captures by value (an `Arc`, a `Box`, a
//! `&'static`, plain numbers) is copied with the closure into a heap `Box`,
//! which every lane can read, and pointers in it lead to heap or static
//! memory, which every lane can read too.
//!
//! # What the closure may do
//! Inside `f`, use arithmetic, memory reachable from the closure, and
//! atomics. Allocation (`Box`, `Vec` growth, `format!`), printing, blocking
//! locks (`Mutex::lock` may sleep in a futex), `thread_local!`, sleeping,
//! spawning and panics use per-thread runtime state and are for lane 0
//! only: on a lane other than 0 the runtime stops the program (exit code
//! 134) with a message naming the call, instead of racing with lane 0.
//! `f` must not call `for_each_lane` itself.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;

use alloc::boxed::Box;

#[cfg(any(target_os = "cuda", target_os = "amdhsa"))]
mod sys {
    /// A lane function: `f(data, lane)`.
    pub type LaneFn = unsafe extern "C" fn(*const u8, u32);
    // Defined by the GPU runtime (rt-common's `define_gpu_std_abi!`, see
    // rt-common/src/abi.rs), which every GPU program links with std.
    unsafe extern "C" {
        pub fn __gpu_std_lanes_run(f: LaneFn, data: *const u8);
        pub fn __gpu_std_lane_count() -> u32;
        pub fn __gpu_rt_host_call_nop();
    }
}

/// Lanes that [`for_each_lane`] runs its closure on: 32 on NVIDIA, the wave
/// size on AMD (64 on gfx9xx, 32 on gfx11xx; 1 without `gpu-ld`), 1 on the
/// host.
#[inline]
pub fn lanes() -> usize {
    #[cfg(any(target_os = "cuda", target_os = "amdhsa"))]
    {
        // SAFETY: no preconditions.
        unsafe { sys::__gpu_std_lane_count() as usize }
    }
    #[cfg(not(any(target_os = "cuda", target_os = "amdhsa")))]
    {
        1
    }
}

/// Runs `f(lane)` once for every lane `0..lanes()` of the calling thread's
/// warp, concurrently on NVIDIA and in lockstep on AMD, and returns when
/// every call has returned.
///
/// `f` is moved to the heap so that every lane can reach it; it must be
/// `'static` because a lane cannot read another lane's stack (see the
/// [crate docs](crate)). Inside `f` only lane 0 may allocate, print, block,
/// use thread-locals or panic; other lanes doing so stop the program.
pub fn for_each_lane<F: Fn(usize) + Sync + Send + 'static>(f: F) {
    let f = Box::new(f);
    #[cfg(any(target_os = "cuda", target_os = "amdhsa"))]
    {
        /// Calls the boxed closure for `lane`.
        ///
        /// # Safety
        /// `data` is a live `*const F` (the `Box` below, alive until
        /// `__gpu_std_lanes_run` returned).
        unsafe extern "C" fn trampoline<F: Fn(usize) + Sync>(data: *const u8, lane: u32) {
            // SAFETY: the contract above; `F: Sync`, so shared use from
            // every lane at once is sound.
            let f = unsafe { &*(data as *const F) };
            f(lane as usize);
        }
        let data = &*f as *const F as *const u8;
        // SAFETY: called on the thread (its leader lane); the closure lives
        // on the heap, reachable from every lane, until after the call
        // returns, and is only shared (`Fn + Sync`).
        unsafe { sys::__gpu_std_lanes_run(trampoline::<F>, data) };
    }
    #[cfg(not(any(target_os = "cuda", target_os = "amdhsa")))]
    f(0);
    drop(f);
}

/// Host calls, for benchmarks.
pub mod host {
    /// Whether [`host_call_nop`] makes a real host round trip (on a GPU
    /// target; on the host it does nothing).
    pub const HOST_CALL_IS_ROUND_TRIP: bool = cfg!(any(target_os = "cuda", target_os = "amdhsa"));

    /// One no-op host call: the runtime sends `OP_NOP` through the host ring
    /// and waits for the launcher's reply (a GPU → host → GPU round trip).
    /// On the host there is nothing to call: it returns at once. Lane 0 only
    /// (the thread itself), like every runtime call.
    #[inline]
    pub fn host_call_nop() {
        #[cfg(any(target_os = "cuda", target_os = "amdhsa"))]
        // SAFETY: no preconditions (the runtime does nothing without a ring).
        unsafe {
            super::sys::__gpu_rt_host_call_nop()
        };
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use alloc::sync::Arc;
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    #[test]
    fn runs_once_per_lane() {
        let n = lanes();
        assert_eq!(n, 1);
        let calls: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
        let c = calls.clone();
        for_each_lane(move |lane| {
            c[lane].fetch_add(1, Relaxed);
        });
        assert!(calls.iter().all(|c| c.load(Relaxed) == 1));
    }

    #[test]
    fn closure_is_dropped_after_the_call() {
        let token = Arc::new(());
        let t = token.clone();
        for_each_lane(move |_| {
            let _ = &t;
        });
        assert_eq!(Arc::strong_count(&token), 1);
    }

    #[test]
    fn host_call_is_a_no_op_on_the_host() {
        assert!(!host::HOST_CALL_IS_ROUND_TRIP);
        host::host_call_nop();
    }
}
