//! Spawns until every warp is busy: `Builder::spawn` must return an error
//! (never hang), and after joining, spawning works again.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let n = thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let go = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    let err = loop {
        let go = Arc::clone(&go);
        match thread::Builder::new().spawn(move || {
            while !go.load(Ordering::Acquire) {
                thread::yield_now();
            }
        }) {
            Ok(h) => handles.push(h),
            Err(e) => break e,
        }
        if handles.len() > n {
            panic!("spawned more threads ({}) than available_parallelism ({n})", handles.len());
        }
    };
    println!("spawn-exhaust: {} threads spawned of {n}; then: {err}", handles.len());
    go.store(true, Ordering::Release);
    for h in handles {
        h.join().unwrap();
    }
    let again = thread::spawn(|| 42).join().unwrap();
    println!("spawn-exhaust: after joining, a new thread returned {again}");
}
