//! Exponential backoff for every wait loop (crossbeam's `Backoff`, for GPUs).
//!
//! A waiting warp first re-polls a few times (a handoff often completes
//! within a few hundred nanoseconds), then sleeps with the HAL's sleep, the
//! sleep doubling from [`MIN_SLEEP_NS`] up to the loop's `max_sleep_ns`.
//! Sleeping instead of spinning keeps parked warps from stealing issue slots
//! and memory bandwidth from running ones; the cap bounds wake-up latency.

use crate::hal::Hal;

/// Polls without sleeping before the first sleep (one poll is one L2 round
/// trip on a GPU, ~0.3 µs: a fast handoff never pays a coarse `nanosleep`).
pub const SPIN_POLLS: u32 = 24;
/// First sleep (about the `nanosleep` / `s_sleep 1` granularity).
pub const MIN_SLEEP_NS: u32 = 32;

/// Sleep of a backoff's warm phase ([`Backoff::warm`]).
pub const WARM_SLEEP_NS: u32 = 256;

/// State of one wait loop.
#[derive(Clone, Debug)]
pub struct Backoff {
    polls: u32,
    sleep_ns: u32,
    max_sleep_ns: u32,
    /// Sleeps left that stay at [`WARM_SLEEP_NS`] before growing.
    warm_sleeps: u32,
}

impl Backoff {
    /// A fresh backoff whose sleeps grow to at most `max_sleep_ns`.
    #[inline]
    pub const fn new(max_sleep_ns: u32) -> Self {
        Backoff {
            polls: 0,
            sleep_ns: MIN_SLEEP_NS,
            max_sleep_ns,
            warm_sleeps: 0,
        }
    }

    /// Like [`Backoff::new`], but the first `sleeps` sleeps after the spin
    /// phase last at most [`WARM_SLEEP_NS`] before they grow: for a wait
    /// that is likely to end soon (a warp that just ran a thread is the
    /// next spawn's first choice).
    #[inline]
    pub const fn warm(max_sleep_ns: u32, sleeps: u32) -> Self {
        let mut b = Self::new(max_sleep_ns);
        b.warm_sleeps = sleeps;
        b
    }

    /// Waits before the next poll: a spin hint during the first
    /// [`SPIN_POLLS`] calls, then a sleep of growing length.
    #[inline]
    pub fn snooze<H: Hal>(&mut self) {
        if self.polls < SPIN_POLLS {
            self.polls += 1;
            core::hint::spin_loop();
            #[cfg(loom)]
            H::sleep_ns(0); // loom needs every spin to yield
        } else {
            H::sleep_ns(self.sleep_ns.min(self.max_sleep_ns));
            let mut cap = self.max_sleep_ns.max(MIN_SLEEP_NS);
            if self.warm_sleeps > 0 {
                self.warm_sleeps -= 1;
                cap = cap.min(WARM_SLEEP_NS);
            }
            self.sleep_ns = self.sleep_ns.saturating_mul(2).min(cap);
        }
    }

    /// Like [`Backoff::snooze`], but never sleeps past `remaining_ns`.
    #[inline]
    pub fn snooze_at_most<H: Hal>(&mut self, remaining_ns: u64) {
        let cap = remaining_ns.min(u32::MAX as u64) as u32;
        if self.polls >= SPIN_POLLS && self.sleep_ns > cap {
            self.sleep_ns = cap;
        }
        self.snooze::<H>();
    }

    /// Whether the spin phase is over (the loop now sleeps).
    #[inline]
    pub fn is_sleeping(&self) -> bool {
        self.polls >= SPIN_POLLS
    }
}
