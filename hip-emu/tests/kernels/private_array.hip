// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// A private array indexed by data: it lives in scratch (gfx90a: MUBUF
// buffer_load/store on the private segment buffer s[0:3]; gfx940+ and
// gfx11: scratch_load/store).
extern "C" __global__ void private_array(const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a[32];
    for (int k = 0; k < 32; k++) a[k] = k * k + i;
    int j = idx[i] & 31;
    a[j] += 1000;
    int s = 0;
    for (int k = 0; k < 4; k++) s += a[(j + k * 7) & 31];
    out[i] = s;
}
