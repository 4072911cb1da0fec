//! The heap's page allocator: address-ordered free extents of whole pages,
//! split on allocation, merged with their neighbours on free.
//!
//! It serves the large requests of [`Heap`](crate::heap::Heap) (first fit
//! from the bottom, so a growing `Vec` at the end of the used pages finds
//! free pages right after it and grows in place) and the chunks the small
//! size classes carve their blocks from (last fit from the top, so small
//! blocks stay within reach of their 32-bit units and away from large ones).
//!
//! The free extents are two bit sets over the pages: `starts` has the first
//! page of every free extent, `ends` its last page. So no header is written
//! into the heap's memory (allocations stay page-aligned, and untouched pages
//! stay untouched), and every question is a bit lookup:
//! - the free extent right after an allocation `[a, a + n)`: `starts[a + n]`,
//!   which ends at the next set bit of `ends`;
//! - the free extent right before it: `ends[a - 1]`, which starts at the
//!   previous set bit of `starts`;
//! - the free extents in address order: the set bits of `starts`.
//!
//! Each set is a [`BitTree`]: 64-bit words, and above them one bit per
//! non-empty word, up to a single word, so the next or previous set bit is
//! found in a few loads at any heap size. Pages are at least 4 KiB and large
//! enough that a set has at most [`MAX_PAGES`] bits (at most ~1 MiB for the
//! pair: 64 KiB pages for a 130 GiB heap).
//!
//! Not thread-safe by itself: the heap calls it under its lock.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Smallest page (the largest alignment of the small classes).
pub const MIN_PAGE_SHIFT: u32 = 12;
/// Most pages a heap is divided into (bits of each set).
pub const MAX_PAGES: u64 = 1 << 22;
/// Levels a [`BitTree`] of [`MAX_PAGES`] bits needs (64^4 ≥ 2^22).
const MAX_LEVELS: usize = 4;

/// A set of `bits` indices: `levels` arrays of words, level 0 one bit per
/// index, level `l + 1` one bit per non-empty word of level `l`. Words are
/// atomics accessed `Relaxed` under the heap's lock (the lock's fences order
/// them), so the CPU harness's threads share them soundly.
#[derive(Clone, Copy, Debug)]
pub struct BitTree {
    /// Address of the first word (level 0; the other levels follow).
    base: u64,
    bits: u64,
    levels: usize,
    /// Word offset and bit count of each level.
    offset: [u64; MAX_LEVELS],
    count: [u64; MAX_LEVELS],
}

impl BitTree {
    pub const fn empty() -> Self {
        BitTree { base: 0, bits: 0, levels: 0, offset: [0; MAX_LEVELS], count: [0; MAX_LEVELS] }
    }

    /// Words a tree of `bits` indices takes.
    pub fn words_for(bits: u64) -> u64 {
        Self::shape(bits).1
    }

    /// Levels' offsets and bit counts, and the total words.
    fn shape(bits: u64) -> (BitTree, u64) {
        let mut t = BitTree::empty();
        t.bits = bits;
        let mut n = bits.max(1);
        let mut words = 0;
        loop {
            t.offset[t.levels] = words;
            t.count[t.levels] = n;
            t.levels += 1;
            let w = n.div_ceil(64);
            words += w;
            if w == 1 || t.levels == MAX_LEVELS {
                break;
            }
            n = w;
        }
        (t, words)
    }

    /// An empty tree of `bits` indices over the words at `base`, which it
    /// zeroes.
    ///
    /// # Safety
    /// `base` is 8-aligned memory of [`BitTree::words_for`]`(bits)` words,
    /// used by nothing else while the tree is.
    pub unsafe fn new(base: u64, bits: u64) -> Self {
        debug_assert!(bits <= MAX_PAGES);
        let (mut t, words) = Self::shape(bits);
        t.base = base;
        for i in 0..words {
            // SAFETY: within the caller's words.
            unsafe { (*((base as usize as *const AtomicU64).add(i as usize))).store(0, Relaxed) };
        }
        t
    }

    #[inline]
    fn word(&self, level: usize, i: u64) -> &AtomicU64 {
        debug_assert!(i < self.count[level].div_ceil(64));
        // SAFETY: level `level` has that many words at its offset (`new`).
        unsafe { &*((self.base as usize as *const AtomicU64).add((self.offset[level] + i) as usize)) }
    }

    /// Whether `i` is in the set.
    pub fn contains(&self, i: u64) -> bool {
        i < self.bits && self.word(0, i / 64).load(Relaxed) & (1 << (i % 64)) != 0
    }

    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn insert(&self, mut i: u64) {
        debug_assert!(i < self.bits);
        for l in 0..self.levels {
            let w = self.word(l, i / 64);
            let old = w.load(Relaxed);
            w.store(old | 1 << (i % 64), Relaxed);
            if old != 0 {
                return; // the levels above already have this word
            }
            i /= 64;
        }
    }

    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn remove(&self, mut i: u64) {
        debug_assert!(self.contains(i));
        for l in 0..self.levels {
            let w = self.word(l, i / 64);
            let new = w.load(Relaxed) & !(1 << (i % 64));
            w.store(new, Relaxed);
            if new != 0 {
                return; // the word is still non-empty above
            }
            i /= 64;
        }
    }

    /// The smallest index in the set that is `≥ i`.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn next(&self, mut i: u64) -> Option<u64> {
        let mut l = 0;
        loop {
            if i >= self.count[l] {
                return None;
            }
            let w = self.word(l, i / 64).load(Relaxed) & (u64::MAX << (i % 64));
            if w != 0 {
                i = i / 64 * 64 + u64::from(w.trailing_zeros());
                break;
            }
            if l + 1 == self.levels {
                return None;
            }
            i = i / 64 + 1;
            l += 1;
        }
        while l > 0 {
            l -= 1;
            i = i * 64 + u64::from(self.word(l, i).load(Relaxed).trailing_zeros());
        }
        Some(i)
    }

    /// The largest index in the set that is `≤ i`.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn prev(&self, i: u64) -> Option<u64> {
        let mut i = i.min(self.bits.checked_sub(1)?);
        let mut l = 0;
        loop {
            let w = self.word(l, i / 64).load(Relaxed) & (u64::MAX >> (63 - i % 64));
            if w != 0 {
                i = i / 64 * 64 + 63 - u64::from(w.leading_zeros());
                break;
            }
            if i < 64 || l + 1 == self.levels {
                return None;
            }
            i = i / 64 - 1;
            l += 1;
        }
        while l > 0 {
            l -= 1;
            i = i * 64 + 63 - u64::from(self.word(l, i).load(Relaxed).leading_zeros());
        }
        Some(i)
    }
}

/// Free extents over `pages` pages of `1 << page_shift` bytes from `base`.
#[derive(Clone, Copy, Debug)]
pub struct Extents {
    pub base: u64,
    pub pages: u64,
    pub page_shift: u32,
    starts: BitTree,
    ends: BitTree,
}

impl Extents {
    pub const fn empty() -> Self {
        Extents { base: 0, pages: 0, page_shift: MIN_PAGE_SHIFT, starts: BitTree::empty(), ends: BitTree::empty() }
    }

    /// Lays out `[base, base + size)` (`base` 8-aligned): the two sets at its
    /// bottom, then whole pages, all free.
    ///
    /// # Safety
    /// The range is memory used by nothing else while the extents are.
    pub unsafe fn new(base: u64, size: u64) -> Self {
        let mut page_shift = MIN_PAGE_SHIFT;
        while size >> page_shift > MAX_PAGES {
            page_shift += 1;
        }
        let max_pages = size >> page_shift;
        let words = BitTree::words_for(max_pages);
        // Pages start page-aligned (so any alignment up to a page is served
        // by every page) after the two sets.
        let first_page = (base + 2 * words * 8).next_multiple_of(1 << page_shift);
        let pages = (base + size).saturating_sub(first_page) >> page_shift;
        if pages == 0 {
            return Extents::empty();
        }
        // SAFETY: both sets are within the caller's range, below the pages.
        let (starts, ends) = unsafe { (BitTree::new(base, pages), BitTree::new(base + words * 8, pages)) };
        let e = Extents { base: first_page, pages, page_shift, starts, ends };
        e.add_free(0, pages - 1);
        e
    }

    #[inline]
    pub fn page_bytes(&self) -> u64 {
        1 << self.page_shift
    }

    /// Pages for `bytes`.
    #[inline]
    pub fn pages_for(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.page_bytes())
    }

    #[inline]
    pub fn addr(&self, page: u64) -> u64 {
        self.base + (page << self.page_shift)
    }

    #[inline]
    pub fn page_of(&self, addr: u64) -> u64 {
        (addr - self.base) >> self.page_shift
    }

    /// The end of the pages (exclusive).
    #[inline]
    pub fn top(&self) -> u64 {
        self.addr(self.pages)
    }

    fn add_free(&self, first: u64, last: u64) {
        self.starts.insert(first);
        self.ends.insert(last);
    }

    fn remove_free(&self, first: u64, last: u64) {
        self.starts.remove(first);
        self.ends.remove(last);
    }

    /// Takes `[a, a + n)` out of the free extent `[first, last]` holding it;
    /// what is left on either side stays free.
    fn take(&self, first: u64, last: u64, a: u64, n: u64) {
        self.remove_free(first, last);
        if a > first {
            self.add_free(first, a - 1);
        }
        if a + n <= last {
            self.add_free(a + n, last);
        }
    }

    /// `n` pages whose address is a multiple of `align`, from the lowest
    /// free extent that holds them (first fit).
    pub fn alloc_low(&self, n: u64, align: u64) -> Option<u64> {
        if n == 0 || n > self.pages {
            return None;
        }
        let mut first = self.starts.next(0)?;
        loop {
            let last = self.ends.next(first)?;
            let a = self.page_of(self.addr(first).checked_next_multiple_of(align)?);
            if let Some(end) = a.checked_add(n - 1)
                && end <= last
            {
                self.take(first, last, a, n);
                return Some(a);
            }
            first = self.starts.next(last + 1)?;
        }
    }

    /// `n` pages from the top of the highest free extent that holds them
    /// (last fit), starting at or above page `lowest`.
    pub fn alloc_high(&self, n: u64, lowest: u64) -> Option<u64> {
        if n == 0 || n > self.pages {
            return None;
        }
        let mut last = self.ends.prev(self.pages - 1)?;
        loop {
            let first = self.starts.prev(last)?;
            let a = (last + 1).checked_sub(n)?;
            if a < lowest {
                return None;
            }
            if a >= first {
                self.take(first, last, a, n);
                return Some(a);
            }
            last = self.ends.prev(first.checked_sub(1)?)?;
        }
    }

    /// Frees `[a, a + n)`, merging it with the free extents on either side.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn free(&self, a: u64, n: u64) {
        debug_assert!(n > 0 && a + n <= self.pages);
        let mut first = a;
        let mut last = a + n - 1;
        if a > 0 && self.ends.contains(a - 1) {
            let before = self.starts.prev(a - 1).expect("a free extent's end has a start");
            self.remove_free(before, a - 1);
            first = before;
        }
        if self.starts.contains(a + n) {
            let after = self.ends.next(a + n).expect("a free extent's start has an end");
            self.remove_free(a + n, after);
            last = after;
        }
        self.add_free(first, last);
    }

    /// Grows the allocation `[a, a + n)` to `m > n` pages in place, if the
    /// pages after it are free.
    pub fn grow(&self, a: u64, n: u64, m: u64) -> bool {
        let next = a + n;
        if !self.starts.contains(next) {
            return false;
        }
        let last = self.ends.next(next).expect("a free extent's start has an end");
        if a.checked_add(m - 1).is_none_or(|end| end > last) {
            return false;
        }
        self.take(next, last, next, m - n);
        true
    }

    /// Pages of the largest free extent.
    pub fn largest_free(&self) -> u64 {
        let mut best = 0;
        let mut at = self.starts.next(0);
        while let Some(first) = at {
            let Some(last) = self.ends.next(first) else { break };
            best = best.max(last - first + 1);
            at = self.starts.next(last + 1);
        }
        best
    }

    /// Free pages in all.
    pub fn free_pages(&self) -> u64 {
        let mut total = 0;
        let mut at = self.starts.next(0);
        while let Some(first) = at {
            let Some(last) = self.ends.next(first) else { break };
            total += last - first + 1;
            at = self.starts.next(last + 1);
        }
        total
    }
}
