//! The functions the patched `std` calls and the runtime defines.
//!
//! The vendor runtime crate (`rt-amdgpu` or `rt-nvptx`, linked into every
//! GPU program as a dependency of `std`) defines them with
//! `#[unsafe(no_mangle)]` (rt-common's `define_gpu_std_abi!`), forwarding
//! to rt-common's generic code; std's GPU sys layer
//! (`gpu-toolchain/std/`, `sys/pal/gpu/abi.rs`) imports those definitions
//! with `pub use`, so both sides share one signature. Other code (the
//! panic_abort crate, `gpu-lanes`) reaches them by symbol.
//! This is the pattern of std's zkvm platform: std stays thin, the runtime
//! does the work. The prefix `__gpu_std_` is reserved.
//!
//! Every function is called by one lane (the thread's leader lane) of a warp.
//! The exception is the lane function `f` of `__gpu_std_lanes_run`, which
//! runs on every lane; a lane other than 0 calling a function that uses
//! per-thread state (alloc family, write, flush, spawn/join/detach, sleep, yield,
//! futex_wait, tls_get/set, set_thread_name) aborts the program (exit code
//! 134) with a message on stderr instead of racing with lane 0.
//!
//! ```text
//! // heap (sys::alloc)
//! fn __gpu_std_alloc(size: usize, align: usize) -> *mut u8;          // null on OOM
//! fn __gpu_std_alloc_zeroed(size: usize, align: usize) -> *mut u8;
//! fn __gpu_std_dealloc(ptr: *mut u8, size: usize, align: usize);
//! fn __gpu_std_realloc(ptr: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8;
//! fn __gpu_std_heap_stats(out: *mut u64);   // out[0] = heap bytes, out[1] = largest free extent (OOM message)
//!
//! // stdio (sys::stdio): fd 1 = stdout, 2 = stderr; returns bytes taken or a negative ERR_*
//! fn __gpu_std_write(fd: u32, ptr: *const u8, len: usize) -> isize;
//! fn __gpu_std_flush();                   // waits until the host has taken the caller's earlier writes
//!
//! // process (sys::exit, sys::abort_internal, panic_abort)
//! fn __gpu_std_exit(code: i32) -> !;      // process::exit and the end of main
//! fn __gpu_std_abort() -> !;              // process::abort: exit code 134
//! fn __gpu_std_panic_abort() -> !;        // after a panic was printed: exit code 101
//!
//! // args and env (sys::args, sys::env): bytes stay valid for the whole program
//! fn __gpu_std_argc() -> usize;
//! fn __gpu_std_arg(i: usize, len_out: *mut usize) -> *const u8;
//! fn __gpu_std_envc() -> usize;
//! fn __gpu_std_env(i: usize, len_out: *mut usize) -> *const u8;       // "KEY=VALUE"
//! fn __gpu_std_exe(len_out: *mut usize) -> *const u8;  // LaunchBlock::exe (env::current_exe); null: none
//!
//! // time (sys::time) and randomness (sys::random)
//! fn __gpu_std_monotonic_ns() -> u64;     // device clock in ns, from its own origin (not the launch's)
//! fn __gpu_std_unix_time_ns() -> u64;     // launch epoch + monotonic
//! fn __gpu_std_random_u64() -> u64;       // seeded by the launcher, mixed per call
//!
//! // files, directories, stdin (sys::fs, sys::stdio): one call of hostcall.rs's CALL_*;
//! // returns its status (-errno on failure); *reply_len = the reply's whole length
//! fn __gpu_std_host_call(call: u32, head: *const u8, head_len: usize, body: *const u8, body_len: usize,
//!                        reply: *mut u8, reply_cap: usize, reply_len: *mut usize) -> i64;
//!
//! // threads (sys::thread)
//! fn __gpu_std_spawn(stack_size: usize, entry: unsafe extern "C" fn(*mut u8), data: *mut u8,
//!                    on_detach: Option<unsafe extern "C" fn(*mut u8)>) -> i64;
//!     // >= 0: a handle; ERR_NO_FREE_WARP if every warp is busy;
//!     // ERR_STACK_TOO_BIG if stack_size exceeds the launch's stack and stacks
//!     // cannot come from the heap; ERR_NO_STACK_MEMORY if the heap is full.
//!     // entry(data) runs exactly once on the new thread's leader lane;
//!     // if the handle is detached, on_detach(data) once after entry returned.
//! fn __gpu_std_join(handle: i64);         // waits until the thread's entry returned; frees the warp
//! fn __gpu_std_detach(handle: i64);       // the warp frees itself when the entry returns
//!     // on_detach runs here if the entry has returned, else on the thread's warp after it
//! fn __gpu_std_is_finished(handle: i64) -> bool;  // the entry returned (acquire); not after join/detach
//! fn __gpu_std_thread_index() -> u32;     // warp index of the caller; main is 0
//! fn __gpu_std_set_thread_name(ptr: *const u8, len: usize);  // for host reports
//! fn __gpu_std_sleep_ns(ns: u64);
//! fn __gpu_std_yield();
//! fn __gpu_std_available_parallelism() -> usize;   // warps in the thread table
//!
//! // futex (sys::futex): the std futex algorithms run over these
//! fn __gpu_std_futex_wait(addr: *const u32, expected: u32, timeout_ns: u64) -> bool;
//!     // returns false on timeout; u64::MAX = no timeout; spurious wakeups allowed
//! fn __gpu_std_futex_wake(addr: *const u32, count: u32) -> bool;   // u32::MAX = all
//! fn __gpu_std_poll_wait(ready: unsafe extern "C" fn(*const u8) -> bool, data: *const u8, timeout_ns: u64) -> bool;
//!     // sleep-polls ready(data) as futex_wait polls its word; false on timeout
//!
//! // thread-local keys (sys::thread_local): per-thread slot table
//! // keys TLS_KEY_STD_CURRENT, _THREAD_ID and _PANIC_COUNT are in use from the launch
//! fn __gpu_std_tls_create(dtor: Option<unsafe extern "C" fn(*mut u8)>) -> usize;  // usize::MAX: none left
//! fn __gpu_std_tls_get(key: usize) -> *mut u8;
//! fn __gpu_std_tls_set(key: usize, value: *mut u8);
//! fn __gpu_std_tls_destroy(key: usize);          // of a key no thread used (std: one it lost the race to publish)
//! fn __gpu_std_tls_run_dtors();             // the caller's destructors now; no-destructor values stay
//!     // destructors of non-null values run when a thread's entry returns
//!     // (repeated while any dtor sets a value again, at most 4 rounds)
//!
//! // lane-parallel work inside a thread (the gpu-lanes crate; not called by std)
//! fn __gpu_std_lanes_run(f: unsafe extern "C" fn(*const u8, u32), data: *const u8);
//!     // runs f(data, lane) once for every lane in 0..__gpu_std_lane_count() of the
//!     // caller's warp, concurrently where lane_count > 1; returns when all returned.
//!     // data must be reachable from every lane (heap or static, not the stack).
//! fn __gpu_std_lane_count() -> u32;      // NVIDIA 32; AMD the wave size (1 without gpu-ld); the CPU harness its LANES
//!
//! // benchmarks
//! fn __gpu_rt_host_call_nop();           // one OP_NOP host round trip with reply
//! ```

/// A thread's entry (`__gpu_std_spawn`), called through `extern "C"`
/// exactly as std passed it.
pub type Entry = unsafe extern "C" fn(*mut u8);
/// A lane function (`__gpu_std_lanes_run`): `f(data, lane)`.
pub type LaneFn = unsafe extern "C" fn(*const u8, u32);

/// `__gpu_std_write`: the fd is not 1 or 2.
pub const ERR_BAD_FD: isize = -9;
/// The `getrandom` backend's error when no host answers (no usable ring):
/// getrandom's first custom code (`Error::CUSTOM_START`, 0xC000_0000) + 1,
/// which getrandom 0.2, 0.3 and 0.4 all pass through as a custom error.
pub const GETRANDOM_NO_HOST: core::num::NonZeroU32 = match core::num::NonZeroU32::new(0xC000_0001) {
    Some(n) => n,
    None => unreachable!(),
};
/// `__gpu_std_spawn`: every warp of the launch is busy.
pub const ERR_NO_FREE_WARP: i64 = -11;
/// `__gpu_std_spawn`: the requested stack is larger than the launch provides.
pub const ERR_STACK_TOO_BIG: i64 = -12;
/// `__gpu_std_spawn`: the heap cannot hold the requested stack.
pub const ERR_NO_STACK_MEMORY: i64 = -13;

/// Exit code after a panic (as std on a host with `panic = "abort"` reports
/// through the runtime: the conventional Rust panic exit code).
pub const EXIT_PANIC: i32 = 101;
/// Exit code of `process::abort` (128 + SIGABRT, as a shell reports it).
pub const EXIT_ABORT: i32 = 134;
/// Maximum number of thread-local keys.
pub const TLS_KEYS: usize = 64;
/// Thread-local key reserved for std's `thread::current()` handle: in use
/// from the launch, without a destructor, never created or destroyed. A
/// constant key costs no load; a key created on first use is read from
/// memory on every access (on NVIDIA a round trip to the L2 cache).
pub const TLS_KEY_STD_CURRENT: usize = 1;
/// Thread-local key reserved for std's thread id (as [`TLS_KEY_STD_CURRENT`]).
pub const TLS_KEY_STD_THREAD_ID: usize = 2;
/// Thread-local key reserved for std's panic count (`panicking::panic_count`,
/// the count shifted left by one, the low bit "in the panic hook"; as
/// [`TLS_KEY_STD_CURRENT`]). Under `panic = "unwind"` every lock and unlock
/// asks `thread::panicking()` (poisoning), and upstream's answer loads a
/// global count first: after an acquire fence, an L2 round trip each.
pub const TLS_KEY_STD_PANIC_COUNT: usize = 3;
/// The reserved keys: `1..=TLS_RESERVED_KEYS`.
pub const TLS_RESERVED_KEYS: usize = 3;
