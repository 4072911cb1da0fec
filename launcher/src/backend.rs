//! The one small trait both vendors implement, the errors they return, and
//! the vendor-neutral launch sizing.
//!
//! A backend is one opened device with at most one loaded kernel and one
//! launch: `load` → `occupancy` → allocations → `launch` → `poll` until done.
//! It owns its allocations and frees them on drop, unless a launched kernel
//! has not finished (freeing would wait for it forever).

use gpu_toolchain::Vendor;

use crate::codeobj::CodeObject;
use crate::exit;
use crate::libpath::Tried;

/// What `gpurun devices` shows and the launcher sizes launches with.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Ordinal within its vendor's API (`--device`).
    pub index: u32,
    pub vendor: Vendor,
    pub name: String,
    /// `sm_90`, or the HIP target id `gfx90a:sramecc+:xnack-`.
    pub arch: String,
    /// SMs (NVIDIA) or CUs (AMD).
    pub compute_units: u32,
    /// Hardware warp/wavefront size.
    pub warp_size: u32,
    pub max_threads_per_cu: u32,
    /// Upper bound of co-resident warps (hardware limit; a kernel's
    /// registers can lower it: `gpurun run -v` prints the real figure).
    pub max_resident_warps: u32,
    pub total_memory: u64,
    /// Driver/runtime version as the API reports it (`13000`, `60342134`).
    pub driver_version: i32,
}

impl DeviceInfo {
    /// The processor part of `arch` (`gfx90a` of `gfx90a:sramecc+:xnack-`).
    pub fn processor(&self) -> &str {
        self.arch.split(':').next().unwrap_or(&self.arch)
    }
}

/// What `load` learnt about the kernel.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct KernelInfo {
    /// Lanes per warp/wavefront the code was compiled for.
    pub lanes: u32,
    /// Largest block the kernel accepts.
    pub max_block_threads: u32,
    /// Registers per lane, where the API reports it.
    pub registers: Option<u32>,
    /// Fixed local/private bytes per lane, where known.
    pub local_bytes: Option<u64>,
    /// The code keeps its stack frames in global memory (code linked by
    /// `gpu-ld` with shared stacks: it defines `__gpu_shared_stacks`), so the
    /// launch must give it `LaunchBlock::stacks`.
    pub shared_stacks: bool,
    /// Lanes of each warp that run frames and so get a stack in
    /// `LaunchBlock::stacks` (`Hal::PARALLEL_LANES`): every lane on NVIDIA,
    /// the leader only on AMD.
    pub stack_lanes: u32,
}

/// Host memory the device can address (CUDA mapped pinned memory, HIP
/// fine-grained host memory). Valid while the backend that made it lives.
#[derive(Clone, Copy, Debug)]
pub struct MappedBuf {
    pub host: *mut u8,
    pub device: u64,
    pub len: usize,
}

// SAFETY: a MappedBuf is an address range, not an owner; whoever dereferences
// `host` (unsafe) must guarantee the backend keeps it alive, from any thread.
unsafe impl Send for MappedBuf {}
// SAFETY: as above; shared access goes through atomics or volatile copies.
unsafe impl Sync for MappedBuf {}

/// Errors of the vendor backends. Each says what to do next.
#[derive(Clone, Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{}", no_library_message(*.vendor, .tried))]
    NoLibrary { vendor: Vendor, tried: Vec<Tried> },
    #[error(
        "the {vendor} driver library {path} lacks `{symbol}`: the driver is too old for gpurun; \
         update it"
    )]
    MissingSymbol { vendor: Vendor, path: String, symbol: String },
    #[error("no {vendor} GPU: {detail}")]
    NoDevice { vendor: Vendor, detail: String },
    #[error("--device {index}: there {} only {count} {vendor} device{} (0..{})",
        if *.count == 1 { "is" } else { "are" }, if *.count == 1 { "" } else { "s" }, .count.saturating_sub(1))]
    NoSuchDevice { vendor: Vendor, index: u32, count: u32 },
    /// A request the device refuses (a stack size too large, ...).
    #[error("{0}")]
    Usage(String),
    /// The code object was refused: other vendor, other arch, PTX too new, no kernel.
    #[error("{0}")]
    CodeObject(String),
    /// A driver call failed for a reason other than a device fault.
    #[error("{call} failed: {name}{}{}", paren(.desc), hint_suffix(.hint))]
    Api { call: &'static str, name: String, desc: String, hint: String },
    /// The device faulted while running the kernel.
    #[error("the GPU kernel failed: {name}{}{}", paren(.desc), hint_suffix(.hint))]
    Fault { name: String, desc: String, hint: String },
}

pub(crate) fn paren(desc: &str) -> String {
    if desc.is_empty() { String::new() } else { format!(" ({desc})") }
}

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() { String::new() } else { format!(". {hint}") }
}

fn no_library_message(vendor: Vendor, tried: &[Tried]) -> String {
    let (lib, env, install) = match vendor {
        Vendor::Nvidia => ("the CUDA driver library (libcuda)", "GPURUN_CUDA_LIB", "the NVIDIA driver"),
        Vendor::Amd => ("the HIP runtime library (libamdhip64)", "GPURUN_HIP_LIB", "ROCm's HIP runtime"),
    };
    let mut s = format!("no {vendor} GPU: could not load {lib}; tried:");
    for t in tried {
        s.push_str(&format!("\n    {}: {}", t.path, t.error));
    }
    s.push_str(&format!(
        "\n  Install {install}, or set {env} to the library's path (several paths: separate with ':')."
    ));
    s
}

/// The error for a per-lane call stack the driver refused (`call` failed
/// with `name`); `option` is the command-line option that chose the size.
pub fn stack_refused(stack: u64, option: &str, call: &str, name: &str, out_of_memory: bool) -> BackendError {
    let why = if out_of_memory {
        "the device cannot reserve that much for every resident lane"
    } else {
        "the driver does not accept that per-lane size"
    };
    BackendError::Usage(format!("{option} {stack}: {call} failed with {name}: {why}; pass a smaller {option}"))
}

impl BackendError {
    pub fn exit_code(&self) -> i32 {
        match self {
            BackendError::NoLibrary { .. } | BackendError::MissingSymbol { .. } | BackendError::NoDevice { .. } => {
                exit::NO_DEVICE
            }
            BackendError::NoSuchDevice { .. } | BackendError::Usage(_) => exit::USAGE,
            BackendError::CodeObject(_) => exit::CODE_OBJECT,
            BackendError::Api { .. } | BackendError::Fault { .. } => exit::DEVICE_FAULT,
        }
    }

    /// Whether the error means "this vendor has no usable device here".
    pub fn is_no_device(&self) -> bool {
        self.exit_code() == exit::NO_DEVICE
    }
}

/// One opened device of one vendor.
pub trait Backend {
    fn info(&self) -> &DeviceInfo;
    /// Loads the code object and finds [`KERNEL_ENTRY`](rt_abi::symbols::KERNEL_ENTRY).
    fn load(&mut self, code: &CodeObject) -> Result<KernelInfo, BackendError>;
    /// Sets the driver's per-lane call stack to `bytes` (the device reserves
    /// it for every lane it can hold); `option` is the command-line option
    /// that chose it, for the error.
    fn set_call_stack(&mut self, bytes: u64, option: &str) -> Result<(), BackendError>;
    /// Blocks of `block_threads` threads of the loaded kernel that fit on one SM/CU.
    fn occupancy(&mut self, block_threads: u32) -> Result<u32, BackendError>;
    /// Free device memory in bytes.
    fn free_memory(&mut self) -> Result<u64, BackendError>;
    /// Device memory, uninitialised; returns its device address.
    fn alloc(&mut self, bytes: usize) -> Result<u64, BackendError>;
    /// Host memory the device can address with system-scope atomics.
    fn alloc_mapped(&mut self, bytes: usize) -> Result<MappedBuf, BackendError>;
    /// Copies host bytes to device memory (before the launch).
    fn upload(&mut self, dst: u64, src: &[u8]) -> Result<(), BackendError>;
    /// Zeroes device memory (before the launch).
    fn zero(&mut self, dst: u64, bytes: usize) -> Result<(), BackendError>;
    /// Launches the kernel: `grid` blocks of `block_threads`, one parameter.
    fn launch(&mut self, grid: u32, block_threads: u32, param: u64) -> Result<(), BackendError>;
    /// `Ok(true)` once the kernel finished, `Ok(false)` while it runs, the
    /// fault if it failed.
    fn poll(&mut self) -> Result<bool, BackendError>;
    /// Copies device memory into `dst` while the kernel may still run (on
    /// another stream), and waits for the copy.
    fn read_back(&mut self, src: u64, dst: &MappedBuf) -> Result<(), BackendError>;
}

/// How the launch is shaped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LaunchPlan {
    pub lanes: u32,
    pub block_warps: u32,
    pub block_threads: u32,
    pub blocks_per_cu: u32,
    /// Warps that can be resident at once with this block size.
    pub resident_warps: u32,
    /// Thread-table size: `--threads` or `resident_warps`.
    pub num_threads: u32,
    pub grid: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(
        "--threads {requested} is more than the {resident} warps that can be resident at once on {device} \
         ({blocks_per_cu} blocks of {block_warps} warps on each of {cus} compute units); every thread must be \
         resident, so pass --threads {resident} or less"
    )]
    TooManyThreads { requested: u32, resident: u32, device: String, blocks_per_cu: u32, block_warps: u32, cus: u32 },
    #[error("--threads 0: a program needs at least one thread (for main)")]
    ZeroThreads,
    #[error(
        "the kernel cannot be resident on {device} with any block size (occupancy 0): \
         it uses too many registers or too much local memory; lower --stack-size or simplify the program"
    )]
    NoOccupancy { device: String },
    #[error(
        "{option} {size}: the stacks of {warps} warps of {lanes} lanes would take more than 2^64 bytes; \
         lower {option} or --threads"
    )]
    StacksTooLarge { option: &'static str, size: u64, warps: u64, lanes: u32 },
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl PlanError {
    pub fn exit_code(&self) -> i32 {
        match self {
            PlanError::TooManyThreads { .. } | PlanError::ZeroThreads | PlanError::StacksTooLarge { .. } => exit::USAGE,
            PlanError::NoOccupancy { .. } => exit::CODE_OBJECT,
            PlanError::Backend(e) => e.exit_code(),
        }
    }
}

/// Warps per block tried, best first on ties. One-warp blocks come last: on
/// H100 they cap at 32 blocks (32 warps) per SM where ≥ 2-warp blocks reach 64.
const BLOCK_WARPS: [u32; 4] = [2, 4, 8, 1];

/// Picks the block size that makes the most warps co-resident and sizes the
/// grid for `requested` threads (default: all resident warps).
/// `occupancy(block_threads)` is the backend's blocks-per-CU query.
pub fn plan_launch(
    device: &DeviceInfo,
    kernel: &KernelInfo,
    requested: Option<u32>,
    mut occupancy: impl FnMut(u32) -> Result<u32, BackendError>,
) -> Result<LaunchPlan, PlanError> {
    if requested == Some(0) {
        return Err(PlanError::ZeroThreads);
    }
    let lanes = kernel.lanes.max(1);
    let cus = device.compute_units.max(1);
    let mut best: Option<(u32, u32, u32)> = None; // (resident, warps, blocks/cu)
    for w in BLOCK_WARPS {
        let threads = w * lanes;
        if kernel.max_block_threads != 0 && threads > kernel.max_block_threads {
            continue;
        }
        let blocks = occupancy(threads)?;
        let resident = blocks.saturating_mul(w).saturating_mul(cus);
        if best.is_none_or(|(r, _, _)| resident > r) {
            best = Some((resident, w, blocks));
        }
    }
    let (resident, block_warps, blocks_per_cu) = best.unwrap_or((0, 1, 0));
    if resident == 0 {
        return Err(PlanError::NoOccupancy { device: device.name.clone() });
    }
    let num_threads = match requested {
        Some(n) if n > resident => {
            return Err(PlanError::TooManyThreads {
                requested: n,
                resident,
                device: device.name.clone(),
                blocks_per_cu,
                block_warps,
                cus,
            });
        }
        Some(n) => n,
        None => resident,
    };
    Ok(LaunchPlan {
        lanes,
        block_warps,
        block_threads: block_warps * lanes,
        blocks_per_cu,
        resident_warps: resident,
        num_threads,
        grid: num_threads.div_ceil(block_warps),
    })
}

/// An H100 as the CUDA backend describes it, for tests.
#[cfg(test)]
pub(crate) fn h100() -> DeviceInfo {
    DeviceInfo {
        index: 0,
        vendor: Vendor::Nvidia,
        name: "H100".into(),
        arch: "sm_90".into(),
        compute_units: 132,
        warp_size: 32,
        max_threads_per_cu: 2048,
        max_resident_warps: 8448,
        total_memory: 80 << 30,
        driver_version: 13000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H100-like occupancy: ≤ 32 blocks and ≤ 64 warps per SM.
    fn h100_occ(block_threads: u32) -> Result<u32, BackendError> {
        Ok((2048 / block_threads).min(32))
    }

    #[test]
    fn h100_prefers_two_warp_blocks() {
        let k = KernelInfo { lanes: 32, max_block_threads: 1024, ..Default::default() };
        let p = plan_launch(&h100(), &k, None, h100_occ).unwrap();
        assert_eq!(p.block_warps, 2);
        assert_eq!(p.blocks_per_cu, 32);
        assert_eq!(p.resident_warps, 8448);
        assert_eq!(p.num_threads, 8448);
        assert_eq!(p.grid, 4224);
    }

    #[test]
    fn requested_threads_size_the_grid() {
        let k = KernelInfo { lanes: 32, max_block_threads: 1024, ..Default::default() };
        let p = plan_launch(&h100(), &k, Some(5), h100_occ).unwrap();
        assert_eq!((p.num_threads, p.grid), (5, 3));
        let e = plan_launch(&h100(), &k, Some(8449), h100_occ).unwrap_err();
        assert_eq!(e.exit_code(), exit::USAGE);
        assert!(e.to_string().contains("--threads 8448 or less"), "{e}");
        assert!(matches!(plan_launch(&h100(), &k, Some(0), h100_occ), Err(PlanError::ZeroThreads)));
    }

    #[test]
    fn respects_max_block_and_zero_occupancy() {
        let k = KernelInfo { lanes: 64, max_block_threads: 64, ..Default::default() };
        let p = plan_launch(&h100(), &k, None, |_| Ok(8)).unwrap();
        assert_eq!(p.block_warps, 1);
        let e = plan_launch(&h100(), &k, None, |_| Ok(0)).unwrap_err();
        assert!(matches!(e, PlanError::NoOccupancy { .. }));
    }

    #[test]
    fn ties_pick_the_smaller_block() {
        let k = KernelInfo { lanes: 64, max_block_threads: 1024, ..Default::default() };
        // MI300-like: 32 waves per CU whatever the block.
        let p = plan_launch(&h100(), &k, None, |t| Ok(32 * 64 / t)).unwrap();
        assert_eq!(p.block_warps, 2);
        assert_eq!(p.resident_warps, 32 * 132);
    }
}
