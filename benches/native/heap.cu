// Row 14 baseline: device malloc(32) + free pairs per second, for one second,
// from one thread and from lane 0 of every resident warp (one allocating
// thread per warp, as a Rust std::thread is). Heap limit raised to 256 MB.
#include "common.cuh"

const u64 RUN_NS = 1000000000ull;

// counts[w] = pairs, times[w] = ns; fails[0] counts malloc returning null.
__global__ void churn(u64* counts, u64* times, unsigned* fails) {
    if (lane_id() != 0) return;
    unsigned w = global_warp();
    u64 t0 = gtimer(), pairs = 0, now;
    while ((now = gtimer()) - t0 < RUN_NS) {
        for (int k = 0; k < 64; k++) {
            volatile char* p = (volatile char*)malloc(32);
            if (!p) {
                atomicAdd(fails, 1u);
                continue;
            }
            *p = (char)k;
            free((void*)p);
        }
        pairs += 64;
    }
    counts[w] = pairs;
    times[w] = gtimer() - t0;
}

static void bench(const char* variant, int blocks, int block, u64* counts, u64* times, unsigned* fails) {
    int warps = blocks * block / WARP;
    CK(cudaMemset(fails, 0, sizeof(unsigned)));
    churn<<<blocks, block>>>(counts, times, fails);
    CK_LAUNCH();
    auto c = download(counts, warps), t = download(times, warps);
    unsigned f = 0;
    CK(cudaMemcpy(&f, fails, sizeof f, cudaMemcpyDeviceToHost));
    long long pairs = 0, ns = 1;
    for (int i = 0; i < warps; i++) pairs += c[i], ns = std::max(ns, t[i]);
    row_value("heap", variant, "pairs/s", pairs / (ns * 1e-9),
              field("threads", warps) + field("pairs", pairs) + field("malloc_failures", f) +
                  field("how", "device malloc(32)/free, lane 0 of each warp"));
}

int main() {
    gpu_timer_init();
#if defined(GPU_HIP)
    // HIP's device malloc takes more memory from the host as its heap fills:
    // there is no limit to raise (and HIP 5.2 has no hipDeviceSetLimit).
#else
    CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
#endif
    int blocks = resident_blocks(churn, 2 * WARP);
    int warps = blocks * 2;
    u64 *counts, *times;
    unsigned* fails;
    CK(cudaMalloc(&counts, warps * sizeof(u64)));
    CK(cudaMalloc(&times, warps * sizeof(u64)));
    CK(cudaMalloc(&fails, sizeof(unsigned)));
    bench("1_thread", 1, WARP, counts, times, fails);
    bench("all_threads", blocks, 2 * WARP, counts, times, fails);
    return 0;
}
