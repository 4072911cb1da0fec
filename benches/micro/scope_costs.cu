// What one lane pays for each memory-model scope on device memory: the
// atomics std emits on nvptx are all system scope (`.sys`); the runtime's own
// fences are `.gpu`. Prints one line per operation: median ns per op over
// 20 rounds of 2,000, from one lane of one warp (the GPU thread's case).
// Build: nvcc -O3 -arch=sm_90 -o scope_costs scope_costs.cu
#include <cstdio>
#include <cstdint>
#include <algorithm>
#include <vector>

__device__ __forceinline__ uint64_t now() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

#define OP_KERNEL(name, body)                                                        \
__global__ void name(unsigned long long *w, uint64_t *ns, int n) {                  \
    unsigned long long v = 0;                                                        \
    uint64_t t0 = now();                                                             \
    for (int i = 0; i < n; i++) { body; }                                            \
    uint64_t t1 = now();                                                             \
    ns[0] = t1 - t0; w[8] = v;                                                       \
}

OP_KERNEL(atom_add_sys, asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(atom_add_gpu, asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(cas_sys, asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %0, 1;" : "+l"(v) : "l"(w) : "memory"))
OP_KERNEL(cas_gpu, asm volatile("atom.relaxed.gpu.global.cas.b64 %0, [%1], %0, 1;" : "+l"(v) : "l"(w) : "memory"))
OP_KERNEL(fence_sys, asm volatile("fence.acq_rel.sys;" ::: "memory"))
OP_KERNEL(fence_gpu, asm volatile("fence.acq_rel.gpu;" ::: "memory"))
OP_KERNEL(ld_acquire_sys, asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(ld_acquire_gpu, asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(ld_relaxed_sys, asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(ld_relaxed_gpu, asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory"))
// A std Release RMW as LLVM 22 lowers it (fence then relaxed atom), both scopes.
OP_KERNEL(release_rmw_sys, asm volatile("fence.acq_rel.sys; atom.relaxed.sys.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(w) : "memory"))
OP_KERNEL(release_rmw_gpu, asm volatile("fence.acq_rel.gpu; atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(w) : "memory"))

typedef void (*K)(unsigned long long *, uint64_t *, int);

int main() {
    struct { const char *name; K k; } ops[] = {
        {"atom.add.relaxed.sys", atom_add_sys}, {"atom.add.relaxed.gpu", atom_add_gpu},
        {"atom.cas.relaxed.sys", cas_sys}, {"atom.cas.relaxed.gpu", cas_gpu},
        {"fence.acq_rel.sys", fence_sys}, {"fence.acq_rel.gpu", fence_gpu},
        {"ld.acquire.sys", ld_acquire_sys}, {"ld.acquire.gpu", ld_acquire_gpu},
        {"ld.relaxed.sys", ld_relaxed_sys}, {"ld.relaxed.gpu", ld_relaxed_gpu},
        {"fence.sys+atom.sys (std Release RMW)", release_rmw_sys}, {"fence.gpu+atom.gpu", release_rmw_gpu},
    };
    unsigned long long *w; uint64_t *ns;
    cudaMalloc(&w, 4096); cudaMemset(w, 0, 4096);
    cudaMallocManaged(&ns, 64);
    const int n = 2000, rounds = 20;
    for (auto &op : ops) {
        op.k<<<1, 1>>>(w, ns, 10); cudaDeviceSynchronize();
        std::vector<double> per;
        for (int r = 0; r < rounds; r++) {
            op.k<<<1, 1>>>(w, ns, n);
            if (cudaDeviceSynchronize() != cudaSuccess) { printf("%s: failed\n", op.name); return 1; }
            per.push_back(double(ns[0]) / n);
        }
        std::sort(per.begin(), per.end());
        printf("scope_costs: %-40s %8.1f ns/op (min %.1f, max %.1f)\n", op.name, per[rounds / 2], per[0], per[rounds - 1]);
    }
    return 0;
}
