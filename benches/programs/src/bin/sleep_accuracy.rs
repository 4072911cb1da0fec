//! Row 5: `thread::sleep(d)` error (time slept − d), 1 µs to 10 ms. The long
//! sleeps are spread over several threads sleeping at once so that each d
//! still gets 10,000 samples in about a second.
use gpu_benches::{Row, ns};
use std::thread;
use std::time::{Duration, Instant};

/// (label, requested ns, threads, samples per thread)
const CASES: [(&str, u64, usize, usize); 5] = [
    ("d=1us", 1_000, 1, 10_000),
    ("d=10us", 10_000, 1, 10_000),
    ("d=100us", 100_000, 10, 1_000),
    ("d=1ms", 1_000_000, 10, 1_000),
    ("d=10ms", 10_000_000, 100, 100),
];

/// Signed error of each of `n` sleeps of `d` ns.
fn sleeps(d: u64, n: usize) -> Vec<i64> {
    let want = Duration::from_nanos(d);
    (0..n)
        .map(|_| {
            let t = Instant::now();
            thread::sleep(want);
            ns(t.elapsed()) as i64 - d as i64
        })
        .collect()
}

fn main() {
    for (label, d, threads, per) in CASES {
        let workers: Vec<_> = (1..threads).map(|_| thread::spawn(move || sleeps(d, per))).collect();
        let mut errors = sleeps(d, per);
        for w in workers {
            errors.extend(w.join().unwrap());
        }
        let early = errors.iter().filter(|&&e| e < 0).count();
        Row::new("sleep_accuracy", label, "ns")
            .int("requested_ns", d as i128)
            .int("threads", threads as i128)
            .int("woke_early", early as i128)
            .str("measure", "time slept minus requested")
            .latency(&mut errors)
            .print();
    }
}
