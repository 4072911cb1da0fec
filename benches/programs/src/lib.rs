//! What every benchmark program shares: sample statistics and the JSON rows
//! they print (one per line on stdout; `gpurun-dev bench` reads lines that start
//! with `{` and adds backend, device, driver, commit and date).
//!
//! Everything here is plain `std`, so the same source runs on the GPU (each
//! `std::thread` a warp) and on the host CPU.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Samples per latency row (benches/BENCH.md: at least 10,000).
pub const SAMPLES: usize = 10_000;
/// Untimed iterations before a latency loop.
pub const WARMUP: usize = 100;

/// Built for a GPU (our runtime) rather than the host.
pub const fn on_gpu() -> bool {
    cfg!(any(target_os = "cuda", target_os = "amdhsa"))
}

/// Threads that can run at once, main included. On the GPU
/// `available_parallelism()` counts the threads main can spawn (every
/// launched warp but its own; an error for a launch of one warp), so this is
/// every launched warp.
pub fn parallelism() -> usize {
    let spawnable = std::thread::available_parallelism().map_or(0, |n| n.get());
    if on_gpu() { spawnable + 1 } else { spawnable.max(1) }
}

/// Nanoseconds as a u64 (saturating; a benchmark never runs for 584 years).
pub fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// Nanoseconds from `base` to now: a timestamp other threads can compare
/// (on the GPU `Instant` is the device-wide clock).
pub fn stamp(base: Instant) -> u64 {
    ns(base.elapsed())
}

/// An environment variable as a number (the harness passes settings this way).
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// p50, p99 and max by nearest rank; sorts `samples`.
pub fn percentiles<T: Ord + Copy>(samples: &mut [T]) -> Option<(T, T, T)> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = |q: f64| {
        let r = (q * samples.len() as f64).ceil() as usize;
        samples[r.clamp(1, samples.len()) - 1]
    };
    Some((rank(0.50), rank(0.99), samples[samples.len() - 1]))
}

/// One JSON result row, built field by field and printed on one line.
pub struct Row {
    json: String,
}

impl Row {
    /// A row of benchmark `id` (a benches/BENCH.md id), `variant` ("" for the
    /// benchmark proper) and `unit`.
    pub fn new(id: &str, variant: &str, unit: &str) -> Row {
        let mut r = Row { json: String::from("{") };
        r.push_str("benchmark", id);
        r.push_str("variant", variant);
        r.push_str("unit", unit);
        r
    }

    fn key(&mut self, k: &str) {
        if self.json.len() > 1 {
            self.json.push(',');
        }
        quote(&mut self.json, k);
        self.json.push(':');
    }

    fn push_str(&mut self, k: &str, v: &str) {
        self.key(k);
        quote(&mut self.json, v);
    }

    /// A string field.
    pub fn str(mut self, k: &str, v: &str) -> Row {
        self.push_str(k, v);
        self
    }

    /// An integer field.
    pub fn int(mut self, k: &str, v: i128) -> Row {
        self.key(k);
        let _ = write!(self.json, "{v}");
        self
    }

    /// A number field (non-finite numbers become null).
    pub fn num(mut self, k: &str, v: f64) -> Row {
        self.key(k);
        if v.is_finite() {
            let _ = write!(self.json, "{v}");
        } else {
            self.json.push_str("null");
        }
        self
    }

    /// A boolean field.
    pub fn bool(mut self, k: &str, v: bool) -> Row {
        self.key(k);
        self.json.push_str(if v { "true" } else { "false" });
        self
    }

    /// `status: measured` with p50/p99/max and the sample count.
    pub fn latency<T: Ord + Copy + Into<i128>>(self, samples: &mut [T]) -> Row {
        let n = samples.len() as i128;
        match percentiles(samples) {
            Some((p50, p99, max)) => self
                .str("status", "measured")
                .int("p50", p50.into())
                .int("p99", p99.into())
                .int("max", max.into())
                .int("samples", n),
            None => self.not_run("no samples were taken"),
        }
    }

    /// `status: measured` with a throughput or ratio `value`.
    pub fn value(self, v: f64) -> Row {
        self.str("status", "measured").num("value", v)
    }

    /// `status: not run: <reason>`.
    pub fn not_run(self, reason: &str) -> Row {
        self.str("status", &format!("not run: {reason}"))
    }

    /// Prints the row as one line on stdout.
    pub fn print(mut self) {
        self.json.push('}');
        println!("{}", self.json);
    }
}

/// Appends `s` as a JSON string.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Times `batch` calls of `op` `n` times (after [`WARMUP`] untimed rounds);
/// each sample is the mean of one batch, in ns. For operations shorter than
/// the clock's resolution (the GPU's `%globaltimer` ticks every 32 ns).
pub fn batched_samples(n: usize, batch: u32, mut op: impl FnMut()) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..WARMUP + n {
        let t = Instant::now();
        for _ in 0..batch {
            op();
        }
        if i >= WARMUP {
            samples.push(ns(t.elapsed()) / batch as u64);
        }
    }
    samples
}

/// The compute-bound loop of `idle_cost` (the native baseline runs the same
/// arithmetic): a dependent 64-bit LCG + xorshift chain.
#[inline(never)]
pub fn lcg_chain(seed: u64, iters: u64) -> u64 {
    let mut x = seed;
    for _ in 0..iters {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x ^= x >> 29;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentiles(&mut v), Some((50, 99, 100)));
        let mut one = [7u64];
        assert_eq!(percentiles(&mut one), Some((7, 7, 7)));
        assert_eq!(percentiles::<u64>(&mut []), None);
    }

    #[test]
    fn rows_are_json() {
        let mut r = Row::new("yield", "a\"b", "ns").latency(&mut [3u64, 1, 2]);
        r.json.push('}');
        assert_eq!(
            r.json,
            r#"{"benchmark":"yield","variant":"a\"b","unit":"ns","status":"measured","p50":2,"p99":3,"max":3,"samples":3}"#
        );
    }
}

/// Rows 4a/4b: `mpsc::sync_channel(1024)` throughput, `producers` senders and
/// main receiving, for about one second (the senders stop when told and the
/// receiver drains what is left). Bounded, so memory stays bounded whoever is faster.
pub fn channel_throughput(id: &str, producers: usize) {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::{Arc, mpsc};
    const CAPACITY: usize = 1024;
    let (tx, rx) = mpsc::sync_channel::<u64>(CAPACITY);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let senders: Vec<_> = (0..producers)
        .map(|_| {
            let (tx, stop) = (tx.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut sent = 0u64;
                while !stop.load(Relaxed) {
                    tx.send(sent).unwrap();
                    sent += 1;
                }
                sent
            })
        })
        .collect();
    drop(tx);
    let mut received = 0u64;
    let mut stopping = false;
    while rx.recv().is_ok() {
        received += 1;
        if !stopping && received % 4096 == 0 && start.elapsed() >= Duration::from_secs(1) {
            stop.store(true, Relaxed);
            stopping = true;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let sent: u64 = senders.into_iter().map(|h| h.join().unwrap()).sum();
    Row::new(id, "", "msg/s")
        .str("channel", "sync_channel(1024)")
        .int("producers", producers as i128)
        .int("messages", received as i128)
        .bool("all_received", sent == received)
        .num("seconds", secs)
        .value(received as f64 / secs)
        .print();
}
