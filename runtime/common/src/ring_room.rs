//! The host-call ring's room ([`RingRoom`](crate::protocol::RingRoom)):
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

use crate::primitive::Ordering::{Acquire, Relaxed, Release};
use crate::ring::RingMem;

/// Whether the room's copy of the host's count shows ticket `prev`
/// consumed.
#[inline(never)]
pub fn host_consumed<M: RingMem>(m: &M, prev: u64) -> bool {
    m.consumed_seen().load(Acquire) > prev
}

/// Whether the caller may read the host's count for the others (then it
/// must call [`saw_consumed`] next, which gives the claim back).
#[inline(never)]
pub fn claim_refresh<M: RingMem>(m: &M) -> bool {
    m.refreshing().load(Relaxed) == 0 && m.refreshing().compare_exchange(0, 1, Relaxed, Relaxed).is_ok()
}

/// Raises the room's copy of the host's count to `consumed` (read from the
/// host with a system-scope acquire), then ends the caller's claim.
#[inline(never)]
pub fn saw_consumed<M: RingMem>(m: &M, consumed: u64) {
    m.consumed_seen().fetch_max(consumed, Release);
    m.refreshing().store(0, Relaxed);
}

/// Whether the producer of ticket `prev`, in slot `i`, has a reply it has
/// not read yet.
#[inline(never)]
pub fn reply_unread<M: RingMem>(m: &M, i: usize, prev: u64) -> bool {
    m.unread_reply(i).load(Acquire) == prev + 1
}

/// Marks ticket `t`'s reply, in slot `i`, unread. Relaxed: the publish's
/// release fence orders it.
#[inline(never)]
pub fn mark_reply_unread<M: RingMem>(m: &M, i: usize, t: u64) {
    m.unread_reply(i).store(t + 1, Relaxed);
}

/// The reply in slot `i` is read: the slot's next producer may write it.
#[inline(never)]
pub fn reply_read<M: RingMem>(m: &M, i: usize) {
    m.unread_reply(i).store(0, Release);
}
