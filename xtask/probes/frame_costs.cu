// What a call with a stack frame costs on one GPU thread, split into the
// parts of gpu-ld's shared frames (gpu-ld/src/shared_stack.rs):
// the stack-pointer bookkeeping (the slot in shared memory, the lane's
// [sp, limit] pair in its private frame) and the frame's data in global
// memory, against a private (local memory) frame and no frame at all.
//   nvcc -O3 -arch=sm_90 -std=c++17 xtask/probes/frame_costs.cu -o /tmp/fc && /tmp/fc
// Each variant: 10 dependent calls of a __noinline__ function that puts
// its argument in memory, reads it back and returns x*3^1 (as
// examples/gpu-checks print-profile's `opaque`), timed over 2,000 rounds.
#include <cstdio>
typedef unsigned long long u64;

__shared__ u64* slot;  // the generic address of the lane's [sp, limit]

__device__ __forceinline__ u64 now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
    return t;
}
__device__ __forceinline__ void escape(void* p) { asm volatile("" :: "l"(p) : "memory"); }

__device__ __noinline__ u64 frameless(u64 x) { return x * 3 ^ 1; }

__device__ __noinline__ u64 private_frame(u64 x) {
    u64 v = x;
    escape(&v);
    return v * 3 ^ 1;
}

// gpu-ld's shared frame: the frame below sp, in global memory.
__device__ __noinline__ u64 shared_frame(u64 x) {
    u64* pair = slot;
    u64 sp = pair[0], limit = pair[1];
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    pair[0] = nsp;
    u64* frame = (u64*)nsp;
    *frame = x;
    escape(frame);
    u64 v = *frame;
    slot[0] = sp;
    return v * 3 ^ 1;
}

// The bookkeeping alone: the value stays in a private frame.
__device__ __noinline__ u64 bookkeeping_only(u64 x) {
    u64* pair = slot;
    u64 sp = pair[0], limit = pair[1];
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    pair[0] = nsp;
    u64 v = x;
    escape(&v);
    slot[0] = sp;
    return v * 3 ^ 1;
}

// The frame's data alone: sp comes as an argument (no slot, no pair).
__device__ __noinline__ u64 data_only(u64 x, u64 sp) {
    u64* frame = (u64*)((sp - 8) & ~7ull);
    *frame = x;
    escape(frame);
    u64 v = *frame;
    return v * 3 ^ 1;
}

// The frame's data in global memory through global (not generic) accesses.
__device__ __noinline__ u64 data_only_global(u64 x, u64 sp) {
    u64 g = (sp - 8) & ~7ull, v;
    asm volatile("{ .reg .u64 a; cvta.to.global.u64 a, %1; st.global.u64 [a], %2; ld.global.u64 %0, [a]; }" : "=l"(v) : "l"(g), "l"(x) : "memory");
    return v * 3 ^ 1;
}

// The bookkeeping through local (not generic) accesses to the pair: the
// slot still holds its generic address, converted with cvta.to.local.
__device__ __forceinline__ u64 ld_local(u64 generic, int word) {
    u64 v;
    asm volatile("{ .reg .u64 a; cvta.to.local.u64 a, %1; ld.local.u64 %0, [a+0]; }" : "=l"(v) : "l"(generic + 8 * word) : "memory");
    return v;
}
__device__ __forceinline__ void st_local(u64 generic, u64 v) {
    asm volatile("{ .reg .u64 a; cvta.to.local.u64 a, %0; st.local.u64 [a], %1; }" :: "l"(generic), "l"(v) : "memory");
}
__device__ __noinline__ u64 local_bookkeeping(u64 x) {
    u64 pair = (u64)slot;
    u64 sp = ld_local(pair, 0), limit = ld_local(pair, 1);
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    st_local(pair, nsp);
    u64* frame = (u64*)nsp;
    *frame = x;
    escape(frame);
    u64 v = *frame;
    st_local((u64)slot, sp);
    return v * 3 ^ 1;
}
// The same with the frame's data through ld/st.global.
__device__ __noinline__ u64 local_bookkeeping_global_data(u64 x) {
    u64 pair = (u64)slot;
    u64 sp = ld_local(pair, 0), limit = ld_local(pair, 1);
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    st_local(pair, nsp);
    u64 v;
    asm volatile("{ .reg .u64 a; cvta.to.global.u64 a, %1; st.global.u64 [a], %2; ld.global.u64 %0, [a]; }" : "=l"(v) : "l"(nsp), "l"(x) : "memory");
    st_local((u64)slot, sp);
    return v * 3 ^ 1;
}

// The pair in shared memory, one per thread of the block (no slot load;
// %tid.x finds it).
__shared__ u64 smem_pairs[32][2];
__device__ __noinline__ u64 smem_pair(u64 x) {
    u64* pair = smem_pairs[threadIdx.x & 31];
    u64 sp = pair[0], limit = pair[1];
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    pair[0] = nsp;
    u64* frame = (u64*)nsp;
    *frame = x;
    escape(frame);
    u64 v = *frame;
    pair[0] = sp;
    return v * 3 ^ 1;
}

// The pair's address as an argument (no slot load; the pair's words still
// loaded and stored).
__device__ __noinline__ u64 pair_argument(u64 x, u64* pair) {
    u64 sp = pair[0], limit = pair[1];
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    pair[0] = nsp;
    u64* frame = (u64*)nsp;
    *frame = x;
    escape(frame);
    u64 v = *frame;
    pair[0] = sp;
    return v * 3 ^ 1;
}

// gpu-ld's frame without the store of the new stack pointer and its
// restore (not a protocol: what the loads alone cost).
__device__ __noinline__ u64 loads_only(u64 x) {
    u64* pair = slot;
    u64 sp = pair[0], limit = pair[1];
    u64 nsp = (sp - 8) & ~7ull;
    if (nsp < limit || nsp > sp) __trap();
    u64* frame = (u64*)nsp;
    *frame = x;
    escape(frame);
    u64 v = *frame;
    return v * 3 ^ 1;
}

// Shared-memory frame data (what a per-warp stack in shared memory would cost).
__shared__ u64 smem_stack[64];
__device__ __noinline__ u64 data_in_smem(u64 x, u64 sp) {
    u64* frame = &smem_stack[(sp >> 3) & 63];
    *frame = x;
    escape(frame);
    u64 v = *frame;
    return v * 3 ^ 1;
}

enum { FRAMELESS, PRIVATE, SHARED, BOOKKEEPING, DATA, DATA_GLOBAL, DATA_SMEM, LOCAL_BK, LOCAL_BK_GLOBAL, SMEM_PAIR, PAIR_ARG, LOADS_ONLY, N };
static const char* NAMES[N] = {
    "no frame",
    "private frame (local memory)",
    "gpu-ld shared frame (slot, pair, data in global)",
    "bookkeeping only (slot, pair; data private)",
    "data in global only (sp as an argument, generic access)",
    "data in global only (sp as an argument, ld/st.global)",
    "data in shared memory (sp as an argument)",
    "shared frame, pair through ld/st.local (cvta.to.local)",
    "shared frame, pair through ld/st.local, data ld/st.global",
    "shared frame, pair in shared memory by %tid.x",
    "shared frame, the pair's address as an argument",
    "shared frame without storing sp (loads and check only)",
};

__global__ void run(u64* stack, u64* out, int rounds) {
    if (threadIdx.x != 0) return;
    u64 pair[2] = {(u64)(stack + 4096), (u64)stack};
    slot = pair;
    smem_pairs[0][0] = pair[0];
    smem_pairs[0][1] = pair[1];
    __syncwarp();
    for (int m = 0; m < N; m++) {
        u64 x = m, sp = pair[0];
        u64 t0 = now();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 10; i++) {
                switch (m) {
                case FRAMELESS: x = frameless(x); break;
                case PRIVATE: x = private_frame(x); break;
                case SHARED: x = shared_frame(x); break;
                case BOOKKEEPING: x = bookkeeping_only(x); break;
                case DATA: x = data_only(x, sp); break;
                case DATA_GLOBAL: x = data_only_global(x, sp); break;
                case DATA_SMEM: x = data_in_smem(x, sp); break;
                case LOCAL_BK: x = local_bookkeeping(x); break;
                case LOCAL_BK_GLOBAL: x = local_bookkeeping_global_data(x); break;
                case SMEM_PAIR: x = smem_pair(x); break;
                case PAIR_ARG: x = pair_argument(x, pair); break;
                case LOADS_ONLY: x = loads_only(x); break;
                }
            }
        }
        out[m] = now() - t0;
        out[N + m] = x;
    }
}

int main() {
    const int rounds = 2000;
    u64 *stack, *out;
    cudaMalloc(&stack, 4096 * 8);
    cudaMalloc(&out, 2 * N * 8);
    u64 h[2 * N];
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("# frame costs, %s, one thread, 10 dependent calls x %d rounds, ns per call\n", p.name, rounds);
    for (int pass = 0; pass < 3; pass++) {
        run<<<1, 32>>>(stack, out, rounds);
        if (cudaDeviceSynchronize() != cudaSuccess) { printf("kernel failed\n"); return 1; }
        cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
        for (int m = 0; m < N; m++) printf("pass %d  %-58s %7.1f ns\n", pass, NAMES[m], h[m] / (10.0 * rounds));
    }
    return 0;
}
