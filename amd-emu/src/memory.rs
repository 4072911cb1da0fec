//! Device memory is host memory: a device address is a host pointer, as with
//! HIP's host-mapped memory, so gpurun's host-call server reads the ring the
//! program writes, exactly as on hardware. Only addresses inside a
//! registered range (allocations, the loaded code object, kernel arguments)
//! may be touched; anything else is a memory access fault, as on a GPU.
//!
//! Flat addresses in two apertures name the other address spaces, as on
//! hardware: the high 32 bits [`PRIVATE_APERTURE`] are the lane's own
//! scratch (offset in the low half), [`SHARED_APERTURE`] the workgroup's LDS.
//! Both lie above any user-space host address.
//!
//! Ordering: every access is an atomic access of the host (relaxed for plain
//! loads and stores, sequentially consistent for atomics and fences), so
//! nothing the emulator does is a data race; the hardware's weaker ordering
//! is not modelled (the loom models check the runtime's orderings).

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// High half of a flat address in the private (scratch) aperture.
pub const PRIVATE_APERTURE: u32 = 0x0002_0000;
/// High half of a flat address in the shared (LDS) aperture.
pub const SHARED_APERTURE: u32 = 0x0001_0000;

/// The registered ranges `[start, end)`, sorted, behind a generation count
/// so that a wave rereads them only when they changed.
struct Registry {
    ranges: Mutex<Arc<Vec<(u64, u64)>>>,
    generation: AtomicU64,
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Registry { ranges: Mutex::new(Arc::new(Vec::new())), generation: AtomicU64::new(1) })
}

/// Makes `[start, start + len)` device memory.
pub fn register(start: u64, len: u64) {
    let r = registry();
    let mut g = r.ranges.lock().unwrap_or_else(|e| e.into_inner());
    let mut v = (**g).clone();
    let at = v.partition_point(|&(s, _)| s < start);
    v.insert(at, (start, start + len));
    *g = Arc::new(v);
    r.generation.fetch_add(1, Ordering::SeqCst);
}

/// Removes the range that starts at `start`.
pub fn unregister(start: u64) {
    let r = registry();
    let mut g = r.ranges.lock().unwrap_or_else(|e| e.into_inner());
    let mut v = (**g).clone();
    v.retain(|&(s, _)| s != start);
    *g = Arc::new(v);
    r.generation.fetch_add(1, Ordering::SeqCst);
}

/// A wave's view of the registry.
#[derive(Default)]
pub struct View {
    ranges: Arc<Vec<(u64, u64)>>,
    generation: u64,
    /// The range that matched last (most accesses hit the same one).
    last: (u64, u64),
}

impl View {
    /// Whether `[addr, addr + len)` lies inside one registered range.
    #[inline]
    pub fn contains(&mut self, addr: u64, len: u64) -> bool {
        let end = addr.wrapping_add(len);
        if addr >= self.last.0 && end <= self.last.1 && end >= addr {
            return true;
        }
        let r = registry();
        let g = r.generation.load(Ordering::Acquire);
        if g != self.generation {
            self.ranges = r.ranges.lock().unwrap_or_else(|e| e.into_inner()).clone();
            self.generation = g;
        }
        let i = self.ranges.partition_point(|&(s, _)| s <= addr);
        if i == 0 {
            return false;
        }
        let (s, e) = self.ranges[i - 1];
        if end <= e && end >= addr {
            self.last = (s, e);
            true
        } else {
            false
        }
    }
}

/// Reads `dst.len()` bytes at host address `src`.
///
/// # Safety
/// `src..src+len` must be valid host memory (a registered range, a wave's
/// scratch or a workgroup's LDS).
#[inline]
pub unsafe fn read(src: *const u8, dst: &mut [u8]) {
    let n = dst.len();
    if n % 4 == 0 && (src as usize) % 4 == 0 {
        for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
            // SAFETY: aligned and in bounds by the caller's contract.
            let v = unsafe { (*(src.add(i * 4) as *const AtomicU32)).load(Ordering::Relaxed) };
            chunk.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        for (i, b) in dst.iter_mut().enumerate() {
            // SAFETY: in bounds by the caller's contract.
            *b = unsafe { (*(src.add(i) as *const AtomicU8)).load(Ordering::Relaxed) };
        }
    }
}

/// Writes `src` at host address `dst`.
///
/// # Safety
/// As [`read`].
#[inline]
pub unsafe fn write(dst: *mut u8, src: &[u8]) {
    let n = src.len();
    if n % 4 == 0 && (dst as usize) % 4 == 0 {
        for (i, chunk) in src.chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes(chunk.try_into().expect("4 bytes"));
            // SAFETY: aligned and in bounds by the caller's contract.
            unsafe { (*(dst.add(i * 4) as *const AtomicU32)).store(v, Ordering::Relaxed) };
        }
    } else {
        for (i, b) in src.iter().enumerate() {
            // SAFETY: in bounds by the caller's contract.
            unsafe { (*(dst.add(i) as *const AtomicU8)).store(*b, Ordering::Relaxed) };
        }
    }
}

/// Atomically replaces the `u32` at `p` with `f(old)`; returns the old value.
///
/// # Safety
/// `p` valid and 4-byte aligned.
#[inline]
pub unsafe fn rmw32(p: *mut u8, f: impl Fn(u32) -> u32) -> u32 {
    // SAFETY: the caller's contract.
    let a = unsafe { &*(p as *const AtomicU32) };
    let mut old = a.load(Ordering::SeqCst);
    loop {
        match a.compare_exchange_weak(old, f(old), Ordering::SeqCst, Ordering::SeqCst) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

/// As [`rmw32`] for a `u64`.
///
/// # Safety
/// `p` valid and 8-byte aligned.
#[inline]
pub unsafe fn rmw64(p: *mut u8, f: impl Fn(u64) -> u64) -> u64 {
    // SAFETY: the caller's contract.
    let a = unsafe { &*(p as *const AtomicU64) };
    let mut old = a.load(Ordering::SeqCst);
    loop {
        match a.compare_exchange_weak(old, f(old), Ordering::SeqCst, Ordering::SeqCst) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_ranges() {
        let buf = vec![0u8; 64];
        let a = buf.as_ptr() as u64;
        let mut view = View::default();
        assert!(!view.contains(a, 4));
        register(a, 64);
        assert!(view.contains(a, 4) && view.contains(a + 60, 4));
        assert!(!view.contains(a + 61, 4));
        unregister(a);
        let mut fresh = View::default();
        assert!(!fresh.contains(a, 4));
    }
}
