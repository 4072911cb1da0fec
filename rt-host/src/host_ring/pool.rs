//! The call workers: host calls that may block (files, FIFOs, directory
//! walks) run here, off the ring's server thread, so that one blocked call
//! holds up no other thread's output, calls or the launcher's timeout.
//!
//! Workers are started as calls come, up to [`MAX_WORKERS`]; past that a
//! call waits in the queue for a free worker. A worker's result goes back
//! to the server (which alone writes the ring) through [`Pool::take_done`],
//! and the worker unparks the server thread so the reply goes out at once.
//! Workers are never joined: dropping the pool tells idle ones to end, and
//! one blocked forever (a FIFO nobody opens) ends with the process.

use std::collections::VecDeque;
use std::prelude::rust_2024::*;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::Duration;

use rt_abi::hostcall::{CALL_READ, CALL_STDIN_READ, FIRST_REPLY_BYTES, MAX_TRANSFER, errno};

use super::budget::{Budget, Charged};
use super::calls::HostCalls;

/// Most call workers at once: this many calls may block (FIFOs, stdin,
/// hung mounts) before the others wait for one of them.
pub const MAX_WORKERS: usize = 64;

/// How long an idle worker waits for work before it ends.
const IDLE_END: Duration = Duration::from_secs(2);

/// A call for a worker.
pub struct Job {
    pub thread: u32,
    pub call: u32,
    /// The assembled request (head then body).
    pub request: Vec<u8>,
}

/// A finished call.
pub struct Done {
    pub thread: u32,
    pub status: i64,
    /// The reply: charged to the budget when longer than a slot holds.
    pub reply: Reply,
}

/// A call's reply bytes.
pub enum Reply {
    /// At most [`FIRST_REPLY_BYTES`]: all of it goes into the call's slot.
    Short(Vec<u8>),
    /// Longer: kept (charged) for the thread's `OP_CALL_MORE` packets.
    Long(Charged),
}

impl Reply {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Reply::Short(b) => b,
            Reply::Long(c) => c.as_slice(),
        }
    }
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    done: Vec<Done>,
    workers: usize,
    idle: usize,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    calls: Arc<HostCalls>,
    budget: Arc<Budget>,
    /// The server thread, unparked when a call is done.
    server: Thread,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The workers, as the server sees them.
pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    /// A pool whose workers unpark `server` when a call is done.
    pub fn new(calls: Arc<HostCalls>, budget: Arc<Budget>, server: Thread) -> Pool {
        Pool { shared: Arc::new(Shared { queue: Mutex::default(), work: Condvar::new(), calls, budget, server }) }
    }

    /// Queues `job`, starting a worker if none is idle and fewer than
    /// [`MAX_WORKERS`] run. Where no worker can be started at all, the call
    /// runs here (on the server thread) rather than never.
    pub fn submit(&self, job: Job) {
        let mut q = self.shared.lock();
        q.jobs.push_back(job);
        if q.idle >= q.jobs.len() || q.workers >= MAX_WORKERS {
            drop(q);
            self.shared.work.notify_one();
            return;
        }
        q.workers += 1;
        drop(q);
        let shared = self.shared.clone();
        let started = std::thread::Builder::new().name("gpurun-call".into()).spawn(move || work(&shared));
        if started.is_err() {
            let mut q = self.shared.lock();
            q.workers -= 1;
            if q.workers == 0
                && let Some(job) = q.jobs.pop_front()
            {
                drop(q);
                let done = run(&self.shared.calls, &self.shared.budget, job);
                self.shared.lock().done.push(done);
            }
        }
    }

    /// The calls finished since the last look.
    pub fn take_done(&self) -> Vec<Done> {
        let mut q = self.shared.lock();
        if q.done.is_empty() { Vec::new() } else { std::mem::take(&mut q.done) }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_all();
    }
}

/// A worker: runs queued calls until the pool is dropped or it has idled
/// for [`IDLE_END`].
fn work(shared: &Shared) {
    let mut q = shared.lock();
    loop {
        if let Some(job) = q.jobs.pop_front() {
            drop(q);
            let done = run(&shared.calls, &shared.budget, job);
            q = shared.lock();
            q.done.push(done);
            shared.server.unpark();
            continue;
        }
        if q.closed {
            break;
        }
        q.idle += 1;
        let (back, timeout) = shared.work.wait_timeout(q, IDLE_END).unwrap_or_else(|e| e.into_inner());
        q = back;
        q.idle -= 1;
        if timeout.timed_out() && q.jobs.is_empty() {
            break;
        }
    }
    q.workers -= 1;
}

/// Runs one call within the budget: a read asks for no more bytes than
/// the budget can keep (at least a slot's worth); a long reply of any other
/// call that the budget cannot keep becomes `ENOMEM`.
pub fn run(calls: &HostCalls, budget: &Arc<Budget>, job: Job) -> Done {
    let Job { thread, call, request } = job;
    let reads = call == CALL_READ || call == CALL_STDIN_READ;
    let charge = budget.charge_up_to(if reads { MAX_TRANSFER as usize } else { 0 });
    let max_read = FIRST_REPLY_BYTES.max(charge.bytes());
    let (status, bytes) = calls.call_within(call, &request, max_read);
    drop(request);
    let reply = if bytes.len() <= FIRST_REPLY_BYTES {
        Reply::Short(bytes)
    } else {
        // A read's bytes are covered by the charge taken before it (they
        // cannot be given back to the file); other replies are charged now.
        match Charged::adopt(charge, bytes) {
            Some(c) => Reply::Long(c),
            None => return Done { thread, status: -i64::from(errno::ENOMEM), reply: Reply::Short(Vec::new()) },
        }
    };
    Done { thread, status, reply }
}
