//! Row 4a: `mpsc` throughput, one producer, one consumer.
fn main() {
    gpu_benches::channel_throughput("channel_1p1c", 1);
}
