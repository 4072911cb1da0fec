//! The CPU harness's host: the launcher's ring server ([`crate::host_ring`])
//! with a sink that keeps every write, so the runtime's tests check what the
//! real host would have printed, and the launcher's host calls (files,
//! directories, stdin: [`HostCalls`]) under the machine's policy.

use std::prelude::rust_2024::*;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use crate::host_ring::calls::HostCalls;
use crate::host_ring::server::{Server, Shared, Sink};
use crate::host_ring::{RingError, RingView};
use rt_abi::protocol::{OP_ABORT, OP_EXIT, ring_bytes};

/// One completed `write` call of a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostWrite {
    pub thread: u32,
    pub fd: u32,
    pub bytes: Vec<u8>,
}

/// Everything the host received.
#[derive(Debug, Default)]
pub struct Received {
    pub writes: Vec<HostWrite>,
    pub exit: Option<(u32, i32)>,
    pub nops: u64,
    /// Random bytes sent in `OP_RANDOM` replies.
    pub random_bytes: u64,
    /// Host calls (`OP_CALL`) served.
    pub calls: u64,
    /// The protocol violation that stopped the server, if one did.
    pub errors: Vec<String>,
}

/// Keeps each whole write with its thread.
#[derive(Clone, Default)]
struct Keep(Arc<Mutex<Vec<HostWrite>>>);

impl Sink for Keep {
    fn write(&mut self, thread: u32, fd: u8, bytes: &[u8]) {
        self.0.lock().unwrap().push(HostWrite { thread, fd: fd.into(), bytes: bytes.to_vec() });
    }
}

/// The ring at `base` (`ring_bytes(capacity)` zeroed, 8-aligned bytes that
/// outlive every use) as the server's atomic words.
fn words<'a>(base: *mut u8, capacity: u32) -> &'a [AtomicU64] {
    // SAFETY: the caller's buffer: live, aligned, `ring_bytes` long, and
    // only ever accessed atomically by the host.
    unsafe { std::slice::from_raw_parts(base as *const AtomicU64, ring_bytes(capacity) / 8) }
}

/// Writes the header and frees every slot, as the launcher does.
pub fn init_ring(base: *mut u8, capacity: u32) -> Result<(), RingError> {
    RingView::new(words(base, capacity), capacity)?.init();
    Ok(())
}

/// Serves the ring at `base` for `num_threads` warps, and their host calls
/// with `calls`, until `shared.stop` is set, then handles what was published.
pub fn serve(base: *mut u8, capacity: u32, num_threads: u32, calls: HostCalls, shared: &Shared) -> Received {
    let keep = Keep::default();
    let view = match RingView::new(words(base, capacity), capacity) {
        Ok(v) => v,
        Err(e) => return Received { errors: vec![e.to_string()], ..Received::default() },
    };
    let report = Server::new(view, num_threads, keep.clone()).with_calls(calls).serve(shared);
    let writes = std::mem::take(&mut *keep.0.lock().unwrap());
    Received {
        writes,
        exit: report.exit.map(|e| (if e.aborted { OP_ABORT } else { OP_EXIT }, e.code)),
        nops: report.nops,
        random_bytes: report.random_bytes,
        calls: report.calls,
        errors: report.error.map(|e| e.to_string()).into_iter().collect(),
    }
}
