//! The host-call ring's room ([`RingRoom`](rt_abi::protocol::RingRoom)):
//! the producers' view, in device memory, of which slots are free.
//!
//! Its own module, apart from `ring`: the GPU linker keeps system scope for
//! the atomics of `rt_common::ring`'s functions (the ring is host memory)
//! and gives every other function device scope. The room is device memory
//! that only warps of this GPU touch, and a system-scope release costs a
//! `fence.acq_rel.sys` (~0.8 µs on an H100) where the device's costs
//! ~0.4 µs. So these functions are never inlined into the ring's (callers
//! reach them through [`out_of_line`](crate::hal::out_of_line)).
//!
//! The orderings, each pairing with another:
//! - [`saw_consumed`] (release) → [`host_consumed`] (acquire): a producer
//!   that read the host's count with a system-scope acquire passes on that
//!   the host is done reading the slots below it.
//! - [`mark_reply_unread`] happens before the packet's publish (a
//!   system-scope release fence), so whoever learns that the host consumed
//!   the packet also sees the mark.
//! - [`reply_read`] (release) → [`reply_unread`] (acquire): the reply's
//!   reads happen before the slot's next producer writes it.
//!
//! Each takes the room's words themselves (`RingMem::consumed_seen` and
//! co.), which the ring's functions find before their first acquire: found
//! here, through the ring, each would cost a round trip to the L2 cache.

use crate::primitive::Ordering::{Acquire, Relaxed, Release};
use crate::primitive::{AtomicU64, fence};

/// Whether ticket `prev`'s slot is free by the room alone: its copy of the
/// host's count (`seen`) shows `prev` consumed, and the slot's reply, if
/// `prev` asked for one, was read (`unread`). Both words in one look:
/// relaxed loads, then an acquire fence if both say free (it pairs with
/// [`saw_consumed`]'s and [`reply_read`]'s releases as the acquire loads of
/// [`host_consumed`] and [`reply_unread`] do). Two acquire loads would be
/// two round trips to the L2 cache: the second waits for the first.
#[inline(never)]
pub fn slot_free(seen: &AtomicU64, unread: &AtomicU64, prev: u64) -> bool {
    let (consumed, reply) = (seen.load(Relaxed), unread.load(Relaxed));
    let free = consumed > prev && reply != prev + 1;
    if free {
        fence(Acquire);
    }
    free
}

/// Whether the room's copy of the host's count (`seen`) shows ticket
/// `prev` consumed.
#[inline(never)]
pub fn host_consumed(seen: &AtomicU64, prev: u64) -> bool {
    seen.load(Acquire) > prev
}

/// Whether the caller may read the host's count for the others
/// (`refreshing` was 0 and is now 1; then it must call [`saw_consumed`]
/// next, which gives the claim back).
#[inline(never)]
pub fn claim_refresh(refreshing: &AtomicU64) -> bool {
    refreshing.load(Relaxed) == 0 && refreshing.compare_exchange(0, 1, Relaxed, Relaxed).is_ok()
}

/// Raises the room's copy of the host's count (`seen`) to `consumed` (read
/// from the host with a system-scope acquire), then ends the caller's claim.
#[inline(never)]
pub fn saw_consumed(seen: &AtomicU64, refreshing: &AtomicU64, consumed: u64) {
    seen.fetch_max(consumed, Release);
    refreshing.store(0, Relaxed);
}

/// Whether the producer of ticket `prev` has a reply it has not read yet
/// (`unread`: its slot's word).
#[inline(never)]
pub fn reply_unread(unread: &AtomicU64, prev: u64) -> bool {
    unread.load(Acquire) == prev + 1
}

/// Marks ticket `t`'s reply unread (`unread`: its slot's word). Relaxed:
/// the publish's release fence orders it.
#[inline(never)]
pub fn mark_reply_unread(unread: &AtomicU64, t: u64) {
    unread.store(t + 1, Relaxed);
}

/// The reply in the slot of `unread` is read: the slot's next producer may
/// write it.
#[inline(never)]
pub fn reply_read(unread: &AtomicU64) {
    unread.store(0, Release);
}
