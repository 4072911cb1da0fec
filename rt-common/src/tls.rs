//! Thread-local keys: a global key table, values in each thread's slot (std's
//! reserved keys: in the warp's private state, see [`read_value`]).
//!
//! No GPU has native thread-locals, so std's key-based TLS runs over these.
//! Keys are `1..=TLS_KEYS` (never 0: std's lazy keys use 0 as "not yet
//! created"); a key's value in every thread starts null. Keys
//! `1..=TLS_RESERVED_KEYS` are std's own (`abi::TLS_KEY_STD_*`), in use
//! without a destructor from the start.
//!
//! # Key words (`dtors[key - 1]`)
//! | value | meaning |
//! |---|---|
//! | [`KEY_FREE`] | unused |
//! | [`KEY_NO_DTOR`] | in use, no destructor |
//! | other | in use; the destructor's address |

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use rt_abi::abi::{TLS_KEYS, TLS_RESERVED_KEYS};
use crate::hal::Hal;
use crate::slot::Slot;
#[cfg(doc)]
use crate::slot::WarpPrivate;

/// Key word: unused.
pub const KEY_FREE: usize = 0;
/// Key word: in use without a destructor.
pub const KEY_NO_DTOR: usize = 1;
/// Destructor rounds at thread exit (a destructor may set values again).
pub const DTOR_ROUNDS: usize = 4;

/// A destructor as std passes it.
pub type Dtor = unsafe extern "C" fn(*mut u8);

/// The global key table.
pub struct TlsKeys {
    dtors: [AtomicUsize; TLS_KEYS],
}

impl TlsKeys {
    pub const fn new() -> Self {
        let mut dtors = [const { AtomicUsize::new(KEY_FREE) }; TLS_KEYS];
        let mut i = 0;
        while i < TLS_KEYS {
            dtors[i] = AtomicUsize::new(launch_word(i));
            i += 1;
        }
        TlsKeys { dtors }
    }

    /// Frees every key but the reserved ones (warp 0, before `main`).
    pub fn init(&self) {
        for (i, d) in self.dtors.iter().enumerate() {
            d.store(launch_word(i), Relaxed);
        }
    }

    /// A new key, or `usize::MAX` if all are in use.
    pub fn create(&self, dtor: Option<Dtor>) -> usize {
        let word = dtor.map_or(KEY_NO_DTOR, |f| f as usize);
        for (i, d) in self.dtors.iter().enumerate() {
            // Relaxed: std publishes the key with a release, and a thread
            // reads this word only in `run_dtors`, after an acquire fence.
            if d.load(Relaxed) == KEY_FREE
                && d.compare_exchange(KEY_FREE, word, Relaxed, Relaxed).is_ok()
            {
                return i + 1;
            }
        }
        usize::MAX
    }

    /// Frees `key` and clears its value in every thread, so a later key with
    /// the same number starts null everywhere.
    ///
    /// For a key no thread has used (std destroys only the key it created
    /// and lost a race to publish, `LazyKey`): every warp remembers which
    /// key numbers it found without a destructor ([`WarpPrivate::tls_no_dtor`],
    /// kept across its threads), which holds because a number that a thread
    /// used is never freed, so its destructor word never changes.
    ///
    /// std's reserved keys are never destroyed (their values are in each
    /// warp's private state, which no other warp may clear): a call for one
    /// does nothing.
    /// `slots` are the thread table's ([`Runtime::slots`](crate::Runtime::slots)).
    pub fn destroy<'a>(&self, slots: impl IntoIterator<Item = &'a Slot>, key: usize) {
        let Some(i) = index(key).filter(|&i| i >= TLS_RESERVED_KEYS) else { return };
        for slot in slots {
            slot.tls[i].store(core::ptr::null_mut(), Relaxed);
        }
        self.dtors[i].store(KEY_FREE, Relaxed);
    }

    /// Runs the destructors of `me`'s non-null values (up to
    /// [`DTOR_ROUNDS`] rounds: a destructor may set values again). Values of
    /// keys without a destructor stay, so std can still read them (its
    /// `thread::current()` after the destructors); [`TlsKeys::clear_values`]
    /// clears them. Visits only the keys this thread set (its `tls_mask`)
    /// that this warp has not yet found without a destructor (its
    /// `tls_no_dtor`, kept across the warp's threads: see
    /// [`TlsKeys::destroy`]): a thread that set only such keys (std's own
    /// `thread::current()` and id), or runs this a second time with nothing
    /// new, pays a load or two and no fence.
    pub fn run_dtors<H: Hal>(&self, me: &Slot) {
        // Raw pointers, not references: a destructor sets values (and with
        // them mask bits) through `set`.
        let private = H::warp_private(me);
        let mask = private.tls_mask.get();
        let no_dtor = private.tls_no_dtor.get();
        // SAFETY (all accesses of `*mask` and `*no_dtor` below): owner-only
        // cells of our warp, never borrowed across a call.
        if unsafe { *mask & !*no_dtor } == 0 {
            return;
        }
        // std publishes a new key with a release and reads it relaxed (its
        // `LazyKey`, for speed); this acquire, after every such read, makes
        // the key's destructor word, written before the release, visible.
        H::fence_device_acquire();
        // Keys found free (destroyed while this thread had a value: outside
        // std's use, see `destroy`): skipped for this call, not remembered.
        let mut free = 0u64;
        for _ in 0..DTOR_ROUNDS {
            // SAFETY: as above.
            let mut todo = unsafe { *mask & !(*no_dtor | free) };
            if todo == 0 {
                break;
            }
            // The bits of keys without a destructor stay set.
            // SAFETY: as above.
            unsafe { *mask &= *no_dtor | free };
            while todo != 0 {
                let i = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let word = self.dtors[i].load(Relaxed);
                if word == KEY_FREE || word == KEY_NO_DTOR {
                    // SAFETY: as above.
                    unsafe {
                        if word == KEY_NO_DTOR {
                            *no_dtor |= 1 << i;
                        } else {
                            free |= 1 << i;
                        }
                        *mask |= 1 << i;
                    }
                    continue;
                }
                let v = read_value::<H>(me, i);
                if !v.is_null() {
                    write_value::<H>(me, i, core::ptr::null_mut());
                    // SAFETY: `word` is a destructor std registered for this
                    // key; `v` is this thread's value, now cleared (as POSIX
                    // does before calling it). It may set values again: they
                    // land in `mask` for the next round.
                    unsafe { core::mem::transmute::<usize, Dtor>(word)(v) };
                }
            }
        }
        // Values still set after the last round are left (as POSIX does) and
        // cleared with the others by `clear_values`.
    }

    /// Clears all of `me`'s values, for the warp's next thread. What the
    /// warp learnt of keys without a destructor stays (see `run_dtors`).
    pub fn clear_values<H: Hal>(&self, me: &Slot) {
        // SAFETY: owner-only cell of our warp, not borrowed elsewhere.
        clear::<H>(me, unsafe { core::mem::take(&mut *H::warp_private(me).tls_mask.get()) });
    }
}

/// The word of key index `i` at the launch: std's reserved keys in use
/// without a destructor, every other key free.
const fn launch_word(i: usize) -> usize {
    if i < TLS_RESERVED_KEYS { KEY_NO_DTOR } else { KEY_FREE }
}

/// Nulls `me`'s values of the keys in `mask`.
fn clear<H: Hal>(me: &Slot, mut mask: u64) {
    while mask != 0 {
        write_value::<H>(me, mask.trailing_zeros() as usize, core::ptr::null_mut());
        mask &= mask - 1;
    }
}

/// Reads `me`'s value at index `i` plainly (see [`get`] for why). std's
/// reserved keys are read from the warp's private state, which on NVIDIA no
/// fence empties (every `thread::current()` reads one); no other warp
/// writes them, as `destroy` never runs on a reserved key.
#[inline]
fn read_value<H: Hal>(me: &Slot, i: usize) -> *mut u8 {
    if i < TLS_RESERVED_KEYS {
        // SAFETY: owner-only cell of our warp.
        return unsafe { *H::warp_private(me).std_tls[i].get() };
    }
    // SAFETY: the slot's own cell; its owner (us) is its only writer while
    // the key is live.
    unsafe { me.tls[i].as_ptr().read() }
}

/// Writes `me`'s value at index `i` plainly (see [`get`] for why), in the
/// place [`read_value`] reads.
#[inline]
fn write_value<H: Hal>(me: &Slot, i: usize, value: *mut u8) {
    if i < TLS_RESERVED_KEYS {
        // SAFETY: owner-only cell of our warp.
        unsafe { *H::warp_private(me).std_tls[i].get() = value };
        return;
    }
    // SAFETY: the slot's own cell, written by its owner (us) while the key
    // is live.
    unsafe { me.tls[i].as_ptr().write(value) }
}

impl Default for TlsKeys {
    fn default() -> Self {
        Self::new()
    }
}

/// Value index of `key`, if it is a valid key number.
#[inline]
pub fn index(key: usize) -> Option<usize> {
    (key.wrapping_sub(1) < TLS_KEYS).then(|| key - 1)
}

/// The calling thread's value for `key` (null for an invalid key).
///
/// A plain (non-atomic) read: only this thread writes its values (`destroy`
/// aside, and a destroyed key is not used again), so the value may come from
/// the L1 cache; an atomic read would go to the L2 cache, on every
/// `thread_local!` access.
#[inline]
pub fn get<H: Hal>(me: &Slot, key: usize) -> *mut u8 {
    index(key).map_or(core::ptr::null_mut(), |i| read_value::<H>(me, i))
}

/// Sets the calling thread's value for `key` (ignored for an invalid key).
/// A plain write, for the reason [`get`] gives.
#[inline]
pub fn set<H: Hal>(me: &Slot, key: usize, value: *mut u8) {
    if let Some(i) = index(key) {
        write_value::<H>(me, i, value);
        if !value.is_null() {
            // SAFETY: the mask is accessed only by its own warp.
            unsafe { *H::warp_private(me).tls_mask.get() |= 1 << i };
        }
    }
}
const _: () = assert!(TLS_KEYS <= 64, "tls_mask is a u64");
