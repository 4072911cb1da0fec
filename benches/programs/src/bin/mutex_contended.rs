//! Row 3c: every thread contends for one `Mutex` (on the GPU every resident
//! warp but main's; on the host 1,000 threads). A sample is one thread's wait
//! to acquire it; the count must come out exact (no lost update, no livelock).
use gpu_benches::{Row, ns, on_gpu, parallelism};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

/// Acquisitions per thread.
const ROUNDS: usize = 8;

fn main() {
    let n = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { 1000 };
    let m = Arc::new(Mutex::new(0u64));
    let start = Arc::new(Barrier::new(n + 1));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || {
                let mut waits = Vec::with_capacity(ROUNDS);
                start.wait();
                for _ in 0..ROUNDS {
                    let t = Instant::now();
                    let mut g = m.lock().unwrap();
                    waits.push(ns(t.elapsed()));
                    *g += 1;
                }
                waits
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    let mut samples = Vec::with_capacity(n * ROUNDS);
    for h in threads {
        samples.extend(h.join().unwrap());
    }
    let secs = t.elapsed().as_secs_f64();
    let total = *m.lock().unwrap();
    Row::new("mutex_contended", "", "ns")
        .int("contenders", n as i128)
        .bool("counter_ok", total == (n * ROUNDS) as u64)
        .num("acquisitions_per_s", total as f64 / secs)
        .latency(&mut samples)
        .print();
}
