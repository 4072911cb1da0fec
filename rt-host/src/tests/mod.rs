//! Host tests: every primitive on the CPU harness, with 32- and 64-lane warps.

mod extents;
mod heap;
mod lanes;
mod machine;
mod stress;
mod units;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::cpu::abi::*;
use crate::cpu::machine::{Config, Outcome, run};
use rt_abi::protocol::OP_EXIT;

/// Instantiates `fn $name(lanes: u32)` as one test per lane count.
macro_rules! lanes_test {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn lanes32() {
                super::$name(32)
            }
            #[test]
            fn lanes64() {
                super::$name(64)
            }
        }
    )*};
}
pub(crate) use lanes_test;

/// A machine of `threads` warps.
fn cfg(threads: u32, lanes: u32) -> Config {
    Config::new(threads, lanes)
}

/// Runs `main` and asserts it exited normally with code 0.
fn run_ok(c: Config, main: impl FnOnce() -> i32 + Send + 'static) -> Outcome {
    let out = run(c, main);
    assert_eq!(out.exit, Some((OP_EXIT, 0)), "stderr: {}", out.output(2));
    assert!(out.host_errors.is_empty(), "{:?}", out.host_errors);
    out
}

/// Blocks on `word` until it is non-zero, through the runtime's futex.
fn wait_nonzero(word: &AtomicU32) {
    while word.load(Ordering::Acquire) == 0 {
        // SAFETY: a live word.
        unsafe { __gpu_std_futex_wait(word.as_ptr(), 0, u64::MAX) };
    }
}

/// Sets `word` to 1 and wakes its waiters.
fn set_and_wake(word: &AtomicU32) {
    word.store(1, Ordering::Release);
    // SAFETY: a live word.
    unsafe { __gpu_std_futex_wake(word.as_ptr(), u32::MAX) };
}

fn arc_u32() -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(0))
}
