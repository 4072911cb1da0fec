//! The host end of the host-call ring ([`rt_abi::protocol`]; the device end
//! is [`rt_common::ring`]): a view over the ring's memory as a slice of atomic
//! words, the decoding of one slot, which validates every field before use,
//! and the server ([`server`]). The launcher serves GPU programs with it and
//! the CPU harness ([`crate::cpu`]) serves the runtime on OS threads with the
//! same code. Host only (feature `host`).
//!
//! The ring memory is shared with a device that may be buggy, so every read
//! is an atomic load (no data race whatever the device does) and nothing read
//! is trusted: the capacity and thread count come from the host's own launch,
//! and a bad opcode, length, flag, descriptor, thread index or sequence word
//! is a [`RingError`], never a panic or an out-of-bounds access. Decoding
//! works on a plain byte snapshot ([`decode_slot`]) so it can be fuzzed.
//!
//! Host calls ([`rt_abi::hostcall`]) draw one line between two kinds of bad
//! input. What no correct runtime sends (an unknown opcode, flags wrong for
//! the op, a call's last packet without `FLAG_REPLY`, a request longer than
//! [`MAX_REQUEST`] or than the length it announced) is a [`RingError`]: the
//! ring itself can no longer be trusted. What a buggy or hostile *program*
//! can make a correct runtime send (an unknown call number, a short head, a
//! bad handle, a bad path) is answered with `-errno` by [`calls`], and the
//! server goes on.

pub mod budget;
pub mod calls;
pub mod pool;
pub mod server;
pub mod testing;
#[cfg(test)]
mod tests;

use std::mem::offset_of;
use std::sync::atomic::{AtomicU64, Ordering};

use rt_abi::hostcall::{MAX_REQUEST, OP_CALL, OP_CALL_MORE, OP_CALL_WAIT};
use rt_abi::protocol::{
    FLAG_MORE, FLAG_REPLY, OP_ABORT, OP_EXIT, OP_MAX, OP_NOP, OP_RANDOM, OP_THREAD_EXIT, OP_WRITE, RING_MAGIC, RING_PAYLOAD_BYTES,
    RING_SLOT_BYTES, RING_SLOTS_OFFSET, RingHeader, RingSlotHeader, ring_bytes,
};

// The opcodes are dense: `decode_slot` accepts 0..=OP_MAX.
const _: () = assert!(OP_CALL == OP_RANDOM + 1 && OP_CALL_MORE == OP_CALL + 1 && OP_CALL_WAIT == OP_CALL_MORE + 1 && OP_MAX == OP_CALL_WAIT);

#[cfg(not(target_endian = "little"))]
compile_error!("the ring layout is little endian on both GPUs; a big-endian host would need byte swaps");

const WORD: usize = 8;
const SLOT_WORDS: usize = RING_SLOT_BYTES / WORD;
const PAYLOAD_OFFSET: usize = size_of::<RingSlotHeader>();

/// A ring protocol violation: the device wrote something no correct runtime
/// writes. Reported as "the GPU program broke the host-call protocol".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    #[error("ring memory of {have} bytes is too small for {capacity} slots ({need} bytes)")]
    TooSmall { have: usize, need: usize, capacity: u32 },
    #[error("ring capacity {0} is not a power of two")]
    BadCapacity(u32),
    #[error("slot snapshot of {0} bytes is shorter than a slot ({RING_SLOT_BYTES} bytes)")]
    Truncated(usize),
    #[error("slot {slot} (ticket {ticket}) has sequence word {seq}; a correct producer leaves {before} or {}", ticket + 1)]
    BadSeq { ticket: u64, slot: u64, seq: u64, before: u64 },
    #[error(
        "packet {ticket}: unknown opcode {op} (this launcher knows 0..={OP_MAX}); was the program built against another protocol version?"
    )]
    BadOp { ticket: u64, op: u32 },
    #[error("packet {ticket}: thread index {thread} but the launch has {num_threads} threads")]
    BadThread { ticket: u64, thread: u64, num_threads: u32 },
    #[error("packet {ticket}: payload length {len} exceeds the {RING_PAYLOAD_BYTES} bytes of a slot")]
    BadLen { ticket: u64, len: u32 },
    #[error("packet {ticket}: flag bits {flags:#x} are not valid for opcode {op}")]
    BadFlags { ticket: u64, op: u32, flags: u32 },
    #[error("packet {ticket}: write to file descriptor {fd}; only 1 (stdout) and 2 (stderr) exist")]
    BadFd { ticket: u64, fd: u64 },
    #[error("packet {ticket}: {len} random bytes asked for; a reply holds at most {RING_PAYLOAD_BYTES}")]
    BadRandomLen { ticket: u64, len: u64 },
    #[error("packet {ticket}: random bytes asked for without waiting for the reply (no FLAG_REPLY)")]
    RandomWithoutReply { ticket: u64 },
    #[error("packet {ticket}: host call number {call} does not fit the 32 bits the device end sends")]
    BadCallNumber { ticket: u64, call: u64 },
    #[error("packet {ticket}: a host call request of {total} bytes; the host assembles at most {MAX_REQUEST}")]
    CallTooLong { ticket: u64, total: u64 },
    #[error("packet {ticket}: the last packet of a host call request (no FLAG_MORE) does not wait for the reply (no FLAG_REPLY)")]
    CallWithoutReply { ticket: u64 },
    #[error("packet {ticket}: OP_CALL_MORE (the rest of a reply) without waiting for the reply (no FLAG_REPLY)")]
    CallMoreWithoutReply { ticket: u64 },
    #[error(
        "packet {ticket}: thread {thread} sent call {call} ({total} bytes) while its call {was_call} ({was_total} bytes) \
         was still being assembled"
    )]
    CallChanged { ticket: u64, thread: u32, call: u32, total: u64, was_call: u32, was_total: u64 },
    #[error("packet {ticket}: thread {thread}'s host call request has {have} bytes, more than the {total} it announced")]
    CallOverrun { ticket: u64, thread: u32, total: u64, have: u64 },
    #[error("packet {ticket}: thread {thread}'s host call request ended after {have} of the {total} bytes it announced")]
    CallShort { ticket: u64, thread: u32, total: u64, have: u64 },
    #[error("packet {ticket}: thread {thread} asked for more of a reply (OP_CALL_MORE) in the middle of sending a request")]
    CallMoreMidRequest { ticket: u64, thread: u32 },
    #[error("packet {ticket}: OP_CALL_WAIT (a pending call's result) without waiting for the reply (no FLAG_REPLY)")]
    CallWaitWithoutReply { ticket: u64 },
    #[error("packet {ticket}: thread {thread} sent a host call while its previous call was still running")]
    CallWhileRunning { ticket: u64, thread: u32 },
    #[error("packet {ticket}: thread {thread} asked for a call's result (OP_CALL_WAIT) but no answer of its was pending")]
    WaitWithoutCall { ticket: u64, thread: u32 },
}

/// A decoded, validated packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub ticket: u64,
    pub thread: u32,
    pub op: Op,
    /// `FLAG_MORE`: more packets of the same write or call request follow.
    pub more: bool,
    /// `FLAG_REPLY`: the device waits for `reply_seq`.
    pub reply: bool,
    len: u8,
    payload: [u8; RING_PAYLOAD_BYTES],
}

impl Packet {
    pub fn payload(&self) -> &[u8] {
        &self.payload[..self.len as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Nop,
    /// Bytes for fd 1 or 2.
    Write {
        fd: u8,
    },
    Exit {
        code: i32,
    },
    Abort {
        code: i32,
    },
    /// Random bytes, returned in the reply's payload.
    Random {
        len: u8,
    },
    ThreadExit {
        thread: u32,
    },
    /// A packet of a host call's request ([`rt_abi::hostcall`]): `call` is
    /// the `CALL_*` number (not checked here: an unknown one is answered
    /// with `-EINVAL`), `total` the request's length (≤ [`MAX_REQUEST`]).
    /// With `FLAG_MORE` on all but the last, which has `FLAG_REPLY`.
    Call {
        call: u32,
        total: u64,
    },
    /// The thread's last reply from `offset` on (`FLAG_REPLY`).
    CallMore {
        offset: u64,
    },
    /// The result of the thread's call answered `STATUS_PENDING` (`FLAG_REPLY`).
    CallWait,
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(w)
}

/// Exit codes travel as `arg0`; the low 32 bits are the `i32` code whether
/// the device sign- or zero-extended it.
fn exit_code(arg0: u64) -> i32 {
    arg0 as u32 as i32
}

/// Decodes and validates one slot's bytes (header and payload) for `ticket`.
/// The sequence word is not checked here (see [`RingView::state`]).
pub fn decode_slot(slot: &[u8], ticket: u64, num_threads: u32) -> Result<Packet, RingError> {
    if slot.len() < RING_SLOT_BYTES {
        return Err(RingError::Truncated(slot.len()));
    }
    let op = u32_at(slot, offset_of!(RingSlotHeader, op));
    let thread = u32_at(slot, offset_of!(RingSlotHeader, thread));
    let len = u32_at(slot, offset_of!(RingSlotHeader, len));
    let flags = u32_at(slot, offset_of!(RingSlotHeader, flags));
    let arg0 = u64_at(slot, offset_of!(RingSlotHeader, arg0));
    let arg1 = u64_at(slot, offset_of!(RingSlotHeader, arg1));
    if op > OP_MAX {
        return Err(RingError::BadOp { ticket, op });
    }
    if thread >= num_threads {
        return Err(RingError::BadThread { ticket, thread: thread.into(), num_threads });
    }
    if len as usize > RING_PAYLOAD_BYTES {
        return Err(RingError::BadLen { ticket, len });
    }
    let allowed = if op == OP_WRITE || op == OP_CALL { FLAG_MORE | FLAG_REPLY } else { FLAG_REPLY };
    if flags & !allowed != 0 {
        return Err(RingError::BadFlags { ticket, op, flags });
    }
    let op = match op {
        OP_NOP => Op::Nop,
        OP_WRITE => match arg0 {
            1 | 2 => Op::Write { fd: arg0 as u8 },
            fd => return Err(RingError::BadFd { ticket, fd }),
        },
        OP_EXIT => Op::Exit { code: exit_code(arg0) },
        OP_ABORT => Op::Abort { code: exit_code(arg0) },
        OP_THREAD_EXIT => {
            if arg0 >= u64::from(num_threads) {
                return Err(RingError::BadThread { ticket, thread: arg0, num_threads });
            }
            Op::ThreadExit { thread: arg0 as u32 }
        }
        OP_RANDOM => {
            if arg0 > RING_PAYLOAD_BYTES as u64 {
                return Err(RingError::BadRandomLen { ticket, len: arg0 });
            }
            if flags & FLAG_REPLY == 0 {
                return Err(RingError::RandomWithoutReply { ticket });
            }
            Op::Random { len: arg0 as u8 }
        }
        OP_CALL => {
            let Ok(call) = u32::try_from(arg0) else {
                return Err(RingError::BadCallNumber { ticket, call: arg0 });
            };
            if arg1 > MAX_REQUEST {
                return Err(RingError::CallTooLong { ticket, total: arg1 });
            }
            // All but the last packet: FLAG_MORE alone; the last: FLAG_REPLY alone.
            if flags == FLAG_MORE | FLAG_REPLY {
                return Err(RingError::BadFlags { ticket, op, flags });
            }
            if flags == 0 {
                return Err(RingError::CallWithoutReply { ticket });
            }
            Op::Call { call, total: arg1 }
        }
        OP_CALL_MORE => {
            if flags & FLAG_REPLY == 0 {
                return Err(RingError::CallMoreWithoutReply { ticket });
            }
            Op::CallMore { offset: arg0 }
        }
        OP_CALL_WAIT => {
            if flags & FLAG_REPLY == 0 {
                return Err(RingError::CallWaitWithoutReply { ticket });
            }
            Op::CallWait
        }
        _ => unreachable!("op ≤ OP_MAX was checked"),
    };
    let mut payload = [0u8; RING_PAYLOAD_BYTES];
    payload[..len as usize].copy_from_slice(&slot[PAYLOAD_OFFSET..PAYLOAD_OFFSET + len as usize]);
    Ok(Packet {
        ticket,
        thread,
        op,
        more: flags & FLAG_MORE != 0,
        reply: flags & FLAG_REPLY != 0,
        len: len as u8,
        payload,
    })
}

/// The state of the slot the host expects `ticket` in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Not yet published (its producer has not come, or holds it).
    Empty,
    /// Published: the host owns it.
    Published,
}

/// The ring's memory as atomic words. The host alone decides the capacity.
#[derive(Clone, Copy)]
pub struct RingView<'a> {
    words: &'a [AtomicU64],
    capacity: u32,
}

impl<'a> RingView<'a> {
    pub fn new(words: &'a [AtomicU64], capacity: u32) -> Result<Self, RingError> {
        if !capacity.is_power_of_two() {
            return Err(RingError::BadCapacity(capacity));
        }
        let need = ring_bytes(capacity);
        if words.len() * WORD < need {
            return Err(RingError::TooSmall { have: words.len() * WORD, need, capacity });
        }
        Ok(RingView { words, capacity })
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Writes the header and zero `consumed`, and sets each slot's `seq` to
    /// its index. Before launch.
    pub fn init(&self) {
        for w in &self.words[..ring_bytes(self.capacity) / WORD] {
            w.store(0, Ordering::Relaxed);
        }
        let magic_word = offset_of!(RingHeader, magic) / WORD;
        // magic (offset 0) and capacity (offset 4) share the first word.
        const _: () = assert!(offset_of!(RingHeader, capacity) == 4 && offset_of!(RingHeader, magic) == 0);
        self.words[magic_word].store(u64::from(RING_MAGIC) | (u64::from(self.capacity) << 32), Ordering::Relaxed);
        for i in 0..u64::from(self.capacity) {
            self.seq(i).store(i, Ordering::Relaxed);
        }
        // Release: the kernel launch that follows orders these for the device.
        std::sync::atomic::fence(Ordering::Release);
    }

    fn slot_word(&self, ticket: u64) -> usize {
        (RING_SLOTS_OFFSET + (ticket % u64::from(self.capacity)) as usize * RING_SLOT_BYTES) / WORD
    }

    fn seq(&self, ticket: u64) -> &AtomicU64 {
        &self.words[self.slot_word(ticket) + offset_of!(RingSlotHeader, seq) / WORD]
    }

    /// Classifies the slot of `ticket` (the next the host consumes) from its
    /// sequence word: the previous packet's publish (`ticket - capacity + 1`,
    /// or the slot's index before its first) until `ticket`'s producer
    /// publishes `ticket + 1`.
    pub fn state(&self, ticket: u64) -> Result<SlotState, RingError> {
        let cap = u64::from(self.capacity);
        // Acquire: pairs with the producer's system-scope release store of
        // `seq = t + 1`, so the payload reads below see its writes.
        let seq = self.seq(ticket).load(Ordering::Acquire);
        let before = if ticket < cap { ticket } else { ticket - cap + 1 };
        if seq == ticket.wrapping_add(1) {
            Ok(SlotState::Published)
        } else if seq == before {
            Ok(SlotState::Empty)
        } else {
            Err(RingError::BadSeq { ticket, slot: ticket % cap, seq, before })
        }
    }

    /// Copies the published slot of `ticket` and decodes it.
    pub fn read(&self, ticket: u64, num_threads: u32) -> Result<Packet, RingError> {
        let base = self.slot_word(ticket);
        let mut snap = [0u8; RING_SLOT_BYTES];
        for (i, w) in self.words[base..base + SLOT_WORDS].iter().enumerate() {
            // Relaxed is enough after the acquire load of `seq` in `state`.
            snap[i * WORD..(i + 1) * WORD].copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        decode_slot(&snap, ticket, num_threads)
    }

    /// Counts `ticket` (the next in order) consumed: its slot is free for
    /// ticket `ticket + capacity` once a reply, if it asked for one, is read.
    /// The reply may still be written after this.
    pub fn release(&self, ticket: u64) {
        // Release: our reads of the packet happen before its slot's next
        // producer writes it.
        self.consumed_word().store(ticket + 1, Ordering::Release);
    }

    /// The host's count of consumed tickets.
    pub fn consumed(&self) -> u64 {
        self.consumed_word().load(Ordering::Relaxed)
    }

    fn consumed_word(&self) -> &AtomicU64 {
        &self.words[offset_of!(RingHeader, consumed) / WORD]
    }

    /// Writes `bytes` (≤ [`RING_PAYLOAD_BYTES`]) to the payload of `ticket`'s
    /// slot: a reply, before [`reply`](Self::reply).
    pub fn write_payload(&self, ticket: u64, bytes: &[u8]) {
        let base = self.slot_word(ticket) + PAYLOAD_OFFSET / WORD;
        for (i, chunk) in bytes[..bytes.len().min(RING_PAYLOAD_BYTES)].chunks(WORD).enumerate() {
            let mut w = [0u8; WORD];
            w[..chunk.len()].copy_from_slice(chunk);
            // Relaxed: `reply`'s release store publishes them.
            self.words[base + i].store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
    }

    /// Tells the device waiting on `ticket` that its reply is in the slot.
    pub fn reply(&self, ticket: u64) {
        let w = self.slot_word(ticket) + offset_of!(RingSlotHeader, reply_seq) / WORD;
        // Release: the reply payload written before is visible to the device.
        self.words[w].store(ticket + 1, Ordering::Release);
    }
}

