//! Where the time of a std spawn + join goes: the runtime's own handoff
//! (called through the `__gpu_std_*` ABI, under std), the heap and `Arc`
//! costs std's spawn path pays, and a std spawn split into its phases by
//! timestamps taken on both warps (the device clock is shared).
//!
//! Prints one `profile: <what> mean <ns> p50 <ns>` line per measurement.
//! A diagnostic, not a benchmark row: `gpurun-dev bench` has the real rows.
use std::hint::black_box;
use std::sync::Arc;

#[path = "../profile.rs"]
mod profile;
use profile::{N, now, report, time};

unsafe extern "C" {
    fn __gpu_std_spawn(
        stack: usize,
        entry: unsafe extern "C" fn(*mut u8),
        data: *mut u8,
        on_detach: Option<unsafe extern "C" fn(*mut u8)>,
    ) -> i64;
    fn __gpu_std_join(handle: i64);
}

unsafe extern "C" fn noop(_: *mut u8) {}

unsafe extern "C" fn stamp_entry(data: *mut u8) {
    // SAFETY: `data` points at the spawner's heap u64, which outlives the join.
    unsafe { *data.cast::<u64>() = now() };
}

fn main() {
    time("clock read", |_| {
        black_box(now());
    });
    time("Box<u64> new+drop", |_| drop(black_box(Box::new(1u64))));
    time("Box<[u8;200]> new+drop", |_| drop(black_box(Box::new([1u8; 200]))));
    time("Arc new+clone+2 drops", |_| {
        let a = Arc::new(1u64);
        let b = a.clone();
        drop(black_box(a));
        drop(black_box(b));
    });
    time("thread::current()", |_| drop(black_box(std::thread::current())));
    time("raw spawn+join (ABI)", |_| {
        // SAFETY: `noop` is sound to run once anywhere.
        let h = unsafe { __gpu_std_spawn(0, noop, std::ptr::null_mut(), None) };
        assert!(h > 0, "raw spawn failed: {h}");
        // SAFETY: `h` is a fresh handle, joined once.
        unsafe { __gpu_std_join(h) };
    });

    // The raw handoff split: spawn call, time to the entry's first
    // instruction, and entry-to-join-return.
    let (mut call, mut start, mut back) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..N + N / 10 {
        // On the heap: a GPU thread's stack is private to it.
        let at = Box::into_raw(Box::new(0u64));
        let t0 = now();
        // SAFETY: `at` outlives the join below.
        let h = unsafe { __gpu_std_spawn(0, stamp_entry, at.cast(), None) };
        let t1 = now();
        // SAFETY: as above.
        unsafe { __gpu_std_join(h) };
        let t2 = now();
        // SAFETY: from Box::into_raw above; the thread is joined.
        let at = *unsafe { Box::from_raw(at) };
        if i >= N / 10 {
            call.push(t1 - t0);
            start.push(at - t0);
            back.push(t2 - at);
        }
    }
    report("raw: spawn call", &mut call);
    report("raw: spawn -> entry runs", &mut start);
    report("raw: entry -> join returns", &mut back);

    time("std spawn+join", |_| std::thread::spawn(|| ()).join().unwrap());

    let (mut call, mut start, mut body, mut back) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..N + N / 10 {
        let t0 = now();
        let h = std::thread::spawn(|| {
            let a = now();
            (a, now())
        });
        let t1 = now();
        let (a, b) = h.join().unwrap();
        let t2 = now();
        if i >= N / 10 {
            call.push(t1 - t0);
            start.push(a - t0);
            body.push(b - a);
            back.push(t2 - b);
        }
    }
    report("std: spawn call", &mut call);
    report("std: spawn -> closure runs", &mut start);
    report("std: clock read in closure", &mut body);
    report("std: closure end -> join", &mut back);

    time("std scope spawn+join", |_| {
        std::thread::scope(|s| {
            s.spawn(|| ());
        })
    });
    println!("profile: done");
}
