//! A host-side ring consumer for the CPU harness (the launcher has the real
//! one). Consumes tickets in order, validates every field, assembles each
//! thread's multi-packet writes, answers `FLAG_REPLY` packets.

use std::string::String;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::vec::Vec;
use std::{format, vec};

use crate::protocol::{
    FLAG_MORE, FLAG_REPLY, OP_ABORT, OP_EXIT, OP_MAX, OP_NOP, OP_RANDOM, OP_THREAD_EXIT, OP_WRITE, RING_MAGIC,
    RING_PAYLOAD_BYTES, RING_SLOT_BYTES, RING_SLOTS_OFFSET, RingHeader, RingSlotHeader,
};

/// One completed `write` call of a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostWrite {
    pub thread: u32,
    pub fd: u32,
    pub bytes: Vec<u8>,
}

/// Everything the host received.
#[derive(Debug, Default)]
pub struct Received {
    pub writes: Vec<HostWrite>,
    pub exit: Option<(u32, i32)>,
    pub nops: u64,
    /// Random bytes sent in `OP_RANDOM` replies.
    pub random_bytes: u64,
    pub errors: Vec<String>,
}

/// Writes the header and the slots' initial sequence words (`seq = i`).
pub fn init_ring(base: *mut u8, capacity: u32) {
    assert!(capacity.is_power_of_two() && capacity >= 2);
    // SAFETY: `base` holds `ring_bytes(capacity)` zeroed, 128-aligned bytes.
    unsafe {
        let h = base as *mut RingHeader;
        (*h).magic = RING_MAGIC;
        (*h).capacity = capacity;
        for i in 0..capacity as usize {
            slot(base, i).seq.store(i as u64, Ordering::Relaxed);
        }
    }
}

/// The header's magic.
pub fn magic(base: *mut u8) -> u32 {
    // SAFETY: an initialised ring.
    unsafe { (*(base as *const RingHeader)).magic }
}

fn slot<'a>(base: *mut u8, i: usize) -> &'a RingSlotHeader {
    // SAFETY: slot `i < capacity` of a live ring.
    unsafe { &*(base.add(RING_SLOTS_OFFSET + i * RING_SLOT_BYTES) as *const RingSlotHeader) }
}

fn head<'a>(base: *mut u8) -> &'a AtomicU64 {
    // SAFETY: a live ring header.
    unsafe { &(*(base as *const RingHeader)).head }
}

/// Serves the ring at `base` until `stop` is set and every taken ticket has
/// been consumed.
pub fn serve(base: *mut u8, capacity: u32, stop: &AtomicBool) -> Received {
    let cap = capacity as u64;
    let mut r = Received::default();
    let mut pending: Vec<Option<(u32, Vec<u8>)>> = vec![];
    let mut t: u64 = 0;
    let mut idle = 0u32;
    loop {
        let i = (t % cap) as usize;
        let s = slot(base, i);
        // Acquire: the producer's payload (released at system scope) is
        // visible once we see its seq.
        if s.seq.load(Ordering::Acquire) == t + 1 {
            idle = 0;
            consume(base, i, t, &mut r, &mut pending);
            if s.flags_reply() {
                // The device frees the slot after reading the reply.
                s.reply_seq.store(t + 1, Ordering::Release);
            } else {
                // Release: we are done reading before the slot is reused.
                s.seq.store(t + cap, Ordering::Release);
            }
            t += 1;
            continue;
        }
        if stop.load(Ordering::Acquire) && head(base).load(Ordering::Acquire) <= t {
            break;
        }
        idle += 1;
        if idle < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    for (thread, p) in pending.into_iter().enumerate() {
        if let Some((fd, bytes)) = p {
            r.errors.push(format!(
                "thread {thread}: unfinished write of {} bytes",
                bytes.len()
            ));
            r.writes.push(HostWrite {
                thread: thread as u32,
                fd,
                bytes,
            });
        }
    }
    r
}

trait ReplyFlag {
    fn flags_reply(&self) -> bool;
}
impl ReplyFlag for RingSlotHeader {
    fn flags_reply(&self) -> bool {
        // SAFETY: read after acquiring seq, before handing the slot back.
        unsafe { std::ptr::read_volatile(&self.flags) & FLAG_REPLY != 0 }
    }
}

fn consume(
    base: *mut u8,
    i: usize,
    t: u64,
    r: &mut Received,
    pending: &mut Vec<Option<(u32, Vec<u8>)>>,
) {
    let s = slot(base, i);
    // SAFETY: we own the slot (seq == t + 1); the fields are plain data.
    let (op, thread, len, flags, arg0) = unsafe {
        (
            std::ptr::read_volatile(&s.op),
            std::ptr::read_volatile(&s.thread),
            std::ptr::read_volatile(&s.len),
            std::ptr::read_volatile(&s.flags),
            std::ptr::read_volatile(&s.arg0),
        )
    };
    if op > OP_MAX || len as usize > RING_PAYLOAD_BYTES || thread > 1 << 20 {
        r.errors.push(format!(
            "ticket {t}: bad packet op {op} len {len} thread {thread}"
        ));
        return;
    }
    // SAFETY: `len` validated against the payload size.
    let payload = unsafe {
        std::slice::from_raw_parts(
            (s as *const RingSlotHeader as *const u8).add(core::mem::size_of::<RingSlotHeader>()),
            len as usize,
        )
    };
    match op {
        OP_WRITE => {
            if arg0 != 1 && arg0 != 2 {
                r.errors.push(format!("ticket {t}: write to fd {arg0}"));
                return;
            }
            let th = thread as usize;
            if pending.len() <= th {
                pending.resize(th + 1, None);
            }
            let entry = pending[th].get_or_insert_with(|| (arg0 as u32, Vec::new()));
            entry.1.extend_from_slice(payload);
            if flags & FLAG_MORE == 0 {
                let (fd, bytes) = pending[th].take().unwrap();
                r.writes.push(HostWrite { thread, fd, bytes });
            }
        }
        OP_EXIT | OP_ABORT => {
            r.exit.get_or_insert((op, arg0 as u32 as i32));
        }
        OP_NOP => r.nops += 1,
        OP_RANDOM => {
            let n = arg0 as usize;
            if n > RING_PAYLOAD_BYTES || flags & FLAG_REPLY == 0 {
                r.errors.push(format!("ticket {t}: random request for {n} bytes, flags {flags:#x}"));
                return;
            }
            let mut bytes = [0u8; RING_PAYLOAD_BYTES];
            use std::io::Read;
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes[..n]))
                .expect("the CPU harness reads /dev/urandom");
            let out = (s as *const RingSlotHeader as *mut u8).wrapping_add(core::mem::size_of::<RingSlotHeader>());
            // SAFETY: we own the slot until the reply; `n` fits the payload.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, n) };
            r.random_bytes += n as u64;
        }
        OP_THREAD_EXIT => {}
        _ => unreachable!(),
    }
}
