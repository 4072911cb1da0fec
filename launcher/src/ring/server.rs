//! The host-call server: consumes tickets in order, assembles each thread's
//! writes until the packet without `FLAG_MORE` and hands the whole write to
//! the sink at once (so a thread's line is never interleaved with another's),
//! answers replies, records the program's exit, and remembers the last line
//! each thread printed (for timeout and fault reports).

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::{Op, RingError, RingView, SlotState};

/// A write larger than this is passed on in pieces rather than buffered
/// whole (a program writing gigabytes in one call must not exhaust memory).
pub const MAX_ASSEMBLED: usize = 16 << 20;
/// Longest "last line" kept per thread, in characters.
const LAST_LINE_CHARS: usize = 200;

/// Where assembled writes go: the real stdout/stderr, or a test buffer.
pub trait Sink: Send {
    fn write(&mut self, fd: u8, bytes: &[u8]);
}

/// The process's stdout (fd 1) and stderr (fd 2). A closed stdout (e.g.
/// `| head`) silently drops further output, as a program killed by SIGPIPE
/// would print nothing more; the device is still served.
#[derive(Default)]
pub struct StdSink {
    stdout_closed: bool,
}

impl Sink for StdSink {
    fn write(&mut self, fd: u8, bytes: &[u8]) {
        if fd == 1 {
            if self.stdout_closed {
                return;
            }
            let mut out = std::io::stdout().lock();
            if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
                self.stdout_closed = true;
            }
        } else {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(bytes).and_then(|()| err.flush());
        }
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
}

pub struct Server<'a, S: Sink> {
    ring: RingView<'a>,
    num_threads: u32,
    next: u64,
    pending: HashMap<(u32, u8), Vec<u8>>,
    sink: S,
    report: ServerReport,
}

impl<'a, S: Sink> Server<'a, S> {
    pub fn new(ring: RingView<'a>, num_threads: u32, sink: S) -> Self {
        Server { ring, num_threads, next: 0, pending: HashMap::new(), sink, report: ServerReport::default() }
    }

    /// Handles every packet published in ticket order; returns how many.
    pub fn drain(&mut self, shared: &Shared) -> Result<usize, RingError> {
        let mut n = 0;
        while self.ring.state(self.next)? == SlotState::Published {
            let ticket = self.next;
            let p = self.ring.read(ticket, self.num_threads)?;
            self.report.packets += 1;
            self.report.last_thread = Some(p.thread);
            match p.op {
                Op::Nop => {}
                Op::Write { fd } => self.write(p.thread, fd, p.payload(), p.more),
                Op::Exit { code } | Op::Abort { code } => {
                    if self.report.exit.is_none() {
                        let aborted = matches!(p.op, Op::Abort { .. });
                        self.report.exit = Some(ProgramExit { code, aborted, thread: p.thread });
                        shared.code.store(code, Ordering::Relaxed);
                        // Release: `code` is visible once `state` says exited.
                        shared.state.store(STATE_EXITED, Ordering::Release);
                    }
                }
                Op::ThreadExit { thread } => self.report.exited_threads.push(thread),
            }
            if p.reply {
                self.ring.reply(ticket);
            } else {
                self.ring.release(ticket);
            }
            self.next += 1;
            n += 1;
        }
        Ok(n)
    }

    fn write(&mut self, thread: u32, fd: u8, bytes: &[u8], more: bool) {
        let buf = self.pending.entry((thread, fd)).or_default();
        buf.extend_from_slice(bytes);
        if more && buf.len() < MAX_ASSEMBLED {
            return;
        }
        let whole = std::mem::take(buf);
        if !more {
            self.pending.remove(&(thread, fd));
        }
        self.emit(thread, fd, &whole);
    }

    fn emit(&mut self, thread: u32, fd: u8, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.sink.write(fd, bytes);
        if let Some(line) = last_line(bytes) {
            self.report.last_lines.insert(thread, line);
        }
    }

    /// Writes out unfinished writes (a thread that faulted or was cut off
    /// mid-write) in thread order, and returns what the server learnt.
    pub fn finish(mut self) -> ServerReport {
        let mut left: Vec<_> = self.pending.drain().collect();
        left.sort_by_key(|(k, _)| *k);
        for ((thread, fd), bytes) in left {
            self.emit(thread, fd, &bytes);
        }
        self.report
    }

    /// Serves until `shared.stop`, then handles what is already published and
    /// returns. Polls with a backoff: spinning right after activity (host
    /// calls are latency-bound), sleeping up to 200 µs when idle.
    pub fn serve(mut self, shared: &Shared) -> ServerReport {
        let mut last_activity = Instant::now();
        let mut sleep = Duration::from_micros(10);
        loop {
            let stopping = shared.stop.load(Ordering::Acquire);
            match self.drain(shared) {
                Ok(0) if stopping => break,
                Ok(0) => {
                    if last_activity.elapsed() < Duration::from_micros(50) {
                        std::hint::spin_loop();
                    } else {
                        std::thread::sleep(sleep);
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

/// The last non-empty line of some output, shortened.
pub fn last_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().map(str::trim_end).find(|l| !l.trim().is_empty())?;
    let mut s: String = line.chars().take(LAST_LINE_CHARS).collect();
    if line.chars().count() > LAST_LINE_CHARS {
        s.push('…');
    }
    Some(s)
}
