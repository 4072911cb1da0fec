//! Throughput of `mpsc::channel()` (std's list flavor), 1 and 32 producers.
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

fn run(producers: usize) {
    let (tx, rx) = mpsc::channel::<u64>();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let senders: Vec<_> = (0..producers)
        .map(|_| {
            let (tx, stop) = (tx.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut sent = 0u64;
                // Unbounded: the queue grows while the producers lead; the
                // receiver drains it after they stop (its rate includes that).
                while !stop.load(Relaxed) {
                    tx.send(sent).unwrap();
                    sent += 1;
                }
                sent
            })
        })
        .collect();
    drop(tx);
    let (mut received, mut sum) = (0u64, 0u64);
    let mut stopping = false;
    while let Ok(v) = rx.recv() {
        received += 1;
        sum = sum.wrapping_add(v);
        if !stopping && received % 4096 == 0 && start.elapsed() >= Duration::from_secs(1) {
            stop.store(true, Relaxed);
            stopping = true;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let sent: u64 = senders.into_iter().map(|h| h.join().unwrap()).sum();
    println!("list channel, {producers} producers: {:.0} msg/s, {received} received, all received: {}", received as f64 / secs, sent == received);
}

fn main() {
    run(1);
    run(32);
}
