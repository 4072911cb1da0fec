//! Row 9: how many threads can run at once, and `spawn`'s latency as the
//! device fills up. Spawns parked threads until `Builder::spawn` refuses
//! (on the host: up to 1,000 threads), several times; the spawn samples are
//! reported per quarter of the occupancy reached.
use gpu_benches::{Row, ns, on_gpu, parallelism};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::thread;
use std::time::Instant;

const HOST_CAP: usize = 1000;

/// One fill: (threads running at the peak, main included; spawn latencies;
/// whether the spawn past the last one failed with an error).
fn fill(cap: usize) -> (usize, Vec<u64>, bool) {
    let release = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    let mut latencies = Vec::new();
    let mut refused = false;
    while handles.len() < cap {
        let r = release.clone();
        let t = Instant::now();
        match thread::Builder::new().spawn(move || {
            while !r.load(Acquire) {
                thread::park();
            }
        }) {
            Ok(h) => {
                latencies.push(ns(t.elapsed()));
                handles.push(h);
            }
            Err(_) => {
                refused = true;
                break;
            }
        }
    }
    let peak = handles.len() + 1;
    release.store(true, Release);
    for h in handles {
        h.thread().unpark();
        h.join().unwrap();
    }
    (peak, latencies, refused)
}

fn main() {
    let ap = parallelism();
    let (cap, reps) = if on_gpu() { (usize::MAX, 5) } else { (HOST_CAP, 10) };
    let mut quarters: [Vec<u64>; 4] = Default::default();
    let (mut peak, mut refused_every_time) = (usize::MAX, true);
    for _ in 0..reps {
        let (p, lat, refused) = fill(cap);
        peak = peak.min(p);
        refused_every_time &= refused;
        let n = lat.len().max(1);
        for (i, l) in lat.into_iter().enumerate() {
            quarters[(i * 4 / n).min(3)].push(l);
        }
    }
    let mut row = Row::new("max_threads", "", "threads").int("available_parallelism", ap as i128).int("fills", reps);
    if on_gpu() {
        row = row
            .bool("all_resident_usable", peak == ap)
            .bool("oversubscription_errors_cleanly", refused_every_time);
    } else {
        row = row.str("note", "host: capped at 1,000 threads");
    }
    row.value(peak as f64).print();
    for (q, samples) in quarters.iter_mut().enumerate() {
        Row::new("max_threads", &format!("spawn@{}-{}%", q * 25, q * 25 + 25), "ns").latency(samples).print();
    }
}
