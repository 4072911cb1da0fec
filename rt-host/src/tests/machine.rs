//! Every runtime primitive through the `__gpu_std_*` ABI on a CPU machine.

use std::boxed::Box;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::vec::Vec;

use super::*;
use rt_abi::abi::{ERR_BAD_FD, ERR_STACK_TOO_BIG, EXIT_ABORT, EXIT_PANIC};
use crate::cpu::machine::runtime;
use rt_abi::protocol::{OP_ABORT, THREAD_EXITED, THREAD_FREE};

fn hello(lanes: u32) {
    let out = run_ok(cfg(4, lanes), || {
        println("hello from warp 0");
        0
    });
    assert_eq!(out.output(1), "hello from warp 0\n");
    assert!(
        out.slot_states.iter().all(|&s| s == THREAD_EXITED),
        "{:?}",
        out.slot_states
    );
}

fn exit_code_of_main(lanes: u32) {
    let out = run(cfg(2, lanes), || 7);
    assert_eq!(out.exit, Some((OP_EXIT, 7)));
}

fn spawn_join_runs_once_on_another_warp(lanes: u32) {
    run_ok(cfg(4, lanes), || {
        let hits = arc_u32();
        let seen = arc_u32();
        let (h2, s2) = (hits.clone(), seen.clone());
        let h = spawn(move || {
            h2.fetch_add(1, Relaxed);
            s2.store(me(), Relaxed);
        })
        .unwrap();
        h.join();
        assert_eq!(hits.load(Relaxed), 1);
        assert_ne!(seen.load(Relaxed), 0, "ran on another warp");
        // Four warps, main's included: three to spawn.
        assert_eq!(__gpu_std_available_parallelism(), 3);
        0
    });
}

fn no_free_warp_then_success_after_join(lanes: u32) {
    run_ok(cfg(6, lanes), || {
        let go = arc_u32();
        let mut hs = Vec::new();
        for _ in 0..5 {
            let g = go.clone();
            hs.push(spawn(move || wait_nonzero(&g)).expect("a free warp"));
        }
        assert_eq!(spawn(|| {}).unwrap_err(), rt_abi::abi::ERR_NO_FREE_WARP);
        set_and_wake(&go);
        hs.pop().unwrap().join();
        spawn(|| {}).expect("a warp is free again").join();
        for h in hs {
            h.join();
        }
        0
    });
}

/// `for _ in 0..available_parallelism() { spawn }` from main: every spawn
/// gets a warp, at the smallest launches too (2 warps: one to spawn; 1 warp:
/// none, and std's `available_parallelism` returns an error).
fn available_parallelism_threads_all_spawn(lanes: u32) {
    for warps in [1, 2, 3, 6] {
        run_ok(cfg(warps, lanes), move || {
            let n = __gpu_std_available_parallelism();
            assert_eq!(n, warps as usize - 1);
            let hits = arc_u32();
            let hs: Vec<_> = (0..n)
                .map(|_| {
                    let h = hits.clone();
                    spawn(move || {
                        h.fetch_add(1, Relaxed);
                    })
                    .expect("a warp for each of available_parallelism's threads")
                })
                .collect();
            hs.into_iter().for_each(|h| h.join());
            assert_eq!(hits.load(Relaxed), n as u32);
            0
        });
    }
}

fn stack_size_limit(lanes: u32) {
    let c = cfg(3, lanes);
    let limit = c.stack_size as usize;
    run_ok(c, move || {
        assert_eq!(
            spawn_with_stack(limit + 1, || {}).unwrap_err(),
            ERR_STACK_TOO_BIG
        );
        spawn_with_stack(limit, || {}).unwrap().join();
        spawn_with_stack(0, || {}).unwrap().join();
        0
    });
}

/// With shared stacks, a stack above the launch's comes from the heap, is
/// handed to the thread, and goes back to the heap after it ends; a stack
/// the heap cannot hold is `ERR_NO_STACK_MEMORY`.
fn heap_stacks_above_the_launch_stack(lanes: u32) {
    let mut c = cfg(3, lanes);
    c.shared_stacks = true;
    let limit = c.stack_size as usize;
    let heap = c.heap_bytes;
    run_ok(c, move || {
        let rt = runtime();
        // Warm the per-warp heap caches so the in-use count is stable.
        spawn_with_stack(limit * 2, || {}).unwrap().join();
        let before = rt.heap().bytes_in_use(rt.slots());
        for want in [limit + 1, limit * 2, limit * 4] {
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            spawn_with_stack(want, move || {
                let (at, len) = crate::cpu::heap_stack();
                assert_eq!(at % rt_common::threads::STACK_ALIGN, 0, "aligned");
                s.store(len as u64, SeqCst);
            })
            .unwrap()
            .join();
            assert_eq!(seen.load(SeqCst), want as u64, "the thread ran on a stack of the size asked");
        }
        // A stack within the launch's needs no heap stack.
        let seen = Arc::new(AtomicU64::new(1));
        let s = seen.clone();
        spawn_with_stack(limit, move || s.store(crate::cpu::heap_stack().1 as u64, SeqCst)).unwrap().join();
        assert_eq!(seen.load(SeqCst), 0);
        assert_eq!(rt.heap().bytes_in_use(rt.slots()), before, "heap stacks are freed");
        assert_eq!(spawn_with_stack(heap * 2, || {}).unwrap_err(), rt_abi::abi::ERR_NO_STACK_MEMORY);
        0
    });
}

fn detach_before_and_after_finish(lanes: u32) {
    run_ok(cfg(3, lanes), || {
        for early in [true, false] {
            let done = arc_u32();
            let go = arc_u32();
            let (d, g) = (done.clone(), go.clone());
            let h = spawn(move || {
                wait_nonzero(&g);
                set_and_wake(&d);
            })
            .unwrap();
            let w = h.0 as u32;
            if early {
                h.detach();
                set_and_wake(&go);
                wait_nonzero(&done);
            } else {
                set_and_wake(&go);
                wait_nonzero(&done);
                // Gives the thread time to finish.
                __gpu_std_sleep_ns(1_000_000);
                h.detach();
            }
            // The warp frees itself (or was freed by detach).
            let slot = runtime().slot(w);
            let t = std::time::Instant::now();
            while slot.state.load(Relaxed) != THREAD_FREE {
                assert!(t.elapsed().as_secs() < 10, "detached warp never freed");
                __gpu_std_yield();
            }
        }
        0
    });
}

/// What [`on_detach_runs_once_after_the_entry`]'s threads share.
struct DetachShared {
    go: AtomicU32,
    entry_done: AtomicU32,
    cleanups: AtomicU32,
}

unsafe extern "C" fn wait_then_finish(data: *mut u8) {
    // SAFETY: `data` is the test's leaked `DetachShared`.
    let s = unsafe { &*(data as *const DetachShared) };
    while s.go.load(SeqCst) == 0 {
        __gpu_std_yield();
    }
    s.entry_done.store(1, SeqCst);
}

unsafe extern "C" fn count_cleanup(data: *mut u8) {
    // SAFETY: as above.
    let s = unsafe { &*(data as *const DetachShared) };
    assert_eq!(s.entry_done.load(SeqCst), 1, "on_detach ran before the entry returned");
    s.cleanups.fetch_add(1, SeqCst);
}

/// `on_detach` runs once, after the entry returned, whether the handle is
/// detached before the thread ends (on the thread's warp) or after (in
/// `detach`); `is_finished` says when the entry has returned.
fn on_detach_runs_once_after_the_entry(lanes: u32) {
    run_ok(cfg(3, lanes), || {
        for early in [true, false] {
            let s: &'static DetachShared = Box::leak(Box::new(DetachShared {
                go: AtomicU32::new(0),
                entry_done: AtomicU32::new(0),
                cleanups: AtomicU32::new(0),
            }));
            let data = s as *const DetachShared as *mut u8;
            // SAFETY: the entry and `on_detach` are sound once each on `s`,
            // which lives for the program.
            let h = unsafe { __gpu_std_spawn(0, wait_then_finish, data, Some(count_cleanup)) };
            assert!(h > 0, "spawn failed: {h}");
            assert!(!__gpu_std_is_finished(h), "finished before it was let go");
            if early {
                // SAFETY: a live handle, detached once.
                unsafe { __gpu_std_detach(h) };
                s.go.store(1, SeqCst);
            } else {
                s.go.store(1, SeqCst);
                while !__gpu_std_is_finished(h) {
                    __gpu_std_yield();
                }
                assert_eq!(s.entry_done.load(SeqCst), 1);
                assert_eq!(s.cleanups.load(SeqCst), 0, "on_detach ran without a detach");
                // SAFETY: as above.
                unsafe { __gpu_std_detach(h) };
                assert_eq!(s.cleanups.load(SeqCst), 1, "detach after the end runs on_detach itself");
            }
            let slot = runtime().slot(h as u32);
            let t = std::time::Instant::now();
            while slot.state.load(Acquire) != THREAD_FREE {
                assert!(t.elapsed().as_secs() < 10, "detached warp never freed");
                __gpu_std_yield();
            }
            assert_eq!(s.cleanups.load(SeqCst), 1, "on_detach ran once before the warp was free");
        }
        0
    });
}

fn names_truncate_on_char_boundary(lanes: u32) {
    run_ok(cfg(2, lanes), || {
        let slot = runtime().slot(0);
        // SAFETY: only this warp writes its name.
        let name = || unsafe {
            String::from_utf8((&*slot.name.get())[..slot.name_len.load(Relaxed) as usize].to_vec())
                .unwrap()
        };
        assert_eq!(name(), "main");
        let long = "é".repeat(30); // 60 bytes
        // SAFETY: a valid slice.
        unsafe { __gpu_std_set_thread_name(long.as_ptr(), long.len()) };
        assert_eq!(name(), "é".repeat(24));
        0
    });
}

fn args_env_time_random(lanes: u32) {
    let mut c = cfg(2, lanes);
    c.args = std::vec!["prog".into(), "--flag".into()];
    c.env = std::vec!["A=1".into(), "HOME=/gpu".into()];
    let epoch = c.epoch_unix_ns;
    run_ok(c, move || {
        let get = |f: unsafe extern "C" fn(usize, *mut usize) -> *const u8, i| {
            let mut len = 0;
            // SAFETY: a valid out-pointer; the bytes live for the program.
            let p = unsafe { f(i, &mut len) };
            if p.is_null() {
                None
            } else {
                Some(
                    String::from_utf8(unsafe { core::slice::from_raw_parts(p, len) }.to_vec())
                        .unwrap(),
                )
            }
        };
        assert_eq!(__gpu_std_argc(), 2);
        assert_eq!(__gpu_std_envc(), 2);
        assert_eq!(get(__gpu_std_arg, 1).as_deref(), Some("--flag"));
        assert_eq!(get(__gpu_std_arg, 2), None);
        assert_eq!(get(__gpu_std_env, 1).as_deref(), Some("HOME=/gpu"));
        let a = __gpu_std_monotonic_ns();
        __gpu_std_sleep_ns(3_000_000);
        let b = __gpu_std_monotonic_ns();
        assert!(b - a >= 3_000_000, "slept {} ns", b - a);
        // Unix time: the launch's epoch plus the time since the launch (at
        // least the sleep above; the monotonic clock's origin is its own).
        let u = __gpu_std_unix_time_ns();
        assert!(u >= epoch + (b - a) && u < epoch + 60_000_000_000, "unix time {u}, epoch {epoch}");
        __gpu_std_sleep_ns(1_000_000);
        assert!(__gpu_std_unix_time_ns() - u >= 1_000_000);
        let r: Vec<u64> = (0..100).map(|_| __gpu_std_random_u64()).collect();
        let mut d = r.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), 100);
        0
    });
}

fn futex_timeout_and_wake(lanes: u32) {
    run_ok(cfg(3, lanes), || {
        let w = AtomicU32::new(5);
        // SAFETY: a live word (all below).
        unsafe {
            let t = __gpu_std_monotonic_ns();
            assert!(
                !__gpu_std_futex_wait(w.as_ptr(), 5, 2_000_000),
                "no change: timeout"
            );
            assert!(__gpu_std_monotonic_ns() - t >= 2_000_000);
            assert!(
                __gpu_std_futex_wait(w.as_ptr(), 4, u64::MAX),
                "already different"
            );
        }
        let word = arc_u32();
        let w2 = word.clone();
        let h = spawn(move || set_and_wake(&w2)).unwrap();
        wait_nonzero(&word);
        h.join();
        0
    });
}

/// `__gpu_std_poll_wait` on two words (as std's channels wait: "either
/// changed"): a timeout when neither does, true at once when one already
/// has, and true once another thread changes the second.
fn poll_wait_on_two_words(lanes: u32) {
    unsafe extern "C" fn either_set(data: *const u8) -> bool {
        // SAFETY: `data` is the `(Arc, Arc)` below, live for the wait.
        let (a, b) = unsafe { &*(data as *const (Arc<AtomicU32>, Arc<AtomicU32>)) };
        a.load(Acquire) != 0 || b.load(Acquire) != 0
    }
    run_ok(cfg(3, lanes), || {
        let words = (arc_u32(), arc_u32());
        let data = &raw const words as *const u8;
        // SAFETY: `data` outlives every wait below.
        unsafe {
            let t = __gpu_std_monotonic_ns();
            assert!(!__gpu_std_poll_wait(either_set, data, 2_000_000), "nothing set: timeout");
            assert!(__gpu_std_monotonic_ns() - t >= 2_000_000);
        }
        let second = words.1.clone();
        let h = spawn(move || set_and_wake(&second)).unwrap();
        // SAFETY: as above.
        assert!(unsafe { __gpu_std_poll_wait(either_set, data, u64::MAX) }, "set by the other thread");
        h.join();
        words.0.store(1, Release);
        // SAFETY: as above.
        assert!(unsafe { __gpu_std_poll_wait(either_set, data, 0) }, "already set");
        0
    });
}

fn tls_values_and_destructors(lanes: u32) {
    // One counter per lane count: the two tests run concurrently.
    static DROPS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    static KEY: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    fn ix() -> usize {
        (crate::cpu::ctx().lanes == 64) as usize
    }
    unsafe extern "C" fn dtor(v: *mut u8) {
        DROPS[ix()].fetch_add(1, SeqCst);
        // Re-sets a value on the first call: a second round must run.
        if v as usize == 1 {
            // SAFETY: a live key.
            unsafe { __gpu_std_tls_set(KEY[ix()].load(SeqCst) as usize, 2 as *mut u8) };
        }
    }
    let i = (lanes == 64) as usize;
    DROPS[i].store(0, SeqCst);
    let out = run_ok(cfg(3, lanes), || {
        // SAFETY: valid calls of the TLS ABI (all below).
        unsafe {
            let k = __gpu_std_tls_create(Some(dtor));
            assert_ne!(k, 0);
            assert_ne!(k, usize::MAX);
            KEY[ix()].store(k as u64, SeqCst);
            let plain = __gpu_std_tls_create(None);
            __gpu_std_tls_set(plain, 7 as *mut u8);
            assert_eq!(__gpu_std_tls_get(plain), 7 as *mut u8);
            let h = spawn(move || {
                assert!(__gpu_std_tls_get(k).is_null(), "fresh thread starts null");
                __gpu_std_tls_set(k, 1 as *mut u8);
                __gpu_std_tls_set(plain, 5 as *mut u8);
                // std's thread start runs them before its own cleanup.
                __gpu_std_tls_run_dtors();
                assert_eq!(DROPS[ix()].load(SeqCst), 2, "dtor ran twice (value re-set once)");
                assert!(__gpu_std_tls_get(k).is_null(), "a destroyed value is null");
                assert_eq!(__gpu_std_tls_get(plain), 5 as *mut u8, "a value without dtor stays");
            })
            .unwrap();
            h.join();
            assert_eq!(DROPS[ix()].load(SeqCst), 2, "nothing left for thread exit to run");
            // The warp's values were cleared for its next thread.
            spawn(move || assert!(__gpu_std_tls_get(plain).is_null()))
                .unwrap()
                .join();
            let gone = __gpu_std_tls_create(None);
            __gpu_std_tls_set(gone, 9 as *mut u8);
            __gpu_std_tls_destroy(gone);
            let again = __gpu_std_tls_create(None);
            assert_eq!(again, gone, "the freed key is reused");
            assert!(__gpu_std_tls_get(again).is_null(), "and starts null");
            let keys: Vec<usize> = (0..100).map(|_| __gpu_std_tls_create(None)).collect();
            assert!(keys.contains(&usize::MAX), "keys run out cleanly");
            // main's value runs its dtor when main returns.
            __gpu_std_tls_set(k, 3 as *mut u8);
        }
        0
    });
    drop(out);
    assert_eq!(
        DROPS[i].load(SeqCst),
        3,
        "main's TLS destructor ran at exit"
    );
}

fn write_bad_fd_and_host_round_trip(lanes: u32) {
    let out = run_ok(cfg(2, lanes), || {
        assert_eq!(write(3, b"x"), ERR_BAD_FD);
        assert_eq!(write(2, b""), 0);
        // SAFETY: no preconditions.
        for _ in 0..10 {
            unsafe { __gpu_rt_host_call_nop() };
        }
        write(2, b"err\n");
        0
    });
    assert_eq!(out.nops, 10);
    assert_eq!(out.output(2), "err\n");
}

/// `__gpu_std_flush` returns only once the host has consumed the caller's
/// last write (the host counts a packet consumed after copying it); with
/// nothing written it returns at once. Without the wait, the host would
/// not yet have consumed some of these when checked.
fn flush_waits_for_the_host(lanes: u32) {
    let out = run_ok(cfg(2, lanes), || {
        use rt_common::ring::RingMem;
        __gpu_std_flush();
        let slot = runtime().slot(0);
        let ring = runtime().ring();
        for _ in 0..50 {
            write(1, b"x\n");
            // SAFETY: warp 0's own slot, read by warp 0.
            let t = unsafe { *slot.private.last_write.get() } - 1;
            __gpu_std_flush();
            let consumed = ring.consumed().load(Relaxed);
            assert!(consumed > t, "ticket {t}: the host has consumed {consumed} after flush");
        }
        0
    });
    assert_eq!(out.output(1), "x\n".repeat(50));
}

/// getrandom's backend: the bytes come from the host (OS generator), a
/// payload at a time, into memory that may be uninitialised.
fn getrandom_backend_gets_host_bytes(lanes: u32) {
    let out = run_ok(cfg(2, lanes), || {
        let mut a = [0u8; 500];
        let mut b = [0u8; 500];
        // SAFETY: writable buffers of the given lengths.
        unsafe {
            assert_eq!(__getrandom_v03_custom(a.as_mut_ptr(), a.len()), Ok(()));
            assert_eq!(__getrandom_custom(b.as_mut_ptr(), b.len()), 0);
            assert_eq!(__getrandom_v03_custom(b.as_mut_ptr(), 0), Ok(()));
        }
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0) && b[400..].iter().any(|&x| x != 0));
        0
    });
    assert_eq!(out.random_bytes, 1000);
    assert!(out.host_errors.is_empty(), "{:?}", out.host_errors);
}

fn exit_from_spawned_thread_ends_all(lanes: u32) {
    let out = run(cfg(4, lanes), || {
        let never = arc_u32();
        let n2 = never.clone();
        let _blocked = spawn(move || wait_nonzero(&n2)).unwrap();
        let h = spawn(|| {
            println("bye");
            __gpu_std_exit(3)
        })
        .unwrap();
        h.join(); // never returns: the exit ends this warp too
        unreachable!()
    });
    assert_eq!(out.exit, Some((OP_EXIT, 3)));
    assert_eq!(out.output(1), "bye\n");
    assert!(
        out.slot_states.iter().all(|&s| s == THREAD_EXITED),
        "{:?}",
        out.slot_states
    );
}

fn abort_and_panic_codes(lanes: u32) {
    let out = run(cfg(2, lanes), || {
        __gpu_std_abort()
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    let out = run(cfg(3, lanes), || {
        spawn(|| panic!("boom")).unwrap().join();
        0
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_PANIC)));
}

/// Unwinding's word: one per warp, taken by `catch`, and null when a thread
/// starts even if the warp's previous thread ended with one in flight.
fn unwind_word_per_warp(lanes: u32) {
    run_ok(cfg(3, lanes), || {
        let (e, f) = (0x40 as *mut u8, 0x80 as *mut u8);
        assert!(__gpu_unwind_exception().is_null(), "main starts with none");
        assert!(__gpu_unwind_catch().is_null(), "catch with none in flight");
        // SAFETY (both resumes): the leader lane, none in flight; nothing
        // lowered runs here to catch the values.
        unsafe { __gpu_unwind_resume(e) };
        assert_eq!(__gpu_unwind_exception(), e);
        let first = Arc::new(AtomicU32::new(0));
        let first2 = first.clone();
        let f = f as usize;
        spawn(move || {
            let f = f as *mut u8;
            assert!(__gpu_unwind_exception().is_null(), "a thread starts with none");
            unsafe { __gpu_unwind_resume(f) };
            assert_eq!(__gpu_unwind_exception(), f);
            first2.store(__gpu_std_thread_index(), SeqCst);
        })
        .unwrap()
        .join();
        assert_eq!(__gpu_unwind_exception(), e, "another warp's resume left ours");
        assert_eq!(__gpu_unwind_catch(), e);
        assert!(__gpu_unwind_exception().is_null(), "catch leaves none");
        // The joined warp is the next spawn's (its hint): its word was
        // left non-null above.
        spawn(move || {
            assert_eq!(__gpu_std_thread_index(), first.load(SeqCst), "same warp");
            assert!(__gpu_unwind_exception().is_null(), "cleared at the thread's end");
        })
        .unwrap()
        .join();
        0
    });
}

/// Many threads overflowing their stacks at once: one report, the first
/// one's (with its thread's name), and the program aborts once.
fn stack_overflow_reported_once(lanes: u32) {
    use rt_common::stack::{Exhausted, overflow};
    fn overflow_now() -> ! {
        if crate::cpu::ctx().lanes == 64 {
            overflow::<crate::cpu::CpuHal<64>>(runtime(), Exhausted::CallStack)
        } else {
            overflow::<crate::cpu::CpuHal<32>>(runtime(), Exhausted::CallStack)
        }
    }
    let threads = 12;
    let out = run(cfg(threads + 1, lanes), move || {
        let ready = Arc::new(AtomicU32::new(0));
        for i in 0..threads {
            let ready = ready.clone();
            spawn(move || {
                let name = std::format!("walker-{i}");
                // SAFETY: a valid name.
                unsafe { __gpu_std_set_thread_name(name.as_ptr(), name.len()) };
                ready.fetch_add(1, SeqCst);
                while ready.load(SeqCst) < threads {
                    std::hint::spin_loop();
                }
                overflow_now()
            })
            .unwrap()
            .detach();
        }
        overflow_now()
    });
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    let err = out.output(2);
    assert_eq!(err.matches("has overflowed its stack").count(), 1, "{err}");
    assert!(err.contains("thread 'walker-") || err.contains("thread 'main'") || err.contains("thread '<unnamed>'"), "{err}");
}

fn bad_launch_block_is_reported(lanes: u32) {
    let mut c = cfg(3, lanes);
    c.launch_lanes = Some(if lanes == 32 { 64 } else { 32 });
    let out = run(c, || unreachable!());
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    let msg = out.output(2);
    assert!(
        msg.contains("lane") && msg.contains(&lanes.to_string()),
        "{msg}"
    );
    // Stacks laid out for another lane count: refused before any lane
    // could run in another's stack.
    let mut c = cfg(2, lanes);
    c.shared_stacks = true;
    c.launch_stack_lanes = Some(7);
    let out = run(c, || unreachable!());
    assert_eq!(out.exit, Some((OP_ABORT, EXIT_ABORT)));
    assert!(out.output(2).contains("laid out stacks for 7 lanes per warp"), "{}", out.output(2));
    let mut c = cfg(2, lanes);
    c.magic = 0xdead;
    let out = run(c, || unreachable!());
    assert!(out.output(2).contains("magic"), "{}", out.output(2));
}

lanes_test!(
    hello,
    exit_code_of_main,
    spawn_join_runs_once_on_another_warp,
    no_free_warp_then_success_after_join,
    available_parallelism_threads_all_spawn,
    stack_size_limit,
    heap_stacks_above_the_launch_stack,
    detach_before_and_after_finish,
    on_detach_runs_once_after_the_entry,
    names_truncate_on_char_boundary,
    args_env_time_random,
    futex_timeout_and_wake,
    poll_wait_on_two_words,
    tls_values_and_destructors,
    write_bad_fd_and_host_round_trip,
    flush_waits_for_the_host,
    getrandom_backend_gets_host_bytes,
    exit_from_spawned_thread_ends_all,
    abort_and_panic_codes,
    stack_overflow_reported_once,
    bad_launch_block_is_reported,
    unwind_word_per_warp,
);
