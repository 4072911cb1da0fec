//! The whole run pipeline against a fake backend whose "kernel" is a host
//! thread speaking the ring protocol: output, exit codes, faults, timeouts
//! with the thread report, protocol errors, arguments.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use gpu_toolchain::Vendor;
use rt_abi::protocol::*;

use super::*;
use crate::backend::{DeviceInfo, KernelInfo};
use crate::ring::testing::{Producer, VecSink};

/// What the fake kernel sees.
struct FakeDevice {
    lb: LaunchBlock,
    /// The uploaded launch block's `ring_tickets`, as the runtime uses it.
    tickets: &'static AtomicU64,
    cancel: Arc<AtomicBool>,
}

impl FakeDevice {
    fn producer(&self) -> Producer<'static> {
        let cap = self.ring_capacity();
        // SAFETY: the ring is a leaked allocation of the fake backend (never freed).
        let words = unsafe { std::slice::from_raw_parts(self.lb.ring as *const AtomicU64, ring_bytes(cap) / 8) };
        assert_ne!(self.lb.ring_room, 0, "the launcher gives the ring a room");
        // SAFETY: the room is a leaked allocation of the fake backend, of
        // `ring_room_bytes(cap)` (never freed).
        let room = unsafe { std::slice::from_raw_parts(self.lb.ring_room as *const AtomicU64, ring_room_bytes(cap) / 8) };
        let unread = &room[std::mem::offset_of!(RingRoom, unread_reply) / 8..];
        Producer { words, cap: u64::from(cap), tickets: self.tickets, unread }
    }
    fn ring_capacity(&self) -> u32 {
        // SAFETY: as above; the header's first word holds magic and capacity.
        let w = unsafe { (*(self.lb.ring as *const AtomicU64)).load(Ordering::Relaxed) };
        assert_eq!(w as u32, RING_MAGIC);
        (w >> 32) as u32
    }
    fn set_thread(&self, i: u32, state: u32, wait: u32, name: &str) {
        let slot = self.lb.threads as usize + i as usize * THREAD_SLOT_BYTES;
        // SAFETY: the thread table is a leaked fake allocation of num_threads slots.
        unsafe {
            let p = slot as *mut u32;
            p.write(state);
            p.add(1).write(wait);
            p.add(2).write(name.len() as u32);
            std::ptr::copy_nonoverlapping(name.as_ptr(), (slot + 16) as *mut u8, name.len());
        }
    }
    fn args(&self) -> Vec<String> {
        (0..self.lb.argc)
            .map(|i| {
                // SAFETY: argv points at argc StrRefs in a fake allocation.
                let r = unsafe { *((self.lb.argv as *const StrRef).add(i as usize)) };
                // SAFETY: each StrRef points at len bytes of the same allocation.
                let b = unsafe { std::slice::from_raw_parts(r.ptr as *const u8, r.len as usize) };
                String::from_utf8(b.to_vec()).unwrap()
            })
            .collect()
    }
    fn spin_until_cancelled(&self) {
        while !self.cancel.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

type Kernel = Box<dyn FnOnce(FakeDevice) -> Result<(), String> + Send>;
type Output = Vec<(u8, Vec<u8>)>;

struct FakeBackend {
    info: DeviceInfo,
    kernel: Option<Kernel>,
    running: Option<JoinHandle<Result<(), String>>>,
    cancel: Arc<AtomicBool>,
}

impl FakeBackend {
    fn new(kernel: impl FnOnce(FakeDevice) -> Result<(), String> + Send + 'static) -> Self {
        FakeBackend {
            info: DeviceInfo {
                index: 0,
                vendor: Vendor::Nvidia,
                name: "Fake GPU".into(),
                arch: "sm_90".into(),
                compute_units: 2,
                warp_size: 32,
                max_threads_per_cu: 256,
                max_resident_warps: 16,
                total_memory: 1 << 30,
                driver_version: 13000,
            },
            kernel: Some(Box::new(kernel)),
            running: None,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }
    /// Host memory standing in for device memory (leaked: a kernel thread
    /// may outlive the test's use of it).
    fn leak(bytes: usize) -> u64 {
        let words = vec![0u64; bytes.div_ceil(8).max(1)].into_boxed_slice();
        Box::leak(words).as_mut_ptr() as u64
    }
}

impl Drop for FakeBackend {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Backend for FakeBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn load(&mut self, _code: &CodeObject) -> Result<KernelInfo, BackendError> {
        Ok(KernelInfo { lanes: 32, max_block_threads: 1024, registers: Some(40), local_bytes: None, shared_stacks: false, stack_lanes: 32 })
    }
    fn set_call_stack(&mut self, _bytes: u64, _option: &str) -> Result<(), BackendError> {
        Ok(())
    }
    fn occupancy(&mut self, block_threads: u32) -> Result<u32, BackendError> {
        Ok(256 / block_threads) // 8 warps per CU, 16 in all
    }
    fn free_memory(&mut self) -> Result<u64, BackendError> {
        Ok(64 << 20)
    }
    fn alloc(&mut self, bytes: usize) -> Result<u64, BackendError> {
        Ok(Self::leak(bytes.min(1 << 20)))
    }
    fn alloc_mapped(&mut self, bytes: usize) -> Result<MappedBuf, BackendError> {
        let a = Self::leak(bytes);
        Ok(MappedBuf { host: a as *mut u8, device: a, len: bytes })
    }
    fn upload(&mut self, dst: u64, src: &[u8]) -> Result<(), BackendError> {
        // SAFETY: dst is a leaked fake allocation at least src.len() long.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }
    fn zero(&mut self, _dst: u64, _bytes: usize) -> Result<(), BackendError> {
        Ok(()) // leaked allocations start zeroed
    }
    fn launch(&mut self, grid: u32, block_threads: u32, param: u64) -> Result<(), BackendError> {
        assert!(grid >= 1 && block_threads.is_multiple_of(32));
        // SAFETY: param is the fake allocation holding the uploaded LaunchBlock.
        let lb = unsafe { std::ptr::read(param as *const LaunchBlock) };
        assert_eq!(lb.magic, LAUNCH_MAGIC);
        // SAFETY: as above (leaked, so 'static); the word is only accessed atomically.
        let tickets = unsafe { &*((param as usize + std::mem::offset_of!(LaunchBlock, ring_tickets)) as *const AtomicU64) };
        let dev = FakeDevice { lb, tickets, cancel: self.cancel.clone() };
        let k = self.kernel.take().expect("one launch");
        self.running = Some(std::thread::spawn(move || k(dev)));
        Ok(())
    }
    fn poll(&mut self) -> Result<bool, BackendError> {
        if !self.running.as_ref().is_some_and(|h| h.is_finished()) {
            return Ok(false);
        }
        match self.running.take().unwrap().join() {
            Ok(Ok(())) => Ok(true),
            Ok(Err(m)) => Err(BackendError::Fault { name: "FAKE_ILLEGAL_ADDRESS".into(), desc: m, hint: String::new() }),
            // A failed assertion in the fake kernel: a fault the test then
            // sees, not a panic here (unwinding out of `execute` would wait
            // forever for its ring server, which waits for the exit).
            Err(panic) => {
                let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                Err(BackendError::Fault {
                    name: "FAKE_KERNEL_PANICKED".into(),
                    desc: msg.unwrap_or_default(),
                    hint: String::new(),
                })
            }
        }
    }
    fn read_back(&mut self, src: u64, dst: &MappedBuf) -> Result<(), BackendError> {
        // SAFETY: both are fake allocations of at least dst.len bytes.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.host, dst.len) };
        Ok(())
    }
}

fn code() -> CodeObject {
    CodeObject::from_bytes(Path::new("fake.ptx"), crate::testutil::ptx("8.0", "sm_90").into_bytes()).unwrap()
}

fn run_with(
    opts: RunOptions,
    kernel: impl FnOnce(FakeDevice) -> Result<(), String> + Send + 'static,
) -> (Result<RunOutcome, RunError>, Output) {
    let mut b = FakeBackend::new(kernel);
    let sink = VecSink::default();
    let r = execute(&mut b, &code(), &opts, sink.clone());
    let out = sink.0.lock().unwrap().clone();
    (r, out)
}

fn text(out: &[(u8, Vec<u8>)], fd: u8) -> String {
    out.iter().filter(|(f, _)| *f == fd).map(|(_, b)| String::from_utf8_lossy(b)).collect()
}

#[test]
fn hello_and_exit_code() {
    let (r, out) = run_with(RunOptions::default(), |d| {
        let p = d.producer();
        assert_eq!(d.lb.num_threads, 16);
        assert_eq!(d.lb.lanes, 32);
        p.write(0, 1, b"hello from the GPU\n");
        p.send(0, OP_EXIT, 0, 3, &[]);
        Ok(())
    });
    let r = r.unwrap();
    assert_eq!(text(&out, 1), "hello from the GPU\n");
    assert_eq!(r.status.status, "exited");
    assert_eq!(r.status.exit_code, 3);
    assert!(r.status.kernel_finished);
    assert!(r.message.is_none());
    assert_eq!(r.status.launch.as_ref().unwrap().block_warps, 2);
}

#[test]
fn stacks_past_the_address_space_are_a_usage_error() {
    // 70368744177416K: 2^56 + 8K bytes a thread, which multiplied by the
    // warps wrapped to a small allocation.
    let big = 70368744177416u64 << 10;
    let e = super::stacks_bytes(big, 32, 256).unwrap_err();
    assert_eq!(e.exit_code(), exit::USAGE);
    assert!(e.to_string().starts_with(&format!("--stack-size {big}: ")), "{e}");
    assert!(super::stacks_bytes(u64::MAX, 32, 1).is_err(), "the per-warp sum overflows too");
    assert_eq!(super::stacks_bytes(512 << 10, 32, 2).unwrap(), 2 * ((512 << 10) + 31 * (8 << 10)));
}

#[test]
fn a_size_the_device_cannot_allocate_names_its_option() {
    let api = || BackendError::Api { call: "cuMemAlloc", name: "CUDA_ERROR_OUT_OF_MEMORY".into(), desc: String::new(), hint: "h".into() };
    let e = super::refused_size("--heap-size", 1 << 50, api());
    assert_eq!(e.exit_code(), exit::USAGE);
    assert_eq!(
        e.to_string(),
        "--heap-size 1125899906842624: the device could not allocate it (cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY); lower --heap-size"
    );
}

#[test]
fn exit_status_is_the_codes_low_byte() {
    for (code, status) in [(-1i32, 255), (263, 7), (256, 0)] {
        let (r, _) = run_with(RunOptions::default(), move |d| {
            d.producer().send(0, OP_EXIT, 0, code as u32 as u64, &[]);
            Ok(())
        });
        let r = r.unwrap();
        assert_eq!((r.status.exit_code, r.status.program_exit_code), (status, Some(code)), "exit({code})");
    }
}

#[test]
fn the_executable_reaches_the_device() {
    let opts = RunOptions { exe: b"/abs/prog.elf".to_vec(), ..Default::default() };
    let (r, out) = run_with(opts, |d| {
        // SAFETY: exe points at len bytes of the launch block's allocation.
        let exe = unsafe { std::slice::from_raw_parts(d.lb.exe.ptr as *const u8, d.lb.exe.len as usize) };
        d.producer().write(0, 1, exe);
        d.producer().send(0, OP_EXIT, 0, 0, &[]);
        Ok(())
    });
    assert_eq!(r.unwrap().status.exit_code, 0);
    assert_eq!(text(&out, 1), "/abs/prog.elf");
}

#[test]
fn arguments_reach_the_device() {
    let opts = RunOptions {
        args: vec![b"prog".to_vec(), b"a b".to_vec()],
        env: vec![b"K=V".to_vec()],
        threads: Some(3),
        ..Default::default()
    };
    let (r, out) = run_with(opts, |d| {
        let p = d.producer();
        assert_eq!(d.lb.num_threads, 3);
        // K=V and the RAYON_NUM_THREADS default (`with_pool_defaults`).
        assert_eq!(d.lb.envc, 2);
        p.write(0, 1, format!("{:?}\n", d.args()).as_bytes());
        p.send(0, OP_EXIT, 0, 0, &[]);
        Ok(())
    });
    assert_eq!(r.unwrap().status.exit_code, 0);
    assert_eq!(text(&out, 1), "[\"prog\", \"a b\"]\n");
}

#[test]
fn too_many_threads_is_a_usage_error() {
    let (r, _) = run_with(RunOptions { threads: Some(17), ..Default::default() }, |_| Ok(()));
    let e = r.err().unwrap();
    assert_eq!(e.exit_code(), exit::USAGE);
    assert!(e.to_string().contains("16 warps"), "{e}");
}

#[test]
fn panic_then_trap_gives_101() {
    let (r, out) = run_with(RunOptions::default(), |d| {
        let p = d.producer();
        p.write(1, 2, b"thread '<unnamed>' panicked at src/main.rs:3:5:\nboom\n");
        p.send(1, OP_ABORT, 0, 101, &[]);
        Err("trap".into())
    });
    let r = r.unwrap();
    assert!(text(&out, 2).contains("boom"));
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("aborted", 101));
    assert!(r.message.is_none());
}

#[test]
fn fault_is_reported_after_the_output() {
    let (r, out) = run_with(RunOptions::default(), |d| {
        let p = d.producer();
        p.write(2, 1, b"about to crash\n");
        p.send(2, OP_WRITE, FLAG_MORE, 1, b"half a li");
        Err("illegal memory access".into())
    });
    let r = r.unwrap();
    assert_eq!(text(&out, 1), "about to crash\nhalf a li");
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("fault", exit::DEVICE_FAULT));
    let m = r.message.unwrap();
    assert!(m.contains("FAKE_ILLEGAL_ADDRESS") && m.contains("thread 2"), "{m}");
    assert!(m.contains("half a li"), "{m}");
}

#[test]
fn timeout_reports_blocked_threads_and_last_lines() {
    let opts = RunOptions { timeout: Some(Duration::from_millis(150)), ..Default::default() };
    let (r, out) = run_with(opts, |d| {
        let p = d.producer();
        d.set_thread(0, THREAD_RUNNING, WAIT_JOIN, "main");
        d.set_thread(1, THREAD_RUNNING, WAIT_LOCK, "");
        d.set_thread(2, THREAD_FINISHED, 0, "");
        p.write(1, 1, b"step 1\nwaiting for the lock\n");
        d.spin_until_cancelled();
        Ok(())
    });
    let r = r.unwrap();
    assert_eq!(text(&out, 1), "step 1\nwaiting for the lock\n");
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("timeout", exit::TIMEOUT));
    assert!(!r.status.kernel_finished);
    let m = r.message.unwrap();
    assert!(m.contains("thread 0 \"main\": blocked in join; nothing printed"), "{m}");
    assert!(m.contains("thread 1: blocked on a lock; last printed: \"waiting for the lock\""), "{m}");
    assert!(!m.contains("thread 2"), "{m}");
    assert_eq!(r.status.threads.len(), 2);
}

#[test]
fn timeout_does_not_wait_for_a_blocked_host_call() {
    use rt_abi::hostcall::{CALL_OPEN, OPEN_READ};
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("gpurun-run-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let opts = RunOptions { timeout: Some(Duration::from_millis(200)), ..Default::default() };
    let path = fifo.as_os_str().as_bytes().to_vec();
    let started = Instant::now();
    let (r, _) = run_with(opts, move |d| {
        let p = d.producer();
        d.set_thread(3, THREAD_RUNNING, WAIT_HOST, "reads-fifo");
        // Thread 3 opens a FIFO nobody writes: the host's open never ends.
        let mut req = u64::from(OPEN_READ).to_le_bytes().to_vec();
        req.extend_from_slice(&path);
        p.call_request(3, CALL_OPEN, &req);
        p.write(1, 1, b"still printing\n");
        d.spin_until_cancelled();
        Ok(())
    });
    let r = r.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "execute took {:?}", started.elapsed());
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("timeout", exit::TIMEOUT));
    let m = r.message.unwrap();
    assert!(m.contains("thread 3 \"reads-fifo\": waiting for the host, in host call `open` for"), "{m}");
    // Let the worker go.
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn detached_threads_do_not_hold_the_exit() {
    let opts = RunOptions { exit_grace: Duration::from_millis(50), ..Default::default() };
    let (r, _) = run_with(opts, |d| {
        d.producer().send(0, OP_EXIT, 0, 0, &[]);
        d.spin_until_cancelled();
        Ok(())
    });
    let r = r.unwrap();
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("exited", 0));
    assert!(!r.status.kernel_finished);
}

#[test]
fn missing_exit_is_a_warning() {
    let (r, _) = run_with(RunOptions::default(), |_| Ok(()));
    let r = r.unwrap();
    assert_eq!(r.status.exit_code, 0);
    assert!(r.message.unwrap().contains("without reporting an exit status"));
}

#[test]
fn corrupt_ring_is_a_protocol_error() {
    let (r, out) = run_with(RunOptions::default(), |d| {
        let p = d.producer();
        p.write(0, 1, b"fine\n");
        p.send(99, OP_WRITE, 0, 1, b"bad thread");
        d.spin_until_cancelled();
        Ok(())
    });
    let r = r.unwrap();
    assert_eq!(text(&out, 1), "fine\n");
    assert_eq!((r.status.status.as_str(), r.status.exit_code), ("protocol_error", exit::PROTOCOL));
    assert!(r.message.unwrap().contains("thread index 99"));
}

#[test]
fn rayon_gets_one_worker_per_sm_unless_the_user_chose() {
    let env = with_pool_defaults(&[b"HOME=/root".to_vec()], 132, 4224);
    assert_eq!(env, [b"HOME=/root".to_vec(), b"RAYON_NUM_THREADS=132".to_vec()]);
    // Never more workers than warps main can spawn, never none.
    assert!(with_pool_defaults(&[], 132, 8).contains(&b"RAYON_NUM_THREADS=7".to_vec()));
    assert!(with_pool_defaults(&[], 132, 1).contains(&b"RAYON_NUM_THREADS=1".to_vec()));
    let mine = [b"RAYON_NUM_THREADS=3".to_vec()];
    assert_eq!(with_pool_defaults(&mine, 132, 4224), mine);
}

#[test]
fn call_stack_defaults_to_64k_within_an_eighth_of_memory() {
    let h100 = crate::backend::h100();
    let opts = RunOptions::default();
    // 80 GiB over 270,336 lanes: 38.8K each, whole KiB below.
    assert_eq!(call_stack_size(&opts, &h100, true), (38 << 10, "--call-stack-size"));
    // An H200's 141 GB: 63K (17 GiB in all).
    let h200 = DeviceInfo { total_memory: 141_000_000_000, ..h100.clone() };
    assert_eq!(call_stack_size(&opts, &h200, true).0, 63 << 10);
    let big = DeviceInfo { total_memory: 192 << 30, ..h100.clone() };
    assert_eq!(call_stack_size(&opts, &big, true).0, 64 << 10);
    // 8 GiB over the same lanes: 3,971 bytes each, so the 4K floor.
    let small = DeviceInfo { total_memory: 8 << 30, ..h100.clone() };
    assert_eq!(call_stack_size(&opts, &small, true).0, 4 << 10);
    // 24 GiB: 11,915 bytes each, whole KiB below.
    let mid = DeviceInfo { total_memory: 24 << 30, ..h100.clone() };
    assert_eq!(call_stack_size(&opts, &mid, true).0, 11 << 10);
    // The user's choice wins; frames in private memory take --stack-size.
    let chosen = RunOptions { call_stack_size: Some(256 << 10), stack_size: Some(64 << 10), ..RunOptions::default() };
    assert_eq!(call_stack_size(&chosen, &h100, true), (256 << 10, "--call-stack-size"));
    let private = RunOptions { stack_size: Some(64 << 10), ..RunOptions::default() };
    assert_eq!(call_stack_size(&private, &h100, false), (64 << 10, "--stack-size"));
    assert_eq!(call_stack_size(&private, &h100, true).0, 38 << 10);
}

#[test]
fn default_heap_takes_what_is_free_less_a_margin() {
    const GIB: u64 = 1 << 30;
    // An H200 after its call stacks and thread stacks: ~111 GiB free.
    assert_eq!(default_heap_size(111 * GIB, 0), 111 * GIB - 111 * GIB / 32);
    assert!(default_heap_size(111 * GIB, 0) > 100 * GIB);
    // A call stack the driver takes only at launch (HIP's scratch) is left out.
    assert_eq!(default_heap_size(111 * GIB, 11 * GIB), 100 * GIB - 100 * GIB / 32);
    // Small devices keep at least 1 GiB, or a quarter of what is free.
    assert_eq!(default_heap_size(8 * GIB, 0), 7 * GIB);
    assert_eq!(default_heap_size(GIB, 0), 3 * GIB / 4);
    assert_eq!(default_heap_size(0, 0), MIN_DEFAULT_HEAP);
    assert_eq!(default_heap_size(GIB, 2 * GIB), MIN_DEFAULT_HEAP);
    // What the driver still has to take is measured: the free memory's drop
    // across `set_call_stack`, against every lane's share.
    let h100 = crate::backend::h100();
    assert_eq!(call_stack_reserve(&h100, 32 << 10), 270_336 * (32 << 10));
}

#[test]
fn an_fs_root_that_cannot_be_honoured_stops_the_run_before_launch() {
    let opts = RunOptions { fs_root: Some("/no/such/gpurun-root".into()), ..Default::default() };
    let (r, out) = run_with(opts, |_| Err("the kernel must not be launched".into()));
    let Err(e) = r else { panic!("the run went ahead") };
    assert!(matches!(e, RunError::FsRoot(_)), "{e}");
    assert_eq!(e.exit_code(), crate::exit::USAGE);
    assert!(e.to_string().contains("--fs-root /no/such/gpurun-root"), "{e}");
    assert!(out.is_empty());
}
