//! A GPU program shaped as a library: the built-in `amdgcn-amd-amdhsa` target
//! only builds `cdylib`s, so instead of `fn main` it exports the C `main` that
//! the runtime's kernel entry calls (rustc writes that function for `bin`
//! crates; here we write it).
use std::sync::{Arc, Mutex};
use std::thread;

/// Squares 1..=8 on eight threads and adds them up under a mutex.
fn sum_of_squares() -> u64 {
    let total = Arc::new(Mutex::new(0u64));
    let workers: Vec<_> = (1..=8u64)
        .map(|i| {
            let total = Arc::clone(&total);
            thread::spawn(move || *total.lock().unwrap() += i * i)
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let sum = *total.lock().unwrap();
    sum
}

/// The program's entry, called once on thread 0 by the runtime.
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    let sum = sum_of_squares();
    println!("cdylib-threads: sum of squares 1..=8 = {sum}");
    if sum == 204 { 0 } else { 1 }
}
