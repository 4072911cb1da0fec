//! The device side (producer) of the host-call ring; `protocol.rs` states
//! who owns a slot when.
//!
//! A producer takes a ticket, waits (sleeping, `WAIT_HOST`) until its slot is
//! free, fills it, and publishes it with a system-scope release. A ticket once
//! taken is always published, also while the program ends: the host consumes
//! tickets in order, so an abandoned ticket would stall every later packet.
//!
//! Whether the slot is free is asked of the ring's room in device memory
//! ([`crate::ring_room`]); the host's own count of consumed tickets, across
//! PCIe, is read only when the room's copy is too old for the ticket.
//!
//! The algorithm is written against [`RingMem`] so the loom model can run it
//! over loom atomics; the GPU uses [`RawRing`], the ring's real memory.

use core::mem::offset_of;
use core::ptr;

use crate::backoff::Backoff;
use crate::hal::{Hal, out_of_line};
use crate::primitive::{
    AtomicU32, AtomicU64,
    Ordering::{Acquire, Relaxed},
};
use rt_abi::protocol::{
    FLAG_MORE, FLAG_REPLY, OP_WRITE, RING_MAGIC, RING_PAYLOAD_BYTES, RING_SLOT_BYTES,
    RING_SLOTS_OFFSET, RingHeader, RingRoom, RingSlotHeader, WAIT_HOST, WAIT_NONE,
};
use crate::ring_room;

// gpu-ld keeps system scope only in this module's functions, found by its
// path (`rt_abi::symbols::RING_MODULE`).
const _: () = assert!(rt_abi::symbols::same(module_path!(), rt_abi::symbols::RING_MODULE));

/// The fixed header fields of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub op: u32,
    pub thread: u32,
    pub flags: u32,
    pub arg0: u64,
    pub arg1: u64,
}

/// Where a ring's words and payloads live.
pub trait RingMem {
    /// A slot, as [`slot`](Self::slot) finds it: found once per packet,
    /// right after its ticket, and then held (in registers), because every
    /// look at the ring's own fields after the room's acquires would be a
    /// round trip to the L2 cache on the packet's chain (an acquire leaves
    /// nothing in L1).
    type Slot: Copy;
    /// Number of slots, a power of two.
    fn capacity(&self) -> u64;
    /// The ticket counter.
    fn tickets(&self) -> &AtomicU64;
    /// Slot `i`.
    fn slot(&self, i: usize) -> Self::Slot;
    /// The slot's publish word.
    fn seq(&self, slot: Self::Slot) -> &AtomicU64;
    /// The slot's reply sequence word.
    fn reply_seq(&self, slot: Self::Slot) -> &AtomicU64;
    /// The host's count of consumed tickets ([`RingHeader::consumed`]).
    fn consumed(&self) -> &AtomicU64;
    /// The room's copy of it ([`RingRoom::consumed_seen`]).
    fn consumed_seen(&self) -> &AtomicU64;
    /// The room's flag of a producer reading `consumed` ([`RingRoom::refreshing`]).
    fn refreshing(&self) -> &AtomicU64;
    /// The room's unread-reply mark of slot `i` ([`RingRoom::unread_reply`]).
    fn unread_reply(&self, i: usize) -> &AtomicU64;
    /// Writes `packet` and `payload` (≤ [`RING_PAYLOAD_BYTES`]) into the slot.
    ///
    /// # Safety
    /// The caller owns the slot (its `seq` equals the caller's ticket).
    unsafe fn fill(&self, slot: Self::Slot, packet: &Packet, payload: &[u8]);
    /// Reads the first `out.len()` (≤ [`RING_PAYLOAD_BYTES`]) payload bytes
    /// of the slot: a host reply.
    ///
    /// # Safety
    /// The caller owns the slot and the host's reply is in.
    unsafe fn read_payload(&self, slot: Self::Slot, out: &mut [u8]);
}

/// The ring in host-mapped memory, as the launcher laid it out, and its
/// ticket counter and room in device memory.
#[derive(Clone, Copy, Debug)]
pub struct RawRing {
    /// Address of the [`RingHeader`]; 0 if the ring is unusable.
    base: usize,
    capacity: u64,
    /// Address of [`LaunchBlock::ring_tickets`](rt_abi::protocol::LaunchBlock::ring_tickets).
    tickets: usize,
    /// Address of the [`RingRoom`] ([`LaunchBlock::ring_room`](rt_abi::protocol::LaunchBlock::ring_room)).
    room: usize,
}

impl RawRing {
    /// A ring that drops everything (no usable ring was passed).
    pub const fn unusable() -> Self {
        RawRing {
            base: 0,
            capacity: 0,
            tickets: 0,
            room: 0,
        }
    }

    /// The ring at `addr` with its ticket counter at `tickets` and its room
    /// at `room`, if its header is valid.
    ///
    /// # Safety
    /// `addr` is 0 or the device address of a ring header and its slots;
    /// `tickets` is a word every producer of the ring accesses only
    /// atomically, valid while the ring is (the launch block's
    /// `ring_tickets`); `room` is 0 or the address of the ring's zeroed
    /// [`RingRoom`] for its capacity, likewise.
    pub unsafe fn new(addr: u64, tickets: *const u64, room: u64) -> Self {
        if addr == 0 || addr % 128 != 0 || room == 0 || room % 8 != 0 {
            return Self::unusable();
        }
        let hdr = addr as usize as *const RingHeader;
        // SAFETY: the caller says a header is there; the host wrote it before
        // the launch and never changes it.
        let (magic, cap) = unsafe {
            (
                ptr::read_volatile(&raw const (*hdr).magic),
                ptr::read_volatile(&raw const (*hdr).capacity),
            )
        };
        // At least 2 slots: with 1, "published by t" (t + 1) and "free for
        // t + cap" would be the same seq value.
        if magic != RING_MAGIC || !cap.is_power_of_two() || cap < 2 {
            return Self::unusable();
        }
        RawRing {
            base: addr as usize,
            capacity: cap as u64,
            tickets: tickets as usize,
            room: room as usize,
        }
    }

    /// Whether packets can be sent.
    #[inline]
    pub fn is_usable(&self) -> bool {
        self.base != 0
    }
}

impl RingMem for RawRing {
    /// The slot's address in the ring.
    type Slot = *mut u8;
    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }
    #[inline]
    fn tickets(&self) -> &AtomicU64 {
        // SAFETY: a usable ring's counter is valid for the program (`new`'s
        // contract) and only accessed atomically.
        unsafe { &*(self.tickets as *const AtomicU64) }
    }
    #[inline]
    fn slot(&self, i: usize) -> *mut u8 {
        (self.base + RING_SLOTS_OFFSET + i * RING_SLOT_BYTES) as *mut u8
    }
    #[inline]
    fn seq(&self, slot: *mut u8) -> &AtomicU64 {
        // SAFETY: `slot` is one of the ring's (`slot(i)`, `i < capacity`),
        // valid for the program (`new`'s contract); the word is only
        // accessed atomically.
        unsafe { &*(slot.add(offset_of!(RingSlotHeader, seq)) as *const AtomicU64) }
    }
    #[inline]
    fn reply_seq(&self, slot: *mut u8) -> &AtomicU64 {
        // SAFETY: as for `seq`.
        unsafe { &*(slot.add(offset_of!(RingSlotHeader, reply_seq)) as *const AtomicU64) }
    }
    #[inline]
    fn consumed(&self) -> &AtomicU64 {
        // SAFETY: the header is valid for the program (`new`'s contract),
        // and the word is only accessed atomically.
        unsafe { &*((self.base + offset_of!(RingHeader, consumed)) as *const AtomicU64) }
    }
    #[inline]
    fn consumed_seen(&self) -> &AtomicU64 {
        // SAFETY: the room is valid for the program (`new`'s contract) and
        // only accessed atomically.
        unsafe { &*((self.room + offset_of!(RingRoom, consumed_seen)) as *const AtomicU64) }
    }
    #[inline]
    fn refreshing(&self) -> &AtomicU64 {
        // SAFETY: as for `consumed_seen`.
        unsafe { &*((self.room + offset_of!(RingRoom, refreshing)) as *const AtomicU64) }
    }
    #[inline]
    fn unread_reply(&self, i: usize) -> &AtomicU64 {
        // SAFETY: as for `consumed_seen`; the room has a word per slot and
        // `i < capacity`.
        unsafe { &*((self.room + offset_of!(RingRoom, unread_reply) + i * 8) as *const AtomicU64) }
    }
    // Inlined: called, the packet and the payload's address would go
    // through memory, read back after the room's acquires.
    #[inline(always)]
    unsafe fn fill(&self, s: *mut u8, p: &Packet, payload: &[u8]) {
        debug_assert!(payload.len() <= RING_PAYLOAD_BYTES);
        // `op`/`thread`/`len`/`flags` and `arg0`/`arg1` are 16 aligned bytes
        // each: one 16-byte store each. Every store to host memory is a
        // PCIe write that the publishing fence waits for; on an H100 each
        // costs about as much as the fence (`xtask/probes`), so fewer, wider.
        const _: () = assert!(offset_of!(RingSlotHeader, op) % 16 == 0);
        const _: () = assert!(offset_of!(RingSlotHeader, thread) == offset_of!(RingSlotHeader, op) + 4);
        const _: () = assert!(offset_of!(RingSlotHeader, len) == offset_of!(RingSlotHeader, op) + 8);
        const _: () = assert!(offset_of!(RingSlotHeader, flags) == offset_of!(RingSlotHeader, len) + 4);
        const _: () = assert!(offset_of!(RingSlotHeader, arg0) == offset_of!(RingSlotHeader, op) + 16);
        const _: () = assert!(offset_of!(RingSlotHeader, arg1) == offset_of!(RingSlotHeader, arg0) + 8);
        const _: () = assert!(core::mem::size_of::<RingSlotHeader>() % 16 == 0);
        // SAFETY: the caller owns the slot; all offsets are inside it and
        // 16-byte aligned (slots are 256-byte aligned).
        unsafe {
            let h = s as *mut RingSlotHeader;
            let words = (&raw mut (*h).op).cast::<u128>();
            ptr::write(
                words,
                u64_pair(u32_pair(p.op, p.thread), u32_pair(payload.len() as u32, p.flags)),
            );
            ptr::write(words.add(1), u64_pair(p.arg0, p.arg1));
            copy_pairs(s.add(core::mem::size_of::<RingSlotHeader>()) as *mut u128, payload);
        }
    }
    #[inline(always)]
    unsafe fn read_payload(&self, slot: *mut u8, out: &mut [u8]) {
        debug_assert!(out.len() <= RING_PAYLOAD_BYTES);
        let words = slot.wrapping_add(core::mem::size_of::<RingSlotHeader>()) as *const u64;
        for (w, chunk) in out.chunks_mut(8).enumerate() {
            // SAFETY: the caller owns the slot; the payload is 8-byte aligned
            // and `out` is no longer than it.
            let word = unsafe { ptr::read(words.add(w)) };
            chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
        }
    }
}

/// The u64 whose memory holds `lo` then `hi` (any endianness).
#[inline]
fn u32_pair(lo: u32, hi: u32) -> u64 {
    let (l, h) = (lo.to_ne_bytes(), hi.to_ne_bytes());
    u64::from_ne_bytes([l[0], l[1], l[2], l[3], h[0], h[1], h[2], h[3]])
}

/// The u128 whose memory holds `lo` then `hi` (any endianness).
#[inline]
fn u64_pair(lo: u64, hi: u64) -> u128 {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&lo.to_ne_bytes());
    b[8..].copy_from_slice(&hi.to_ne_bytes());
    u128::from_ne_bytes(b)
}

/// Copies `src` to `dst` with aligned 16-byte stores (few, wide writes
/// over PCIe), zero-padding the last one.
///
/// # Safety
/// `dst` is 16-byte aligned and valid for `src.len()` rounded up to 16.
#[inline]
unsafe fn copy_pairs(dst: *mut u128, src: &[u8]) {
    let pairs = src.len() / 16;
    for w in 0..pairs {
        // SAFETY: in bounds of `src` and `dst` (caller).
        unsafe {
            dst.add(w)
                .write(ptr::read_unaligned(src.as_ptr().add(w * 16) as *const u128))
        };
    }
    let tail = &src[pairs * 16..];
    if !tail.is_empty() {
        let mut bytes = [0u8; 16];
        bytes[..tail.len()].copy_from_slice(tail);
        // SAFETY: the caller sized `dst` to the rounded-up length.
        unsafe { dst.add(pairs).write(u128::from_ne_bytes(bytes)) };
    }
}

/// Polls `done` with backoff while `wait` shows [`WAIT_HOST`]. Never gives
/// up: a taken ticket must be published.
#[inline]
fn wait_host<H: Hal>(wait: &AtomicU32, max_sleep_ns: u32, mut done: impl FnMut() -> bool) {
    if done() {
        return;
    }
    wait.store(WAIT_HOST, Relaxed);
    let mut backoff = Backoff::new(max_sleep_ns);
    while !done() {
        backoff.snooze::<H>();
    }
    wait.store(WAIT_NONE, Relaxed);
}

/// Sends one packet; returns its ticket. Waits while the ring is full.
pub fn send<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, packet: &Packet, payload: &[u8]) -> u64 {
    let send: fn(&M, &AtomicU32, u32, &Packet, &[u8]) -> u64 = send_packet::<H, M>;
    out_of_line(send)(m, wait, max_sleep_ns, packet, payload)
}

/// [`send`]. Never inlined: the GPU linker gives std's atomics device scope
/// but keeps system scope for this module's functions (the ring is host
/// memory), so the ring's accesses must stay in them (see [`out_of_line`]).
#[inline(never)]
fn send_packet<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    packet: &Packet,
    payload: &[u8],
) -> u64 {
    // Read before the ticket, as the ring's fields are (see `RingMem::Slot`).
    let packet = *packet;
    let place = take_place(m);
    publish_at::<H, M>(m, wait, max_sleep_ns, place, &packet, payload);
    place.t
}

/// A ticket and where its packet goes: slot `t % cap` and the room's
/// unread-reply word of that slot, found right after the ticket is taken,
/// before any acquire (see [`RingMem::Slot`]).
#[derive(Clone, Copy)]
struct Place<'a, S> {
    t: u64,
    cap: u64,
    slot: S,
    unread: &'a AtomicU64,
}

/// Ticket `t`'s [`Place`].
#[inline(always)]
fn place<M: RingMem>(m: &M, t: u64) -> Place<'_, M::Slot> {
    let cap = m.capacity();
    let i = (t & (cap - 1)) as usize;
    Place { t, cap, slot: m.slot(i), unread: m.unread_reply(i) }
}

/// The next ticket: the slot a packet goes to (`t % capacity`).
#[inline(always)]
fn take_ticket<M: RingMem>(m: &M) -> u64 {
    // Relaxed: the ticket only picks a slot; ownership is decided by `seq`.
    m.tickets().fetch_add(1, Relaxed)
}

/// The next ticket's [`Place`].
#[inline(always)]
fn take_place<M: RingMem>(m: &M) -> Place<'_, M::Slot> {
    place(m, take_ticket(m))
}

/// Waits until the place's slot is free, fills it, and publishes it to the
/// host.
#[inline(always)]
fn publish_at<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    place: Place<'_, M::Slot>,
    packet: &Packet,
    payload: &[u8],
) {
    let Place { t, cap, slot, unread } = place;
    if t >= cap {
        wait_for_room::<H, M>(m, wait, max_sleep_ns, t - cap, unread);
    }
    if packet.flags & FLAG_REPLY != 0 {
        // Before the publish: whoever learns that the host consumed this
        // ticket also sees that its reply is unread.
        let mark: fn(&AtomicU64, u64) = ring_room::mark_reply_unread;
        out_of_line(mark)(unread, t);
    }
    // SAFETY: ticket `t - cap` is done with the slot (`wait_for_room`): it
    // is ours until we publish it.
    unsafe { m.fill(slot, packet, payload) };
    // Release at system scope: the payload reaches the host before `seq`.
    H::fence_system_release();
    m.seq(slot).store(t + 1, Relaxed);
}

/// Waits until ticket `prev` is done with its slot (whose unread-reply word
/// is `unread`): the host has consumed it and, if it asked for a reply, its
/// producer has read the reply. Both are first asked of the room in device
/// memory (with acquires: `ring_room`), in one look where the room says
/// both; only when the room's copy of the host's count is too old is the
/// count itself read across PCIe, by one waiting producer at a time (a full
/// ring has thousands waiting: each reading the host's memory would take
/// the PCIe link from the packets).
#[inline(always)]
fn wait_for_room<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, prev: u64, unread: &AtomicU64) {
    // The words, found before the first acquire (see `RingMem::Slot`).
    let (seen, refreshing, consumed) = (m.consumed_seen(), m.refreshing(), m.consumed());
    // The usual case: one look at both of the room's words.
    let free: fn(&AtomicU64, &AtomicU64, u64) -> bool = ring_room::slot_free;
    if out_of_line(free)(seen, unread, prev) {
        return;
    }
    let host_done: fn(&AtomicU64, u64) -> bool = ring_room::host_consumed;
    let claim: fn(&AtomicU64) -> bool = ring_room::claim_refresh;
    let saw: fn(&AtomicU64, &AtomicU64, u64) = ring_room::saw_consumed;
    wait_host::<H>(wait, max_sleep_ns, || {
        if out_of_line(host_done)(seen, prev) {
            return true;
        }
        if !out_of_line(claim)(refreshing) {
            return false;
        }
        // Acquire at system scope: the host's reads of the slots below
        // `consumed` happen before our writes (and, through the room,
        // before the other producers').
        let consumed = consumed.load(Acquire);
        out_of_line(saw)(seen, refreshing, consumed);
        consumed > prev
    });
    let unread_by: fn(&AtomicU64, u64) -> bool = ring_room::reply_unread;
    wait_host::<H>(wait, max_sleep_ns, || !out_of_line(unread_by)(unread, prev));
}

/// Waits for the host's reply to the packet of the place's ticket, copies
/// the first `out.len()` bytes of its payload into `out`, and clears the
/// slot's unread-reply mark (the slot's next producer waits for it).
#[inline(always)]
fn read_reply_at<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, place: Place<'_, M::Slot>, out: &mut [u8]) {
    let Place { t, slot, unread, .. } = place;
    let reply_seq = m.reply_seq(slot);
    // Acquire polls: the host's reply writes are visible once `reply_seq`
    // is; an acquire load costs a relaxed one's PCIe read, where a relaxed
    // poll and a fence after it cost a `fence.acq_rel.sys` more (~0.7 µs).
    wait_host::<H>(wait, max_sleep_ns, || reply_seq.load(Acquire) == t + 1);
    // SAFETY: the slot's next producer waits for our mark; the reply is in.
    unsafe { m.read_payload(slot, out) };
    let read: fn(&AtomicU64) = ring_room::reply_read;
    out_of_line(read)(unread);
}

/// Sends a [`FLAG_REPLY`] packet and waits for the host's reply, then frees
/// the slot (the device owns it once the reply is in).
pub fn call<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, packet: &Packet, payload: &[u8]) {
    call_for_bytes::<H, M>(m, wait, max_sleep_ns, packet, payload, &mut [])
}

/// [`call`], and copies the first `reply.len()` bytes of the host's reply
/// payload into `reply` before freeing the slot.
pub fn call_for_bytes<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    packet: &Packet,
    payload: &[u8],
    reply: &mut [u8],
) {
    let call: fn(&M, &AtomicU32, u32, &Packet, &[u8], &mut [u8]) = call_host::<H, M>;
    out_of_line(call)(m, wait, max_sleep_ns, packet, payload, reply)
}

/// [`call`]. Never inlined (see [`send_packet`]).
#[inline(never)]
fn call_host<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    packet: &Packet,
    payload: &[u8],
    reply: &mut [u8],
) {
    // `send_packet`'s steps, keeping the place for the reply (returned from
    // `send_packet`, it would go through memory, read back after acquires).
    let p = Packet {
        flags: packet.flags | FLAG_REPLY,
        ..*packet
    };
    let place = take_place(m);
    publish_at::<H, M>(m, wait, max_sleep_ns, place, &p, payload);
    read_reply_at::<H, M>(m, wait, max_sleep_ns, place, reply);
}

/// Sends `bytes` for `fd` as one write: packets of [`RING_PAYLOAD_BYTES`],
/// all but the last with [`FLAG_MORE`]. The host assembles per thread, so
/// other threads' packets in between do not interleave the output. Returns
/// the last packet's ticket (for [`wait_taken`]), or `None` for no bytes.
pub fn write<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    thread: u32,
    fd: u32,
    bytes: &[u8],
) -> Option<u64> {
    let mut last = None;
    let mut chunks = bytes.chunks(RING_PAYLOAD_BYTES).peekable();
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_some() {
            FLAG_MORE
        } else {
            0
        };
        let p = Packet {
            op: OP_WRITE,
            thread,
            flags,
            arg0: fd as u64,
            arg1: 0,
        };
        last = Some(send::<H, M>(m, wait, max_sleep_ns, &p, chunk));
    }
    last
}

/// Waits until the host has taken the packet of ticket `t` (one without
/// [`FLAG_REPLY`]): the host counts a packet consumed once it has copied
/// it, and handles packets in ticket order, so whatever the caller sends next is
/// handled after it (a write's bytes reach the output before anything the
/// program does next is seen by the host).
pub fn wait_taken<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, t: u64) {
    let f: fn(&M, &AtomicU32, u32, u64) = wait_taken_at::<H, M>;
    out_of_line(f)(m, wait, max_sleep_ns, t)
}

/// [`wait_taken`]. Never inlined (see [`send_packet`]).
#[inline(never)]
fn wait_taken_at<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, t: u64) {
    // Relaxed: nothing of the slot is read after.
    wait_host::<H>(wait, max_sleep_ns, || m.consumed().load(Relaxed) > t);
}

/// A host call ([`rt_abi::hostcall`]): sends the request `head ++ body` in
/// [`OP_CALL`](rt_abi::hostcall::OP_CALL) packets, waits for the reply, and
/// copies up to `reply.len()` of its bytes into `reply` (fetching beyond
/// the first slot with `OP_CALL_MORE`). Returns the status and the reply's
/// total length (which may exceed `reply.len()`; the rest is dropped).
#[allow(clippy::too_many_arguments)]
pub fn host_call<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    thread: u32,
    call: u32,
    head: &[u8],
    body: &[u8],
    reply: &mut [u8],
) -> (i64, u64) {
    use rt_abi::hostcall::OP_CALL;
    let total = head.len() + body.len();
    let mut chunk = [0u8; RING_PAYLOAD_BYTES];
    let mut sent = 0;
    loop {
        let n = (total - sent).min(RING_PAYLOAD_BYTES);
        // Bytes `sent..sent + n` of head ++ body: what is left of the
        // head, then the body from where this chunk reaches it.
        let head_end = head.len().clamp(sent, sent + n);
        let from_head = head_end - sent;
        if from_head > 0 {
            chunk[..from_head].copy_from_slice(&head[sent..head_end]);
        }
        if from_head < n {
            let body_start = sent + from_head - head.len();
            chunk[from_head..n].copy_from_slice(&body[body_start..body_start + n - from_head]);
        }
        sent += n;
        let last = sent == total;
        let p = Packet {
            op: OP_CALL,
            thread,
            flags: if last { 0 } else { FLAG_MORE },
            arg0: u64::from(call),
            arg1: total as u64,
        };
        if !last {
            send::<H, M>(m, wait, max_sleep_ns, &p, &chunk[..n]);
            continue;
        }
        let mut first = [0u8; RING_PAYLOAD_BYTES];
        call_for_bytes::<H, M>(m, wait, max_sleep_ns, &p, &chunk[..n], &mut first);
        return take_reply::<H, M>(m, wait, max_sleep_ns, thread, &first, reply);
    }
}

/// The result of the thread's host call that the host answered with
/// [`STATUS_PENDING`](rt_abi::hostcall::STATUS_PENDING): sends
/// [`OP_CALL_WAIT`](rt_abi::hostcall::OP_CALL_WAIT) and reads the answer as
/// [`host_call`] does, which may be `STATUS_PENDING` again (the host held
/// the packet as long as the ring could spare its slot).
pub fn call_wait<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, thread: u32, reply: &mut [u8]) -> (i64, u64) {
    let p = Packet { op: rt_abi::hostcall::OP_CALL_WAIT, thread, flags: FLAG_REPLY, arg0: 0, arg1: 0 };
    let mut first = [0u8; RING_PAYLOAD_BYTES];
    call_for_bytes::<H, M>(m, wait, max_sleep_ns, &p, &[], &mut first);
    take_reply::<H, M>(m, wait, max_sleep_ns, thread, &first, reply)
}

/// A call's answer in its slot (`first`: [`ReplyHead`] and the reply's
/// first bytes): copies up to `reply.len()` bytes of the reply into
/// `reply`, fetching beyond the first slot with `OP_CALL_MORE`; returns
/// the status and the reply's total length.
fn take_reply<H: Hal, M: RingMem>(
    m: &M,
    wait: &AtomicU32,
    max_sleep_ns: u32,
    thread: u32,
    first: &[u8; RING_PAYLOAD_BYTES],
    reply: &mut [u8],
) -> (i64, u64) {
    use rt_abi::hostcall::{FIRST_REPLY_BYTES, REPLY_HEAD_BYTES, ReplyHead};
    let mut head_bytes = [0u8; REPLY_HEAD_BYTES];
    head_bytes.copy_from_slice(&first[..REPLY_HEAD_BYTES]);
    let rh = ReplyHead::from_bytes(&head_bytes);
    let want = reply.len().min(usize::try_from(rh.total).unwrap_or(usize::MAX));
    let n = want.min(FIRST_REPLY_BYTES);
    reply[..n].copy_from_slice(&first[REPLY_HEAD_BYTES..REPLY_HEAD_BYTES + n]);
    if n < want {
        let fetch: fn(&M, &AtomicU32, u32, u32, usize, &mut [u8]) = fetch_reply::<H, M>;
        out_of_line(fetch)(m, wait, max_sleep_ns, thread, n, &mut reply[..want]);
    }
    (rh.status, rh.total)
}

/// Most `OP_CALL_MORE` packets in flight at once: a long reply (a file
/// read) comes back this many slots per round trip instead of one.
const FETCH_IN_FLIGHT: usize = 8;

/// Fills `out[from..]` with the thread's last reply from offset `from` on,
/// keeping up to [`FETCH_IN_FLIGHT`] `OP_CALL_MORE` packets in flight and
/// reading their replies in ticket order. Never inlined (see [`send_packet`]).
///
/// A slot is free for ticket `t` once ticket `t - capacity` is done with it.
/// With other threads' packets in between, that can be one of our own
/// unread replies: those are read before waiting for the slot, so a thread
/// never waits on itself.
#[inline(never)]
fn fetch_reply<H: Hal, M: RingMem>(m: &M, wait: &AtomicU32, max_sleep_ns: u32, thread: u32, from: usize, out: &mut [u8]) {
    use rt_abi::hostcall::OP_CALL_MORE;
    let cap = m.capacity();
    // Unread replies: (ticket, offset), oldest first.
    let mut pending = [(0u64, 0usize); FETCH_IN_FLIGHT];
    let (mut first, mut len) = (0usize, 0usize);
    let read_oldest = |pending: &[(u64, usize); FETCH_IN_FLIGHT], first: &mut usize, len: &mut usize, out: &mut [u8]| {
        let (t, at) = pending[*first];
        let k = (out.len() - at).min(RING_PAYLOAD_BYTES);
        read_reply_at::<H, M>(m, wait, max_sleep_ns, place(m, t), &mut out[at..at + k]);
        *first = (*first + 1) % FETCH_IN_FLIGHT;
        *len -= 1;
    };
    let mut at = from;
    while at < out.len() || len > 0 {
        if len == FETCH_IN_FLIGHT || at >= out.len() {
            read_oldest(&pending, &mut first, &mut len, out);
            continue;
        }
        // `send_packet` split in two: our own older replies are read between
        // taking the ticket and waiting for its slot, where the slot waits
        // on them.
        let t = take_ticket(m);
        while len > 0 && t >= pending[first].0 + cap {
            read_oldest(&pending, &mut first, &mut len, out);
        }
        let p = Packet { op: OP_CALL_MORE, thread, flags: FLAG_REPLY, arg0: at as u64, arg1: 0 };
        publish_at::<H, M>(m, wait, max_sleep_ns, place(m, t), &p, &[]);
        pending[(first + len) % FETCH_IN_FLIGHT] = (t, at);
        len += 1;
        at += RING_PAYLOAD_BYTES;
    }
}
