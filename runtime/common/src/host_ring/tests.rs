use std::mem::offset_of;
use std::prelude::rust_2024::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::{format, vec};

use crate::protocol::*;

use super::server::{Server, Shared, last_line};
use super::testing::{Producer, Rng, VecSink, ring_words};
use super::*;

fn setup(cap: u32) -> Vec<AtomicU64> {
    let words = ring_words(cap);
    RingView::new(&words, cap).unwrap().init();
    words
}

#[test]
fn init_writes_header_and_sequence() {
    let words = setup(8);
    assert_eq!(words[0].load(Ordering::Relaxed), u64::from(RING_MAGIC) | (8 << 32));
    let v = RingView::new(&words, 8).unwrap();
    for t in 0..8 {
        assert_eq!(v.state(t).unwrap(), SlotState::Empty);
    }
    assert!(matches!(RingView::new(&words, 6), Err(RingError::BadCapacity(6))));
    assert!(matches!(RingView::new(&words, 16), Err(RingError::TooSmall { .. })));
}

#[test]
fn writes_are_assembled_per_thread() {
    let words = setup(64);
    let p = Producer { words: &words, cap: 64 };
    let long_a: Vec<u8> = (0..500).map(|i| b'a' + (i % 26) as u8).chain(*b"\n").collect();
    // Interleave: thread 1 starts a long write, thread 2 writes a line, thread 1 finishes.
    let chunks: Vec<&[u8]> = long_a.chunks(RING_PAYLOAD_BYTES).collect();
    p.send(1, OP_WRITE, FLAG_MORE, 1, chunks[0]);
    p.write(2, 2, b"from two\n");
    p.send(1, OP_WRITE, FLAG_MORE, 1, chunks[1]);
    p.send(1, OP_WRITE, 0, 1, chunks[2]);
    let sink = VecSink::default();
    let shared = Shared::default();
    let mut s = Server::new(RingView::new(&words, 64).unwrap(), 4, sink.clone());
    assert_eq!(s.drain(&shared).unwrap(), 4);
    let out = sink.0.lock().unwrap().clone();
    assert_eq!(out, vec![(2, b"from two\n".to_vec()), (1, long_a.clone())]);
    let r = s.finish();
    assert_eq!(r.last_lines[&2], "from two");
    assert!(r.last_lines[&1].starts_with("abc"));
}

#[test]
fn unfinished_writes_are_flushed_at_the_end() {
    let words = setup(8);
    let p = Producer { words: &words, cap: 8 };
    p.send(0, OP_WRITE, FLAG_MORE, 1, b"partial ");
    let sink = VecSink::default();
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 1, sink.clone());
    s.drain(&Shared::default()).unwrap();
    assert!(sink.0.lock().unwrap().is_empty());
    let r = s.finish();
    assert_eq!(sink.0.lock().unwrap()[0], (1, b"partial ".to_vec()));
    assert_eq!(r.last_lines[&0], "partial");
}

#[test]
fn exit_abort_and_thread_exit() {
    let words = setup(8);
    let p = Producer { words: &words, cap: 8 };
    p.send(3, OP_THREAD_EXIT, 0, 3, &[]);
    p.send(0, OP_ABORT, 0, 101, &[]);
    p.send(0, OP_EXIT, 0, 0, &[]);
    let shared = Shared::default();
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 4, VecSink::default());
    s.drain(&shared).unwrap();
    assert_eq!(shared.state.load(Ordering::Acquire), super::server::STATE_EXITED);
    assert_eq!(shared.code.load(Ordering::Relaxed), 101);
    let r = s.finish();
    assert_eq!(r.exit.unwrap(), super::server::ProgramExit { code: 101, aborted: true, thread: 0 });
    assert_eq!(r.exited_threads, vec![3]);
}

#[test]
fn negative_exit_codes_survive_either_extension() {
    let words = setup(8);
    let p = Producer { words: &words, cap: 8 };
    p.send(0, OP_EXIT, 0, (-3i64) as u64, &[]);
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 1, VecSink::default());
    s.drain(&Shared::default()).unwrap();
    assert_eq!(s.finish().exit.unwrap().code, -3);
    assert_eq!(exit_code(0xFFFF_FFFD), -3);
}

#[test]
fn replies_and_laps() {
    // Capacity 2: a reply slot stays device-owned until the device frees it.
    let words = setup(2);
    let p = Producer { words: &words, cap: 2 };
    let shared = Shared::default();
    let mut s = Server::new(RingView::new(&words, 2).unwrap(), 1, VecSink::default());
    let t0 = p.send(0, OP_NOP, FLAG_REPLY, 0, &[]);
    let t1 = p.send(0, OP_NOP, 0, 0, &[]);
    assert_eq!(s.drain(&shared).unwrap(), 2);
    // Ticket 2 maps to slot 0, still holding ticket 0's reply.
    let v = RingView::new(&words, 2).unwrap();
    assert_eq!(v.state(2).unwrap(), SlotState::ReplyPending);
    assert_eq!(s.drain(&shared).unwrap(), 0);
    p.await_reply(t0);
    assert_eq!(v.state(2).unwrap(), SlotState::Empty);
    p.send(0, OP_WRITE, 0, 1, b"x");
    assert_eq!(s.drain(&shared).unwrap(), 1);
    assert_eq!(t1, 1);
}

#[test]
fn backpressure_with_concurrent_producers() {
    const CAP: u32 = 4;
    const THREADS: u32 = 6;
    const LINES: usize = 200;
    let words = setup(CAP);
    let sink = VecSink::default();
    let shared = Shared::default();
    std::thread::scope(|sc| {
        let server = Server::new(RingView::new(&words, CAP).unwrap(), THREADS, sink.clone());
        let sh = &shared;
        let handle = sc.spawn(move || server.serve(sh));
        let mut producers = Vec::new();
        for th in 0..THREADS {
            let w = &words;
            producers.push(sc.spawn(move || {
                let p = Producer { words: w, cap: u64::from(CAP) };
                for i in 0..LINES {
                    // Long enough to need several packets.
                    let line = format!("thread {th} line {i} {}\n", "x".repeat(300));
                    p.write(th, 1, line.as_bytes());
                }
            }));
        }
        for p in producers {
            p.join().unwrap();
        }
        shared.stop.store(true, Ordering::Release);
        let r = handle.join().unwrap();
        assert!(r.error.is_none());
    });
    let out = sink.0.lock().unwrap();
    assert_eq!(out.len(), THREADS as usize * LINES);
    let mut next = vec![0usize; THREADS as usize];
    for (fd, bytes) in out.iter() {
        assert_eq!(*fd, 1);
        let s = std::str::from_utf8(bytes).unwrap();
        let mut it = s.split_whitespace();
        assert_eq!(it.next(), Some("thread"));
        let th: usize = it.next().unwrap().parse().unwrap();
        assert_eq!(it.next(), Some("line"));
        let i: usize = it.next().unwrap().parse().unwrap();
        assert_eq!(i, next[th], "thread {th}'s lines out of order or interleaved");
        next[th] += 1;
        assert!(s.ends_with(&format!("{}\n", "x".repeat(300))));
    }
}

/// Writes raw header fields into the slot of ticket `t` and publishes it.
#[allow(clippy::too_many_arguments)]
fn raw(words: &[AtomicU64], cap: u64, t: u64, op: u32, thread: u32, len: u32, flags: u32, arg0: u64) {
    let base = (RING_SLOTS_OFFSET + (t % cap) as usize * RING_SLOT_BYTES) / 8;
    words[base + 2].store(u64::from(op) | (u64::from(thread) << 32), Ordering::Relaxed);
    words[base + 3].store(u64::from(len) | (u64::from(flags) << 32), Ordering::Relaxed);
    words[base + 4].store(arg0, Ordering::Relaxed);
    words[base].store(t + 1, Ordering::Release);
}

#[test]
fn corrupt_packets_are_errors() {
    type Case = ((u32, u32, u32, u32, u64), fn(&RingError) -> bool);
    let cases: [Case; 11] = [
        ((99, 0, 0, 0, 0), |e| matches!(e, RingError::BadOp { op: 99, .. })),
        ((OP_WRITE, 7, 1, 0, 1), |e| matches!(e, RingError::BadThread { thread: 7, .. })),
        ((OP_WRITE, 0, 193, 0, 1), |e| matches!(e, RingError::BadLen { len: 193, .. })),
        ((OP_WRITE, 0, u32::MAX, 0, 1), |e| matches!(e, RingError::BadLen { .. })),
        ((OP_WRITE, 0, 1, 0, 3), |e| matches!(e, RingError::BadFd { fd: 3, .. })),
        ((OP_WRITE, 0, 1, 0x80, 1), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_EXIT, 0, 0, FLAG_MORE, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_THREAD_EXIT, 0, 0, 0, 9), |e| matches!(e, RingError::BadThread { thread: 9, .. })),
        ((OP_RANDOM, 0, 0, FLAG_REPLY, 193), |e| matches!(e, RingError::BadRandomLen { len: 193, .. })),
        ((OP_RANDOM, 0, 0, FLAG_REPLY, u64::MAX), |e| matches!(e, RingError::BadRandomLen { .. })),
        ((OP_RANDOM, 0, 0, 0, 8), |e| matches!(e, RingError::RandomWithoutReply { .. })),
    ];
    for ((op, thread, len, flags, arg0), check) in cases {
        let words = setup(4);
        raw(&words, 4, 0, op, thread, len, flags, arg0);
        let mut s = Server::new(RingView::new(&words, 4).unwrap(), 4, VecSink::default());
        let e = s.drain(&Shared::default()).unwrap_err();
        assert!(check(&e), "op {op}: {e}");
        assert!(!e.to_string().is_empty());
    }
    // A sequence word no producer writes.
    let words = setup(4);
    words[RING_SLOTS_OFFSET / 8].store(77, Ordering::Relaxed);
    let mut s = Server::new(RingView::new(&words, 4).unwrap(), 4, VecSink::default());
    assert!(matches!(s.drain(&Shared::default()), Err(RingError::BadSeq { seq: 77, .. })));
}

#[test]
fn served_corruption_stops_the_server_with_the_error() {
    let words = setup(4);
    raw(&words, 4, 0, 42, 0, 0, 0, 0);
    let shared = Shared::default();
    let r = Server::new(RingView::new(&words, 4).unwrap(), 1, VecSink::default()).serve(&shared);
    assert!(matches!(r.error, Some(RingError::BadOp { op: 42, .. })));
    assert_eq!(shared.state.load(Ordering::Acquire), super::server::STATE_BROKEN);
}

#[test]
fn fuzz_decode_slot_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ok = 0;
    for i in 0..200_000u64 {
        let len = (rng.next() % (RING_SLOT_BYTES as u64 + 16)) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if i % 2 == 0 && len >= 32 {
            // Make the header plausible half of the time so deeper checks run.
            b[16..20].copy_from_slice(&((rng.next() % 6) as u32).to_le_bytes());
            b[20..24].copy_from_slice(&((rng.next() % 6) as u32).to_le_bytes());
            b[24..28].copy_from_slice(&((rng.next() % 200) as u32).to_le_bytes());
            b[28..32].copy_from_slice(&((rng.next() % 4) as u32).to_le_bytes());
            if len >= 40 {
                b[32..40].copy_from_slice(&(rng.next() % 4).to_le_bytes());
            }
        }
        match decode_slot(&b, i, 4) {
            Ok(p) => {
                assert!(p.payload().len() <= RING_PAYLOAD_BYTES);
                assert!(p.thread < 4);
                ok += 1;
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    assert!(ok > 1000, "the fuzzer should also produce valid packets ({ok})");
}

#[test]
fn fuzz_served_ring_never_panics() {
    let mut rng = Rng(12345);
    for round in 0..300 {
        let cap = 1u32 << (rng.next() % 5);
        let words = setup(cap);
        // Scribble over random words, including sequence words, with values
        // that are sometimes plausible.
        for _ in 0..(rng.next() % 64) {
            let w = (rng.next() as usize) % words.len();
            let v = match rng.next() % 4 {
                0 => rng.next(),
                1 => rng.next() % 8,
                2 => (rng.next() % 6) | ((rng.next() % 6) << 32),
                _ => (rng.next() % 300) | ((rng.next() % 4) << 32),
            };
            words[w].store(v, Ordering::Relaxed);
        }
        let sink = VecSink::default();
        let mut s = Server::new(RingView::new(&words, cap).unwrap(), 1 + (round % 5), sink);
        for _ in 0..4 {
            if s.drain(&Shared::default()).is_err() {
                break;
            }
        }
        let _ = s.finish();
    }
}

#[test]
fn last_lines() {
    assert_eq!(last_line(b"a\nb\n\n").as_deref(), Some("b"));
    assert_eq!(last_line(b"partial").as_deref(), Some("partial"));
    assert_eq!(last_line(b"\n\n"), None);
    assert_eq!(last_line(&[0xff, b'\n']).as_deref(), Some("\u{fffd}"));
    let long = "y".repeat(500);
    assert_eq!(last_line(long.as_bytes()).unwrap().chars().count(), 201);
}

/// Host-only throughput of the server: `threads` host threads play the device
/// (the producer above) over the same ring layout, writing `~ln` lines; the
/// server writes them to the real stdout (`StdSink`). Run with
/// `cargo test -p launcher --release server_throughput -- --ignored --nocapture > /dev/null`
/// (or `| cat > /dev/null`, a pipe like `gpurun-dev bench`'s); results go to stderr.
#[test]
#[ignore = "a measurement, not a check; writes to stdout"]
fn server_throughput() {
    const CAP: u32 = 4096;
    for threads in [1u32, 4, 8] {
        let lines_per = 400_000 / threads as usize;
        let words = setup(CAP);
        let shared = Shared::default();
        let start = std::time::Instant::now();
        let r = std::thread::scope(|sc| {
            let server = Server::new(RingView::new(&words, CAP).unwrap(), threads, super::server::StdSink::default());
            let sh = &shared;
            let handle = sc.spawn(move || server.serve(sh));
            for th in 0..threads {
                let w = &words;
                sc.spawn(move || {
                    let p = Producer { words: w, cap: u64::from(CAP) };
                    for i in 0..lines_per {
                        p.write(th, 1, format!("~ln host {th} {i}\n").as_bytes());
                    }
                });
            }
            // The producers are joined at the end of the scope; stop after them.
            while RingView::new(&words, CAP).unwrap().head() < u64::from(threads) * lines_per as u64 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            shared.stop.store(true, Ordering::Release);
            handle.join().unwrap()
        });
        let secs = start.elapsed().as_secs_f64();
        assert!(r.error.is_none());
        assert_eq!(r.packets, u64::from(threads) * lines_per as u64);
        eprintln!(
            "server_throughput: {threads} producer threads: {:.0} lines/s ({:.2} µs/line)",
            r.packets as f64 / secs,
            secs * 1e6 / r.packets as f64
        );
    }
}

/// `OP_RANDOM`: the reply's payload holds the bytes asked for (from the OS
/// generator: two 64-byte draws differ), and nothing past them is written.
#[test]
fn random_requests_get_bytes_in_the_reply() {
    let words = setup(4);
    let payload = RING_SLOTS_OFFSET / 8 + size_of::<RingSlotHeader>() / 8;
    for w in &words[payload..payload + RING_PAYLOAD_BYTES / 8] {
        w.store(0, Ordering::Relaxed);
    }
    raw(&words, 4, 0, OP_RANDOM, 0, 0, FLAG_REPLY, 64);
    let mut s = Server::new(RingView::new(&words, 4).unwrap(), 1, VecSink::default());
    assert_eq!(s.drain(&Shared::default()).unwrap(), 1);
    let reply_seq = RING_SLOTS_OFFSET / 8 + offset_of!(RingSlotHeader, reply_seq) / 8;
    assert_eq!(words[reply_seq].load(Ordering::Acquire), 1, "no reply");
    let got: Vec<u64> = words[payload..payload + 8].iter().map(|w| w.load(Ordering::Relaxed)).collect();
    assert!(got.iter().any(|&w| w != 0), "no random bytes: {got:?}");
    assert!(words[payload + 8..payload + RING_PAYLOAD_BYTES / 8].iter().all(|w| w.load(Ordering::Relaxed) == 0));
    // A second draw (slot 1) differs from the first.
    raw(&words, 4, 1, OP_RANDOM, 0, 0, FLAG_REPLY, 64);
    assert_eq!(s.drain(&Shared::default()).unwrap(), 1);
    let second = RING_SLOTS_OFFSET / 8 + RING_SLOT_BYTES / 8 + size_of::<RingSlotHeader>() / 8;
    let got2: Vec<u64> = words[second..second + 8].iter().map(|w| w.load(Ordering::Relaxed)).collect();
    assert_ne!(got, got2);
}
