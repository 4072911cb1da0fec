// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// Each wavefront sums its lanes two ways: a butterfly with __shfl_xor (every
// lane ends with the total) and a tree with __shfl_down (lane 0 has it); and
// each lane reads its neighbour's value with __shfl.
extern "C" __global__ void warp_sums(const int* in, int* xor_out, int* down_out, int* rot_out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int x = v;
    for (int o = warpSize / 2; o > 0; o >>= 1) x += __shfl_xor(x, o);
    int d = v;
    for (int o = warpSize / 2; o > 0; o >>= 1) d += __shfl_down(d, o);
    int lane = threadIdx.x % warpSize;
    int r = __shfl(v, (lane + 1) % warpSize);
    xor_out[i] = x;
    if (lane == 0) down_out[i / warpSize] = d;
    rot_out[i] = r;
}
