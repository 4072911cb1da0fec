//! Loom models of the handoff protocols (`RUSTFLAGS="--cfg loom" cargo test
//! -p rt-common --release`): spawn/join and detach, futex wait/wake, and the
//! ring's slot ownership (send, multi-packet write, reply). The real runtime
//! code runs over loom atomics ([`rt_common::primitive`]); every HAL sleep yields.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::vec::Vec;

use crate::cpu::{CpuHal, WarpCtx, set_ctx};
use rt_common::primitive::{AtomicU32, AtomicU64, Ordering::*};
use rt_abi::protocol::{FLAG_MORE, LaunchBlock, OP_NOP, OP_WRITE, THREAD_FREE, THREAD_RUNNING};
use rt_common::ring::{self, Packet, RingMem};
use rt_common::runtime::Runtime;
use rt_common::slot::Slot;
use rt_common::{futex, threads};

type H = CpuHal<32>;

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f)
}

/// Explores every interleaving with at most `preemptions` preemptions.
fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 20_000;
    b.check(f);
}

/// A runtime over a loom-built thread table of `n` slots.
struct World {
    rt: Runtime,
    slots: Vec<Slot>,
}

impl World {
    fn new(n: u32) -> Arc<World> {
        let w = Arc::new(World {
            rt: Runtime::new(),
            slots: (0..n).map(|_| Slot::new()).collect(),
        });
        w.slots[0].state.store(THREAD_RUNNING, Relaxed); // main, as warp_main sets it
        let lb = LaunchBlock {
            num_threads: n,
            lanes: 32,
            threads: w.slots.as_ptr() as u64,
            ..Default::default()
        };
        // SAFETY: before any other thread exists.
        unsafe { w.rt.init::<H>(&lb) };
        w
    }
}

fn as_warp(i: u32) {
    set_ctx(WarpCtx {
        index: i,
        lanes: 32,
        shared: core::ptr::null(),
    });
}

/// Warp 1's life: the idle loop until warp 0 raises its exit flag.
fn idle_warp(w: &Arc<World>) -> thread::JoinHandle<()> {
    let w = w.clone();
    thread::spawn(move || {
        as_warp(1);
        // SAFETY: warp 1's own slot of an initialised runtime.
        unsafe { threads::idle_loop::<H>(&w.rt, 1, &w.slots[1], 1000) };
    })
}

unsafe extern "C" fn write_42(data: *mut u8) {
    // SAFETY: `data` is the test's live UnsafeCell.
    let cell = unsafe { &*(data as *const UnsafeCell<u32>) };
    // SAFETY: loom checks this access against the protocol.
    cell.with_mut(|p| unsafe { *p = 42 });
}

#[test]
fn spawn_join_publishes_the_result() {
    model(|| {
        let w = World::new(2);
        let warp1 = idle_warp(&w);
        as_warp(0);
        let cell = Arc::new(UnsafeCell::new(0u32));
        let data = Arc::as_ptr(&cell) as *mut u8;
        // SAFETY: `write_42(data)` is sound once; `cell` outlives the join.
        let h = unsafe { threads::spawn::<H>(&w.rt, 0, write_42, data, None) };
        assert_eq!(h, 1);
        threads::join::<H>(&w.rt, h);
        // Join happens-after the thread's write (loom reports a race if not).
        // SAFETY: loom checks this access against the protocol.
        assert_eq!(cell.with(|p| unsafe { *p }), 42);
        assert_eq!(w.slots[1].state.load(Relaxed), THREAD_FREE);
        w.slots[1].exit.store(1, Relaxed);
        warp1.join().unwrap();
    });
}

unsafe extern "C" fn nothing(_: *mut u8) {}

#[test]
fn detach_frees_exactly_once() {
    model(|| {
        let w = World::new(2);
        let warp1 = idle_warp(&w);
        as_warp(0);
        // SAFETY: `nothing` is sound to call.
        let h = unsafe { threads::spawn::<H>(&w.rt, 0, nothing, core::ptr::null_mut(), None) };
        threads::detach::<H>(&w.rt, h);
        while w.slots[1].state.load(Relaxed) != THREAD_FREE {
            thread::yield_now();
        }
        // Reusable: a second spawn gets the same warp and runs.
        // SAFETY: as above.
        let h = unsafe { threads::spawn::<H>(&w.rt, 0, nothing, core::ptr::null_mut(), None) };
        assert_eq!(h, 1);
        threads::join::<H>(&w.rt, h);
        w.slots[1].exit.store(1, Relaxed);
        warp1.join().unwrap();
    });
}

/// What a detached thread and its handle share (std's packet, in miniature).
struct Shared {
    /// Written by the thread, read by `on_detach`.
    result: UnsafeCell<u32>,
    /// Read by the handle before it detaches, written by `on_detach` (as a
    /// free would).
    name: UnsafeCell<u32>,
    /// How often `on_detach` ran.
    ran: AtomicU32,
}

unsafe extern "C" fn set_result(data: *mut u8) {
    // SAFETY: `data` is the test's live `Shared`.
    let s = unsafe { &*(data as *const Shared) };
    // SAFETY: loom checks this access against the protocol.
    s.result.with_mut(|p| unsafe { *p = 42 });
}

unsafe extern "C" fn free_shared(data: *mut u8) {
    // SAFETY: as above.
    let s = unsafe { &*(data as *const Shared) };
    // SAFETY: loom checks both accesses against the protocol.
    assert_eq!(s.result.with(|p| unsafe { *p }), 42);
    s.name.with_mut(|p| unsafe { *p = 0 });
    s.ran.fetch_add(1, Relaxed);
}

#[test]
fn on_detach_runs_once_after_the_entry() {
    model(|| {
        let w = World::new(2);
        let warp1 = idle_warp(&w);
        as_warp(0);
        let shared = Arc::new(Shared {
            result: UnsafeCell::new(0),
            name: UnsafeCell::new(7),
            ran: AtomicU32::new(0),
        });
        let data = Arc::as_ptr(&shared) as *mut u8;
        // SAFETY: `set_result(data)` and then `free_shared(data)` are sound
        // once each; `shared` outlives both.
        let h = unsafe { threads::spawn::<H>(&w.rt, 0, set_result, data, Some(free_shared)) };
        // The handle reads what `on_detach` writes: the detach orders it.
        // SAFETY: loom checks this access against the protocol.
        assert_eq!(shared.name.with(|p| unsafe { *p }), 7);
        threads::detach::<H>(&w.rt, h);
        while w.slots[1].state.load(Acquire) != THREAD_FREE {
            thread::yield_now();
        }
        // Before the slot is free, whichever side ran it.
        assert_eq!(shared.ran.load(Relaxed), 1);
        w.slots[1].exit.store(1, Relaxed);
        warp1.join().unwrap();
    });
}

#[test]
fn futex_waiter_sees_the_store() {
    model(|| {
        let w = World::new(2);
        let word = Arc::new(AtomicU32::new(0));
        let (w2, word2) = (w.clone(), word.clone());
        let waiter = thread::spawn(move || {
            as_warp(1);
            while word2.load(Acquire) == 0 {
                futex::wait::<H>(&w2.rt, &word2, 0, u64::MAX);
            }
        });
        as_warp(0);
        word.store(1, Release);
        futex::wake(&word, 1);
        waiter.join().unwrap();
    });
}

#[test]
fn futex_mutex_excludes() {
    model(|| {
        let w = World::new(2);
        let lock = Arc::new((AtomicU32::new(0), UnsafeCell::new(0u32)));
        let body = |w: &World, l: &(AtomicU32, UnsafeCell<u32>)| {
            if l.0.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
                while l.0.swap(2, Acquire) != 0 {
                    futex::wait::<H>(&w.rt, &l.0, 2, u64::MAX);
                }
            }
            // SAFETY: loom checks this access against the protocol.
            l.1.with_mut(|p| unsafe { *p += 1 });
            if l.0.swap(0, Release) == 2 {
                futex::wake(&l.0, 1);
            }
        };
        let (w2, l2) = (w.clone(), lock.clone());
        let t = thread::spawn(move || {
            as_warp(1);
            body(&w2, &l2);
        });
        as_warp(0);
        body(&w, &lock);
        t.join().unwrap();
        // SAFETY: loom checks this access against the protocol.
        assert_eq!(lock.1.with(|p| unsafe { *p }), 2);
    });
}

/// A ring over loom atomics; payloads in loom cells (so loom checks that a
/// producer and the consumer never touch a slot at the same time, a
/// reply's reader and the slot's next producer included).
struct LoomRing {
    head: AtomicU64,
    seq: Vec<AtomicU64>,
    reply: Vec<AtomicU64>,
    consumed: AtomicU64,
    consumed_seen: AtomicU64,
    refreshing: AtomicU64,
    unread: Vec<AtomicU64>,
    data: Vec<UnsafeCell<(Packet, u8)>>,
}

impl LoomRing {
    fn new(cap: u64) -> Arc<LoomRing> {
        let p = Packet {
            op: 0,
            thread: 0,
            flags: 0,
            arg0: 0,
            arg1: 0,
        };
        Arc::new(LoomRing {
            head: AtomicU64::new(0),
            seq: (0..cap).map(AtomicU64::new).collect(),
            reply: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            consumed: AtomicU64::new(0),
            consumed_seen: AtomicU64::new(0),
            refreshing: AtomicU64::new(0),
            unread: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            data: (0..cap).map(|_| UnsafeCell::new((p, 0))).collect(),
        })
    }

    /// The host: consumes `n` tickets in order; returns (packet, first byte).
    fn consume(&self, n: u64) -> Vec<(Packet, u8)> {
        let cap = self.seq.len() as u64;
        (0..n)
            .map(|t| {
                let i = (t % cap) as usize;
                while self.seq[i].load(Acquire) != t + 1 {
                    thread::yield_now();
                }
                // SAFETY: loom checks this access against the protocol.
                let got = self.data[i].with(|p| unsafe { *p });
                self.consumed.store(t + 1, Release);
                if got.0.flags & rt_abi::protocol::FLAG_REPLY != 0 {
                    // SAFETY: loom checks this access against the protocol.
                    self.data[i].with_mut(|p| unsafe { (*p).1 = 99 }); // the reply
                    self.reply[i].store(t + 1, Release);
                }
                got
            })
            .collect()
    }
}

impl RingMem for LoomRing {
    /// The slot's index.
    type Slot = usize;
    fn capacity(&self) -> u64 {
        self.seq.len() as u64
    }
    fn tickets(&self) -> &AtomicU64 {
        &self.head
    }
    fn slot(&self, i: usize) -> usize {
        i
    }
    fn seq(&self, i: usize) -> &AtomicU64 {
        &self.seq[i]
    }
    fn reply_seq(&self, i: usize) -> &AtomicU64 {
        &self.reply[i]
    }
    fn consumed(&self) -> &AtomicU64 {
        &self.consumed
    }
    fn consumed_seen(&self) -> &AtomicU64 {
        &self.consumed_seen
    }
    fn refreshing(&self) -> &AtomicU64 {
        &self.refreshing
    }
    fn unread_reply(&self, i: usize) -> &AtomicU64 {
        &self.unread[i]
    }
    unsafe fn fill(&self, i: usize, p: &Packet, payload: &[u8]) {
        let b = payload.first().copied().unwrap_or(0);
        // SAFETY: loom checks this access against the protocol.
        self.data[i].with_mut(|d| unsafe { *d = (*p, b) });
    }
    unsafe fn read_payload(&self, i: usize, out: &mut [u8]) {
        // SAFETY: loom checks this access against the protocol.
        let b = self.data[i].with(|d| unsafe { (*d).1 });
        out.fill(b);
    }
}

#[test]
fn ring_two_producers_nothing_lost() {
    model(|| {
        let ring = LoomRing::new(2);
        let r2 = ring.clone();
        let producer = thread::spawn(move || {
            let wait = AtomicU32::new(0);
            let p = Packet {
                op: OP_WRITE,
                thread: 1,
                flags: 0,
                arg0: 1,
                arg1: 0,
            };
            ring::send::<H, _>(&*r2, &wait, 1000, &p, &[1]);
        });
        let r3 = ring.clone();
        let host = thread::spawn(move || r3.consume(2));
        let wait = AtomicU32::new(0);
        let p = Packet {
            op: OP_WRITE,
            thread: 2,
            flags: 0,
            arg0: 1,
            arg1: 0,
        };
        ring::send::<H, _>(&*ring, &wait, 1000, &p, &[2]);
        producer.join().unwrap();
        let mut got: Vec<(u32, u8)> = host
            .join()
            .unwrap()
            .iter()
            .map(|g| (g.0.thread, g.1))
            .collect();
        got.sort();
        assert_eq!(got, [(1, 1), (2, 2)]);
    });
}

#[test]
fn ring_full_write_waits_and_keeps_order() {
    model(|| {
        // Three packets through two slots: the third waits for the host.
        let ring = LoomRing::new(2);
        let r2 = ring.clone();
        let host = thread::spawn(move || r2.consume(3));
        let wait = AtomicU32::new(0);
        ring::write::<H, _>(&*ring, &wait, 1000, 1, 1, &[7u8; 400]);
        let flags: Vec<u32> = host
            .join()
            .unwrap()
            .iter()
            .map(|g| g.0.flags & FLAG_MORE)
            .collect();
        assert_eq!(flags, [FLAG_MORE, FLAG_MORE, 0]);
    });
}

#[test]
fn ring_reply_then_reuse() {
    model(|| {
        // Two slots: ticket 2 reuses the slot of ticket 0, a call, once the
        // host has consumed it and its reply is read. (A reuse racing the
        // reply's read is left to the CPU harness's
        // `long_replies_through_a_tiny_ring`: with a third thread, loom's
        // search takes more than minutes.)
        let ring = LoomRing::new(2);
        let r2 = ring.clone();
        let host = thread::spawn(move || r2.consume(3));
        let wait = AtomicU32::new(0);
        let packet = |op, flags| Packet { op, thread: 0, flags, arg0: 1, arg1: 0 };
        let mut got = [0u8; 1];
        ring::call_for_bytes::<H, _>(&*ring, &wait, 1000, &packet(OP_NOP, 0), &[], &mut got);
        assert_eq!(got, [99], "the host's reply");
        for b in [5, 6] {
            ring::send::<H, _>(&*ring, &wait, 1000, &packet(OP_WRITE, 0), &[b]);
        }
        let got = host.join().unwrap();
        assert_eq!((got[1].1, got[2].1), (5, 6));
    });
}

/// A slot's words for the `slot_free` models: the room's copy of the
/// host's count, the slot's unread-reply mark, the slot's payload.
struct SlotWords {
    seen: AtomicU64,
    unread: AtomicU64,
    payload: UnsafeCell<u8>,
}

/// `ring_room::slot_free`, the room's one look at both words, acquires what
/// `reply_read` released: a producer that finds ticket 0's slot free by the
/// room alone writes it after ticket 0's producer read its reply there.
#[test]
fn slot_free_acquires_the_reply_read() {
    use rt_common::ring_room::{reply_read, slot_free};
    model(|| {
        // Ticket 0 consumed (the room says so) and its reply, 7, unread.
        let w = Arc::new(SlotWords { seen: AtomicU64::new(1), unread: AtomicU64::new(1), payload: UnsafeCell::new(7) });
        let w2 = w.clone();
        let replied = thread::spawn(move || {
            // SAFETY: loom checks this access against the protocol.
            let got = w2.payload.with(|p| unsafe { *p });
            reply_read(&w2.unread);
            got
        });
        while !slot_free(&w.seen, &w.unread, 0) {
            thread::yield_now();
        }
        // SAFETY: loom checks this access against the protocol.
        w.payload.with_mut(|p| unsafe { *p = 9 });
        assert_eq!(replied.join().unwrap(), 7);
    });
}

/// `slot_free` acquires what `saw_consumed` released: the producer that
/// read the host's count passes on that the host's reads of the slot are
/// done (modelled here by that producer's own read of it).
#[test]
fn slot_free_acquires_the_host_count() {
    use rt_common::ring_room::{saw_consumed, slot_free};
    model(|| {
        let w = Arc::new(SlotWords { seen: AtomicU64::new(0), unread: AtomicU64::new(0), payload: UnsafeCell::new(7) });
        let refreshing = Arc::new(AtomicU64::new(1));
        let (w2, r2) = (w.clone(), refreshing.clone());
        let host = thread::spawn(move || {
            // SAFETY: loom checks this access against the protocol.
            let got = w2.payload.with(|p| unsafe { *p });
            saw_consumed(&w2.seen, &r2, 1);
            got
        });
        while !slot_free(&w.seen, &w.unread, 0) {
            thread::yield_now();
        }
        // SAFETY: loom checks this access against the protocol.
        w.payload.with_mut(|p| unsafe { *p = 9 });
        assert_eq!(host.join().unwrap(), 7);
    });
}
