//! The heap's page allocator (`rt_common::extents`) and its large blocks:
//! the bit sets against a reference, split, merge, `realloc` in place, a
//! pattern that fragments a power-of-two heap, many threads at once with a
//! checker that no two live blocks overlap, and a heap above 64 GiB.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::vec::Vec;

use crate::cpu::Cpu32 as H;
use rt_common::extents::BitTree;
use rt_common::heap::Heap;
use rt_common::process::splitmix64;
use rt_common::runtime::Runtime;

const MIB: usize = 1 << 20;

/// A heap over a fresh host buffer of `bytes` (kept alive by the Vec).
fn heap(bytes: usize) -> (Heap, Vec<u64>) {
    let buf = std::vec![0u64; bytes / 8];
    let h = Heap::new();
    // SAFETY: the buffer outlives the heap's use in each test.
    unsafe { h.init(buf.as_ptr() as u64, bytes as u64) };
    (h, buf)
}

fn in_use(h: &Heap) -> u64 {
    h.bytes_in_use(Runtime::new().slots())
}

/// Every page free again: one extent holding them all.
fn assert_all_free(h: &Heap) {
    let s = h.stats::<H>();
    assert_eq!(s.largest_free, s.free, "the free pages are one extent again: {s:?}");
    assert_eq!(in_use(h), 0);
}

#[test]
fn bit_tree_finds_next_and_prev_like_a_sorted_set() {
    for bits in [1u64, 63, 64, 65, 4097, 300_000] {
        let mut words = std::vec![0u64; BitTree::words_for(bits) as usize];
        // SAFETY: the words are ours and sized for `bits`.
        let t = unsafe { BitTree::new(words.as_mut_ptr() as u64, bits) };
        let mut set = BTreeSet::new();
        let mut r = bits;
        for _ in 0..2000 {
            r = splitmix64(r);
            let i = r % bits;
            if set.contains(&i) {
                t.remove(i);
                set.remove(&i);
            } else {
                t.insert(i);
                set.insert(i);
            }
            let q = splitmix64(r) % bits;
            assert_eq!(t.next(q), set.range(q..).next().copied(), "next({q}) of {bits}");
            assert_eq!(t.prev(q), set.range(..=q).next_back().copied(), "prev({q}) of {bits}");
            assert_eq!(t.contains(q), set.contains(&q));
        }
        assert_eq!(t.next(bits), None);
    }
}

#[test]
fn large_blocks_split_and_merge() {
    let (h, _b) = heap(64 * MIB);
    let page = {
        let p = h.alloc::<H>(None, 40_000, 8);
        let q = h.alloc::<H>(None, 40_000, 8);
        // SAFETY: from this heap with this layout.
        unsafe { h.dealloc::<H>(None, p, 40_000, 8) };
        // SAFETY: as above.
        unsafe { h.dealloc::<H>(None, q, 40_000, 8) };
        q as usize - p as usize
    };
    assert_eq!(page, 40 << 10, "40,000 bytes take ten 4 KiB pages, first fit");
    let [a, b, c] = [0; 3].map(|_| h.alloc::<H>(None, MIB, 8));
    assert_eq!((b as usize - a as usize, c as usize - b as usize), (MIB, MIB), "first fit from the bottom");
    // SAFETY: from this heap with this layout (each block below likewise).
    unsafe { h.dealloc::<H>(None, b, MIB, 8) };
    // A block that fits in b's hole takes it (split: the rest stays free).
    let d = h.alloc::<H>(None, MIB / 2, 8);
    assert_eq!(d, b);
    // SAFETY: as above.
    unsafe { h.dealloc::<H>(None, a, MIB, 8) };
    // SAFETY: as above.
    unsafe { h.dealloc::<H>(None, d, MIB / 2, 8) };
    // a, d and the rest of b merged: 2 MiB fit where a was.
    let e = h.alloc::<H>(None, 2 * MIB, 8);
    assert_eq!(e, a, "freed neighbours merge");
    // SAFETY: as above.
    unsafe {
        h.dealloc::<H>(None, c, MIB, 8);
        h.dealloc::<H>(None, e, 2 * MIB, 8);
    }
    assert_all_free(&h);
}

#[test]
fn realloc_grows_and_shrinks_in_place() {
    let (h, _b) = heap(64 * MIB);
    // A Vec's doubling: every step finds the pages after it free.
    let mut size = 64 << 10;
    let p = h.alloc::<H>(None, size, 8);
    // SAFETY: our block.
    unsafe { p.write_bytes(7, size) };
    while size < 16 * MIB {
        // SAFETY: from this heap with this layout.
        let q = unsafe { h.realloc::<H>(None, p, size, 8, size * 2) };
        assert_eq!(q, p, "{size} -> {}: grown in place", size * 2);
        size *= 2;
    }
    // SAFETY: the first 64 KiB were written and kept.
    assert!(unsafe { core::slice::from_raw_parts(p, 64 << 10) }.iter().all(|&x| x == 7));
    // Shrinking gives the tail back: the next block starts right after.
    // SAFETY: as above.
    let q = unsafe { h.realloc::<H>(None, p, size, 8, MIB) };
    assert_eq!(q, p);
    let after = h.alloc::<H>(None, MIB, 8);
    assert_eq!(after as usize, p as usize + MIB);
    // Now it cannot grow in place: it moves, with its contents.
    // SAFETY: as above.
    let moved = unsafe { h.realloc::<H>(None, p, MIB, 8, 4 * MIB) };
    assert!(!moved.is_null() && moved != p);
    // SAFETY: 64 KiB copied.
    assert!(unsafe { core::slice::from_raw_parts(moved, 64 << 10) }.iter().all(|&x| x == 7));
    // Between small and large the block moves too, contents kept.
    // SAFETY: as above.
    let small = unsafe { h.realloc::<H>(None, moved, 4 * MIB, 8, 100) };
    // SAFETY: 100 bytes copied.
    assert!(unsafe { core::slice::from_raw_parts(small, 100) }.iter().all(|&x| x == 7));
    // SAFETY: as above.
    unsafe {
        h.dealloc::<H>(None, small, 100, 8);
        h.dealloc::<H>(None, after, MIB, 8);
    }
    assert_eq!(h.stats::<H>().largest_free, h.stats::<H>().free);
}

/// Blocks of odd sizes allocated and freed in a mixed order, then one block
/// of nearly the whole heap: a power-of-two heap that never merges has no
/// block that large left (its 64 MiB heap holds no 48 MiB class at all).
#[test]
fn fragmenting_cycles_leave_one_extent() {
    let (h, _b) = heap(64 * MIB);
    let mut r = 42u64;
    for round in 0..20 {
        let mut live = Vec::new();
        loop {
            r = splitmix64(r);
            let size = 40_000 + (r % (3 * MIB as u64)) as usize;
            let p = h.alloc::<H>(None, size, 8);
            if p.is_null() {
                break;
            }
            live.push((p, size));
        }
        assert!(live.len() > 20, "round {round}: {} blocks", live.len());
        // Every other one first, then the rest in reverse.
        let (even, odd): (Vec<_>, Vec<_>) = live.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        for (_, &(p, s)) in even.into_iter().chain(odd.into_iter().rev()) {
            // SAFETY: from this heap with this layout.
            unsafe { h.dealloc::<H>(None, p, s, 8) };
        }
        assert_all_free(&h);
        let big = 48 * MIB;
        let p = h.alloc::<H>(None, big, 8);
        assert!(!p.is_null(), "round {round}: 48 MiB after fragmenting");
        // SAFETY: as above.
        unsafe { h.dealloc::<H>(None, p, big, 8) };
    }
}

/// Live blocks, by start: a new one must not overlap any.
#[derive(Default)]
struct Checker(Mutex<BTreeMap<usize, usize>>);

impl Checker {
    fn add(&self, p: *mut u8, size: usize) {
        let (start, end) = (p as usize, p as usize + size.max(1));
        let mut m = self.0.lock().unwrap();
        if let Some((&s, &e)) = m.range(..end).next_back() {
            assert!(e <= start || s >= end, "[{start:#x}, {end:#x}) overlaps live [{s:#x}, {e:#x})");
        }
        m.insert(start, end);
    }

    fn remove(&self, p: *mut u8) {
        assert!(self.0.lock().unwrap().remove(&(p as usize)).is_some());
    }
}

#[test]
fn many_threads_large_and_small_never_overlap() {
    let (h, b) = heap(256 * MIB);
    let shared = Arc::new((h, b, Checker::default()));
    let threads: Vec<_> = (0..8u8)
        .map(|t| {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let (heap, _, check) = &*shared;
                let mut live: Vec<(*mut u8, usize)> = Vec::new();
                let mut r = u64::from(t) + 1;
                for i in 0..3000usize {
                    r = splitmix64(r);
                    let size = match r % 4 {
                        0 => (r >> 8) as usize % 512 + 1,
                        1 => (r >> 8) as usize % (64 << 10) + 1,
                        _ => (r >> 8) as usize % (2 * MIB) + 1,
                    };
                    let p = heap.alloc::<H>(None, size, 8);
                    if p.is_null() {
                        continue; // full for now: the others free theirs
                    }
                    check.add(p, size);
                    // SAFETY: our block; a pattern that detects sharing.
                    unsafe { p.write_bytes(t, size.min(4096)) };
                    live.push((p, size));
                    if live.len() > 8 || i % 3 == 0 {
                        let (q, s) = live.swap_remove((r >> 40) as usize % live.len());
                        // SAFETY: our block, pattern still intact.
                        assert!(unsafe { core::slice::from_raw_parts(q, s.min(4096)) }.iter().all(|&x| x == t));
                        check.remove(q);
                        if r % 5 == 0 {
                            // Resized: grown or shrunk in place, or moved.
                            let n = (r >> 20) as usize % (3 * MIB) + 1;
                            // SAFETY: from this heap with this layout.
                            let q2 = unsafe { heap.realloc::<H>(None, q, s, 8, n) };
                            if q2.is_null() {
                                check.add(q, s);
                                live.push((q, s));
                            } else {
                                check.add(q2, n);
                                // SAFETY: the copied prefix is ours.
                                assert!(unsafe { core::slice::from_raw_parts(q2, s.min(n).min(4096)) }.iter().all(|&x| x == t));
                                // SAFETY: our block.
                                unsafe { q2.write_bytes(t, n.min(4096)) };
                                live.push((q2, n));
                            }
                        } else {
                            // SAFETY: from this heap with this layout.
                            unsafe { heap.dealloc::<H>(None, q, s, 8) };
                        }
                    }
                }
                for (q, s) in live {
                    check.remove(q);
                    // SAFETY: from this heap with this layout.
                    unsafe { heap.dealloc::<H>(None, q, s, 8) };
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(in_use(&shared.0), 0);
    // Small blocks' chunks stay with the small classes (taken from the top,
    // or lower when large blocks filled it); the rest merged.
    let s = shared.0.stats::<H>();
    assert!(s.largest_free >= 16 << 20 && s.free >= 200 << 20, "{s:?}");
    let p = shared.0.alloc::<H>(None, s.largest_free as usize, 8);
    assert!(!p.is_null(), "the largest free extent is free: {s:?}");
}

#[test]
fn out_of_memory_stats_name_the_largest_free_extent() {
    let (h, _b) = heap(16 * MIB);
    let s = h.stats::<H>();
    assert_eq!(s.size, 16 * MIB as u64);
    assert!(s.largest_free > 15 * MIB as u64 && s.largest_free == s.free, "{s:?}");
    let a = h.alloc::<H>(None, 6 * MIB, 8);
    let b = h.alloc::<H>(None, 4 * MIB, 8);
    // SAFETY: from this heap with this layout.
    unsafe { h.dealloc::<H>(None, a, 6 * MIB, 8) };
    let s = h.stats::<H>();
    assert!(s.free > 11 * MIB as u64, "{s:?}");
    assert_eq!(s.largest_free, 6 * MIB as u64, "{s:?}");
    assert!(h.alloc::<H>(None, 7 * MIB, 8).is_null(), "no extent of 7 MiB");
    // SAFETY: as above.
    unsafe { h.dealloc::<H>(None, b, 4 * MIB, 8) };
    assert!(!h.alloc::<H>(None, 15 * MIB, 8).is_null());
}

/// A heap of 160 GiB of address space (reserved, not committed): a 100 GiB
/// block fits, and small blocks still work above it (their 32-bit units
/// count from the top).
#[test]
fn a_100_gib_block_in_a_160_gib_heap() {
    const GIB: usize = 1 << 30;
    let bytes = 160 * GIB;
    // SAFETY: a fresh private mapping; nothing else refers to it.
    let base = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        println!("skipped: this host refused a 160 GiB MAP_NORESERVE mapping");
        return;
    }
    let h = Heap::new();
    // SAFETY: the mapping outlives the heap's use; unmapped at the end.
    unsafe { h.init(base as u64, bytes as u64) };
    let big = h.alloc::<H>(None, 100 * GIB, 4096);
    assert!(!big.is_null());
    // SAFETY: the block's first and last bytes.
    unsafe {
        big.write(1);
        big.add(100 * GIB - 1).write(2);
    }
    let small: Vec<_> = (0..1000).map(|i| h.alloc::<H>(None, 16 + i % 200, 8)).collect();
    for &p in &small {
        assert!(p as usize >= big as usize + 100 * GIB, "small blocks come from the top");
        // SAFETY: a fresh block of at least 16 bytes.
        unsafe { p.write_bytes(3, 16) };
    }
    // SAFETY: from this heap with this layout.
    unsafe { h.dealloc::<H>(None, big, 100 * GIB, 4096) };
    let s = h.stats::<H>();
    assert!(s.largest_free > 150 * GIB as u64, "{s:?}");
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(base, bytes) };
}

#[test]
fn far_too_large_is_null() {
    let (h, _b) = heap(16 * MIB);
    for bytes in [1usize << 50, 1 << 40, usize::MAX / 2, usize::MAX] {
        for align in [1, 8, 4096, 1 << 16] {
            assert!(h.alloc::<H>(None, bytes, align).is_null(), "{bytes} bytes, align {align}");
        }
    }
}
