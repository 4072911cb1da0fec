//! Row 3a: `Mutex` lock + unlock by one thread, nobody else interested.
//! A sample is the mean of a batch of 16 (the GPU clock ticks every 32 ns).
//!
//! The mutex is a `static`: one on main's stack would live in the GPU's
//! per-thread local memory, where nvptx has no atomics (ptxas rejects
//! `atom.local`; seen with the toolchain of 2026-05).
use gpu_benches::{Row, SAMPLES, WARMUP, batched_samples};
use std::hint::black_box;
use std::sync::Mutex;

const BATCH: u32 = 16;
static M: Mutex<u64> = Mutex::new(0);

fn main() {
    let mut samples = batched_samples(SAMPLES, BATCH, || *black_box(&M).lock().unwrap() += 1);
    assert_eq!(*M.lock().unwrap(), (WARMUP + SAMPLES) as u64 * BATCH as u64);
    Row::new("mutex_uncontended", "", "ns").int("batch", BATCH as i128).latency(&mut samples).print();
}
