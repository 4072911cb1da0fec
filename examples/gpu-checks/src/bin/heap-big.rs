//! Memory for real data, at the default `--heap-size`: a `Vec` of `SIZE`
//! bytes (the first argument, `100G` by default; `K`, `M`, `G` suffixes),
//! every 4 KiB page of it written by many threads and read back; a
//! `try_reserve` of far more than any GPU has, which must return `Err`
//! (not abort, not print); then rounds of odd-sized blocks freed out of
//! order and a `Vec` grown by doubling, which leave a heap that rounds to
//! powers of two and never merges unable to give `SIZE` again; here
//! `SIZE` in one block must fit once more. On the host the same source
//! checks the same things (its allocator is the OS's). `heap-big oom`
//! asks 1 PiB without `try_`: std's out-of-memory abort.
use std::thread;

const PAGE: usize = 4096;
const WORDS_PER_PAGE: usize = PAGE / 8;

fn parse_size(s: &str) -> usize {
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: usize = digits.parse().unwrap_or_else(|_| panic!("heap-big: a size like 100G, not {s:?}"));
    n << shift
}

/// Writes one word per page of `v` (its page's index) from up to `threads`
/// threads, then reads them all back.
fn touch_pages(v: &mut [u64], threads: usize) {
    let pages = v.len() / WORDS_PER_PAGE;
    let per = pages.div_ceil(threads.max(1)).max(1) * WORDS_PER_PAGE;
    thread::scope(|s| {
        for (t, part) in v.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let first = t * per / WORDS_PER_PAGE;
                for (i, page) in part.chunks_mut(WORDS_PER_PAGE).enumerate() {
                    page[0] = (first + i) as u64;
                }
            });
        }
    });
    let bad = thread::scope(|s| {
        let workers: Vec<_> = v
            .chunks(per)
            .enumerate()
            .map(|(t, part)| {
                s.spawn(move || {
                    let first = t * per / WORDS_PER_PAGE;
                    part.chunks(WORDS_PER_PAGE).enumerate().filter(|(i, page)| page[0] != (first + i) as u64).count()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum::<usize>()
    });
    assert_eq!(bad, 0, "heap-big: {bad} of {pages} pages read back wrong");
}

/// A zero-length `Vec` of `bytes` capacity, its first and last words written.
fn block(bytes: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(bytes / 8);
    v.push(1);
    let cap = v.capacity();
    // SAFETY: within the capacity; the words between stay unread.
    unsafe {
        v.as_mut_ptr().add(cap - 1).write(2);
    }
    v
}

fn main() {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("oom") {
        // Not `try_`: std's out-of-memory message, then the runtime's line
        // naming the heap's size and `--heap-size`; exit 134.
        let v: Vec<u8> = Vec::with_capacity(1 << 50);
        println!("heap-big: 1 PiB allocated?! {:p}", v.as_ptr());
        return;
    }
    let size = arg.map_or(100 << 30, |a| parse_size(&a));
    let threads = thread::available_parallelism().map_or(1, |n| n.get()).min(1024);

    // 1. One Vec of `size` bytes, every page written and read back.
    let mut big: Vec<u64> = Vec::new();
    if let Err(e) = std::hint::black_box(&mut big).try_reserve_exact(size / 8) {
        println!("heap-big: a Vec of {size} bytes: {e}");
        std::process::exit(1);
    }
    // SAFETY: u64 has no invalid values; every word read was written first
    // (one per page, and only those are read).
    unsafe { big.set_len(size / 8) };
    touch_pages(&mut big, threads);
    println!("heap-big: {size} bytes in one Vec, {} pages written and read back by {threads} threads", size / PAGE);

    // 2. try_reserve beyond any device: an error value, nothing printed.
    // black_box: LLVM may remove an allocation whose memory is never used,
    // and with it the failure.
    let mut more: Vec<u8> = Vec::new();
    match std::hint::black_box(&mut more).try_reserve(1 << 50) {
        Err(e) => println!("heap-big: try_reserve of 1 PiB: Err ({e})"),
        Ok(()) => panic!("heap-big: try_reserve of 1 PiB succeeded: {:p}", more.as_ptr()),
    }
    drop(big);

    // 3. Odd sizes freed out of order, a Vec doubling, 8 rounds; then the
    //    whole size in one block again.
    let unit = size / 8;
    for _round in 0..8 {
        let mut blocks: Vec<Option<Vec<u64>>> = [3, 1, 2, 1, 1].iter().map(|&u| Some(block(u * unit - 3 * PAGE))).collect();
        for i in [1, 3, 0, 2, 4] {
            blocks[i] = None;
        }
        let mut grown: Vec<u64> = Vec::with_capacity(1 << 17);
        while grown.capacity() * 8 < size / 2 {
            let cap = grown.capacity();
            // Doubles it: the heap grows it in place where the pages after are free.
            grown.reserve_exact(2 * cap - grown.len());
            grown.push(cap as u64);
        }
        drop(grown);
    }
    let again = block(size);
    drop(again);
    println!("heap-big: 8 rounds of odd sizes and doubling, then {size} bytes in one block again");
    println!("heap-big: ok");
}
