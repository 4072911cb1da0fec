//! Unwinding as std does it on Linux, one stdout line per fact, in a fixed
//! order: a thread's panic as `join`'s `Err`, lock poisoning and recovery,
//! `Drop` order while unwinding, `catch_unwind`, `resume_unwind`,
//! `panic_any`, panic hooks, `thread::scope`, `Once` and `RwLock` poisoning,
//! many threads panicking at once and a panic deep in a recursion.
//!
//! Its stdout does not depend on where it runs: the acceptance suite
//! compares a GPU run's with the host's (`unwind-facts.expected`,
//! scripts/make-gpu-bundle.sh). The panic messages go to stderr, as std's
//! default hook writes them; the suite checks the key lines there.
//!
//! `unwind-facts [THREADS]`: how many threads panic at once (default 64; the
//! emulator's 64 waves hold 32 and `main`).
use std::any::Any;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, Once, PoisonError, RwLock};
use std::thread;

/// Names of the values dropped so far, in the order their `Drop`s ran.
static DROPS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log_drop(name: String) {
    // Never poisoned: nothing panics while holding it; recover anyway.
    DROPS.lock().unwrap_or_else(PoisonError::into_inner).push(name);
}

/// The drops since the last call, space-separated.
fn drops() -> String {
    std::mem::take(&mut *DROPS.lock().unwrap_or_else(PoisonError::into_inner)).join(" ")
}

/// Logs its name when dropped, with `!` when dropped while unwinding.
struct Noisy(&'static str);

impl Drop for Noisy {
    fn drop(&mut self) {
        let unwinding = if thread::panicking() { "!" } else { "" };
        log_drop(format!("{}{unwinding}", self.0));
    }
}

/// What a panic carried, as a `&str` or `String` payload reads.
fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        format!("&str {s:?}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("String {s:?}")
    } else {
        "another type".to_string()
    }
}

fn fact(name: &str, value: impl std::fmt::Display) {
    println!("unwind: {name}: {value}");
}

fn main() {
    join_and_poison();
    drop_order();
    catching();
    hooks();
    scopes();
    once();
    rwlock();
    let threads = std::env::args().nth(1).map_or(64, |a| a.parse().expect("THREADS: a number of threads"));
    many_threads(threads);
    deep_recursion(200);
    println!("unwind: done");
}

/// A thread panics holding a `MutexGuard`: `join` is `Err` with the
/// payload, the lock is poisoned, and the data is still reachable.
fn join_and_poison() {
    let lock = Arc::new(Mutex::new(41));
    let held = Arc::clone(&lock);
    let r = thread::Builder::new()
        .name("poisoner".into())
        .spawn(move || {
            let mut guard = held.lock().unwrap();
            *guard += 1;
            panic!("the poisoner panics holding the lock");
        })
        .unwrap()
        .join();
    let payload = r.expect_err("the poisoner's join must be Err");
    fact("join of a panicked thread", format!("Err({})", message(&*payload)));
    fact("mutex poisoned", lock.is_poisoned());
    match lock.lock() {
        Ok(_) => fact("lock after the panic", "Ok (wrong)"),
        Err(e) => fact("lock after the panic", format!("Err(PoisonError), into_inner reads {}", *e.into_inner())),
    }
    fact("try_lock after the panic", format!("{:?}", lock.try_lock().map(|g| *g).map_err(|e| e.to_string())));
    lock.clear_poison();
    fact("after clear_poison", format!("poisoned {}, lock reads {:?}", lock.is_poisoned(), lock.lock().map(|g| *g).ok()));

    // A String payload, and Mutex::into_inner of a poisoned lock.
    let owned = Mutex::new(vec![1, 2, 3]);
    let r = thread::scope(|s| {
        s.spawn(|| {
            let mut v = owned.lock().unwrap();
            v.push(4);
            panic!("a String payload: {} items", v.len());
        })
        .join()
    });
    fact("String payload", message(&*r.unwrap_err()));
    match owned.into_inner() {
        Ok(v) => fact("into_inner of the poisoned mutex", format!("Ok({v:?}) (wrong)")),
        Err(e) => fact("into_inner of the poisoned mutex", format!("Err, PoisonError::into_inner gives {:?}", e.into_inner())),
    }
    // The guard was released while unwinding: another thread can lock it.
    let again = thread::spawn(move || lock.lock().map(|g| *g).unwrap_or(-1)).join();
    fact("another thread locks it afterwards", format!("{again:?}"));
}

#[inline(never)]
fn outer() {
    let _o = Noisy("outer");
    middle();
}

#[inline(never)]
fn middle() {
    let _m = Noisy("middle");
    inner();
}

#[inline(never)]
fn inner() {
    let _i = Noisy("inner");
    panic!("panic three frames down");
}

struct Fields {
    _first: Noisy,
    _second: Noisy,
}

/// std's drop order: locals in reverse, fields and `Vec` elements in order,
/// whether the scope ends normally or by unwinding.
fn drop_order() {
    {
        let _a = Noisy("a");
        let _b = Noisy("b");
        let _c = Noisy("c");
    }
    fact("locals at the end of a scope", drops());
    let r = panic::catch_unwind(|| {
        let _a = Noisy("a");
        let _b = Noisy("b");
        let _c = Noisy("c");
        panic!("panic with three locals");
    });
    fact("locals while unwinding", format!("{} (caught: {})", drops(), r.is_err()));
    let r = panic::catch_unwind(outer);
    fact("nested frames while unwinding", format!("{} (caught: {})", drops(), r.is_err()));
    let r = panic::catch_unwind(|| {
        let _v = vec![Noisy("v0"), Noisy("v1"), Noisy("v2")];
        let _f = Fields { _first: Noisy("field1"), _second: Noisy("field2") };
        let _t = (Noisy("t0"), Noisy("t1"));
        panic!("panic with a Vec, a struct and a tuple");
    });
    fact("Vec, struct and tuple while unwinding", format!("{} (caught: {})", drops(), r.is_err()));
    // A value moved out before the panic is not dropped twice.
    let r = panic::catch_unwind(|| {
        let a = Noisy("moved");
        let _b = Noisy("kept");
        drop(a);
        panic!("panic after a move");
    });
    fact("a value moved out before the panic", format!("{} (caught: {})", drops(), r.is_err()));
}

#[derive(Debug)]
struct Custom {
    code: i32,
}

/// `catch_unwind` Ok and Err, nested, rethrown; `resume_unwind` without
/// the hook; `panic_any` with a type of our own.
fn catching() {
    fact("catch_unwind of a closure that returns", format!("{:?}", panic::catch_unwind(|| 6 * 7)));
    let r = panic::catch_unwind(|| -> i32 { panic!("caught by catch_unwind") });
    fact("catch_unwind of a closure that panics", format!("Err({})", message(&*r.unwrap_err())));

    let r = panic::catch_unwind(|| {
        let _o = Noisy("outer-local");
        let inner = panic::catch_unwind(|| {
            let _i = Noisy("inner-local");
            panic!("inner panic");
        });
        (inner.is_err(), drops())
    });
    fact("nested catch_unwind", format!("{:?}, then {}", r, drops()));

    // A caught payload thrown again reaches the outer catch unchanged.
    let r = panic::catch_unwind(|| {
        let e = panic::catch_unwind(|| panic!("thrown twice")).unwrap_err();
        panic::resume_unwind(e);
    });
    fact("resume_unwind of a caught payload", message(&*r.unwrap_err()));

    // resume_unwind does not call the panic hook.
    static HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);
    let default = panic::take_hook();
    panic::set_hook(Box::new(|_| {
        HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
    }));
    let r = panic::catch_unwind(|| panic::resume_unwind(Box::new(13u32)));
    let quiet = HOOK_CALLS.load(Ordering::SeqCst);
    let r2 = panic::catch_unwind(|| panic!("this one calls the hook"));
    let loud = HOOK_CALLS.load(Ordering::SeqCst);
    panic::set_hook(default);
    fact(
        "resume_unwind",
        format!("payload u32 {:?}, hook calls {quiet}; a panic! after it: {loud} ({})", r.unwrap_err().downcast_ref::<u32>(), r2.is_err()),
    );

    let r = thread::Builder::new()
        .name("panic-any".into())
        .spawn(|| panic::panic_any(Custom { code: 7 }))
        .unwrap()
        .join();
    let payload = r.unwrap_err();
    fact("panic_any(Custom) joined", format!("{:?}, as a message: {}", payload.downcast_ref::<Custom>(), message(&*payload)));
    let r = panic::catch_unwind(|| panic::panic_any(Custom { code: 8 }));
    fact("panic_any(Custom) caught", format!("{:?}", r.unwrap_err().downcast::<Custom>().map(|c| c.code).ok()));
}

/// What the custom hook saw of each panic.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn record(info: &PanicHookInfo<'_>) {
    let loc = info.location().map_or("no location".to_string(), |l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
    let msg = info.payload_as_str().unwrap_or("(not a string)");
    let name = thread::current().name().unwrap_or("<unnamed>").to_string();
    SEEN.lock().unwrap_or_else(PoisonError::into_inner).push(format!("thread {name} at {loc}: {msg}"));
}

/// `set_hook` and `take_hook`: a hook of ours sees the location, the
/// message and the thread; chaining to the previous hook; back to std's.
fn hooks() {
    panic::set_hook(Box::new(record));
    let line = line!() + 1;
    let r = panic::catch_unwind(|| panic!("seen by the custom hook: {}", 42));
    let seen: Vec<String> = std::mem::take(&mut *SEEN.lock().unwrap());
    fact("custom hook", format!("{} call(s), {:?}", seen.len(), seen));
    let loc = panic::Location::caller();
    fact("the hook's location is the panic's", seen.first().is_some_and(|s| s.contains(&format!("{}:{line}:", loc.file()))));
    drop(r);

    // take_hook returns ours; chained ahead of std's default hook, both run.
    let ours = panic::take_hook();
    let std_default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        ours(info);
        std_default(info);
    }));
    let r = thread::Builder::new()
        .name("hooked".into())
        .spawn(|| panic::panic_any(Custom { code: 9 }))
        .unwrap()
        .join();
    let seen: Vec<String> = std::mem::take(&mut *SEEN.lock().unwrap());
    fact("chained hook in a spawned thread", format!("{:?}, join {}", seen, if r.is_err() { "Err" } else { "Ok" }));
    let _ = panic::take_hook();
    let r = panic::catch_unwind(|| panic!("after take_hook: std's default hook"));
    fact("after take_hook", format!("custom hook calls {}, caught {}", SEEN.lock().unwrap().len(), r.is_err()));
}

/// `thread::scope` re-raises a scoped thread's panic unless it was joined.
fn scopes() {
    let r = panic::catch_unwind(|| {
        thread::scope(|s| {
            s.spawn(|| {
                let _n = Noisy("scoped-local");
                panic!("a scoped thread panics");
            });
            s.spawn(|| 1 + 1);
        });
        "scope returned"
    });
    fact("scope with a panicked thread", format!("Err({}), drops {}", message(&*r.unwrap_err()), drops()));

    let joined = thread::scope(|s| {
        let h = s.spawn(|| -> u8 { panic!("joined by hand in a scope") });
        h.join().map_err(|e| message(&*e))
    });
    fact("scope whose panicked thread was joined", format!("returns {joined:?}"));

    let data = Mutex::new(0);
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        thread::scope(|s| {
            for i in 0..4 {
                let data = &data;
                s.spawn(move || {
                    let mut g = data.lock().unwrap_or_else(PoisonError::into_inner);
                    *g += 1;
                    if i == 2 {
                        panic!("scoped thread {i} of 4 panics holding the lock");
                    }
                });
            }
        })
    }));
    fact(
        "4 scoped threads, one panics holding the lock",
        format!("caught {}, poisoned {}, count {}", r.is_err(), data.is_poisoned(), *data.lock().unwrap_or_else(PoisonError::into_inner)),
    );
}

/// A panicking initializer poisons a `Once`; `call_once_force` recovers.
fn once() {
    static INIT: Once = Once::new();
    let r = panic::catch_unwind(|| INIT.call_once(|| panic!("the Once initializer panics")));
    fact("Once whose initializer panicked", format!("caught {}, completed {}", r.is_err(), INIT.is_completed()));
    let r = panic::catch_unwind(|| INIT.call_once(|| unreachable!("a poisoned Once runs nothing")));
    fact("call_once on the poisoned Once", format!("Err({})", message(&*r.unwrap_err())));
    let mut saw = None;
    INIT.call_once_force(|state| saw = Some(state.is_poisoned()));
    fact("call_once_force", format!("state poisoned {saw:?}, completed {}", INIT.is_completed()));
    INIT.call_once(|| unreachable!("a completed Once runs nothing"));
    fact("call_once after recovery", "ran nothing");
}

/// A panic holding a write guard poisons a `RwLock`; one holding a read
/// guard does not.
fn rwlock() {
    let lock = Arc::new(RwLock::new(String::from("before")));
    let r = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || {
            let _r = lock.read().unwrap();
            panic!("panic holding a read guard");
        })
        .join()
    };
    fact("RwLock after a panic holding a read guard", format!("join Err {}, poisoned {}", r.is_err(), lock.is_poisoned()));
    let r = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || {
            let mut w = lock.write().unwrap();
            w.push_str(", written");
            panic!("panic holding a write guard");
        })
        .join()
    };
    fact("RwLock after a panic holding a write guard", format!("join Err {}, poisoned {}", r.is_err(), lock.is_poisoned()));
    match lock.read() {
        Ok(_) => fact("read after the poisoning", "Ok (wrong)"),
        Err(e) => fact("read after the poisoning", format!("Err, into_inner reads {:?}", *e.into_inner())),
    }
    fact("write after the poisoning", lock.write().is_err());
    lock.clear_poison();
    fact("after clear_poison", format!("poisoned {}, read Ok {}", lock.is_poisoned(), lock.read().is_ok()));
}

/// `n` threads panic at once (a barrier lines them up); every join is `Err`
/// with that thread's payload, and a lock they all hold once is poisoned.
fn many_threads(n: usize) {
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let barrier = Arc::clone(&barrier);
            thread::Builder::new()
                .name(format!("many-{i}"))
                .spawn(move || {
                    let _n = Noisy("many");
                    barrier.wait();
                    panic!("thread {i} of {n} panics");
                })
                .expect("spawn")
        })
        .collect();
    let mut ok = 0;
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Err(e) if message(&*e) == format!("String {:?}", format!("thread {i} of {n} panics")) => ok += 1,
            Err(e) => println!("unwind: many-{i}: wrong payload {}", message(&*e)),
            Ok(()) => println!("unwind: many-{i}: join Ok (wrong)"),
        }
    }
    let dropped = drops().split(' ').filter(|d| *d == "many!").count();
    fact(&format!("{n} threads panicking at once"), format!("{ok} joins Err with their own payload, {dropped} locals dropped while unwinding"));
}

/// Records its depth when dropped.
struct Level(usize);

impl Drop for Level {
    fn drop(&mut self) {
        log_drop(self.0.to_string());
    }
}

#[inline(never)]
fn descend(depth: usize, bottom: usize) -> usize {
    let _level = Level(depth);
    if depth == bottom {
        panic!("the bottom of a {bottom}-frame recursion");
    }
    // Used after the call, so the frame (and its Drop) stays.
    descend(depth + 1, bottom) + std::hint::black_box(depth)
}

/// A thread panics `frames` calls deep, each frame with a `Drop`: every
/// frame's value is dropped, deepest first.
fn deep_recursion(frames: usize) {
    let r = thread::Builder::new().name("recursion".into()).spawn(move || descend(1, frames)).unwrap().join();
    let order: Vec<usize> = drops().split(' ').filter_map(|d| d.parse().ok()).collect();
    let deepest_first = order.iter().copied().eq((1..=frames).rev());
    fact(
        &format!("a panic {frames} frames deep"),
        format!("join {}, {} frames dropped, deepest first {deepest_first}", if r.is_err() { "Err" } else { "Ok" }, order.len()),
    );
}
