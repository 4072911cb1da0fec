//! The launch block and the host-call ring: the one definition both ends use.
//!
//! The device side (the runtime, compiled into the GPU program's `std`) and the
//! host side (the `launcher`) both compile this module, so a layout change is
//! one edit. Everything here is `#[repr(C)]` with compile-time size checks.
//!
//! # The launch
//! The launcher allocates a [`LaunchBlock`] in device memory, fills it in, and
//! passes its address as the only parameter of the kernel [`KERNEL_ENTRY`](crate::symbols::KERNEL_ENTRY).
//! It also allocates:
//! - the thread table: `num_threads` × [`THREAD_SLOT_BYTES`] of zeroed device
//!   memory; each slot starts with a [`ThreadSlotPublic`] the host may read
//!   while the kernel runs (for timeout reports);
//! - the device heap: `heap_size` bytes of device memory;
//! - the ring: a [`RingHeader`] followed by `capacity` slots of
//!   [`RING_SLOT_BYTES`] each, in host-mapped memory (CUDA: mapped pinned
//!   memory; HIP: fine-grained host memory) so that system-scope atomics reach
//!   the host;
//! - the argument and environment tables: arrays of [`StrRef`].
//!
//! # The ring (who owns a slot when)
//! With `cap` slots (a power of two ≥ 2), ticket `t` uses slot `t % cap`.
//! The host consumes tickets in order, from 0.
//! - A producer takes a ticket with a `fetch_add(1)` on
//!   [`LaunchBlock::ring_tickets`] (device memory, not the ring's host
//!   memory: see there).
//! - The slot is free for ticket `t` once ticket `t - cap` is done with it:
//!   the host has consumed it ([`RingHeader::consumed`] `> t - cap`) and, if
//!   it asked for a reply, its producer has read the reply. The producer
//!   learns both from [`LaunchBlock::ring_room`], in device memory, and
//!   reads `consumed` across PCIe only when the room's copy is too old. It
//!   waits (sleeping) until the slot is free: that is the backpressure, so
//!   nothing is ever dropped or overwritten.
//! - The producer fills the slot and publishes it with a system-scope
//!   release store of `seq = t + 1`; the host reads `seq` with acquire, then
//!   the packet, and validates every field before use.
//! - The host, once it has copied the packet, stores `consumed = t + 1`
//!   (release). For a packet with [`FLAG_REPLY`] it then writes the reply
//!   into the slot's payload and stores `reply_seq = t + 1` (release); the
//!   producer reads the reply and clears its mark in the room (release), so
//!   the slot's next producer does not overwrite an unread reply.

/// Longest idle sleep when [`LaunchBlock::idle_sleep_ns`] is 0.
pub const DEFAULT_IDLE_SLEEP_NS: u32 = 1000;

/// `LaunchBlock::magic`: "GPUT" little endian.
pub const LAUNCH_MAGIC: u32 = 0x5455_5047;
/// Bumped on every incompatible change of this module.
pub const ABI_VERSION: u32 = 8;

/// Lanes of each NVIDIA warp that run frames, and so get a stack in
/// [`LaunchBlock::stacks`]: all 32 (the other 31 run `gpu_lanes` work while
/// the leader waits). rt-nvptx's `Hal::PARALLEL_LANES`; the launcher lays
/// the stacks out with it and says so in [`LaunchBlock::stack_lanes`].
pub const NVIDIA_FRAME_LANES: u32 = 32;
/// Warps in an NVIDIA block at most (CUDA's 1,024 threads): the entries of
/// each per-warp table rt-nvptx keeps in a block's shared memory
/// (`__gpu_warp_private`; the code-object tests check its size by it).
pub const NVIDIA_MAX_BLOCK_WARPS: usize = 32;
/// Lanes of each AMD wavefront that run frames: all of them, 64 (gfx9xx)
/// or 32 (gfx10+), the wave size (`gpu_lanes` work turns them all on while
/// the leader waits in the call). rt-amdgpu's `Hal::PARALLEL_LANES`.
pub const fn amd_frame_lanes(wave: u32) -> u32 {
    wave
}

/// Everything the device needs from the host, passed by address to the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchBlock {
    /// [`LAUNCH_MAGIC`].
    pub magic: u32,
    /// [`ABI_VERSION`].
    pub version: u32,
    /// Warps (threads) in the thread table; the launch has at least this many.
    pub num_threads: u32,
    /// Lanes per warp the launcher computed the grid with; the device checks it
    /// against its own compile-time lane count and reports a mismatch.
    pub lanes: u32,
    /// Device address of the [`RingHeader`] (host-mapped memory).
    pub ring: u64,
    /// Device address and size of the heap.
    pub heap_base: u64,
    pub heap_size: u64,
    /// Device address of the thread table (`num_threads` × [`THREAD_SLOT_BYTES`], zeroed).
    pub threads: u64,
    /// Stack bytes of each warp's leader lane: the stack of the thread the
    /// warp runs. With [`stacks`](Self::stacks), a `Builder::stack_size`
    /// above this gets a stack from the heap; without, it is refused.
    pub stack_size: u64,
    /// Program arguments: `argc` [`StrRef`]s at `argv` (device-readable).
    pub argc: u64,
    pub argv: u64,
    /// Environment: `envc` [`StrRef`]s of `KEY=VALUE` at `envp`.
    pub envc: u64,
    pub envp: u64,
    /// Host wall clock at launch, nanoseconds since the Unix epoch.
    pub epoch_unix_ns: u64,
    /// Idle policy: longest sleep of an idle warp between polls, in ns
    /// (0: [`DEFAULT_IDLE_SLEEP_NS`]).
    pub idle_sleep_ns: u64,
    /// Seed for `HashMap`'s random keys (host randomness).
    pub random_seed: u64,
    /// Bit flags ([`LAUNCH_FLAG_*`](LAUNCH_FLAG_TRACE)).
    pub flags: u64,
    /// Warps per block (workgroup) of the launch grid (1-D, every block the
    /// same size). AMD kernels cannot read the workgroup size from Rust, so
    /// they compute their warp index as `block × block_warps + warp in
    /// block`; 0 is taken as 1. NVIDIA reads `%ntid` and checks this if set.
    pub block_warps: u32,
    /// Lanes per warp [`stacks`](Self::stacks) is laid out for
    /// ([`NVIDIA_FRAME_LANES`], [`amd_frame_lanes`]); the device checks it
    /// against its `Hal::PARALLEL_LANES` when `stacks` is set and refuses
    /// the launch on a mismatch (each lane would find another's stack).
    pub stack_lanes: u32,
    /// Device address of the lanes' stacks in global memory, laid out by
    /// [`lane_stack`] for the lanes that run frames (`Hal::PARALLEL_LANES`:
    /// all 32 on NVIDIA, the whole wave on AMD), for code objects whose frames
    /// live there (linked by `gpu-ld` with shared stacks); 0 for the others
    /// (their frames are in private memory, sized by the driver's stack
    /// limit).
    pub stacks: u64,
    /// The driver's per-lane call stack (`CU_LIMIT_STACK_SIZE`,
    /// `hipLimitStackSize`) in bytes, which holds return addresses and
    /// saved registers (frames are in [`stacks`](Self::stacks)); 0 when the
    /// launcher does not say. Recursive functions check their depth against
    /// it (see `rt_common::stack`).
    pub call_stack_size: u64,
    /// The ring's ticket counter: producers take ticket `t` with an atomic
    /// `fetch_add(1)` on this word; the host writes 0 and never reads it. It
    /// lives here, in device memory, and not in the ring's host memory: there
    /// every ticket was an atomic across PCIe, about 1 µs each and never
    /// more than about 1 M a second for all warps together on an H100
    /// (`xtask/probes/memory_floors.py`), which capped every host call and
    /// `println!` of the program; here a ticket costs the device's L2.
    pub ring_tickets: u64,
    /// Device address of the ring's room: [`ring_room_bytes`]`(capacity)`
    /// of zeroed device memory, where producers find out whether a slot is
    /// free without reading the ring's host memory (see [`RingRoom`]).
    pub ring_room: u64,
    /// The program's executable, what `env::current_exe` returns: the
    /// absolute path of the code object the launcher loaded (`len` 0: none
    /// known). Its bytes are device-readable for the whole program.
    pub exe: StrRef,
}

/// Stack bytes of each lane but the leader: they run the lane loop and
/// `gpu_lanes::for_each_lane` work, not a whole thread.
pub const LANE_STACK_BYTES: u64 = 8 << 10;

/// The bottom of every stack kept for the overflow report: a frame may not
/// go below it, and the report runs in it.
pub const STACK_RESERVE_BYTES: u64 = 2 << 10;

/// The bottom of the driver's call stack kept for the overflow report (its
/// calls' register saves), and for the frame of the recursive function
/// whose check finds the stack used up (ptxas's frames of real code stay
/// under 1 KiB; the runtime's entry frames are above the recorded top).
pub const CALL_STACK_RESERVE_BYTES: u64 = 6 << 10;

/// Bytes of the stack region of one warp of `lanes` lanes.
pub const fn warp_stacks_bytes(stack_size: u64, lanes: u32) -> u64 {
    stack_size + (lanes as u64 - 1) * LANE_STACK_BYTES
}

/// `(offset, bytes)` of lane `lane` of warp `warp` in the stacks region: each
/// warp has its leader's `stack_size` bytes, then its other lanes'
/// [`LANE_STACK_BYTES`] each.
pub const fn lane_stack(stack_size: u64, lanes: u32, warp: u32, lane: u32) -> (u64, u64) {
    let base = warp as u64 * warp_stacks_bytes(stack_size, lanes);
    if lane == 0 {
        (base, stack_size)
    } else {
        (base + stack_size + (lane as u64 - 1) * LANE_STACK_BYTES, LANE_STACK_BYTES)
    }
}

/// `LaunchBlock::flags`: the runtime may write extra diagnostics to stderr.
pub const LAUNCH_FLAG_TRACE: u64 = 1;

/// A byte string in device-readable memory.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrRef {
    pub ptr: u64,
    pub len: u64,
}

/// Bytes per thread-table slot. The runtime's private slot state follows the
/// [`ThreadSlotPublic`] header and must fit.
pub const THREAD_SLOT_BYTES: usize = 1024;

/// The first bytes of a thread-table slot: what the host reads for reports.
/// Written only by the device; the host only reads (and tolerates garbage).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ThreadSlotPublic {
    /// One of the `THREAD_*` states.
    pub state: u32,
    /// One of the `WAIT_*` reasons, while the thread is blocked.
    pub wait: u32,
    /// Bytes of `name` in use.
    pub name_len: u32,
    pub _pad: u32,
    /// The thread's name, truncated.
    pub name: [u8; 48],
}

/// The warp is idle, sleeping in the idle loop; `spawn` may claim it.
pub const THREAD_FREE: u32 = 0;
/// A spawner has claimed the warp and is filling in the closure.
pub const THREAD_CLAIMED: u32 = 1;
/// The warp runs a thread's closure (or `main`, for warp 0).
pub const THREAD_RUNNING: u32 = 2;
/// The closure returned; the thread waits to be joined.
pub const THREAD_FINISHED: u32 = 3;
/// The warp has left the kernel (program end).
pub const THREAD_EXITED: u32 = 4;

pub const WAIT_NONE: u32 = 0;
pub const WAIT_JOIN: u32 = 1;
/// Blocked in a futex wait: a `Mutex`, `Condvar`, `RwLock`, `Once`, channel.
pub const WAIT_LOCK: u32 = 2;
pub const WAIT_SLEEP: u32 = 3;
pub const WAIT_PARK: u32 = 4;
/// Waiting for room in the host ring (backpressure) or a host reply.
pub const WAIT_HOST: u32 = 5;

/// Human name of a `WAIT_*` value, for reports.
pub fn wait_reason_name(wait: u32) -> &'static str {
    match wait {
        WAIT_NONE => "running",
        WAIT_JOIN => "blocked in join",
        WAIT_LOCK => "blocked on a lock",
        WAIT_SLEEP => "sleeping",
        WAIT_PARK => "parked",
        WAIT_HOST => "waiting for the host",
        _ => "unknown state",
    }
}

/// `RingHeader::magic`: "RING".
pub const RING_MAGIC: u32 = 0x474E_4952;
/// Bytes per ring slot, header included.
pub const RING_SLOT_BYTES: usize = 256;
/// Bytes of payload per slot.
pub const RING_PAYLOAD_BYTES: usize = RING_SLOT_BYTES - core::mem::size_of::<RingSlotHeader>();
/// Offset of slot 0 from the start of the ring.
pub const RING_SLOTS_OFFSET: usize = 256;

/// Total bytes of a ring with `capacity` slots.
pub const fn ring_bytes(capacity: u32) -> usize {
    RING_SLOTS_OFFSET + capacity as usize * RING_SLOT_BYTES
}

/// The ring's header, written by the host. (The ticket counter is
/// [`LaunchBlock::ring_tickets`], the producers' view of free slots
/// [`LaunchBlock::ring_room`], both in device memory.)
#[repr(C, align(128))]
pub struct RingHeader {
    /// [`RING_MAGIC`], written by the host before the launch.
    pub magic: u32,
    /// Number of slots, a power of two ≥ 2, written by the host before the
    /// launch.
    pub capacity: u32,
    /// Tickets the host has consumed (the next one it reads), stored with a
    /// release once it has copied each packet.
    pub consumed: core::sync::atomic::AtomicU64,
    pub _pad: [u64; 30],
}

/// The ring's bookkeeping in device memory ([`LaunchBlock::ring_room`]):
/// what a producer must know before it writes a slot, kept where a look
/// costs a load from the device's L2 cache instead of a read across PCIe
/// (about 1.2 µs on an H100, `xtask/probes/host_round_trip.cu`). Zeroed by
/// the launcher; only the device writes it.
#[repr(C)]
pub struct RingRoom {
    /// A value [`RingHeader::consumed`] has had: producers that read
    /// `consumed` raise it (with a release), so the others need not.
    pub consumed_seen: core::sync::atomic::AtomicU64,
    /// 1 while a producer reads `consumed` for the others: when the ring is
    /// full, one PCIe read at a time instead of one per waiting warp.
    pub refreshing: core::sync::atomic::AtomicU64,
    /// Per slot, followed by `capacity - 1` more: `t + 1` while the
    /// producer of ticket `t`, a packet with [`FLAG_REPLY`], has not read
    /// its reply; 0 otherwise.
    pub unread_reply: [core::sync::atomic::AtomicU64; 1],
}

/// Bytes of the [`RingRoom`] of a ring with `capacity` slots.
pub const fn ring_room_bytes(capacity: u32) -> usize {
    (2 + capacity as usize) * 8
}

/// The header of one ring slot; the payload follows it.
#[repr(C)]
pub struct RingSlotHeader {
    /// `t + 1` once the producer of ticket `t` has published the slot
    /// (before the slot's first packet: the slot's index).
    pub seq: core::sync::atomic::AtomicU64,
    /// For [`FLAG_REPLY`] packets: the host stores `t + 1` once the reply is in.
    pub reply_seq: core::sync::atomic::AtomicU64,
    /// One of the `OP_*` opcodes.
    pub op: u32,
    /// Thread (warp) index of the producer.
    pub thread: u32,
    /// Payload bytes in use (≤ [`RING_PAYLOAD_BYTES`]).
    pub len: u32,
    /// `FLAG_*` bits.
    pub flags: u32,
    /// Opcode-specific arguments.
    pub arg0: u64,
    pub arg1: u64,
    pub _pad: [u64; 2],
}

/// No operation (with [`FLAG_REPLY`]: a host round trip).
pub const OP_NOP: u32 = 0;
/// Bytes for a file descriptor: `arg0` = 1 (stdout) or 2 (stderr).
/// A `write` larger than a payload is split into packets; all but the last
/// carry [`FLAG_MORE`]; the host writes the whole call at once.
pub const OP_WRITE: u32 = 1;
/// The program ends: `arg0` = exit code (from `main` or `process::exit`).
pub const OP_EXIT: u32 = 2;
/// The program aborts: `arg0` = exit code (101 after a panic, 134 for
/// `process::abort`).
pub const OP_ABORT: u32 = 3;
/// A thread ended; `arg0` = its thread index. For host-side bookkeeping.
pub const OP_THREAD_EXIT: u32 = 4;
/// Random bytes from the host's OS generator (`getrandom`'s backend): sent
/// with [`FLAG_REPLY`], `arg0` = bytes wanted (≤ [`RING_PAYLOAD_BYTES`]); the
/// host writes them into the slot's payload before its reply.
pub const OP_RANDOM: u32 = 5;

/// A host call of any size (files, directories, stdin): request head + body
/// in, status + reply bytes out. Its contract is [`crate::hostcall`]'s.
pub const OP_CALL: u32 = 6;
/// More of the thread's last host-call reply: `arg0` = offset into it.
pub const OP_CALL_MORE: u32 = 7;
/// The result of the thread's host call in progress, after the host
/// answered it with [`STATUS_PENDING`](crate::hostcall::STATUS_PENDING)
/// (`FLAG_REPLY`): answered as the call's last packet is.
pub const OP_CALL_WAIT: u32 = 8;

/// More packets of the same write (or host-call request) follow.
pub const FLAG_MORE: u32 = 1;
/// The device waits for the host's reply in this slot.
pub const FLAG_REPLY: u32 = 2;

/// Highest opcode a host accepts.
pub const OP_MAX: u32 = OP_CALL_WAIT;

const _: () = assert!(core::mem::size_of::<LaunchBlock>() == 176);
const _: () = assert!(core::mem::size_of::<StrRef>() == 16);
const _: () = assert!(core::mem::size_of::<ThreadSlotPublic>() == 64);
const _: () = assert!(core::mem::size_of::<ThreadSlotPublic>() <= THREAD_SLOT_BYTES);
const _: () = assert!(core::mem::size_of::<RingHeader>() == RING_SLOTS_OFFSET);
const _: () = assert!(core::mem::offset_of!(RingHeader, consumed) == 8);
const _: () = assert!(core::mem::size_of::<RingRoom>() == ring_room_bytes(1));
const _: () = assert!(core::mem::size_of::<RingSlotHeader>() == 64);
const _: () = assert!(RING_PAYLOAD_BYTES == 192);
