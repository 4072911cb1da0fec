use std::mem::offset_of;
use std::prelude::rust_2024::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::{format, vec};

use rt_abi::protocol::*;

use super::calls::{FsAccess, HostCalls};
use super::server::{Server, Shared, last_line};
use super::testing::{Producer, Rng, TempDir, VecSink, request, ring_words, tickets_taken};
use super::*;
use rt_abi::hostcall::*;

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
    let p = Producer::new(&words, 64);
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
    assert_eq!(s.settle(&shared).unwrap(), 4);
    let out = sink.0.lock().unwrap().clone();
    assert_eq!(out, vec![(2, b"from two\n".to_vec()), (1, long_a.clone())]);
    let r = s.finish();
    assert_eq!(r.last_lines[&2], "from two");
    assert!(r.last_lines[&1].starts_with("abc"));
}

#[test]
fn unfinished_writes_are_flushed_at_the_end() {
    let words = setup(8);
    let p = Producer::new(&words, 8);
    p.send(0, OP_WRITE, FLAG_MORE, 1, b"partial ");
    let sink = VecSink::default();
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 1, sink.clone());
    s.settle(&Shared::default()).unwrap();
    assert!(sink.0.lock().unwrap().is_empty());
    let r = s.finish();
    assert_eq!(sink.0.lock().unwrap()[0], (1, b"partial ".to_vec()));
    assert_eq!(r.last_lines[&0], "partial");
}

#[test]
fn exit_abort_and_thread_exit() {
    let words = setup(8);
    let p = Producer::new(&words, 8);
    p.send(3, OP_THREAD_EXIT, 0, 3, &[]);
    p.send(0, OP_ABORT, 0, 101, &[]);
    p.send(0, OP_EXIT, 0, 0, &[]);
    let shared = Shared::default();
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 4, VecSink::default());
    s.settle(&shared).unwrap();
    assert_eq!(shared.state.load(Ordering::Acquire), super::server::STATE_EXITED);
    assert_eq!(shared.code.load(Ordering::Relaxed), 101);
    let r = s.finish();
    assert_eq!(r.exit.unwrap(), super::server::ProgramExit { code: 101, aborted: true, thread: 0 });
    assert_eq!(r.exited_threads, vec![3]);
}

#[test]
fn negative_exit_codes_survive_either_extension() {
    let words = setup(8);
    let p = Producer::new(&words, 8);
    p.send(0, OP_EXIT, 0, (-3i64) as u64, &[]);
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 1, VecSink::default());
    s.settle(&Shared::default()).unwrap();
    assert_eq!(s.finish().exit.unwrap().code, -3);
    assert_eq!(exit_code(0xFFFF_FFFD), -3);
}

#[test]
fn replies_and_laps() {
    // Capacity 2: a slot whose reply is unread waits for the device to read
    // it before its next producer writes it, although the host has
    // consumed the packet.
    let words = setup(2);
    let p = Producer::new(&words, 2);
    let shared = Shared::default();
    let mut s = Server::new(RingView::new(&words, 2).unwrap(), 1, VecSink::default());
    let t0 = p.send(0, OP_NOP, FLAG_REPLY, 0, &[]);
    let t1 = p.send(0, OP_NOP, 0, 0, &[]);
    assert_eq!(s.settle(&shared).unwrap(), 2);
    let v = RingView::new(&words, 2).unwrap();
    assert_eq!(v.consumed(), 2);
    assert_eq!(p.unread[0].load(Ordering::Relaxed), t0 + 1, "ticket 0's reply is marked unread");
    // Ticket 2 maps to slot 0: its producer waits for ticket 0's reader.
    std::thread::scope(|sc| {
        let third = sc.spawn(|| p.send(0, OP_WRITE, 0, 1, b"x"));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(v.state(2).unwrap(), SlotState::Empty, "published over an unread reply");
        assert!(!third.is_finished());
        p.await_reply(t0);
        assert_eq!(third.join().unwrap(), 2);
    });
    assert_eq!(v.state(2).unwrap(), SlotState::Published);
    assert_eq!(s.settle(&shared).unwrap(), 1);
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
                let p = Producer::new(w, CAP);
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
    raw_args(words, cap, t, op, thread, len, flags, arg0, 0);
}

/// [`raw`] with `arg1`.
#[allow(clippy::too_many_arguments)]
fn raw_args(words: &[AtomicU64], cap: u64, t: u64, op: u32, thread: u32, len: u32, flags: u32, arg0: u64, arg1: u64) {
    let base = (RING_SLOTS_OFFSET + (t % cap) as usize * RING_SLOT_BYTES) / 8;
    words[base + 2].store(u64::from(op) | (u64::from(thread) << 32), Ordering::Relaxed);
    words[base + 3].store(u64::from(len) | (u64::from(flags) << 32), Ordering::Relaxed);
    words[base + 4].store(arg0, Ordering::Relaxed);
    words[base + 5].store(arg1, Ordering::Relaxed);
    words[base].store(t + 1, Ordering::Release);
}

#[test]
fn corrupt_packets_are_errors() {
    type Case = ((u32, u32, u32, u32, u64, u64), fn(&RingError) -> bool);
    let cases: [Case; 24] = [
        ((99, 0, 0, 0, 0, 0), |e| matches!(e, RingError::BadOp { op: 99, .. })),
        ((OP_MAX + 1, 0, 0, FLAG_REPLY, 0, 0), |e| matches!(e, RingError::BadOp { op: 9, .. })),
        ((OP_WRITE, 7, 1, 0, 1, 0), |e| matches!(e, RingError::BadThread { thread: 7, .. })),
        ((OP_WRITE, 0, 193, 0, 1, 0), |e| matches!(e, RingError::BadLen { len: 193, .. })),
        ((OP_WRITE, 0, u32::MAX, 0, 1, 0), |e| matches!(e, RingError::BadLen { .. })),
        ((OP_WRITE, 0, 1, 0, 3, 0), |e| matches!(e, RingError::BadFd { fd: 3, .. })),
        ((OP_WRITE, 0, 1, 0x80, 1, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_EXIT, 0, 0, FLAG_MORE, 0, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_THREAD_EXIT, 0, 0, 0, 9, 0), |e| matches!(e, RingError::BadThread { thread: 9, .. })),
        ((OP_RANDOM, 0, 0, FLAG_REPLY, 193, 0), |e| matches!(e, RingError::BadRandomLen { len: 193, .. })),
        ((OP_RANDOM, 0, 0, FLAG_REPLY, u64::MAX, 0), |e| matches!(e, RingError::BadRandomLen { .. })),
        ((OP_RANDOM, 0, 0, 0, 8, 0), |e| matches!(e, RingError::RandomWithoutReply { .. })),
        // Host calls: what a correct device end never sends.
        ((OP_CALL, 0, 0, 0, 1, 0), |e| matches!(e, RingError::CallWithoutReply { .. })),
        ((OP_CALL, 0, 0, FLAG_MORE | FLAG_REPLY, 1, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_CALL, 0, 0, 0x10 | FLAG_REPLY, 1, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_CALL, 0, 0, FLAG_REPLY, 1 << 32, 0), |e| matches!(e, RingError::BadCallNumber { call: 0x1_0000_0000, .. })),
        ((OP_CALL, 0, 0, FLAG_MORE, 1, MAX_REQUEST + 1), |e| matches!(e, RingError::CallTooLong { .. })),
        ((OP_CALL, 0, 0, FLAG_REPLY, 1, u64::MAX), |e| matches!(e, RingError::CallTooLong { .. })),
        ((OP_CALL, 0, 193, FLAG_REPLY, 1, 193), |e| matches!(e, RingError::BadLen { .. })),
        ((OP_CALL_MORE, 0, 0, 0, 0, 0), |e| matches!(e, RingError::CallMoreWithoutReply { .. })),
        ((OP_CALL_MORE, 0, 0, FLAG_MORE | FLAG_REPLY, 0, 0), |e| matches!(e, RingError::BadFlags { .. })),
        ((OP_CALL_WAIT, 0, 0, 0, 0, 0), |e| matches!(e, RingError::CallWaitWithoutReply { .. })),
        ((OP_CALL_WAIT, 0, 0, FLAG_MORE | FLAG_REPLY, 0, 0), |e| matches!(e, RingError::BadFlags { .. })),
        // A result asked for when no call was answered STATUS_PENDING.
        ((OP_CALL_WAIT, 0, 0, FLAG_REPLY, 0, 0), |e| matches!(e, RingError::WaitWithoutCall { .. })),
    ];
    for ((op, thread, len, flags, arg0, arg1), check) in cases {
        let words = setup(4);
        raw_args(&words, 4, 0, op, thread, len, flags, arg0, arg1);
        let mut s = Server::new(RingView::new(&words, 4).unwrap(), 4, VecSink::default());
        let e = s.settle(&Shared::default()).unwrap_err();
        assert!(check(&e), "op {op}: {e}");
        assert!(!e.to_string().is_empty());
    }
    // A sequence word no producer writes.
    let words = setup(4);
    words[RING_SLOTS_OFFSET / 8].store(77, Ordering::Relaxed);
    let mut s = Server::new(RingView::new(&words, 4).unwrap(), 4, VecSink::default());
    assert!(matches!(s.settle(&Shared::default()), Err(RingError::BadSeq { seq: 77, .. })));
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
            b[16..20].copy_from_slice(&((rng.next() % u64::from(OP_MAX + 2)) as u32).to_le_bytes());
            b[20..24].copy_from_slice(&((rng.next() % 6) as u32).to_le_bytes());
            b[24..28].copy_from_slice(&((rng.next() % 200) as u32).to_le_bytes());
            b[28..32].copy_from_slice(&((rng.next() % 4) as u32).to_le_bytes());
            if len >= 40 {
                b[32..40].copy_from_slice(&(rng.next() % 4).to_le_bytes());
            }
            if len >= 48 && rng.next() % 2 == 0 {
                b[40..48].copy_from_slice(&(rng.next() % (MAX_REQUEST + 2)).to_le_bytes());
            }
        }
        match decode_slot(&b, i, 4) {
            Ok(p) => {
                assert!(p.payload().len() <= RING_PAYLOAD_BYTES);
                assert!(p.thread < 4);
                match p.op {
                    Op::Call { total, .. } => {
                        assert!(total <= MAX_REQUEST);
                        assert!(p.more != p.reply, "exactly one of FLAG_MORE, FLAG_REPLY");
                    }
                    Op::CallMore { .. } => assert!(p.reply && !p.more),
                    _ => {}
                }
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
                2 => (rng.next() % u64::from(OP_MAX + 1)) | ((rng.next() % 6) << 32),
                _ => (rng.next() % 300) | ((rng.next() % 4) << 32),
            };
            words[w].store(v, Ordering::Relaxed);
        }
        let sink = VecSink::default();
        let mut s = Server::new(RingView::new(&words, cap).unwrap(), 1 + (round % 5), sink);
        for _ in 0..4 {
            if s.settle(&Shared::default()).is_err() {
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
                    let p = Producer::new(w, CAP);
                    for i in 0..lines_per {
                        p.write(th, 1, format!("~ln host {th} {i}\n").as_bytes());
                    }
                });
            }
            // The producers are joined at the end of the scope; stop after them.
            while tickets_taken(&words, CAP) < u64::from(threads) * lines_per as u64 {
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
    assert_eq!(s.settle(&Shared::default()).unwrap(), 1);
    let reply_seq = RING_SLOTS_OFFSET / 8 + offset_of!(RingSlotHeader, reply_seq) / 8;
    assert_eq!(words[reply_seq].load(Ordering::Acquire), 1, "no reply");
    let got: Vec<u64> = words[payload..payload + 8].iter().map(|w| w.load(Ordering::Relaxed)).collect();
    assert!(got.iter().any(|&w| w != 0), "no random bytes: {got:?}");
    assert!(words[payload + 8..payload + RING_PAYLOAD_BYTES / 8].iter().all(|w| w.load(Ordering::Relaxed) == 0));
    // A second draw (slot 1) differs from the first.
    raw(&words, 4, 1, OP_RANDOM, 0, 0, FLAG_REPLY, 64);
    assert_eq!(s.settle(&Shared::default()).unwrap(), 1);
    let second = RING_SLOTS_OFFSET / 8 + RING_SLOT_BYTES / 8 + size_of::<RingSlotHeader>() / 8;
    let got2: Vec<u64> = words[second..second + 8].iter().map(|w| w.load(Ordering::Relaxed)).collect();
    assert_ne!(got, got2);
}

// ---- host calls through the ring ----

/// A server for `threads` threads over `words`, serving calls with `calls`.
fn call_server(words: &[AtomicU64], cap: u32, threads: u32, calls: HostCalls) -> Server<'_, VecSink> {
    Server::new(RingView::new(words, cap).unwrap(), threads, VecSink::default()).with_calls(calls)
}

fn all_calls() -> HostCalls {
    HostCalls::with_stdin(FsAccess::All, std::io::empty())
}

fn path_bytes(p: &std::path::Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

/// `OPEN` flags and mode as the head word.
fn open_head(flags: u32, mode: u32) -> u64 {
    u64::from(flags) | (u64::from(mode) << 32)
}

#[test]
fn calls_are_answered_in_their_slot() {
    let words = setup(16);
    let p = Producer::new(&words, 16);
    let mut s = call_server(&words, 16, 2, all_calls());
    let cwd = path_bytes(&std::env::current_dir().unwrap());
    // GETCWD: an empty request, one packet.
    let t = p.call_request(1, CALL_GETCWD, &[]);
    // An unknown call: answered with EINVAL, the server goes on.
    let u = p.call_request(0, 99, b"whatever");
    // A short head.
    let v = p.call_request(1, CALL_READ, &[1, 2, 3]);
    assert_eq!(s.settle(&Shared::default()).unwrap(), 3);
    let (status, total, first) = p.reply_head(t);
    assert_eq!((status, total as usize), (0, cwd.len()));
    let n = cwd.len().min(FIRST_REPLY_BYTES);
    assert_eq!(first[..n], cwd[..n]);
    assert_eq!(p.reply_head(u), (-i64::from(errno::EINVAL), 0, vec![0; FIRST_REPLY_BYTES]));
    assert_eq!(p.reply_head(v).0, -i64::from(errno::EINVAL));
    let r = s.finish();
    assert_eq!((r.calls, r.packets), (3, 3));
    assert!(r.error.is_none());
}

#[test]
fn a_server_not_told_otherwise_denies_files() {
    let d = TempDir::new("ring-denied");
    std::fs::write(d.0.join("f"), b"x").unwrap();
    let words = setup(8);
    let p = Producer::new(&words, 8);
    let mut s = Server::new(RingView::new(&words, 8).unwrap(), 3, VecSink::default());
    let t = p.call_request(0, CALL_OPEN, &request(&[open_head(OPEN_READ, 0)], &[&d.path("f")]));
    let g = p.call_request(1, CALL_GETCWD, &[]);
    let i = p.call_request(2, CALL_STDIN_READ, &request(&[10], &[]));
    s.settle(&Shared::default()).unwrap();
    assert_eq!(p.reply_head(t).0, -i64::from(errno::EACCES));
    assert_eq!(p.reply_head(g).0, 0);
    let st = p.reply_head(i).0;
    assert!(st == 0 || st == -i64::from(errno::EAGAIN), "an empty stdin: {st}");
}

#[test]
fn long_replies_come_with_call_more() {
    const CAP: u32 = 8;
    let d = TempDir::new("ring-long");
    let words = setup(CAP);
    let shared = Shared::default();
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let report = std::thread::scope(|sc| {
        let server = call_server(&words, CAP, 2, all_calls());
        let handle = sc.spawn(|| server.serve(&shared));
        let p = Producer::new(&words, CAP);
        let (f, _) = p.call(1, CALL_OPEN, &request(&[open_head(OPEN_READ | OPEN_WRITE | OPEN_CREATE, 0o644)], &[&d.path("big")]), 0);
        assert!(f >= 3);
        // One write of 100 KB: 521 packets through an 8-slot ring.
        assert_eq!(p.call(1, CALL_WRITE, &request(&[f as u64], &[&data]), 0), (data.len() as i64, vec![]));
        assert_eq!(p.call(1, CALL_SEEK, &request(&[f as u64, SEEK_SET, 0], &[]), 0).0, 0);
        // One read of 100 KB: its reply fetched slot by slot.
        let (n, back) = p.call(1, CALL_READ, &request(&[f as u64, 200_000], &[]), usize::MAX);
        assert_eq!(n, data.len() as i64);
        assert!(back == data, "the read differs from the write");
        // Part of a long reply (the device's buffer is smaller).
        assert_eq!(p.call(1, CALL_SEEK, &request(&[f as u64, SEEK_SET, 0], &[]), 0).0, 0);
        let (n, part) = p.call(1, CALL_READ, &request(&[f as u64, 50_000], &[]), 1000);
        assert_eq!((n, &part[..]), (50_000, &data[..1000]));
        // The rest of that reply stays until its end is fetched ...
        let t = p.send(1, OP_CALL_MORE, FLAG_REPLY, 1000, &[]);
        assert_eq!(p.await_reply_bytes(t, RING_PAYLOAD_BYTES), data[1000..1000 + RING_PAYLOAD_BYTES]);
        let t = p.send(1, OP_CALL_MORE, FLAG_REPLY, 49_990, &[]);
        let mut tail = data[49_990..50_000].to_vec();
        tail.resize(RING_PAYLOAD_BYTES, 0);
        assert_eq!(p.await_reply_bytes(t, RING_PAYLOAD_BYTES), tail, "zeroed past the end");
        let t = p.send(1, OP_CALL_MORE, FLAG_REPLY, 49_900, &[]);
        assert_eq!(p.await_reply_bytes(t, 100), vec![0; 100], "let go once its end was fetched");
        // ... or the thread's next call.
        assert_eq!(p.call(1, CALL_SEEK, &request(&[f as u64, SEEK_SET, 0], &[]), 0).0, 0);
        let (n, part) = p.call(1, CALL_READ, &request(&[f as u64, 50_000], &[]), 1000);
        assert_eq!((n, &part[..]), (50_000, &data[..1000]));
        // ... and is no one else's: thread 0 has none.
        let t = p.send(0, OP_CALL_MORE, FLAG_REPLY, 0, &[]);
        assert_eq!(p.await_reply_bytes(t, RING_PAYLOAD_BYTES), vec![0; RING_PAYLOAD_BYTES]);
        // A new call drops it: an offset past the new (short) reply is zeros.
        assert_eq!(p.call(1, CALL_FSTAT, &request(&[f as u64], &[]), usize::MAX).1.len(), STAT_BYTES);
        let t = p.send(1, OP_CALL_MORE, FLAG_REPLY, 0, &[]);
        assert_eq!(p.await_reply_bytes(t, RING_PAYLOAD_BYTES), vec![0; RING_PAYLOAD_BYTES]);
        let t = p.send(1, OP_CALL_MORE, FLAG_REPLY, u64::MAX, &[]);
        assert_eq!(p.await_reply_bytes(t, RING_PAYLOAD_BYTES), vec![0; RING_PAYLOAD_BYTES]);
        assert_eq!(p.call(1, CALL_CLOSE, &request(&[f as u64], &[]), 0).0, 0);
        // A directory of 500 entries.
        let dir = d.0.join("many");
        std::fs::create_dir(&dir).unwrap();
        for i in 0..500 {
            std::fs::write(dir.join(format!("file-number-{i:03}")), b"").unwrap();
        }
        let (n, list) = p.call(0, CALL_READ_DIR, &path_bytes(&dir), usize::MAX);
        assert_eq!(n, 500);
        assert_eq!(list.len(), 500 * (3 + "file-number-000".len()));
        let mut names = Vec::new();
        for e in list.chunks(18) {
            assert_eq!((e[0], u16::from_le_bytes([e[1], e[2]])), (KIND_FILE, 15));
            names.push(String::from_utf8(e[3..].to_vec()).unwrap());
        }
        names.sort();
        assert_eq!(names, (0..500).map(|i| format!("file-number-{i:03}")).collect::<Vec<_>>());
        shared.stop.store(true, Ordering::Release);
        handle.join().unwrap()
    });
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.calls, 11);
}

#[test]
fn interleaved_requests_are_assembled_per_thread() {
    let d = TempDir::new("ring-interleave");
    let words = setup(64);
    let p = Producer::new(&words, 64);
    let mut s = call_server(&words, 64, 4, all_calls());
    let shared = Shared::default();
    let mut handles = [0i64; 3];
    for (th, h) in handles.iter_mut().enumerate().skip(1) {
        let path = d.path(&format!("f{th}"));
        let t = p.call_request(th as u32, CALL_OPEN, &request(&[open_head(OPEN_WRITE | OPEN_CREATE, 0o644)], &[&path]));
        s.settle(&shared).unwrap();
        *h = p.reply_head(t).0;
        assert!(*h >= 3);
    }
    // Threads 1 and 2 send 3-packet writes, packet by packet in turn;
    // thread 3 makes a whole call in between.
    let body = |th: u8| vec![b'0' + th; 2 * RING_PAYLOAD_BYTES + 10];
    let reqs: Vec<Vec<u8>> = (1..=2).map(|th| request(&[handles[th] as u64], &[&body(th as u8)])).collect();
    let mut last = [0u64; 3];
    for k in 0..3 {
        for th in 1..=2usize {
            let r = &reqs[th - 1];
            let chunk = &r[k * RING_PAYLOAD_BYTES..r.len().min((k + 1) * RING_PAYLOAD_BYTES)];
            let flags = if k == 2 { FLAG_REPLY } else { FLAG_MORE };
            last[th] = p.send_args(th as u32, OP_CALL, flags, CALL_WRITE.into(), r.len() as u64, chunk);
        }
        if k == 1 {
            last[0] = p.call_request(3, CALL_STAT, &request(&[1], &[&d.path("f1")]));
        }
    }
    s.settle(&shared).unwrap();
    let (st, total, _) = p.reply_head(last[0]);
    assert_eq!((st, total), (0, STAT_BYTES as u64), "stat while thread 1's write was incomplete");
    for th in 1..=2 {
        assert_eq!(p.reply_head(last[th]).0, body(th as u8).len() as i64);
        assert_eq!(std::fs::read(d.0.join(format!("f{th}"))).unwrap(), body(th as u8));
    }
    assert_eq!(s.finish().calls, 5);
}

#[test]
fn call_assembly_errors() {
    type Script = fn(&Producer);
    let cases: [(Script, fn(&RingError) -> bool); 7] = [
        // A different call while one is being assembled.
        (
            |p| {
                p.send_args(0, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 400, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(0, OP_CALL, FLAG_MORE, CALL_READ_DIR.into(), 400, &[0; RING_PAYLOAD_BYTES]);
            },
            |e| matches!(e, RingError::CallChanged { thread: 0, call: CALL_READ_DIR, was_call: CALL_WRITE, .. }),
        ),
        (
            |p| {
                p.send_args(0, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 400, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(0, OP_CALL, FLAG_REPLY, CALL_WRITE.into(), 500, &[0; 10]);
            },
            |e| matches!(e, RingError::CallChanged { total: 500, was_total: 400, .. }),
        ),
        // More bytes than announced: in one packet, in the first, later.
        (|p| _ = p.send_args(0, OP_CALL, FLAG_REPLY, 1, 5, &[0; 10]), |e| matches!(e, RingError::CallOverrun { total: 5, have: 10, .. })),
        (|p| _ = p.send_args(0, OP_CALL, FLAG_MORE, 1, 100, &[0; 192]), |e| matches!(e, RingError::CallOverrun { total: 100, .. })),
        (
            |p| {
                p.send_args(2, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 200, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(2, OP_CALL, FLAG_REPLY, CALL_WRITE.into(), 200, &[0; RING_PAYLOAD_BYTES]);
            },
            |e| matches!(e, RingError::CallOverrun { thread: 2, total: 200, have: 384, .. }),
        ),
        // Fewer: the last packet comes early.
        (
            |p| {
                p.send_args(1, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 1000, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(0, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 300, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(1, OP_CALL, FLAG_REPLY, CALL_WRITE.into(), 1000, &[0; 8]);
            },
            |e| matches!(e, RingError::CallShort { thread: 1, total: 1000, have: 200, .. }),
        ),
        // More of a reply in the middle of a request.
        (
            |p| {
                p.send_args(3, OP_CALL, FLAG_MORE, CALL_WRITE.into(), 1000, &[0; RING_PAYLOAD_BYTES]);
                p.send_args(3, OP_CALL_MORE, FLAG_REPLY, 0, 0, &[]);
            },
            |e| matches!(e, RingError::CallMoreMidRequest { thread: 3, .. }),
        ),
    ];
    for (script, check) in cases {
        let words = setup(16);
        let p = Producer::new(&words, 16);
        script(&p);
        let mut s = call_server(&words, 16, 4, HostCalls::denied());
        let e = s.settle(&Shared::default()).unwrap_err();
        assert!(check(&e), "{e:?}");
        assert!(!e.to_string().is_empty());
    }
    // A short single packet.
    let words = setup(4);
    let p = Producer::new(&words, 4);
    p.send_args(0, OP_CALL, FLAG_REPLY, 1, 20, &[0; 10]);
    let e = call_server(&words, 4, 1, HostCalls::denied()).settle(&Shared::default()).unwrap_err();
    assert!(matches!(e, RingError::CallShort { total: 20, have: 10, .. }), "{e:?}");
}

#[test]
fn concurrent_callers_through_a_small_ring() {
    const CAP: u32 = 4;
    const THREADS: u32 = 4;
    const ROUNDS: usize = 15;
    let d = TempDir::new("ring-concurrent");
    let words = setup(CAP);
    let shared = Shared::default();
    let report = std::thread::scope(|sc| {
        let server = call_server(&words, CAP, THREADS + 1, all_calls());
        let handle = sc.spawn(|| server.serve(&shared));
        let workers: Vec<_> = (0..THREADS)
            .map(|th| {
                let (words, d) = (&words, &d);
                sc.spawn(move || {
                    let p = Producer::new(words, CAP);
                    for round in 0..ROUNDS {
                        let path = d.path(&format!("t{th}-{round}"));
                        let data: Vec<u8> = (0..10_000).map(|i| (i as u32 * (th + 3) + round as u32) as u8).collect();
                        let flags = OPEN_READ | OPEN_WRITE | OPEN_CREATE_NEW;
                        let (f, _) = p.call(th, CALL_OPEN, &request(&[open_head(flags, 0o600)], &[&path]), 0);
                        assert!(f >= 3, "open: {f}");
                        let w = p.call(th, CALL_WRITE, &request(&[f as u64], &[&data]), 0);
                        assert_eq!(w.0, data.len() as i64);
                        assert_eq!(p.call(th, CALL_SEEK, &request(&[f as u64, SEEK_SET, 0], &[]), 0).0, 0);
                        let (n, back) = p.call(th, CALL_READ, &request(&[f as u64, 20_000], &[]), usize::MAX);
                        assert_eq!(n, data.len() as i64);
                        assert!(back == data, "thread {th} round {round}: read back differs");
                        let (s, st) = p.call(th, CALL_FSTAT, &request(&[f as u64], &[]), usize::MAX);
                        assert_eq!((s, Stat::from_bytes(st.as_slice().try_into().unwrap()).size), (0, 10_000));
                        assert_eq!(p.call(th, CALL_CLOSE, &request(&[f as u64], &[]), 0).0, 0);
                        assert_eq!(p.call(th, CALL_UNLINK, &path, 0).0, 0);
                    }
                    // A line between the calls, as a program would print.
                    p.write(th, 1, format!("thread {th} done\n").as_bytes());
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        shared.stop.store(true, Ordering::Release);
        handle.join().unwrap()
    });
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.calls, u64::from(THREADS) * ROUNDS as u64 * 7);
    assert_eq!(report.last_lines.len(), THREADS as usize);
    assert_eq!(std::fs::read_dir(&d.0).unwrap().count(), 0);
}

/// A well-formed request for `call` whose paths are all in `paths` (or
/// refused before use: empty, with a NUL, too long), numbers small.
fn fuzz_request(rng: &mut Rng, call: u32, paths: &[Vec<u8>]) -> (Vec<u64>, Vec<u8>) {
    let word = |rng: &mut Rng| match rng.next() % 4 {
        0 => 3 + rng.next() % 6, // a handle, maybe open
        1 => rng.next() % 3,
        2 => rng.next() % 5000,
        _ => (rng.next() % u64::from(OPEN_ALL + 1)) | (0o600 << 32),
    };
    let mut head: Vec<u64> = (0..head_words_of(call).unwrap_or(0)).map(|_| word(rng)).collect();
    let path = |rng: &mut Rng| -> Vec<u8> {
        let p = paths[(rng.next() % paths.len() as u64) as usize].clone();
        match rng.next() % 12 {
            0 => vec![],
            1 => [&p[..], b"\0"].concat(),
            2 => vec![b'x'; MAX_PATH + 1],
            _ => p,
        }
    };
    let body = match call {
        CALL_RENAME | CALL_COPY | CALL_SYMLINK | CALL_LINK => {
            let (a, b) = (path(rng), path(rng));
            head[0] = a.len() as u64;
            [a, b].concat()
        }
        CALL_WRITE => (0..rng.next() % 600).map(|_| rng.next() as u8).collect(),
        CALL_OPEN | CALL_STAT | CALL_READ_DIR | CALL_MKDIR | CALL_RMDIR | CALL_UNLINK | CALL_SET_PERM | CALL_READLINK
        | CALL_CANONICALIZE | CALL_CHDIR => path(rng),
        // Calls without a body, and unknown calls (never run).
        _ if rng.next() % 10 == 0 => vec![b'x'],
        _ => vec![],
    };
    (head, body)
}

/// Any head and body: junk paths, junk numbers, heads of the wrong length.
fn junk_request(rng: &mut Rng, paths: &[Vec<u8>]) -> (Vec<u64>, Vec<u8>) {
    let head = (0..rng.next() % 5)
        .map(|_| match rng.next() % 4 {
            0 => rng.next(),
            1 => 3 + rng.next() % 6,
            2 => paths[0].len() as u64,
            _ => rng.next() % 5000,
        })
        .collect();
    let body = match rng.next() % 4 {
        0 => vec![],
        1 => (0..rng.next() % 600).map(|_| rng.next() as u8).collect(),
        2 => [&paths[(rng.next() % paths.len() as u64) as usize][..], &paths[0][..]].concat(),
        _ => paths[(rng.next() % paths.len() as u64) as usize].clone(),
    };
    (head, body)
}

/// The names in the working directory (where relative paths land).
fn cwd_entries() -> Vec<std::ffi::OsString> {
    let mut v: Vec<_> = std::fs::read_dir(".").unwrap().map(|e| e.unwrap().file_name()).collect();
    v.sort();
    v
}

/// Random host-call traffic, mostly plausible: requests with random call
/// numbers, heads, bodies (paths in a temp dir, or junk), announced lengths
/// and flags, split into packets; `OP_CALL_MORE` at random offsets; other
/// opcodes in between. The server never panics, and either replies to every
/// packet that waits for one or stops with a [`RingError`].
#[test]
fn fuzz_host_calls_never_panic() {
    let d = TempDir::new("ring-fuzz");
    std::fs::create_dir(d.0.join("d0")).unwrap();
    std::fs::write(d.0.join("f0"), vec![1u8; 3000]).unwrap();
    std::os::unix::fs::symlink("f0", d.0.join("link")).unwrap();
    let paths: Vec<Vec<u8>> = ["f0", "f1", "d0", "d0/f1", "d0/d1", "link", "nope/x"].iter().map(|p| d.path(p)).collect();
    let mut rng = Rng(0xC0FF_EE00_1234_5678);
    let (mut replied, mut errors) = (0u64, 0u64);
    let cwd_before = cwd_entries();
    for round in 0..400u64 {
        const CAP: u32 = 256;
        let words = setup(CAP);
        let p = Producer::new(&words, CAP);
        let access = [FsAccess::All, FsAccess::ReadOnly, FsAccess::None][(round % 3) as usize];
        let stdin: Vec<u8> = (0..rng.next() % 300).map(|_| rng.next() as u8).collect();
        let threads = 1 + (rng.next() % 4) as u32;
        // Every other round may break the protocol (a wrong length, wrong
        // flags), now and then; the others only send what a correct device
        // end could, from a program that passes anything.
        let breaks = round % 2 == 1;
        let mut reply_tickets = Vec::new();
        let mut sent = 0usize;
        // Served as a device end waits: each packet that asks for a reply
        // is answered before its thread sends more.
        let calls = HostCalls::with_stdin(access, std::io::Cursor::new(stdin));
        let mut s = call_server(&words, CAP, threads, calls);
        let mut result = Ok(());
        let serve = |s: &mut Server<'_, VecSink>, result: &mut Result<(), RingError>| {
            if result.is_ok()
                && let Err(e) = s.settle(&Shared::default())
            {
                *result = Err(e);
            }
        };
        while sent < 180 && result.is_ok() {
            let th = (rng.next() % u64::from(threads)) as u32;
            match rng.next() % 10 {
                0..=6 => {
                    let call = (rng.next() % u64::from(CALL_MAX + 3)) as u32;
                    // Junk (any head, any body) only where it cannot change
                    // the file system: run as root, a junk path could be
                    // anywhere. Under `All`, well-formed requests on the
                    // temp dir's paths only.
                    let (head, body) = if access != FsAccess::All && rng.next() % 2 == 0 {
                        junk_request(&mut rng, &paths)
                    } else {
                        fuzz_request(&mut rng, call, &paths)
                    };
                    let req = request(&head, &[&body]);
                    let mut total = req.len() as u64;
                    if breaks && rng.next() % 100 == 0 {
                        total = match rng.next() % 3 {
                            0 => total + 1 + rng.next() % 300,
                            1 => total.saturating_sub(1 + rng.next() % 300),
                            _ => rng.next() % (MAX_REQUEST + 10),
                        };
                    }
                    let chunks: Vec<&[u8]> = if req.is_empty() { vec![&[][..]] } else { req.chunks(RING_PAYLOAD_BYTES).collect() };
                    for (i, c) in chunks.iter().enumerate() {
                        let mut flags = if i + 1 < chunks.len() { FLAG_MORE } else { FLAG_REPLY };
                        if breaks && rng.next() % 300 == 0 {
                            flags = (rng.next() % 4) as u32;
                        }
                        let t = p.send_args(th, OP_CALL, flags, u64::from(call), total, c);
                        sent += 1;
                        if flags & FLAG_REPLY != 0 {
                            reply_tickets.push(t);
                            serve(&mut s, &mut result);
                            if result.is_err() {
                                break;
                            }
                        }
                    }
                }
                7 | 8 => {
                    let offset = match rng.next() % 3 {
                        0 => rng.next(),
                        _ => rng.next() % 4000,
                    };
                    let flags = if breaks && rng.next() % 100 == 0 { (rng.next() % 4) as u32 } else { FLAG_REPLY };
                    let t = p.send_args(th, OP_CALL_MORE, flags, offset, rng.next() % 3, &[]);
                    if flags & FLAG_REPLY != 0 {
                        reply_tickets.push(t);
                        serve(&mut s, &mut result);
                    }
                    sent += 1;
                }
                _ => {
                    // A write or a no-op between the calls.
                    if rng.next() % 2 == 0 {
                        p.send(th, OP_WRITE, 0, 1 + rng.next() % 2, b"line\n");
                    } else {
                        reply_tickets.push(p.send(th, OP_NOP, FLAG_REPLY, 0, &[]));
                    }
                    sent += 1;
                }
            }
        }
        serve(&mut s, &mut result);
        match result {
            Ok(()) => {
                for &t in &reply_tickets {
                    assert!(p.replied(t), "round {round}: ticket {t} was never answered");
                }
                replied += 1;
            }
            Err(e) => {
                assert!(breaks, "round {round}: a correct device end's packets broke the protocol: {e}");
                let _ = e.to_string();
                errors += 1;
            }
        }
        let _ = s.finish();
    }
    assert!(replied >= 200 && errors > 50, "both outcomes should be common: {replied} served, {errors} errors");
    assert_eq!(cwd_entries(), cwd_before, "the fuzzer touched the working directory");
}

/// `mkfifo PATH` (coreutils): a FIFO nobody has opened.
fn make_fifo(path: &std::path::Path) {
    let ok = std::process::Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {} failed", path.display());
}

#[test]
fn a_blocked_call_holds_up_no_other_thread() {
    const CAP: u32 = 16;
    let d = TempDir::new("ring-fifo");
    let fifo = d.0.join("fifo");
    make_fifo(&fifo);
    std::fs::write(d.0.join("plain"), b"plain").unwrap();
    let words = setup(CAP);
    let shared = Shared::default();
    let sink = VecSink::default();
    let report = std::thread::scope(|sc| {
        let server = Server::new(RingView::new(&words, CAP).unwrap(), 3, sink.clone()).with_calls(all_calls());
        let handle = sc.spawn(|| server.serve(&shared));
        // Thread 0 opens the FIFO to read: the OS open waits for a writer.
        let (words, fifo) = (&words, &fifo);
        let blocked = sc.spawn(move || {
            let p = Producer::new(words, CAP);
            p.call(0, CALL_OPEN, &request(&[open_head(OPEN_READ, 0)], &[&path_bytes(fifo)]), 0).0
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        // Thread 1 prints ten rings' worth of lines and reads a file
        // meanwhile: the ring goes round past thread 0's slot many times.
        let p = Producer::new(words, CAP);
        for i in 0..10 * CAP {
            p.write(1, 1, format!("line {i}\n").as_bytes());
        }
        let (f, _) = p.call(1, CALL_OPEN, &request(&[open_head(OPEN_READ, 0)], &[&d.path("plain")]), 0);
        assert!(f >= 3, "open of a plain file while another thread's open blocks: {f}");
        assert_eq!(p.call(1, CALL_READ, &request(&[f as u64, 100], &[]), 100), (5, b"plain".to_vec()));
        assert!(!blocked.is_finished(), "nobody has opened the FIFO to write yet");
        // A writer comes: thread 0's open ends and it gets its handle.
        let writer = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        let h = blocked.join().unwrap();
        assert!(h >= 3 && h != f, "the FIFO's handle: {h}");
        drop(writer);
        shared.stop.store(true, Ordering::Release);
        handle.join().unwrap()
    });
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(report.pending_answers >= 1, "the blocked call's slot was given back with STATUS_PENDING");
    let out: Vec<u8> = sink.0.lock().unwrap().iter().flat_map(|(_, b)| b.clone()).collect();
    let want: String = (0..10 * CAP).map(|i| format!("line {i}\n")).collect();
    assert_eq!(String::from_utf8(out).unwrap(), want);
    assert!(report.calls_in_flight.is_empty());
}

#[test]
fn a_call_still_running_is_reported_and_not_waited_for() {
    const CAP: u32 = 8;
    let d = TempDir::new("ring-stuck");
    let fifo = d.0.join("fifo");
    make_fifo(&fifo);
    let words = setup(CAP);
    let shared = Shared::default();
    let p = Producer::new(&words, CAP);
    let mut s = call_server(&words, CAP, 2, all_calls());
    p.call_request(1, CALL_OPEN, &request(&[open_head(OPEN_READ, 0)], &[&path_bytes(&fifo)]));
    s.drain(&shared).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.drain(&shared).unwrap();
    assert_eq!(s.calls_running(), 1);
    // `finish` returns at once, leaving the worker blocked in the OS open.
    let r = s.finish();
    assert_eq!(r.calls_in_flight.len(), 1);
    assert_eq!((r.calls_in_flight[0].thread, r.calls_in_flight[0].call), (1, "open"));
    // Let the worker go (the process would otherwise keep it to its end).
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
}

/// 4,096 simulated threads, each with an unfinished long write and a 1 MiB
/// read whose reply it leaves unfetched, through a server with a 4 MiB
/// budget: what the server buffers (all charged to the budget) stays under
/// it, output is not lost, and reads come back short rather than failing.
#[test]
fn thousands_of_threads_stay_within_the_budget() {
    const CAP: u32 = 1024;
    const THREADS: u32 = 4096;
    const PRODUCERS: u32 = 8;
    const BUDGET: usize = 4 << 20;
    const PIECES: usize = 20;
    let d = TempDir::new("ring-budget");
    let data: Vec<u8> = (0..MAX_TRANSFER as u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(d.0.join("big"), &data).unwrap();
    let big = d.path("big");
    let words = setup(CAP);
    let shared = Shared::default();
    let sink = VecSink::default();
    let server = Server::new(RingView::new(&words, CAP).unwrap(), THREADS, sink.clone()).with_calls(all_calls()).with_budget(BUDGET);
    let budget = server.budget().clone();
    let (report, reads) = std::thread::scope(|sc| {
        let handle = sc.spawn(|| server.serve(&shared));
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|k| {
                let (words, big, data) = (&words, &big, &data);
                sc.spawn(move || {
                    let p = Producer::new(words, CAP);
                    let mine: Vec<u32> = (k..THREADS).step_by(PRODUCERS as usize).collect();
                    // Every thread's long line, a packet at a time, round robin:
                    // 4,096 unfinished writes of up to 3,840 bytes (15 MiB).
                    let piece = [b'x'; RING_PAYLOAD_BYTES];
                    for _ in 0..PIECES {
                        for &t in &mine {
                            p.send(t, OP_WRITE, FLAG_MORE, 1, &piece);
                        }
                    }
                    for &t in &mine {
                        p.send(t, OP_WRITE, 0, 1, b"\n");
                    }
                    // A 1 MiB read each, its reply left unfetched (kept by the
                    // host until the thread's next call): 4 GiB unbounded.
                    let mut reads = Vec::new();
                    let (f, _) = p.call(mine[0], CALL_OPEN, &request(&[open_head(OPEN_READ, 0)], &[big]), 0);
                    assert!(f >= 3, "open: {f}");
                    for &t in &mine {
                        assert_eq!(p.call(t, CALL_SEEK, &request(&[f as u64, SEEK_SET, 0], &[]), 0).0, 0);
                        let (n, total, first) = p.call_head(t, CALL_READ, &request(&[f as u64, MAX_TRANSFER], &[]));
                        assert!(n > 0 && n as u64 == total, "read: {n}, {total} bytes");
                        assert_eq!(first[..], data[..FIRST_REPLY_BYTES]);
                        reads.push(n as u64);
                    }
                    // Each thread's next call lets its kept reply go.
                    for &t in &mine {
                        assert_eq!(p.call(t, CALL_GETCWD, &[], 0).0, 0);
                    }
                    assert_eq!(p.call(mine[0], CALL_CLOSE, &request(&[f as u64], &[]), 0).0, 0);
                    reads
                })
            })
            .collect();
        let reads: Vec<u64> = producers.into_iter().flat_map(|h| h.join().unwrap()).collect();
        shared.stop.store(true, Ordering::Release);
        (handle.join().unwrap(), reads)
    });
    assert!(report.error.is_none(), "{:?}", report.error);
    let peak = report.peak_buffered;
    assert!(peak <= BUDGET, "peak {peak} bytes buffered, budget {BUDGET}");
    assert!(peak > BUDGET / 2, "the test should fill the budget: peak {peak}");
    assert_eq!(budget.used(), 0, "every buffer gave its charge back");
    // Every byte came out, some lines in pieces.
    let writes = sink.0.lock().unwrap();
    let bytes: usize = writes.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(bytes, THREADS as usize * (PIECES * RING_PAYLOAD_BYTES + 1));
    assert!(writes.len() > THREADS as usize, "over the budget, long writes are passed on in pieces");
    // Reads were cut short, never refused, and some got all they asked.
    assert_eq!(reads.len(), THREADS as usize);
    assert!(reads.iter().any(|&n| n < MAX_TRANSFER), "some reads came back short");
    assert!(reads.iter().all(|&n| n >= FIRST_REPLY_BYTES as u64));
}
