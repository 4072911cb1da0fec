//! What every warp's leader lane does at kernel start (the vendor crates'
//! `start.rs` call this from their kernel entry, the CPU harness from each
//! warp thread).

use core::fmt::Write;

use rt_abi::abi::EXIT_ABORT;
use crate::hal::Hal;
use crate::primitive::{AtomicU32, Ordering::Relaxed};
use crate::process::end_program;
use rt_abi::protocol::{ABI_VERSION, LAUNCH_MAGIC, LaunchBlock, OP_ABORT, OP_EXIT, THREAD_RUNNING};
use crate::ring::{self, Packet, RawRing};
use crate::runtime::{MAX_WAIT_SLEEP_NS, Runtime, idle_sleep_of, slot_at};
use crate::threads::idle_loop;

/// Runs the calling warp: warp 0 initialises the runtime, runs `main` and
/// ends the program with its exit code; the other warps run the idle loop.
/// Returns when the warp is done (the kernel entry then lets all lanes
/// finish). A launch block that does not match this code object is
/// reported by warp 0 on stderr and with `OP_ABORT`.
///
/// # Safety
/// Call once per warp, on its leader lane, with the kernel's launch block
/// (valid for the whole program) and `rt` the program's runtime.
pub unsafe fn warp_main<H: Hal>(
    rt: &Runtime,
    launch: *const LaunchBlock,
    main: impl FnOnce() -> i32,
) {
    if launch.is_null() {
        return;
    }
    // SAFETY: the caller passes the launcher's launch block.
    let lb = unsafe { &*launch };
    let index = H::thread_index(lb.block_warps.max(1));
    let mut msg = Msg::new();
    if !check::<H>(lb, &mut msg) {
        if index == 0 {
            // SAFETY: the launch block's ring address is checked by `RawRing::new`.
            unsafe { report_and_abort::<H>(lb, &msg) };
        }
        return;
    }
    if index >= lb.num_threads {
        return;
    }
    // SAFETY: the table has `num_threads` slots (checked non-empty above).
    let me = unsafe { slot_at(lb.threads, index) };
    if index == 0 {
        // SAFETY: warp 0, before main: no other warp reads the runtime until
        // a spawn hands it a thread.
        unsafe { rt.init::<H>(lb) };
        // SAFETY: a static string; the runtime is initialised.
        unsafe { crate::threads::set_name::<H>(rt, b"main".as_ptr(), 4) };
        me.state.store(THREAD_RUNNING, Relaxed);
        let code = main();
        rt.tls.run_dtors::<H>(me);
        end_program::<H>(rt, OP_EXIT, code);
    } else {
        // SAFETY: our own slot; spawns publish the initialised runtime.
        unsafe { idle_loop::<H>(rt, index, me, idle_sleep_of(lb)) };
    }
}

/// Whether `warp_main` accepts this launch block (the lanes' side of the
/// same decision, see [`crate::lanes::lane_slot`]).
pub(crate) fn launch_ok<H: Hal>(lb: &LaunchBlock) -> bool {
    check::<H>(lb, &mut Msg::new())
}

/// Checks the launch block against this code object; explains a mismatch
/// as one stderr line in `msg`.
#[rustc_nounwind] // see the crate docs
fn check<H: Hal>(lb: &LaunchBlock, msg: &mut Msg) -> bool {
    let _ = msg.write_str("gpu runtime: launch rejected: ");
    let _ = if lb.magic != LAUNCH_MAGIC {
        write!(
            msg,
            "bad launch block magic {:#x} (expected {:#x}): not a gpu-std launcher?",
            lb.magic, LAUNCH_MAGIC
        )
    } else if lb.version != ABI_VERSION {
        write!(
            msg,
            "launch block version {} but this program's runtime speaks version {}: rebuild one of them",
            lb.version, ABI_VERSION
        )
    } else if lb.lanes != H::LANES {
        write!(
            msg,
            "the launcher sized the grid for {}-lane warps but this code object runs {}-lane warps: launch it with {} lanes per warp",
            lb.lanes,
            H::LANES,
            H::LANES
        )
    } else if lb.stacks != 0 && lb.stack_lanes != H::PARALLEL_LANES {
        write!(
            msg,
            "the launcher laid out stacks for {} lanes per warp but this code object runs frames on {}: launcher and runtime disagree, rebuild one of them",
            lb.stack_lanes,
            H::PARALLEL_LANES
        )
    } else if lb.num_threads == 0 || lb.threads == 0 {
        write!(
            msg,
            "the launch has no thread table (num_threads = {})",
            lb.num_threads
        )
    } else {
        return true;
    };
    let _ = msg.write_str("\n");
    false
}

/// Writes `msg` to stderr and aborts (exit code 134).
///
/// # Safety
/// `lb.ring` is 0 or the launch's ring.
#[inline(never)]
#[rustc_nounwind] // ends the program; see the crate docs
unsafe fn report_and_abort<H: Hal>(lb: &LaunchBlock, msg: &Msg) {
    // A launcher of another version may give no room; the report's packets
    // are the ring's first two, which never look at it (a ring has at least
    // two slots).
    let no_room = [0u64; 2];
    let room = if lb.ring_room != 0 { lb.ring_room } else { no_room.as_ptr() as u64 };
    // SAFETY: the caller's contract; `room` is the launch's or one that the
    // first `capacity` tickets do not touch.
    let ring = unsafe { RawRing::new(lb.ring, &raw const lb.ring_tickets, room) };
    if !ring.is_usable() {
        return;
    }
    let wait = AtomicU32::new(0);
    ring::write::<H, _>(&ring, &wait, MAX_WAIT_SLEEP_NS, 0, 2, msg.as_bytes());
    let p = Packet {
        op: OP_ABORT,
        thread: 0,
        flags: 0,
        arg0: EXIT_ABORT as u64,
        arg1: 0,
    };
    ring::send::<H, _>(&ring, &wait, MAX_WAIT_SLEEP_NS, &p, &[]);
}

/// A fixed-size message buffer (no allocator yet); truncates when full.
pub struct Msg {
    buf: [u8; 256],
    len: usize,
}

impl Msg {
    pub fn new() -> Self {
        Msg {
            buf: [0; 256],
            len: 0,
        }
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Write for Msg {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
