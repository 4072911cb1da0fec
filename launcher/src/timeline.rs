//! `GPURUN_TIMELINE=1`: one stderr line per phase of `gpurun run`, with the
//! milliseconds since gpurun's `main` started, to see where a start's time
//! goes (the `cold_start` row times the whole process from outside).
//!
//! Off (one relaxed load per mark) unless the variable is set when
//! [`start`] runs.

use std::sync::OnceLock;
use std::time::Instant;

/// The variable that turns the timeline on.
pub const VAR: &str = "GPURUN_TIMELINE";

static ORIGIN: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock if [`VAR`] is set; call first in `main`.
pub fn start() {
    ORIGIN.get_or_init(|| std::env::var_os(VAR).map(|_| Instant::now()));
}

/// Prints `phase` with the time since [`start`], if the timeline is on.
pub fn mark(phase: &str) {
    if let Some(Some(origin)) = ORIGIN.get() {
        eprintln!("gpurun: timeline: {:9.3} ms  {phase}", origin.elapsed().as_secs_f64() * 1e3);
    }
}

/// Whether the timeline is on.
pub fn is_on() -> bool {
    matches!(ORIGIN.get(), Some(Some(_)))
}
