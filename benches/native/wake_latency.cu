// Row 2 baseline: device-side launch latency (dynamic parallelism). A parent
// kernel stamps %globaltimer, launches a one-warp child into the fire-and-
// forget stream and waits for the child's own stamp; a sample is the
// difference. Needs -rdc=true -lcudadevrt (CUDA 12+ device runtime).
//
// HIP has no device-side launch (no dynamic parallelism: a kernel cannot
// start another on AMD), so the AMD twin runs nothing and prints the row as
// not run, saying why; a launch from the host is spawn_join's launch_sync.
#include "common.cuh"

#if defined(GPU_HIP)
int main() {
    row_not_run("wake_latency", "device_launch", "ns",
                "HIP has no device-side launch (dynamic parallelism) on AMD; the host-side launch is spawn_join's "
                "launch_sync row");
    return 0;
}
#else

__global__ void child(volatile u64* slot) {
    if (threadIdx.x == 0) *slot = gtimer();
}

// failed: 0, or 1 + the sample at which a child did not start within 100 ms.
__global__ void parent(u64* launched, u64* started, int n, volatile u64* slot, int* failed) {
    for (int i = 0; i < n; i++) {
        *slot = 0;
        __threadfence();
        u64 t0 = gtimer();
        child<<<1, 32, 0, cudaStreamFireAndForget>>>(slot);
        u64 t1;
        while ((t1 = *slot) == 0) {
            if (gtimer() - t0 > 100000000ull) {
                *failed = i + 1;
                return;
            }
        }
        launched[i] = t0;
        started[i] = t1;
    }
}

int main() {
    const int n = WARMUP + SAMPLES;
    u64 *launched, *started, *slot;
    int* failed;
    CK(cudaMalloc(&launched, n * sizeof(u64)));
    CK(cudaMalloc(&started, n * sizeof(u64)));
    CK(cudaMalloc(&slot, sizeof(u64)));
    CK(cudaMalloc(&failed, sizeof(int)));
    CK(cudaMemset(failed, 0, sizeof(int)));
    parent<<<1, 1>>>(launched, started, n, slot, failed);
    CK_LAUNCH();
    int f = 0;
    CK(cudaMemcpy(&f, failed, sizeof(int), cudaMemcpyDeviceToHost));
    if (f != 0) {
        row_not_run("wake_latency", "device_launch", "ns",
                    "a device-launched child did not start within 100 ms (sample " + std::to_string(f - 1) + ")");
        return 0;
    }
    auto a = download(launched, n), b = download(started, n);
    std::vector<long long> s;
    for (int i = WARMUP; i < n; i++) s.push_back(b[i] - a[i]);
    row_latency("wake_latency", "device_launch", s,
                field("how", "device-side launch (cudaStreamFireAndForget) to the child's first instruction"));
    return 0;
}
#endif
