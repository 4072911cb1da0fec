//! Thread stacks in global memory: what the vendor crates need to report a
//! stack overflow.
//!
//! On NVIDIA the nvptx linker moves every function's frame from private
//! `.local` memory to a per-lane stack in global memory (see
//! `targets/nvptx-linker/src/shared_stack.rs`), so a pointer to a local is
//! valid in every thread. Each frame checks the lane's limit; below it, the
//! vendor's overflow handler lowers the limit into the lane's reserve
//! ([`STACK_RESERVE_BYTES`](crate::protocol::STACK_RESERVE_BYTES)) and calls
//! [`overflow`], which reports like std and aborts.
use core::fmt::Write;

use crate::hal::Hal;
use crate::lanes::abort_with;
use crate::protocol::LANE_STACK_BYTES;
use crate::runtime::Runtime;
use crate::start::Msg;

/// What a stack overflow on lane `lane` of the calling thread prints.
pub(crate) fn overflow_message(msg: &mut Msg, name: &[u8], lane: u32) {
    let name = core::str::from_utf8(name).unwrap_or("<non-UTF-8 name>");
    let name = if name.is_empty() { "<unnamed>" } else { name };
    let _ = if lane == 0 {
        // std's words (sys::stack_overflow), then how to get a larger stack.
        write!(
            msg,
            "\nthread '{name}' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n\
             gpu runtime: raise the stack with `gpurun run --stack-size` or `thread::Builder::stack_size`\n"
        )
    } else {
        write!(
            msg,
            "\ngpu runtime: lane {lane} of thread '{name}' has overflowed its {LANE_STACK_BYTES}-byte lane stack \
             (gpu_lanes::for_each_lane work)\nfatal runtime error: stack overflow, aborting\n"
        )
    };
}

/// Reports a stack overflow of the calling lane on stderr and aborts the
/// program (exit code 134, as std's abort on a host). Runs in the lane's
/// stack reserve.
#[cold]
#[inline(never)]
pub fn overflow<H: Hal>(rt: &Runtime) -> ! {
    let me = rt.my_slot::<H>();
    let len = (me.name_len.load(crate::primitive::Ordering::Relaxed) as usize).min(crate::slot::NAME_BYTES);
    // SAFETY: `name` is written only by this warp's leader lane (set_name);
    // a lane reading it while the leader renames would at worst print a
    // mixed name, and the leader is parked while lanes run.
    let name = unsafe { &(&*me.name.get())[..len] };
    let mut msg = Msg::new();
    overflow_message(&mut msg, name, H::lane_id());
    abort_with::<H>(rt, &msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_messages_follow_std() {
        let mut m = Msg::new();
        overflow_message(&mut m, b"worker-3", 0);
        let s = core::str::from_utf8(m.as_bytes()).unwrap();
        assert!(s.starts_with("\nthread 'worker-3' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n"), "{s}");
        let mut m = Msg::new();
        overflow_message(&mut m, b"", 5);
        let s = core::str::from_utf8(m.as_bytes()).unwrap();
        assert!(s.contains("lane 5 of thread '<unnamed>' has overflowed its 8192-byte lane stack"), "{s}");
    }
}
