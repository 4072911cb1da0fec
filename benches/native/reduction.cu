// Row 7 baseline: sum 4 GiB of f32 with every lane: float4 loads, four in
// flight per thread, warp shuffles, one partial per block summed on the host
// in double (exact for the all-ones data). Timed with CUDA events, repeated
// for at least one second; value = bytes read / kernel time, in GB/s (1e9).
// On AMD a warp is a wavefront (64 lanes on CDNA), so the shuffles start at
// WARP / 2 and a block of 256 has 4 partial sums, not 8.
#include "common.cuh"

const size_t BYTES = 4ull << 30;
const int BLOCK = 256;

__global__ void fill(float* p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = 1.0f;
}

__device__ __forceinline__ float add4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__global__ void reduce(const float4* __restrict__ p, size_t n4, float* partial) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float a = 0, b = 0, c = 0, d = 0;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 x = p[i], y = p[i + stride], z = p[i + 2 * stride], w = p[i + 3 * stride];
        a += add4(x), b += add4(y), c += add4(z), d += add4(w);
    }
    for (; i < n4; i += stride) a += add4(p[i]);
    float s = (a + b) + (c + d);
    for (int o = WARP / 2; o > 0; o >>= 1) s += gpu_shfl_down(s, o);
    __shared__ float warp_sums[BLOCK / 32];  // room for 32-lane warps, the narrowest
    if (lane_id() == 0) warp_sums[threadIdx.x / WARP] = s;
    __syncthreads();
    if (threadIdx.x < WARP) {
        s = threadIdx.x < BLOCK / WARP ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = WARP / 2; o > 0; o >>= 1) s += gpu_shfl_down(s, o);
        if (threadIdx.x == 0) partial[blockIdx.x] = s;
    }
}

int main() {
    size_t n = BYTES / sizeof(float);
    float *data, *partial;
    CK(cudaMalloc(&data, BYTES));
    int grid = resident_blocks(reduce, BLOCK);
    CK(cudaMalloc(&partial, grid * sizeof(float)));
    fill<<<grid, BLOCK>>>(data, n);
    CK_LAUNCH();

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; i++) reduce<<<grid, BLOCK>>>((const float4*)data, n / 4, partial);
    CK_LAUNCH();
    double total_ms = 0, best_ms = 1e30;
    int reps = 0;
    while (reps < 1000 && (reps < 10 || total_ms < 1000.0)) {
        CK(cudaEventRecord(e0));
        reduce<<<grid, BLOCK>>>((const float4*)data, n / 4, partial);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        total_ms += ms;
        best_ms = std::min(best_ms, (double)ms);
        reps++;
    }
    std::vector<float> h(grid);
    CK(cudaMemcpy(h.data(), partial, grid * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (float x : h) sum += x;
    double gbps = (double)BYTES * reps / (total_ms * 1e6);
    row_value("reduction", "", "GB/s", gbps,
              field("bytes", (long long)BYTES) + field("reps", reps) + field_bool("sum_correct", sum == (double)n) +
                  field("best_GBps", (long long)(BYTES / (best_ms * 1e6))) +
                  field("how", "all lanes, float4 loads, shuffles, " GPU_API " events"));
    return 0;
}
