//! Row 11: a compute-bound thread's throughput (main runs a dependent integer
//! chain) while every other warp idles. `gpurun-dev bench` runs it with all warps
//! (variant "") and with `--threads 1` (variant "alone": no idle warps), and
//! at several idle policies; the native baseline runs the same arithmetic alone.
use gpu_benches::{Row, env_u64, lcg_chain, on_gpu, parallelism};
use std::hint::black_box;
use std::time::Instant;

const REPS: usize = 5;

fn main() {
    let iters = env_u64("GPU_BENCH_IDLE_COST_ITERS").unwrap_or(10_000_000);
    let mut rates = Vec::with_capacity(REPS);
    let mut x = 1u64;
    for _ in 0..REPS {
        let t = Instant::now();
        x = lcg_chain(black_box(x), black_box(iters));
        rates.push(iters as f64 / t.elapsed().as_secs_f64());
    }
    black_box(x);
    rates.sort_by(f64::total_cmp);
    let variant = if on_gpu() && parallelism() == 1 { "alone" } else { "" };
    Row::new("idle_cost", variant, "iter/s")
        .int("threads_launched", parallelism() as i128)
        .int("iterations", iters as i128)
        .int("reps", REPS as i128)
        .str("measure", "median of reps")
        .value(rates[REPS / 2])
        .print();
}
