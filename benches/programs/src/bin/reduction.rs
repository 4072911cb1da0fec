//! Row 7: sum 4 GiB of f32 using all lanes.
//!
//! Every worker thread (one warp on the GPU) owns a contiguous share of the
//! data in a heap `Vec` of 16-byte vectors, and sums it with every lane of
//! its warp through `gpu_lanes::for_each_lane`: lane `l` of `n` reads vectors
//! `l, l + n, l + 2n, …`, so a warp's 32 lanes read 512 contiguous bytes per
//! step (coalesced 16-byte loads, four steps in flight, as the native
//! kernel does). Each lane writes its partial sum to a heap array (f64 bits);
//! lane 0 adds them up. The variant `one_lane_per_thread` (GPU only) sums
//! the same data on lane 0 alone: what a thread gets without the lane API;
//! `8_in_flight` keeps eight loads in flight per lane; `grid_stride` reads
//! one shared array of the same size in the native kernel's order (lane `l`
//! of thread `w`: vectors `w * lanes + l` plus multiples of
//! `threads * lanes`), so that at any moment all warps read one window of
//! it, not one share each.
//!
//! On AMD `gpu_lanes::lanes()` is the wave size (64 on gfx90a/gfx942, 32 on
//! gfx1100: the whole-wave call, see the gpu-lanes crate), so each worker
//! sums with its whole wavefront; the row's `lanes` field says how many. On
//! the host the same code is the CPU's figure (every thread, vectorised by
//! the compiler; `lanes()` is 1).
//!
//! `GPU_BENCH_REDUCTION_MIB` overrides the size (for small machines).
use gpu_benches::{Row, env_u64, on_gpu, parallelism, stamp};
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Four f32, 16-byte aligned, so each lane's load is one 16-byte load.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct F4([f32; 4]);

const ALL_LANES: u32 = 0;
const ONE_LANE: u32 = 1;
/// All lanes, eight loads in flight per lane (GPU only).
const ALL_LANES_8: u32 = 2;
/// All lanes, the whole array in the native kernel's order (GPU only).
const GRID_STRIDE: u32 = 3;
const STOP: u32 = 4;
const MODES: usize = 4;

/// `grid_stride`'s array: one allocation, shared by every worker. Each fills
/// its own contiguous share before the first barrier; from then on all only
/// read.
#[derive(Clone, Copy)]
struct Shared {
    ptr: *mut F4,
    len: usize,
}

// SAFETY: written only by each worker in its own disjoint share, before the
// barrier after which every read happens.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// The whole array.
    ///
    /// # Safety
    /// Every worker filled its share (it passed the barrier that follows the fill).
    unsafe fn all(&self) -> &[F4] {
        // SAFETY: the caller's contract; `len` is the allocation's capacity.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Steps (of four vectors) per lane between flushes of the f32
/// accumulators into the f64 total: each accumulator stays ≤ 4096, exact
/// for the all-ones data.
const FLUSH_STEPS: usize = 1024;

/// Sum of the vectors `lane, lane + n, lane + 2n, …` of `xs`: `K` loads in
/// flight, f32 accumulators flushed into an f64 total.
#[inline(always)]
fn lane_sum<const K: usize>(xs: &[F4], lane: usize, n: usize) -> f64 {
    if n == 1 {
        return contiguous_sum(xs);
    }
    let add4 = |v: F4| (v.0[0] + v.0[1]) + (v.0[2] + v.0[3]);
    let len = xs.len();
    let mut total = 0f64;
    let mut i = lane;
    while i < len {
        let mut acc = [0f32; K];
        let mut steps = 0;
        while steps < FLUSH_STEPS && i + (K - 1) * n < len {
            let v: [F4; K] = std::array::from_fn(|k| xs[i + k * n]);
            for k in 0..K {
                acc[k] += add4(v[k]);
            }
            i += K * n;
            steps += 1;
        }
        if steps < FLUSH_STEPS {
            // Fewer than `K` of this lane's vectors are left.
            while i < len {
                acc[0] += add4(xs[i]);
                i += n;
            }
        }
        // Pairwise: `(a + c) + (b + d)` for four (exact for the all-ones data).
        let mut width = K;
        while width > 1 {
            width /= 2;
            for k in 0..width {
                acc[k] += acc[k + width];
            }
        }
        total += acc[0] as f64;
    }
    total
}

/// One lane reading everything (the host, AMD, `one_lane_per_thread`):
/// component-wise accumulators over two vectors at a time, which the host
/// compiler keeps in SIMD registers (horizontal adds per vector, as in
/// [`lane_sum`]'s strided loop, cost the host ~15 %).
fn contiguous_sum(xs: &[F4]) -> f64 {
    let mut total = 0f64;
    for block in xs.chunks(FLUSH_STEPS) {
        let (mut a, mut b) = ([0f32; 4], [0f32; 4]);
        let mut it = block.chunks_exact(2);
        for p in &mut it {
            for k in 0..4 {
                a[k] += p[0].0[k];
                b[k] += p[1].0[k];
            }
        }
        for v in it.remainder() {
            for k in 0..4 {
                a[k] += v.0[k];
            }
        }
        total += (0..4).map(|k| (a[k] + b[k]) as f64).sum::<f64>();
    }
    total
}

fn main() {
    let mib = env_u64("GPU_BENCH_REDUCTION_MIB").unwrap_or(4096);
    let vectors = ((mib << 20) / 16) as usize;
    let bytes = vectors as u64 * 16;
    let workers = if on_gpu() { parallelism().saturating_sub(1).max(1) } else { parallelism() };
    let lanes = gpu_lanes::lanes();
    let modes: &[u32] = if on_gpu() { &[ALL_LANES, ONE_LANE, ALL_LANES_8, GRID_STRIDE] } else { &[ALL_LANES] };
    // On the heap: every lane of every warp can read it. (With the workers'
    // own shares, 8 GiB: the bench gives this row a 10 GiB heap.)
    // Only the GPU runs `grid_stride`.
    let grid = on_gpu();
    let mut array: Vec<F4> = Vec::with_capacity(if grid { vectors } else { 0 });
    let shared = Shared { ptr: array.as_mut_ptr(), len: array.capacity() };
    let base = Instant::now();
    let go = Arc::new(Barrier::new(workers + 1));
    let mode = Arc::new(AtomicU32::new(STOP));
    let hs: Vec<_> = (0..workers)
        .map(|w| {
            let len = vectors / workers + usize::from(w < vectors % workers);
            let start = w * (vectors / workers) + w.min(vectors % workers);
            // grid_stride: lane `l` of worker `w` reads vectors `w * lanes + l`
            // plus multiples of `workers * lanes`, as the native kernel's threads.
            let stride = workers * lanes;
            let grid_len = vectors / stride * lanes + (vectors % stride).saturating_sub(w * lanes).min(lanes);
            let (go, mode) = (go.clone(), mode.clone());
            std::thread::spawn(move || {
                // A share in an allocation of its own: 5 % faster than the same
                // share of the shared array, whether shares start on 16 or on
                // 128 bytes (same run, H200: bench-results/rows/
                // 2026-11-28-h200-reduction-variants/).
                let data: Arc<Vec<F4>> = Arc::new(vec![F4([1.0; 4]); len]);
                if grid {
                    for i in start..start + len {
                        // SAFETY: this worker's own share of the shared array.
                        unsafe { shared.ptr.add(i).write(F4([1.0; 4])) };
                    }
                }
                let partial: Arc<Vec<AtomicU64>> = Arc::new((0..lanes).map(|_| AtomicU64::new(0)).collect());
                let mut windows = [const { Vec::new() }; MODES];
                let mut ok = [true; MODES];
                loop {
                    go.wait();
                    let m = mode.load(Relaxed);
                    if m == STOP {
                        break;
                    }
                    let t0 = stamp(base);
                    let s = if m == ONE_LANE {
                        lane_sum::<4>(black_box(&data[..]), 0, 1)
                    } else {
                        let (d, p) = (data.clone(), partial.clone());
                        gpu_lanes::for_each_lane(move |lane| {
                            let s = match m {
                                ALL_LANES_8 => lane_sum::<8>(black_box(&d[..]), lane, lanes),
                                // SAFETY: every worker filled its share of the
                                // shared array before the first barrier.
                                GRID_STRIDE => lane_sum::<4>(black_box(unsafe { shared.all() }), w * lanes + lane, stride),
                                _ => lane_sum::<4>(black_box(&d[..]), lane, lanes),
                            };
                            p[lane].store(s.to_bits(), Relaxed);
                        });
                        // for_each_lane returned: every lane's store is visible.
                        partial.iter().map(|x| f64::from_bits(x.load(Relaxed))).sum::<f64>()
                    };
                    windows[m as usize].push((t0, stamp(base)));
                    let mine = if m == GRID_STRIDE { grid_len } else { len };
                    ok[m as usize] &= s == (mine * 4) as f64;
                    go.wait();
                }
                (windows, ok)
            })
        })
        .collect();
    // Per mode: repetitions until a second has passed (at least 3, at most 50).
    let mut reps = [0usize; MODES];
    for &m in modes {
        mode.store(m, Relaxed);
        let start = Instant::now();
        while !(reps[m as usize] >= 50 || (reps[m as usize] >= 3 && start.elapsed() >= Duration::from_secs(1))) {
            go.wait();
            go.wait();
            reps[m as usize] += 1;
        }
    }
    mode.store(STOP, Relaxed);
    go.wait();
    // A repetition lasts from the first thread's start to the last one's end.
    let mut span: [Vec<(u64, u64)>; MODES] = std::array::from_fn(|m| vec![(u64::MAX, 0u64); reps[m]]);
    let mut correct = [true; MODES];
    for h in hs {
        let (windows, ok) = h.join().unwrap();
        for m in 0..MODES {
            correct[m] &= ok[m];
            for (r, &(a, b)) in windows[m].iter().enumerate() {
                span[m][r] = (span[m][r].0.min(a), span[m][r].1.max(b));
            }
        }
    }
    let measured = |variant: &str, m: usize, lanes: usize| {
        let total_ns: u64 = span[m].iter().map(|(a, b)| b - a).sum();
        Row::new("reduction", variant, "GB/s")
            .int("bytes", bytes as i128)
            .int("threads", workers as i128)
            .int("lanes", lanes as i128)
            .int("reps", reps[m] as i128)
            .bool("sum_correct", correct[m])
            .value((bytes * reps[m] as u64) as f64 / total_ns as f64)
    };
    measured("", ALL_LANES as usize, lanes)
        .str("how", "gpu_lanes::for_each_lane, 16-byte interleaved loads, 4 in flight")
        .print();
    if on_gpu() {
        measured("one_lane_per_thread", ONE_LANE as usize, 1)
            .str("note", "one lane per warp: what a thread gets without gpu_lanes")
            .print();
        measured("8_in_flight", ALL_LANES_8 as usize, lanes)
            .str("note", "eight 16-byte loads in flight per lane, not four: as many bytes in flight per SM as the native kernel's four at twice the resident warps")
            .print();
        measured("grid_stride", GRID_STRIDE as usize, lanes)
            .str("note", "the whole array in the native kernel's order: lane l of thread w reads vectors w*lanes+l, then every threads*lanes-th, so all warps read one window of it at a time")
            .print();
    }
    // Every worker is joined: nothing reads the array any more.
    drop(array);
}
