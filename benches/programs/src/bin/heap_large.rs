//! `heap_large`: memory for real data at the default `--heap-size`. The
//! largest single `Vec` the heap gives (bisection with `try_reserve_exact`
//! to 64 MiB), and the time to allocate 10 GiB and write one word in each
//! 4 KiB page of it from every thread (10 samples; the threads are spawned
//! once and meet at a `Barrier` per sample, so spawns are not timed; the
//! free after each sample is not timed either).
use gpu_benches::{Row, on_gpu, parallelism};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::Instant;

const PAGE: usize = 4096;
const TOUCH_BYTES: usize = 10 << 30;
const SAMPLES: usize = 10;

/// The largest `try_reserve_exact` that succeeds, to `step` bytes.
fn largest_block(step: usize) -> usize {
    let (mut lo, mut hi) = (0usize, 1usize << 40);
    while hi - lo > step {
        let mid = lo + (hi - lo) / 2;
        let mut v: Vec<u8> = Vec::new();
        // black_box: LLVM may remove an allocation never used, and its failure.
        if std::hint::black_box(&mut v).try_reserve_exact(mid).is_ok() {
            lo = mid
        } else {
            hi = mid
        }
    }
    lo
}

fn main() {
    let largest = largest_block(64 << 20);
    Row::new("heap_large", "largest_block", "bytes")
        .int("gib", (largest >> 30) as i128)
        .str("how", "largest Vec::try_reserve_exact, bisected to 64 MiB")
        .value(largest as f64)
        .print();

    let n = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { parallelism() };
    let pages = TOUCH_BYTES / PAGE;
    let base = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(Barrier::new(n + 1));
    let workers: Vec<_> = (0..n)
        .map(|t| {
            let (base, go) = (base.clone(), go.clone());
            std::thread::spawn(move || {
                let (first, last) = (pages * t / n, pages * (t + 1) / n);
                for _ in 0..SAMPLES {
                    go.wait();
                    let p = base.load(Relaxed) as *mut u64;
                    for page in first..last {
                        // SAFETY: within the 10 GiB block main allocated for this sample.
                        unsafe { p.add(page * PAGE / 8).write_volatile(page as u64) };
                    }
                    go.wait();
                }
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t = Instant::now();
        let mut v: Vec<u64> = Vec::new();
        if v.try_reserve_exact(TOUCH_BYTES / 8).is_err() {
            Row::new("heap_large", "alloc_touch_10g", "ns").not_run("the heap has no 10 GiB block").print();
            std::process::exit(0);
        }
        base.store(v.as_mut_ptr() as usize, Relaxed);
        go.wait(); // the Barrier orders the store before the workers' loads
        go.wait();
        samples.push(t.elapsed().as_nanos() as u64);
        drop(v);
    }
    for w in workers {
        w.join().unwrap();
    }
    Row::new("heap_large", "alloc_touch_10g", "ns")
        .int("threads", n as i128)
        .str("how", "Vec::try_reserve_exact(10 GiB), one word written per 4 KiB page by every thread")
        .latency(&mut samples)
        .print();
}
