//! Stress tests: many cycles, every warp at once.

use std::cell::UnsafeCell;
use std::collections::HashSet;
use std::format;
use std::string::String;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::vec::Vec;

use super::*;
use crate::cpu::machine::runtime;
use rt_abi::protocol::THREAD_FREE;

/// 100,000 spawn/join cycles: the closure allocates on the device heap, and
/// main frees a block the child allocated (cross-thread free). Nothing
/// leaks: heap bytes in use back to the start, every slot FREE.
fn spawn_join_100k_leaks_nothing(lanes: u32) {
    let n = 8;
    let out = run_ok(cfg(n, lanes), move || {
        let cell = Arc::new(AtomicU64::new(0));
        let runs = Arc::new(AtomicU64::new(0));
        let t0 = std::time::Instant::now();
        for i in 0..100_000u64 {
            let (c, r) = (cell.clone(), runs.clone());
            let h = spawn(move || {
                r.fetch_add(1, Relaxed);
                // SAFETY: ABI heap calls with matching layouts.
                unsafe {
                    let tmp = __gpu_std_alloc(24, 8);
                    __gpu_std_dealloc(tmp, 24, 8);
                    let keep = __gpu_std_alloc(100 + (i % 50) as usize, 16);
                    assert!(!keep.is_null());
                    c.store(keep as u64, Relaxed);
                }
            })
            .unwrap();
            h.join();
            let p = cell.load(Relaxed) as *mut u8;
            // SAFETY: the child's block, same layout.
            unsafe { __gpu_std_dealloc(p, 100 + (i % 50) as usize, 16) };
        }
        assert_eq!(runs.load(Relaxed), 100_000, "each closure ran exactly once");
        std::eprintln!("100k spawn/join cycles: {:?}", t0.elapsed());
        for w in 1..n {
            assert_eq!(
                runtime().slot(w).state.load(Relaxed),
                THREAD_FREE,
                "warp {w}"
            );
        }
        0
    });
    assert_eq!(out.heap_in_use, out.heap_in_use_at_start);
}

/// Every warp prints at once, lines longer than a packet included, through
/// a small ring (backpressure): nothing lost, nothing interleaved.
fn all_threads_print_at_once(lanes: u32) {
    let n = 16;
    let lines_per_thread = 60;
    let mut c = cfg(n, lanes);
    c.ring_capacity = 8;
    let out = run_ok(c, move || {
        let hs: Vec<_> = (1..n)
            .map(|t| {
                spawn(move || {
                    for l in 0..lines_per_thread {
                        let pad = "x".repeat((t as usize * 37 + l * 11) % 500);
                        println(&format!("thread {t} line {l} {pad}"));
                    }
                })
                .unwrap()
            })
            .collect();
        for h in hs {
            h.join();
        }
        0
    });
    let mut seen = HashSet::new();
    for w in &out.writes {
        let s = String::from_utf8(w.bytes.clone()).unwrap();
        let f: Vec<&str> = s.trim_end().split(' ').collect();
        assert_eq!(f[0], "thread");
        let (t, l): (u32, usize) = (f[1].parse().unwrap(), f[3].parse().unwrap());
        assert_eq!(t, w.thread, "written by its own warp");
        let pad = "x".repeat((t as usize * 37 + l * 11) % 500);
        assert_eq!(s, format!("thread {t} line {l} {pad}\n"), "intact line");
        assert!(seen.insert((t, l)), "line printed once");
    }
    assert_eq!(seen.len(), (n as usize - 1) * lines_per_thread);
}

/// A std-style futex mutex (0 unlocked, 1 locked, 2 contended).
struct FutexMutex {
    state: AtomicU32,
    value: UnsafeCell<u64>,
}
// SAFETY: `value` is only touched under the lock.
unsafe impl Sync for FutexMutex {}

impl FutexMutex {
    fn lock(&self) {
        if self.state.compare_exchange(0, 1, Acquire, Relaxed).is_ok() {
            return;
        }
        while self.state.swap(2, Acquire) != 0 {
            // SAFETY: a live word.
            unsafe { __gpu_std_futex_wait(self.state.as_ptr(), 2, u64::MAX) };
        }
    }
    fn unlock(&self) {
        if self.state.swap(0, Release) == 2 {
            // SAFETY: a live word.
            unsafe { __gpu_std_futex_wake(self.state.as_ptr(), 1) };
        }
    }
}

/// Every warp contends for one futex lock: no lost update, no livelock.
fn futex_mutex_all_warps_contend(lanes: u32) {
    let n = 32;
    let per = 300u64;
    run_ok(cfg(n, lanes), move || {
        let m = Arc::new(FutexMutex {
            state: AtomicU32::new(0),
            value: UnsafeCell::new(0),
        });
        let work = move |m: &FutexMutex| {
            for _ in 0..per {
                m.lock();
                // SAFETY: under the lock.
                unsafe { *m.value.get() += 1 };
                m.unlock();
            }
        };
        let hs: Vec<_> = (1..n)
            .map(|_| {
                let m = m.clone();
                spawn(move || work(&m)).unwrap()
            })
            .collect();
        work(&m);
        for h in hs {
            h.join();
        }
        // SAFETY: every other thread was joined.
        assert_eq!(unsafe { *m.value.get() }, per * n as u64);
        0
    });
}

/// Every warp allocates and frees through the ABI at once (warp caches and shared
/// lists); everything comes back.
fn heap_all_warps_at_once(lanes: u32) {
    let n = 16;
    let out = run_ok(cfg(n, lanes), move || {
        let hs: Vec<_> = (1..n)
            .map(|t| {
                spawn(move || {
                    let mut live: Vec<(usize, usize)> = Vec::new();
                    for i in 0..5000usize {
                        let size = 1 + (i * 31 + t as usize * 7) % 3000;
                        let align = 1 << (i % 8);
                        // SAFETY: ABI heap calls with matching layouts.
                        unsafe {
                            let p = __gpu_std_alloc(size, align);
                            assert!(!p.is_null() && p as usize % align == 0);
                            p.write_bytes(t as u8, size);
                            live.push((p as usize, size | (align << 32)));
                            if live.len() > 8 {
                                let (q, sa) = live.swap_remove(i % live.len());
                                let (s, a) = (sa & 0xffff_ffff, sa >> 32);
                                assert!(
                                    core::slice::from_raw_parts(q as *const u8, s)
                                        .iter()
                                        .all(|&x| x == t as u8)
                                );
                                __gpu_std_dealloc(q as *mut u8, s, a);
                            }
                        }
                    }
                    for (q, sa) in live {
                        // SAFETY: as allocated.
                        unsafe { __gpu_std_dealloc(q as *mut u8, sa & 0xffff_ffff, sa >> 32) };
                    }
                })
                .unwrap()
            })
            .collect();
        for h in hs {
            h.join();
        }
        0
    });
    assert_eq!(out.heap_in_use, out.heap_in_use_at_start);
}

lanes_test!(
    spawn_join_100k_leaks_nothing,
    all_threads_print_at_once,
    futex_mutex_all_warps_contend,
    heap_all_warps_at_once
);
