//! Row 8: `println!` lines per second from 1, 132 and all threads, the
//! device-side cost of one call, and one line's latency to the host. Every
//! line is `~ln VARIANT THREAD I`; `gpurun-dev bench` counts them per variant
//! (lines_received / lines_lost), so a lost line shows in the results.
use gpu_benches::{Row, SAMPLES, WARMUP, batched_samples, on_gpu, parallelism};
use std::io::Write;
use std::thread;
use std::time::Instant;

/// About this many lines in all for each thread count.
const LINES: usize = 400_000;

fn print_lines(variant: &'static str, thread: usize, lines: usize) {
    for i in 0..lines {
        println!("~ln {variant} {thread} {i}");
    }
}

fn throughput(variant: &'static str, threads: usize, per_thread: usize) {
    let start = Instant::now();
    if threads == 1 {
        print_lines(variant, 0, per_thread);
    } else {
        let hs: Vec<_> = (0..threads).map(|t| thread::spawn(move || print_lines(variant, t, per_thread))).collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
    }
    let secs = start.elapsed().as_secs_f64();
    let total = threads * per_thread;
    Row::new("println", variant, "lines/s")
        .int("threads", threads as i128)
        .int("lines_expected", total as i128)
        .value(total as f64 / secs)
        .print();
}

fn main() {
    let all = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { parallelism() };
    throughput("1_thread", 1, 100_000);
    throughput("132_threads", 132, 1_000);
    throughput("all_threads", all, (LINES / all).max(1));

    // A batch of 1: a sample is one line. Lines are numbered from 0, the
    // warm-up's included.
    let mut i = 0;
    let mut samples = batched_samples(SAMPLES, 1, || {
        println!("~ln call_1_thread 0 {i}");
        i += 1;
    });
    Row::new("println", "call_1_thread", "ns")
        .int("lines_expected", (WARMUP + SAMPLES) as i128)
        .str("measure", "one println! call returning (not the line reaching the host)")
        .latency(&mut samples)
        .print();

    // `flush` returns once the host has taken the line (on the GPU: freed
    // its ring slot after copying it; on a host: written it to the pipe).
    let mut out = std::io::stdout();
    let mut i = 0;
    let mut samples = batched_samples(SAMPLES, 1, || {
        println!("~ln line_to_host 0 {i}");
        out.flush().unwrap();
        i += 1;
    });
    Row::new("println", "line_to_host", "ns")
        .int("lines_expected", (WARMUP + SAMPLES) as i128)
        .str("measure", "println! then stdout().flush(): until the host has the line")
        .latency(&mut samples)
        .print();
}
