//! Lane-parallel work inside a thread (`__gpu_std_lanes_run`, used by the
//! `gpu-lanes` crate's `for_each_lane`).
//!
//! A std thread runs on its warp's leader lane (lane 0). Where the HAL can
//! run the other lanes ([`Hal::PARALLEL_LANES`] > 1: NVIDIA), they do not
//! just wait at the kernel's final warp barrier: they run [`lane_loop`],
//! parked at `bar.warp.sync` (issuing nothing) until the leader hands them
//! a command through three words of the warp's [`Slot`]:
//!
//! ```text
//! leader (run)                          lanes 1.. (lane_loop)
//!   lane_fn, lane_data = f, data          sync_lane(full)  ◀── start
//!   lane_gen += 1                         gen == seen? → return (leader ended)
//!   sync_lane(full)  ── start ──▶         seen = gen; f(data, lane)
//!   f(data, 0)                            sync_lane(full)  ◀── completion
//!   sync_lane(full)  ── completion ──▶    (loop)
//! ```
//!
//! In a program that cannot call `for_each_lane` the other lanes do not
//! wait at all: `gpu-ld` defines `__gpu_lanes_wanted` as 0 when
//! `__gpu_std_lanes_run` did not survive its whole-program optimization,
//! and the NVIDIA kernel entry then lets them return (parked, they double
//! the time of every sleep of lane 0; `gpu-ld/src/lanes_wanted.rs`).
//!
//! When the leader's `warp_main` returns, its final `sync_lane` in the
//! kernel entry releases the lanes with an unchanged generation, so they
//! return; when the leader ends the warp (`exit`), exited threads count as
//! arrived at `bar.warp.sync`, so the same happens. The generation (not a
//! "run" flag) is what makes a stale command from an earlier run harmless.
//!
//! Memory ordering: `bar.warp.sync` orders memory among the threads taking
//! part in it (PTX ISA, "bar.warp.sync": it guarantees memory ordering among
//! participating threads), so the relaxed stores before the start barrier
//! are visible to the lanes' relaxed loads after it, and everything `f`
//! wrote on any lane is visible to the leader after the completion barrier.
//!
//! Where the lanes cannot wait while the leader runs ([`Hal::LOCKSTEP_LANES`]:
//! AMD, the CPU harness), [`run`] runs them all in one call instead,
//! [`Hal::run_lanes`] ([`run_lockstep`]): on AMD a wavefront's lanes share
//! one program counter and the leader's branch has masked the others off in
//! `EXEC`, so they cannot spin at a barrier; the whole-wave call (linked in
//! by `gpu-ld`, `gpu-ld/src/amd_lanes.rs`) saves `EXEC`, turns
//! every lane on, calls the lane entry on all of them at once with each
//! lane's id, and restores `EXEC`. The CPU harness calls the entry for each
//! lane in turn, with [`Hal::lane_id`] answering that lane. Everything
//! around the call (nesting refused, the leader-only check, the command in
//! the slot) is this module's, shared by both.
//!
//! ```text
//! leader (run_lockstep)                 every lane, leader included (lockstep_entry)
//!   lane_fn, lane_data = f, data
//!   Hal::run_lanes(lockstep_entry, slot) ──▶ f, data = slot.lane_fn, lane_data
//!                                           f(data, lane)
//!                                           release fence
//!   acquire fence  ◀── returns when every lane has returned
//!   lane_fn = 0
//! ```
//!
//! Where a code object cannot run the other lanes ([`Hal::lockstep_lanes`]
//! = 1: AMD code linked without `gpu-ld`) or the HAL runs none
//! ([`Hal::PARALLEL_LANES`] = 1 and no lockstep), `run` calls `f(data, 0)` on
//! the leader and the lane count is 1, which keeps the one contract: `f`
//! runs once for every lane index in `0..lane_count()`.

use core::fmt::Write;

use rt_abi::abi::EXIT_ABORT;
use crate::hal::Hal;
use crate::primitive::{AtomicU32, Ordering::Relaxed};
use crate::process;
use crate::ring;
use crate::runtime::{MAX_WAIT_SLEEP_NS, Runtime, leave_if_exiting};
use crate::slot::Slot;
use crate::start::Msg;

use rt_abi::abi::LaneFn;

/// Mask of every lane of an `H` warp.
#[inline(always)]
pub fn full_mask<H: Hal>() -> u64 {
    u64::MAX >> (64 - H::LANES)
}

/// `__gpu_std_lane_count`: how many lanes [`run`] runs `f` on.
#[inline]
pub fn lane_count<H: Hal>() -> u32 {
    if H::LOCKSTEP_LANES { H::lockstep_lanes() } else { H::PARALLEL_LANES }
}

/// Whether lanes other than the leader may run code of this thread (and so
/// must be kept out of per-thread runtime state).
#[inline(always)]
const fn lanes_may_run<H: Hal>() -> bool {
    H::PARALLEL_LANES > 1 || H::LOCKSTEP_LANES
}

/// `__gpu_std_lanes_run`: runs `f(data, lane)` for every lane
/// `0..lane_count()` of the caller's warp (concurrently where the HAL can),
/// returning when all have returned.
///
/// # Safety
/// Called on a thread's leader lane; `f(data, lane)` must be sound to call
/// concurrently on every lane (`data` reachable from all of them: heap or
/// static memory, not the caller's stack).
pub unsafe fn run<H: Hal>(rt: &Runtime, f: LaneFn, data: *const u8) {
    if H::LOCKSTEP_LANES {
        // SAFETY: the caller's contract.
        return unsafe { run_lockstep::<H>(rt, f, data) };
    }
    if H::PARALLEL_LANES <= 1 {
        // SAFETY: the caller's contract (lane 0 only).
        unsafe { f(data, 0) };
        return;
    }
    // A lane calling for_each_lane would hand a command to lanes that are
    // busy running the outer one (and never reach the start barrier); nested
    // on lane 0, the new command's barriers would pair with the outer call's
    // barriers on the other lanes (bar.warp.sync does not tell them apart).
    let me = post_command::<H>(rt, f, data);
    // Only the leader writes the generation: a plain increment.
    me.lane_gen
        .store(me.lane_gen.load(Relaxed).wrapping_add(1), Relaxed);
    // Start: the lanes wait here in `lane_loop`; bar.warp.sync orders the
    // stores above before their loads.
    H::sync_lane(full_mask::<H>());
    // SAFETY: the caller's contract.
    unsafe { f(data, 0) };
    // Completion: every lane's f has returned (and its writes are ordered
    // before what the leader does next).
    H::sync_lane(full_mask::<H>());
    // The lanes read lane_fn before the completion barrier: no race.
    me.lane_fn.store(0, Relaxed);
}

/// Stores the command `f(data, lane)` in the caller's slot for its lanes,
/// after refusing a call from a non-leader lane and a nested call (`lane_fn`
/// is non-zero exactly while a call runs). Returns the slot.
fn post_command<H: Hal>(rt: &Runtime, f: LaneFn, data: *const u8) -> &Slot {
    leader_only::<H>(rt, "gpu_lanes::for_each_lane");
    let me = rt.my_slot::<H>();
    if me.lane_fn.load(Relaxed) != 0 {
        nested::<H>(rt);
    }
    me.lane_fn.store(f as usize, Relaxed);
    me.lane_data.store(data as *mut u8, Relaxed);
    me
}

/// [`run`] where the lanes run in one call ([`Hal::LOCKSTEP_LANES`]).
///
/// # Safety
/// As [`run`].
unsafe fn run_lockstep<H: Hal>(rt: &Runtime, f: LaneFn, data: *const u8) {
    if H::lockstep_lanes() <= 1 {
        // SAFETY: the caller's contract (lane 0 only).
        unsafe { f(data, 0) };
        return;
    }
    // Every lane runs f: one of them calling for_each_lane stops here, and
    // so does a nested call on lane 0.
    let me = post_command::<H>(rt, f, data);
    // SAFETY: the entry reads the command just stored in our slot (global
    // memory, reachable from every lane) and calls f as the caller allowed.
    unsafe { H::run_lanes(lockstep_entry::<H>, me as *const Slot as *const u8) };
    // Pairs with each lane's release fence: what f wrote on any lane is
    // visible to the leader from here on.
    H::fence_device_acquire();
    me.lane_fn.store(0, Relaxed);
}

/// What every lane runs in [`run_lockstep`]: the command in the warp's
/// slot (`slot`), then a release fence for the leader's acquire.
///
/// # Safety
/// `slot` is the calling warp's slot, holding a command of [`run`]'s caller.
unsafe extern "C" fn lockstep_entry<H: Hal>(slot: *const u8, lane: u32) {
    // SAFETY: the caller's contract.
    let slot = unsafe { &*(slot as *const Slot) };
    let f = slot.lane_fn.load(Relaxed);
    let data = slot.lane_data.load(Relaxed);
    // SAFETY: the leader stored a `LaneFn` (as an address) and its data;
    // `run`'s caller made f(data, lane) sound on every lane.
    unsafe {
        let f: LaneFn = core::mem::transmute::<usize, LaneFn>(f);
        f(data, lane);
    }
    H::fence_device_release();
}

/// The warp's slot for a non-leader lane at kernel start, or `None` when the
/// warp's leader will not run a thread (the same checks as
/// [`warp_main`](crate::start::warp_main): null or mismatched launch block,
/// index past the thread table): then the lane must simply return.
///
/// # Safety
/// `launch` is null or the kernel's launch block, valid for the program.
pub unsafe fn lane_slot<'a, H: Hal>(launch: *const rt_abi::protocol::LaunchBlock) -> Option<&'a Slot> {
    if launch.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let lb = unsafe { &*launch };
    let index = H::thread_index(lb.block_warps.max(1));
    if !crate::start::launch_ok::<H>(lb) || index >= lb.num_threads {
        return None;
    }
    // SAFETY: checked above: a thread table with `index` in it.
    Some(unsafe { crate::runtime::slot_at(lb.threads, index) })
}

/// What a non-leader lane does for the warp's whole life: waits at the warp
/// barrier for the leader's commands and runs them; returns when the leader
/// has ended (a barrier passed with the generation unchanged). `seen` is the
/// generation every lane (leader included) read before the kernel entry's
/// first barrier, so no command can have been issued before it was read.
///
/// # Safety
/// Called on every non-leader lane of a warp whose leader runs
/// [`warp_main`](crate::start::warp_main) with the same slot, after that
/// common barrier; only when `H::PARALLEL_LANES > 1`.
pub unsafe fn lane_loop<H: Hal>(slot: &Slot, mut seen: u32) {
    let lane = H::lane_id();
    loop {
        // Start (or the leader's final barrier / exit).
        H::sync_lane(full_mask::<H>());
        let generation = slot.lane_gen.load(Relaxed);
        if generation == seen {
            return;
        }
        seen = generation;
        let f = slot.lane_fn.load(Relaxed);
        let data = slot.lane_data.load(Relaxed);
        // SAFETY: the leader stored a `LaneFn` (as an address) and its data
        // before the start barrier; `run`'s caller made f(data, lane) sound
        // on every lane.
        unsafe {
            let f: LaneFn = core::mem::transmute::<usize, LaneFn>(f);
            f(data, lane);
        }
        // Completion.
        H::sync_lane(full_mask::<H>());
    }
}

/// Aborts the program (exit code 134, a message on stderr) if a non-leader
/// lane calls a runtime function that uses per-thread state (heap cache,
/// TLS, ring assembly, the slot's wait word): run concurrently with lane 0
/// it would race. Free where lanes never run (`PARALLEL_LANES` = 1 and no
/// lockstep lanes).
#[inline(always)]
pub fn leader_only<H: Hal>(rt: &Runtime, what: &str) {
    if lanes_may_run::<H>() {
        let lane = H::lane_id();
        if lane != 0 {
            lane_misuse::<H>(rt, what, lane);
        }
    }
}

/// The message [`leader_only`] prints.
pub fn misuse_message(msg: &mut Msg, what: &str, lane: u32) {
    let _ = write!(
        msg,
        "gpu runtime: `{what}` called from lane {lane} inside gpu_lanes::for_each_lane: \
         only lane 0 (the thread itself) may call into std there\n"
    );
}

#[cold]
#[inline(never)]
#[rustc_nounwind] // ends the program; see the crate docs
fn lane_misuse<H: Hal>(rt: &Runtime, what: &str, lane: u32) -> ! {
    let mut msg = Msg::new();
    misuse_message(&mut msg, what, lane);
    abort_with::<H>(rt, &msg)
}

#[cold]
#[inline(never)]
#[rustc_nounwind] // ends the program; see the crate docs
fn nested<H: Hal>(rt: &Runtime) -> ! {
    let mut msg = Msg::new();
    let _ = msg.write_str(
        "gpu runtime: gpu_lanes::for_each_lane called inside for_each_lane: \
         nested lane-parallel calls are not supported\n",
    );
    abort_with::<H>(rt, &msg)
}

/// Writes `msg` to stderr and aborts the program (exit code 134).
///
/// Lockstep lanes ([`Hal::LOCKSTEP_LANES`], AMD) may arrive here several at
/// once (every lane of `f` calling `println!`): see [`on_one_lane`].
pub(crate) fn abort_with<H: Hal>(rt: &Runtime, msg: &Msg) -> ! {
    if H::LOCKSTEP_LANES {
        on_one_lane::<H, _>(|| report_and_abort::<H>(rt, msg))
    }
    report_and_abort::<H>(rt, msg)
}

/// [`abort_with`] for the first caller of the program to claim `claimed`;
/// every later one prints nothing and waits for the program to end (the
/// first one's abort raises every warp's exit flag). For reports that many
/// threads may hit at once, such as stack overflows, so the program prints
/// one, not hundreds.
pub(crate) fn abort_once_with<H: Hal>(rt: &Runtime, msg: &Msg, claimed: &core::sync::atomic::AtomicU32) -> ! {
    if H::LOCKSTEP_LANES {
        on_one_lane::<H, _>(|| report_once::<H>(rt, msg, claimed))
    }
    report_once::<H>(rt, msg, claimed)
}

/// [`abort_once_with`] on the one lane that reports.
#[inline(always)]
fn report_once<H: Hal>(rt: &Runtime, msg: &Msg, claimed: &core::sync::atomic::AtomicU32) -> ! {
    // Relaxed: the swap only elects the reporter; it publishes nothing.
    if claimed.swap(1, core::sync::atomic::Ordering::Relaxed) != 0 {
        let me = rt.my_slot::<H>();
        loop {
            leave_if_exiting::<H>(me);
            H::sleep_ns(MAX_WAIT_SLEEP_NS);
        }
    }
    report_and_abort::<H>(rt, msg)
}

/// Runs `end` (which ends the program, and with it the wave) on one of the
/// lanes that call this at once. Lockstep lanes ([`Hal::LOCKSTEP_LANES`],
/// AMD) may arrive several at a time (every lane of `f` calling
/// `process::exit`, or overflowing its stack) and cannot wait for one
/// another, and the ring and the exit path are for one caller at a time.
/// The lowest arriving lane runs `end` in a branch of its own, with only
/// itself enabled; it ends the wave, so the others never go on.
///
/// The shape matters on AMD, where LLVM lays divergent branches out one
/// after the other (seen in gfx90a disassembly): `if elected { end() }
/// park` ran the park loop first (a hang), and a waterfall loop
/// `loop { if elected { end(); break } }` had `end` moved out of the loop
/// to its exit, where every lane arrives together. So `end` is called
/// through an opaque pointer (the compiler cannot tell it does not return)
/// in the body of a loop whose exit is uniform (a ballot): an ordinary
/// if-then, run by the elected lane alone.
///
/// Callers test [`Hal::LOCKSTEP_LANES`] themselves and call `end`'s body
/// directly otherwise, so that NVIDIA's code stays as it was (no closure).
#[inline(always)]
pub(crate) fn on_one_lane<H: Hal, F: FnOnce() -> core::convert::Infallible>(end: F) -> ! {
    if H::LOCKSTEP_LANES {
        // Returns `()` on purpose (the loop below must not know `end` never
        // returns), hence the code after `end()` that cannot run.
        #[allow(unreachable_code)]
        fn call<F: FnOnce() -> core::convert::Infallible>(end: &mut Option<F>) {
            if let Some(end) = end.take() {
                match end() {}
            }
        }
        let mut end = Some(end);
        let call = crate::hal::out_of_line(call::<F> as fn(&mut Option<F>));
        let mut done = false;
        loop {
            // Uniform: the lanes that still have to run `end`.
            let pending = H::ballot(!done);
            if pending == 0 {
                break;
            }
            if H::lane_id() == pending.trailing_zeros() {
                call(&mut end);
                done = true;
            }
        }
        // `end` does not return.
        loop {
            H::sleep_ns(MAX_WAIT_SLEEP_NS);
        }
    }
    match end() {}
}

/// [`abort_with`] on the one lane that reports.
#[inline(always)]
fn report_and_abort<H: Hal>(rt: &Runtime, msg: &Msg) -> ! {
    let me = rt.me::<H>();
    if rt.ring().is_usable() {
        // Best effort: lane 0 may be writing through the same thread's
        // packets; a wait word of our own keeps the slot's untouched.
        let wait = AtomicU32::new(0);
        ring::write::<H, _>(rt.ring(), &wait, MAX_WAIT_SLEEP_NS, me, 2, msg.as_bytes());
    }
    process::abort::<H>(rt, EXIT_ABORT)
}
