// Row 13 baseline: context creation + module load + one launch. `gpurun
// bench` times from starting this process to the line below arriving, as it
// does for `gpurun run cold_start-ARCH.ptx` and the host program.
#include "common.cuh"

__global__ void first(int* flag) { *flag = 1; }

int main() {
    int* flag;
    CK(cudaMalloc(&flag, sizeof(int)));
    first<<<1, 32>>>(flag);
    CK_LAUNCH();
    int h = 0;
    CK(cudaMemcpy(&h, flag, sizeof h, cudaMemcpyDeviceToHost));
    printf("cold_start: main reached (%d)\n", h);
    fflush(stdout);
    return 0;
}
