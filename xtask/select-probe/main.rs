//! crossbeam-channel's golang `test_select_stress` under a watchdog that
//! prints the patched crate's counters each second (xtask/select-probe/README.md).
//! Usage: xbstress full|pair [N] [SECS].
use crossbeam_channel::{bounded, Receiver, Select, Sender};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

static DONE: [AtomicUsize; 10] = [const { AtomicUsize::new(0) }; 10];

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "full".into());
    let n: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(10000);
    let secs: u64 = std::env::args().nth(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let caps: &[usize] = if mode == "pair" { &[0, 0] } else { &[0, 0, 2, 3] };
    let k = caps.len();
    let chans: Vec<(Sender<i32>, Receiver<i32>)> = caps.iter().map(|&c| bounded(c)).collect();
    let chans = Arc::new(chans);
    let t0 = Instant::now();
    thread::spawn(move || {
        for s in 1..=secs {
            thread::sleep(Duration::from_secs(1));
            let d: Vec<usize> = DONE.iter().map(|a| a.load(Relaxed)).collect();
            println!("{s:>3}s counters [loops, wait_ready spins, parks, aborts, waiting checks] {:?} progress {:?}", crossbeam_channel::dbg_counts(), d);
        }
        println!("HANG after {secs}s");
        std::process::exit(3);
    });
    let mut hs = Vec::new();
    if mode == "full" {
        for i in 0..k {
            let c = chans.clone();
            hs.push(thread::spawn(move || { for _ in 0..n { c[i].0.send(0).unwrap(); DONE[i].fetch_add(1, Relaxed); } }));
            let c = chans.clone();
            hs.push(thread::spawn(move || { for _ in 0..n { c[i].1.recv().unwrap(); DONE[4 + i].fetch_add(1, Relaxed); } }));
        }
    }
    let c = chans.clone();
    hs.push(thread::spawn(move || {
        let mut cnt = vec![0; k];
        let mut live: Vec<Option<Receiver<i32>>> = c.iter().map(|c| Some(c.1.clone())).collect();
        for _ in 0..k * n {
            let mut sel = Select::new();
            let mut opers = vec![!0; k];
            for i in (0..k).rev() { if let Some(r) = &live[i] { opers[i] = sel.recv(r); } }
            let oper = sel.select();
            let i = opers.iter().position(|&o| o == oper.index()).unwrap();
            let _ = oper.recv(live[i].as_ref().unwrap());
            cnt[i] += 1;
            if cnt[i] == n { live[i] = None; }
            DONE[8].fetch_add(1, Relaxed);
        }
    }));
    let c = chans.clone();
    hs.push(thread::spawn(move || {
        let mut cnt = vec![0; k];
        let mut live: Vec<Option<Sender<i32>>> = c.iter().map(|c| Some(c.0.clone())).collect();
        for _ in 0..k * n {
            let mut sel = Select::new();
            let mut opers = vec![!0; k];
            for i in 0..k { if let Some(s) = &live[i] { opers[i] = sel.send(s); } }
            let oper = sel.select();
            let i = opers.iter().position(|&o| o == oper.index()).unwrap();
            let _ = oper.send(live[i].as_ref().unwrap(), 0);
            cnt[i] += 1;
            if cnt[i] == n { live[i] = None; }
            DONE[9].fetch_add(1, Relaxed);
        }
    }));
    for h in hs { h.join().unwrap(); }
    println!("{mode} n={n}: done in {:?}; counters {:?}", t0.elapsed(), crossbeam_channel::dbg_counts());
}
