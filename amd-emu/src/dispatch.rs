//! A launch: every wave of every workgroup runs on its own host thread, so
//! waves are concurrent as on hardware (a wave in `s_sleep` sleeps its
//! thread and costs nothing), and the host-call ring in host memory is
//! served by the launcher's real server while they run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::arch::Arch;
use crate::kernel::{Kernel, Module, props};
use crate::memory;
use crate::operand::{EXEC, SCALAR_FILE};
use crate::wave::{Fault, FaultKind, Wave};

/// What the whole launch shares.
pub struct Shared {
    aborted: AtomicBool,
    first_fault: Mutex<Option<Fault>>,
    /// When the launch began: `s_memrealtime` counts 100 MHz ticks from it.
    pub start: Instant,
    pub executed: AtomicU64,
}

impl Shared {
    pub fn new() -> Shared {
        Shared { aborted: AtomicBool::new(false), first_fault: Mutex::new(None), start: Instant::now(), executed: AtomicU64::new(0) }
    }

    #[inline]
    pub fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    fn record(&self, f: Fault) {
        let mut g = self.first_fault.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() && f.kind != FaultKind::Aborted {
            *g = Some(f);
        }
        self.aborted.store(true, Ordering::Relaxed);
    }

    /// The constant 100 MHz clock (`s_memrealtime`, `MSG_RTN_GET_REALTIME`).
    pub fn realtime(&self) -> u64 {
        (self.start.elapsed().as_nanos() / 10) as u64
    }

    /// The shader clock (`s_memtime`): nominally 1 GHz.
    pub fn memtime(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

impl Default for Shared {
    fn default() -> Shared {
        Shared::new()
    }
}

/// What the waves of one workgroup share: LDS and `s_barrier`.
pub struct Group {
    lds: Vec<u64>,
    lds_bytes: usize,
    /// (waves arrived at the barrier, waves still running, generation).
    barrier: Mutex<(u32, u32, u64)>,
    cv: Condvar,
}

impl Group {
    pub fn new(lds_bytes: usize, waves: u32) -> Group {
        let lds = vec![0u64; lds_bytes.div_ceil(8).max(1)];
        memory::register(lds.as_ptr() as u64, lds_bytes as u64);
        Group { lds, lds_bytes, barrier: Mutex::new((0, waves, 0)), cv: Condvar::new() }
    }

    pub fn lds_size(&self) -> usize {
        self.lds_bytes
    }

    /// The host address of LDS byte `off` (checked by the caller).
    pub fn lds_ptr(&self, off: usize) -> *mut u8 {
        // Written through atomics only (memory.rs), so a shared reference suffices.
        (self.lds.as_ptr() as *mut u8).wrapping_add(off)
    }

    /// `s_barrier`: waits until every running wave of the group arrives.
    pub fn barrier(&self) {
        let mut g = self.barrier.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        if g.0 >= g.1 {
            g.0 = 0;
            g.2 += 1;
            self.cv.notify_all();
            return;
        }
        let generation = g.2;
        while g.2 == generation {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A wave ended: the barrier no longer waits for it.
    fn leave(&self) {
        let mut g = self.barrier.lock().unwrap_or_else(|e| e.into_inner());
        g.1 -= 1;
        if g.1 > 0 && g.0 >= g.1 {
            g.0 = 0;
            g.2 += 1;
            self.cv.notify_all();
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        memory::unregister(self.lds.as_ptr() as u64);
    }
}

/// A kernel launch's shape and arguments.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Workgroups in each dimension.
    pub grid: [u32; 3],
    /// Work-items per workgroup in each dimension.
    pub block: [u32; 3],
    /// Host address of the kernarg segment (registered device memory).
    pub kernarg: u64,
    /// Host address of the dispatch packet (`hsa_kernel_dispatch_packet_t`).
    pub dispatch_packet: u64,
    /// Host address of the queue (`amd_queue_t`).
    pub queue: u64,
    /// Bytes of dynamic LDS.
    pub dynamic_lds: u32,
    /// Bytes of each lane's private segment beyond the fixed size (the
    /// stack limit the runtime was given).
    pub stack_bytes: u32,
}

/// What a finished launch did.
#[derive(Clone, Debug)]
pub struct Stats {
    pub waves: u32,
    pub instructions: u64,
    pub seconds: f64,
}

impl Stats {
    pub fn instructions_per_second(&self) -> f64 {
        if self.seconds > 0.0 { self.instructions as f64 / self.seconds } else { 0.0 }
    }
}

/// A launch in progress.
pub struct Running {
    threads: Vec<std::thread::JoinHandle<()>>,
    pub shared: Arc<Shared>,
    waves: u32,
    done: Arc<AtomicU64>,
}

impl Running {
    /// Whether every wave has ended.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire) == u64::from(self.waves)
    }

    /// Waits for every wave; the first fault, if any.
    pub fn wait(self) -> Result<Stats, Fault> {
        for t in self.threads {
            let _ = t.join();
        }
        let stats = Stats {
            waves: self.waves,
            instructions: self.shared.executed.load(Ordering::Relaxed),
            seconds: self.shared.start.elapsed().as_secs_f64(),
        };
        match self.shared.first_fault.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(f) => Err(f),
            None => Ok(stats),
        }
    }
}

/// Host threads' stacks: the wave loop is shallow.
const WAVE_THREAD_STACK: usize = 256 * 1024;

/// Starts `kernel` of `module`.
pub fn launch(module: &Arc<Module>, kernel: Kernel, l: &Launch) -> Result<Running, String> {
    let arch = module.arch;
    let kd = kernel.descriptor;
    let lanes = if kd.property(props::WAVEFRONT_SIZE32) { 32 } else { 64 };
    if lanes != arch.wave_size() as usize {
        return Err(format!(
            "the kernel is built for wave{lanes}, but the emulated {} runs wave{}",
            arch.name(),
            arch.wave_size()
        ));
    }
    let block_items = l.block.iter().product::<u32>();
    let groups = l.grid.iter().product::<u32>();
    if block_items == 0 || groups == 0 {
        return Err("an empty launch".into());
    }
    let waves_per_group = block_items.div_ceil(lanes as u32);
    let private_size = (kd.private_segment_fixed_size + l.stack_bytes).next_multiple_of(16);
    let lds = (kd.group_segment_fixed_size + l.dynamic_lds) as usize;
    let shared = Arc::new(Shared::new());
    let done = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    let mut id = 0u32;
    for g in 0..groups {
        let group = Arc::new(Group::new(lds, waves_per_group));
        let wg = [g % l.grid[0], g / l.grid[0] % l.grid[1], g / (l.grid[0] * l.grid[1])];
        for w in 0..waves_per_group {
            let first_item = w * lanes as u32;
            let items = (block_items - first_item).min(lanes as u32);
            let at = Place { wg, first_item, items, id, group: (g, group.clone()), shared: shared.clone() };
            let mut wave = new_wave(module, lanes, &kd, private_size, l, at);
            let (module, shared, done, group) = (module.clone(), shared.clone(), done.clone(), group.clone());
            let t = std::thread::Builder::new()
                .name(format!("amd-emu wave {id}"))
                .stack_size(WAVE_THREAD_STACK)
                .spawn(move || {
                    let r = wave.run(&module.code);
                    shared.executed.fetch_add(wave.executed, Ordering::Relaxed);
                    if let Err(f) = r {
                        shared.record(f);
                    }
                    group.leave();
                    done.fetch_add(1, Ordering::Release);
                })
                .map_err(|e| format!("cannot start a host thread for wave {id}: {e}"))?;
            threads.push(t);
            id += 1;
        }
    }
    Ok(Running { threads, shared, waves: id, done })
}

/// Where a wave stands in its launch.
struct Place {
    /// Its workgroup's id in each dimension.
    wg: [u32; 3],
    /// Its first work-item in the workgroup, and how many it has.
    first_item: u32,
    items: u32,
    /// Its index in the launch.
    id: u32,
    /// Its workgroup's index, and what the workgroup's waves share.
    group: (u32, Arc<Group>),
    shared: Arc<Shared>,
}

/// A wave's state at launch, as the hardware and the kernel descriptor set
/// it (AMDGPUUsage, "Initial Kernel Execution State").
fn new_wave(module: &Module, lanes: usize, kd: &crate::kernel::Descriptor, private_size: u32, l: &Launch, at: Place) -> Wave {
    let Place { wg, first_item, items, id, group: (group, group_shared), shared } = at;
    let arch = module.arch;
    let mut s = [0u32; SCALAR_FILE];
    let mut n = 0;
    let put64 = |s: &mut [u32; SCALAR_FILE], n: &mut usize, v: u64| {
        s[*n] = v as u32;
        s[*n + 1] = (v >> 32) as u32;
        *n += 2;
    };
    if kd.property(props::PRIVATE_SEGMENT_BUFFER) {
        // The V# of MUBUF scratch (gfx9 without architected flat scratch):
        // base 0, as the emulator's scratch addresses are offsets in each
        // lane's own segment; ADD_TID_ENABLE in word 3 is what tells the
        // buffer instructions (ops/buffer.rs) that it is per-lane scratch.
        s[n..n + 4].copy_from_slice(&[0, 0, u32::MAX, PRIVATE_SEGMENT_RSRC_WORD3]);
        n += 4;
    }
    if kd.property(props::DISPATCH_PTR) {
        put64(&mut s, &mut n, l.dispatch_packet);
    }
    if kd.property(props::QUEUE_PTR) {
        put64(&mut s, &mut n, l.queue);
    }
    if kd.property(props::KERNARG_SEGMENT_PTR) {
        put64(&mut s, &mut n, l.kernarg);
    }
    if kd.property(props::DISPATCH_ID) {
        put64(&mut s, &mut n, 0);
    }
    if kd.property(props::FLAT_SCRATCH_INIT) {
        // FLAT_SCRATCH = init + wave offset: 0, as scratch addresses are
        // per-lane offsets here.
        put64(&mut s, &mut n, 0);
    }
    if kd.property(props::PRIVATE_SEGMENT_SIZE) {
        s[n] = private_size;
    }
    let mut n = kd.user_sgpr_count();
    for dim in 0..3 {
        if kd.workgroup_id_enabled(dim) {
            s[n] = wg[dim as usize];
            n += 1;
        }
    }
    if kd.workgroup_info_enabled() {
        n += 1;
    }
    if kd.enable_private_segment() && !arch.architected_flat_scratch() {
        // The private segment wave offset: 0 (see above).
        s[n] = 0;
    }
    let exec = if items as usize >= 64 { u64::MAX } else { (1u64 << items) - 1 };
    s[EXEC as usize] = exec as u32;
    s[EXEC as usize + 1] = (exec >> 32) as u32;
    let vgprs = kd.vgprs(arch).max(1);
    let mut v = vec![[0u32; 64]; 512.max(vgprs)];
    for lane in 0..lanes {
        // Work-item IDs (1-D launches: y = z = 0; packed x|y<<10|z<<20 reads the same).
        v[0][lane] = first_item + lane as u32;
    }
    let acc = if matches!(arch, Arch::Gfx90a | Arch::Gfx942) { vec![[0u32; 64]; 256] } else { Vec::new() };
    Wave {
        arch,
        lanes,
        s,
        scc: false,
        v,
        acc,
        pc: kd.entry,
        next_pc: kd.entry,
        image_base: module.image.base(),
        scratch: vec![0u8; private_size as usize * lanes],
        private_size,
        id,
        workgroup: group,
        executed: 0,
        mem: memory::View::default(),
        group: group_shared,
        shared,
    }
}

/// Word 3 of the private segment buffer's V#, the gfx9 fields a runtime
/// sets for swizzled scratch: DST_SEL_XYZW (0xfac), NUM_FORMAT UINT (4 << 12),
/// DATA_FORMAT 32 (4 << 15), INDEX_STRIDE 64 (3 << 21) and ADD_TID_ENABLE
/// (1 << 23), the one bit the emulator reads.
pub const PRIVATE_SEGMENT_RSRC_WORD3: u32 = 0x00e2_4fac;
