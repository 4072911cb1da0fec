//! Row 4b: `mpsc` throughput, 32 producers, one consumer.
fn main() {
    gpu_benches::channel_throughput("channel_32p1c", 32);
}
