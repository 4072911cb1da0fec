// What lane 0's code pays for the rest of its warp waiting: the runtime
// runs a thread on lane 0 while lanes 1..31 wait at the warp barrier for
// `gpu_lanes::for_each_lane` (rt-common/src/lanes.rs). Lane 0 runs
// dependent chains of one operation each; lanes 1..31 have exited, are
// parked at __syncwarp (the runtime's way), or poll a flag with nanosleep.
//   nvcc -O3 -arch=sm_90 xtask/probes/parked_lanes.cu -o /tmp/pk && /tmp/pk
// Results: bench-results/floors/2026-11-25-nvidia-h100-80gb-hbm3-parked-lanes.txt
__device__ __forceinline__ unsigned long long T() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }
__device__ unsigned long long sinkv;
__global__ void k(unsigned long long* out, unsigned long long* mem, int n, int mode, unsigned long long zero, volatile int* flag) {
    if (threadIdx.x != 0) {
        if (mode == 1) __syncwarp();
        if (mode == 2) { while (*flag == 0) __nanosleep(1000); }
        return;
    }
    unsigned long long v = 0, t;
    t = T(); for (int i = 0; i < n; i++) { unsigned long long c; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c) :: "memory"); v ^= c; asm volatile("nanosleep.u32 0;" ::: "memory"); } out[0] = T() - t;
    t = T(); for (int i = 0; i < n; i++) { asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(mem + (v * zero)) : "memory"); } out[1] = T() - t;
    t = T(); for (int i = 0; i < n; i++) { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(mem + 8 + (v * zero)) : "memory"); } out[2] = T() - t;
    t = T(); for (int i = 0; i < n; i++) { asm volatile("mad.lo.u64 %0, %0, 6364136223846793005, 1442695040888963407;" : "+l"(v)); } out[3] = T() - t;
    t = T(); for (int i = 0; i < n; i++) { asm volatile("fence.acq_rel.gpu; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(mem + 16 + (v * zero)) : "memory"); } out[4] = T() - t;
    sinkv = v;
    *flag = 1;
    if (mode == 1) __syncwarp();
}
int main() {
    unsigned long long *d, *m, h[5]; int* flag;
    cudaMalloc(&d, 64); cudaMalloc(&m, 4096); cudaMemset(m, 0, 4096); cudaMalloc(&flag, 4);
    const char* modes[] = {"lanes 1-31 exited", "lanes 1-31 parked at __syncwarp", "lanes 1-31 polling with nanosleep(1000)"};
    const char* rows[] = {"globaltimer + nanosleep 0", "ld.global (L1 hit)", "ld.relaxed.gpu (L2)", "mad.lo.u64 (ALU)", "fence.acq_rel.gpu + ld.relaxed.gpu"};
    int n = 20000;
    for (int r = 0; r < 2; r++)
        for (int mode = 0; mode < 3; mode++) {
            cudaMemset(flag, 0, 4);
            k<<<1, 32>>>(d, m, n, mode, 0, flag);
            cudaMemcpy(h, d, 40, cudaMemcpyDeviceToHost);
            printf("%-42s", modes[mode]);
            for (int i = 0; i < 5; i++) printf("  %s %.1f", rows[i], h[i] / (double)n);
            printf("  (ns each)\n");
        }
    return 0;
}
