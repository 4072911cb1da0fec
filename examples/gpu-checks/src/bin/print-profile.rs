//! Where the time of one `println!` goes on the GPU: formatting (into a
//! `String`, into a byte buffer), the runtime's write (one ring packet,
//! called through the `__gpu_std_*` ABI under std), std's paths around it
//! (`println!` of a constant line and of a formatted one, `stdout()`'s
//! handle) and the flush that waits for the host.
//!
//! Prints one `profile: <what> mean <ns> p50 <ns> p99 <ns>` line per
//! measurement (the lines it times start with `~pp`). A diagnostic, not a
//! benchmark row: `gpurun-dev bench` has the real rows.
//!
//! `print-profile loop format|println N` runs only that operation N times
//! (for Nsight Compute's per-line figures, `scripts/gpu-profile.sh`).
use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;

#[path = "../profile.rs"]
mod profile;
use profile::{now, time};

unsafe extern "C" {
    fn __gpu_std_write(fd: u32, ptr: *const u8, len: usize) -> isize;
    fn __gpu_std_flush();
}

/// A `fmt::Write` that drops what it is given: formatting's own cost.
struct Discard;

impl std::fmt::Write for Discard {
    #[inline(never)]
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        black_box(s);
        Ok(())
    }
}

/// A call with a frame: `black_box` puts `x` in memory (on the thread's
/// stack, which `gpu-ld` keeps in global memory).
#[inline(never)]
fn opaque(x: u64) -> u64 {
    black_box(x).wrapping_mul(3) ^ 1
}

/// The same call without a frame.
#[inline(never)]
fn frameless(x: u64) -> u64 {
    x.wrapping_mul(3) ^ 1
}

/// Ten dependent calls of `f` from `i`: direct for a function item (each
/// is its own type, inlined here), indirect for a `fn` pointer.
#[inline(always)]
fn ten_calls(i: usize, f: impl Fn(u64) -> u64) {
    let mut x = i as u64;
    for _ in 0..10 {
        x = f(x);
    }
    black_box(x);
}

/// The line the println row prints, formatted into `s`.
fn format_line(s: &mut String, i: usize) {
    s.clear();
    write!(s, "~pp format 0 {i}").unwrap();
    black_box(&s);
}

fn raw_write(bytes: &[u8]) {
    // SAFETY: `bytes` is readable for its length during the call.
    let n = unsafe { __gpu_std_write(1, bytes.as_ptr(), bytes.len()) };
    assert!(n >= 0, "the runtime refused the write: {n}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut s = String::with_capacity(256);
    if args.len() == 4 && args[1] == "loop" {
        let n: usize = args[3].parse().expect("N: a count");
        // Chosen once: the loop runs only the operation profiled.
        match args[2].as_str() {
            "format" => (0..n).for_each(|i| format_line(&mut s, i)),
            "println" => (0..n).for_each(|i| println!("~pp println 0 {i}")),
            other => panic!("unknown loop {other:?}: format or println"),
        }
        return;
    }
    time("clock read", |_| {
        black_box(now());
    });
    time("format into a String (\"{i}\")", |i| format_line(&mut s, i));
    time("format into a String (str only)", |_| {
        s.clear();
        write!(s, "~pp format {}", black_box("str")).unwrap();
        black_box(&s);
    });
    time("push_str 13 bytes into a String", |_| {
        s.clear();
        s.push_str(black_box("~pp format 0 "));
        black_box(&s);
    });
    time("format into a String (\"{}\", i only)", |i| {
        s.clear();
        write!(s, "{}", i).unwrap();
        black_box(&s);
    });
    time("format, no writes (\"~pp format 0 {i}\")", |i| {
        std::fmt::write(&mut Discard, format_args!("~pp format 0 {i}")).unwrap();
    });
    time("format, no writes (\"{}{}\", two strs)", |_| {
        std::fmt::write(&mut Discard, format_args!("{}{}", black_box("a"), black_box("b"))).unwrap();
    });
    let f: fn(u64) -> u64 = black_box(opaque);
    time("10 indirect calls", |i| ten_calls(i, f));
    time("10 direct calls", |i| ten_calls(i, opaque));
    time("10 direct calls, no frame", |i| ten_calls(i, frameless));
    let mut buf = [0u8; 256];
    time("format into a [u8; 256] (io::Write)", |i| {
        let mut w = &mut buf[..];
        write!(w, "~pp format 0 {i}").unwrap();
        black_box(&buf);
    });
    time("runtime write, 20 bytes", |_| raw_write(b"~pp raw write 0 123\n"));
    time("runtime write, 100 bytes", |_| {
        raw_write(b"~pp raw write 0 123 ......................................................................... end\n")
    });
    time("runtime flush, nothing pending", |_| {
        // SAFETY: no preconditions.
        unsafe { __gpu_std_flush() }
    });
    time("runtime write + flush", |_| {
        raw_write(b"~pp raw write+flush\n");
        // SAFETY: no preconditions.
        unsafe { __gpu_std_flush() }
    });
    time("println! constant line", |_| println!("~pp println constant"));
    time("println! \"{i}\"", |i| println!("~pp println 0 {i}"));
    time("println! \"{i}\" + flush", |i| {
        println!("~pp println+flush 0 {i}");
        std::io::stdout().flush().unwrap();
    });
    let mut out = std::io::stdout();
    time("stdout().write_all(20 bytes)", |_| out.write_all(b"~pp stdout write 0\n").unwrap());
    println!("profile: done");
}
