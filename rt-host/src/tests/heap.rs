//! Heap tests on a bare [`Heap`] (no warp cache: `me = None`) and across OS threads.

use std::sync::Arc;
use std::vec::Vec;

use crate::cpu::Cpu32 as H;
use rt_common::heap::{Heap, MAX_ALIGN};
use rt_common::runtime::Runtime;

/// A heap over a fresh host buffer of `bytes` (kept alive by the Vec).
fn heap(bytes: usize) -> (Heap, Vec<u8>) {
    let buf = std::vec![0u8; bytes + MAX_ALIGN];
    let h = Heap::new();
    // SAFETY: the buffer outlives the heap's use in each test.
    unsafe { h.init(buf.as_ptr() as u64, buf.len() as u64) };
    (h, buf)
}

fn in_use(h: &Heap) -> u64 {
    h.bytes_in_use(Runtime::new().slots())
}

#[test]
fn alignment_small_and_large() {
    let (h, _b) = heap(1 << 20);
    let mut align = 1;
    while align <= 4096 {
        for size in [1, align, 3 * align + 1] {
            let p = h.alloc::<H>(None, size, align);
            assert!(!p.is_null(), "size {size} align {align}");
            assert_eq!(p as usize % align, 0, "size {size} align {align}");
            // SAFETY: a fresh block of `size` bytes.
            unsafe { p.write_bytes(0xAB, size) };
        }
        align *= 2;
    }
    // Above 4096 the request takes pages, aligned as asked.
    for align in [8192, 1 << 16] {
        let p = h.alloc::<H>(None, 8, align);
        assert!(!p.is_null() && p as usize % align == 0, "align {align}: {p:?}");
        // SAFETY: from this heap with this layout.
        unsafe { h.dealloc::<H>(None, p, 8, align) };
    }
}

#[test]
fn reuse_after_free() {
    let (h, _b) = heap(1 << 16);
    let p = h.alloc::<H>(None, 40, 8);
    // SAFETY: from this heap with this layout.
    unsafe { h.dealloc::<H>(None, p, 40, 8) };
    let q = h.alloc::<H>(None, 33, 8);
    assert_eq!(p, q, "a freed block of the class is reused");
    assert_eq!(in_use(&h), 64);
}

#[test]
fn realloc_in_place_and_moving() {
    let (h, _b) = heap(1 << 16);
    let p = h.alloc::<H>(None, 20, 4);
    // SAFETY: 20 bytes.
    unsafe { core::ptr::copy_nonoverlapping(b"0123456789abcdefghij".as_ptr(), p, 20) };
    // SAFETY: same layout as allocated; p is replaced by the result.
    let q = unsafe { h.realloc::<H>(None, p, 20, 4, 30) };
    assert_eq!(p, q, "20 -> 30 stays in the 32-byte class");
    // SAFETY: as above.
    let r = unsafe { h.realloc::<H>(None, q, 30, 4, 1000) };
    assert_ne!(r, q);
    // SAFETY: r holds at least 30 bytes copied from q.
    assert_eq!(
        unsafe { core::slice::from_raw_parts(r, 20) },
        b"0123456789abcdefghij"
    );
    // SAFETY: as above.
    let s = unsafe { h.realloc::<H>(None, r, 1000, 4, 10) };
    // SAFETY: s holds 10 bytes.
    assert_eq!(unsafe { core::slice::from_raw_parts(s, 10) }, b"0123456789");
    // SAFETY: as allocated.
    unsafe { h.dealloc::<H>(None, s, 10, 4) };
    assert_eq!(in_use(&h), 0);
}

#[test]
fn out_of_memory_is_null_and_recovers() {
    let (h, _b) = heap(64 << 10);
    let mut blocks = Vec::new();
    loop {
        let p = h.alloc::<H>(None, 1024, 8);
        if p.is_null() {
            break;
        }
        blocks.push(p);
    }
    assert!(blocks.len() >= 60, "{} blocks", blocks.len());
    assert!(h.alloc::<H>(None, 1 << 20, 8).is_null());
    let p = blocks.pop().unwrap();
    // SAFETY: as allocated.
    unsafe { h.dealloc::<H>(None, p, 1024, 8) };
    assert_eq!(
        h.alloc::<H>(None, 1000, 8),
        p,
        "memory is usable again after a free"
    );
}

#[test]
fn concurrent_alloc_free_from_many_threads() {
    let (h, b) = heap(4 << 20);
    let h = Arc::new((h, b));
    let threads: Vec<_> = (0..8u8)
        .map(|t| {
            let h = h.clone();
            std::thread::spawn(move || {
                let heap = &h.0;
                let mut live: Vec<(*mut u8, usize)> = Vec::new();
                for i in 0..20_000usize {
                    let size = 8 + (i * 7 + t as usize * 13) % 600;
                    let p = heap.alloc::<H>(None, size, 8);
                    assert!(!p.is_null());
                    // SAFETY: our block; a pattern that detects sharing.
                    unsafe { p.write_bytes(t, size) };
                    live.push((p, size));
                    if live.len() > 16 {
                        let (q, s) = live.swap_remove(i % live.len());
                        // SAFETY: our block, pattern still intact.
                        assert!(
                            unsafe { core::slice::from_raw_parts(q, s) }
                                .iter()
                                .all(|&x| x == t)
                        );
                        // SAFETY: as allocated.
                        unsafe { heap.dealloc::<H>(None, q, s, 8) };
                    }
                }
                for (q, s) in live {
                    // SAFETY: as allocated.
                    unsafe { heap.dealloc::<H>(None, q, s, 8) };
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(in_use(&h.0), 0);
}

/// A warp's cache: its hot block and own frees come back first; once
/// `cache_limit` own blocks are kept, the next free publishes them all at
/// once, and another warp with an empty cache takes the whole published list
/// before touching fresh memory.
#[test]
fn warp_cache_publishes_full_lists_and_adopts_them() {
    use rt_common::heap::cache_limit;
    use rt_common::slot::Slot;
    let (h, _b) = heap(1 << 20);
    let (a, b) = (Slot::new(), Slot::new());
    let limit = cache_limit(6) as usize; // 64-byte blocks
    let blocks: Vec<_> = (0..limit + 2).map(|_| h.alloc::<H>(Some(&a), 64, 8)).collect();
    // blocks[0] becomes A's hot block, the next `limit` fill its own list.
    for &p in &blocks[..=limit] {
        // SAFETY: from this heap with this layout.
        unsafe { h.dealloc::<H>(Some(&a), p, 64, 8) };
    }
    let again = h.alloc::<H>(Some(&a), 64, 8);
    assert_eq!(again, blocks[0], "the hot block comes back first");
    // SAFETY: as above. The hot block goes back; then A's own list is full,
    // so the next free publishes it.
    unsafe {
        h.dealloc::<H>(Some(&a), again, 64, 8);
        h.dealloc::<H>(Some(&a), blocks[limit + 1], 64, 8);
    }
    // Warp B adopts the published list: `limit` blocks, none fresh.
    let mut taken: Vec<_> = (0..limit).map(|_| h.alloc::<H>(Some(&b), 64, 8) as usize).collect();
    taken.sort_unstable();
    let mut want: Vec<_> = blocks[1..=limit].iter().map(|&p| p as usize).collect();
    want.sort_unstable();
    assert_eq!(taken, want);
    // Then B's cache and the shared list are empty: fresh memory.
    let fresh = h.alloc::<H>(Some(&b), 64, 8);
    assert!(!blocks.contains(&fresh), "{fresh:?} is fresh");
}
