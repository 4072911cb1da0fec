//! The GPU futex: sleep-poll until the word changes.
//!
//! std's futex users (Mutex, Condvar, RwLock, Once, thread parking) always
//! change the word before waking, so polling the word is a correct wait:
//! a waiter returns once it sees `*addr != expected` (or, spuriously, at any
//! time). `wake` therefore has nothing to do. Waiters only read the word,
//! so a releasing thread's store is never delayed by them, and with every
//! warp contending someone always wins the following CAS: no livelock.

use crate::backoff::Backoff;
use crate::hal::{Hal, ticks_to_ns};
use crate::primitive::{AtomicU32, Ordering::Relaxed};
use rt_abi::protocol::{WAIT_LOCK, WAIT_NONE};
use crate::runtime::{Runtime, leave_if_exiting};

/// `__gpu_std_futex_wait`: waits while `*word == expected`, at most
/// `timeout_ns` (`u64::MAX`: no limit). Returns false on timeout.
pub fn wait<H: Hal>(rt: &Runtime, word: &AtomicU32, expected: u32, timeout_ns: u64) -> bool {
    // Relaxed: std re-reads the word with its own ordering after we return.
    wait_until::<H>(rt, timeout_ns, || word.load(Relaxed) != expected)
}

/// `__gpu_std_poll_wait`, and the loop of [`wait`]: sleep-polls `ready` until
/// it returns true (then true) or `timeout_ns` passes (then false), with the
/// backoff and the slot's `WAIT_LOCK` of a futex wait. For waits on more than
/// one word (std's channels: "not empty or disconnected").
pub fn wait_until<H: Hal>(rt: &Runtime, timeout_ns: u64, mut ready: impl FnMut() -> bool) -> bool {
    if ready() {
        return true;
    }
    let me = rt.my_slot::<H>();
    let start = H::fixed_frequency_clock();
    let mut backoff = Backoff::new(rt.wait_sleep_ns());
    me.wait.store(WAIT_LOCK, Relaxed);
    let woken = loop {
        if ready() {
            break true;
        }
        if backoff.is_sleeping() {
            leave_if_exiting::<H>(me); // not while spinning: a fast handoff pays no extra load
        }
        if timeout_ns == u64::MAX {
            backoff.snooze::<H>();
            continue;
        }
        let elapsed = ticks_to_ns::<H>(H::fixed_frequency_clock().wrapping_sub(start));
        if elapsed >= timeout_ns {
            break false;
        }
        backoff.snooze_at_most::<H>(timeout_ns - elapsed);
    };
    me.wait.store(WAIT_NONE, Relaxed);
    woken
}

/// `__gpu_std_futex_wake`: nothing to do (waiters poll). Returns false:
/// the runtime does not know whether anyone waits, and std's users treat
/// false as "maybe nobody was woken" (safe: they then wake others too).
#[inline]
pub fn wake(_word: &AtomicU32, _count: u32) -> bool {
    false
}
