//! Five popular crates the ordinary way: rayon's global pool and a pool of
//! our own, crossbeam-channel with four producers, a parking_lot mutex shared
//! by four threads, serde_json parsing and regex captures. Its output is
//! deterministic, so the GPU run can be compared with the host's.
use std::collections::HashMap;
use std::sync::Arc;
use std::thread;

use parking_lot::Mutex;
use rayon::prelude::*;

fn main() {
    // rayon: the global pool (plain par_iter), then a pool of our own.
    let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
    let long = words.par_iter().filter(|w| w.len() == 4).count();
    println!("rayon: {long} of {} words have 4 characters", words.len());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().expect("a rayon pool");
    let sum: u64 = pool.install(|| (1..=10_000u64).into_par_iter().map(|x| x * x).sum());
    println!("rayon: sum of squares 1..=10000 = {sum}");

    // crossbeam-channel: four producers, one consumer.
    let (tx, rx) = crossbeam_channel::bounded::<(usize, u32)>(16);
    let producers: Vec<_> = (0..4)
        .map(|p| {
            let tx = tx.clone();
            thread::spawn(move || (0..100).for_each(|i| tx.send((p, i)).expect("the consumer is alive")))
        })
        .collect();
    drop(tx);
    let mut per_producer = [0u32; 4];
    let mut total = 0u64;
    for (p, i) in rx.iter() {
        per_producer[p] += 1;
        total += u64::from(i);
    }
    producers.into_iter().for_each(|h| h.join().expect("a producer"));
    println!("crossbeam-channel: {per_producer:?} messages per producer, values sum to {total}");

    // parking_lot: a Mutex<HashMap> shared by four threads.
    let counts = Arc::new(Mutex::new(HashMap::new()));
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let counts = Arc::clone(&counts);
            thread::spawn(move || {
                for i in 0..250 {
                    *counts.lock().entry((i + t) % 10).or_insert(0u32) += 1;
                }
            })
        })
        .collect();
    workers.into_iter().for_each(|h| h.join().expect("a worker"));
    let mut counts: Vec<_> = counts.lock().iter().map(|(k, v)| (*k, *v)).collect();
    counts.sort();
    println!("parking_lot: {counts:?}");

    // serde_json: parse a document and walk it.
    let doc: serde_json::Value = serde_json::from_str(
        r#"{"device": "gpu", "threads": [{"id": 1, "warps": 32}, {"id": 2, "warps": 64}], "ok": true}"#,
    )
    .expect("valid JSON");
    let warps: u64 = doc["threads"].as_array().expect("an array").iter().filter_map(|t| t["warps"].as_u64()).sum();
    println!("serde_json: device={} warps={warps} ok={}", doc["device"], doc["ok"]);

    // regex: captures.
    let re = regex::Regex::new(r"(?P<key>[a-z]+)=(?P<value>\d+)").expect("a valid regex");
    let pairs: Vec<String> =
        re.captures_iter("lanes=32 warps=4224 sms=132").map(|c| format!("{}:{}", &c["key"], &c["value"])).collect();
    println!("regex: {}", pairs.join(" "));
}
