//! Joins a thread that never ends: the launcher's --timeout must stop it and
//! say which threads were still running and where.
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

fn main() {
    let lock = Arc::new(Mutex::new(()));
    let held = lock.lock().unwrap();
    let l2 = Arc::clone(&lock);
    let blocked = thread::Builder::new()
        .name("waits-for-lock".into())
        .spawn(move || {
            let _g = l2.lock().unwrap();
        })
        .unwrap();
    let forever = thread::Builder::new()
        .name("sleeps-forever".into())
        .spawn(|| {
            println!("hang: sleeps-forever started");
            loop {
                thread::sleep(Duration::from_millis(10));
            }
        })
        .unwrap();
    println!("hang: main joins a thread that never ends");
    forever.join().unwrap();
    drop(held);
    blocked.join().unwrap();
}
