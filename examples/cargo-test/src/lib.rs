//! A small library and its tests, for `cargo test` on the GPU (see
//! Cargo.toml). The same tests pass on the host, except the one that fails
//! on purpose.

use std::sync::mpsc;
use std::thread;

/// Sums `values` with `threads` threads, each summing a share.
pub fn parallel_sum(values: &[u64], threads: usize) -> u64 {
    let chunk = values.len().div_ceil(threads.max(1)).max(1);
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        for part in values.chunks(chunk) {
            let tx = tx.clone();
            s.spawn(move || tx.send(part.iter().sum::<u64>()).unwrap());
        }
    });
    drop(tx);
    rx.iter().sum()
}

/// The `n`th Fibonacci number; panics when it does not fit a `u64` (n > 93).
pub fn fib(n: u32) -> u64 {
    assert!(n <= 150, "fib({n}) is past this function's range");
    let (mut a, mut b) = (0u128, 1u128);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    u64::try_from(a).expect("fib overflows u64")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_with_threads() {
        let values: Vec<u64> = (1..=1000).collect();
        assert_eq!(parallel_sum(&values, 8), 500_500);
        println!("8 threads summed 1000 values");
    }

    #[test]
    fn fib_small() {
        assert_eq!(fib(10), 55);
        assert_eq!(fib(93), 12_200_160_415_121_876_738);
    }

    #[test]
    #[should_panic(expected = "fib overflows u64")]
    fn fib_overflow_panics() {
        fib(94);
    }

    #[test]
    #[ignore = "takes long; run with --ignored"]
    fn fib_exhaustive() {
        for n in 0..=93 {
            assert!(fib(n) <= u64::MAX);
        }
    }

    #[test]
    fn demo_failure_is_reported() {
        // What a thread the test spawns prints is the test's output too
        // (libtest passes its capture on through a spawn hook): shown with
        // the failure, not as the thread prints it.
        thread::spawn(|| println!("printed by a thread the test spawned")).join().unwrap();
        assert_eq!(fib(5), 6, "fails on purpose: fib(5) is 5");
    }
}
