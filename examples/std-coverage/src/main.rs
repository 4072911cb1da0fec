//! Uses every part of std that the GPU sys layer wires to the runtime and
//! checks each result. Every check prints one `ok`/`FAIL` line; the last line
//! is `std-coverage: all N checks passed` (exit 0) or a failure count (exit 1).
//!
//! One argument selects a failure path instead, for harnesses that check exit
//! codes and stderr:
//! - `panic`: panics on `main` (exit 101, "thread 'main' panicked at ...")
//! - `thread-panic`: panics on a thread named `boom` (exit 101)
//! - `abort`: `process::abort()` (exit 134)
//! - `exit`: prints "exit-flushed" without a newline, then `process::exit(7)`
//! - `stdout-handle`: writes a line without its newline through an
//!   `io::stdout()` handle and returns: std's exit flushes it (exit 0)
//! - `spawn-exhaust`: `thread::spawn` until no warp is free, so std panics with
//!   "failed to spawn thread: ... no free GPU warp ..." (exit 101)
//! - `stack-share`: scoped threads use an atomic and an array on `main`'s
//!   stack (exit 0 if they did, 1 if not). Expected to fail on GPUs: a stack
//!   lives in per-lane private memory (NVIDIA local, AMD scratch), and another
//!   warp dereferencing the pointer reaches its own stack at that address.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::hash::{BuildHasher, RandomState};
use std::hint::black_box;
use std::io::{self, BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    fn check(&mut self, name: &str, ok: bool, detail: impl Display) {
        if ok {
            self.passed += 1;
            println!("ok   {name}: {detail}");
        } else {
            self.failed += 1;
            println!("FAIL {name}: {detail}");
        }
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("panic") => panic!("std-coverage: deliberate panic"),
        Some("thread-panic") => {
            let h = thread::Builder::new()
                .name("boom".into())
                .spawn(|| panic!("std-coverage: deliberate panic on a thread"))
                .unwrap();
            let _ = h.join();
            unreachable!("panic=abort ends the program in the thread");
        }
        Some("abort") => std::process::abort(),
        Some("exit") => {
            print!("exit-flushed");
            std::process::exit(7);
        }
        Some("stdout-handle") => {
            // Buffered in the handle's LineWriter until std's exit flushes it.
            io::stdout().write_all(b"stdout-handle: no newline, flushed at exit").unwrap();
            return;
        }
        Some("spawn-exhaust") => {
            let gate = Arc::new((Mutex::new(false), Condvar::new()));
            loop {
                let gate = gate.clone();
                // Panics once every warp runs a thread.
                thread::spawn(move || {
                    let (lock, cv) = &*gate;
                    let _open = cv.wait_while(lock.lock().unwrap(), |open| !*open).unwrap();
                });
            }
        }
        Some("stack-share") => stack_share(),
        Some(other) => {
            eprintln!("std-coverage: unknown mode {other:?}");
            std::process::exit(2);
        }
    }

    let mut c = Checks {
        passed: 0,
        failed: 0,
    };
    alloc(&mut c);
    stdio(&mut c);
    args_env(&mut c);
    time(&mut c);
    threads(&mut c);
    thread_locals(&mut c);
    sync(&mut c);
    channels(&mut c);
    spawn_errors(&mut c);
    random(&mut c);
    io_errors(&mut c);
    formatting(&mut c);
    maths(&mut c);

    if c.failed == 0 {
        println!("std-coverage: all {} checks passed", c.passed);
    } else {
        println!(
            "std-coverage: {} of {} checks FAILED",
            c.failed,
            c.passed + c.failed
        );
        std::process::exit(1);
    }
}

fn alloc(c: &mut Checks) {
    let mut v = Vec::new();
    for i in 0..100_000u64 {
        v.push(i); // grows by realloc
    }
    let sum: u64 = v.iter().sum();
    c.check(
        "alloc: Vec growth",
        sum == 99_999 * 100_000 / 2,
        format!("sum {sum}"),
    );
    drop(v);

    let z = vec![0u8; 256 * 1024];
    c.check(
        "alloc: zeroed",
        z.iter().all(|&b| b == 0),
        "256 KiB of zeros",
    );

    #[repr(align(256))]
    struct Aligned(#[allow(dead_code)] u8);
    let b = Box::new(Aligned(1));
    let addr = &*b as *const Aligned as usize;
    c.check(
        "alloc: Box align 256",
        addr % 256 == 0,
        format!("{addr:#x}"),
    );

    // The System allocator directly: alloc, realloc, alloc_zeroed, dealloc.
    let ok = unsafe {
        let layout = Layout::from_size_align(100, 4096).unwrap();
        let p = System.alloc(layout);
        let aligned = !p.is_null() && p as usize % 4096 == 0;
        if !p.is_null() {
            p.write_bytes(0xab, 100);
        }
        let q = if p.is_null() {
            p
        } else {
            System.realloc(p, layout, 10_000)
        };
        let kept = !q.is_null() && q as usize % 4096 == 0 && *q.add(99) == 0xab;
        if !q.is_null() {
            System.dealloc(q, Layout::from_size_align(10_000, 4096).unwrap());
        }
        let zl = Layout::from_size_align(5000, 64).unwrap();
        let zp = System.alloc_zeroed(zl);
        let zeroed = !zp.is_null() && (0..5000).all(|i| *zp.add(i) == 0);
        if !zp.is_null() {
            System.dealloc(zp, zl);
        }
        aligned && kept && zeroed
    };
    c.check(
        "alloc: System alloc/realloc/zeroed/dealloc",
        ok,
        "align 4096 kept over realloc",
    );

    let mut m = BTreeMap::new();
    for i in 0..1000 {
        m.insert(i, i.to_string());
    }
    let s: String = m.values().take(5).map(String::as_str).collect();
    c.check(
        "alloc: BTreeMap<String>",
        s == "01234" && m.len() == 1000,
        s,
    );
}

fn stdio(c: &mut Checks) {
    print!("stdio: print! without newline, then flush ... ");
    let flushed = io::stdout().flush().is_ok();
    println!("done");
    c.check("stdout: print!/flush", flushed, "flush Ok");

    // Checked by the acceptance suite (`long_lines` there), which sees stdout.
    let long = "0123456789".repeat(100);
    println!("{long}");
    c.check("stdout: 1000-byte line", true, "printed above");
    // A line whose pieces cross the GPU's 256 bytes formatted on the stack.
    println!("{}|{}|{}", "a".repeat(200), "b".repeat(100), 42);

    // Re-entrant stdout lock (std's ReentrantLock): println! inside a held lock.
    let mut lock = io::stdout().lock();
    writeln!(lock, "stdout: locked write").unwrap();
    println!("stdout: println! while the lock is held");
    drop(lock);
    c.check("stdout: ReentrantLock", true, "no deadlock");

    eprintln!("stderr: eprintln! works");
    let err_ok = writeln!(io::stderr(), "stderr: writeln!").is_ok();
    c.check("stderr", err_ok, "written");

    let mut buf = [0u8; 16];
    let n = io::stdin().read(&mut buf);
    let mut line = String::new();
    let m = io::stdin().lock().read_line(&mut line);
    c.check(
        "stdin: end of stream",
        matches!(n, Ok(0)) && matches!(m, Ok(0)),
        format!("read {n:?}, read_line {m:?}"),
    );
}

fn args_env(c: &mut Checks) {
    let args: Vec<String> = std::env::args().collect();
    c.check("env::args", !args.is_empty(), format!("{args:?}"));
    let os_args = std::env::args_os().count();
    c.check(
        "env::args_os",
        os_args == args.len(),
        format!("{os_args} args"),
    );

    let vars: Vec<(String, String)> = std::env::vars().collect();
    let consistent = vars
        .iter()
        .all(|(k, v)| std::env::var(k).as_deref() == Ok(v.as_str()));
    c.check(
        "env::vars/var",
        consistent,
        format!("{} variables agree with var()", vars.len()),
    );
    let missing = std::env::var("STD_COVERAGE_SURELY_NOT_SET");
    c.check(
        "env::var missing",
        missing == Err(std::env::VarError::NotPresent),
        format!("{missing:?}"),
    );
}

fn time(c: &mut Checks) {
    let t0 = Instant::now();
    let t1 = Instant::now();
    c.check("Instant monotonic", t1 >= t0, format!("{:?}", t1 - t0));

    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    // 2020-01-01: the launcher's epoch must be a real wall clock.
    c.check(
        "SystemTime::now",
        since_epoch.as_secs() > 1_577_836_800,
        format!("{since_epoch:?}"),
    );

    let t = Instant::now();
    thread::sleep(Duration::from_millis(20));
    let slept = t.elapsed();
    c.check(
        "thread::sleep(20ms)",
        slept >= Duration::from_millis(20),
        format!("{slept:?}"),
    );
}

fn threads(c: &mut Checks) {
    let n = thread::available_parallelism().map(|n| n.get());
    c.check(
        "available_parallelism",
        matches!(n, Ok(n) if n >= 2),
        format!("{n:?}"),
    );

    let main = thread::current();
    c.check(
        "current: main's name",
        main.name() == Some("main"),
        format!("{:?}", main.name()),
    );

    let h = thread::spawn(|| 6 * 7);
    let r = h.join();
    c.check("spawn/join", matches!(r, Ok(42)), format!("{r:?}"));

    let main_id = main.id();
    let h = thread::Builder::new()
        .name("worker-1".into())
        .stack_size(8 * 1024)
        .spawn(move || {
            let me = thread::current();
            (
                me.name().map(str::to_owned),
                me.id() != main_id,
                thread::current().id() == me.id(),
            )
        })
        .unwrap();
    let named = h.thread().name() == Some("worker-1");
    let (name, other_id, stable_id) = h.join().unwrap();
    c.check(
        "Builder name/stack_size, current, id",
        named && name.as_deref() == Some("worker-1") && other_id && stable_id,
        format!("{name:?}"),
    );
    c.check(
        "current on main again",
        thread::current().id() == main_id,
        format!("{main_id:?}"),
    );

    let nested = thread::spawn(|| thread::spawn(|| 5).join().unwrap() + 1).join();
    c.check(
        "spawn from a spawned thread",
        matches!(nested, Ok(6)),
        format!("{nested:?}"),
    );

    thread::yield_now();
    c.check("yield_now", true, "returned");

    // park/unpark: the thread parks until the flag is set and it is unparked.
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = flag.clone();
    let h = thread::spawn(move || {
        let mut parks = 0;
        while !f2.load(Ordering::Acquire) {
            thread::park();
            parks += 1;
        }
        parks
    });
    thread::sleep(Duration::from_millis(5));
    flag.store(true, Ordering::Release);
    h.thread().unpark();
    let parks = h.join();
    c.check(
        "park/unpark",
        parks.is_ok(),
        format!("woke after {parks:?} park(s)"),
    );

    let t = Instant::now();
    thread::park_timeout(Duration::from_millis(5));
    c.check(
        "park_timeout",
        true,
        format!("returned after {:?}", t.elapsed()),
    );

    // Detached thread: the JoinHandle is dropped at once.
    let (tx, rx) = mpsc::channel();
    drop(thread::spawn(move || {
        tx.send(thread::current().id()).unwrap()
    }));
    let got = rx.recv_timeout(Duration::from_secs(10));
    c.check("detached thread", got.is_ok(), format!("{got:?}"));

    let h = thread::spawn(|| thread::sleep(Duration::from_millis(1)));
    while !h.is_finished() {
        thread::sleep(Duration::from_micros(100));
    }
    c.check(
        "JoinHandle::is_finished",
        h.join().is_ok(),
        "finished, then joined",
    );

    // A detached thread's unjoined result is dropped once: on the thread,
    // with `current()` its handle, if the handle goes while the thread
    // runs; where the handle is dropped if the thread had ended.
    let (go_tx, go_rx) = mpsc::channel::<()>();
    drop(
        thread::Builder::new()
            .name("detached-early".into())
            .spawn(move || {
                go_rx.recv().unwrap();
                CountResultDrop
            })
            .unwrap(),
    );
    go_tx.send(()).unwrap();
    let t = Instant::now();
    while RESULT_DROPS.lock().unwrap().is_empty() && t.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_micros(100));
    }
    let h = thread::spawn(|| CountResultDrop);
    while !h.is_finished() {
        thread::sleep(Duration::from_micros(100));
    }
    drop(h);
    thread::sleep(Duration::from_millis(1));
    let drops = RESULT_DROPS.lock().unwrap().clone();
    c.check(
        "detached threads' results dropped once, where std drops them",
        drops == [Some("detached-early".to_string()), Some("main".to_string())],
        format!("{drops:?}"),
    );

    // A thread's handle outlives the thread and its `JoinHandle` through a
    // `current()` the thread handed out; inside the thread, `current()` is
    // the handle the spawner named, also in a thread-local's destructor.
    let me = thread::Builder::new()
        .name("handed-out".into())
        .spawn(|| {
            EXIT_NAME.with(|_| ());
            thread::current()
        })
        .unwrap()
        .join()
        .unwrap();
    let seen = EXIT_NAME_SEEN.lock().unwrap().clone();
    c.check(
        "current() after the thread, and in its TLS destructor",
        me.name() == Some("handed-out") && seen.as_deref() == Some("handed-out"),
        format!("{:?}, destructor saw {seen:?}", me.name()),
    );

    // Scoped threads borrow from `main`: heap data only, since a GPU thread's
    // stack is private to it (see the `stack-share` mode).
    let mut data = vec![1, 2, 3, 4];
    let total = Box::new(AtomicUsize::new(0));
    thread::scope(|s| {
        for x in data.iter_mut() {
            let total = &*total;
            s.spawn(move || {
                *x *= 10;
                total.fetch_add(*x, Ordering::Relaxed);
            });
        }
    });
    c.check(
        "thread::scope",
        data == [10, 20, 30, 40] && total.load(Ordering::Relaxed) == 100,
        format!("{data:?}"),
    );
}

static DROPS: AtomicUsize = AtomicUsize::new(0);
/// `thread::current()`'s name at each `CountResultDrop` drop.
static RESULT_DROPS: Mutex<Vec<Option<String>>> = Mutex::new(Vec::new());
static EXIT_NAME_SEEN: Mutex<Option<String>> = Mutex::new(None);

/// A thread's result that records where it is dropped.
struct CountResultDrop;

impl Drop for CountResultDrop {
    fn drop(&mut self) {
        let name = thread::current().name().map(str::to_owned);
        RESULT_DROPS.lock().unwrap().push(name);
    }
}

/// Records `thread::current()`'s name when its thread's locals are destroyed.
struct RecordExitName;

impl Drop for RecordExitName {
    fn drop(&mut self) {
        *EXIT_NAME_SEEN.lock().unwrap() = thread::current().name().map(str::to_owned);
    }
}

struct CountDrop;

impl Drop for CountDrop {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static COUNTER: Cell<u32> = const { Cell::new(0) };
    static NAME: RefCell<String> = RefCell::new(String::from("unset"));
    static GUARD: RefCell<Option<CountDrop>> = const { RefCell::new(None) };
    static EXIT_NAME: RecordExitName = const { RecordExitName };
}

fn thread_locals(c: &mut Checks) {
    COUNTER.set(100);
    NAME.with_borrow_mut(|n| *n = "main".into());
    let hs: Vec<_> = (0..4u32)
        .map(|i| {
            thread::spawn(move || {
                COUNTER.set(COUNTER.get() + i);
                NAME.with_borrow_mut(|n| n.push_str(&i.to_string()));
                GUARD.with_borrow_mut(|g| *g = Some(CountDrop));
                (COUNTER.get(), NAME.with_borrow(|n| n.clone()))
            })
        })
        .collect();
    let results: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let separate = results
        .iter()
        .enumerate()
        .all(|(i, (n, s))| *n == i as u32 && *s == format!("unset{i}"));
    c.check(
        "thread_local: one value per thread",
        separate,
        format!("{results:?}"),
    );
    c.check(
        "thread_local: main's value untouched",
        COUNTER.get() == 100 && NAME.with_borrow(|n| n == "main"),
        COUNTER.get(),
    );
    // join returns after the thread's TLS destructors ran.
    let drops = DROPS.load(Ordering::SeqCst);
    c.check(
        "thread_local: destructors at thread exit",
        drops == 4,
        format!("{drops} of 4 dropped"),
    );
}

fn sync(c: &mut Checks) {
    let m = Arc::new(Mutex::new(0u64));
    let hs: Vec<_> = (0..4)
        .map(|_| {
            let m = m.clone();
            thread::spawn(move || {
                for _ in 0..1000 {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    let v = *m.lock().unwrap();
    c.check("Mutex: 4 threads x 1000", v == 4000, v);
    c.check("Mutex::try_lock", m.try_lock().is_ok(), "unlocked");

    let pair = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
    let p2 = pair.clone();
    let producer = thread::spawn(move || {
        for i in 0..10 {
            p2.0.lock().unwrap().push(i);
            p2.1.notify_one();
            thread::yield_now();
        }
    });
    let mut got = Vec::new();
    while got.len() < 10 {
        let (lock, cv) = &*pair;
        let mut q = cv
            .wait_while(lock.lock().unwrap(), |q| q.is_empty())
            .unwrap();
        got.append(&mut q);
    }
    producer.join().unwrap();
    c.check(
        "Condvar: wait_while/notify_one",
        got == (0..10).collect::<Vec<_>>(),
        format!("{got:?}"),
    );

    // On main's stack on purpose: a CAS on a stack atomic is a common pattern
    // that LLVM 22's NVPTX backend turns into invalid PTX (`atom.local`).
    let lock = Mutex::new(());
    let cv = Condvar::new();
    let t = Instant::now();
    let (_g, res) = cv
        .wait_timeout(lock.lock().unwrap(), Duration::from_millis(10))
        .unwrap();
    c.check(
        "Condvar::wait_timeout",
        res.timed_out(),
        format!("timed out after {:?}", t.elapsed()),
    );

    let rw = Arc::new(RwLock::new(5));
    {
        let r = rw.read().unwrap();
        let rw2 = rw.clone();
        let (reads, writes) =
            thread::spawn(move || (rw2.try_read().is_ok(), rw2.try_write().is_ok()))
                .join()
                .unwrap();
        c.check(
            "RwLock: shared readers",
            reads && !writes && *r == 5,
            "try_read Ok, try_write Err",
        );
    }
    let hs: Vec<_> = (0..4)
        .map(|_| {
            let rw = rw.clone();
            thread::spawn(move || {
                for _ in 0..100 {
                    *rw.write().unwrap() += 1;
                    let _ = *rw.read().unwrap();
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    let v = *rw.read().unwrap();
    c.check("RwLock: writers", v == 405, v);

    static ONCE: Once = Once::new();
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    static CELL: OnceLock<usize> = OnceLock::new();
    let hs: Vec<_> = (0..4)
        .map(|i| {
            thread::spawn(move || {
                ONCE.call_once(|| {
                    RUNS.fetch_add(1, Ordering::SeqCst);
                });
                *CELL.get_or_init(|| i)
            })
        })
        .collect();
    let vals: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    c.check(
        "Once",
        RUNS.load(Ordering::SeqCst) == 1 && ONCE.is_completed(),
        "ran once",
    );
    c.check(
        "OnceLock",
        vals.iter().all(|v| *v == vals[0]),
        format!("{vals:?}"),
    );

    static LAZY: LazyLock<String> = LazyLock::new(|| "lazy".repeat(2));
    let l = thread::spawn(|| LAZY.len()).join().unwrap();
    c.check("LazyLock", l == 8 && *LAZY == "lazylazy", &*LAZY);

    let barrier = Arc::new(Barrier::new(4));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let b = barrier.clone();
            thread::spawn(move || b.wait().is_leader())
        })
        .collect();
    let me = barrier.wait().is_leader();
    let leaders = hs
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|l| *l)
        .count()
        + me as usize;
    c.check("Barrier", leaders == 1, format!("{leaders} leader"));

    // Each cycle has one leader, and nobody leaves a cycle before all have
    // arrived in it: a small barrier, and one of up to 300 threads (on GPUs
    // from 256 threads its waiters poll several cache lines).
    let all = thread::available_parallelism().map_or(1, |p| p.get());
    for n in [3, all.min(300)] {
        let b = Arc::new(BarrierCycles {
            barrier: Barrier::new(n),
            arrived: [const { AtomicUsize::new(0) }; BARRIER_CYCLES],
            leaders: AtomicUsize::new(0),
            early: AtomicUsize::new(0),
        });
        let hs: Vec<_> = (1..n).map(|_| {
            let b = b.clone();
            thread::spawn(move || b.run(n))
        }).collect();
        b.run(n);
        hs.into_iter().for_each(|h| h.join().unwrap());
        let (leaders, early) = (b.leaders.load(Ordering::SeqCst), b.early.load(Ordering::SeqCst));
        c.check(
            &format!("Barrier of {n}, {BARRIER_CYCLES} cycles"),
            leaders == BARRIER_CYCLES && early == 0,
            format!("{leaders} leaders, {early} left early"),
        );
    }
    let zero_and_one = Barrier::new(0).wait().is_leader() && Barrier::new(1).wait().is_leader();
    c.check("Barrier of 0 and of 1", zero_and_one, "each wait returns at once, as leader");
}

const BARRIER_CYCLES: usize = 5;

struct BarrierCycles {
    barrier: Barrier,
    /// Threads that arrived in each cycle.
    arrived: [AtomicUsize; BARRIER_CYCLES],
    leaders: AtomicUsize,
    /// Returns from `wait` that saw fewer than all arrived in their cycle.
    early: AtomicUsize,
}

impl BarrierCycles {
    fn run(&self, n: usize) {
        for arrived in &self.arrived {
            arrived.fetch_add(1, Ordering::SeqCst);
            if self.barrier.wait().is_leader() {
                self.leaders.fetch_add(1, Ordering::SeqCst);
            }
            if arrived.load(Ordering::SeqCst) != n {
                self.early.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

fn channels(c: &mut Checks) {
    let (tx, rx) = mpsc::channel();
    for t in 0..4u64 {
        let tx = tx.clone();
        thread::spawn(move || {
            for i in 0..100 {
                tx.send(t * 1000 + i).unwrap();
            }
        });
    }
    drop(tx);
    let all: Vec<u64> = rx.iter().collect();
    let sum: u64 = all.iter().sum();
    c.check(
        "mpsc::channel: 4 producers",
        all.len() == 400 && sum == 6000 * 100 + 4 * 4950,
        sum,
    );

    let (tx, rx) = mpsc::sync_channel(0);
    let h = thread::spawn(move || {
        for i in 0..5 {
            tx.send(i).unwrap();
        }
    });
    let got: Vec<i32> = rx.iter().collect();
    h.join().unwrap();
    c.check(
        "mpsc::sync_channel(0) rendezvous",
        got == [0, 1, 2, 3, 4],
        format!("{got:?}"),
    );

    let (tx, rx) = mpsc::sync_channel::<u8>(2);
    let full = tx.try_send(1).is_ok() && tx.try_send(2).is_ok() && tx.try_send(3).is_err();
    c.check(
        "mpsc::sync_channel(2) bound",
        full && rx.recv() == Ok(1),
        "third try_send refused",
    );

    // A sender blocked on a full channel sees the receiver go (on GPUs it
    // polls for room rather than being woken).
    let (tx, rx) = mpsc::sync_channel::<u8>(1);
    let h = thread::spawn(move || {
        let first = tx.send(1);
        let blocked = tx.send(2);
        (first, blocked)
    });
    thread::sleep(Duration::from_millis(10));
    drop(rx);
    let (first, blocked) = h.join().unwrap();
    c.check(
        "mpsc::sync_channel: a blocked send fails when the receiver goes",
        first.is_ok() && blocked.is_err(),
        format!("{first:?}, {blocked:?}"),
    );

    // A bounded channel's one receiver (on GPUs it claims slots without a
    // compare-exchange): many laps of 8 slots, four producers, and the
    // receiver handed to another thread halfway; every message once.
    let (tx, rx) = mpsc::sync_channel::<u64>(8);
    let (got, want) = four_producers_receiver_moved(tx, rx, |tx, v| tx.send(v).unwrap());
    c.check(
        "mpsc::sync_channel(8): 4 producers, receiver moved",
        got == want,
        format!("{} received", got.len()),
    );

    // An unbounded channel's one receiver (on GPUs it claims without a
    // compare-exchange and frees each block of 31 slots after its last):
    // four producers over many blocks, the receiver handed to another
    // thread halfway; then one dropped with messages left, whose
    // destructors run once.
    let (tx, rx) = mpsc::channel::<u64>();
    let (got, want) = four_producers_receiver_moved(tx, rx, |tx, v| tx.send(v).unwrap());
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    for _ in 0..100 {
        tx.send(Counted(drops.clone())).unwrap();
    }
    for _ in 0..40 {
        drop(rx.recv().unwrap());
    }
    drop(rx);
    let after_receiver = drops.load(Ordering::SeqCst);
    drop(tx);
    c.check(
        "mpsc::channel: 4 producers, receiver moved, then dropped with messages left",
        got == want && after_receiver == 100 && drops.load(Ordering::SeqCst) == 100,
        format!("{} received; {after_receiver} dropped", got.len()),
    );

    let (_tx, rx) = mpsc::channel::<u8>();
    let r = rx.recv_timeout(Duration::from_millis(5));
    c.check(
        "mpsc::recv_timeout",
        r == Err(RecvTimeoutError::Timeout),
        format!("{r:?}"),
    );
}

/// Four producers each send 250 numbers through a clone of `tx` (with
/// `send`); main receives 500, then hands `rx` to another thread for the
/// rest. Returns what was received, sorted, and what was sent.
fn four_producers_receiver_moved<S: Clone + Send + 'static>(
    tx: S,
    rx: mpsc::Receiver<u64>,
    send: fn(&S, u64),
) -> (Vec<u64>, Vec<u64>) {
    let producers: Vec<_> = (0..4u64)
        .map(|t| {
            let tx = tx.clone();
            thread::spawn(move || {
                for i in 0..250 {
                    send(&tx, t * 1000 + i);
                }
            })
        })
        .collect();
    drop(tx);
    let mut got: Vec<u64> = (0..500).map(|_| rx.recv().unwrap()).collect();
    got.extend(thread::spawn(move || rx.iter().collect::<Vec<u64>>()).join().unwrap());
    for p in producers {
        p.join().unwrap();
    }
    got.sort_unstable();
    let want = (0..4u64).flat_map(|t| (0..250).map(move |i| t * 1000 + i)).collect();
    (got, want)
}

fn spawn_errors(c: &mut Checks) {
    let r = thread::Builder::new().stack_size(1 << 40).spawn(|| ());
    let detail = match &r {
        Ok(_) => "spawned".to_string(),
        Err(e) => format!("{:?}: {e}", e.kind()),
    };
    // A 1 TiB stack cannot be had: code linked by gpu-ld takes a stack above
    // the launch's from the GPU heap, which refuses it (OutOfMemory, as std
    // on Linux does when mmap fails); with private frames the launch's stack
    // is the limit (InvalidInput).
    c.check(
        "Builder::spawn: stack too big",
        matches!(&r, Err(e) if matches!(e.kind(), io::ErrorKind::OutOfMemory | io::ErrorKind::InvalidInput)),
        detail,
    );
    if let Ok(h) = r {
        h.join().unwrap();
    }

    // Occupy every warp: the next spawn must fail cleanly, not hang.
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let mut held = Vec::new();
    let limit = thread::available_parallelism().map_or(1, |n| n.get());
    let err = loop {
        let g = gate.clone();
        match thread::Builder::new().spawn(move || {
            let (lock, cv) = &*g;
            let _open = cv.wait_while(lock.lock().unwrap(), |open| !*open).unwrap();
        }) {
            Ok(h) => held.push(h),
            Err(e) => break Some(e),
        }
        if held.len() > limit {
            break None;
        }
    };
    let spawned = held.len();
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let joined = held
        .into_iter()
        .map(|h| h.join())
        .filter(Result::is_ok)
        .count();
    let detail = match &err {
        Some(e) => format!("{spawned} threads, then {:?}: {e}", e.kind()),
        None => format!("{spawned} threads and no error"),
    };
    let ok = matches!(&err, Some(e) if e.kind() == io::ErrorKind::WouldBlock
        && e.to_string().contains("no free GPU warp"));
    c.check(
        "Builder::spawn: every warp busy",
        ok && joined == spawned,
        detail,
    );
    let again = thread::spawn(|| 1).join();
    c.check(
        "spawn after the warps were freed",
        matches!(again, Ok(1)),
        format!("{again:?}"),
    );
}

fn random(c: &mut Checks) {
    let (a, b) = (RandomState::new(), RandomState::new());
    let other = thread::spawn(|| RandomState::new().hash_one(12345u64))
        .join()
        .unwrap();
    let (ha, hb) = (a.hash_one(12345u64), b.hash_one(12345u64));
    c.check(
        "RandomState seeds differ",
        ha != hb && ha != other,
        format!("{ha:#x} {hb:#x} {other:#x}"),
    );

    let mut m = HashMap::new();
    for i in 0..1000 {
        m.insert(i, i * 2);
    }
    c.check(
        "HashMap",
        m.len() == 1000 && m[&500] == 1000,
        "1000 entries",
    );
}

fn io_errors(c: &mut Checks) {
    // The host's file system (through host calls on a GPU): a missing file
    // is the host's NotFound, not a crash.
    let r = std::fs::read("/nonexistent-gpu-std-coverage/file");
    let detail = match &r {
        Ok(b) => format!("read {} bytes", b.len()),
        Err(e) => format!("{:?}: {e}", e.kind()),
    };
    c.check(
        "io::Error: fs NotFound",
        matches!(&r, Err(e) if e.kind() == io::ErrorKind::NotFound),
        detail,
    );
    // set_var/remove_var change the program's environment.
    // SAFETY: no other thread reads the environment during these calls
    // (std-coverage's threads have been joined).
    unsafe { std::env::set_var("GPU_STD_COVERAGE_VAR", "set") };
    let set = std::env::var("GPU_STD_COVERAGE_VAR");
    unsafe { std::env::remove_var("GPU_STD_COVERAGE_VAR") };
    let removed = std::env::var("GPU_STD_COVERAGE_VAR");
    c.check("env: set_var, remove_var", set.as_deref() == Ok("set") && removed.is_err(), format!("{set:?} then {removed:?}"));
    let e = io::Error::other("custom");
    c.check("io::Error::other", e.to_string() == "custom", &e);
}

/// `Debug` output as std prints it on the host: the builders, plain and
/// `{:#?}`, and `str`'s and `char`'s escapes (the GPU std keeps these out of
/// line or skips a check that cannot fail; the text must not change).
fn formatting(c: &mut Checks) {
    // Fields are read only by `Debug`.
    #[allow(dead_code)]
    #[derive(Debug)]
    struct Point {
        x: i32,
        label: &'static str,
    }
    #[allow(dead_code)]
    #[derive(Debug)]
    struct Pair(u8, char);
    #[allow(dead_code)]
    #[derive(Debug)]
    enum Shape {
        Unit,
        Tuple(i8),
        Named { side: u16 },
    }
    let p = Point { x: -3, label: "a\"b" };
    let mut map = BTreeMap::new();
    map.insert(1, "one");
    map.insert(2, "two");
    let set: std::collections::BTreeSet<_> = [3, 1].into();
    let cases: [(&str, String, &str); 10] = [
        ("struct", format!("{p:?}"), r#"Point { x: -3, label: "a\"b" }"#),
        ("struct {:#?}", format!("{p:#?}"), "Point {\n    x: -3,\n    label: \"a\\\"b\",\n}"),
        ("tuple struct", format!("{:?}", Pair(7, '\'')), r#"Pair(7, '\'')"#),
        ("enum", format!("{:?}", [Shape::Unit, Shape::Tuple(-1), Shape::Named { side: 2 }]), "[Unit, Tuple(-1), Named { side: 2 }]"),
        ("nested {:#?}", format!("{:#?}", (Pair(1, 'x'), vec![1u8])), "(\n    Pair(\n        1,\n        'x',\n    ),\n    [\n        1,\n    ],\n)"),
        ("map and set", format!("{map:?} {set:?}"), r#"{1: "one", 2: "two"} {1, 3}"#),
        ("str escapes", format!("{:?}", "tab\there \"q\" \\ \u{7f} é\u{301} ✓\n"), r#""tab\there \"q\" \\ \u{7f} é\u{301} ✓\n""#),
        ("char escapes", format!("{:?}", ['\n', '\'', '"', 'é', '\u{301}', '\0']), r#"['\n', '\'', '"', 'é', '\u{301}', '\0']"#),
        ("io::Error kind", format!("{:?}", io::Error::from(io::ErrorKind::NotFound)), "Kind(NotFound)"),
        ("io::Error custom", format!("{:?}", io::Error::other("gpu\t")), r#"Custom { kind: Other, error: "gpu\t" }"#),
    ];
    for (name, got, want) in cases {
        c.check(&format!("Debug: {name}"), got == want, got.escape_debug());
    }
    // An OS error's message is the platform's: only its shape is std's.
    let os = format!("{:?}", io::Error::from_raw_os_error(2));
    c.check(
        "Debug: io::Error os",
        os.starts_with("Os { code: 2, kind: NotFound, message: \"") && os.ends_with("\" }"),
        &os,
    );
}

fn close64(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

fn close32(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0)
}

fn maths(c: &mut Checks) {
    use std::f64::consts::{E, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, PI, SQRT_2};
    // black_box: computed on the device, not folded by the compiler.
    let x = |v: f64| black_box(v);
    let cases64: [(&str, f64, f64); 30] = [
        ("sin", x(FRAC_PI_6).sin(), 0.5),
        ("cos", x(FRAC_PI_3).cos(), 0.5),
        ("tan", x(FRAC_PI_4).tan(), 1.0),
        ("sin_cos", x(PI / 2.0).sin_cos().0, 1.0),
        ("asin", x(0.5).asin(), FRAC_PI_6),
        ("acos", x(0.5).acos(), FRAC_PI_3),
        ("atan", x(1.0).atan(), FRAC_PI_4),
        ("atan2", x(1.0).atan2(x(1.0)), FRAC_PI_4),
        ("exp", x(1.0).exp(), E),
        ("exp2", x(10.0).exp2(), 1024.0),
        ("exp_m1", x(1e-10).exp_m1(), 1.00000000005e-10),
        ("ln", x(E).ln(), 1.0),
        ("log", x(81.0).log(x(3.0)), 4.0),
        ("log2", x(1024.0).log2(), 10.0),
        ("log10", x(1000.0).log10(), 3.0),
        ("ln_1p", x(E - 1.0).ln_1p(), 1.0),
        ("powf", x(2.0).powf(x(0.5)), SQRT_2),
        ("powi", x(2.0).powi(black_box(-3)), 0.125),
        ("sqrt", x(2.0).sqrt(), SQRT_2),
        ("cbrt", x(27.0).cbrt(), 3.0),
        ("hypot", x(3.0).hypot(x(4.0)), 5.0),
        ("sinh", x(1.0).sinh(), 1.1752011936438014),
        ("cosh", x(1.0).cosh(), 1.5430806348152437),
        ("tanh", x(0.5).tanh(), 0.46211715726000974),
        ("floor", x(-1.5).floor(), -2.0),
        ("ceil", x(-1.5).ceil(), -1.0),
        ("round", x(2.5).round(), 3.0),
        ("trunc", x(-2.7).trunc(), -2.0),
        ("mul_add", x(2.0).mul_add(x(3.0), x(4.0)), 10.0),
        ("abs", x(-3.25).abs(), 3.25),
    ];
    let bad: Vec<String> = cases64
        .iter()
        .filter(|(_, got, want)| !close64(*got, *want))
        .map(|(n, g, w)| format!("{n}: {g} != {w}"))
        .collect();
    c.check(
        "f64 maths",
        bad.is_empty(),
        if bad.is_empty() {
            "30 functions".into()
        } else {
            bad.join(", ")
        },
    );

    use std::f32::consts as c32;
    let y = |v: f32| black_box(v);
    let cases32: [(&str, f32, f32); 22] = [
        ("sin", y(c32::FRAC_PI_6).sin(), 0.5),
        ("cos", y(c32::FRAC_PI_3).cos(), 0.5),
        ("tan", y(c32::FRAC_PI_4).tan(), 1.0),
        ("exp", y(1.0).exp(), c32::E),
        ("exp2", y(10.0).exp2(), 1024.0),
        ("ln", y(c32::E).ln(), 1.0),
        ("log2", y(1024.0).log2(), 10.0),
        ("log10", y(1000.0).log10(), 3.0),
        ("powf", y(2.0).powf(y(0.5)), c32::SQRT_2),
        ("powi", y(2.0).powi(black_box(5)), 32.0),
        ("sqrt", y(2.0).sqrt(), c32::SQRT_2),
        ("cbrt", y(-8.0).cbrt(), -2.0),
        ("hypot", y(3.0).hypot(y(4.0)), 5.0),
        ("atan2", y(1.0).atan2(y(1.0)), c32::FRAC_PI_4),
        ("sinh", y(1.0).sinh(), 1.1752012),
        ("cosh", y(1.0).cosh(), 1.5430807),
        ("floor", y(-1.5).floor(), -2.0),
        ("ceil", y(-1.5).ceil(), -1.0),
        ("round", y(-2.5).round(), -3.0),
        ("trunc", y(2.7).trunc(), 2.0),
        ("mul_add", y(2.0).mul_add(y(3.0), y(4.0)), 10.0),
        ("abs", y(-3.25).abs(), 3.25),
    ];
    let bad: Vec<String> = cases32
        .iter()
        .filter(|(_, got, want)| !close32(*got, *want))
        .map(|(n, g, w)| format!("{n}: {g} != {w}"))
        .collect();
    c.check(
        "f32 maths",
        bad.is_empty(),
        if bad.is_empty() {
            "22 functions".into()
        } else {
            bad.join(", ")
        },
    );

    // Large arguments need real range reduction (a hardware sin would drift).
    let big = x(1e6).sin();
    c.check("sin(1e6)", close64(big, -0.34999350217129294), big);
}

fn stack_share() {
    let hits = AtomicUsize::new(0);
    let mut slots = [0u64; 4];
    thread::scope(|s| {
        for (i, slot) in slots.iter_mut().enumerate() {
            let hits = &hits;
            s.spawn(move || {
                *slot = i as u64 + 1;
                hits.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    let hits = hits.load(Ordering::SeqCst);
    let ok = hits == 4 && slots == [1, 2, 3, 4];
    println!(
        "stack-share: {} (hits {hits}, slots {slots:?})",
        if ok { "ok" } else { "FAIL" }
    );
    std::process::exit(if ok { 0 } else { 1 });
}
