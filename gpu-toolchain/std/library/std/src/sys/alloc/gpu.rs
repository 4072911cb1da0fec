//! The GPU `System` allocator: the runtime's device heap.

use crate::alloc::{GlobalAlloc, Layout, System};
use crate::sys::pal::abi;

// The runtime's device heap takes any power-of-two alignment, so layouts are
// passed through unchanged.
#[stable(feature = "alloc_system_type", since = "1.28.0")]
unsafe impl GlobalAlloc for System {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the runtime returns null or a block fitting `layout`.
        unsafe { abi::__gpu_std_alloc(layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`, and the block is zeroed.
        unsafe { abi::__gpu_std_alloc_zeroed(layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes a block of this allocator with its layout.
        unsafe { abi::__gpu_std_dealloc(ptr, layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller passes a block of this allocator with its layout;
        // the runtime keeps the alignment and copies the contents.
        unsafe { abi::__gpu_std_realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}
