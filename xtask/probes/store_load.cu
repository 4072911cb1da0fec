// What it costs a thread to read back a word it has just stored, by where
// the word lives and by cache operator: the floor under every frame that
// gpu-ld's shared stacks keep in global memory (a local whose address is
// passed to a callee is stored, then loaded again, often in the callee).
// One thread, a dependent chain (each store's value is the last load's),
// timed with %globaltimer. Each address depends on the last load (times a
// zero the compiler cannot see), so ptxas can neither forward the stored
// value nor overlap the repetitions.
//   nvcc -O3 -arch=sm_90 xtask/probes/store_load.cu -o /tmp/sl && /tmp/sl
#include <cstdio>

__device__ unsigned long long sink;

__device__ __forceinline__ unsigned long long T() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// Store one word, then load the word `OFF` words further: the same word at
// 0, the same line below 16 (words of 8 bytes), another sector from 4 on,
// another line at 16.
#define NEAR(name, st, ld, OFF)                                                                   \
    __device__ __noinline__ long long name(unsigned long long* p, int n, unsigned long long zero) { \
        unsigned long long v = 1;                                                                 \
        unsigned long long t = T();                                                               \
        for (int i = 0; i < n; i++) {                                                             \
            unsigned long long* q = p + v * zero;                                                 \
            asm volatile(st " [%0], %1;" ::"l"(q), "l"(v) : "memory");                            \
            asm volatile(ld " %0, [%1];" : "=l"(v) : "l"(q + OFF) : "memory");                    \
            v += 1;                                                                               \
        }                                                                                         \
        sink = v;                                                                                 \
        return T() - t;                                                                           \
    }
NEAR(global_default, "st.global.u64", "ld.global.u64", 0)
NEAR(global_wb_ca, "st.global.wb.u64", "ld.global.ca.u64", 0)
NEAR(global_wt_ca, "st.global.wt.u64", "ld.global.ca.u64", 0)
NEAR(global_evict_last, "st.global.L1::evict_last.u64", "ld.global.L1::evict_last.u64", 0)
NEAR(generic_on_global, "st.u64", "ld.u64", 0)
NEAR(local_default, "st.local.u64", "ld.local.u64", 0)
NEAR(generic_on_local, "st.u64", "ld.u64", 0)

// A load of a line read before and not stored to: an L1 hit.
__device__ __noinline__ long long global_load_only(unsigned long long* p, int n, unsigned long long zero) {
    unsigned long long v = 0;
    unsigned long long t = T();
    for (int i = 0; i < n; i++) asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p + v * zero) : "memory");
    sink = v;
    return T() - t;
}

NEAR(global_same_line, "st.global.u64", "ld.global.u64", 1)
NEAR(global_next_sector, "st.global.u64", "ld.global.u64", 4)
NEAR(global_next_line, "st.global.u64", "ld.global.u64", 16)
NEAR(local_next_word, "st.local.u64", "ld.local.u64", 1)
NEAR(local_next_sector, "st.local.u64", "ld.local.u64", 4)
NEAR(local_next_line, "st.local.u64", "ld.local.u64", 16)
NEAR(generic_local_next_word, "st.u64", "ld.u64", 1)

// Store both words of a 16-byte pair, then load the second.
__device__ __noinline__ long long pair_stored_whole(unsigned long long* p, int n, unsigned long long zero) {
    unsigned long long v = 1;
    unsigned long long t = T();
    for (int i = 0; i < n; i++) {
        unsigned long long* q = p + v * zero;
        asm volatile("st.v2.u64 [%0], {%1, %2};" ::"l"(q), "l"(v), "l"(v + 1) : "memory");
        asm volatile("ld.u64 %0, [%1];" : "=l"(v) : "l"(q + 1) : "memory");
        v += 1;
    }
    sink = v;
    return T() - t;
}

__global__ void k(long long* out, unsigned long long* g, int n, unsigned long long zero) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    __shared__ int dummy;
    unsigned long long loc[40] = {0};
    volatile unsigned long long* keep = loc;  // a real local array
    unsigned long long* lp = (unsigned long long*)keep;
    unsigned long long lg;  // .local address for the st.local rows
    asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(lg) : "l"(lp));
    int r = 0;
    out[r++] = global_default(g, n, zero);
    out[r++] = global_wb_ca(g + 16, n, zero);
    out[r++] = global_wt_ca(g + 32, n, zero);
    out[r++] = global_evict_last(g + 48, n, zero);
    out[r++] = generic_on_global(g + 64, n, zero);
    out[r++] = local_default((unsigned long long*)lg, n, zero);
    out[r++] = generic_on_local(lp, n, zero);
    g[80] = 5;
    out[r++] = global_load_only(g + 80, n, zero);
    out[r++] = global_same_line(g + 96, n, zero);
    out[r++] = global_next_sector(g + 128, n, zero);
    out[r++] = global_next_line(g + 160, n, zero);
    out[r++] = local_next_word((unsigned long long*)lg, n, zero);
    out[r++] = local_next_sector((unsigned long long*)lg, n, zero);
    out[r++] = local_next_line((unsigned long long*)lg, n, zero);
    out[r++] = generic_local_next_word(lp, n, zero);
    out[r++] = pair_stored_whole(g + 192, n, zero);
    out[r++] = pair_stored_whole(lp, n, zero);
    dummy = (int)keep[1];
    out[r] = dummy;
}

int main() {
    const char* rows[] = {
        "st.global + ld.global (default: wb, ca)",
        "st.global.wb + ld.global.ca",
        "st.global.wt + ld.global.ca",
        "st.global + ld.global, L1::evict_last",
        "generic st + ld on a global address (gpu-ld's frames)",
        "st.local + ld.local",
        "generic st + ld on a local address (private frames)",
        "ld.global of a line read before, no store (L1 hit)",
        "st.global one word, ld.global the next word of its line",
        "st.global one word, ld.global a word in the next sector of its line",
        "st.global one word, ld.global a word in the next line",
        "st.local one word, ld.local the next word of its line",
        "st.local one word, ld.local a word in the next sector",
        "st.local one word, ld.local a word in the next line",
        "generic st + ld of the next word, local address (gpu-ld's [sp, limit] pair)",
        "generic st.v2 of both words, ld of the second, global address",
        "generic st.v2 of both words, ld of the second, local address",
    };
    const int R = sizeof(rows) / sizeof(rows[0]), n = 20000;
    long long *d, h[32];
    unsigned long long* g;
    cudaMalloc(&d, 8 * 32);
    cudaMalloc(&g, 4096);
    cudaMemset(g, 0, 4096);
    printf("store then load of the same word, one thread, %d dependent repetitions each, ns per repetition\n", n);
    for (int round = 0; round < 2; round++) {
        k<<<1, 32>>>(d, g, n, 0);
        cudaError_t e = cudaMemcpy(h, d, 8 * (R + 1), cudaMemcpyDeviceToHost);
        if (e) { printf("CUDA error %s\n", cudaGetErrorString(e)); return 1; }
        for (int i = 0; i < R; i++) printf("%7.1f ns  %s\n", h[i] / (double)n, rows[i]);
    }
    return 0;
}
