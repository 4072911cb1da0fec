// What a release costs on this GPU, each way PTX can say it: the floor under
// every unlock and every `Arc` drop. One thread, dependent chains (each
// operation's address depends on the last result), timed with %globaltimer.
// After each, a plain load of a line the thread read just before: whether
// the operation also emptied the SM's L1 (an acquire does, CCTL.IVALL).
//   nvcc -O3 -arch=sm_90 xtask/probes/release_costs.cu -o /tmp/rc && /tmp/rc
// gpu-ld's rmw_order pass emits `fence.acq_rel.gpu` + relaxed atom for a
// release RMW (LLVM 22 lowers `fence release` to fence.acq_rel at PTX 7.8).
#include <cstdio>
__device__ __forceinline__ unsigned long long T() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }
__global__ void k(unsigned long long* out, unsigned long long* m, int n, unsigned long long zero) {
    if (threadIdx.x != 0) return;
    unsigned long long v = 0, w = 0, t;
    int r = 0;
    volatile unsigned long long* l1 = m + 64;  // a line for the plain loads
#define ROW(body) { w = *l1; t = T(); for (int i = 0; i < n; i++) { body; w = l1[(v + w) * zero]; } out[r++] = T() - t; }
    ROW(asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(m + (v + w) * zero) : "memory"));
    ROW(asm volatile("fence.acq_rel.gpu; atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(m + (v + w) * zero) : "memory"));
    ROW(asm volatile("atom.release.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(m + (v + w) * zero) : "memory"));
    ROW(asm volatile("fence.release.gpu; atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(m + (v + w) * zero) : "memory"));
    ROW(asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(m + (v + w) * zero) : "memory"));
    ROW(asm volatile("st.relaxed.gpu.global.u64 [%1], %0; ld.relaxed.gpu.global.u64 %0, [%1];" : "+l"(v) : "l"(m + 8 + (v + w) * zero) : "memory"));
    ROW(asm volatile("st.release.gpu.global.u64 [%1], %0; ld.relaxed.gpu.global.u64 %0, [%1];" : "+l"(v) : "l"(m + 8 + (v + w) * zero) : "memory"));
    ROW(asm volatile("fence.acq_rel.gpu; st.relaxed.gpu.global.u64 [%1], %0; ld.relaxed.gpu.global.u64 %0, [%1];" : "+l"(v) : "l"(m + 8 + (v + w) * zero) : "memory"));
    ROW(asm volatile("red.release.gpu.global.add.u64 [%1], 1; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(m + 16 + (v + w) * zero) : "memory"));
    ROW(asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(m + 24 + (v + w) * zero) : "memory"));
    ROW(asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(m + 24 + (v + w) * zero) : "memory"));
    ROW(asm volatile("fence.acquire.gpu; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(m + 24 + (v + w) * zero) : "memory"));
    out[r] = v + w;
}
int main() {
    const char* rows[] = {
        "atom.relaxed.gpu.add",
        "fence.acq_rel.gpu + atom.relaxed.gpu.add (gpu-ld's release RMW)",
        "atom.release.gpu.add",
        "fence.release.gpu + atom.relaxed.gpu.add",
        "atom.acq_rel.gpu.add",
        "st.relaxed.gpu + ld.relaxed.gpu",
        "st.release.gpu + ld.relaxed.gpu",
        "fence.acq_rel.gpu + st.relaxed.gpu + ld.relaxed.gpu",
        "red.release.gpu.add + ld.relaxed.gpu",
        "ld.acquire.gpu",
        "ld.relaxed.gpu",
        "fence.acquire.gpu + ld.relaxed.gpu",
    };
    const int R = sizeof(rows) / sizeof(rows[0]), n = 20000;
    unsigned long long *d, *m, h[32];
    cudaMalloc(&d, 8 * 32); cudaMalloc(&m, 4096); cudaMemset(m, 0, 4096);
    printf("release costs, one thread, %d dependent repetitions each, ns per repetition (each includes a plain load of a line read before: L1 hit unless the operation emptied L1)\n", n);
    for (int round = 0; round < 2; round++) {
        k<<<1, 32>>>(d, m, n, 0);
        cudaError_t e = cudaMemcpy(h, d, 8 * (R + 1), cudaMemcpyDeviceToHost);
        if (e) { printf("CUDA error %s\n", cudaGetErrorString(e)); return 1; }
        for (int i = 0; i < R; i++) printf("%8.1f  %s\n", h[i] / (double)n, rows[i]);
    }
    return 0;
}
