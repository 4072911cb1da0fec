// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// Lanes of one wavefront take different paths: nested if/else on the
// lane's data, and a loop whose trip count differs per lane.
extern "C" __global__ void branchy(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    int r;
    if (v % 3 == 0) {
        r = v * 2;
    } else if (v % 3 == 1) {
        if (v & 4) r = v - 7; else r = -v;
    } else {
        r = 0;
        for (int k = 0; k < (v & 15); k++) r += k ^ v;
    }
    out[i] = r;
}
