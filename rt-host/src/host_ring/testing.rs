//! Test doubles of the two ends, for this crate's tests and the launcher's:
//! a sink that keeps every write, a device-side producer written from the
//! protocol docs, ring memory, and a seeded generator for fuzzing.
use std::mem::offset_of;
use std::prelude::rust_2024::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rt_abi::protocol::*;

use super::server::Sink;

/// A test sink collecting `(fd, bytes)` writes.
#[derive(Clone, Default)]
pub struct VecSink(pub Arc<Mutex<Writes>>);

/// `(fd, bytes)` of each write.
pub type Writes = Vec<(u8, Vec<u8>)>;

impl Sink for VecSink {
    fn write(&mut self, _thread: u32, fd: u8, bytes: &[u8]) {
        self.0.lock().unwrap().push((fd, bytes.to_vec()));
    }
}

/// Zeroed memory for a ring of `cap` slots, then one word, the test
/// producers' ticket counter, then their room (the device's are
/// `LaunchBlock::ring_tickets` and `LaunchBlock::ring_room`, in device
/// memory; the host never touches them).
pub fn ring_words(cap: u32) -> Vec<AtomicU64> {
    (0..ring_bytes(cap) / 8 + 1 + ring_room_bytes(cap) / 8).map(|_| AtomicU64::new(0)).collect()
}

/// Tickets [`Producer`]s have taken from ring memory made by [`ring_words`].
pub fn tickets_taken(words: &[AtomicU64], cap: u32) -> u64 {
    words[ring_bytes(cap) / 8].load(Ordering::Relaxed)
}

/// A minimal device-side producer, written from the protocol docs. It reads
/// the host's `consumed` every time (no copy of it in its room).
pub struct Producer<'a> {
    pub words: &'a [AtomicU64],
    pub cap: u64,
    /// The ticket counter (the device's `LaunchBlock::ring_tickets`).
    pub tickets: &'a AtomicU64,
    /// The room's unread-reply marks ([`RingRoom::unread_reply`]).
    pub unread: &'a [AtomicU64],
}

impl<'a> Producer<'a> {
    /// A producer of ring memory made by [`ring_words`], taking tickets from
    /// the word after the ring, with its room after that.
    pub fn new(words: &'a [AtomicU64], cap: u32) -> Self {
        let n = ring_bytes(cap) / 8;
        let unread = n + 1 + offset_of!(RingRoom, unread_reply) / 8;
        Producer {
            words: &words[..n],
            cap: u64::from(cap),
            tickets: &words[n],
            unread: &words[unread..unread + cap as usize],
        }
    }
}

impl Producer<'_> {
    fn word(&self, t: u64, field: usize) -> &AtomicU64 {
        let base = (RING_SLOTS_OFFSET + (t % self.cap) as usize * RING_SLOT_BYTES) / 8;
        &self.words[base + field / 8]
    }

    /// Sends one packet; returns its ticket.
    pub fn send(&self, thread: u32, op: u32, flags: u32, arg0: u64, payload: &[u8]) -> u64 {
        self.send_args(thread, op, flags, arg0, 0, payload)
    }

    /// [`send`](Self::send) with `arg1`.
    pub fn send_args(&self, thread: u32, op: u32, flags: u32, arg0: u64, arg1: u64, payload: &[u8]) -> u64 {
        let t = self.tickets.fetch_add(1, Ordering::Relaxed);
        let i = (t % self.cap) as usize;
        if let Some(prev) = t.checked_sub(self.cap) {
            let consumed = &self.words[offset_of!(RingHeader, consumed) / 8];
            while consumed.load(Ordering::Acquire) <= prev || self.unread[i].load(Ordering::Acquire) == prev + 1 {
                std::thread::yield_now();
            }
        }
        if flags & FLAG_REPLY != 0 {
            self.unread[i].store(t + 1, Ordering::Relaxed);
        }
        self.word(t, offset_of!(RingSlotHeader, op))
            .store(u64::from(op) | (u64::from(thread) << 32), Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, len))
            .store(payload.len() as u64 | (u64::from(flags) << 32), Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, arg0)).store(arg0, Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, arg1)).store(arg1, Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, reply_seq)).store(0, Ordering::Relaxed);
        for (i, chunk) in payload.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.word(t, size_of::<RingSlotHeader>() + i * 8).store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
        self.word(t, offset_of!(RingSlotHeader, seq)).store(t + 1, Ordering::Release);
        t
    }

    /// A `write` split into packets like the runtime does.
    pub fn write(&self, thread: u32, fd: u64, bytes: &[u8]) {
        let chunks: Vec<&[u8]> = bytes.chunks(RING_PAYLOAD_BYTES).collect();
        for (i, c) in chunks.iter().enumerate() {
            let flags = if i + 1 < chunks.len() { FLAG_MORE } else { 0 };
            self.send(thread, OP_WRITE, flags, fd, c);
        }
    }

    /// Waits for the host's reply to ticket `t`, then clears its unread mark.
    pub fn await_reply(&self, t: u64) {
        self.await_reply_bytes(t, 0);
    }

    /// Whether the host has replied to ticket `t`.
    pub fn replied(&self, t: u64) -> bool {
        self.word(t, offset_of!(RingSlotHeader, reply_seq)).load(Ordering::Acquire) == t + 1
    }

    /// Waits for the host's reply to ticket `t`, copies the first `n`
    /// (≤ [`RING_PAYLOAD_BYTES`]) bytes of its payload, then clears its
    /// unread mark.
    pub fn await_reply_bytes(&self, t: u64, n: usize) -> Vec<u8> {
        while !self.replied(t) {
            std::thread::yield_now();
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n.div_ceil(8) {
            out.extend_from_slice(&self.word(t, size_of::<RingSlotHeader>() + i * 8).load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(n);
        self.unread[(t % self.cap) as usize].store(0, Ordering::Release);
        out
    }

    /// Sends the packets of a host call's request (`head ++ body` in
    /// [`rt_abi::hostcall::OP_CALL`] packets) without waiting; returns the
    /// last one's ticket (its reply: [`reply_head`](Self::reply_head)).
    pub fn call_request(&self, thread: u32, call: u32, request: &[u8]) -> u64 {
        use rt_abi::hostcall::OP_CALL;
        let total = request.len() as u64;
        let mut chunks = request.chunks(RING_PAYLOAD_BYTES).peekable();
        if chunks.peek().is_none() {
            return self.send_args(thread, OP_CALL, FLAG_REPLY, call.into(), 0, &[]);
        }
        loop {
            let c = chunks.next().unwrap();
            if chunks.peek().is_none() {
                return self.send_args(thread, OP_CALL, FLAG_REPLY, call.into(), total, c);
            }
            self.send_args(thread, OP_CALL, FLAG_MORE, call.into(), total, c);
        }
    }

    /// Waits for the reply to the call whose last packet is ticket `t`;
    /// returns its status, total length and first bytes.
    pub fn reply_head(&self, t: u64) -> (i64, u64, Vec<u8>) {
        use rt_abi::hostcall::{REPLY_HEAD_BYTES, ReplyHead};
        let b = self.await_reply_bytes(t, RING_PAYLOAD_BYTES);
        let head = ReplyHead::from_bytes(b[..REPLY_HEAD_BYTES].try_into().unwrap());
        (head.status, head.total, b[REPLY_HEAD_BYTES..].to_vec())
    }

    /// A call's request, then its answer's status, total length and first
    /// bytes, asking with `OP_CALL_WAIT` for as long as the host answers
    /// `STATUS_PENDING` (the call still runs), as the device end does.
    pub fn call_head(&self, thread: u32, call: u32, request: &[u8]) -> (i64, u64, Vec<u8>) {
        use rt_abi::hostcall::{OP_CALL_WAIT, STATUS_PENDING};
        let t = self.call_request(thread, call, request);
        let mut head = self.reply_head(t);
        while head.0 == STATUS_PENDING {
            let t = self.send(thread, OP_CALL_WAIT, FLAG_REPLY, 0, &[]);
            head = self.reply_head(t);
        }
        head
    }

    /// A whole host call as the device end makes it, with a server serving
    /// the ring meanwhile: the request, then `OP_CALL_MORE` for the rest of
    /// a long reply (up to `cap` bytes). Returns the status and the reply.
    pub fn call(&self, thread: u32, call: u32, request: &[u8], cap: usize) -> (i64, Vec<u8>) {
        use rt_abi::hostcall::OP_CALL_MORE;
        let (status, total, first) = self.call_head(thread, call, request);
        let want = cap.min(total as usize);
        let mut reply = first;
        reply.truncate(want);
        while reply.len() < want {
            let k = (want - reply.len()).min(RING_PAYLOAD_BYTES);
            let t = self.send(thread, OP_CALL_MORE, FLAG_REPLY, reply.len() as u64, &[]);
            reply.extend_from_slice(&self.await_reply_bytes(t, k));
        }
        (status, reply)
    }
}

/// xorshift64*: a seeded generator, so failures reproduce.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}


/// A fresh directory under the system's temp dir, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// `$TMPDIR/rt-common-{name}-{pid}-{n}`, empty.
    pub fn new(name: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(std::format!("rt-common-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a temp dir");
        TempDir(dir)
    }

    /// `name` in the directory, as the bytes a request carries.
    pub fn path(&self, name: &str) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        self.0.join(name).as_os_str().as_bytes().to_vec()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::fs::remove_dir_all(&self.0).is_err() {
            // A test took a directory's permissions away: give them back.
            fn writable(p: &std::path::Path) {
                use std::os::unix::fs::PermissionsExt;
                if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
                    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
                    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                        writable(&e.path());
                    }
                }
            }
            writable(&self.0);
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A host call request: `head` as little-endian words, then the `body` parts.
pub fn request(head: &[u64], body: &[&[u8]]) -> Vec<u8> {
    let mut r: Vec<u8> = head.iter().flat_map(|w| w.to_le_bytes()).collect();
    for b in body {
        r.extend_from_slice(b);
    }
    r
}
