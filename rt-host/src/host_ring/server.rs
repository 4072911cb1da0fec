//! The host-call server: consumes tickets in order, assembles each thread's
//! writes until the packet without `FLAG_MORE` and hands the whole write to
//! the sink at once (so a thread's line is never interleaved with another's),
//! answers replies, records the program's exit, and remembers the last line
//! each thread printed (for timeout and fault reports).
//!
//! Host calls ([`rt_abi::hostcall`]) are assembled per thread the same way;
//! the last packet's call runs on a call worker ([`super::pool`]) when it
//! may block, and its reply (status, total length, first bytes) goes into
//! that packet's slot once it is done; meanwhile the server goes on with
//! the other packets. A call not done when the ring comes round to its slot
//! is answered `STATUS_PENDING` and its result given to the thread's
//! `OP_CALL_WAIT`. Calls of one thread are one at a time (it waits for each
//! reply); calls of different threads finish in any order. A reply longer
//! than the slot is kept, one per thread, for the thread's `OP_CALL_MORE`
//! packets until it has all been fetched or the thread's next call starts.
//! Everything buffered counts against one [`Budget`].

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::Write;
use std::prelude::rust_2024::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rt_abi::hostcall::{CALL_WRITE, FIRST_REPLY_BYTES, REPLY_HEAD_BYTES, ReplyHead, STATUS_PENDING, errno};
use rt_abi::protocol::RING_PAYLOAD_BYTES;

use super::budget::{Budget, Charged, DEFAULT_BUDGET};
use super::calls::{HostCalls, call_name};
use super::pool::{self, Done, Job, Pool, Reply};
use super::{Op, Packet, RingError, RingView, SlotState};

/// The process exit code when the host cannot give the program what the
/// protocol promises (random bytes): the launcher's "device or host fault"
/// code (`launcher::exit::DEVICE_FAULT`, checked there).
pub const HOST_FAILURE_EXIT: i32 = 5;

/// A write larger than this is passed on in pieces rather than buffered
/// whole (a program writing gigabytes in one call must not exhaust memory);
/// less when the [`Budget`] is spent.
pub const MAX_ASSEMBLED: usize = 16 << 20;
/// Longest "last line" kept per thread, in characters.
const LAST_LINE_CHARS: usize = 200;

/// What the host gives the program: where assembled writes go (the real
/// stdout/stderr, or a test buffer), and random bytes.
pub trait Sink: Send {
    /// One whole write of `thread` (never part of another thread's write).
    fn write(&mut self, thread: u32, fd: u8, bytes: &[u8]);
    /// Passes on what `write` buffered. The server calls it after each batch
    /// of packets, so output is never held back while the ring is idle.
    fn flush(&mut self) {}
    /// Fills `out` for an `OP_RANDOM` request, from the OS's generator
    /// (`/dev/urandom`) as `getrandom` does on a Linux host.
    fn random(&mut self, out: &mut [u8]) -> std::io::Result<()> {
        use std::io::Read;
        if out.is_empty() {
            return Ok(());
        }
        std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(out))
    }
}

/// Bytes [`StdSink`] buffers before writing them out mid-batch.
const SINK_BUFFER: usize = 64 << 10;

/// The process's stdout (fd 1) and stderr (fd 2). Consecutive writes to the
/// same fd are buffered and passed on in one system call per batch (one
/// `write(2)` per line was the server's main per-packet cost); a write to the
/// other fd first passes on the buffer, so the order across stdout and stderr
/// is kept. A closed stdout (e.g. `| head`) silently drops further output, as
/// a program killed by SIGPIPE would print nothing more; the device is still
/// served.
#[derive(Default)]
pub struct StdSink {
    stdout_closed: bool,
    /// Fd of the bytes in `buf`.
    fd: u8,
    buf: Vec<u8>,
}

impl Sink for StdSink {
    fn write(&mut self, _thread: u32, fd: u8, bytes: &[u8]) {
        if fd != self.fd {
            self.flush();
            self.fd = fd;
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= SINK_BUFFER {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if self.fd == 1 {
            if !self.stdout_closed {
                let mut out = std::io::stdout().lock();
                if out.write_all(&self.buf).and_then(|()| out.flush()).is_err() {
                    self.stdout_closed = true;
                }
            }
        } else {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(&self.buf).and_then(|()| err.flush());
        }
        self.buf.clear();
    }
}

/// How the program ended, from its `OP_EXIT` / `OP_ABORT` packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProgramExit {
    pub code: i32,
    pub aborted: bool,
    pub thread: u32,
}

/// What the main thread watches while the server runs.
#[derive(Default)]
pub struct Shared {
    /// Set by the main thread: handle what is published, then return.
    pub stop: AtomicBool,
    /// [`STATE_RUNNING`], [`STATE_EXITED`] or [`STATE_BROKEN`].
    pub state: AtomicU32,
    /// The exit code once `state` is [`STATE_EXITED`].
    pub code: AtomicI32,
}

pub const STATE_RUNNING: u32 = 0;
pub const STATE_EXITED: u32 = 1;
pub const STATE_BROKEN: u32 = 2;

/// What the server learnt, returned when it stops.
#[derive(Debug, Default)]
pub struct ServerReport {
    pub exit: Option<ProgramExit>,
    pub error: Option<RingError>,
    /// Last line printed by each thread that printed.
    pub last_lines: HashMap<u32, String>,
    /// Threads that sent `OP_THREAD_EXIT`.
    pub exited_threads: Vec<u32>,
    /// Thread of the most recent packet.
    pub last_thread: Option<u32>,
    pub packets: u64,
    /// `OP_NOP` round trips served.
    pub nops: u64,
    /// Random bytes sent in `OP_RANDOM` replies.
    pub random_bytes: u64,
    /// Host calls (`OP_CALL` requests) run.
    pub calls: u64,
    /// Calls answered `STATUS_PENDING` (their slot was needed before they
    /// finished).
    pub pending_answers: u64,
    /// Host calls still running when the server stopped, by thread.
    pub calls_in_flight: Vec<CallInFlight>,
    /// The most bytes buffered for the program at once (see [`Budget`]).
    pub peak_buffered: usize,
}

/// A host call that had not finished when the server stopped.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CallInFlight {
    pub thread: u32,
    /// [`call_name`] of the call.
    pub call: &'static str,
    /// How long it had run.
    pub seconds: f64,
}

/// A host call request being assembled.
struct Assembly {
    call: u32,
    total: u64,
    /// Bytes received (all kept unless `overflow`).
    have: u64,
    bytes: Charged,
    /// The budget could not keep all of it: a write keeps what came first
    /// (a short write); any other call fails with `ENOMEM`.
    overflow: bool,
}

/// A call running on a worker.
struct InFlight {
    call: u32,
    started: Instant,
    /// The ticket whose slot waits for the answer (the call's last packet,
    /// or an `OP_CALL_WAIT`), and since when; `None` once answered with
    /// `STATUS_PENDING` until the next `OP_CALL_WAIT`.
    held: Option<(u64, Instant)>,
    /// The result, when it came while no ticket was held.
    result: Option<Done>,
}

/// Bytes reserved up front for a multi-packet request: more only as they
/// come (a request's announced length is not an allocation the host makes).
const ASSEMBLY_RESERVE: usize = 64 << 10;

/// How long a held slot stays held at least once the ring needs it: a
/// thread whose call blocks costs one `OP_CALL_WAIT` round trip per this
/// much time at most, and the producer that needs its slot waits no longer.
const MIN_HOLD: Duration = Duration::from_millis(1);

pub struct Server<'a, S: Sink> {
    ring: RingView<'a>,
    num_threads: u32,
    next: u64,
    /// Unfinished (`FLAG_MORE`) writes per (thread, fd).
    pending: HashMap<(u32, u8), Charged>,
    /// Per thread: its last write that had a non-blank line, or that line
    /// already extracted (long writes). Turned into `last_lines` at the end,
    /// so the per-packet path does no string work.
    last: Vec<Vec<u8>>,
    sink: S,
    report: ServerReport,
    /// The host's side of `OP_CALL`s, shared with the workers.
    calls: Arc<HostCalls>,
    /// The call workers, started with the first call that may block.
    pool: Option<Pool>,
    /// What the buffers below (and the workers' replies) may hold together.
    budget: Arc<Budget>,
    /// Per thread: the call request it is sending (`FLAG_MORE` packets).
    assembling: HashMap<u32, Assembly>,
    /// Per thread: its last reply, where longer than the first slot, until
    /// the thread has fetched all of it or starts another call.
    replies: HashMap<u32, Charged>,
    /// Per thread: its call running on a worker.
    in_flight: HashMap<u32, InFlight>,
}

/// Packets handled before the sink is flushed even though more are
/// published (bounds how long output is held back under a steady stream).
const BATCH: usize = 1024;
/// Writes at most this long are kept as they are for the last-line report;
/// longer ones have their last line extracted at once.
const LAST_WRITE_KEPT: usize = 1024;
/// How long the server polls without sleeping after its last packet: a busy
/// ring never waits on a sleep (which lasts ≥ 50 µs with Linux's default
/// timer slack, whatever is asked).
const SPIN: Duration = Duration::from_micros(200);

impl<'a, S: Sink> Server<'a, S> {
    /// A server whose program gets no file system and an empty stdin
    /// ([`HostCalls::denied`]) unless [`with_calls`](Self::with_calls) says
    /// otherwise, with the [`DEFAULT_BUDGET`] for its buffers.
    pub fn new(ring: RingView<'a>, num_threads: u32, sink: S) -> Self {
        Server {
            ring,
            num_threads,
            next: 0,
            pending: HashMap::new(),
            last: Vec::new(),
            sink,
            report: ServerReport::default(),
            calls: Arc::new(HostCalls::denied()),
            pool: None,
            budget: Budget::new(DEFAULT_BUDGET),
            assembling: HashMap::new(),
            replies: HashMap::new(),
            in_flight: HashMap::new(),
        }
    }

    /// Serves the program's host calls (files, directories, stdin) with
    /// `calls`. Files still open when the last worker ends are closed.
    pub fn with_calls(mut self, calls: HostCalls) -> Self {
        self.calls = Arc::new(calls);
        self
    }

    /// Buffers at most `bytes` for the program (instead of [`DEFAULT_BUDGET`]).
    pub fn with_budget(mut self, bytes: usize) -> Self {
        self.budget = Budget::new(bytes);
        self
    }

    /// The budget the server's buffers are charged to.
    pub fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// Host calls running on workers now.
    pub fn calls_running(&self) -> usize {
        self.in_flight.len()
    }

    /// Handles every packet published in ticket order (at most [`BATCH`]),
    /// freeing each slot as soon as it is copied, and the results of calls
    /// that finished, then flushes the sink; returns how many packets.
    pub fn drain(&mut self, shared: &Shared) -> Result<usize, RingError> {
        let r = self.drain_batch(shared);
        self.answer_finished();
        self.release_holds();
        self.sink.flush();
        r
    }

    /// [`drain`](Self::drain)s until no call runs on a worker and nothing
    /// more is published (for tests that drive the server step by step).
    pub fn settle(&mut self, shared: &Shared) -> Result<usize, RingError> {
        let mut n = 0;
        loop {
            let k = self.drain(shared)?;
            n += k;
            if k == 0 && self.in_flight.values().all(|f| f.held.is_none()) {
                return Ok(n);
            }
            if k == 0 {
                std::thread::park_timeout(Duration::from_millis(1));
            }
        }
    }

    fn drain_batch(&mut self, shared: &Shared) -> Result<usize, RingError> {
        let mut n = 0;
        while n < BATCH && self.ring.state(self.next)? == SlotState::Published {
            let ticket = self.next;
            let p = self.ring.read(ticket, self.num_threads)?;
            // The slot is copied: count it consumed before the (slower)
            // output work. A reply, written into the slot after, keeps the
            // slot from its next producer until the device has read it.
            self.ring.release(ticket);
            // A reply means "the host has handled all before": flush first.
            if p.reply {
                self.sink.flush();
                let answered = match p.op {
                    Op::Random { len } => {
                        let mut bytes = [0u8; RING_PAYLOAD_BYTES];
                        let out = &mut bytes[..usize::from(len)];
                        // The program was promised random bytes; without them it
                        // cannot go on (the launcher's exit code for a host
                        // failure). Not reachable by running out of files:
                        // `/dev/urandom` is opened before the program runs.
                        if let Err(e) = self.sink.random(out) {
                            std::eprintln!("gpurun: cannot read /dev/urandom for the program's random bytes (getrandom): {e}");
                            std::process::exit(HOST_FAILURE_EXIT);
                        }
                        self.ring.write_payload(ticket, out);
                        self.report.random_bytes += u64::from(len);
                        true
                    }
                    // The reply goes out once the call ran (perhaps later,
                    // from a worker). A protocol error leaves the device
                    // waiting: the run is over.
                    Op::Call { call, total } => self.call_packet(&p, call, total)?,
                    Op::CallMore { offset } => self.call_more(&p, offset)?,
                    Op::CallWait => self.call_wait(&p)?,
                    _ => true,
                };
                if answered {
                    self.ring.reply(ticket);
                }
            } else if let Op::Call { call, total } = p.op {
                self.call_packet(&p, call, total)?;
            }
            self.next += 1;
            n += 1;
            self.report.packets += 1;
            self.report.last_thread = Some(p.thread);
            match p.op {
                Op::Nop => self.report.nops += 1,
                Op::Write { fd } => self.write(p.thread, fd, p.payload(), p.more),
                Op::Exit { code } | Op::Abort { code } => {
                    if self.report.exit.is_none() {
                        // Output sent before the exit (a panic message before
                        // OP_ABORT) is out before anyone learns of the exit.
                        self.sink.flush();
                        let aborted = matches!(p.op, Op::Abort { .. });
                        self.report.exit = Some(ProgramExit { code, aborted, thread: p.thread });
                        shared.code.store(code, Ordering::Relaxed);
                        // Release: `code` is visible once `state` says exited.
                        shared.state.store(STATE_EXITED, Ordering::Release);
                    }
                }
                Op::ThreadExit { thread } => self.report.exited_threads.push(thread),
                // answered above
                Op::Random { .. } | Op::Call { .. } | Op::CallMore { .. } | Op::CallWait => {}
            }
        }
        Ok(n)
    }

    /// One packet of a call request: assembled with the thread's earlier
    /// ones; the last (`FLAG_REPLY`, checked when decoded) starts the call.
    /// Returns whether its answer is in the slot (a call that may block
    /// runs on a worker and is answered later).
    fn call_packet(&mut self, p: &Packet, call: u32, total: u64) -> Result<bool, RingError> {
        let (ticket, thread) = (p.ticket, p.thread);
        let bytes = p.payload();
        let have = bytes.len() as u64;
        if self.in_flight.contains_key(&thread) {
            return Err(RingError::CallWhileRunning { ticket, thread });
        }
        let (request, overflow) = match self.assembling.entry(thread) {
            // The whole request in one packet (most calls).
            Entry::Vacant(_) if !p.more => {
                if have > total {
                    return Err(RingError::CallOverrun { ticket, thread, total, have });
                }
                if have < total {
                    return Err(RingError::CallShort { ticket, thread, total, have });
                }
                self.replies.remove(&thread);
                (bytes.to_vec(), false)
            }
            Entry::Vacant(v) => {
                if have > total {
                    return Err(RingError::CallOverrun { ticket, thread, total, have });
                }
                // A new call: the thread is done with its last reply.
                self.replies.remove(&thread);
                let mut buf = Charged::new(&self.budget);
                let overflow = !buf.push_reserving(bytes, (total as usize).min(ASSEMBLY_RESERVE));
                v.insert(Assembly { call, total, have, bytes: buf, overflow });
                return Ok(false);
            }
            Entry::Occupied(mut o) => {
                let a = o.get_mut();
                if a.call != call || a.total != total {
                    return Err(RingError::CallChanged { ticket, thread, call, total, was_call: a.call, was_total: a.total });
                }
                a.have += have;
                if a.have > total {
                    return Err(RingError::CallOverrun { ticket, thread, total, have: a.have });
                }
                if !a.overflow && !a.bytes.push(bytes) {
                    a.overflow = true;
                }
                if p.more {
                    return Ok(false);
                }
                if a.have != total {
                    return Err(RingError::CallShort { ticket, thread, total, have: a.have });
                }
                let mut a = o.remove();
                (a.bytes.take(), a.overflow)
            }
        };
        self.report.calls += 1;
        if overflow && call != CALL_WRITE {
            self.answer(ticket, Done { thread, status: -i64::from(errno::ENOMEM), reply: Reply::Short(Vec::new()) });
            return Ok(true);
        }
        let job = Job { thread, call, request };
        if !HostCalls::may_block(call) {
            let done = pool::run(&self.calls, &self.budget, job);
            self.answer(ticket, done);
            return Ok(true);
        }
        let now = Instant::now();
        self.in_flight.insert(thread, InFlight { call, started: now, held: Some((ticket, now)), result: None });
        let (calls, budget) = (&self.calls, &self.budget);
        self.pool.get_or_insert_with(|| Pool::new(calls.clone(), budget.clone(), std::thread::current())).submit(job);
        Ok(false)
    }

    /// Writes a call's answer into the slot of `ticket` (the reply's head
    /// and first bytes), keeping a longer reply for `OP_CALL_MORE`.
    fn answer(&mut self, ticket: u64, done: Done) {
        let bytes = done.reply.as_slice();
        let head = ReplyHead { status: done.status, total: bytes.len() as u64 };
        let mut slot = [0u8; RING_PAYLOAD_BYTES];
        slot[..REPLY_HEAD_BYTES].copy_from_slice(&head.to_bytes());
        let first = bytes.len().min(FIRST_REPLY_BYTES);
        slot[REPLY_HEAD_BYTES..REPLY_HEAD_BYTES + first].copy_from_slice(&bytes[..first]);
        self.ring.write_payload(ticket, &slot[..REPLY_HEAD_BYTES + first]);
        if let Reply::Long(kept) = done.reply {
            self.replies.insert(done.thread, kept);
        }
    }

    /// Answers the calls the workers finished, where their thread's slot
    /// waits; keeps the others' results for their `OP_CALL_WAIT`.
    fn answer_finished(&mut self) {
        let Some(pool) = &self.pool else { return };
        for done in pool.take_done() {
            let Some(f) = self.in_flight.get_mut(&done.thread) else { continue };
            match f.held {
                Some((ticket, _)) => {
                    self.in_flight.remove(&done.thread);
                    self.answer(ticket, done);
                    self.ring.reply(ticket);
                }
                None => f.result = Some(done),
            }
        }
    }

    /// Answers `STATUS_PENDING` in the slots the ring is coming round to:
    /// a slot held by a call's answer would stop every thread's packets
    /// once the tickets reach it again, since the host consumes in order.
    fn release_holds(&mut self) {
        if self.in_flight.is_empty() {
            return;
        }
        let half = u64::from(self.ring.capacity() / 2);
        for f in self.in_flight.values_mut() {
            if let Some((ticket, since)) = f.held
                && self.next >= ticket + half
                && since.elapsed() >= MIN_HOLD
            {
                let head = ReplyHead { status: STATUS_PENDING, total: 0 };
                self.ring.write_payload(ticket, &head.to_bytes());
                self.ring.reply(ticket);
                f.held = None;
                self.report.pending_answers += 1;
            }
        }
    }

    /// `OP_CALL_WAIT`: the result of the thread's call, if it is in;
    /// otherwise the packet is held (answered when the call ends, or with
    /// `STATUS_PENDING` when the ring needs the slot).
    fn call_wait(&mut self, p: &Packet) -> Result<bool, RingError> {
        let Some(f) = self.in_flight.get_mut(&p.thread) else {
            return Err(RingError::WaitWithoutCall { ticket: p.ticket, thread: p.thread });
        };
        if f.held.is_some() {
            return Err(RingError::WaitWithoutCall { ticket: p.ticket, thread: p.thread });
        }
        match f.result.take() {
            Some(done) => {
                self.in_flight.remove(&p.thread);
                self.answer(p.ticket, done);
                Ok(true)
            }
            None => {
                f.held = Some((p.ticket, Instant::now()));
                Ok(false)
            }
        }
    }

    /// `OP_CALL_MORE`: up to a slot of the thread's last reply from
    /// `offset`. The rest of the slot is zeroed, and so is all of it for an
    /// offset past the reply's end (which a correct device end never asks
    /// for: it fetches below the length the first reply gave). The reply is
    /// let go once its last byte has been fetched.
    fn call_more(&mut self, p: &Packet, offset: u64) -> Result<bool, RingError> {
        if self.assembling.contains_key(&p.thread) {
            return Err(RingError::CallMoreMidRequest { ticket: p.ticket, thread: p.thread });
        }
        let mut slot = [0u8; RING_PAYLOAD_BYTES];
        let mut fetched_all = false;
        if let Some(reply) = self.replies.get(&p.thread)
            && let Some(rest) = usize::try_from(offset).ok().and_then(|o| reply.as_slice().get(o..))
        {
            let n = rest.len().min(RING_PAYLOAD_BYTES);
            slot[..n].copy_from_slice(&rest[..n]);
            fetched_all = n == rest.len();
        }
        if fetched_all {
            self.replies.remove(&p.thread);
        }
        self.ring.write_payload(p.ticket, &slot);
        Ok(true)
    }

    fn write(&mut self, thread: u32, fd: u8, bytes: &[u8], more: bool) {
        // Fast path, a whole write in one packet (a `println!` line): no
        // assembly buffer, no allocation.
        if !more && (self.pending.is_empty() || !self.pending.contains_key(&(thread, fd))) {
            self.emit(thread, fd, bytes);
            return;
        }
        let budget = &self.budget;
        let buf = self.pending.entry((thread, fd)).or_insert_with(|| Charged::new(budget));
        let kept = buf.push(bytes);
        if kept && more && buf.len() < MAX_ASSEMBLED {
            return;
        }
        // Whole, too long, or over the budget: pass on what is buffered
        // (and, over the budget, this packet after it) as a piece.
        let whole = buf.take();
        if !more {
            self.pending.remove(&(thread, fd));
        }
        self.emit(thread, fd, &whole);
        if !kept {
            self.emit(thread, fd, bytes);
        }
    }

    fn emit(&mut self, thread: u32, fd: u8, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.sink.write(thread, fd, bytes);
        self.remember(thread, bytes);
    }

    /// Keeps what [`last_line`] needs of the thread's latest non-blank write.
    fn remember(&mut self, thread: u32, bytes: &[u8]) {
        let ascii = bytes.is_ascii();
        if ascii && bytes.iter().all(u8::is_ascii_whitespace) {
            return; // no line in it: the previous one stays the last
        }
        let kept: std::borrow::Cow<[u8]> = if ascii && bytes.len() <= LAST_WRITE_KEPT {
            bytes.into()
        } else {
            // Rare (long or non-ASCII): extract now; `last_line` of the
            // extracted line is that line again.
            match last_line(bytes) {
                Some(line) => line.into_bytes().into(),
                None => return,
            }
        };
        let t = thread as usize; // < num_threads, checked when decoded
        if self.last.len() <= t {
            self.last.resize_with(t + 1, Vec::new);
        }
        self.last[t].clear();
        self.last[t].extend_from_slice(&kept);
    }

    /// Writes out unfinished writes (a thread that faulted or was cut off
    /// mid-write) in thread order, and returns what the server learnt. Calls
    /// still running on workers are left to them (never waited for).
    pub fn finish(mut self) -> ServerReport {
        let mut left: Vec<_> = self.pending.drain().collect();
        left.sort_by_key(|(k, _)| *k);
        for ((thread, fd), mut bytes) in left {
            let bytes = bytes.take();
            self.emit(thread, fd, &bytes);
        }
        self.sink.flush();
        for (thread, bytes) in self.last.iter().enumerate() {
            if let Some(line) = last_line(bytes) {
                self.report.last_lines.insert(thread as u32, line);
            }
        }
        let mut running: Vec<CallInFlight> = self
            .in_flight
            .iter()
            .filter(|(_, f)| f.result.is_none())
            .map(|(&thread, f)| CallInFlight { thread, call: call_name(f.call), seconds: f.started.elapsed().as_secs_f64() })
            .collect();
        running.sort_by_key(|c| c.thread);
        self.report.calls_in_flight = running;
        self.report.peak_buffered = self.budget.peak();
        std::mem::take(&mut self.report)
    }

    /// Serves until `shared.stop`, then handles what is already published and
    /// returns. Polls without sleeping for [`SPIN`] after the last packet
    /// (host calls are latency-bound, and a steady stream must never wait on
    /// a sleep), then sleeps 10 µs, doubling up to 200 µs while idle; a call
    /// worker that finishes wakes it.
    pub fn serve(mut self, shared: &Shared) -> ServerReport {
        let mut last_activity = Instant::now();
        let mut sleep = Duration::from_micros(10);
        loop {
            let stopping = shared.stop.load(Ordering::Acquire);
            match self.drain(shared) {
                Ok(0) if stopping => break,
                Ok(0) => {
                    if last_activity.elapsed() < SPIN {
                        std::hint::spin_loop();
                    } else {
                        std::thread::park_timeout(sleep);
                        sleep = (sleep * 2).min(Duration::from_micros(200));
                    }
                }
                Ok(_) => {
                    last_activity = Instant::now();
                    sleep = Duration::from_micros(10);
                }
                Err(e) => {
                    self.report.error = Some(e);
                    shared.state.store(STATE_BROKEN, Ordering::Release);
                    break;
                }
            }
        }
        self.finish()
    }
}

pub fn last_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().map(str::trim_end).find(|l| !l.trim().is_empty())?;
    let mut s: String = line.chars().take(LAST_LINE_CHARS).collect();
    if line.chars().count() > LAST_LINE_CHARS {
        s.push('…');
    }
    Some(s)
}
