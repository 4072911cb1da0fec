// Row 11 baseline, "same work alone": one warp (lane 0) runs the idle_cost
// program's dependent integer chain (gpu_benches::lcg_chain) with nothing
// else on the GPU. Median of 5 runs, iterations per second (%globaltimer).
#include "common.cuh"

__global__ void work(u64 iters, u64 seed, u64* out) {
    if (threadIdx.x != 0) return;
    u64 x = seed, t0 = gtimer();
    for (u64 i = 0; i < iters; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    u64 t1 = gtimer();
    out[0] = x;
    out[1] = t1 - t0;
}

int main() {
    gpu_timer_init();
    const u64 iters = 10000000;
    u64* out;
    CK(cudaMalloc(&out, 2 * sizeof(u64)));
    std::vector<double> rates;
    u64 r[2] = {1, 0};
    for (int rep = 0; rep < 5; rep++) {
        work<<<1, 32>>>(iters, r[0], out);
        CK_LAUNCH();
        CK(cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost));
        rates.push_back(iters / (r[1] * 1e-9));
    }
    std::sort(rates.begin(), rates.end());
    row_value("idle_cost", "alone", "iter/s", rates[2],
              field("iterations", (long long)iters) + field("reps", 5) + field("measure", "median of reps") +
                  field("how", "one warp, nothing else resident"));
    return 0;
}
