//! Unwinding (built with panic=unwind): a panic runs the drops of every
//! frame it leaves, `join` returns the payload as `Err`, a lock held across
//! it is poisoned, `catch_unwind` catches and `resume_unwind` rethrows, and
//! `thread::scope` reports a thread that panicked. Its stdout must equal the
//! host's (the bundle's `unwind.expected`); panic messages go to stderr.
//!
//! `unwind main`: a panic in `main` runs main's drops and exits 101.
//! `unwind double`: a panic while unwinding aborts (134), as on Linux.
//! `unwind lane`: a panic on lane 1 of `gpu_lanes::for_each_lane` cannot
//! unwind (the warp has one exception word): the program ends (134).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

struct Loud(&'static str);

impl Drop for Loud {
    fn drop(&mut self) {
        println!("drop {}", self.0);
    }
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, SeqCst);
    }
}

struct PanicsWhileUnwinding;

impl Drop for PanicsWhileUnwinding {
    fn drop(&mut self) {
        if thread::panicking() {
            panic!("a second panic while unwinding");
        }
    }
}

/// `depth` frames, each holding a `Counted`, then a panic.
#[inline(never)]
fn deep(depth: u32) -> u32 {
    let _c = Counted;
    if depth == 0 {
        panic!("bottom reached");
    }
    // Not a tail call: the frame's drop runs after the call returns.
    deep(std::hint::black_box(depth - 1)) + 1
}

fn payload(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        format!("&str {s:?}")
    } else if let Some(s) = e.downcast_ref::<String>() {
        format!("String {s:?}")
    } else if let Some(n) = e.downcast_ref::<u64>() {
        format!("u64 {n}")
    } else {
        "another type".to_string()
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("main") => {
            let _l = Loud("main's local");
            panic!("main panics");
        }
        Some("double") => {
            let _p = PanicsWhileUnwinding;
            panic!("the first panic");
        }
        Some("lane") => {
            gpu_lanes::for_each_lane(|lane| {
                if lane == 1 {
                    panic!("lane 1 panics");
                }
            });
            println!("unwind: lane 1 did not panic ({} lanes)", gpu_lanes::lanes());
            return;
        }
        Some(other) => {
            eprintln!("unwind: unknown mode {other:?} (main, double, lane)");
            std::process::exit(2);
        }
    }

    // A thread panics holding a lock: its drops run, join gives the payload.
    let m = Arc::new(Mutex::new(0));
    let m2 = m.clone();
    let r = thread::spawn(move || {
        let _l = Loud("in the thread");
        let mut g = m2.lock().unwrap();
        *g += 1;
        panic!("thread panics {}", 7);
    })
    .join();
    println!("join: {}", r.as_ref().map_or_else(|e| format!("Err({})", payload(&**e)), |_| "Ok".into()));
    println!("poisoned: {}", m.is_poisoned());
    println!("value kept: {}", *m.lock().unwrap_or_else(|e| e.into_inner()));

    // catch_unwind on this thread, a &str payload, then a String one.
    let c = panic::catch_unwind(|| {
        let _l = Loud("in catch_unwind");
        panic!("caught here");
    });
    println!("catch: {}", payload(&*c.unwrap_err()));
    let c = panic::catch_unwind(|| -> u32 { panic!("formatted {}", 42) });
    println!("catch: {}", payload(&*c.unwrap_err()));
    println!("catch without a panic: {:?}", panic::catch_unwind(|| 5));

    // resume_unwind rethrows a payload of any type, without the hook.
    let c = panic::catch_unwind(|| {
        let inner = panic::catch_unwind(|| panic::resume_unwind(Box::new(99u64)));
        let _l = Loud("between the two");
        panic::resume_unwind(inner.unwrap_err());
    });
    println!("resumed: {}", payload(&*c.unwrap_err()));

    // Through 20 frames, each dropping what it holds.
    DROPS.store(0, SeqCst);
    let c = panic::catch_unwind(|| deep(20));
    println!("deep: {} with {} drops", payload(&*c.unwrap_err()), DROPS.load(SeqCst));

    // Eight threads panic at once: every join is an Err.
    DROPS.store(0, SeqCst);
    let handles: Vec<_> = (0..8u64)
        .map(|i| {
            thread::spawn(move || {
                let _c = Counted;
                if i % 2 == 0 {
                    panic::resume_unwind(Box::new(i));
                }
                panic!("thread {i}");
            })
        })
        .collect();
    let errs: Vec<String> = handles.into_iter().map(|h| payload(&*h.join().unwrap_err())).collect();
    println!("eight threads: {} drops, {errs:?}", DROPS.load(SeqCst));

    // A scoped thread that panics makes `scope` panic once all are done.
    let mut seen = 0;
    let s = panic::catch_unwind(AssertUnwindSafe(|| {
        thread::scope(|s| {
            s.spawn(|| panic!("scoped thread panics"));
            s.spawn(|| seen += 1);
        })
    }));
    println!("scope: {}, the other thread ran: {}", payload(&*s.unwrap_err()), seen == 1);
    println!("panicking after all that: {}", thread::panicking());
    println!("unwind: ok");
}
