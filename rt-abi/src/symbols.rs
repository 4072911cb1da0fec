//! Every symbol name the runtime, the linker and the launcher meet each other by.
//!
//! The runtime defines these with `#[unsafe(no_mangle)]` items of the same
//! name, each followed by [`assert_symbol!`](crate::assert_symbol), so
//! renaming either the item or the constant fails the build; `gpu-ld` finds
//! them in the program's IR and `gpurun` in the code object by these
//! constants, never by a literal of its own.

/// The kernel the launcher starts. It takes one parameter: the device
/// address of the [`LaunchBlock`](crate::protocol::LaunchBlock). Defined by
/// the vendor crates' `start.rs`.
pub const KERNEL_ENTRY: &str = "__gpu_start";

/// A global that code whose stack frames live in global memory defines (the
/// linker's shared stacks, `gpu-ld`'s `shared_stack.rs`); the launcher gives
/// it [`LaunchBlock::stacks`](crate::protocol::LaunchBlock::stacks) when it
/// is present.
pub const SHARED_STACKS_SYMBOL: &str = "__gpu_shared_stacks";

/// The calling lane's stack pointer pair (rt-common's `stack::LaneStack`),
/// read by every function whose frame the linker moved to global memory.
/// Defined by the vendor crates' `stack.rs`.
pub const STACK_SLOT: &str = "__gpu_stack_slot";

/// What a moved frame calls when it would go below its stack's limit.
/// Defined by the vendor crates' `stack.rs`.
pub const STACK_OVERFLOW: &str = "__gpu_stack_overflow";

/// AMD: what a recursive function's depth check calls when the call stack
/// (scratch, which grows up) has passed its ceiling. Defined by
/// `rt-amdgpu`'s `start.rs`. (NVIDIA's check calls [`STACK_OVERFLOW`], whose
/// handler tells the two stacks apart by the call stack's pointer.)
pub const CALL_STACK_OVERFLOW: &str = "__gpu_call_stack_overflow";

/// NVIDIA: the thread table's address, stored by every lane at kernel start;
/// the linker gives each block a copy in shared memory (`block_shared.rs`).
pub const THREAD_TABLE: &str = "__gpu_thread_table";

/// NVIDIA: each warp's private state, indexed by its place in the block;
/// the linker moves it to shared memory (`block_shared.rs`).
pub const WARP_PRIVATE: &str = "__gpu_warp_private";

/// NVIDIA: 1 if the program can call `gpu_lanes::for_each_lane`, else 0; the
/// linker defines it after whole-program optimization (`lanes_wanted.rs`),
/// the runtime declares it.
pub const LANES_WANTED: &str = "__gpu_lanes_wanted";

/// The ABI function `gpu_lanes::for_each_lane` reaches (see [`crate::abi`]);
/// whether the optimized program still calls it decides [`LANES_WANTED`].
pub const LANES_RUN: &str = "__gpu_std_lanes_run";

/// AMD: the lanes `AMD_WAVE_CALL` runs its function on. The runtime's weak
/// definition says 1; the linker's strong one the wave size (`amd_lanes.rs`).
pub const AMD_WAVE_LANES: &str = "__gpu_amd_wave_lanes";

/// AMD: runs a lane function on every lane of the wave. The runtime's weak
/// definition runs lane 0; the linker's strong one calls
/// [`AMD_WHOLE_WAVE_CALL`] (`amd_lanes.rs`).
pub const AMD_WAVE_CALL: &str = "__gpu_amd_wave_call";

/// AMD: the linker's hand-written function that turns every lane on around
/// the call (module assembly; no runtime definition).
pub const AMD_WHOLE_WAVE_CALL: &str = "__gpu_amd_whole_wave_call";

/// The module of the host-call ring's device end. Only its functions may use
/// system-scope atomics and fences; the linker narrows every other atomic to
/// device scope (`device_scope.rs`). rt-common's `ring.rs` checks its own
/// `module_path!()` against this at build time.
pub const RING_MODULE: &str = "rt_common::ring";

/// Unwinding (issue 44). Neither GPU backend emits exception tables, so
/// `gpu-ld` lowers `invoke`/`landingpad`/`resume` after whole-program
/// optimization onto one word per warp (std thread), the exception in
/// flight (null: none), kept by the runtime in rt-common's `WarpPrivate`
/// and touched only by lane 0. A thread starts with it null and must end
/// with it null. The three runtime functions below are `#[no_mangle] extern
/// "C"` and `#[inline(always)]`.
///
/// `__gpu_unwind_exception() -> *mut u8`: the calling warp's exception in
/// flight, null if none. The linker calls it after every call that may
/// unwind, so it must stay a single load.
pub const UNWIND_EXCEPTION: &str = "__gpu_unwind_exception";

/// `__gpu_unwind_word() -> *mut *mut u8`: the address of the calling warp's
/// exception word. A function that checks the word after several calls
/// computes the address once, on entry, and loads it at each check.
pub const UNWIND_WORD: &str = "__gpu_unwind_word";

/// `__gpu_unwind_catch() -> *mut u8`: returns the exception in flight and
/// sets the word to null. What a lowered `landingpad` calls.
pub const UNWIND_CATCH: &str = "__gpu_unwind_catch";

/// `__gpu_unwind_resume(exception: *mut u8)`: sets the exception in flight
/// (non-null). What a lowered `resume`, and every call of [`UNWIND_RAISE`]
/// after optimization, calls; the caller then returns.
pub const UNWIND_RESUME: &str = "__gpu_unwind_resume";

/// `extern "C-unwind" fn(exception: *mut u8)`: what std's `panic_unwind`
/// (its `gpu` module) calls to start unwinding. Declared only, never
/// defined: during `opt` it is an unknown function that may unwind, so
/// LLVM keeps every caller may-unwind; after `opt` the linker turns its
/// calls into calls of [`UNWIND_RESUME`].
pub const UNWIND_RAISE: &str = "__gpu_unwind_raise";

/// Whether two strings are equal, in a `const` context.
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Fails the build unless the item `$item` is named as the constant
/// `$symbol` says: written beside each `#[unsafe(no_mangle)]` definition of
/// a name in this module.
#[macro_export]
macro_rules! assert_symbol {
    ($item:ident, $symbol:path) => {
        const _: () = assert!(
            $crate::symbols::same(stringify!($item), $symbol),
            concat!("`", stringify!($item), "` is not named as `", stringify!($symbol), "` says")
        );
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_compares_whole_strings() {
        assert!(same("__gpu_start", KERNEL_ENTRY));
        assert!(!same("__gpu_star", KERNEL_ENTRY));
        assert!(!same("__gpu_starT", KERNEL_ENTRY));
        assert!(same("", ""));
    }

    #[allow(non_upper_case_globals)]
    const __gpu_stack_slot: () = ();
    crate::assert_symbol!(__gpu_stack_slot, STACK_SLOT);
}
