//! A CPU "device": allocates what the launcher would (launch block, zeroed
//! thread table, heap, ring, args/env), starts one OS thread per warp running
//! the real kernel start ([`rt_common::start::warp_main`]) and a host ring
//! consumer, and reports what the program did.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::boxed::Box;
use std::string::{String, ToString};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Duration;
use std::vec::Vec;
use std::{format, vec};

use super::host::{self, HostWrite, Received};
use super::{CpuHal, WarpCtx, ctx, set_ctx};
use rt_common::hal::Hal;
use crate::host_ring::calls::{FsAccess, HostCalls};
use crate::host_ring::server::Shared as HostShared;
use rt_abi::protocol::{
    ABI_VERSION, LAUNCH_MAGIC, LaunchBlock, StrRef, THREAD_SLOT_BYTES, ring_bytes, ring_room_bytes,
    wait_reason_name,
};
use rt_common::runtime::{Runtime, slot_at};
use rt_common::slot::Slot;

/// What to launch.
#[derive(Clone, Debug)]
pub struct Config {
    /// Warps in the thread table.
    pub threads: u32,
    /// Lanes per warp: 32 or 64.
    pub lanes: u32,
    pub heap_bytes: usize,
    pub ring_capacity: u32,
    /// `LaunchBlock::idle_sleep_ns` (CPU default 2 ms: idle OS threads park).
    pub idle_sleep_ns: u64,
    /// `LaunchBlock::stack_size`, also each warp thread's OS stack.
    pub stack_size: u64,
    /// Make the launch look like one with shared stacks (`LaunchBlock::stacks`
    /// non-zero; never dereferenced on the CPU), so larger
    /// `Builder::stack_size` requests take heap stacks ([`CpuHal`]'s
    /// `call_on_stack` records them, see [`crate::cpu::heap_stack`]).
    pub shared_stacks: bool,
    pub args: Vec<String>,
    pub env: Vec<String>,
    pub random_seed: u64,
    pub epoch_unix_ns: u64,
    /// After this, the machine reports stuck warps and panics.
    pub timeout: Duration,
    /// Overrides for negative tests.
    pub magic: u32,
    pub launch_lanes: Option<u32>,
    pub launch_stack_lanes: Option<u32>,
    /// What the program's host calls may do to files (default: all, as the
    /// launcher's default; paths as the test process resolves them).
    pub fs: FsAccess,
    /// The program's stdin (never the test process's own).
    pub stdin: Vec<u8>,
}

impl Config {
    pub fn new(threads: u32, lanes: u32) -> Self {
        Config {
            threads,
            lanes,
            heap_bytes: 8 << 20,
            ring_capacity: 64,
            idle_sleep_ns: 2_000_000,
            stack_size: 256 << 10,
            shared_stacks: false,
            args: vec!["prog".to_string()],
            env: Vec::new(),
            random_seed: 0x1234_5678,
            epoch_unix_ns: 1_700_000_000_000_000_000,
            timeout: Duration::from_secs(60),
            magic: LAUNCH_MAGIC,
            launch_lanes: None,
            launch_stack_lanes: None,
            fs: FsAccess::All,
            stdin: Vec::new(),
        }
    }
}

/// What the program did.
#[derive(Debug)]
pub struct Outcome {
    /// Assembled writes in the order the host completed them.
    pub writes: Vec<HostWrite>,
    /// `(OP_EXIT | OP_ABORT, code)`, if the program reported an end.
    pub exit: Option<(u32, i32)>,
    /// `OP_NOP` round trips served.
    pub nops: u64,
    /// Random bytes the host sent (`OP_RANDOM`).
    pub random_bytes: u64,
    /// Host calls served (`OP_CALL`).
    pub calls: u64,
    /// Protocol violations the host saw.
    pub host_errors: Vec<String>,
    /// Each slot's final `THREAD_*` state.
    pub slot_states: Vec<u32>,
    /// Heap bytes still allocated at the end.
    pub heap_in_use: u64,
    /// Heap bytes allocated when `main` started.
    pub heap_in_use_at_start: u64,
}

impl Outcome {
    /// Everything written to `fd`, in order.
    pub fn output(&self, fd: u32) -> String {
        let mut s = String::new();
        for w in self.writes.iter().filter(|w| w.fd == fd) {
            s.push_str(&String::from_utf8_lossy(&w.bytes));
        }
        s
    }
    /// The exit code, if the program ended with one.
    pub fn code(&self) -> Option<i32> {
        self.exit.map(|(_, c)| c)
    }
}

/// A zeroed, aligned allocation freed on drop.
struct Buf {
    ptr: *mut u8,
    layout: Layout,
}
impl Buf {
    fn new(size: usize, align: usize) -> Buf {
        let layout = Layout::from_size_align(size.max(1), align).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of host memory");
        Buf { ptr, layout }
    }
    fn addr(&self) -> u64 {
        self.ptr as u64
    }
}
impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// State shared by the warp threads, the host thread and the machine.
pub(crate) struct Shared {
    pub(crate) rt: Runtime,
    launch: Box<LaunchBlock>,
    threads: Buf,
    _heap: Buf,
    ring: Buf,
    _room: Buf,
    _strings: Vec<Box<[u8]>>,
    _tables: Vec<Box<[StrRef]>>,
    handles: OnceLock<Vec<Thread>>,
    ended: Mutex<u32>,
    ended_cv: Condvar,
    panics: Mutex<Vec<String>>,
    heap_at_start: Mutex<u64>,
}
// SAFETY: the raw buffers are shared device memory, accessed by the runtime
// with its own synchronisation.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    /// Slot `w`, also before (or without) the runtime's init.
    fn slot(&self, w: u32) -> &Slot {
        assert!(w < self.launch.num_threads);
        // SAFETY: the table has `num_threads` slots and lives as long as self.
        unsafe { slot_at(self.threads.addr(), w) }
    }
}

fn shared() -> &'static Shared {
    let p = ctx().shared as *const Shared;
    assert!(!p.is_null(), "not on a CPU warp thread");
    // SAFETY: every warp thread holds an Arc of its Shared for its whole life.
    unsafe { &*p }
}

/// The runtime of the machine the calling warp thread belongs to.
pub fn runtime() -> &'static Runtime {
    &shared().rt
}

/// `CpuHal::wake`: unparks warp `index`.
pub(crate) fn wake(index: u32) {
    if let Some(t) = shared().handles.get().and_then(|h| h.get(index as usize)) {
        t.unpark();
    }
}

fn mark_ended(s: &Shared) {
    *s.ended.lock().unwrap() += 1;
    s.ended_cv.notify_all();
}

/// `CpuHal::end_program`: counts the warp as ended and parks it for good.
pub(crate) fn warp_ended_forever() -> ! {
    mark_ended(shared());
    loop {
        std::thread::park();
    }
}

fn table(strings: &[String], keep: &mut Vec<Box<[u8]>>) -> Box<[StrRef]> {
    strings
        .iter()
        .map(|s| {
            let b: Box<[u8]> = s.as_bytes().into();
            let r = StrRef {
                ptr: b.as_ptr() as u64,
                len: b.len() as u64,
            };
            keep.push(b);
            r
        })
        .collect()
}

/// Runs `main` on warp 0 of a fresh CPU machine and reports the outcome.
pub fn run<F: FnOnce() -> i32 + Send + 'static>(cfg: Config, main: F) -> Outcome {
    match cfg.lanes {
        32 => run_with::<CpuHal<32>, F>(cfg, main),
        64 => run_with::<CpuHal<64>, F>(cfg, main),
        l => panic!("CPU harness supports 32 or 64 lanes, not {l}"),
    }
}

fn run_with<H: Hal, F: FnOnce() -> i32 + Send + 'static>(cfg: Config, main: F) -> Outcome {
    let n = cfg.threads;
    let threads = Buf::new(n as usize * THREAD_SLOT_BYTES, 128);
    let heap = Buf::new(cfg.heap_bytes, 4096);
    let ring = Buf::new(ring_bytes(cfg.ring_capacity), 128);
    host::init_ring(ring.ptr, cfg.ring_capacity).expect("a power-of-two ring capacity");
    let room = Buf::new(ring_room_bytes(cfg.ring_capacity), 128);
    let mut strings = Vec::new();
    let argv = table(&cfg.args, &mut strings);
    let envp = table(&cfg.env, &mut strings);
    let launch = Box::new(LaunchBlock {
        magic: cfg.magic,
        version: ABI_VERSION,
        num_threads: n,
        lanes: cfg.launch_lanes.unwrap_or(cfg.lanes),
        ring: ring.addr(),
        heap_base: heap.addr(),
        heap_size: cfg.heap_bytes as u64,
        threads: threads.addr(),
        stack_size: cfg.stack_size,
        argc: argv.len() as u64,
        argv: argv.as_ptr() as u64,
        envc: envp.len() as u64,
        envp: envp.as_ptr() as u64,
        epoch_unix_ns: cfg.epoch_unix_ns,
        idle_sleep_ns: cfg.idle_sleep_ns,
        random_seed: cfg.random_seed,
        flags: 0,
        block_warps: 1,
        stack_lanes: cfg.launch_stack_lanes.unwrap_or(H::PARALLEL_LANES),
        stacks: if cfg.shared_stacks { 1 } else { 0 },
        call_stack_size: 0, ring_tickets: 0, ring_room: room.addr(),
        exe: StrRef::default(),
    });
    let shared = Arc::new(Shared {
        rt: Runtime::new(),
        launch,
        threads,
        _heap: heap,
        ring,
        _room: room,
        _strings: strings,
        _tables: vec![argv, envp],
        handles: OnceLock::new(),
        ended: Mutex::new(0),
        ended_cv: Condvar::new(),
        panics: Mutex::new(Vec::new()),
        heap_at_start: Mutex::new(0),
    });

    let host_state = Arc::new(HostShared::default());
    let host = {
        let (s, host_state) = (shared.clone(), host_state.clone());
        let (base, cap) = (s.ring.ptr as usize, cfg.ring_capacity);
        let calls = HostCalls::with_stdin(cfg.fs, std::io::Cursor::new(cfg.stdin.clone()));
        std::thread::spawn(move || {
            let _keep = &s;
            host::serve(base as *mut u8, cap, n, calls, &host_state)
        })
    };

    let mut main = Some(main);
    let mut handles = Vec::new();
    for i in 0..n {
        let s = shared.clone();
        let main = if i == 0 { main.take() } else { None };
        let lanes = cfg.lanes;
        let t = std::thread::Builder::new()
            .name(format!("warp{i}"))
            .stack_size(cfg.stack_size as usize)
            .spawn(move || warp_thread::<H, F>(s, i, lanes, main))
            .expect("spawn warp thread");
        handles.push(t.thread().clone());
    }
    let _ = shared.handles.set(handles);

    // Wait for every warp to end (returned or parked for good).
    let ended = {
        let g = shared.ended.lock().unwrap();
        let (g, _) = shared
            .ended_cv
            .wait_timeout_while(g, cfg.timeout, |e| *e < n)
            .unwrap();
        *g
    };
    if ended < n {
        let report = stuck_report(&shared);
        for w in 0..n {
            shared.slot(w).exit.store(1, Ordering::Relaxed);
        }
        host_state.stop.store(true, Ordering::Relaxed);
        panic!(
            "CPU machine timed out after {:?}: {ended} of {n} warps ended\n{report}",
            cfg.timeout
        );
    }
    host_state.stop.store(true, Ordering::Release);
    let Received {
        writes,
        exit,
        nops,
        random_bytes,
        calls,
        errors,
    } = host.join().expect("host thread");
    let panics = shared.panics.lock().unwrap().clone();
    assert!(panics.is_empty(), "warp thread panicked: {panics:?}");
    Outcome {
        writes,
        exit,
        nops,
        random_bytes,
        calls,
        host_errors: errors,
        slot_states: (0..n)
            .map(|w| shared.slot(w).state.load(Ordering::Relaxed))
            .collect(),
        heap_in_use: shared.rt.heap().bytes_in_use(shared.rt.slots()),
        heap_in_use_at_start: *shared.heap_at_start.lock().unwrap(),
    }
}

fn warp_thread<H: Hal, F: FnOnce() -> i32>(s: Arc<Shared>, i: u32, lanes: u32, main: Option<F>) {
    set_ctx(WarpCtx {
        index: i,
        lanes,
        shared: Arc::as_ptr(&s) as *const (),
    });
    let launch: *const LaunchBlock = &*s.launch;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: one call per warp thread, with this machine's launch block
        // and runtime, both alive while `s` is.
        unsafe {
            rt_common::start::warp_main::<H>(&s.rt, launch, || {
                *s.heap_at_start.lock().unwrap() = s.rt.heap().bytes_in_use(s.rt.slots());
                main.expect("warp 0 has main")()
            })
        }
    }));
    if let Err(e) = r {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        s.panics.lock().unwrap().push(format!("warp {i}: {msg}"));
        for w in 0..s.launch.num_threads {
            s.slot(w).exit.store(1, Ordering::Relaxed);
            H::wake(w);
        }
    }
    mark_ended(&s);
}

/// What the launcher prints on a timeout: every busy slot and why it waits.
fn stuck_report(s: &Shared) -> String {
    let mut out = String::new();
    for w in 0..s.launch.num_threads {
        let slot = s.slot(w);
        let state = slot.state.load(Ordering::Relaxed);
        if state == rt_abi::protocol::THREAD_FREE {
            continue;
        }
        let wait = slot.wait.load(Ordering::Relaxed);
        out.push_str(&format!(
            "  warp {w}: state {state}, {}\n",
            wait_reason_name(wait)
        ));
    }
    out
}
