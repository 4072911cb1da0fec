//! `gpu_lanes::for_each_lane` runs its closure exactly once per lane, on
//! every call, from main and from spawned threads, and the lanes see the
//! heap data the thread shares with them.
use gpu_lanes::{for_each_lane, lanes};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Calls `for_each_lane` `rounds` times; returns the number of calls in
/// which some lane ran other than exactly once, or summed wrongly.
fn check(rounds: u32) -> u32 {
    let n = lanes();
    let data: Arc<Vec<u64>> = Arc::new((0..n as u64 * 100).collect());
    let mut bad = 0;
    for _ in 0..rounds {
        let runs: Arc<Vec<AtomicU32>> = Arc::new((0..n).map(|_| AtomicU32::new(0)).collect());
        let sum = Arc::new(AtomicU64::new(0));
        let (r, s, d) = (runs.clone(), sum.clone(), data.clone());
        for_each_lane(move |lane| {
            r[lane].fetch_add(1, Relaxed);
            let part: u64 = d.iter().skip(lane).step_by(n).sum();
            s.fetch_add(part, Relaxed);
        });
        let want: u64 = data.iter().sum();
        if runs.iter().any(|c| c.load(Relaxed) != 1) || sum.load(Relaxed) != want {
            bad += 1;
        }
    }
    bad
}

fn main() {
    let mut bad = check(1000);
    let workers: Vec<_> = (0..8).map(|_| std::thread::spawn(|| check(200))).collect();
    bad += workers.into_iter().map(|h| h.join().unwrap()).sum::<u32>();
    if bad == 0 {
        println!("lanes: ok ({} lanes, 2600 calls from main and 8 threads)", lanes());
    } else {
        println!("lanes: {bad} bad calls");
        std::process::exit(1);
    }
}
