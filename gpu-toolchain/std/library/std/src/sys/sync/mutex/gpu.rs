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
//! the lock. `serving` is written only by the holder.

use crate::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use crate::sys::futex::{Futex, poll_until};

pub struct Mutex {
    next: Futex,
    serving: Futex,
}

impl Mutex {
    #[inline]
    pub const fn new() -> Self {
        Self { next: Futex::new(0), serving: Futex::new(0) }
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_try_lock")]
    pub fn try_lock(&self) -> bool {
        // Free exactly when no ticket is out: next == serving. Taking ticket
        // `s` then means holding the lock (serving only grows, and is at
        // most next). Acquire pairs with the last holder's release.
        let s = self.serving.load(Acquire);
        self.next.compare_exchange(s, s.wrapping_add(1), Relaxed, Relaxed).is_ok()
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_lock")]
    pub fn lock(&self) {
        let ticket = self.next.fetch_add(1, Relaxed);
        if self.serving.load(Acquire) != ticket {
            self.wait_for(ticket);
        }
    }

    #[cold]
    fn wait_for(&self, ticket: u32) {
        // Acquire polls (the futex's backoff over a condition): the poll
        // that sees our ticket served is the acquire the lock needs, so the
        // handoff's path has no second load after the wait (a `futex_wait`
        // polls relaxed, and its caller must then load again to acquire: one
        // more round trip to the L2 cache).
        while !poll_until(|| self.serving.load(Acquire) == ticket, None) {}
    }

    #[inline]
    #[cfg_attr(not(test), rustc_diagnostic_item = "sys_mutex_unlock")]
    pub unsafe fn unlock(&self) {
        // Only the holder writes `serving`: a release increment hands the
        // lock (and our writes) to the next ticket. Waiters sleep-poll
        // `serving` (the GPU futex cannot wake anyone), so there is no
        // `next` to read and no wake to send: one fence and one atomic.
        self.serving.fetch_add(1, Release);
    }
}
