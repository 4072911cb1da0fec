//! The atomics the runtime's protocols use, swappable for loom's.
//!
//! Like crossbeam-utils' `primitive` module: under `cfg(loom)` the handoff
//! words (slot state, join/detach word, exit flag, ring sequence words) are
//! loom atomics so `loom` explores their interleavings. Everything else
//! (heap lists, TLS tables) uses `core` atomics directly: it is exercised by
//! the stress tests, not modelled. Public for rt-host's loom models.

#[cfg(not(loom))]
pub use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, fence};

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, fence};

pub use core::sync::atomic::Ordering;

/// Defines `const fn new()` normally and a plain `fn new()` under loom, whose
/// atomics cannot be built in const context.
macro_rules! maybe_const_fn {
    ($(#[$m:meta])* $v:vis fn $name:ident() -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$m])* $v const fn $name() -> $ret $body
        #[cfg(loom)]
        $(#[$m])* $v fn $name() -> $ret $body
    };
}
pub(crate) use maybe_const_fn;
