// Row 10 baseline: cooperative groups grid.sync() with N = 2, 32, 132, 1024
// and all resident warps (cooperative launch). A sample is the time between
// two consecutive grid.sync() returns on thread 0 (%globaltimer). HIP has the
// same cooperative groups, under its own header name (after hip_runtime.h).
#include "common.cuh"

#if defined(GPU_HIP)
#include <hip/hip_cooperative_groups.h>
#else
#include <cooperative_groups.h>
#endif

namespace cg = cooperative_groups;

__global__ void cycles(int n, u64* stamps) {
    cg::grid_group grid = cg::this_grid();
    for (int i = 0; i < WARMUP + n + 1; i++) {
        grid.sync();
        if (blockIdx.x == 0 && threadIdx.x == 0) stamps[i] = gtimer();
    }
}

static void bench(const char* variant, int blocks, int block, u64* stamps) {
    int n = SAMPLES;
    void* args[] = {&n, &stamps};
    CK(cudaLaunchCooperativeKernel((void*)cycles, dim3(blocks), dim3(block), args, 0, 0));
    CK_LAUNCH();
    auto t = download(stamps, WARMUP + n + 1);
    std::vector<long long> s;
    for (int i = WARMUP + 1; i <= WARMUP + n; i++) s.push_back(t[i] - t[i - 1]);
    row_latency("barrier", variant, s, field("threads", blocks * block / WARP) + field("how", "cooperative groups grid.sync()"));
}

int main() {
    gpu_timer_init();
    int dev = 0, coop = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop) {
        row_not_run("barrier", "", "ns", "the device does not support cooperative launches");
        return 0;
    }
    u64* stamps;
    CK(cudaMalloc(&stamps, (WARMUP + SAMPLES + 1) * sizeof(u64)));
    int one_warp_blocks = resident_blocks(cycles, WARP);
    const int sizes[] = {2, 32, 132, 1024};
    for (int n : sizes) {
        if (n > one_warp_blocks) continue;
        std::string v = "N=" + std::to_string(n);
        bench(v.c_str(), n, WARP, stamps);  // one warp per block
    }
    bench("N=all", resident_blocks(cycles, 2 * WARP), 2 * WARP, stamps);
    return 0;
}
