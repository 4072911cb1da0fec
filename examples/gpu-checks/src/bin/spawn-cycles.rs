//! Many spawn/join cycles reuse warps and leak nothing; prints the rate.
use std::time::Instant;

fn main() {
    let cycles: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let start = Instant::now();
    let mut sum = 0u64;
    for i in 0..cycles {
        sum += std::thread::spawn(move || i).join().unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(sum, cycles * (cycles - 1) / 2);
    println!("spawn-cycles: {cycles} spawn+join in {secs:.3} s ({:.2} us each)", secs * 1e6 / cycles as f64);
}
