//! The runtime's global state and the per-warp wait helper.
//!
//! A GPU program has one [`Runtime`] in a `static` (defined by the vendor
//! crate's `define_gpu_std_abi!` call); the CPU harness has one per machine.
//! Warp 0 initialises it ([`Runtime::init`]) before `main` runs. Other warps
//! touch only their own thread-table slot until a `spawn` hands them a
//! thread, and that handoff (release/acquire) makes the initialised state
//! visible to them. Everything that must be valid *before* `init` (the exit
//! flags, slot states) lives in the zeroed thread table instead.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32 as CoreAtomicU32, AtomicU64 as CoreAtomicU64};

use crate::backoff::Backoff;
use crate::hal::Hal;
use crate::heap::Heap;
use crate::primitive::{Ordering::Relaxed, maybe_const_fn};
use rt_abi::protocol::{LaunchBlock, StrRef, THREAD_EXITED, WAIT_NONE};
use crate::ring::RawRing;
use crate::slot::{SLOT_STRIDE, Slot};
use crate::tls::TlsKeys;

use rt_abi::protocol::DEFAULT_IDLE_SLEEP_NS;
/// Cap of the sleeps of blocked threads (join, futex, ring): a waiter whose
/// sleep is this long wakes at most this late after its condition holds.
pub const MAX_WAIT_SLEEP_NS: u32 = 1000;

/// Set once by warp 0 before `main`; read-only afterwards.
struct Config {
    launch: LaunchBlock,
    start_ticks: u64,
    idle_sleep_ns: u32,
    wait_sleep_ns: u32,
    ring: RawRing,
}

/// All global state of one running program.
pub struct Runtime {
    config: UnsafeCell<Config>,
    /// Calls of `random_u64` so far.
    pub(crate) random_calls: CoreAtomicU64,
    /// Set by the first stack overflow to report ([`crate::stack::overflow`]):
    /// the others stop without printing.
    pub(crate) overflow_reported: CoreAtomicU32,
    pub(crate) heap: Heap,
    pub(crate) tls: TlsKeys,
}

// SAFETY: `config` is written only by `init`, whose contract is that no other
// warp reads the runtime until a release/acquire handoff after it; all other
// fields are atomics.
unsafe impl Sync for Runtime {}

impl Runtime {
    maybe_const_fn! {
        /// An uninitialised runtime (for a `static`).
        pub fn new() -> Runtime {
            Runtime {
                config: UnsafeCell::new(Config {
                    launch: LaunchBlock {
                        magic: 0, version: 0, num_threads: 0, lanes: 0, ring: 0,
                        heap_base: 0, heap_size: 0, threads: 0, stack_size: 0,
                        argc: 0, argv: 0, envc: 0, envp: 0, epoch_unix_ns: 0,
                        idle_sleep_ns: 0, random_seed: 0, flags: 0, block_warps: 0,
                        stack_lanes: 0, stacks: 0, call_stack_size: 0, ring_tickets: 0, ring_room: 0,
                        exe: StrRef { ptr: 0, len: 0 },
                    },
                    start_ticks: 0,
                    idle_sleep_ns: DEFAULT_IDLE_SLEEP_NS,
                    wait_sleep_ns: MAX_WAIT_SLEEP_NS,
                    ring: RawRing::unusable(),
                }),
                random_calls: CoreAtomicU64::new(0),
                overflow_reported: CoreAtomicU32::new(0),
                heap: Heap::new(),
                tls: TlsKeys::new(),
            }
        }
    }

    /// Copies the launch block and resets all state for a new program.
    ///
    /// # Safety
    /// Called once, by warp 0, before `main` and before any other warp can
    /// read this runtime (other warps read it only after a spawn handoff).
    /// `lb` is a validated launch block whose tables are valid.
    pub unsafe fn init<H: Hal>(&self, lb: &LaunchBlock) {
        let idle = idle_sleep_of(lb);
        // SAFETY: the caller guarantees exclusive access (see above).
        unsafe {
            *self.config.get() = Config {
                launch: *lb,
                start_ticks: H::fixed_frequency_clock(),
                idle_sleep_ns: idle,
                wait_sleep_ns: idle.min(MAX_WAIT_SLEEP_NS),
                // `lb` is the launch's own block (device memory), whose
                // `ring_tickets` every warp shares; `launch` above is a copy.
                ring: RawRing::new(lb.ring, &raw const lb.ring_tickets, lb.ring_room),
            };
        }
        self.random_calls.store(0, Relaxed);
        self.overflow_reported.store(0, Relaxed);
        // SAFETY: as above; the heap range comes from the validated block.
        unsafe { self.heap.init(lb.heap_base, lb.heap_size) };
        self.tls.init();
    }

    #[inline]
    fn config(&self) -> &Config {
        // SAFETY: written only by `init`, which happens-before every read.
        unsafe { &*self.config.get() }
    }

    /// The launch block of this program.
    #[inline]
    pub fn launch(&self) -> &LaunchBlock {
        &self.config().launch
    }

    /// Number of warps (threads) in the thread table.
    #[inline]
    pub fn num_threads(&self) -> u32 {
        self.launch().num_threads
    }

    /// Clock value when warp 0 started.
    #[inline]
    pub fn start_ticks(&self) -> u64 {
        self.config().start_ticks
    }

    /// Longest sleep of an idle warp.
    #[inline]
    pub fn idle_sleep_ns(&self) -> u32 {
        self.config().idle_sleep_ns
    }

    /// Longest sleep of a blocked thread.
    #[inline]
    pub fn wait_sleep_ns(&self) -> u32 {
        self.config().wait_sleep_ns
    }

    /// The device heap.
    #[inline]
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    /// The host ring.
    #[inline]
    pub fn ring(&self) -> &RawRing {
        &self.config().ring
    }

    /// Every slot of the thread table, in index order.
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        (0..self.num_threads()).map(move |w| self.slot(w))
    }

    /// Slot `index` of the thread table.
    #[inline]
    pub fn slot(&self, index: u32) -> &Slot {
        debug_assert!(index < self.num_threads());
        // SAFETY: `index` is in the table (callers check handles), which
        // lives for the whole program.
        unsafe { slot_at(self.launch().threads, index) }
    }

    /// Warp index of the caller.
    #[inline]
    pub fn me<H: Hal>(&self) -> u32 {
        H::thread_index(self.launch().block_warps)
    }

    /// The caller's slot.
    #[inline]
    pub fn my_slot<H: Hal>(&self) -> &Slot {
        let index = self.me::<H>();
        debug_assert!(index < self.num_threads());
        // SAFETY: a warp's own index is in the table, whose address the HAL
        // gives (the launch's, as `slot` reads it).
        unsafe { slot_at(H::thread_table(self.launch()), index) }
    }

    /// Polls `done` with backoff (sleeps up to `max_sleep_ns`) until it
    /// returns true, showing `reason` in the slot meanwhile. Ends the warp if
    /// the program ends first.
    #[inline]
    pub fn wait_until<H: Hal>(&self, me: &Slot, reason: u32, max_sleep_ns: u32, mut done: impl FnMut() -> bool) {
        if done() {
            return;
        }
        me.wait.store(reason, Relaxed);
        let mut backoff = Backoff::new(max_sleep_ns);
        while !done() {
            // The exit flag is another memory round trip: read it only once
            // the handoff is slow enough that we sleep anyway.
            if backoff.is_sleeping() {
                leave_if_exiting::<H>(me);
            }
            backoff.snooze::<H>();
        }
        me.wait.store(WAIT_NONE, Relaxed);
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

/// The launch's idle policy: longest sleep of an idle warp.
#[inline]
pub fn idle_sleep_of(lb: &LaunchBlock) -> u32 {
    match lb.idle_sleep_ns {
        0 => DEFAULT_IDLE_SLEEP_NS,
        ns => ns.min(u32::MAX as u64) as u32,
    }
}

/// Slot `index` of the thread table at address `table`.
///
/// # Safety
/// `table` is the launch's thread table and `index < num_threads`.
#[inline]
pub unsafe fn slot_at<'a>(table: u64, index: u32) -> &'a Slot {
    // SAFETY: the caller's contract; slots are SLOT_STRIDE apart and aligned.
    unsafe { &*((table as usize + index as usize * SLOT_STRIDE) as *const Slot) }
}

/// Ends the calling warp if the program is ending (its slot's exit flag).
#[inline]
pub fn leave_if_exiting<H: Hal>(me: &Slot) {
    // Relaxed: the flag only asks the warp to stop; nothing is read after it.
    if me.exit.load(Relaxed) != 0 {
        me.state.store(THREAD_EXITED, Relaxed);
        H::end_program();
    }
}
