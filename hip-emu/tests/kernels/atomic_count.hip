// A classic HIP kernel, compiled by hipcc (Debian's HIP 5.2 / clang 15 in CI) at
// test time and run on the emulator by hip-emu/tests/hip_kernels.rs: code
// that none of our own toolchain produced. One kernel per file; `extern "C"`
// keeps its name plain.
#include <hip/hip_runtime.h>

// Every thread adds its value to one global sum, and takes a ticket from a
// global counter: atomicAdd's result, so the tickets are 0..n-1 in some order.
extern "C" __global__ void atomic_count(unsigned* counter, unsigned* sum, unsigned* tickets, const unsigned* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(sum, v[i]);
        tickets[i] = atomicAdd(counter, 1u);
    }
}
