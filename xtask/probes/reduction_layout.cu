// Why the all-lanes reduction (row 7) reaches 0.72x of the native kernel:
// the same float4 sum over 4 GiB, in CUDA, varying only what differs between
// `benches/native/reduction.cu` and `benches/programs/src/bin/reduction.rs`.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 xtask/probes/reduction_layout.cu -o /tmp/rl && /tmp/rl
//
// - warps per SM: the native kernel runs 64 (8 blocks of 256), the Rust
//   program one warp per thread, 32 per SM (the launcher's grid);
// - layout: the native kernel strides over the whole array (every warp reads
//   next to the others), the Rust program gives each warp a contiguous share
//   that its lanes stride over;
// - loads in flight per lane: 4 (both), or 8.
// Prints one line per variant: GB/s (1e9 bytes/s), mean over >= 1 s of reps.
#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (call);                                                  \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

__device__ __forceinline__ float add4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// Lane `lane` of `lanes` in warp `w` of `warps` reads vectors
// base + lane, base + lane + step, ... below end, `K` loads in flight.
template <int K>
__device__ float strided(const float4* p, size_t first, size_t step, size_t end) {
    float acc[K];
    for (int k = 0; k < K; k++) acc[k] = 0;
    size_t i = first;
    for (; i + (K - 1) * step < end; i += K * step) {
        float4 v[K];
        for (int k = 0; k < K; k++) v[k] = p[i + k * step];
        for (int k = 0; k < K; k++) acc[k] += add4(v[k]);
    }
    for (; i < end; i += step) acc[0] += add4(p[i]);
    float s = 0;
    for (int k = 0; k < K; k++) s += acc[k];
    return s;
}

// The calling warp's contiguous share of n4 vectors: [lo, hi).
struct Share { size_t lane, lo, hi; };
__device__ Share warp_share(size_t n4) {
    size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    size_t share = n4 / warps, lo = warp * share;
    return {threadIdx.x % 32, lo, warp + 1 == warps ? n4 : lo + share};
}

// Adds the warp's lanes' sums into *out.
__device__ void warp_total(float s, float* out) {
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if (threadIdx.x % 32 == 0) atomicAdd(out, s);
}

// layout 0: whole-array grid stride (native); 1: each warp a contiguous share.
template <int K>
__global__ void reduce(const float4* __restrict__ p, size_t n4, int layout, float* out) {
    size_t lane = threadIdx.x % 32;
    size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    float s;
    if (layout == 0) {
        s = strided<K>(p, warp * 32 + lane, warps * 32, n4);
    } else {
        Share w = warp_share(n4);
        s = strided<K>(p + w.lo, lane, 32, w.hi - w.lo);
    }
    warp_total(s, out);
}

// The Rust program's lanes: lane 0 (the thread's leader) and lanes 1..31
// (parked in the runtime's lane loop) reach the same function through a
// pointer from different call sites, as `gpu_lanes::for_each_lane` does.
typedef float (*share_fn)(const float4*, size_t, size_t, size_t);
__device__ __noinline__ float share4(const float4* p, size_t first, size_t step, size_t end) { return strided<4>(p, first, step, end); }
__global__ void reduce_31_lanes(const float4* __restrict__ p, size_t n4, float* out, share_fn f);
__device__ volatile int sink;
__global__ void reduce_split_lanes(const float4* __restrict__ p, size_t n4, float* out, share_fn f, int converge) {
    Share w = warp_share(n4);
    size_t lane = w.lane, lo = w.lo, hi = w.hi;
    float s;
    if (lane == 0) {
        sink = 1;
        s = f(p + lo, lane, 32, hi - lo);
        sink = 2;
    } else {
        if (converge) __syncwarp(0xfffffffe);
        s = f(p + lo, lane, 32, hi - lo);
        sink = 3;
    }
    __syncwarp();
    warp_total(s, out);
}

// The fix to try: both sides call one out-of-line function that holds the
// start barrier and the call, so every lane calls f from one site.
__device__ __noinline__ float step(share_fn f, const float4* p, size_t lane, size_t end) {
    __syncwarp();
    float s = f(p, lane, 32, end);
    __syncwarp();
    return s;
}
__global__ void reduce_one_site(const float4* __restrict__ p, size_t n4, float* out, share_fn f) {
    Share w = warp_share(n4);
    size_t lane = w.lane, lo = w.lo, hi = w.hi;
    float s;
    if (lane == 0) {
        sink = 1;
        s = step(f, p + lo, lane, hi - lo);
        sink = 2;
    } else {
        s = step(f, p + lo, lane, hi - lo);
        sink = 3;
    }
    __syncwarp();
    warp_total(s, out);
}

// Lane 0 waits at the barrier while lanes 1..31 do all the work, as 31
// lanes (stride 31): no second group of the warp runs the loop.
__global__ void reduce_31_lanes(const float4* __restrict__ p, size_t n4, float* out, share_fn f) {
    Share w = warp_share(n4);
    size_t lane = w.lane, lo = w.lo, hi = w.hi;
    float s = 0;
    if (lane == 0) {
        sink = 1;
        __syncwarp();
        sink = 2;
    } else {
        s = f(p + lo, lane - 1, 31, hi - lo);
        __syncwarp();
        sink = 3;
    }
    warp_total(s, out);
}

__global__ void get_share4(share_fn* out) { *out = share4; }

__global__ void fill(float* p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = 1.0f;
}

// GB/s of `launch()` (one reduction of n4 vectors into *out), repeated for
// at least 10 launches and 1 s; *out is zeroed before each.
template <typename F>
double gbps(size_t n4, float* out, F launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    double ms_total = 0;
    int reps = 0;
    while (reps < 10 || ms_total < 1000) {
        CK(cudaMemset(out, 0, sizeof(float)));
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        ms_total += ms;
        reps++;
    }
    return (double)n4 * 16 * reps / (ms_total * 1e6);
}

template <int K>
void run(const char* what, const float4* p, size_t n4, int sms, int warps_per_sm, int block, int layout, float* out) {
    int grid = sms * warps_per_sm * 32 / block;
    reduce<K><<<grid, block>>>(p, n4, layout, out);
    CK(cudaDeviceSynchronize());
    double rate = gbps(n4, out, [&] { reduce<K><<<grid, block>>>(p, n4, layout, out); });
    float h = 0;
    CK(cudaMemcpy(&h, out, sizeof(float), cudaMemcpyDeviceToHost));
    printf("%7.0f GB/s  %s (%d warps/SM, blocks of %d, %d loads in flight, sum %s)\n",
           rate, what, warps_per_sm, block, K, h == (float)(n4 * 4) ? "ok" : "inexact in f32");
}

void run_split(const float4* p, size_t n4, int sms, float* out, share_fn f, int converge) {
    int grid = sms * 32;
    double rate = gbps(n4, out, [&] {
        if (converge == 3) reduce_31_lanes<<<grid, 32>>>(p, n4, out, f);
        else if (converge == 2) reduce_one_site<<<grid, 32>>>(p, n4, out, f);
        else reduce_split_lanes<<<grid, 32>>>(p, n4, out, f, converge);
    });
    printf("%7.0f GB/s  contiguous share per warp, lane 0 and lanes 1-31 call it from different sites%s (32 warps/SM)\n",
           rate, converge == 3 ? " (no: lane 0 waits, lanes 1-31 do all the work)" : converge == 2 ? " through one out-of-line function holding the barrier" : converge ? ", lanes 1-31 synced first" : "");
}

int main() {
    size_t bytes = 4ull << 30, n = bytes / 4, n4 = n / 4;
    float *data, *out;
    CK(cudaMalloc(&data, bytes));
    CK(cudaMalloc(&out, sizeof(float)));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    fill<<<sms * 8, 256>>>(data, n);
    CK(cudaDeviceSynchronize());
    const float4* p = (const float4*)data;
    share_fn* fp;
    CK(cudaMalloc(&fp, sizeof(share_fn)));
    get_share4<<<1, 1>>>(fp);
    share_fn f;
    CK(cudaMemcpy(&f, fp, sizeof(f), cudaMemcpyDeviceToHost));
    for (int round = 0; round < 2; round++) {
        run_split(p, n4, sms, out, f, 0);
        run_split(p, n4, sms, out, f, 1);
        run_split(p, n4, sms, out, f, 2);
        run_split(p, n4, sms, out, f, 3);
        run<4>("native: grid stride", p, n4, sms, 64, 256, 0, out);
        run<4>("grid stride", p, n4, sms, 32, 32, 0, out);
        run<4>("contiguous share per warp (the Rust program)", p, n4, sms, 32, 32, 1, out);
        run<8>("grid stride", p, n4, sms, 32, 32, 0, out);
        run<8>("contiguous share per warp", p, n4, sms, 32, 32, 1, out);
        run<4>("contiguous share per warp", p, n4, sms, 64, 256, 1, out);
    }
    return 0;
}
