//! `define_gpu_std_abi!`: the `#[no_mangle]` definitions of every
//! [`rt_abi::abi`] function, written once.

/// Defines every `__gpu_std_*` function of [`rt_abi::abi`] (and
/// `__gpu_rt_host_call_nop` for benchmarks), forwarding to
/// [`crate::abi_impl`], and the three `__gpu_unwind_*` functions of
/// [`crate::unwind`]. std's sys layer imports these very functions from
/// the vendor crate (`pub use rt_nvptx::{__gpu_std_alloc, ..}`), so its
/// calls are checked against these signatures; the ones without a safety
/// contract of their own (`exit`, `argc`, `monotonic_ns`, ...) are safe
/// functions, as std calls them.
///
/// - `$rt`: an expression giving the program's `&Runtime`;
/// - `$with_hal`: a macro such that `$with_hal!(H => expr)` evaluates `expr`
///   with a type alias `H` for the caller's [`Hal`](crate::Hal). NVIDIA
///   names its one HAL; AMD picks `Wave64` or `Wave32` by
///   `llvm.amdgcn.wavefrontsize` (a constant for the target CPU, so the
///   other arm is folded away).
#[macro_export]
macro_rules! define_gpu_std_abi {
    ($rt:expr, $with_hal:ident) => {
        // SAFETY (all bodies below): std calls these as the ABI documents,
        // on a thread's leader lane, after warp 0 initialised the runtime;
        // pointer arguments carry std's guarantees, forwarded unchanged.

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_alloc(size: usize, align: usize) -> *mut u8 {
            $with_hal!(H => $crate::abi_impl::alloc::<H>($rt, size, align))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_alloc_zeroed(size: usize, align: usize) -> *mut u8 {
            $with_hal!(H => $crate::abi_impl::alloc_zeroed::<H>($rt, size, align))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_dealloc(ptr: *mut u8, size: usize, align: usize) {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::dealloc::<H>($rt, ptr, size, align) })
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_realloc(ptr: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::realloc::<H>($rt, ptr, old_size, align, new_size) })
        }

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_heap_stats(out: *mut u64) {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::heap_stats::<H>($rt, out) })
        }

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_write(fd: u32, ptr: *const u8, len: usize) -> isize {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::write::<H>($rt, fd, ptr, len) })
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_flush() {
            $with_hal!(H => $crate::abi_impl::flush::<H>($rt))
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_exit(code: i32) -> ! {
            $with_hal!(H => $crate::abi_impl::exit::<H>($rt, code))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_abort() -> ! {
            $with_hal!(H => $crate::abi_impl::abort::<H>($rt))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_panic_abort() -> ! {
            $with_hal!(H => $crate::abi_impl::panic_abort::<H>($rt))
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_argc() -> usize {
            $crate::abi_impl::argc($rt)
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_arg(i: usize, len_out: *mut usize) -> *const u8 {
            $crate::abi_impl::arg($rt, i, len_out)
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_exe(len_out: *mut usize) -> *const u8 {
            $crate::abi_impl::exe($rt, len_out)
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_envc() -> usize {
            $crate::abi_impl::envc($rt)
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_env(i: usize, len_out: *mut usize) -> *const u8 {
            $crate::abi_impl::env($rt, i, len_out)
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_monotonic_ns() -> u64 {
            $with_hal!(H => $crate::abi_impl::monotonic_ns::<H>())
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_unix_time_ns() -> u64 {
            $with_hal!(H => $crate::abi_impl::unix_time_ns::<H>($rt))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_random_u64() -> u64 {
            $crate::abi_impl::random_u64($rt)
        }

        /// Files, directories and stdin through the host (`hostcall.rs`).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_host_call(
            call: u32,
            head: *const u8,
            head_len: usize,
            body: *const u8,
            body_len: usize,
            reply: *mut u8,
            reply_cap: usize,
            reply_len: *mut usize,
        ) -> i64 {
            // SAFETY: std passes slices it owns for these lengths.
            $with_hal!(H => unsafe {
                $crate::abi_impl::host_call::<H>($rt, call, head, head_len, body, body_len, reply, reply_cap, reply_len)
            })
        }

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_spawn(
            stack_size: usize,
            entry: unsafe extern "C" fn(*mut u8),
            data: *mut u8,
            on_detach: Option<unsafe extern "C" fn(*mut u8)>,
        ) -> i64 {
            // SAFETY: see above (std's spawn makes `entry(data)` sound once,
            // and `on_detach(data)` once after it).
            $with_hal!(H => unsafe { $crate::abi_impl::spawn::<H>($rt, stack_size, entry, data, on_detach) })
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_join(handle: i64) {
            $with_hal!(H => $crate::abi_impl::join::<H>($rt, handle))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_detach(handle: i64) {
            $with_hal!(H => $crate::abi_impl::detach::<H>($rt, handle))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_is_finished(handle: i64) -> bool {
            $crate::abi_impl::is_finished($rt, handle)
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_thread_index() -> u32 {
            $with_hal!(H => $crate::abi_impl::thread_index::<H>($rt))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_set_thread_name(ptr: *const u8, len: usize) {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::set_thread_name::<H>($rt, ptr, len) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_sleep_ns(ns: u64) {
            $with_hal!(H => $crate::abi_impl::sleep_ns::<H>($rt, ns))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_yield() {
            $with_hal!(H => $crate::abi_impl::yield_now::<H>($rt))
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_available_parallelism() -> usize {
            $crate::abi_impl::available_parallelism($rt)
        }

        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_futex_wait(addr: *const u32, expected: u32, timeout_ns: u64) -> bool {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::futex_wait::<H>($rt, addr, expected, timeout_ns) })
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_poll_wait(
            ready: unsafe extern "C" fn(*const u8) -> bool,
            data: *const u8,
            timeout_ns: u64,
        ) -> bool {
            // SAFETY: see above.
            $with_hal!(H => unsafe { $crate::abi_impl::poll_wait::<H>($rt, ready, data, timeout_ns) })
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_futex_wake(addr: *const u32, count: u32) -> bool {
            // SAFETY: see above.
            unsafe { $crate::abi_impl::futex_wake(addr, count) }
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_tls_create(dtor: Option<unsafe extern "C" fn(*mut u8)>) -> usize {
            $crate::abi_impl::tls_create($rt, dtor)
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_tls_get(key: usize) -> *mut u8 {
            $with_hal!(H => $crate::abi_impl::tls_get::<H>($rt, key))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_tls_set(key: usize, value: *mut u8) {
            $with_hal!(H => $crate::abi_impl::tls_set::<H>($rt, key, value))
        }
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_tls_destroy(key: usize) {
            $crate::abi_impl::tls_destroy($rt, key)
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn __gpu_std_tls_run_dtors() {
            $with_hal!(H => $crate::abi_impl::tls_run_dtors::<H>($rt))
        }

        // Never inlined: `gpu-ld` tells from whether it survives its
        // whole-program `opt` that the program can use the other lanes
        // (gpu-ld/src/lanes_wanted.rs).
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "C" fn __gpu_std_lanes_run(f: $crate::rt_abi::abi::LaneFn, data: *const u8) {
            // SAFETY: see above (gpu-lanes makes f(data, lane) sound on every lane).
            $with_hal!(H => unsafe { $crate::abi_impl::lanes_run::<H>($rt, f, data) })
        }
        $crate::rt_abi::assert_symbol!(__gpu_std_lanes_run, $crate::rt_abi::symbols::LANES_RUN);
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_std_lane_count() -> u32 {
            $with_hal!(H => $crate::abi_impl::lane_count::<H>())
        }

        // Unwinding's word (`crate::unwind`): called only by code `gpu-ld`
        // writes after its `opt`, which inlines them; one load or store each.
        #[unsafe(no_mangle)]
        #[inline(always)]
        pub extern "C" fn __gpu_unwind_exception() -> *mut u8 {
            $with_hal!(H => $crate::unwind::exception::<H>($rt))
        }
        $crate::rt_abi::assert_symbol!(__gpu_unwind_exception, $crate::rt_abi::symbols::UNWIND_EXCEPTION);
        #[unsafe(no_mangle)]
        #[inline(always)]
        pub extern "C" fn __gpu_unwind_word() -> *mut *mut u8 {
            $with_hal!(H => $crate::unwind::word::<H>($rt))
        }
        $crate::rt_abi::assert_symbol!(__gpu_unwind_word, $crate::rt_abi::symbols::UNWIND_WORD);
        #[unsafe(no_mangle)]
        #[inline(always)]
        pub extern "C" fn __gpu_unwind_catch() -> *mut u8 {
            $with_hal!(H => $crate::unwind::catch::<H>($rt))
        }
        $crate::rt_abi::assert_symbol!(__gpu_unwind_catch, $crate::rt_abi::symbols::UNWIND_CATCH);
        /// # Safety
        /// As `rt_common::unwind::resume`.
        #[unsafe(no_mangle)]
        #[inline(always)]
        pub unsafe extern "C" fn __gpu_unwind_resume(exception: *mut u8) {
            // SAFETY: the caller's contract.
            $with_hal!(H => unsafe { $crate::unwind::resume::<H>($rt, exception) })
        }
        $crate::rt_abi::assert_symbol!(__gpu_unwind_resume, $crate::rt_abi::symbols::UNWIND_RESUME);

        /// The `getrandom` crate's custom backend, 0.3 and 0.4 (selected by
        /// `--cfg getrandom_backend="custom"`, which `gpurun build` and
        /// `gpurun init` set): random bytes from the host's OS generator.
        ///
        /// # Safety
        /// `dest` is valid for writes of `len` bytes.
        #[unsafe(no_mangle)]
        pub unsafe fn __getrandom_v03_custom(dest: *mut u8, len: usize) -> Result<(), core::num::NonZeroU32> {
            // SAFETY: the caller's contract.
            match $with_hal!(H => unsafe { $crate::abi_impl::random_bytes::<H>($rt, dest, len) }) {
                true => Ok(()),
                false => Err($crate::rt_abi::abi::GETRANDOM_NO_HOST),
            }
        }
        /// The same for getrandom 0.2 (its `custom` feature).
        ///
        /// # Safety
        /// `dest` is valid for writes of `len` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __getrandom_custom(dest: *mut u8, len: usize) -> u32 {
            // SAFETY: the caller's contract.
            match $with_hal!(H => unsafe { $crate::abi_impl::random_bytes::<H>($rt, dest, len) }) {
                true => 0,
                false => $crate::rt_abi::abi::GETRANDOM_NO_HOST.get(),
            }
        }

        /// A host round trip (`OP_NOP` + `FLAG_REPLY`), for benchmarks.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn __gpu_rt_host_call_nop() {
            $with_hal!(H => $crate::abi_impl::host_call_nop::<H>($rt))
        }
    };
}
