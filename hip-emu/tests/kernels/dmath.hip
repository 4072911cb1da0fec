// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// Double precision: a quotient (clang expands it to v_div_scale, v_rcp,
// v_fma, v_div_fmas, v_div_fixup: correctly rounded) and a square root
// (__builtin_sqrt: one v_sqrt_f64 with clang 15, within an ulp).
extern "C" __global__ void dmath(const double* a, const double* b, double* q, double* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[i] = a[i] / b[i];
        r[i] = __builtin_sqrt(a[i]);
    }
}
