//! The host's memory budget for what it buffers for the program: unfinished
//! writes to stdout/stderr, host-call requests being assembled, and replies
//! longer than a slot (kept for the thread's `OP_CALL_MORE` packets).
//!
//! One budget for all threads ([`DEFAULT_BUDGET`]), so the host's memory does
//! not grow with the thread count: every such buffer holds a [`Charge`] for
//! its capacity, taken before it grows. When the budget is spent the server
//! does not wait (it must keep consuming the ring in order) but buffers
//! less: a long write is passed on in pieces, a read returns fewer bytes (a
//! short read, as `read(2)` may), a write request keeps only what fits (a
//! short write), and another call whose request or reply does not fit fails
//! with `ENOMEM`. Buffers no longer than a slot are not counted: there is
//! at most one in flight per thread and call worker.

use std::prelude::rust_2024::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default budget: 256 MiB for every thread together. A full-size host
/// call reply (1 MiB, `MAX_TRANSFER`) for 256 threads at once; the ring
/// carries a few GB a second at most, so more buffered would only hold the
/// program's data longer, while 4,224 threads × (16 MiB of write + 1 MiB of
/// reply), the limits one thread has, would be 70 GiB.
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// Bytes the host may buffer for the program, and what is taken now.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl Budget {
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget { limit, used: AtomicUsize::new(0), peak: AtomicUsize::new(0) })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes held by charges now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Takes `n` more bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.take_up_to(n, n) == n
    }

    /// Takes as many of `n` bytes as fit, but none if fewer than `min`.
    fn take_up_to(&self, n: usize, min: usize) -> usize {
        // Relaxed: a counter; the bytes it stands for are not published
        // through it.
        let got = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            let room = self.limit.saturating_sub(used);
            let k = n.min(room);
            (k >= min && k > 0).then_some(used + k)
        });
        match got {
            Ok(before) => {
                let k = n.min(self.limit.saturating_sub(before));
                self.peak.fetch_max(before + k, Ordering::Relaxed);
                k
            }
            Err(_) => 0,
        }
    }

    fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::Relaxed);
    }

    /// A charge of nothing yet.
    pub fn charge(self: &Arc<Self>) -> Charge {
        Charge { budget: self.clone(), bytes: 0 }
    }

    /// A charge of as many of `n` bytes as fit (perhaps 0).
    pub fn charge_up_to(self: &Arc<Self>, n: usize) -> Charge {
        let bytes = self.take_up_to(n, 0);
        Charge { budget: self.clone(), bytes }
    }
}

/// Bytes taken from a [`Budget`], given back when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Charge {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Raises the charge to `n` bytes if they fit; false (and unchanged) if not.
    pub fn grow_to(&mut self, n: usize) -> bool {
        if n <= self.bytes {
            return true;
        }
        if self.budget.take(n - self.bytes) {
            self.bytes = n;
            true
        } else {
            false
        }
    }

    /// Lowers the charge to `n` bytes.
    pub fn shrink_to(&mut self, n: usize) {
        if n < self.bytes {
            self.budget.give(self.bytes - n);
            self.bytes = n;
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

/// A buffer whose capacity is always covered by its charge.
#[derive(Debug)]
pub struct Charged {
    bytes: Vec<u8>,
    charge: Charge,
}

impl Charged {
    pub fn new(budget: &Arc<Budget>) -> Charged {
        Charged { bytes: Vec::new(), charge: budget.charge() }
    }

    /// `bytes` as they are, charged for their capacity with `charge`
    /// (lowered or raised to it); `None` (and the bytes dropped) if that
    /// does not fit.
    pub fn adopt(mut charge: Charge, mut bytes: Vec<u8>) -> Option<Charged> {
        bytes.shrink_to_fit();
        charge.shrink_to(bytes.capacity());
        charge.grow_to(bytes.capacity()).then_some(Charged { bytes, charge })
    }

    /// [`push`](Self::push), reserving (and charging) `reserve` bytes
    /// first where they fit.
    pub fn push_reserving(&mut self, more: &[u8], reserve: usize) -> bool {
        if self.bytes.capacity() < reserve && self.charge.grow_to(reserve) {
            self.bytes.reserve_exact(reserve - self.bytes.len());
        }
        self.push(more)
    }

    /// Appends `more` if the budget covers the capacity it needs (doubling,
    /// or exactly what it needs when doubling does not fit); false, and
    /// nothing appended, if not even that fits.
    pub fn push(&mut self, more: &[u8]) -> bool {
        let need = self.bytes.len() + more.len();
        if need > self.bytes.capacity() {
            let roomy = need.max(self.bytes.capacity() * 2).max(256);
            let cap = if self.charge.grow_to(roomy) {
                roomy
            } else if self.charge.grow_to(need) {
                need
            } else {
                return false;
            };
            self.bytes.reserve_exact(cap - self.bytes.len());
            // `reserve_exact` may round up: charge what the allocator gave.
            if !self.charge.grow_to(self.bytes.capacity()) {
                self.bytes.shrink_to(cap);
            }
        }
        self.bytes.extend_from_slice(more);
        true
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes, emptied; the charge goes back.
    pub fn take(&mut self) -> Vec<u8> {
        self.charge.shrink_to(0);
        std::mem::take(&mut self.bytes)
    }
}
