//! Row 1: `thread::spawn` of a no-op closure + `join`, one round trip per sample.
use gpu_benches::{Row, SAMPLES, WARMUP, ns};
use std::time::Instant;

fn main() {
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let t = Instant::now();
        std::thread::spawn(|| ()).join().unwrap();
        if i >= WARMUP {
            samples.push(ns(t.elapsed()));
        }
    }
    Row::new("spawn_join", "", "ns").latency(&mut samples).print();
}
