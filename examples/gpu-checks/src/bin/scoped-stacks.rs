//! Threads that borrow their parent's stack, as ordinary Rust does with
//! `thread::scope`: an array, an atomic and a Mutex on `main`'s stack, a
//! child of a child borrowing its parent's locals, and a thread given a
//! larger stack with `Builder::stack_size` recursing past the default one
//! (16 levels of 2 KiB frames, or the levels given as the argument).
//! Prints `scoped-stacks: ok (...)` and exits 0 only if every value is right.
//!
//! Recursion depth has a second bound on NVIDIA: each call level also saves
//! registers on the driver's per-lane call stack (private memory, sized by
//! `gpurun run --stack-size`), whatever the thread's own stack size. Measured
//! on an H200 at the default 16K: 40 levels of this function ran, 64 faulted
//! (about 200 bytes of call stack per level).
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::thread;

/// Recursion with a 2 KiB frame per level (`black_box` keeps each frame's
/// array in memory); returns the sum of every level's marks.
#[inline(never)]
fn recurse(level: u32) -> u64 {
    let mut frame = [0u8; 2048];
    frame[level as usize % 2048] = (level % 251) as u8;
    black_box(&mut frame);
    let mine: u64 = frame.iter().map(|&b| b as u64).sum();
    if level == 0 { mine } else { mine + recurse(level - 1) }
}

fn main() {
    let mut failures = Vec::new();
    let mut check = |what: &str, ok: bool, detail: String| {
        if !ok {
            failures.push(format!("{what}: {detail}"));
        }
    };

    // 1. Disjoint chunks of an array on main's stack, an atomic and a Mutex
    //    on main's stack, 8 scoped threads.
    let mut data = [0u64; 1024];
    let total = AtomicU64::new(0);
    let order = Mutex::new(Vec::new());
    thread::scope(|s| {
        for (i, chunk) in data.chunks_mut(128).enumerate() {
            let (total, order) = (&total, &order);
            s.spawn(move || {
                for (j, x) in chunk.iter_mut().enumerate() {
                    *x = (i * 128 + j) as u64;
                }
                total.fetch_add(chunk.iter().sum(), SeqCst);
                order.lock().unwrap().push(i);
            });
        }
    });
    let want: u64 = (0..1024).sum();
    let sum: u64 = data.iter().sum();
    check("array written by scoped threads", sum == want, format!("sum {sum}, expected {want}"));
    check("atomic on main's stack", total.load(SeqCst) == want, format!("{}, expected {want}", total.load(SeqCst)));
    let mut seen = order.into_inner().unwrap();
    seen.sort();
    check("Mutex on main's stack", seen == (0..8).collect::<Vec<_>>(), format!("{seen:?}"));

    // 2. A spawned thread's own locals borrowed by its scoped children.
    let nested = thread::spawn(|| {
        let counter = AtomicU64::new(0);
        let words = ["alpha", "beta", "gamma", "delta"];
        thread::scope(|s| {
            for w in &words {
                let counter = &counter;
                s.spawn(move || counter.fetch_add(w.len() as u64, SeqCst));
            }
        });
        counter.load(SeqCst)
    })
    .join()
    .unwrap();
    check("a thread's locals borrowed by its children", nested == 19, format!("{nested}, expected 19"));

    // 3. A larger stack: 16 levels of 2 KiB frames need 34 KiB, more than the
    //    default 16 KiB; Builder::stack_size gives it from the heap.
    let levels: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let want: u64 = (0..=levels).map(|l| (l % 251) as u64).sum();
    for round in 0..3 {
        let got = thread::Builder::new()
            .name(format!("deep-{round}"))
            .stack_size(256 << 10)
            .spawn(move || recurse(levels))
            .unwrap()
            .join()
            .unwrap();
        check("recursion on a 256 KiB stack", got == want, format!("round {round}: {got}, expected {want}"));
    }

    if failures.is_empty() {
        println!("scoped-stacks: ok (8 scoped threads on main's array/atomic/Mutex, nested scope, 3 threads recursing {levels} levels on 256 KiB stacks)");
    } else {
        for f in &failures {
            println!("scoped-stacks: FAIL {f}");
        }
        std::process::exit(1);
    }
}
