//! The device heap over `[heap_base, heap_base + heap_size)`.
//!
//! Two allocators share it:
//!
//! - **Small blocks** (`max(size, align)` up to [`SMALL_MAX`], 32 KiB):
//!   power-of-two size classes (16 B up); a block of class `k` is `2^k`
//!   bytes, aligned to `min(2^k, 4096)`. No per-block header: `dealloc` gets
//!   the layout back and recomputes the class.
//!   - Per-warp cache (fast path, no atomics) for classes up to
//!     [`CACHED_CLASSES`] (16 B ..= 1 KiB), in the warp's private state
//!     ([`WarpPrivate`](crate::slot::WarpPrivate): shared memory on NVIDIA):
//!     - `hot`: one block, taken and put without touching the block itself
//!       (a free followed by an alloc of the class costs two slot accesses);
//!     - `own`: blocks this warp freed, a list with a known tail and count;
//!       once it holds [`cache_limit`] blocks, the next free publishes the
//!       whole list to the class's shared list with one CAS;
//!     - `adopted`: a whole shared list taken with one `swap` when `own` and
//!       `adopted` are both empty.
//!     The cache belongs to the warp, not the thread: it is kept when a
//!     thread ends, so the next thread on the warp (spawn reuses the warp it
//!     just joined) allocates without atomics. Memory in a warp's cache is
//!     free but usable only by that warp: at most `cache_limit` own blocks
//!     per class, plus whatever it adopted.
//!   - Per-class shared free list: head = `tag << 32 | unit`, `unit` the
//!     block's distance below the top of the heap's pages in 16-byte units
//!     (0 = empty). The link to the next block is stored in the free block's
//!     first 4 bytes. Warps push chains and take whole lists; callers without
//!     a slot (and uncached classes) pop single blocks. The tag changes on
//!     every successful CAS, so a stale head never matches (ABA).
//!   - Fresh blocks are carved downwards from a *chunk* (one CAS on
//!     [`Heap::chunk`]); an empty chunk is replaced by pages from the top of
//!     the page allocator, under the lock. Chunks are never given back:
//!     small blocks are reused through the lists. 32-bit units reach the top
//!     64 GiB of the heap, where chunks are taken.
//! - **Large blocks** (above 32 KiB, or aligned above 4096): whole pages of
//!   the page allocator ([`crate::extents`]: address-ordered free extents,
//!   split on allocation and merged on free; pages of 4 KiB, larger in heaps
//!   above 16 GiB), first fit from the bottom, under the heap's lock. A
//!   `realloc` that grows takes the free pages right after the block where
//!   there are some (a `Vec` that doubles is not copied), and one that
//!   shrinks gives back the pages past the new end.
//!
//! The lock is a word taken with a CAS and the runtime's [`Backoff`]: large
//! allocations are rare and touching their memory costs far more than the
//! lock. Its ordering: the holder's writes (the page sets, and before a
//! free its last use of the pages) come before its release fence and the
//! store of 0; the next holder's CAS reads that store, and its acquire fence
//! follows, so they happen-before everything it does with them.
//!
//! Out of memory is a null pointer; [`Heap::stats`] says how large the heap
//! is and its largest free extent, for the out-of-memory message.

use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::backoff::Backoff;
use crate::extents::Extents;
use crate::hal::Hal;
use crate::slot::{CACHED_CLASSES, ClassCache, Slot};

/// Smallest class: 16-byte blocks.
pub const MIN_CLASS: u32 = 4;
/// Largest small class: 32 KiB; larger requests take whole pages.
pub const MAX_CLASS: u32 = 15;
/// Bytes of the largest small class.
pub const SMALL_MAX: usize = 1 << MAX_CLASS;
/// Number of small classes (16 B ..= 32 KiB).
pub const NUM_CLASSES: usize = (MAX_CLASS - MIN_CLASS + 1) as usize;
/// Largest alignment of a small block (larger ones are served by pages).
pub const MAX_ALIGN: usize = 4096;
const UNIT_SHIFT: u32 = 4;
/// Bytes below the top of the pages that 32-bit units reach.
const UNIT_REACH: u64 = (u32::MAX as u64) << UNIT_SHIFT;
/// A chunk for small blocks: at most this, and at most 1/64 of the heap.
const CHUNK_BYTES: u64 = 1 << 20;
/// Longest sleep of a warp waiting for the heap's lock.
const LOCK_SLEEP_NS: u32 = 1000;

/// What `init` sets: the pages and the chunks' placement.
#[derive(Clone, Copy)]
struct Layout {
    /// The end of the pages, which small blocks' units count down from
    /// (kept apart: one load on every allocation and free).
    top: u64,
    /// Heap bytes in all (as the launch gave them).
    size: u64,
    pages: Extents,
    /// Pages of a chunk.
    chunk_pages: u64,
    /// Lowest page a chunk may start at (units reach from the top).
    chunk_floor: u64,
}

/// How large the heap is and how much of it a request could get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapStats {
    /// The heap's bytes, as the launch gave them (`--heap-size`).
    pub size: u64,
    /// Bytes of the largest free extent: the largest large block that fits.
    pub largest_free: u64,
    /// Bytes of all free pages.
    pub free: u64,
}

/// Heap state: valid after [`Heap::init`] (warp 0, before `main`).
pub struct Heap {
    /// Written by `init` only.
    layout: UnsafeCell<Layout>,
    /// The heap's lock (0 free, 1 held): the page allocator and chunk changes.
    lock: AtomicU32,
    /// The current chunk of small blocks: `first page << 32 | bytes`, its
    /// blocks carved from the top down, `bytes` below the last one carved.
    chunk: AtomicU64,
    /// Bytes of small blocks carved so far.
    small_bytes: AtomicU64,
    /// Pages held by large blocks (written under the lock).
    large_pages: AtomicU64,
    lists: [AtomicU64; NUM_CLASSES],
}

// SAFETY: `layout` is written only by `init` (before any other warp uses the
// heap); the page sets it points to are used under the lock; everything
// else is atomic.
unsafe impl Sync for Heap {}

/// Class index for a small request, or `None` if it takes pages (or cannot
/// be served).
#[inline]
pub fn class_of(size: usize, align: usize) -> Option<u32> {
    if align > MAX_ALIGN {
        return None;
    }
    let bytes = size
        .max(align)
        .max(1 << MIN_CLASS)
        .checked_next_power_of_two()?;
    let k = bytes.trailing_zeros();
    (k <= MAX_CLASS).then_some(k)
}

impl Heap {
    pub const fn new() -> Self {
        Heap {
            layout: UnsafeCell::new(Layout { top: 0, size: 0, pages: Extents::empty(), chunk_pages: 1, chunk_floor: 0 }),
            lock: AtomicU32::new(0),
            chunk: AtomicU64::new(0),
            small_bytes: AtomicU64::new(0),
            large_pages: AtomicU64::new(0),
            lists: [const { AtomicU64::new(0) }; NUM_CLASSES],
        }
    }

    /// Resets the heap to `[base, base + size)`; the page allocator's sets
    /// go at its bottom (at most ~1 MiB, zeroed here).
    ///
    /// # Safety
    /// No other warp uses the heap concurrently; the range is valid device
    /// memory for the whole program.
    pub unsafe fn init(&self, base: u64, size: u64) {
        let aligned = base.next_multiple_of(8);
        let pages = if base == 0 || size <= aligned - base {
            Extents::empty()
        } else {
            // SAFETY: the caller's range, which nothing else uses.
            unsafe { Extents::new(aligned, size - (aligned - base)) }
        };
        let chunk_pages = ((pages.pages << pages.page_shift) / 64).min(CHUNK_BYTES) >> pages.page_shift;
        let layout = Layout {
            top: pages.top(),
            size,
            pages,
            chunk_pages: chunk_pages.max(1),
            chunk_floor: pages.pages.saturating_sub(UNIT_REACH >> pages.page_shift),
        };
        // SAFETY: exclusive access (caller).
        unsafe { *self.layout.get() = layout };
        self.lock.store(0, Relaxed);
        self.chunk.store(0, Relaxed);
        self.small_bytes.store(0, Relaxed);
        self.large_pages.store(0, Relaxed);
        for l in &self.lists {
            l.store(0, Relaxed);
        }
    }

    #[inline]
    fn layout(&self) -> &Layout {
        // SAFETY: written only by `init`, which happens-before every use.
        unsafe { &*self.layout.get() }
    }

    #[inline]
    fn block(&self, unit: u32) -> *mut u8 {
        (self.layout().top - ((unit as u64) << UNIT_SHIFT)) as usize as *mut u8
    }

    #[inline]
    fn unit_of(&self, p: *mut u8) -> u32 {
        ((self.layout().top - p as usize as u64) >> UNIT_SHIFT) as u32
    }

    /// The free-list link stored in a free block.
    #[inline]
    fn link(&self, unit: u32) -> &AtomicU32 {
        // SAFETY: `unit` names a block of the heap (≥ 16 bytes, 16-aligned);
        // the link is only accessed atomically. A block popped meanwhile by
        // another warp may be written concurrently by its new owner: the
        // value read is then garbage, and the tagged CAS fails.
        unsafe { &*(self.block(unit) as *const AtomicU32) }
    }

    /// Runs `f` on the page allocator with the heap's lock held.
    fn locked<H: Hal, R>(&self, f: impl FnOnce(&Extents) -> R) -> R {
        let mut backoff = Backoff::new(LOCK_SLEEP_NS);
        while self.lock.compare_exchange_weak(0, 1, Relaxed, Relaxed).is_err() {
            backoff.snooze::<H>();
        }
        // Acquire: the last holder's writes (before its release) are visible.
        H::fence_device_acquire();
        let r = f(&self.layout().pages);
        // Release: our writes before the store that lets the next holder in.
        H::fence_device_release();
        self.lock.store(0, Relaxed);
        r
    }

    fn pop<H: Hal>(&self, k: u32) -> Option<u32> {
        let list = &self.lists[(k - MIN_CLASS) as usize];
        let mut head = list.load(Relaxed);
        loop {
            let unit = head as u32;
            if unit == 0 {
                return None;
            }
            // Acquire: the pusher's link write (and its use of the block)
            // happen-before our read of the link and our use of the block.
            H::fence_device_acquire();
            let next = self.link(unit).load(Relaxed);
            let new = ((head >> 32).wrapping_add(1) << 32) | next as u64;
            match list.compare_exchange_weak(head, new, Relaxed, Relaxed) {
                Ok(_) => return Some(unit),
                Err(h) => head = h,
            }
        }
    }

    /// Empties the shared list of class `k`, returning its first block (the
    /// rest linked from it), or `None` if it was empty. A CAS, not a swap,
    /// so the tag still changes and a concurrent `pop` cannot be fooled.
    fn take_all<H: Hal>(&self, k: u32) -> Option<u32> {
        let list = &self.lists[(k - MIN_CLASS) as usize];
        let mut head = list.load(Relaxed);
        loop {
            if head as u32 == 0 {
                return None;
            }
            let new = (head >> 32).wrapping_add(1) << 32;
            match list.compare_exchange_weak(head, new, Relaxed, Relaxed) {
                Ok(_) => break,
                Err(h) => head = h,
            }
        }
        // Acquire: the pushers' links (and their last use of the blocks)
        // happen-before we read and reuse them.
        H::fence_device_acquire();
        Some(head as u32)
    }

    /// Pushes the chain `first ..= last` (linked through the blocks) onto
    /// the shared list of class `k`.
    ///
    /// Out of line: a free takes this path only for a class the warps do
    /// not cache or when its cache is full, and inlined its loop was copied
    /// into each of the program's frees (48 in hello-threads).
    #[inline(never)]
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    fn push_chain<H: Hal>(&self, k: u32, first: u32, last: u32) {
        let list = &self.lists[(k - MIN_CLASS) as usize];
        let mut head = list.load(Relaxed);
        loop {
            self.link(last).store(head as u32, Relaxed);
            // Release: the links (and our last use of the blocks) before the
            // head that publishes them.
            H::fence_device_release();
            let new = ((head >> 32).wrapping_add(1) << 32) | first as u64;
            match list.compare_exchange_weak(head, new, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(h) => head = h,
            }
        }
    }

    /// A fresh block of class `k`, carved from the current chunk (a new
    /// one when it is used up).
    fn carve<H: Hal>(&self, k: u32) -> Option<u32> {
        let bytes = 1u64 << k;
        let align = bytes.min(MAX_ALIGN as u64);
        let mut cur = self.chunk.load(Relaxed);
        loop {
            let (page, left) = (cur >> 32, cur & u64::from(u32::MAX));
            if left < bytes {
                cur = self.next_chunk::<H>(cur, bytes)?;
                continue;
            }
            // Chunks start page-aligned, so an aligned offset is an aligned address.
            let at = (left - bytes) & !(align - 1);
            // Relaxed: fresh memory carries no data to publish.
            match self.chunk.compare_exchange_weak(cur, page << 32 | at, Relaxed, Relaxed) {
                Ok(_) => {
                    self.small_bytes.fetch_add(bytes, Relaxed);
                    return Some(self.unit_of((self.layout().pages.addr(page) + at) as usize as *mut u8));
                }
                Err(c) => cur = c,
            }
        }
    }

    /// Replaces the chunk `seen` (too small for `bytes`) with fresh pages
    /// from the top of the page allocator, unless another warp replaced it
    /// first; the chunk now current, or `None` when no pages are left. What
    /// was left of the old chunk stays unused.
    #[cold]
    fn next_chunk<H: Hal>(&self, seen: u64, bytes: u64) -> Option<u64> {
        let l = self.layout();
        self.locked::<H, _>(|pages| {
            let now = self.chunk.load(Relaxed);
            if now != seen {
                return Some(now);
            }
            let need = pages.pages_for(bytes);
            let page = pages
                .alloc_high(l.chunk_pages.max(need), l.chunk_floor)
                .map(|p| (p, l.chunk_pages.max(need)))
                .or_else(|| pages.alloc_high(need, l.chunk_floor).map(|p| (p, need)));
            let (page, n) = page?;
            let new = page << 32 | n << pages.page_shift;
            // A swap, not a store: carvers' CASes on the old word now fail.
            self.chunk.swap(new, Relaxed);
            Some(new)
        })
    }

    /// A large block: whole pages, first fit.
    /// Out of line: the small classes' paths, which the `heap` row times,
    /// stay as small as they were.
    #[cold]
    #[inline(never)]
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    fn alloc_large<H: Hal>(&self, size: usize, align: usize) -> *mut u8 {
        let size = size.max(1) as u64;
        self.locked::<H, _>(|pages| {
            let n = pages.pages_for(size);
            match pages.alloc_low(n, align as u64) {
                Some(a) => {
                    self.large_pages.fetch_add(n, Relaxed);
                    pages.addr(a) as usize as *mut u8
                }
                None => ptr::null_mut(),
            }
        })
    }

    /// Frees a large block of `size` bytes.
    /// Out of line: the small classes' paths, which the `heap` row times,
    /// stay as small as they were.
    #[cold]
    #[inline(never)]
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    fn free_large<H: Hal>(&self, p: *mut u8, size: usize) {
        self.locked::<H, _>(|pages| {
            let n = pages.pages_for(size.max(1) as u64);
            pages.free(pages.page_of(p as usize as u64), n);
            self.large_pages.fetch_sub(n, Relaxed);
        })
    }

    /// Resizes a large block in place (shrinking, or growing into the free
    /// pages after it); false if it cannot.
    fn resize_large<H: Hal>(&self, p: *mut u8, old_size: usize, new_size: usize) -> bool {
        self.locked::<H, _>(|pages| {
            let a = pages.page_of(p as usize as u64);
            let n = pages.pages_for(old_size.max(1) as u64);
            let m = pages.pages_for(new_size.max(1) as u64);
            if m < n {
                pages.free(a + m, n - m);
                self.large_pages.fetch_sub(n - m, Relaxed);
            } else if m > n {
                if !pages.grow(a, n, m) {
                    return false;
                }
                self.large_pages.fetch_add(m - n, Relaxed);
            }
            true
        })
    }

    /// The heap's size and free space now (a snapshot, under the lock).
    pub fn stats<H: Hal>(&self) -> HeapStats {
        let size = self.layout().size;
        self.locked::<H, _>(|pages| HeapStats {
            size,
            largest_free: pages.largest_free() << pages.page_shift,
            free: pages.free_pages() << pages.page_shift,
        })
    }

    /// A block of class `k`, or null.
    fn alloc_class<H: Hal>(&self, me: Option<&Slot>, k: u32) -> *mut u8 {
        if let Some(s) = me
            && is_cached(k)
            && let Some(unit) = self.cache_take::<H>(cache_of::<H>(s, k), k)
        {
            return self.block(unit);
        }
        match self.pop::<H>(k).or_else(|| self.carve::<H>(k)) {
            Some(unit) => self.block(unit),
            None => ptr::null_mut(),
        }
    }

    /// Returns a block of class `k`.
    fn free_class<H: Hal>(&self, me: Option<&Slot>, k: u32, p: *mut u8) {
        let unit = self.unit_of(p);
        match me {
            Some(s) if is_cached(k) => self.cache_put::<H>(cache_of::<H>(s, k), k, unit),
            _ => self.push_chain::<H>(k, unit, unit),
        }
    }

    /// A block from the warp's cache of class `k`: the hot block, its own
    /// frees, then
    /// its adopted list, then (one `swap`) the whole shared list.
    fn cache_take<H: Hal>(&self, c: &mut ClassCache, k: u32) -> Option<u32> {
        if c.hot != 0 {
            return Some(core::mem::take(&mut c.hot));
        }
        if c.own_head != 0 {
            let unit = c.own_head;
            c.own_head = self.link(unit).load(Relaxed);
            c.own_count -= 1;
            return Some(unit);
        }
        if c.adopted == 0 {
            c.adopted = self.take_all::<H>(k)?;
        }
        let unit = c.adopted;
        c.adopted = self.link(unit).load(Relaxed);
        Some(unit)
    }

    /// Puts a freed block in the warp's cache; a full `own` list goes to the
    /// shared list first, all at once.
    fn cache_put<H: Hal>(&self, c: &mut ClassCache, k: u32, unit: u32) {
        if c.hot == 0 {
            c.hot = unit;
            return;
        }
        if c.own_count >= cache_limit(k) {
            self.push_chain::<H>(k, c.own_head, c.own_tail);
            c.own_head = 0;
            c.own_count = 0;
        }
        self.link(unit).store(c.own_head, Relaxed);
        if c.own_head == 0 {
            c.own_tail = unit;
        }
        c.own_head = unit;
        c.own_count += 1;
    }

    /// `size` bytes aligned to `align` (a power of two), or null. `me` is
    /// the caller's slot (for its cache), if the caller runs a thread.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub fn alloc<H: Hal>(&self, me: Option<&Slot>, size: usize, align: usize) -> *mut u8 {
        match class_of(size, align) {
            Some(k) => self.alloc_class::<H>(me, k),
            None => self.alloc_large::<H>(size, align),
        }
    }

    /// Frees a block from [`Heap::alloc`] with the same `size` and `align`.
    ///
    /// # Safety
    /// `p` came from this heap with this layout and is not used afterwards.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub unsafe fn dealloc<H: Hal>(&self, me: Option<&Slot>, p: *mut u8, size: usize, align: usize) {
        match class_of(size, align) {
            Some(k) => self.free_class::<H>(me, k, p),
            None => self.free_large::<H>(p, size),
        }
    }

    /// Resizes a block: in place if the class stays (small) or the pages
    /// allow it (large), else moves it.
    ///
    /// # Safety
    /// As for [`Heap::dealloc`] with `old_size`; on success `p` is freed.
    #[rustc_nounwind] // a panic here aborts: see the crate docs
    pub unsafe fn realloc<H: Hal>(
        &self,
        me: Option<&Slot>,
        p: *mut u8,
        old_size: usize,
        align: usize,
        new_size: usize,
    ) -> *mut u8 {
        let (old, new) = (class_of(old_size, align), class_of(new_size, align));
        match (old, new) {
            (Some(o), Some(n)) if o == n => return p,
            (None, None) if self.resize_large::<H>(p, old_size, new_size) => return p,
            _ => {}
        }
        let q = self.alloc::<H>(me, new_size, align);
        if !q.is_null() {
            // SAFETY: both blocks hold at least the smaller size; distinct blocks.
            unsafe { ptr::copy_nonoverlapping(p, q, old_size.min(new_size)) };
            // SAFETY: the caller's contract.
            unsafe { self.dealloc::<H>(me, p, old_size, align) };
        }
        q
    }

    /// Bytes currently allocated (small blocks carved less those in free
    /// lists and caches, plus the pages of large blocks). Only meaningful while no warp uses the heap, and where
    /// the warps' caches are in their slots (the CPU harness's tests):
    /// `slots` are the thread table's ([`Runtime::slots`](crate::Runtime::slots)).
    pub fn bytes_in_use<'a>(&self, slots: impl IntoIterator<Item = &'a Slot>) -> u64 {
        let mut free = 0;
        for (i, l) in self.lists.iter().enumerate() {
            let mut unit = l.load(Relaxed) as u32;
            while unit != 0 {
                free += 1u64 << (i as u32 + MIN_CLASS);
                unit = self.link(unit).load(Relaxed);
            }
        }
        for slot in slots {
            // SAFETY: quiescent (documented), so no warp writes its cache now.
            let cache = unsafe { &*slot.private.heap_cache.get() };
            for (i, c) in cache.iter().enumerate() {
                if c.hot != 0 {
                    free += 1u64 << (i as u32 + MIN_CLASS);
                }
                for mut unit in [c.own_head, c.adopted] {
                    while unit != 0 {
                        free += 1u64 << (i as u32 + MIN_CLASS);
                        unit = self.link(unit).load(Relaxed);
                    }
                }
            }
        }
        self.small_bytes.load(Relaxed) - free + (self.large_pages.load(Relaxed) << self.layout().pages.page_shift)
    }
}

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether class `k` is cached per warp.
#[inline]
fn is_cached(k: u32) -> bool {
    k - MIN_CLASS < CACHED_CLASSES as u32
}

/// Blocks of class `k` a warp keeps from its own frees before publishing
/// them: about 4 KiB worth, at least 4.
#[inline]
pub fn cache_limit(k: u32) -> u32 {
    (4096u32 >> k).max(4)
}

/// The caller's cache of class `k` (`me`: the caller's slot; `k` a cached
/// class). Not an `Option`: on NVIDIA the cache is in shared memory, whose
/// generic address LLVM cannot tell is not null, so an `Option` of it cost a
/// null check at every allocation and free.
#[inline]
#[allow(clippy::mut_from_ref)]
fn cache_of<H: Hal>(me: &Slot, k: u32) -> &mut ClassCache {
    debug_assert!(is_cached(k));
    // SAFETY: the cache is accessed only by its own warp (the caller), one
    // call at a time.
    unsafe { &mut (*H::warp_private(me).heap_cache.get())[(k - MIN_CLASS) as usize] }
}

const _: () = assert!(CACHED_CLASSES as u32 + MIN_CLASS <= 12);
