//! Row 10: one `Barrier::wait` cycle with N = 2, 32, 132, 1024 and all
//! threads (main included). A sample is the time between two consecutive
//! returns from `wait` on main; up to 10,000 cycles or 3 s per N.
use gpu_benches::{Row, SAMPLES, WARMUP, ns, parallelism};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const BUDGET: Duration = Duration::from_secs(3);

fn cycle_times(n: usize) -> Vec<u64> {
    let b = Arc::new(Barrier::new(n));
    // The last cycle, set by main before it enters that cycle's wait: every
    // thread compares it with its own cycle count after each wait, so all
    // leave after the same cycle (a plain flag could be seen a cycle early).
    let last_cycle = Arc::new(AtomicUsize::new(usize::MAX));
    let others: Vec<_> = (1..n)
        .map(|_| {
            let (b, last_cycle) = (b.clone(), last_cycle.clone());
            std::thread::spawn(move || {
                for cycle in 0.. {
                    b.wait();
                    if last_cycle.load(Relaxed) == cycle {
                        break;
                    }
                }
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(SAMPLES);
    let start = Instant::now();
    let mut last = Instant::now();
    for cycle in 0.. {
        let done = samples.len() >= SAMPLES || start.elapsed() >= BUDGET;
        if done {
            last_cycle.store(cycle, Relaxed);
        }
        b.wait();
        let now = Instant::now();
        if cycle > WARMUP {
            samples.push(ns(now - last));
        }
        last = now;
        if done {
            break;
        }
    }
    others.into_iter().for_each(|h| h.join().unwrap());
    samples
}

fn main() {
    let all = parallelism();
    let mut sizes: Vec<(String, usize)> =
        [2, 32, 132, 1024].into_iter().filter(|&n| n < all).map(|n| (format!("N={n}"), n)).collect();
    sizes.push(("N=all".into(), all.max(2)));
    for (variant, n) in sizes {
        let mut samples = cycle_times(n);
        Row::new("barrier", &variant, "ns").int("threads", n as i128).latency(&mut samples).print();
    }
}
