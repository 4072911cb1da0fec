//! Row 2: how long a sleeping thread takes to run after it is handed work.
//! `gpurun-dev bench` runs this once per idle policy (`--idle-sleep-ns`, also in
//! `GPU_BENCH_IDLE_SLEEP_NS`) and measures `idle_cost` at the same policies.
//!
//! - `spawn_to_start`: `spawn` to the first instruction of the closure, the
//!   idle warps given time to reach their longest idle sleep between samples;
//! - `spawn_to_start_hot`: the same, back to back (the warp just went idle);
//! - `unpark`: `Thread::unpark` to the return of `park` in a parked thread.
use gpu_benches::{Row, SAMPLES, WARMUP, env_u64, ns, stamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::thread;
use std::time::{Duration, Instant};

fn main() {
    // Between samples, long enough for an idle warp's backoff to reach its
    // longest sleep (the runtime's default policy is 1 µs).
    let idle_ns = env_u64("GPU_BENCH_IDLE_SLEEP_NS").filter(|&n| n > 0).unwrap_or(1000);
    let gap = Duration::from_nanos((3 * idle_ns).max(50_000));

    for (variant, pause) in [("spawn_to_start", Some(gap)), ("spawn_to_start_hot", None)] {
        let mut samples = Vec::with_capacity(SAMPLES);
        for i in 0..WARMUP + SAMPLES {
            if let Some(p) = pause {
                thread::sleep(p);
            }
            let t0 = Instant::now();
            let started = thread::spawn(move || ns(t0.elapsed())).join().unwrap();
            if i >= WARMUP {
                samples.push(started);
            }
        }
        Row::new("wake_latency", variant, "ns").int("gap_ns", pause.map_or(0, ns) as i128).latency(&mut samples).print();
    }

    // 0: nothing posted; otherwise 1 + the unparker's timestamp.
    let base = Instant::now();
    let posted = Arc::new(AtomicU64::new(0));
    let p = posted.clone();
    let parked = thread::spawn(move || {
        let mut samples = Vec::with_capacity(SAMPLES);
        for i in 0..WARMUP + SAMPLES {
            loop {
                let v = p.swap(0, AcqRel);
                if v != 0 {
                    if i >= WARMUP {
                        samples.push(stamp(base).saturating_sub(v - 1));
                    }
                    break;
                }
                thread::park();
            }
        }
        samples
    });
    for _ in 0..WARMUP + SAMPLES {
        thread::sleep(gap); // the other thread is parked again by now
        posted.store(stamp(base) + 1, Release);
        parked.thread().unpark();
        while posted.load(Acquire) != 0 {
            thread::yield_now();
        }
    }
    let mut samples = parked.join().unwrap();
    Row::new("wake_latency", "unpark", "ns").int("gap_ns", ns(gap) as i128).latency(&mut samples).print();
}
