// Shared by the native baselines of the benchmark matrix (BENCH.md), CUDA
// programs that also build for AMD with hipcc (gpu_portable.h maps them).
// Each baseline is one executable that prints JSON rows on stdout, one per
// line, in the row format of BENCH.md less what `gpurun-dev bench` adds itself
// (backend "native-cuda" or "native-hip", device, driver, clocks, commit, date).
// Built with: nvcc -O3 -arch=sm_90 -std=c++17 -rdc=true X.cu -o X -lcudadevrt
//        or:  hipcc --offload-arch=gfx90a -O3 -std=c++17 X.cu -o X
#pragma once
#include "gpu_portable.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

typedef unsigned long long u64;

// Every CUDA runtime call is checked; a failure names the call and exits 1.
#define CK(call)                                                                       \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,  \
                    cudaGetErrorString(err_), cudaGetErrorName(err_));                 \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

// Checks a kernel launch, then waits for it.
#define CK_LAUNCH()                         \
    do {                                    \
        CK(cudaGetLastError());             \
        CK(cudaDeviceSynchronize());        \
    } while (0)

const int SAMPLES = 10000;
const int WARMUP = 100;

// gtimer(): nanoseconds, device-wide (gpu_portable.h). A "warp" here is
// WARP lanes: a wavefront on AMD.
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x % WARP; }
__device__ __forceinline__ unsigned global_warp() { return (blockIdx.x * blockDim.x + threadIdx.x) / WARP; }

inline u64 host_ns() {
    return (u64)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

inline int sm_count() {
    int dev = 0, n = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
}

// Blocks of `kernel` (of `block` threads) that can be resident at once.
template <typename K>
inline int resident_blocks(K kernel, int block) {
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    return per_sm * sm_count();
}

// p50 / p99 / max by nearest rank (as the Rust programs compute them).
struct Stats {
    long long p50, p99, max;
    size_t n;
};
inline Stats stats(std::vector<long long> v) {
    Stats s = {0, 0, 0, v.size()};
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    auto rank = [&](double q) {
        size_t r = (size_t)(q * v.size() + 0.999999);
        if (r < 1) r = 1;
        if (r > v.size()) r = v.size();
        return v[r - 1];
    };
    s.p50 = rank(0.50);
    s.p99 = rank(0.99);
    s.max = v.back();
    return s;
}

// `extra` is either "" or more fields, starting with a comma: ",\"k\":1".
inline void row_latency(const char* id, const char* variant, const std::vector<long long>& samples,
                        const std::string& extra = "") {
    Stats s = stats(samples);
    if (s.n == 0) {
        printf("{\"benchmark\":\"%s\",\"variant\":\"%s\",\"unit\":\"ns\",\"status\":\"not run: no samples\"%s}\n",
               id, variant, extra.c_str());
    } else {
        printf("{\"benchmark\":\"%s\",\"variant\":\"%s\",\"unit\":\"ns\",\"status\":\"measured\","
               "\"p50\":%lld,\"p99\":%lld,\"max\":%lld,\"samples\":%zu%s}\n",
               id, variant, s.p50, s.p99, s.max, s.n, extra.c_str());
    }
    fflush(stdout);
}

inline void row_value(const char* id, const char* variant, const char* unit, double value,
                      const std::string& extra = "") {
    printf("{\"benchmark\":\"%s\",\"variant\":\"%s\",\"unit\":\"%s\",\"status\":\"measured\",\"value\":%.6g%s}\n",
           id, variant, unit, value, extra.c_str());
    fflush(stdout);
}

inline void row_not_run(const char* id, const char* variant, const char* unit, const std::string& reason) {
    printf("{\"benchmark\":\"%s\",\"variant\":\"%s\",\"unit\":\"%s\",\"status\":\"not run: %s\"}\n", id, variant,
           unit, reason.c_str());
    fflush(stdout);
}

inline std::string field(const char* k, long long v) { return ",\"" + std::string(k) + "\":" + std::to_string(v); }
inline std::string field(const char* k, const char* v) { return ",\"" + std::string(k) + "\":\"" + v + "\""; }
inline std::string field_bool(const char* k, bool v) { return ",\"" + std::string(k) + "\":" + (v ? "true" : "false"); }

// Copies `n` device u64s into a vector of signed values.
inline std::vector<long long> download(const u64* dev, size_t n) {
    std::vector<u64> h(n);
    CK(cudaMemcpy(h.data(), dev, n * sizeof(u64), cudaMemcpyDeviceToHost));
    return std::vector<long long>(h.begin(), h.end());
}
