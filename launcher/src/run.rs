//! One run, vendor-neutral: load, size the launch, allocate and fill in
//! everything the [`LaunchBlock`] points to, launch, serve the ring on a
//! second thread while this one polls the kernel, and turn how it ended into
//! a [`RunStatus`], an exit code and a message.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rt_abi::protocol::{
    ABI_VERSION, LAUNCH_FLAG_TRACE, LAUNCH_MAGIC, LaunchBlock, THREAD_SLOT_BYTES, ring_bytes, ring_room_bytes, warp_stacks_bytes,
};

use crate::backend::{Backend, BackendError, DeviceInfo, LaunchPlan, MappedBuf, PlanError, plan_launch};
use crate::codeobj::CodeObject;
use crate::exit;
use crate::timeline;
use crate::launch_block::{LAUNCH_BLOCK_BYTES, launch_block_bytes, string_tables, string_tables_size};
use crate::report::{self, RunStatus};
use crate::ring::calls::{FsAccess, FsRoot, HostCalls, RootError};
use crate::ring::server::{CallInFlight, STATE_BROKEN, STATE_EXITED, Server, ServerReport, Shared, Sink};
use crate::ring::{RingError, RingView};

/// Device memory the default heap leaves free: a thirty-second of what is
/// free once everything else of the launch is allocated, at least this much
/// (or a quarter, where less is free), for the driver's own needs at launch.
pub const HEAP_MARGIN_MIN: u64 = 1 << 30;
/// The smallest default heap (a device with less free memory than this
/// gets this much, and the allocation says what is wrong).
pub const MIN_DEFAULT_HEAP: u64 = 1 << 20;
/// Default stack of each thread for its frames (`LaunchBlock::stack_size`),
/// in global memory: real crates' threads (rayon's workers, regex's
/// compiler) need more than 64K. std gives host threads 2 MiB; 512K for
/// each of an H100's 4,224 threads is 2.2 GB.
pub const DEFAULT_STACK: u64 = 512 << 10;
/// Default of the driver's per-lane call stack (return addresses and saved
/// registers, about 16 bytes a call level on NVIDIA, more on AMD), when
/// frames are in global memory: std's 1,000-level recursion passes on both
/// vendors. The device reserves it for every lane it can hold (270,336 on
/// an H100 or H200: 17 GiB at 64K), so [`call_stack_size`] takes less on a
/// device where that passes an eighth of its memory (an H100's 80 GB: 36K).
pub const DEFAULT_CALL_STACK: u64 = 64 << 10;
/// Default ring capacity (slots, a power of two).
pub const DEFAULT_RING_SLOTS: u32 = 4096;
/// How long the kernel may take to end after the program exited.
pub const EXIT_GRACE: Duration = Duration::from_secs(1);
/// How long gpurun may take, after `--timeout`, to print its report and
/// exit; past it the process ends with 124 whatever it was doing.
pub const TIMEOUT_REPORT_GRACE: Duration = Duration::from_millis(900);

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub threads: Option<u32>,
    /// Each thread's stack; `None`: [`DEFAULT_STACK`] for frames in global
    /// memory, the call stack's size for frames in private memory.
    pub stack_size: Option<u64>,
    /// The driver's per-lane call stack; `None`: [`call_stack_size`].
    pub call_stack_size: Option<u64>,
    pub heap_size: Option<u64>,
    pub timeout: Option<Duration>,
    pub idle_sleep_ns: u64,
    /// `argv`, `argv[0]` included.
    pub args: Vec<Vec<u8>>,
    /// The absolute path `env::current_exe` returns ([`LaunchBlock::exe`];
    /// empty: none).
    pub exe: Vec<u8>,
    /// `KEY=VALUE` entries.
    pub env: Vec<Vec<u8>>,
    pub seed: Option<u64>,
    pub trace: bool,
    pub ring_slots: u32,
    pub exit_grace: Duration,
    pub verbose: bool,
    /// What the program's host calls may do to files and directories
    /// (`--fs`); its stdin is gpurun's either way.
    pub fs: FsAccess,
    /// The directory every path of the program resolves beneath
    /// (`--fs-root`); `None`: the host's file system as it is.
    pub fs_root: Option<std::path::PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: None,
            stack_size: None,
            call_stack_size: None,
            heap_size: None,
            timeout: None,
            idle_sleep_ns: 0,
            args: vec![b"program".to_vec()],
            exe: Vec::new(),
            env: Vec::new(),
            seed: None,
            trace: false,
            ring_slots: DEFAULT_RING_SLOTS,
            exit_grace: EXIT_GRACE,
            verbose: false,
            fs: FsAccess::All,
            fs_root: None,
        }
    }
}

/// A failure before the kernel started.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("internal error setting up the host-call ring: {0}")]
    Ring(#[from] RingError),
    #[error(transparent)]
    FsRoot(#[from] RootError),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Backend(e) => e.exit_code(),
            RunError::Plan(e) => e.exit_code(),
            RunError::Ring(_) => exit::PROTOCOL,
            RunError::FsRoot(_) => exit::USAGE,
        }
    }
}

/// The program's environment, plus `RAYON_NUM_THREADS` where the user set
/// none: one worker per SM/CU, at most the warps main can spawn. rayon sizes
/// its global pool by `available_parallelism()`, which on a GPU is every
/// launched warp but main's; a pool that took every warp would leave none
/// for the program's other threads (a warp cannot be oversubscribed), so
/// rayon gets its own documented knob set instead.
pub fn with_pool_defaults(env: &[Vec<u8>], compute_units: u32, num_threads: u32) -> Vec<Vec<u8>> {
    let mut env = env.to_vec();
    if !env.iter().any(|kv| kv.starts_with(b"RAYON_NUM_THREADS=")) {
        let workers = compute_units.min(num_threads.saturating_sub(1)).max(1);
        env.push(format!("RAYON_NUM_THREADS={workers}").into_bytes());
    }
    env
}

/// The driver's per-lane call stack for a run, and the option that sets it:
/// `--call-stack-size` if given; for frames in private memory (code not
/// linked by `gpu-ld`) the thread stack, `--stack-size`, if given; else
/// [`DEFAULT_CALL_STACK`], or an eighth of the device's memory shared by
/// every lane it can hold if that is less (in whole KiB, at least 4K).
pub fn call_stack_size(opts: &RunOptions, info: &DeviceInfo, shared_stacks: bool) -> (u64, &'static str) {
    if let Some(n) = opts.call_stack_size {
        return (n, "--call-stack-size");
    }
    if !shared_stacks && let Some(n) = opts.stack_size {
        return (n, "--stack-size");
    }
    let lanes = u64::from(info.compute_units) * u64::from(info.max_threads_per_cu);
    let share = (info.total_memory / 8).checked_div(lanes).unwrap_or(DEFAULT_CALL_STACK);
    (DEFAULT_CALL_STACK.min(share / 1024 * 1024).max(4 << 10), "--call-stack-size")
}

/// Bytes the device reserves for a call stack of `bytes` a lane: one for
/// every lane it can hold.
pub fn call_stack_reserve(info: &DeviceInfo, bytes: u64) -> u64 {
    u64::from(info.compute_units) * u64::from(info.max_threads_per_cu) * bytes
}

/// The default heap: `free` device memory (measured once everything else of
/// the launch is allocated) less `pending` (what the driver will still take
/// at launch: a call stack it had not reserved when asked) and a margin of
/// a thirty-second, at least [`HEAP_MARGIN_MIN`] or a quarter, whichever
/// is less.
pub fn default_heap_size(free: u64, pending: u64) -> u64 {
    let free = free.saturating_sub(pending);
    let margin = (free / 32).max(HEAP_MARGIN_MIN.min(free / 4));
    (free - margin).max(MIN_DEFAULT_HEAP)
}

/// How a started run ended.
pub struct RunOutcome {
    pub status: RunStatus,
    /// What to print on stderr (already prefixed lines, no trailing newline).
    pub message: Option<String>,
}

enum Ending {
    Finished,
    Fault(BackendError),
    Broken,
    ExitGraceOver,
    Timeout,
}

/// Runs `code` on `backend`, writing the program's output to `sink`.
pub fn execute(
    backend: &mut dyn Backend,
    code: &CodeObject,
    opts: &RunOptions,
    sink: impl Sink,
) -> Result<RunOutcome, RunError> {
    // Files through the host as gpurun's process: relative paths from its
    // working directory, or everything beneath --fs-root; stdin read from
    // gpurun's own on first use.
    let calls = match &opts.fs_root {
        Some(dir) => HostCalls::new(opts.fs).with_root(FsRoot::open(dir)?),
        None => HostCalls::new(opts.fs),
    };
    let info = backend.info().clone();
    let kernel = backend.load(code)?;
    timeline::mark("module loaded");
    let (call_stack, option) = call_stack_size(opts, &info, kernel.shared_stacks);
    // The default heap is sized from what is left at the end; the call stack
    // is reserved when it is set (CUDA) or at launch (HIP's scratch): what
    // setting it did not take is still to come.
    let free_before = if opts.heap_size.is_none() { Some(backend.free_memory()?) } else { None };
    backend.set_call_stack(call_stack, option)?;
    let call_stack_pending = match free_before {
        Some(before) => {
            let taken = before.saturating_sub(backend.free_memory()?);
            call_stack_reserve(&info, call_stack).saturating_sub(taken)
        }
        None => 0,
    };
    timeline::mark("call stack set");
    // Frames in private memory live on the call stack: it is their limit.
    let stack_size = if kernel.shared_stacks { opts.stack_size.unwrap_or(DEFAULT_STACK) } else { call_stack };
    let plan = plan_launch(&info, &kernel, opts.threads, |bt| backend.occupancy(bt))?;
    let table_bytes = plan.num_threads as usize * THREAD_SLOT_BYTES;
    let table = backend.alloc(table_bytes)?;
    backend.zero(table, table_bytes)?;
    timeline::mark("thread table");
    let ring_buf = backend.alloc_mapped(ring_bytes(opts.ring_slots))?;
    // SAFETY: `alloc_mapped` returned page-aligned host memory of `len` bytes
    // that stays mapped while `backend` lives, which outlives this function
    // (and the server thread, joined inside it). All access is atomic.
    let ring_words = unsafe { mapped_words(&ring_buf) };
    let ring = RingView::new(ring_words, opts.ring_slots)?;
    ring.init();
    timeline::mark("ring");
    let room_bytes = ring_room_bytes(opts.ring_slots);
    let room = backend.alloc(room_bytes)?;
    backend.zero(room, room_bytes)?;
    let staging = match opts.timeout {
        Some(_) => Some(backend.alloc_mapped(table_bytes)?),
        None => None,
    };

    // Frames in global memory (see `LaunchBlock::stacks`): one region per
    // launched warp, extra warps included (they check the launch block).
    let stacks = if kernel.shared_stacks {
        let warps = u64::from(plan.grid) * u64::from(plan.block_warps);
        let bytes = stacks_bytes(stack_size, kernel.stack_lanes.max(1), warps)?;
        backend
            .alloc(usize::try_from(bytes).unwrap_or(usize::MAX))
            .map_err(|e| if opts.stack_size.is_some() { refused_size("--stack-size", stack_size, e) } else { e })?
    } else {
        0
    };
    timeline::mark("room and stacks");

    let env = with_pool_defaults(&opts.env, info.compute_units, plan.num_threads);
    let strings_size = string_tables_size(&opts.args, &env, &opts.exe);
    let block = backend.alloc(LAUNCH_BLOCK_BYTES + strings_size)?;
    // The heap last, so that the default takes what the rest left.
    let heap_size = match opts.heap_size {
        Some(h) => h,
        None => default_heap_size(backend.free_memory()?, call_stack_pending),
    };
    if opts.verbose {
        eprintln!(
            "gpurun: {} ({}): {} blocks × {} threads ({} warps of {} lanes), {} threads resident-capable, \
             using {}; {} blocks/CU on {} CUs; stack {} B/thread{}, call stack {} B/lane, heap {} B{}; files: {}",
            info.name,
            info.arch,
            plan.grid,
            plan.block_threads,
            plan.block_warps,
            plan.lanes,
            plan.resident_warps,
            plan.num_threads,
            plan.blocks_per_cu,
            info.compute_units,
            stack_size,
            if kernel.shared_stacks { " (frames in global memory)" } else { " (frames in private memory)" },
            call_stack,
            heap_size,
            kernel.registers.map(|r| format!(", {r} registers/lane")).unwrap_or_default(),
            opts.fs.name(),
        );
    }

    let heap = backend
        .alloc(usize::try_from(heap_size).unwrap_or(usize::MAX))
        .map_err(|e| if opts.heap_size.is_some() { refused_size("--heap-size", heap_size, e) } else { e })?;
    timeline::mark("heap");
    let tables = string_tables(block + LAUNCH_BLOCK_BYTES as u64, &opts.args, &env, &opts.exe);
    let lb = LaunchBlock {
        magic: LAUNCH_MAGIC,
        version: ABI_VERSION,
        num_threads: plan.num_threads,
        lanes: plan.lanes,
        ring: ring_buf.device,
        heap_base: heap,
        heap_size,
        threads: table,
        stack_size,
        argc: tables.argc,
        argv: tables.argv,
        envc: tables.envc,
        envp: tables.envp,
        epoch_unix_ns: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        idle_sleep_ns: opts.idle_sleep_ns,
        random_seed: opts.seed.unwrap_or_else(random_seed),
        flags: if opts.trace { LAUNCH_FLAG_TRACE } else { 0 },
        block_warps: plan.block_warps,
        stack_lanes: kernel.stack_lanes,
        stacks,
        call_stack_size: call_stack,
        ring_tickets: 0,
        ring_room: room,
        exe: tables.exe,
    };
    let mut image = launch_block_bytes(&lb).to_vec();
    image.extend_from_slice(&tables.bytes);
    backend.upload(block, &image)?;
    timeline::mark("launch block uploaded");

    let mut status = RunStatus {
        code_object: Some(code.path.display().to_string()),
        device: Some(info.clone()),
        launch: Some(plan.clone()),
        stack_size: Some(stack_size),
        heap_size: Some(heap_size),
        ..Default::default()
    };
    let start = Instant::now();
    backend.launch(plan.grid, plan.block_threads, block)?;
    timeline::mark("launched");

    crate::ring::calls::raise_fd_limit();
    let shared = Shared::default();
    let (ending, server) = std::thread::scope(|scope| {
        let server = Server::new(ring, plan.num_threads, sink).with_calls(calls);
        let shared = &shared;
        let handle = std::thread::Builder::new()
            .name("gpurun-ring".into())
            .spawn_scoped(scope, move || server.serve(shared))
            .expect("spawning the ring server thread");
        let ending = watch(backend, shared, opts, start);
        timeline::mark("kernel ended");
        // Nothing below waits on the program's host calls (they run on
        // workers nobody joins); the deadline bounds it if something else
        // does (a stdout nobody reads). Cancelled when `execute` returns.
        let deadline = matches!(ending, Ending::Timeout).then(|| exit_after(TIMEOUT_REPORT_GRACE, exit::TIMEOUT));
        shared.stop.store(true, Ordering::Release);
        let report = handle.join().expect("the ring server thread panicked");
        (ending, (report, deadline))
    });
    let (server, _deadline) = server;
    status.elapsed_s = start.elapsed().as_secs_f64();

    let table_copy = match (&ending, staging) {
        (Ending::Timeout, Some(buf)) => backend.read_back(table, &buf).ok().map(|()| {
            // SAFETY: the copy into `buf` finished (read_back waits for it);
            // nothing else writes this host memory.
            let bytes = unsafe { std::slice::from_raw_parts(buf.host, table_bytes) };
            report::parse_thread_table(bytes, plan.num_threads)
        }),
        _ => None,
    };
    let message = conclude(&mut status, ending, &server, table_copy.as_deref(), opts, &plan);
    Ok(RunOutcome { status, message })
}

/// Polls the kernel and the server until something ends the run.
fn watch(backend: &mut dyn Backend, shared: &Shared, opts: &RunOptions, start: Instant) -> Ending {
    let mut exited_at: Option<Instant> = None;
    loop {
        match backend.poll() {
            Ok(true) => return Ending::Finished,
            Ok(false) => {}
            Err(e) => return Ending::Fault(e),
        }
        match shared.state.load(Ordering::Acquire) {
            STATE_BROKEN => return Ending::Broken,
            STATE_EXITED if exited_at.get_or_insert_with(Instant::now).elapsed() >= opts.exit_grace => {
                return Ending::ExitGraceOver;
            }
            _ => {}
        }
        if exited_at.is_none() && opts.timeout.is_some_and(|t| start.elapsed() >= t) {
            return Ending::Timeout;
        }
        // Short sleeps early (fast programs end fast), then 1 ms.
        let nap = if start.elapsed() < Duration::from_millis(20) { 100 } else { 1000 };
        std::thread::sleep(Duration::from_micros(nap));
    }
}

/// Fills in the status and returns the message to print.
fn conclude(
    status: &mut RunStatus,
    ending: Ending,
    server: &ServerReport,
    table: Option<&[report::SlotHeader]>,
    opts: &RunOptions,
    plan: &LaunchPlan,
) -> Option<String> {
    let program = server.exit;
    status.program_exit_code = program.map(|p| p.code);
    let set_program = |status: &mut RunStatus| {
        let p = program.expect("set_program needs an exit");
        status.status = if p.aborted { "aborted" } else { "exited" }.into();
        // The status gpurun leaves (exit(-1) is 255); program_exit_code keeps p.code.
        status.exit_code = i32::from(exit::status_of(p.code));
    };
    if let Some(e) = &server.error {
        status.status = "protocol_error".into();
        status.exit_code = exit::PROTOCOL;
        status.kernel_finished = matches!(ending, Ending::Finished);
        let msg = format!(
            "gpurun: the GPU program broke the host-call protocol: {e}\n  \
             (after {} packets). This is a bug in the GPU runtime or memory corruption \
             by the program; its output so far has been written.",
            server.packets
        );
        status.error = Some(msg.clone());
        return Some(msg);
    }
    match ending {
        Ending::Finished => {
            status.kernel_finished = true;
            if program.is_some() {
                set_program(status);
                None
            } else {
                status.status = "exited".into();
                status.exit_code = 0;
                Some(
                    "gpurun: warning: the kernel ended without reporting an exit status \
                     (is the program linked with the GPU runtime?); exiting with 0"
                        .into(),
                )
            }
        }
        Ending::ExitGraceOver => {
            set_program(status);
            opts.verbose.then(|| {
                format!(
                    "gpurun: the kernel was still running {:?} after the program exited \
                     (detached threads?); leaving it",
                    opts.exit_grace
                )
            })
        }
        Ending::Broken => unreachable!("a broken ring sets server.error"),
        Ending::Fault(e) => {
            status.kernel_finished = true;
            status.error = Some(e.to_string());
            match program {
                Some(p) if p.aborted => {
                    // The abort path ends in a trap: expected, not news.
                    set_program(status);
                    opts.verbose.then(|| format!("gpurun: after the abort: {e}"))
                }
                Some(p) => {
                    set_program(status);
                    Some(format!("gpurun: warning: the program exited with {} but then {e}", p.code))
                }
                None => {
                    status.status = "fault".into();
                    status.exit_code = e.exit_code();
                    let threads = report::live_threads(None, &server.last_lines, &server.exited_threads);
                    let mut msg = format!("gpurun: {e}");
                    if let Some(t) = server.last_thread {
                        msg.push_str(&format!("\n  the last host call came from thread {t}"));
                    }
                    if !threads.is_empty() {
                        msg.push_str("\n  threads that had printed and not exited:");
                        msg.push_str(&report::describe_threads(&threads, 16));
                    }
                    status.threads = threads;
                    Some(msg)
                }
            }
        }
        Ending::Timeout => {
            status.status = "timeout".into();
            status.exit_code = exit::TIMEOUT;
            let mut threads = report::live_threads(table, &server.last_lines, &server.exited_threads);
            note_host_calls(&mut threads, &server.calls_in_flight);
            let timeout = opts.timeout.unwrap_or_default();
            let mut msg = format!(
                "gpurun: timeout: the program did not finish within {}s ({} threads launched)",
                timeout.as_secs_f64(),
                plan.num_threads
            );
            if table.is_none() {
                msg.push_str("\n  (the thread table could not be read; states below come from the output seen)");
            }
            if threads.is_empty() {
                msg.push_str("\n  no thread was running or blocked");
            } else {
                msg.push_str(&format!("\n  {} threads still running or blocked:", threads.len()));
                msg.push_str(&report::describe_threads(&threads, 32));
            }
            status.error = Some(format!("timeout after {}s", timeout.as_secs_f64()));
            status.threads = threads;
            Some(msg)
        }
    }
}

/// Adds to each thread's state the host call it is blocked in, if any (a
/// thread whose call runs is listed even where the table could not say).
fn note_host_calls(threads: &mut Vec<report::ThreadReport>, calls: &[CallInFlight]) {
    for c in calls {
        let note = format!("in host call `{}` for {:.1} s", c.call, c.seconds);
        match threads.iter_mut().find(|t| t.index == c.thread) {
            Some(t) => t.state = format!("{}, {note}", t.state),
            None => threads.push(report::ThreadReport { index: c.thread, name: None, state: note, last_line: None }),
        }
    }
    threads.sort_by_key(|t| t.index);
}

/// Starts a thread that ends the process with `code` after `after` unless
/// the returned sender is dropped first: the bound on how long gpurun takes
/// to finish a run that timed out, whatever it waits on.
fn exit_after(after: Duration, code: i32) -> std::sync::mpsc::Sender<()> {
    let (cancel, cancelled) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new().name("gpurun-deadline".into()).spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = cancelled.recv_timeout(after) {
            eprintln!("gpurun: timeout: the report did not finish within {after:?}; exiting");
            // SAFETY: `_exit` has no preconditions; it ends the process
            // without running exit handlers, which could wait for the kernel.
            unsafe { libc::_exit(code) }
        }
    });
    // Without the thread the report still comes, only without the bound.
    drop(spawned);
    cancel
}

/// The mapped buffer as atomic words.
///
/// # Safety
/// `buf.host` must be 8-aligned and valid for `buf.len` bytes for `'a`.
unsafe fn mapped_words<'a>(buf: &MappedBuf) -> &'a [AtomicU64] {
    debug_assert_eq!(buf.host as usize % 8, 0);
    // SAFETY: the caller guarantees alignment and validity; AtomicU64 has the
    // size and alignment of u64, and every access through it is atomic.
    unsafe { std::slice::from_raw_parts(buf.host.cast::<AtomicU64>(), buf.len / 8) }
}

/// 64 random bits from the OS (through std's hash-map keys) and the clock.
pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// Bytes of the frame stacks of `warps` warps ([`warp_stacks_bytes`] each),
/// or the usage error a `--stack-size` too large for them is.
pub fn stacks_bytes(stack_size: u64, lanes: u32, warps: u64) -> Result<u64, PlanError> {
    let others = u64::from(lanes.saturating_sub(1)) * rt_abi::protocol::LANE_STACK_BYTES;
    stack_size
        .checked_add(others)
        .and_then(|per_warp| {
            debug_assert_eq!(per_warp, warp_stacks_bytes(stack_size, lanes));
            per_warp.checked_mul(warps)
        })
        .ok_or(PlanError::StacksTooLarge { option: "--stack-size", size: stack_size, warps, lanes })
}

/// A failed allocation whose size the user chose with `option`: a usage
/// error naming it (a failure at the defaults stays the driver's error).
fn refused_size(option: &str, size: u64, e: BackendError) -> BackendError {
    match e {
        BackendError::Api { call, name, .. } => {
            BackendError::Usage(format!("{option} {size}: the device could not allocate it ({call}: {name}); lower {option}"))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;
