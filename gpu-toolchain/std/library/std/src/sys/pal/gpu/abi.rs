//! The interface to the GPU threads runtime (`rt-abi/src/abi.rs` in the
//! runtime's repository), imported once for the whole sys layer.
//!
//! The vendor runtime crate (`rt-amdgpu` or `rt-nvptx`, a dependency of std
//! on these targets) defines each function with `#[no_mangle]`; std stays a
//! thin layer over it, as on zkvm. Every function is called by one lane (the
//! leader lane) of the calling warp.

// The vendor's runtime crate, named once for the imports below.
#[cfg(target_os = "amdhsa")]
use rt_amdgpu as rt;
#[cfg(target_os = "cuda")]
use rt_nvptx as rt;

// The error codes are the runtime's own (`rt_common::abi`), not a copy.
pub use rt::std_abi::{ERR_NO_FREE_WARP, ERR_NO_STACK_MEMORY, ERR_STACK_TOO_BIG};
// The thread-local keys reserved for `thread::current()`, the thread id and
// the panic count.
pub use rt::std_abi::{TLS_KEY_STD_CURRENT, TLS_KEY_STD_PANIC_COUNT, TLS_KEY_STD_THREAD_ID};

pub type Dtor = unsafe extern "C" fn(*mut u8);
pub type Entry = unsafe extern "C" fn(*mut u8);

// The functions themselves, as the runtime defines them
// (`rt_common::define_gpu_std_abi!`), not declarations of them: the sys
// layer's calls are checked against the definitions.
pub use rt::{
    __gpu_std_abort,
    __gpu_std_alloc,
    __gpu_std_alloc_zeroed,
    __gpu_std_arg,
    __gpu_std_argc,
    __gpu_std_available_parallelism,
    __gpu_std_dealloc,
    __gpu_std_detach,
    __gpu_std_env,
    __gpu_std_envc,
    __gpu_std_exe,
    __gpu_std_exit,
    __gpu_std_flush,
    __gpu_std_futex_wait,
    __gpu_std_futex_wake,
    __gpu_std_heap_stats,
    __gpu_std_host_call,
    __gpu_std_is_finished,
    __gpu_std_join,
    __gpu_std_monotonic_ns,
    __gpu_std_poll_wait,
    __gpu_std_random_u64,
    __gpu_std_realloc,
    __gpu_std_set_thread_name,
    __gpu_std_sleep_ns,
    __gpu_std_spawn,
    __gpu_std_thread_index,
    __gpu_std_tls_create,
    __gpu_std_tls_destroy,
    __gpu_std_tls_get,
    __gpu_std_tls_run_dtors,
    __gpu_std_tls_set,
    __gpu_std_unix_time_ns,
    __gpu_std_write,
    __gpu_std_yield,
};
