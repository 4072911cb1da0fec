//! A diagnostic, not an acceptance check: how fast `std::fs` moves a large
//! file from and to a GPU thread through host calls.
//! `file-throughput PATH MIB` writes MIB MiB to PATH in 1 MiB `write_all`s
//! (then `sync_all`), reads it back in 1 MiB `read_exact`s, checks the
//! bytes, removes the file and prints one line:
//! `file-throughput: MIB MiB, write W MB/s, read R MB/s, equal true`.
//! `scripts/gpu-file-io.sh` compares it with the host's `cp` of the file.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::time::Instant;

fn block(i: usize) -> Vec<u8> {
    (0..1 << 20).map(|j| (j as u32).wrapping_mul(2_654_435_761).wrapping_add(i as u32) as u8).collect()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(mib)) = (args.get(1), args.get(2).and_then(|m| m.parse::<usize>().ok())) else {
        eprintln!("usage: file-throughput PATH MIB");
        std::process::exit(2);
    };
    let blocks: Vec<Vec<u8>> = (0..4).map(block).collect();
    let start = Instant::now();
    let mut f = File::create(path)?;
    for i in 0..mib {
        f.write_all(&blocks[i % 4])?;
    }
    f.sync_all()?;
    drop(f);
    let write_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut equal = true;
    for i in 0..mib {
        f.read_exact(&mut buf)?;
        equal &= buf == blocks[i % 4];
    }
    let read_s = start.elapsed().as_secs_f64();
    fs::remove_file(path)?;
    let mb = (mib << 20) as f64 / 1e6;
    println!("file-throughput: {mib} MiB, write {:.1} MB/s, read {:.1} MB/s, equal {equal}", mb / write_s, mb / read_s);
    Ok(())
}
