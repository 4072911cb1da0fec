//! Row 6: `thread::yield_now` cost; a sample is the mean of a batch of 16.
use gpu_benches::{Row, SAMPLES, batched_samples};

const BATCH: u32 = 16;

fn main() {
    let mut samples = batched_samples(SAMPLES, BATCH, std::thread::yield_now);
    Row::new("yield", "", "ns").int("batch", BATCH as i128).latency(&mut samples).print();
}
