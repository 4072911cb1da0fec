//! Every available thread prints 100 numbered lines; the checker counts them.
use std::thread;

fn main() {
    let n = thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let lines = 100;
    let workers: Vec<_> = (1..=n)
        .map(|t| {
            thread::spawn(move || {
                for i in 0..lines {
                    println!("thread {t} line {i}");
                }
            })
        })
        .collect();
    let spawned = workers.len();
    for w in workers {
        w.join().unwrap();
    }
    println!("all-threads-print: {spawned} threads x {lines} lines");
}
