//! A ticket lock over the GPU futex.
//!
//! The GPU futex cannot wake a particular waiter: waiters sleep-poll the
//! word. With std's barging futex mutex, a thread that unlocks and locks
//! again in a loop re-takes the lock before a polling waiter sees it free,
//! for as long as it likes (measured: a two-thread handoff never completed).
//! Tickets make the lock FIFO: `unlock` hands it to the next ticket, which
//! only that waiter can take, so every waiter gets its turn and no warp
//! starves, also with every warp of the device contending.
//!
//! `next` is the next ticket to hand out; `serving` is the ticket that holds
//! the lock. Both count in steps of 2 (and wrap together): `serving`'s low
//! bit is the poison hint of `sync::Mutex` (std patch 16), set by a holder
//! that unlocks while panicking, so that the acquire that takes the lock
//! also says whether the lock may be poisoned, and an unpoisoned lock costs
//! no second round trip to the L2 cache for std's poison flag. `serving` is
//! written only by the holder, except for that bit, which `clear_poison`
//! clears.

use crate::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use crate::sys::futex::{Futex, poll_until};

pub struct Mutex {
    next: Futex,
    serving: Futex,
}

/// One ticket: the counters' step, so that `serving`'s low bit is free.
const STEP: u32 = 2;
/// `serving`'s poison hint.
const POISON_HINT: u32 = 1;

impl Mutex {
    #[inline]
    pub const fn new() -> Self {
        Self { next: Futex::new(0), serving: Futex::new(0) }
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_try_lock")]
    pub fn try_lock(&self) -> bool {
        self.try_lock_poison_hint().is_some()
    }

    /// `try_lock`; if it took the lock, whether the poison hint was set.
    #[inline]
    pub fn try_lock_poison_hint(&self) -> Option<bool> {
        // Free exactly when no ticket is out: next == serving. Taking ticket
        // `s` then means holding the lock (serving only grows, and is at
        // most next). Acquire pairs with the last holder's release.
        let s = self.serving.load(Acquire);
        let ticket = s & !POISON_HINT;
        self.next.compare_exchange(ticket, ticket.wrapping_add(STEP), Relaxed, Relaxed).ok()?;
        Some(s & POISON_HINT != 0)
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_lock")]
    pub fn lock(&self) {
        self.lock_poison_hint();
    }

    /// `lock`, returning whether the poison hint was set when the lock was
    /// handed over (read by the acquire that took it).
    #[inline]
    pub fn lock_poison_hint(&self) -> bool {
        let ticket = self.next.fetch_add(STEP, Relaxed);
        let s = self.serving.load(Acquire);
        let s = if s & !POISON_HINT == ticket { s } else { self.wait_for(ticket) };
        s & POISON_HINT != 0
    }

    /// Waits for `ticket` to be served; returns `serving` as the wait saw it.
    #[cold]
    fn wait_for(&self, ticket: u32) -> u32 {
        // Acquire polls (the futex's backoff over a condition): the poll
        // that sees our ticket served is the acquire the lock needs, so the
        // handoff's path has no second load after the wait (a `futex_wait`
        // polls relaxed, and its caller must then load again to acquire: one
        // more round trip to the L2 cache).
        let mut seen = 0;
        while !poll_until(
            || {
                seen = self.serving.load(Acquire);
                seen & !POISON_HINT == ticket
            },
            None,
        ) {}
        seen
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_unlock")]
    pub unsafe fn unlock(&self) {
        // Only the holder moves `serving` on: a release increment hands the
        // lock (and our writes) to the next ticket, keeping the poison hint.
        // Waiters sleep-poll `serving` (the GPU futex cannot wake anyone), so
        // there is no `next` to read and no wake to send: one fence and one
        // atomic.
        self.serving.fetch_add(STEP, Release);
    }

    /// `unlock` by a holder that has just poisoned the lock: sets the hint
    /// first (a cold path: two atomics). The hint does not change which
    /// ticket is served, so no waiter takes the lock before the release.
    #[cold]
    pub unsafe fn unlock_poisoned(&self) {
        self.serving.fetch_or(POISON_HINT, Relaxed);
        // SAFETY: the caller holds the lock.
        unsafe { self.unlock() };
    }

    /// Clears the poison hint (`Mutex::clear_poison`, before it clears the
    /// flag itself, so that a poisoning racing with it leaves the hint set
    /// whenever it leaves the flag set).
    #[inline]
    pub fn clear_poison_hint(&self) {
        self.serving.fetch_and(!POISON_HINT, Relaxed);
    }
}
