//! Test doubles of the two ends, for this crate's tests and the launcher's:
//! a sink that keeps every write, a device-side producer written from the
//! protocol docs, ring memory, and a seeded generator for fuzzing.
use std::mem::offset_of;
use std::prelude::rust_2024::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::protocol::*;

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

/// Zeroed memory for a ring of `cap` slots.
pub fn ring_words(cap: u32) -> Vec<AtomicU64> {
    (0..ring_bytes(cap) / 8).map(|_| AtomicU64::new(0)).collect()
}

/// A minimal device-side producer, written from the protocol docs.
pub struct Producer<'a> {
    pub words: &'a [AtomicU64],
    pub cap: u64,
}

impl Producer<'_> {
    fn word(&self, t: u64, field: usize) -> &AtomicU64 {
        let base = (RING_SLOTS_OFFSET + (t % self.cap) as usize * RING_SLOT_BYTES) / 8;
        &self.words[base + field / 8]
    }

    /// Sends one packet; returns its ticket.
    pub fn send(&self, thread: u32, op: u32, flags: u32, arg0: u64, payload: &[u8]) -> u64 {
        let head = &self.words[offset_of!(RingHeader, head) / 8];
        let t = head.fetch_add(1, Ordering::Relaxed);
        while self.word(t, offset_of!(RingSlotHeader, seq)).load(Ordering::Acquire) != t {
            std::thread::yield_now();
        }
        self.word(t, offset_of!(RingSlotHeader, op))
            .store(u64::from(op) | (u64::from(thread) << 32), Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, len))
            .store(payload.len() as u64 | (u64::from(flags) << 32), Ordering::Relaxed);
        self.word(t, offset_of!(RingSlotHeader, arg0)).store(arg0, Ordering::Relaxed);
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

    /// Waits for the host's reply to ticket `t`, then frees the slot.
    pub fn await_reply(&self, t: u64) {
        while self.word(t, offset_of!(RingSlotHeader, reply_seq)).load(Ordering::Acquire) != t + 1 {
            std::thread::yield_now();
        }
        self.word(t, offset_of!(RingSlotHeader, seq)).store(t + self.cap, Ordering::Release);
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

