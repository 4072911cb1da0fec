//! Row 3b: a `Mutex` handed back and forth between two threads. Each takes
//! the lock until it is its turn, then stamps the time, passes the turn and
//! unlocks; a sample is the time from the other thread's stamp to seeing
//! one's turn (the handoff, one way).
use gpu_benches::{Row, SAMPLES, WARMUP, stamp};
use std::sync::{Arc, Mutex};
use std::time::Instant;

struct Turn {
    whose: usize,
    stamp: u64,
}

fn player(me: usize, m: Arc<Mutex<Turn>>, base: Instant) -> Vec<u64> {
    let mut samples = Vec::with_capacity(SAMPLES);
    let mut turns = 0;
    while turns < WARMUP + SAMPLES {
        let mut t = m.lock().unwrap();
        if t.whose == me {
            if turns >= WARMUP {
                samples.push(stamp(base).saturating_sub(t.stamp));
            }
            turns += 1;
            t.whose = 1 - me;
            t.stamp = stamp(base);
        }
    }
    samples
}

fn main() {
    let base = Instant::now();
    let m = Arc::new(Mutex::new(Turn { whose: 0, stamp: 0 }));
    let m1 = m.clone();
    let other = std::thread::spawn(move || player(1, m1, base));
    let mut samples = player(0, m, base);
    samples.extend(other.join().unwrap());
    Row::new("mutex_handoff", "", "ns").int("threads", 2).latency(&mut samples).print();
}
