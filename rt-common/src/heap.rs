//! The device heap over `[heap_base, heap_base + heap_size)`.
//!
//! Power-of-two size classes (16 B up); a block of class `k` is `2^k` bytes,
//! aligned to `min(2^k, 4096)`, so any `align ≤ 4096` is served by the class
//! of `max(size, align)`. No per-block header: `dealloc` gets the layout back
//! and recomputes the class.
//!
//! - Per-warp cache (fast path, no atomics) for classes up to
//!   [`CACHED_CLASSES`] (16 B ..= 1 KiB), in the warp's private state
//!   ([`WarpPrivate`](crate::slot::WarpPrivate): shared memory on NVIDIA):
//!   - `hot`: one block, taken and put without touching the block itself
//!     (a free followed by an alloc of the class costs two slot accesses);
//!   - `own`: blocks this warp freed, a list with a known tail and count;
//!     once it holds [`cache_limit`] blocks, the next free publishes the
//!     whole list to the class's shared list with one CAS;
//!   - `adopted`: a whole shared list taken with one `swap` when `own` and
//!     `adopted` are both empty.
//!   The cache belongs to the warp, not the thread: it is kept when a thread
//!   ends, so the next thread on the warp (spawn reuses the warp it just
//!   joined) allocates without atomics. Memory in a warp's cache is free
//!   but usable only by that warp: at most `cache_limit` own blocks per
//!   class, plus whatever it adopted.
//! - Per-class shared free list: head = `tag << 32 | unit`, `unit` the block
//!   offset in 16-byte units plus 1 (0 = empty). The link to the next block
//!   is stored in the free block's first 4 bytes. Warps push chains and
//!   take whole lists; callers without a slot (and classes above 1 KiB) pop
//!   single blocks. The tag changes on every successful CAS, so a stale head
//!   never matches (ABA).
//! - Bump pointer for fresh blocks (CAS loop, to align).
//!
//! Memory reaches 64 GiB of heap at most (32-bit units of 16 bytes). Out of
//! memory is a null pointer. Free blocks are not split or merged.

use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::hal::Hal;
use crate::slot::{CACHED_CLASSES, ClassCache, Slot};

/// Smallest class: 16-byte blocks.
pub const MIN_CLASS: u32 = 4;
/// Number of classes (16 B ..= 2^39 B).
pub const NUM_CLASSES: usize = 36;
/// Largest alignment served.
pub const MAX_ALIGN: usize = 4096;
const UNIT_SHIFT: u32 = 4;
/// Heap bytes the 32-bit units can address.
const MAX_HEAP: u64 = (u32::MAX as u64 - 1) << UNIT_SHIFT;

/// Heap state: valid after [`Heap::init`] (warp 0, before `main`).
pub struct Heap {
    /// `(base, size)`, written by `init` only.
    range: UnsafeCell<(u64, u64)>,
    /// Bytes handed out from the bump region.
    bump: AtomicU64,
    /// Alignment padding skipped by the bump pointer (never reused).
    padding: AtomicU64,
    lists: [AtomicU64; NUM_CLASSES],
}

// SAFETY: `range` is written only by `init` (before any other warp uses the
// heap); everything else is atomic.
unsafe impl Sync for Heap {}

/// Class index for a request, or `None` if it cannot be served.
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
    ((k - MIN_CLASS) < NUM_CLASSES as u32).then_some(k)
}

impl Heap {
    pub const fn new() -> Self {
        Heap {
            range: UnsafeCell::new((0, 0)),
            bump: AtomicU64::new(0),
            padding: AtomicU64::new(0),
            lists: [const { AtomicU64::new(0) }; NUM_CLASSES],
        }
    }

    /// Resets the heap to `[base, base + size)`.
    ///
    /// # Safety
    /// No other warp uses the heap concurrently; the range is valid device
    /// memory for the whole program.
    pub unsafe fn init(&self, base: u64, size: u64) {
        let aligned = base.next_multiple_of(MAX_ALIGN as u64);
        let size = if base == 0 {
            0
        } else {
            size.saturating_sub(aligned - base).min(MAX_HEAP)
        };
        // SAFETY: exclusive access (caller).
        unsafe { *self.range.get() = (aligned, size) };
        self.bump.store(0, Relaxed);
        self.padding.store(0, Relaxed);
        for l in &self.lists {
            l.store(0, Relaxed);
        }
    }

    #[inline]
    fn range(&self) -> (u64, u64) {
        // SAFETY: written only by `init`, which happens-before every use.
        unsafe { *self.range.get() }
    }

    #[inline]
    fn block(&self, unit: u32) -> *mut u8 {
        (self.range().0 + (((unit - 1) as u64) << UNIT_SHIFT)) as usize as *mut u8
    }

    #[inline]
    fn unit_of(&self, p: *mut u8) -> u32 {
        (((p as usize as u64 - self.range().0) >> UNIT_SHIFT) + 1) as u32
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

    fn bump(&self, k: u32) -> Option<u32> {
        let (_, size) = self.range();
        let bytes = 1u64 << k;
        let align = bytes.min(MAX_ALIGN as u64);
        let mut cur = self.bump.load(Relaxed);
        loop {
            let start = cur.next_multiple_of(align);
            let end = start.checked_add(bytes).filter(|&e| e <= size)?;
            // Relaxed: fresh memory carries no data to publish.
            match self.bump.compare_exchange_weak(cur, end, Relaxed, Relaxed) {
                Ok(_) => {
                    if start != cur {
                        self.padding.fetch_add(start - cur, Relaxed);
                    }
                    return Some(((start >> UNIT_SHIFT) + 1) as u32);
                }
                Err(c) => cur = c,
            }
        }
    }

    /// A block of class `k`, or null.
    fn alloc_class<H: Hal>(&self, me: Option<&Slot>, k: u32) -> *mut u8 {
        if let Some(s) = me
            && is_cached(k)
            && let Some(unit) = self.cache_take::<H>(cache_of::<H>(s, k), k)
        {
            return self.block(unit);
        }
        match self.pop::<H>(k).or_else(|| self.bump(k)) {
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

    /// `size` bytes aligned to `align`, or null. `me` is the caller's slot
    /// (for its cache), if the caller runs a thread.
    pub fn alloc<H: Hal>(&self, me: Option<&Slot>, size: usize, align: usize) -> *mut u8 {
        match class_of(size, align) {
            Some(k) => self.alloc_class::<H>(me, k),
            None => ptr::null_mut(),
        }
    }

    /// Frees a block from [`Heap::alloc`] with the same `size` and `align`.
    ///
    /// # Safety
    /// `p` came from this heap with this layout and is not used afterwards.
    pub unsafe fn dealloc<H: Hal>(&self, me: Option<&Slot>, p: *mut u8, size: usize, align: usize) {
        if let Some(k) = class_of(size, align) {
            self.free_class::<H>(me, k, p);
        }
    }

    /// Resizes a block: in place if the class stays, else moves it.
    ///
    /// # Safety
    /// As for [`Heap::dealloc`] with `old_size`; on success `p` is freed.
    pub unsafe fn realloc<H: Hal>(
        &self,
        me: Option<&Slot>,
        p: *mut u8,
        old_size: usize,
        align: usize,
        new_size: usize,
    ) -> *mut u8 {
        let (Some(old), Some(new)) = (class_of(old_size, align), class_of(new_size, align)) else {
            return ptr::null_mut();
        };
        if old == new {
            return p;
        }
        let q = self.alloc_class::<H>(me, new);
        if !q.is_null() {
            // SAFETY: both blocks hold at least the smaller size; distinct blocks.
            unsafe { ptr::copy_nonoverlapping(p, q, old_size.min(new_size)) };
            self.free_class::<H>(me, old, p);
        }
        q
    }

    /// Bytes currently allocated (bump bytes minus padding, free-list and
    /// cached bytes). Only meaningful while no warp uses the heap, and where
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
        self.bump.load(Relaxed) - self.padding.load(Relaxed) - free
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
