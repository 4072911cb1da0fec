//! Threads as warps: spawn, join, detach, the idle loop, names, sleep.
//!
//! Slot states and the join word are described in [`crate::slot`]. A spawned
//! closure runs exactly once, on the leader lane of its warp; the warp's
//! other lanes wait at the kernel entry's warp barrier (NVIDIA) or are
//! masked off (AMD) and issue nothing.

use rt_abi::abi::{ERR_NO_FREE_WARP, ERR_NO_STACK_MEMORY, ERR_STACK_TOO_BIG};
use crate::backoff::Backoff;
use crate::hal::{Hal, ticks_to_ns};
use crate::primitive::Ordering::{Acquire, Relaxed, Release};
use rt_abi::protocol::{
    THREAD_CLAIMED, THREAD_EXITED, THREAD_FINISHED, THREAD_FREE, THREAD_RUNNING, WAIT_JOIN,
    WAIT_NONE, WAIT_SLEEP,
};
use crate::runtime::{Runtime, leave_if_exiting};
use crate::slot::{FIN_DETACHED, FIN_DONE, NAME_BYTES, NO_JOINER, Slot};

use rt_abi::abi::Entry;

/// Alignment of a thread stack taken from the heap.
pub const STACK_ALIGN: usize = 16;

/// Longest sleep of a joining thread between polls. Shorter than other
/// waits' cap: a join waits on one thread, usually briefly, and a sleep
/// overshoots up to 2× (NVIDIA), which a short thread's join pays in full;
/// one joiner polling every ~256 ns is one L2 load per poll.
pub const JOIN_MAX_SLEEP_NS: u32 = 256;

/// Sleeps of at most [`crate::backoff::WARM_SLEEP_NS`] an idle warp takes
/// after running a thread, before its sleeps grow to the idle policy's.
pub const IDLE_WARM_SLEEPS: u32 = 64;

/// `__gpu_std_spawn`: claims an idle warp and hands it `entry(data)`.
/// Scans the table from the caller's hint; if every warp is busy, returns
/// `ERR_NO_FREE_WARP` (or ends the warp if the program is ending).
///
/// If the handle is detached, `on_detach(data)` runs once after the entry
/// returned ([`detach`]): std frees what the thread and its handle shared
/// there, so neither side counts references to it.
///
/// A `stack_size` above the launch's stack gets a stack from the heap when
/// the launch has shared stacks (frames in global memory), else
/// `ERR_STACK_TOO_BIG`.
///
/// # Safety
/// `entry(data)` must be sound to call once on another warp, and
/// `on_detach(data)` once after it returned, on any warp.
pub unsafe fn spawn<H: Hal>(rt: &Runtime, stack_size: usize, entry: Entry, data: *mut u8, on_detach: Option<Entry>) -> i64 {
    let me_index = rt.me::<H>();
    let me = rt.slot(me_index);
    let limit = rt.launch().stack_size;
    let mut stack = core::ptr::null_mut();
    if stack_size != 0 && limit != 0 && stack_size as u64 > limit {
        if rt.launch().stacks == 0 {
            return ERR_STACK_TOO_BIG;
        }
        stack = rt.heap.alloc::<H>(Some(me), stack_size, STACK_ALIGN);
        if stack.is_null() {
            return ERR_NO_STACK_MEMORY;
        }
    }
    let n = rt.num_threads();
    // SAFETY: the hint is accessed only by the slot's own warp (us).
    let hint = unsafe { &mut *H::warp_private(me).spawn_hint.get() };
    let start = if *hint == 0 { me_index + 1 } else { *hint };
    for i in 0..n {
        let w = start.wrapping_add(i) % n;
        let s = rt.slot(w);
        // The hinted warp is tried at once; others are read first so a scan
        // over busy slots does not write their lines.
        // Acquire on success: whoever freed the slot (joiner, detacher, the
        // warp itself) is done with it before we write it. An acquire RMW,
        // not a relaxed one and a fence: on NVIDIA the fence is a
        // `MEMBAR.GPU` of its own (~340 ns, bench-results/floors).
        if (i > 0 && s.state.load(Relaxed) != THREAD_FREE)
            || s.state
                .compare_exchange(THREAD_FREE, THREAD_CLAIMED, Acquire, Relaxed)
                .is_err()
        {
            continue;
        }
        s.entry.store(entry as usize, Relaxed);
        s.data.store(data, Relaxed);
        s.stack.store(stack, Relaxed);
        s.stack_len.store(if stack.is_null() { 0 } else { stack_size }, Relaxed);
        s.on_detach.store(on_detach.map_or(0, |f| f as usize), Relaxed);
        s.fin.store(0, Relaxed);
        if H::WAKES {
            s.joiner.store(NO_JOINER, Relaxed);
        }
        // Release: entry/data before RUNNING, which the idle warp acquires.
        H::fence_device_release();
        s.state.store(THREAD_RUNNING, Relaxed);
        H::wake(w);
        *hint = w.wrapping_add(1);
        return w as i64;
    }
    if !stack.is_null() {
        // SAFETY: allocated above with this layout, never handed out.
        unsafe { rt.heap.dealloc::<H>(Some(me), stack, stack_size, STACK_ALIGN) };
    }
    leave_if_exiting::<H>(me);
    ERR_NO_FREE_WARP
}

/// Frees a slot whose thread is done and whose handle is gone.
#[inline]
fn free_slot<H: Hal>(rt: &Runtime, w: u32) {
    // Acquire then release: the thread's last writes (TLS cleared)
    // happen-before the next spawner's claim, through us. Two one-sided
    // fences, not `acq_rel`: on NVIDIA at PTX 8.6 the acquire issues no
    // `MEMBAR` and the release is the cheaper `MEMBAR` (181 against 335 ns
    // on an H100, bench-results/floors); elsewhere they cost what one would.
    H::fence_device_acquire();
    H::fence_device_release();
    rt.slot(w).state.store(THREAD_FREE, Relaxed);
}

/// Whether `handle` names a thread slot other than main's.
#[inline]
fn valid_handle(rt: &Runtime, handle: i64) -> Option<u32> {
    (handle > 0 && handle < rt.num_threads() as i64).then_some(handle as u32)
}

/// `__gpu_std_join`: waits until the thread's entry returned, frees its warp.
pub fn join<H: Hal>(rt: &Runtime, handle: i64) {
    let Some(w) = valid_handle(rt, handle) else {
        return;
    };
    let me_index = rt.me::<H>();
    let me = rt.slot(me_index);
    let s = rt.slot(w);
    if H::WAKES {
        s.joiner.store(me_index, Relaxed);
    }
    let max_sleep = rt.wait_sleep_ns().min(JOIN_MAX_SLEEP_NS);
    rt.wait_until::<H>(me, WAIT_JOIN, max_sleep, || s.fin.load(Relaxed) & FIN_DONE != 0);
    free_slot::<H>(rt, w);
    // A just-freed warp is still polling fast: our best next spawn target.
    // SAFETY: the hint is accessed only by the slot's own warp (us).
    unsafe { *H::warp_private(me).spawn_hint.get() = w };
}

/// `__gpu_std_detach`: the warp frees itself when its entry returns, after
/// running the spawner's `on_detach`; if it has returned already, both
/// happen here.
pub fn detach<H: Hal>(rt: &Runtime, handle: i64) {
    let Some(w) = valid_handle(rt, handle) else {
        return;
    };
    let s = rt.slot(w);
    // RMWs on `fin` are totally ordered, so exactly one of us and the
    // finishing warp sees the other's bit; that one runs `on_detach` and
    // frees the slot. Release: our reads of what `on_detach` frees (std's
    // handle reads the thread's name there) happen before it runs there.
    if s.fin.fetch_or(FIN_DETACHED, Release) & FIN_DONE != 0 {
        // Read before the slot is free: a spawner may claim it at once.
        let (on_detach, data) = (s.on_detach.load(Relaxed), s.data.load(Relaxed));
        // Its fence acquires the thread's writes, which `on_detach` reads.
        free_slot::<H>(rt, w);
        // SAFETY: the spawner's contract: sound once after the entry
        // returned, which it has (FIN_DONE); only this side saw both bits.
        unsafe { run_on_detach(on_detach, data) };
    }
}

/// Calls an `on_detach` stored as an address (0: none).
///
/// # Safety
/// As `spawn`'s contract for `on_detach(data)`, called once.
#[inline]
unsafe fn run_on_detach(on_detach: usize, data: *mut u8) {
    if on_detach != 0 {
        // SAFETY: stored by `spawn` from an `Entry`; the caller's contract.
        unsafe { core::mem::transmute::<usize, Entry>(on_detach)(data) };
    }
}

/// `__gpu_std_is_finished`: whether the thread's entry has returned (its
/// thread-local destructors ran). Acquire: what the thread wrote is
/// visible once this says so.
pub fn is_finished(rt: &Runtime, handle: i64) -> bool {
    match valid_handle(rt, handle) {
        Some(w) => rt.slot(w).fin.load(Acquire) & FIN_DONE != 0,
        None => true,
    }
}

/// Runs the thread handed to slot `me` (state RUNNING), then ends it.
///
/// # Safety
/// The slot's state was observed RUNNING by an acquire load.
unsafe fn run_thread<H: Hal>(rt: &Runtime, index: u32, me: &Slot) {
    me.name_len.store(0, Relaxed);
    me.wait.store(WAIT_NONE, Relaxed);
    // SAFETY: the spawner stored a valid `Entry` before RUNNING (acquired).
    let entry: Entry = unsafe { core::mem::transmute::<usize, Entry>(me.entry.load(Relaxed)) };
    let data = me.data.load(Relaxed);
    let stack = me.stack.load(Relaxed);
    if stack.is_null() {
        // SAFETY: the spawner's contract: sound to call once, here.
        unsafe { entry(data) };
    } else {
        let len = me.stack_len.load(Relaxed);
        // SAFETY: the spawner's contract; the stack was allocated for this
        // thread alone (spawn) and is freed only below.
        unsafe { H::call_on_stack(entry, data, stack, len) };
        me.stack.store(core::ptr::null_mut(), Relaxed);
        // SAFETY: from spawn's `heap.alloc` with this layout; the entry has
        // returned, so nothing runs on it.
        unsafe { rt.heap.dealloc::<H>(Some(me), stack, len, STACK_ALIGN) };
    }
    crate::unwind::end_thread::<H>(rt);
    // Destructors std left (it runs them itself before returning, see
    // `__gpu_std_tls_run_dtors`): before DONE, since join waits for them.
    rt.tls.run_dtors::<H>(me);
    me.state.store(THREAD_FINISHED, Relaxed);
    // Release: the thread's writes (its result) before DONE, which the
    // joiner acquires; also orders FINISHED before a detacher's FREE.
    H::fence_device_release();
    let prev = me.fin.fetch_or(FIN_DONE, Relaxed);
    let detached = prev & FIN_DETACHED != 0;
    if detached {
        // Acquire: the detacher's release, so its reads of what
        // `on_detach` frees happen before it. The slot is still ours.
        H::fence_device_acquire();
        // Before the values are cleared: std drops an unjoined result here
        // with the thread's `current()` set again (its thread id is still
        // set), where upstream drops it on the thread before its
        // thread-locals go.
        // SAFETY: the spawner's contract; only this side saw both bits.
        unsafe { run_on_detach(me.on_detach.load(Relaxed), data) };
        // Destructors of whatever that code set.
        rt.tls.run_dtors::<H>(me);
    }
    // Every value, for the warp's next thread: after DONE, off the
    // joiner's path. The values are this warp's alone (no spawner writes
    // them), and its next thread starts only after this returns.
    rt.tls.clear_values::<H>(me);
    if detached {
        free_slot::<H>(rt, index);
    } else if H::WAKES {
        let j = me.joiner.load(Relaxed);
        if j != NO_JOINER {
            H::wake(j);
        }
    }
}

/// The idle loop of warp `index`: sleeps until a spawn hands it a thread,
/// runs it, and repeats until the program ends.
///
/// # Safety
/// `me` is the caller's own slot; `rt` is initialised before any spawn
/// reaches this warp (the spawn handoff publishes it).
pub unsafe fn idle_loop<H: Hal>(rt: &Runtime, index: u32, me: &Slot, idle_sleep_ns: u32) {
    // Until the first thread: the launch's idle policy as it is.
    let mut warm = 0;
    loop {
        let mut backoff = Backoff::warm(idle_sleep_ns, warm);
        loop {
            // Relaxed polls, then an acquire fence once RUNNING is seen: it
            // pairs with the spawner's release fence. (An acquire on every
            // poll would empty the SM's L1 for its other warps each time.)
            // A fence, not a second load with acquire: on NVIDIA at PTX 8.6
            // (sm_90) it is `fence.acquire.gpu`, no `MEMBAR`, where the load
            // is one more round trip to L2 before the thread starts; on AMD
            // both invalidate L1, and the fence loads nothing.
            if me.state.load(Relaxed) == THREAD_RUNNING {
                H::fence_device_acquire();
                break;
            }
            if backoff.is_sleeping() && me.exit.load(Relaxed) != 0 {
                me.state.store(THREAD_EXITED, Relaxed);
                return;
            }
            backoff.snooze::<H>();
        }
        // SAFETY: RUNNING observed by an acquire load.
        unsafe { run_thread::<H>(rt, index, me) };
        // The joiner's next spawn comes here first (its hint): poll at the
        // warm rate for a while (~64 sleeps of <= 256 ns, ~16 us) before the
        // sleeps grow to the idle policy's.
        warm = IDLE_WARM_SLEEPS;
    }
}

/// `__gpu_std_set_thread_name`: copies the name (truncated to whole UTF-8
/// characters) into the slot's public name field.
///
/// # Safety
/// `ptr` is valid for `len` bytes.
pub unsafe fn set_name<H: Hal>(rt: &Runtime, ptr: *const u8, len: usize) {
    let me = rt.my_slot::<H>();
    // SAFETY: the caller's contract.
    let bytes = unsafe { core::slice::from_raw_parts(ptr, len) };
    let mut n = len.min(NAME_BYTES);
    while n < len && n > 0 && bytes[n] & 0xC0 == 0x80 {
        n -= 1; // do not cut a character
    }
    // SAFETY: only this warp writes its name; the host only reads it.
    unsafe { (&mut *me.name.get())[..n].copy_from_slice(&bytes[..n]) };
    me.name_len.store(n as u32, Relaxed);
}

/// `__gpu_std_sleep_ns`: sleeps at least `ns` by the device clock, each
/// sleep at most half the remaining time (hardware sleeps overshoot).
pub fn sleep<H: Hal>(rt: &Runtime, ns: u64) {
    let me = rt.my_slot::<H>();
    let start = H::fixed_frequency_clock();
    me.wait.store(WAIT_SLEEP, Relaxed);
    loop {
        let elapsed = ticks_to_ns::<H>(H::fixed_frequency_clock().wrapping_sub(start));
        if elapsed >= ns {
            break;
        }
        leave_if_exiting::<H>(me);
        let half = ((ns - elapsed) / 2).min(1_000_000) as u32;
        H::sleep_ns(half);
    }
    me.wait.store(WAIT_NONE, Relaxed);
}

/// A loop of `yield_now` checks the exit flag only while the device clock is
/// in the first [`YIELD_EXIT_CHECK_WINDOW_NS`] of every
/// [`YIELD_EXIT_CHECK_PERIOD_NS`].
pub const YIELD_EXIT_CHECK_PERIOD_NS: u64 = 1 << 16;
/// See [`YIELD_EXIT_CHECK_PERIOD_NS`].
pub const YIELD_EXIT_CHECK_WINDOW_NS: u64 = 1 << 10;

/// `__gpu_std_yield`: the shortest sleep, letting other warps issue.
///
/// A loop of yields must end when the program does, but the exit flag is an
/// L2 round trip, as long as the rest of a yield, and so was a count of
/// yields kept in the slot (a load and a store each call: 158 ns a yield on
/// an H100, 108 ns with the clock deciding). The clock is a register read:
/// a fast loop checks the flag a few times in each 1 µs window, one window
/// per 65 µs (how late a yield loop may leave at the end); a loop slower
/// than the window lands in it on one call in 64 on average.
pub fn yield_now<H: Hal>(rt: &Runtime) {
    let now = ticks_to_ns::<H>(H::fixed_frequency_clock());
    if now % YIELD_EXIT_CHECK_PERIOD_NS < YIELD_EXIT_CHECK_WINDOW_NS {
        leave_if_exiting::<H>(rt.my_slot::<H>());
    }
    H::sleep_ns(0);
}
