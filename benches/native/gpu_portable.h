// The native baselines' one vendor seam: every name they use that differs
// between CUDA (nvcc) and HIP on AMD (hipcc). Compiled by nvcc it is the CUDA
// runtime header and the CUDA definitions below, exactly what the baselines
// used before this header; compiled by hipcc (clang's HIP mode, `__HIP__`) it
// maps the CUDA runtime names the baselines use to HIP's and gives the AMD
// twin of each device primitive. Both halves list the same things in the
// same order:
//
//   GPU_API, GPU_RT,     "CUDA", "cuda",                | "HIP", "hip",  (for the rows' `how`)
//   GPU_SLEEP            "__nanosleep"                  | "s_sleep"
//   WARP                 32 lanes                       | the wavefront: 64 (CDNA), 32 (RDNA)
//   gtimer()             %globaltimer, ns               | wall_clock64() ticks × ns per tick
//   gpu_sleep_ns(ns)     __nanosleep(ns)                | s_sleep 1 until gtimer() passes ns
//   gpu_shfl_down(v, o)  __shfl_down_sync(all lanes)    | __shfl_down (the whole wavefront)
//   gpu_load_relaxed(p)  ld.relaxed.gpu (u64)           | __hip_atomic_load, relaxed, agent scope
//   gpu_load_acquire(p)  ld.acquire.gpu                 | __hip_atomic_load, acquire, agent scope
//   gpu_store_relaxed(p, v) st.relaxed.gpu              | __hip_atomic_store, relaxed, agent scope
//   gpu_store_release(p, v) st.release.gpu              | __hip_atomic_store, release, agent scope
//   gpu_timer_init()     nothing                        | finds the wall clock's rate
//
// What has no HIP twin at all (device-side launch, the printf FIFO limit, the
// heap limit of HIP 5.2) is handled where it is used, under GPU_HIP.
#pragma once

#if defined(__HIP__)
#define GPU_HIP 1
#include <hip/hip_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

// The CUDA runtime names the baselines use, as HIP spells them. Same
// signatures, except cudaGraphInstantiate: HIP's takes an error node and a
// log buffer; its WithFlags form is CUDA 12's three arguments.
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaGetLastError hipGetLastError
#define cudaGetDevice hipGetDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDevAttrCooperativeLaunch hipDeviceAttributeCooperativeLaunch
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define cudaLaunchCooperativeKernel hipLaunchCooperativeKernel
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemset hipMemset
#define cudaMemcpy hipMemcpy
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaStream_t hipStream_t
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCaptureModeGlobal hipStreamCaptureModeGlobal
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphInstantiate hipGraphInstantiateWithFlags
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphDestroy hipGraphDestroy

#define GPU_API "HIP"
#define GPU_RT "hip"
#define GPU_SLEEP "s_sleep"

// The wavefront is 64 lanes on CDNA (gfx9: MI100, MI200, MI300) and 32 on
// RDNA, fixed when the code object is compiled. Device code reads HIP's
// warpSize (a constant there); host code asks the device once (the GPU the
// kernels run on). One function for both sides: clang parses kernels in the
// host pass too, and there a host-only callee would not resolve.
inline int gpu_host_warp_size() {
    static int lanes = 0;
    if (lanes == 0) {
        int dev = 0;
        if (hipGetDevice(&dev) != hipSuccess || hipDeviceGetAttribute(&lanes, hipDeviceAttributeWarpSize, dev) != hipSuccess) {
            fprintf(stderr, "gpu_portable.h: cannot read the device's wavefront size\n");
            exit(1);
        }
    }
    return lanes;
}
__host__ __device__ inline int gpu_warp_size() {
#if defined(__HIP_DEVICE_COMPILE__)
    return warpSize;
#else
    return gpu_host_warp_size();
#endif
}
#define WARP gpu_warp_size()

// There is no %globaltimer: wall_clock64() (s_memrealtime) counts at a fixed
// rate that depends on the board (25 MHz on MI200, 100 MHz on MI300), so the
// host finds the rate (gpu_timer_init) and each read is scaled to ns here.
__device__ double gpu_ns_per_tick = 0;

__device__ __forceinline__ unsigned long long gtimer() {
#if defined(__HIP_DEVICE_COMPILE__)
    return (unsigned long long)((double)wall_clock64() * gpu_ns_per_tick);
#else
    return 0;  // host pass: kernels are parsed, never run, here
#endif
}

// s_sleep takes an immediate (0-127, each about 64 cycles of the shader
// clock), not a run-time duration: so the shortest sleep, until the wall
// clock passes the deadline. At least one sleep, as __nanosleep(ns) is one.
__device__ __forceinline__ void gpu_sleep_ns(unsigned ns) {
    unsigned long long end = gtimer() + ns;
    do {
        __builtin_amdgcn_s_sleep(1);
    } while (gtimer() < end);
}

// HIP 5's shuffles take no lane mask: every lane of the wavefront takes part.
#define gpu_shfl_down(v, o) __shfl_down((v), (o))

// Device-scope (agent) atomic loads and stores of a u64, as Rust's atomics
// compile for the GPU.
__device__ __forceinline__ unsigned long long gpu_load_relaxed(unsigned long long* p) {
    return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ unsigned long long gpu_load_acquire(unsigned long long* p) {
    return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ void gpu_store_relaxed(unsigned long long* p, unsigned long long v) {
    __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ void gpu_store_release(unsigned long long* p, unsigned long long v) {
    __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}

__global__ void gpu_read_wall_clock(unsigned long long* out) {
#if defined(__HIP_DEVICE_COMPILE__)
    *out = (unsigned long long)wall_clock64();
#endif
}

// Host ns since an arbitrary start (steady_clock).
inline double gpu_host_now_ns() {
    return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The wall clock's rate in kHz: hipDeviceAttributeWallClockRate where HIP
// has it (5.4 on; it answers 0 on some boards), else measured: two reads
// 200 ms apart against the host's steady clock, each read placed at the
// middle of its launch + sync (about 1e-4 off), rounded to 100 kHz (the
// rates are whole MHz).
inline double gpu_wall_clock_khz() {
    int dev = 0;
    if (hipGetDevice(&dev) != hipSuccess) return 0;
#if HIP_VERSION_MAJOR > 5 || (HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR >= 4)
    int khz = 0;
    if (hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, dev) == hipSuccess && khz > 0) return khz;
#endif
    unsigned long long* d = nullptr;
    unsigned long long ticks[2] = {0, 0};
    double host[2] = {0, 0};
    if (hipMalloc(&d, sizeof(unsigned long long)) != hipSuccess) return 0;
    for (int i = 0; i < 2; i++) {
        if (i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        double h0 = gpu_host_now_ns();
        gpu_read_wall_clock<<<1, 1>>>(d);
        if (hipDeviceSynchronize() != hipSuccess) return 0;
        host[i] = (h0 + gpu_host_now_ns()) / 2;
        if (hipMemcpy(&ticks[i], d, sizeof ticks[i], hipMemcpyDeviceToHost) != hipSuccess) return 0;
    }
    (void)hipFree(d);
    // wall_clock64() is -1 where the GPU has no s_memrealtime (RDNA3 with HIP 5).
    if (ticks[1] <= ticks[0] || ticks[0] == ~0ull) return 0;
    double khz_measured = (ticks[1] - ticks[0]) / ((host[1] - host[0]) * 1e-6);
    return std::max(100.0, 100.0 * (long long)(khz_measured / 100.0 + 0.5));
}

// Before the first kernel that reads gtimer(): sets gpu_ns_per_tick.
inline void gpu_timer_init() {
    double khz = gpu_wall_clock_khz();
    if (khz <= 0) {
        fprintf(stderr, "gpu_portable.h: the device's wall clock (wall_clock64) does not tick or cannot be read\n");
        exit(1);
    }
    double ns_per_tick = 1e6 / khz;
    if (hipMemcpyToSymbol(HIP_SYMBOL(gpu_ns_per_tick), &ns_per_tick, sizeof ns_per_tick) != hipSuccess) {
        fprintf(stderr, "gpu_portable.h: cannot set gpu_ns_per_tick\n");
        exit(1);
    }
    fprintf(stderr, "wall clock: %.0f kHz\n", khz);
}

#else  // CUDA (nvcc)
#include <cuda_runtime.h>

#define GPU_API "CUDA"
#define GPU_RT "cuda"
#define GPU_SLEEP "__nanosleep"

#define WARP 32

// Nanoseconds, device-wide (ticks every 32 ns on H100).
__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void gpu_sleep_ns(unsigned ns) { __nanosleep(ns); }

#define gpu_shfl_down(v, o) __shfl_down_sync(0xffffffffu, (v), (o))

// Device-scope atomic loads and stores of a u64, as Rust's atomics compile
// for sm_90 (PTX 8.6).
__device__ __forceinline__ unsigned long long gpu_load_relaxed(unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long gpu_load_acquire(unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void gpu_store_relaxed(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void gpu_store_release(unsigned long long* p, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// %globaltimer is in ns already.
inline void gpu_timer_init() {}

#endif
