//! Thread stacks in global memory: what the vendor crates share.
//!
//! The GPU linker (`gpu-ld/src/shared_stack.rs`, which states the
//! contract) moves every function's frame from private memory (NVIDIA
//! `.local`, AMD scratch) to a per-lane stack in global memory, so a pointer
//! to a local is valid in every thread. Each frame checks the lane's limit;
//! below it, the vendor's overflow handler ([`overflow_on_slot`]) lowers the
//! limit into the lane's reserve
//! ([`STACK_RESERVE_BYTES`](rt_abi::protocol::STACK_RESERVE_BYTES)) and calls
//! [`overflow`], which reports like std and aborts.
//!
//! Frames are one of two stacks a lane uses: the driver's per-lane *call
//! stack* (private memory, `LaunchBlock::call_stack_size` bytes) still holds
//! return addresses and saved registers, about 16 bytes a call level. Every
//! function in a recursive cycle checks it too (the linker's
//! `call_stack.rs`): below [`LaneStack`]'s floor it calls the same overflow
//! handler, so deep recursion ends with std's report, not an illegal
//! address.
//!
//! The lane's current stack pointer, limit and call-stack floor (and, on
//! AMD, unwinding's exception word) are a [`LaneStack`] in the kernel's own
//! private frame. Its generic (flat) address is the same in
//! every lane (each lane's private window maps it to its own memory), so one
//! global, the vendor crate's `__gpu_stack_slot`, tells every rewritten
//! function where its lane's pair is. Every lane stores it at kernel start
//! ([`enter_kernel`]) before anything reads it, so the linker may keep one
//! copy per block instead (NVIDIA: in shared memory, which no fence empties).
//!
//! With the linker's argument protocol (NVIDIA, `GPU_STACK_ARGS=1`: reading
//! and writing the pair on every call costs ~100 ns a call) the rewritten
//! functions pass the stack pointer and limit to each other as arguments.
//! The pair is then current only where code the linker does not rewrite
//! calls in (the kernel, the overflow handler, which a failing frame tells
//! its stack pointer first) and in a function that refers to the slot
//! itself, which the linker makes publish its frame in the pair and read
//! the pair before each call: [`call_on_stack`]'s switch reaches the entry
//! it calls that way. Code that reads the pair's stack pointer must be one
//! of those.
use core::fmt::Write;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicPtr, Ordering::Relaxed};

use crate::hal::Hal;
use crate::lanes::abort_once_with;
use rt_abi::protocol::{
    ABI_VERSION, CALL_STACK_RESERVE_BYTES, LANE_STACK_BYTES, LAUNCH_MAGIC, LaunchBlock, STACK_RESERVE_BYTES, lane_stack,
};
use crate::runtime::Runtime;
use crate::start::Msg;
use rt_abi::abi::Entry;

/// A lane's `[stack pointer, limit, call-stack floor, exception]`: frames
/// must stay at or above the limit, and the driver's call stack pointer
/// ([`Hal::call_stack_pointer`]) at or above the floor (0: unchecked).
/// Where the call stack grows up ([`Hal::CALL_STACK_GROWS_UP`], AMD) the
/// third word is its ceiling instead (`u64::MAX`: unchecked).
/// Bit 0 of the limit is set once the lane is reporting an overflow.
/// The fourth is the lane's exception in flight where the vendor keeps
/// unwinding's word here ([`Hal::unwind_word`], AMD: [`LANE_EXCEPTION`]);
/// null from the kernel's start.
pub type LaneStack = [u64; 4];

/// The index of the exception word in a [`LaneStack`].
pub const LANE_EXCEPTION: usize = 3;

/// Words of the per-lane fallback stack in the kernel frame, used when the
/// launch has no stacks region (a launcher that does not know shared
/// stacks) and by lanes that run no frames: enough to check the launch
/// block and report the mismatch.
pub const FALLBACK_STACK_WORDS: usize = 256;

/// The launch block, if there is one and it is of this runtime's version.
#[inline(always)]
fn known_launch<'a>(launch: *const LaunchBlock) -> Option<&'a LaunchBlock> {
    // SAFETY: the launch block is valid for the program (or null).
    let lb = unsafe { launch.as_ref() }?;
    (lb.magic == LAUNCH_MAGIC && lb.version == ABI_VERSION).then_some(lb)
}

/// The thread table's address of a launch block of this runtime's version,
/// else 0 (the kernel entry's copy for `Hal::thread_table`, stored before
/// the block is checked).
#[inline(always)]
pub fn launch_thread_table(launch: *const LaunchBlock) -> u64 {
    known_launch(launch).map_or(0, |lb| lb.threads)
}

/// `(bottom, bytes)` of the calling lane's region of `LaunchBlock::stacks`,
/// if the launch has one and the lane runs frames (lane ids below
/// [`Hal::PARALLEL_LANES`]: every lane on NVIDIA and AMD).
fn lane_region<H: Hal>(launch: *const LaunchBlock) -> Option<(u64, u64)> {
    let lb = known_launch(launch)?;
    let lane = H::lane_id();
    // A layout for another lane count would put this lane in another's
    // stack: the fallback stack reports the mismatch (`start::check`).
    if lb.stacks == 0 || lb.stack_lanes != H::PARALLEL_LANES || lane >= H::PARALLEL_LANES {
        return None;
    }
    let warp = H::thread_index(lb.block_warps.max(1));
    let (offset, bytes) = lane_stack(lb.stack_size, H::PARALLEL_LANES, warp, lane);
    Some((lb.stacks + offset, bytes))
}

/// Points the calling lane's `pair` at its stack: its region of
/// `LaunchBlock::stacks`, or `fallback` (private) when there is none, and
/// publishes `pair`'s address in `slot` for the rewritten functions.
///
/// The address is published first, with no exception in flight: the
/// functions that find the lane's region are not always inlined, and
/// under unwinding each may check the exception word after its calls
/// (AMD reads it through `slot`: [`Hal::unwind_word`]).
///
/// # Safety
/// Called at kernel start by every lane, before any rewritten function
/// and any call, with `pair` and `fallback` in the kernel's frame (alive
/// until it returns; the pair is used only through `slot` afterwards);
/// `launch` is the kernel's launch block or null; `slot` is the vendor's
/// `__gpu_stack_slot`.
#[inline(always)]
pub unsafe fn enter_kernel<H: Hal>(
    slot: &AtomicPtr<LaneStack>,
    pair: *mut LaneStack,
    fallback: &mut MaybeUninit<[u64; FALLBACK_STACK_WORDS]>,
    launch: *const LaunchBlock,
) {
    // SAFETY: the caller's `pair`, in the kernel's frame; a raw pointer
    // only, as the calls below may read it through `slot`.
    unsafe { *pair = [0; 4] };
    // Every lane stores the same address; each lane's later loads see it.
    slot.store(pair, Relaxed);
    let fallback_bytes = (FALLBACK_STACK_WORDS * 8) as u64;
    let (bottom, bytes) = lane_region::<H>(launch).unwrap_or((fallback.as_mut_ptr() as u64, fallback_bytes));
    let reserve = STACK_RESERVE_BYTES.min(bytes / 2);
    let floor = call_stack_floor::<H>(launch);
    // SAFETY: as above; the exception word stays null.
    unsafe { *pair = [bottom + bytes, bottom + reserve, floor, 0] };
}

/// The lowest call-stack pointer a recursive function may run at: the
/// calling lane's position now (the kernel's entry, near the top of the
/// driver's call stack, which grows down) less the launch's call stack,
/// plus [`CALL_STACK_RESERVE_BYTES`] for the overflow report. 0 (no check)
/// when the launcher did not give the size or the target has no pointer.
///
/// Where the call stack grows up (AMD) it is the highest offset instead:
/// the lane's private segment holds `call_stack_size` bytes from offset 0
/// (the kernel's own frame first), less the reserve; `u64::MAX` (no check)
/// without a size.
#[inline(always)]
fn call_stack_floor<H: Hal>(launch: *const LaunchBlock) -> u64 {
    let size = known_launch(launch).map_or(0, |lb| lb.call_stack_size);
    if H::CALL_STACK_GROWS_UP {
        return if size == 0 { u64::MAX } else { size - CALL_STACK_RESERVE_BYTES.min(size / 2) };
    }
    let top = H::call_stack_pointer();
    if size == 0 || top == 0 {
        return 0;
    }
    top.saturating_sub(size) + CALL_STACK_RESERVE_BYTES.min(size / 2)
}

/// The body of the vendor's `__gpu_stack_overflow`, which the linker's
/// frames call when a frame would go below the limit (it is not rewritten
/// itself): moves the limit into the reserve (once) so the report can run,
/// then reports and aborts. A second overflow, in the report, calls `trap`.
///
/// Always inlined into the handler, which the linker never checks: were it
/// a function of its own, it would be on the report's call-graph cycle and
/// check the call stack's depth before lowering the floor, overflowing
/// again, forever.
///
/// `known` is which stack ran out where the caller knows (AMD: the depth
/// check calls a handler of its own); `None` asks the call stack's pointer.
#[inline(always)]
pub fn overflow_on_slot<H: Hal>(rt: &Runtime, slot: &AtomicPtr<LaneStack>, known: Option<Exhausted>, trap: fn() -> !) -> ! {
    let pair = slot.load(Relaxed);
    // SAFETY: the rewritten caller just read this lane's pair through the
    // same address; only this lane uses it.
    let pair = unsafe { &mut *pair };
    if pair[1] & 1 != 0 {
        // The report itself overflowed the reserve: stop without it.
        trap()
    }
    // Below the floor: the call stack ran out (recursion), not the frames.
    let which = known.unwrap_or(if H::call_stack_pointer() < pair[2] { Exhausted::CallStack } else { Exhausted::Frames });
    pair[1] = (pair[1] - STACK_RESERVE_BYTES.min(pair[1])) | 1;
    // The report's own calls may go past the floor (ceiling), into the reserve.
    pair[2] = if H::CALL_STACK_GROWS_UP {
        pair[2].saturating_add(CALL_STACK_RESERVE_BYTES)
    } else {
        pair[2].saturating_sub(CALL_STACK_RESERVE_BYTES)
    };
    overflow::<H>(rt, which)
}

/// `Hal::call_on_stack` where frames live in global memory: swaps the
/// lane's pair (through `slot`) to `stack` for the call. It refers to the
/// slot in the function that calls `entry`, so under the linker's argument
/// protocol that call reads the swapped pair. Never inlined: the linker
/// reads the pair before every call of a function that refers to the slot,
/// and inlined into the thread loop (`run_leader`, where `main` is inlined
/// too) that was ~80 calls and made a std spawn+join 5 % slower on an H200.
///
/// # Safety
/// As `Hal::call_on_stack`; called on a lane whose pair is set up
/// ([`enter_kernel`]) with the vendor's `__gpu_stack_slot`.
#[inline(never)]
pub unsafe fn call_on_stack(slot: &AtomicPtr<LaneStack>, entry: Entry, data: *mut u8, stack: *mut u8, len: usize) {
    let pair = slot.load(Relaxed);
    // SAFETY: this lane's pair (set at kernel start); only this lane uses it.
    let saved = unsafe { *pair };
    let bottom = stack as u64;
    let reserve = STACK_RESERVE_BYTES.min(len as u64 / 2);
    // SAFETY: as above. The call stack does not change: its floor stays.
    unsafe { *pair = [bottom + len as u64, bottom + reserve, saved[2], saved[LANE_EXCEPTION]] };
    // SAFETY: the caller's contract.
    unsafe { entry(data) };
    // SAFETY: as above; the frames above ours are gone.
    unsafe { *pair = saved };
}

/// Which of a lane's two stacks ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// The frames' stack in global memory (`--stack-size`).
    Frames,
    /// The driver's call stack (`--call-stack-size`): recursion too deep.
    CallStack,
}

/// What a stack overflow on lane `lane` of the calling thread prints.
pub(crate) fn overflow_message(msg: &mut Msg, name: &[u8], lane: u32, which: Exhausted) {
    let name = core::str::from_utf8(name).unwrap_or("<non-UTF-8 name>");
    let name = if name.is_empty() { "<unnamed>" } else { name };
    let _ = if lane == 0 {
        // std's words (sys::stack_overflow), then how to get a larger stack.
        let how = match which {
            Exhausted::Frames => "raise the stack with `gpurun run --stack-size` or `thread::Builder::stack_size`",
            Exhausted::CallStack => "recursion used up the call stack: raise it with `gpurun run --call-stack-size`",
        };
        write!(
            msg,
            "\nthread '{name}' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n\
             gpu runtime: {how}\n"
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
/// stack reserve. Only the program's first overflow is reported: threads
/// and lanes that overflow together (many running the same recursion)
/// would otherwise print the same report hundreds of times; the others wait
/// for the first one's abort to end them.
#[cold]
#[inline(never)]
#[rustc_nounwind] // ends the program; see the crate docs
pub fn overflow<H: Hal>(rt: &Runtime, which: Exhausted) -> ! {
    let me = rt.my_slot::<H>();
    let len = (me.name_len.load(crate::primitive::Ordering::Relaxed) as usize).min(crate::slot::NAME_BYTES);
    // SAFETY: `name` is written only by this warp's leader lane (set_name);
    // a lane reading it while the leader renames would at worst print a
    // mixed name, and the leader is parked while lanes run.
    let name = unsafe { &(&*me.name.get())[..len] };
    let mut msg = Msg::new();
    overflow_message(&mut msg, name, H::lane_id(), which);
    abort_once_with::<H>(rt, &msg, &rt.overflow_reported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_messages_follow_std() {
        let mut m = Msg::new();
        overflow_message(&mut m, b"worker-3", 0, Exhausted::Frames);
        let s = core::str::from_utf8(m.as_bytes()).unwrap();
        assert!(s.starts_with("\nthread 'worker-3' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n"), "{s}");
        let mut m = Msg::new();
        overflow_message(&mut m, b"", 5, Exhausted::Frames);
        let s = core::str::from_utf8(m.as_bytes()).unwrap();
        assert!(s.contains("lane 5 of thread '<unnamed>' has overflowed its 8192-byte lane stack"), "{s}");
        let mut m = Msg::new();
        overflow_message(&mut m, b"walker", 0, Exhausted::CallStack);
        let s = core::str::from_utf8(m.as_bytes()).unwrap();
        assert!(s.starts_with("\nthread 'walker' has overflowed its stack\n"), "{s}");
        assert!(s.contains("recursion used up the call stack: raise it with `gpurun run --call-stack-size`"), "{s}");
    }
}
