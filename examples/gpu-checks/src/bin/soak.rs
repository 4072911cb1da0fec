//! Soak: every thread mixes spawn/join, channels, locks, `println!`, files and
//! the heap until a deadline; then every line, message, lock and file is
//! accounted for, and every warp is free again.
//!
//! `soak SECONDS [DIR] [PACE_MS]`: workers use half the threads `main` can
//! spawn (each may have one child at a time), one more collects the channel's
//! messages. Each iteration prints one `soak w<W> i<I> ...` line; the check
//! counts them against the `lines=` of the summary.
use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What one worker did, returned by its `join`.
#[derive(Default)]
struct Tally {
    iterations: u64,
    lines: u64,
    sent: u64,
    locks: u64,
    spawns: u64,
    files: u64,
    heap_bytes: u64,
    /// Opens refused with EMFILE, then retried.
    emfile: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.iterations += o.iterations;
        self.lines += o.lines;
        self.sent += o.sent;
        self.locks += o.locks;
        self.spawns += o.spawns;
        self.files += o.files;
        self.heap_bytes += o.heap_bytes;
        self.emfile += o.emfile;
    }
}

/// `f` again while it fails with EMFILE (too many open files).
fn retry_emfile<T>(t: &mut Tally, mut f: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(24) => {
                t.emfile += 1;
                thread::sleep(Duration::from_millis(1));
            }
            r => return r,
        }
    }
}

/// A message: (stream, sequence number). Each worker and each worker's
/// children (one at a time) are a stream whose numbers must arrive in order.
type Msg = (u32, u64);

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn worker(w: u32, workers: u32, tx: Sender<Msg>, counter: Arc<Mutex<u64>>, deadline: Instant, dir: PathBuf, pace: Duration) -> Tally {
    let mut t = Tally::default();
    let mut rng = 0x9e37_79b9_7f4a_7c15 ^ (w as u64 + 1);
    let mut child_seq = 0u64;
    let file = dir.join(format!("soak-w{w}.txt"));
    while Instant::now() < deadline {
        t.iterations += 1;
        let i = t.iterations;
        // The heap: a Vec of a varying size, filled and summed; now and then 1 MiB.
        let len = 1 + (xorshift(&mut rng) % 16_384) as usize;
        let len = if i % 16 == 0 { 1 << 18 } else { len };
        let v: Vec<u32> = (0..len as u32).map(|k| k ^ w).collect();
        let sum: u64 = v.iter().map(|&x| x as u64).sum();
        let want: u64 = (0..len as u64).map(|k| k ^ w as u64).sum();
        assert_eq!(sum, want, "worker {w}: heap contents changed");
        t.heap_bytes += (len * 4) as u64;
        drop(v);
        // A lock every thread takes.
        *counter.lock().unwrap() += 1;
        t.locks += 1;
        // A message in order.
        tx.send((w, i)).expect("collector gone");
        t.sent += 1;
        // A child: spawned, sends its own message, joined.
        if i % 4 == 0 {
            child_seq += 1;
            let (ctx, seq) = (tx.clone(), child_seq);
            let child = thread::Builder::new()
                .name(format!("soak-child-{w}"))
                .spawn(move || {
                    ctx.send((workers + w, seq)).expect("collector gone");
                    seq * 3
                })
                .unwrap_or_else(|e| panic!("worker {w}: spawn failed: {e}"));
            assert_eq!(child.join().expect("child panicked"), seq * 3);
            t.spawns += 1;
            t.sent += 1;
        }
        // A file written, read back and now and then removed. More workers
        // than the program's open-file limit (1,024, as Linux's default)
        // may hold one at once: past it `open` fails with EMFILE, and the
        // worker waits and tries again, as a program on a host would.
        if i % 8 == 0 {
            let text = format!("worker {w} iteration {i}\n");
            retry_emfile(&mut t, || fs::File::create(&file).and_then(|mut f| f.write_all(text.as_bytes()))).expect("write");
            let mut back = String::new();
            retry_emfile(&mut t, || fs::File::open(&file).and_then(|mut f| f.read_to_string(&mut back))).expect("read");
            assert_eq!(back, text, "worker {w}: file read back differs");
            if i % 64 == 0 {
                fs::remove_file(&file).expect("remove");
            }
            t.files += 1;
        }
        println!("soak w{w} i{i} n{len} s{sum}");
        t.lines += 1;
        if !pace.is_zero() {
            thread::sleep(pace);
        }
    }
    let _ = fs::remove_file(&file);
    t
}

/// Receives until every sender is gone; checks each stream's order.
fn collect(rx: Receiver<Msg>) -> (u64, u64) {
    let mut next: HashMap<u32, u64> = HashMap::new();
    let (mut received, mut out_of_order) = (0u64, 0u64);
    for (stream, seq) in rx {
        let n = next.entry(stream).or_insert(1);
        if seq != *n {
            out_of_order += 1;
        }
        *n = seq + 1;
        received += 1;
    }
    (received, out_of_order)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| std::env::temp_dir().display().to_string()));
    let pace = Duration::from_millis(args.next().and_then(|a| a.parse().ok()).unwrap_or(50));
    // On a GPU, the threads `main` can spawn; a host with few cores still
    // runs a few workers.
    let threads = thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(5);
    let workers = ((threads - 1) / 2) as u32;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let counter = Arc::new(Mutex::new(0u64));
    let (tx, rx) = channel();
    let collector = thread::Builder::new().name("soak-collector".into()).spawn(move || collect(rx)).expect("spawn collector");
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (tx, counter, dir) = (tx.clone(), counter.clone(), dir.clone());
            thread::Builder::new()
                .name(format!("soak-{w}"))
                .spawn(move || worker(w, workers, tx, counter, deadline, dir, pace))
                .unwrap_or_else(|e| panic!("spawn worker {w}: {e}"))
        })
        .collect();
    drop(tx);
    let mut total = Tally::default();
    for h in handles {
        total.add(&h.join().expect("worker panicked"));
    }
    let (received, out_of_order) = collector.join().expect("collector panicked");
    let locks = *counter.lock().unwrap();
    let elapsed = start.elapsed().as_secs_f64();
    let mut bad = Vec::new();
    if received != total.sent {
        bad.push(format!("sent {} messages, received {received}", total.sent));
    }
    if out_of_order != 0 {
        bad.push(format!("{out_of_order} messages out of order"));
    }
    if locks != total.locks {
        bad.push(format!("took the lock {} times, counted {locks}", total.locks));
    }
    // Every warp free again: as many threads as at the start, all at once.
    let free = thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(5);
    if free != threads {
        bad.push(format!("available_parallelism was {threads}, is {free}"));
    }
    let barrier = Arc::new(Barrier::new(threads + 1));
    let all: Vec<_> = (0..threads)
        .map(|k| {
            let b = barrier.clone();
            thread::Builder::new().spawn(move || {
                b.wait();
                k
            })
        })
        .collect();
    let spawned = all.iter().filter(|h| h.is_ok()).count();
    if spawned == threads {
        barrier.wait();
    } else {
        bad.push(format!("after the soak only {spawned} of {threads} threads could be spawned at once"));
    }
    for h in all.into_iter().flatten() {
        if spawned == threads {
            h.join().expect("thread panicked");
        }
    }
    if spawned != threads {
        // The spawned ones wait on a barrier that will never fill.
        eprintln!("soak: FAILED: {}", bad.join("; "));
        std::process::exit(1);
    }
    let files_left = Path::new(&dir).read_dir().map(|d| d.filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("soak-w")).count()).unwrap_or(0);
    if files_left != 0 {
        bad.push(format!("{files_left} soak files left in {}", dir.display()));
    }
    if !bad.is_empty() {
        eprintln!("soak: FAILED: {}", bad.join("; "));
        std::process::exit(1);
    }
    println!(
        "soak: ok {elapsed:.1} s, {workers} workers, {} iterations, lines={}, messages={received}, locks={locks}, spawns={}, files={} (EMFILE retried {}), heap {} MiB, all {threads} threads free again",
        total.iterations,
        total.lines,
        total.spawns,
        total.files,
        total.emfile,
        total.heap_bytes >> 20
    );
}
