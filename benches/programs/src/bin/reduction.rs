//! Row 7: sum 4 GiB of f32.
//!
//! NOT THE BENCHMARK YET on the GPU: the row asks for all lanes of each warp,
//! and a std thread runs on one lane (DESIGN: lane-parallel work inside a
//! thread is a separate, later API). Until that API exists this program
//! prints the row as "not run: lane-parallel API pending" and measures, as a
//! separate variant `one_lane_per_thread`, every warp summing its share on
//! one lane: a real number, but not the one the goal is about. On the host the
//! same code is the CPU's figure (every thread, vectorised by the compiler).
//!
//! `GPU_BENCH_REDUCTION_MIB` overrides the size (for small machines).
use gpu_benches::{Row, env_u64, on_gpu, parallelism, stamp};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Sum in f32 blocks (exact for the all-ones data) added up in f64, with
/// eight accumulators so the compiler can vectorise and pipeline the loads.
fn sum(xs: &[f32]) -> f64 {
    let mut total = 0f64;
    for block in xs.chunks(4096) {
        let mut acc = [0f32; 8];
        let mut it = block.chunks_exact(8);
        for c in &mut it {
            for k in 0..8 {
                acc[k] += c[k];
            }
        }
        total += acc.iter().map(|&a| a as f64).sum::<f64>() + it.remainder().iter().map(|&a| a as f64).sum::<f64>();
    }
    total
}

fn main() {
    let bytes = env_u64("GPU_BENCH_REDUCTION_MIB").unwrap_or(4096) << 20;
    let floats = (bytes / 4) as usize;
    let workers = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { parallelism() };
    let base = Instant::now();
    let go = Arc::new(Barrier::new(workers + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..workers)
        .map(|w| {
            let len = floats / workers + usize::from(w < floats % workers);
            let (go, stop) = (go.clone(), stop.clone());
            std::thread::spawn(move || {
                let data = vec![1.0f32; len];
                let mut windows = Vec::new();
                let mut ok = true;
                loop {
                    go.wait();
                    if stop.load(Relaxed) {
                        break;
                    }
                    let t0 = stamp(base);
                    let s = sum(black_box(&data));
                    windows.push((t0, stamp(base)));
                    ok &= s == len as f64;
                    go.wait();
                }
                (windows, ok)
            })
        })
        .collect();
    // Repetitions until a second has passed (at least 3, at most 50).
    let start = Instant::now();
    let mut reps = 0;
    loop {
        let done = reps >= 50 || (reps >= 3 && start.elapsed() >= Duration::from_secs(1));
        stop.store(done, Relaxed);
        go.wait();
        if done {
            break;
        }
        go.wait();
        reps += 1;
    }
    // A repetition lasts from the first thread's start to the last one's end.
    let mut span = vec![(u64::MAX, 0u64); reps];
    let mut correct = true;
    for h in hs {
        let (windows, ok) = h.join().unwrap();
        correct &= ok;
        for (r, (a, b)) in windows.into_iter().enumerate() {
            span[r] = (span[r].0.min(a), span[r].1.max(b));
        }
    }
    let total_ns: u64 = span.iter().map(|(a, b)| b - a).sum();
    let gbps = (bytes * reps as u64) as f64 / total_ns as f64;
    let measured = |variant: &str| {
        Row::new("reduction", variant, "GB/s")
            .int("bytes", bytes as i128)
            .int("threads", workers as i128)
            .int("reps", reps as i128)
            .bool("sum_correct", correct)
            .value(gbps)
    };
    if on_gpu() {
        Row::new("reduction", "", "GB/s").not_run("lane-parallel API pending").print();
        measured("one_lane_per_thread").str("note", "one lane per warp: not the all-lanes benchmark").print();
    } else {
        measured("").print();
    }
}
