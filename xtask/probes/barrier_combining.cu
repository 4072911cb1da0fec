// Probe: the cost of a barrier's arrivals when every warp of an H100 adds 1
// to one counter in L2, against arrivals combined per block in shared memory
// first (one warp of each block adds a batch for the others).
//
// A barrier of every warp of the grid (one thread per warp arrives, as a std
// thread of the runtime is one warp): ticket = fetch_add(arrived, 1); the last
// of a generation raises `done` on 8 lines; the others poll the line of their
// warp index modulo 8 (as std's GPU Barrier does).
//   flat       each warp: atom.acq_rel.gpu.add on the one counter
//   combined   each warp joins its block's open batch in shared memory; the
//              batch's first warp (its delegate) waits for the previous batch
//              to finish, closes its own, adds the batch's size to the
//              counter and hands each member base + its index in the batch
//   delayN     the delegate waits N ns for others to join, then closes its
//              batch and adds it, without waiting for earlier batches
// nvcc -O3 -arch=sm_90 -o barrier_combining barrier_combining.cu
#include <cstdio>
#include <cstdint>

__device__ __forceinline__ unsigned long long now() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t;
}
__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long* p) {
    unsigned long long v; asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
__device__ __forceinline__ unsigned long long add_acq_rel_gpu(unsigned long long* p, unsigned long long v) {
    unsigned long long r; asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(v) : "memory"); return r;
}

struct Global {
    unsigned long long arrived;
    unsigned long long pad0[15];
    unsigned long long done[8][16];
};

struct Batch {  // one per block, in shared memory
    unsigned long long open;      // (batch << 32) | joined
    unsigned int flushed;         // batches whose delegate has finished
    unsigned int published;       // b + 1 once batch b's base is in `result`
    unsigned long long result;
    unsigned int acks;
};

__device__ unsigned long long combined_add(Batch* s, unsigned long long* counter) {
    unsigned long long old = atomicAdd((unsigned long long*)&s->open, 1ull);
    unsigned int b = (unsigned int)(old >> 32), i = (unsigned int)old;
    if (i == 0) {
        while (((volatile Batch*)s)->flushed != b) {}
        __threadfence_block();
        unsigned long long closed = atomicExch((unsigned long long*)&s->open, (unsigned long long)(b + 1) << 32);
        unsigned int k = (unsigned int)closed;
        unsigned long long base = add_acq_rel_gpu(counter, k);
        if (k > 1) {
            ((volatile Batch*)s)->result = base;
            __threadfence_block();
            ((volatile Batch*)s)->published = b + 1;
            while (((volatile Batch*)s)->acks != k - 1) {}
            ((volatile Batch*)s)->acks = 0;
            __threadfence_block();
        }
        ((volatile Batch*)s)->flushed = b + 1;
        return base;
    }
    while (((volatile Batch*)s)->published != b + 1) {}
    __threadfence_block();
    unsigned long long r = ((volatile Batch*)s)->result + i;
    __threadfence_block();
    atomicAdd(&s->acks, 1u);
    return r;
}

// Batches not chained: a delegate waits `delay` ns for others to join, then
// closes its batch and adds it at once, whatever other batches are in flight.
// Results by batch in a ring (the probe never has 64 batches in flight).
struct Batches {
    unsigned long long open;
    unsigned long long result[64];
    unsigned int published[64];
};

__device__ unsigned long long delayed_add(Batches* s, unsigned long long* counter, int delay) {
    unsigned long long old = atomicAdd((unsigned long long*)&s->open, 1ull);
    unsigned int b = (unsigned int)(old >> 32), i = (unsigned int)old;
    if (i == 0) {
        if (delay) { unsigned long long t0 = now(); while (now() - t0 < (unsigned long long)delay) {} }
        unsigned long long closed = atomicExch((unsigned long long*)&s->open, (unsigned long long)(b + 1) << 32);
        unsigned int k = (unsigned int)closed;
        unsigned long long base = add_acq_rel_gpu(counter, k);
        if (k > 1) {
            ((volatile Batches*)s)->result[b % 64] = base;
            __threadfence_block();
            ((volatile Batches*)s)->published[b % 64] = b + 1;
        }
        return base;
    }
    while (((volatile Batches*)s)->published[b % 64] != b + 1) {}
    __threadfence_block();
    return ((volatile Batches*)s)->result[b % 64] + i;
}

__global__ void barrier_cycles(Global* g, int mode, int cycles, int sleep_ns, unsigned long long* out) {
    __shared__ Batch batch;
    __shared__ Batches batches;
    if (threadIdx.x == 0) { batch.open = 0; batch.flushed = 0; batch.published = 0; batch.result = 0; batch.acks = 0; }
    if (threadIdx.x < 64) { batches.published[threadIdx.x] = 0; }
    if (threadIdx.x == 0) batches.open = 0;
    __syncthreads();
    if (threadIdx.x % 32 != 0) return;
    unsigned long long n = (unsigned long long)gridDim.x * blockDim.x / 32;
    unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned long long t0 = now();
    for (int c = 0; c < cycles; c++) {
        unsigned long long ticket = mode == 0 ? add_acq_rel_gpu(&g->arrived, 1)
            : mode == 1 ? combined_add(&batch, &g->arrived) : delayed_add(&batches, &g->arrived, mode == 2 ? 0 : mode == 3 ? 200 : 500);
        unsigned long long gen = ticket / n;
        if (ticket % n == n - 1) {
            __threadfence();
            for (int l = 0; l < 8; l++) atomicMax(&g->done[l][0], gen + 1);
        } else {
            const unsigned long long* line = &g->done[warp % 8][0];
            while (ld_acquire_gpu(line) <= gen) { if (sleep_ns) __nanosleep(sleep_ns); }
        }
    }
    if (warp == 0) out[0] = now() - t0;
}

int main() {
    int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    Global* g; cudaMalloc(&g, sizeof(Global));
    unsigned long long* out; cudaMalloc(&out, 8);
    const char* names[5] = {"flat", "combined", "delay0", "delay200", "delay500"};
    printf("barrier of every warp (%d blocks x 32 warps), ns per cycle (mean over cycles after warm-up)\n", sms);
    for (int round = 0; round < 2; round++)
        for (int sleep_ns : {0, 100})
            for (int mode = 0; mode < 5; mode++)
                for (int blocks : {sms, 32}) {
                    cudaMemset(g, 0, sizeof(Global));
                    barrier_cycles<<<blocks, 1024>>>(g, mode, 100, sleep_ns, out);  // warm-up
                    cudaMemset(g, 0, sizeof(Global));
                    const int cycles = 2000;
                    barrier_cycles<<<blocks, 1024>>>(g, mode, cycles, sleep_ns, out);
                    cudaError_t e = cudaDeviceSynchronize();
                    unsigned long long ns = 0; cudaMemcpy(&ns, out, 8, cudaMemcpyDeviceToHost);
                    printf("%-9s warps %5d  poll sleep %3d ns: %8.0f ns/cycle %s\n", names[mode], blocks * 32, sleep_ns,
                           (double)ns / cycles, e ? cudaGetErrorString(e) : "");
                }
    return 0;
}
