//! Row 14: `Box::new` + drop pairs per second (32-byte boxes), one thread,
//! then every thread at once (on the GPU every resident warp but main's; on
//! the host one per CPU), each allocating for one second.
use gpu_benches::{Row, on_gpu, parallelism};
use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const RUN: Duration = Duration::from_secs(1);

/// (pairs, seconds) of boxing for about `RUN`.
fn churn() -> (u64, f64) {
    let t = Instant::now();
    let mut pairs = 0u64;
    while t.elapsed() < RUN {
        for i in 0..64u64 {
            drop(black_box(Box::new([i; 4])));
        }
        pairs += 64;
    }
    (pairs, t.elapsed().as_secs_f64())
}

fn main() {
    let (pairs, secs) = churn();
    Row::new("heap", "1_thread", "pairs/s").int("threads", 1).int("pairs", pairs as i128).value(pairs as f64 / secs).print();

    let n = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { parallelism() };
    let go = Arc::new(Barrier::new(n));
    let workers: Vec<_> = (0..n)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                go.wait();
                churn()
            })
        })
        .collect();
    let (mut pairs, mut secs) = (0u64, 0f64);
    for w in workers {
        let (p, s) = w.join().unwrap();
        pairs += p;
        secs = secs.max(s);
    }
    Row::new("heap", "all_threads", "pairs/s")
        .int("threads", n as i128)
        .int("pairs", pairs as i128)
        .value(pairs as f64 / secs)
        .print();
}
