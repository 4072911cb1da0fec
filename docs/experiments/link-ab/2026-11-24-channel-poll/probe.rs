//! Where does mpsc throughput collapse with many producers? msg/s for
//! P producers, bounded (1024) and unbounded, 0.3 s each.
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

fn run(producers: usize, bounded: bool) -> (f64, bool) {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx): (Box<dyn Fn() -> Box<dyn FnMut(u64) + Send> + Send + Sync>, mpsc::Receiver<u64>) = if bounded {
        let (tx, rx) = mpsc::sync_channel::<u64>(1024);
        (Box::new(move || { let t = tx.clone(); Box::new(move |v| t.send(v).unwrap()) }), rx)
    } else {
        let (tx, rx) = mpsc::channel::<u64>();
        (Box::new(move || { let t = tx.clone(); Box::new(move |v| t.send(v).unwrap()) }), rx)
    };
    let start = Instant::now();
    let hs: Vec<_> = (0..producers).map(|_| {
        let mut send = tx();
        let stop = stop.clone();
        std::thread::spawn(move || { let mut n = 0u64; while !stop.load(Relaxed) { send(n); n += 1; } n })
    }).collect();
    drop(tx);
    let mut got = 0u64;
    let mut stopping = false;
    while rx.recv().is_ok() {
        got += 1;
        if !stopping && got % 256 == 0 && start.elapsed() >= Duration::from_millis(300) { stop.store(true, Relaxed); stopping = true; }
    }
    let secs = start.elapsed().as_secs_f64();
    let sent: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    (got as f64 / secs, sent == got)
}

fn main() {
    for bounded in [true, false] {
        for p in [1, 2, 4, 8, 16, 32] {
            let (rate, ok) = run(p, bounded);
            println!("{} producers={p:2}: {:>10.0} msg/s all_received={ok}", if bounded { "sync_channel(1024)" } else { "channel()        " }, rate);
        }
    }
}
