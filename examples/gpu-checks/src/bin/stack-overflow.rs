//! A named thread recurses without end: the program must stop with std's
//! report (`thread 'deep-recursion' has overflowed its stack`) and exit 134,
//! instead of corrupting memory or hanging.
use std::hint::black_box;
use std::thread;

// Endless on purpose: the stack must run out.
#[allow(unconditional_recursion)]
#[inline(never)]
fn recurse(level: u64) -> u64 {
    let mut frame = [0u8; 512];
    frame[(level % 512) as usize] = 1;
    black_box(&mut frame);
    level + recurse(level + 1) + frame[3] as u64
}

fn main() {
    println!("stack-overflow: spawning a thread that recurses forever");
    let h = thread::Builder::new().name("deep-recursion".into()).spawn(|| recurse(0)).unwrap();
    let r = h.join();
    println!("stack-overflow: unreachable: the overflow should have ended the program ({r:?})");
}
