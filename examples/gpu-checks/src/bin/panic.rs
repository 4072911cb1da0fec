//! A named thread panics: std's message names it and the panic's location.
//! Under `panic = "unwind"` (the default) its `join` is `Err` and `main`'s
//! `unwrap` of it panics in turn; under `panic = "abort"` the first panic
//! ends the program. Either way the exit code is 101, a panic's.
use std::thread;

fn main() {
    println!("panic: spawning a thread that panics");
    let h = thread::Builder::new()
        .name("worker-7".into())
        .spawn(|| {
            let v: Vec<u32> = Vec::new();
            if v.is_empty() {
                panic!("the worker found nothing to do ({} items)", v.len());
            }
        })
        .unwrap();
    let joined = h.join();
    println!("panic: the worker's join is an Err: {}", joined.is_err());
    joined.unwrap();
    println!("panic: unreachable: unwrap of the Err panics");
}
