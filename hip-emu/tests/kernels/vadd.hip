// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// c[i] = a[i] + b[i] for i < n; the grid's last block is partial.
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
