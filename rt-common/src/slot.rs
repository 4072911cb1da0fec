//! One thread-table slot: the public header the host reads, then the
//! runtime's private per-warp state.
//!
//! The launcher allocates `num_threads` × [`THREAD_SLOT_BYTES`] of *zeroed*
//! memory, so every field's zero value is its start value (a zeroed table is
//! a valid table, also when a module is launched twice).
//!
//! # Slot states (`state`, public)
//! ```text
//! FREE ──spawn CAS──▶ CLAIMED ──spawner stores entry, data──▶ RUNNING
//! RUNNING ──entry returned──▶ FINISHED ──join──▶ FREE
//!                                      └─detach (before or after)─▶ FREE
//! any ──program end seen by the warp──▶ EXITED
//! ```
//! `state` is what spawners CAS on and what the warp polls when idle.
//!
//! # Join word (`fin`, private)
//! | bits | meaning |
//! |---|---|
//! | [`FIN_DONE`] | the entry returned, TLS destructors ran (set by the warp) |
//! | [`FIN_DETACHED`] | the handle was dropped (set by `detach`) |
//!
//! Both sides `fetch_or` their bit; the one that sees the other's bit frees
//! the slot (for a joined thread, the joiner) and, for a detached thread,
//! runs the spawner's `on_detach` first. RMWs on one word are totally
//! ordered, so exactly one side does.

use core::cell::UnsafeCell;
use core::sync::atomic::AtomicPtr as CoreAtomicPtr;

use rt_abi::abi::{TLS_KEYS, TLS_RESERVED_KEYS};
use crate::primitive::{AtomicPtr, AtomicU32, AtomicUsize, maybe_const_fn};
#[cfg(not(loom))]
use rt_abi::protocol::{THREAD_SLOT_BYTES, ThreadSlotPublic};

/// `fin`: the thread's entry returned.
pub const FIN_DONE: u32 = 1;
/// `fin`: the thread was detached.
pub const FIN_DETACHED: u32 = 2;
/// `joiner`: nobody waits in `join`.
pub const NO_JOINER: u32 = u32::MAX;
/// Bytes of the public name field.
pub const NAME_BYTES: usize = 48;
/// Heap size classes cached per warp (16 B ..= 1 KiB).
pub const CACHED_CLASSES: usize = 7;

/// A warp's cache of one heap size class (see `heap.rs`): block units, 0 =
/// none. Owner-only.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct ClassCache {
    /// One block kept apart (no link to follow).
    pub hot: u32,
    /// Blocks this warp freed: a list from `own_head` to `own_tail`.
    pub own_head: u32,
    pub own_tail: u32,
    pub own_count: u32,
    /// A shared list this warp took whole.
    pub adopted: u32,
}

/// A warp's private state: read and written only by the warp itself (its
/// leader lane), kept across the warp's threads, zero at the launch.
///
/// Where it lives is the vendor's choice ([`Hal::warp_private`]): in the
/// warp's slot by default, in the block's shared memory on NVIDIA, where no
/// fence empties it. In global memory every first access after an acquire
/// (a spawn's start, a join, a lock) is a round trip to the L2 cache; a
/// spawn+join makes a dozen of them for the heap cache and std's keys alone.
///
/// [`Hal::warp_private`]: crate::hal::Hal::warp_private
#[repr(C)]
pub struct WarpPrivate {
    /// The warp's heap cache, one per small class.
    pub heap_cache: UnsafeCell<[ClassCache; CACHED_CLASSES]>,
    /// Where this thread's next `spawn` starts looking: the warp it last
    /// joined (still polling fast, so it wakes soonest), or one past the
    /// warp it last claimed; 0 = one past itself.
    pub spawn_hint: UnsafeCell<u32>,
    /// Ticket + 1 of the last ring packet this warp's `write`s sent (0:
    /// none yet), for `flush` to wait on. A later thread's flush finds an
    /// old ticket long taken.
    pub last_write: UnsafeCell<u64>,
    /// Bit `i` set: key `i + 1` may have a non-null value (set by the owner
    /// when it stores a non-null value), so thread exit visits only those
    /// keys.
    pub tls_mask: UnsafeCell<u64>,
    /// Keys that `run_dtors` found without a destructor, so later calls
    /// skip them, in this thread (std's call, then the runtime's) and in the
    /// warp's later threads (a used key's destructor word never changes, see
    /// `TlsKeys::destroy`). A thread that set only such keys ends without a
    /// fence or a load of the key table.
    pub tls_no_dtor: UnsafeCell<u64>,
    /// The values of std's reserved keys (`current()` and the thread id),
    /// read on every `thread::current()`: no other warp touches them (a
    /// reserved key is never destroyed).
    pub std_tls: [UnsafeCell<*mut u8>; TLS_RESERVED_KEYS],
    /// The exception in flight (null: none), `gpu-ld`'s unwinding word
    /// ([`crate::unwind`]), where the HAL keeps it here (not AMD:
    /// [`Hal::unwind_word`]). Null whenever a thread starts or ends.
    ///
    /// [`Hal::unwind_word`]: crate::hal::Hal::unwind_word
    pub exception: UnsafeCell<*mut u8>,
}

// SAFETY: each `WarpPrivate` is read and written by one warp only (see
// `Hal::warp_private`); sharing the place it lives in is what needs `Sync`.
unsafe impl Sync for WarpPrivate {}

impl WarpPrivate {
    /// The launch's value: all zero.
    pub const fn new() -> WarpPrivate {
        WarpPrivate {
            heap_cache: UnsafeCell::new([ClassCache { hot: 0, own_head: 0, own_tail: 0, own_count: 0, adopted: 0 }; CACHED_CLASSES]),
            spawn_hint: UnsafeCell::new(0),
            last_write: UnsafeCell::new(0),
            tls_mask: UnsafeCell::new(0),
            tls_no_dtor: UnsafeCell::new(0),
            std_tls: [const { UnsafeCell::new(core::ptr::null_mut()) }; TLS_RESERVED_KEYS],
            exception: UnsafeCell::new(core::ptr::null_mut()),
        }
    }

    /// Sets every field to its launch value, zero (as [`WarpPrivate::new`]),
    /// for a vendor whose place for it starts undefined (NVIDIA's shared
    /// memory). Field by field: the struct is not one cell, so it cannot be
    /// written through `&self` at once, and a `new()` value to copy from
    /// would be built in the caller's frame (global memory) first.
    ///
    /// # Safety
    /// Called by the owning warp before any other use of this state.
    pub unsafe fn reset(&self) {
        // Destructured: a field added to the struct must be reset here too.
        let WarpPrivate { heap_cache, spawn_hint, last_write, tls_mask, tls_no_dtor, std_tls, exception } = self;
        // SAFETY: the caller's contract: nothing else reads or writes these
        // cells now.
        unsafe {
            *heap_cache.get() = [ClassCache::default(); CACHED_CLASSES];
            *spawn_hint.get() = 0;
            *last_write.get() = 0;
            *tls_mask.get() = 0;
            *tls_no_dtor.get() = 0;
            for v in std_tls {
                *v.get() = core::ptr::null_mut();
            }
            *exception.get() = core::ptr::null_mut();
        }
    }
}

impl Default for WarpPrivate {
    fn default() -> Self {
        Self::new()
    }
}

/// A thread-table slot. `#[repr(C)]`: the first 64 bytes are
/// [`ThreadSlotPublic`] (checked below).
#[repr(C)]
pub struct Slot {
    // ---- ThreadSlotPublic (host-readable) ----
    /// `THREAD_*` state (see the module docs).
    pub state: AtomicU32,
    /// `WAIT_*` reason while the thread is blocked; written only by the warp.
    pub wait: AtomicU32,
    /// Bytes of `name` in use; written only by the warp.
    pub name_len: AtomicU32,
    _pad: u32,
    /// The thread's name; written only by the warp (the host reads it racily
    /// and tolerates garbage).
    pub name: UnsafeCell<[u8; NAME_BYTES]>,
    // ---- private: what a waiting warp polls, in the header's cache line ----
    /// Non-zero once the program is ending: the warp must leave the kernel.
    /// Set by the exiting thread; polled only by this slot's warp.
    pub exit: AtomicU32,
    /// Join word: [`FIN_DONE`] | [`FIN_DETACHED`].
    pub fin: AtomicU32,
    /// Warp index waiting in `join` for this thread, or [`NO_JOINER`]
    /// (only a wake hint for the CPU harness).
    pub joiner: AtomicU32,
    /// Slot 0 only: set once by the thread that ends the program, so exactly
    /// one `OP_EXIT`/`OP_ABORT` is sent.
    pub exit_claim: AtomicU32,
    /// The thread's entry (`unsafe extern "C" fn(*mut u8)` as an address).
    pub entry: AtomicUsize,
    /// The entry's argument.
    pub data: AtomicPtr<u8>,
    /// A stack from the heap for this thread (`Builder::stack_size` above
    /// the launch's), or null: the warp's own stack. Set by the spawner,
    /// freed by the warp when the entry returns.
    pub stack: AtomicPtr<u8>,
    /// Its bytes.
    pub stack_len: AtomicUsize,
    /// What to run if the handle is detached (`unsafe extern "C"
    /// fn(*mut u8)` as an address, called with `data`), or 0. Set by the
    /// spawner; run once, after the entry returned, by whichever of the
    /// detacher and the warp comes second.
    pub on_detach: AtomicUsize,
    // ---- lane commands (crate::lanes): written by the leader lane, read by
    // the warp's other lanes after a warp barrier ----
    /// Bumped by the leader for each `lanes::run`; a lane that passes the
    /// start barrier with the generation it last saw returns (leader ended).
    pub lane_gen: AtomicU32,
    /// The lane function (`lanes::LaneFn` as an address).
    pub lane_fn: AtomicUsize,
    /// Its argument.
    pub lane_data: AtomicPtr<u8>,
    // ---- private, owner-only ----
    /// The warp's private state where the vendor keeps it in the slot (AMD,
    /// the CPU harness); NVIDIA keeps it in shared memory instead. Reached
    /// only through [`Hal::warp_private`](crate::hal::Hal::warp_private).
    pub private: WarpPrivate,
    /// Thread-local values, indexed by key - 1 (std's reserved keys aside:
    /// theirs are in [`WarpPrivate::std_tls`]). Read and written plainly by
    /// the owner (`tls::get`: from L1); atomic because `tls_destroy` clears
    /// a key in every slot.
    pub tls: [CoreAtomicPtr<u8>; TLS_KEYS],
}

// SAFETY: every field shared between warps is atomic; `name` and `private` are
// accessed only by the warp owning the slot (the host only reads `name`).
unsafe impl Sync for Slot {}

impl Slot {
    maybe_const_fn! {
        /// A zeroed slot (what the launcher's zeroed table holds).
        pub fn new() -> Slot {
            Slot {
                state: AtomicU32::new(0),
                wait: AtomicU32::new(0),
                name_len: AtomicU32::new(0),
                _pad: 0,
                name: UnsafeCell::new([0; NAME_BYTES]),
                exit: AtomicU32::new(0),
                fin: AtomicU32::new(0),
                joiner: AtomicU32::new(0),
                exit_claim: AtomicU32::new(0),
                entry: AtomicUsize::new(0),
                data: AtomicPtr::new(core::ptr::null_mut()),
                stack: AtomicPtr::new(core::ptr::null_mut()),
                stack_len: AtomicUsize::new(0),
                on_detach: AtomicUsize::new(0),
                lane_gen: AtomicU32::new(0),
                lane_fn: AtomicUsize::new(0),
                lane_data: AtomicPtr::new(core::ptr::null_mut()),
                private: WarpPrivate::new(),
                tls: [const { CoreAtomicPtr::new(core::ptr::null_mut()) }; TLS_KEYS],
            }
        }
    }
}

/// Distance between slots in the thread table. Under loom the atomics are
/// loom objects, so the table is a `Vec<Slot>`, not raw 1 KiB slots.
#[cfg(not(loom))]
pub const SLOT_STRIDE: usize = THREAD_SLOT_BYTES;
#[cfg(loom)]
pub const SLOT_STRIDE: usize = core::mem::size_of::<Slot>();

#[cfg(not(loom))]
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<Slot>() <= THREAD_SLOT_BYTES);
    assert!(offset_of!(Slot, state) == offset_of!(ThreadSlotPublic, state));
    assert!(offset_of!(Slot, wait) == offset_of!(ThreadSlotPublic, wait));
    assert!(offset_of!(Slot, name_len) == offset_of!(ThreadSlotPublic, name_len));
    assert!(offset_of!(Slot, name) == offset_of!(ThreadSlotPublic, name));
    assert!(offset_of!(Slot, exit) == size_of::<ThreadSlotPublic>());
};
