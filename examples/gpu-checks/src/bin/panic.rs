//! A named thread panics: the program must exit 101 with std's message.
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
    let _ = h.join();
    println!("panic: unreachable: the panic should have ended the program");
}
