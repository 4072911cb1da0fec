//! Program end, args and env, time, randomness.

use core::sync::atomic::Ordering::Relaxed as CoreRelaxed;

use crate::hal::{Hal, ticks_to_ns};
use crate::primitive::Ordering::Relaxed;
use rt_abi::protocol::{OP_ABORT, OP_EXIT, StrRef, THREAD_EXITED};
use crate::ring::{self, Packet};
use crate::runtime::Runtime;

/// Ends the program with `op` (`OP_EXIT` or `OP_ABORT`) and `code`, unless
/// another thread already did: sends the packet (after everything this
/// thread wrote, which is already in the ring), then raises every warp's
/// exit flag so idle and blocked warps leave the kernel. Marks the caller's
/// slot EXITED; the caller then ends its warp (or returns from the kernel).
pub fn end_program<H: Hal>(rt: &Runtime, op: u32, code: i32) {
    let me = rt.me::<H>();
    let ctl = rt.slot(0);
    // Relaxed CAS: it only elects the one thread that reports; the exit
    // flags below carry no data.
    if ctl
        .exit_claim
        .compare_exchange(0, 1, Relaxed, Relaxed)
        .is_ok()
    {
        if rt.ring().is_usable() {
            let p = Packet {
                op,
                thread: me,
                flags: 0,
                arg0: code as u32 as u64,
                arg1: 0,
            };
            ring::send::<H, _>(rt.ring(), &rt.slot(me).wait, rt.wait_sleep_ns(), &p, &[]);
        }
        for w in 0..rt.num_threads() {
            rt.slot(w).exit.store(1, Relaxed);
            H::wake(w);
        }
    }
    rt.slot(me).state.store(THREAD_EXITED, Relaxed);
}

/// `__gpu_std_exit`.
pub fn exit<H: Hal>(rt: &Runtime, code: i32) -> ! {
    end_program::<H>(rt, OP_EXIT, code);
    H::end_program()
}

/// `__gpu_std_abort` / `__gpu_std_panic_abort`.
pub fn abort<H: Hal>(rt: &Runtime, code: i32) -> ! {
    end_program::<H>(rt, OP_ABORT, code);
    H::end_program()
}

/// Entry `i` of a launch table of `n` [`StrRef`]s at `table`.
fn str_at(table: u64, n: u64, i: usize, len_out: *mut usize) -> *const u8 {
    let (ptr, len) = if (i as u64) < n && table != 0 {
        // SAFETY: the launcher provides `n` StrRefs at `table` for the whole
        // program (LaunchBlock contract).
        let s: StrRef = unsafe { *(table as usize as *const StrRef).add(i) };
        (s.ptr as usize as *const u8, s.len as usize)
    } else {
        (core::ptr::null(), 0)
    };
    if !len_out.is_null() {
        // SAFETY: std passes a valid out-pointer (or null, checked).
        unsafe { *len_out = len };
    }
    ptr
}

/// `__gpu_std_argc`.
pub fn argc(rt: &Runtime) -> usize {
    rt.launch().argc as usize
}

/// `__gpu_std_arg`.
pub fn arg(rt: &Runtime, i: usize, len_out: *mut usize) -> *const u8 {
    str_at(rt.launch().argv, rt.launch().argc, i, len_out)
}

/// `__gpu_std_exe`: the executable's path, null if the launcher gave none.
pub fn exe(rt: &Runtime, len_out: *mut usize) -> *const u8 {
    let s = rt.launch().exe;
    let ptr = if s.len == 0 { core::ptr::null() } else { s.ptr as usize as *const u8 };
    if !len_out.is_null() {
        // SAFETY: std passes a valid out-pointer (or null, checked).
        unsafe { *len_out = if ptr.is_null() { 0 } else { s.len as usize } };
    }
    ptr
}

/// `__gpu_std_envc`.
pub fn envc(rt: &Runtime) -> usize {
    rt.launch().envc as usize
}

/// `__gpu_std_env`.
pub fn env(rt: &Runtime, i: usize, len_out: *mut usize) -> *const u8 {
    str_at(rt.launch().envp, rt.launch().envc, i, len_out)
}

/// `__gpu_std_monotonic_ns`: the device clock in ns, from the clock's own
/// origin. `Instant` needs only differences, and subtracting the launch's
/// start would put a load of the runtime's configuration on every
/// `Instant::now`: after any acquire (which empties the L1 cache on NVIDIA)
/// that is a round trip to the L2 cache, between reading the clock and
/// using its value.
#[inline]
pub fn monotonic_ns<H: Hal>() -> u64 {
    ticks_to_ns::<H>(H::fixed_frequency_clock())
}

/// `__gpu_std_unix_time_ns`: the launcher's epoch plus the time since warp 0
/// started.
pub fn unix_time_ns<H: Hal>(rt: &Runtime) -> u64 {
    let since_start = ticks_to_ns::<H>(H::fixed_frequency_clock().wrapping_sub(rt.start_ticks()));
    rt.launch().epoch_unix_ns.wrapping_add(since_start)
}

/// `__gpu_std_random_u64`: splitmix64 of the launch seed and a call counter.
pub fn random_u64(rt: &Runtime) -> u64 {
    // Relaxed: any distinct counter value will do.
    let n = rt.random_calls.fetch_add(1, CoreRelaxed);
    splitmix64(
        rt.launch()
            .random_seed
            .wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    )
}

/// The splitmix64 finaliser.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
