//! Channel costs on the GPU: throughput with 1..32 producers (bounded and
//! unbounded), and the ping-pong round trip between two threads (a handoff
//! each way, the receiver waiting every time).
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

/// Round trips main -> echo thread -> main, `n` of them; ns per round trip.
fn ping_pong(bounded: bool, n: u32) -> f64 {
    let ((atx, arx), (btx, brx)) = if bounded {
        let (a, b) = mpsc::sync_channel::<u32>(1);
        let (c, d) = mpsc::sync_channel::<u32>(1);
        ((Sender::Sync(a), b), (Sender::Sync(c), d))
    } else {
        let (a, b) = mpsc::channel::<u32>();
        let (c, d) = mpsc::channel::<u32>();
        ((Sender::Async(a), b), (Sender::Async(c), d))
    };
    let echo = std::thread::spawn(move || {
        while let Ok(v) = arx.recv() {
            btx.send(v + 1);
        }
    });
    for i in 0..100 { atx.send(i); assert_eq!(brx.recv().unwrap(), i + 1); }
    let start = Instant::now();
    for i in 0..n { atx.send(i); assert_eq!(brx.recv().unwrap(), i + 1); }
    let ns = start.elapsed().as_secs_f64() * 1e9 / n as f64;
    drop(atx);
    echo.join().unwrap();
    ns
}

enum Sender { Sync(mpsc::SyncSender<u32>), Async(mpsc::Sender<u32>) }
impl Sender {
    fn send(&self, v: u32) { match self { Sender::Sync(s) => s.send(v).unwrap(), Sender::Async(s) => s.send(v).unwrap() } }
}

/// A receiver that waits `ms` for its message, then a recv_timeout that
/// must time out: the waits end as they should.
fn waits() -> bool {
    let (tx, rx) = mpsc::channel::<u8>();
    let t = std::thread::spawn(move || { std::thread::sleep(Duration::from_millis(20)); tx.send(7).unwrap(); tx });
    let start = Instant::now();
    let got = rx.recv().unwrap();
    let waited = start.elapsed();
    let _tx = t.join().unwrap();
    let start = Instant::now();
    let timed_out = rx.recv_timeout(Duration::from_millis(5)) == Err(mpsc::RecvTimeoutError::Timeout);
    let to = start.elapsed();
    println!("wait: got {got} after {waited:?}; recv_timeout(5ms) timed out={timed_out} after {to:?}");
    got == 7 && waited >= Duration::from_millis(19) && timed_out && to >= Duration::from_millis(5) && to < Duration::from_millis(50)
}

fn main() {
    for bounded in [true, false] {
        let kind = if bounded { "sync_channel(1024)" } else { "channel()" };
        for p in [1, 2, 4, 8, 32] {
            let (rate, ok) = run(p, bounded);
            println!("{kind} producers={p}: {:.0} msg/s all_received={ok}", rate);
        }
    }
    for bounded in [true, false] {
        let kind = if bounded { "sync_channel(1)" } else { "channel()" };
        let ns = ping_pong(bounded, 2000);
        println!("ping-pong {kind}: {:.0} ns per round trip", ns);
    }
    println!("waits ok: {}", waits());
}
