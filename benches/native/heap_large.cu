// Row heap_large baseline: the largest single cudaMalloc (bisected to
// 64 MiB), and cudaMalloc of 10 GiB + a kernel writing one word per 4 KiB
// page + sync, 10 samples (the cudaFree after each is not timed).
#include "common.cuh"

const size_t PAGE = 4096;
const size_t TOUCH_BYTES = 10ull << 30;
const int RUNS = 10;

__global__ void touch(u64* p, size_t pages) {
    size_t page = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (page < pages) p[page * (PAGE / 8)] = page;
}

int main() {
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    size_t lo = 0, hi = total_b;
    while (hi - lo > (64ull << 20)) {
        size_t mid = lo + (hi - lo) / 2;
        void* p = nullptr;
        if (cudaMalloc(&p, mid) == cudaSuccess) {
            CK(cudaFree(p));
            lo = mid;
        } else {
            (void)cudaGetLastError(); // an allocation failure is not sticky: clear it
            hi = mid;
        }
    }
    row_value("heap_large", "largest_block", "bytes", (double)lo,
              field("gib", (long long)(lo >> 30)) + field("how", "largest cudaMalloc, bisected to 64 MiB"));

    size_t pages = TOUCH_BYTES / PAGE;
    std::vector<long long> samples;
    for (int i = 0; i < RUNS; i++) {
        u64 t0 = host_ns();
        u64* p = nullptr;
        CK(cudaMalloc((void**)&p, TOUCH_BYTES));
        touch<<<(unsigned)((pages + 255) / 256), 256>>>(p, pages);
        CK_LAUNCH();
        samples.push_back((long long)(host_ns() - t0));
        CK(cudaFree(p));
    }
    row_latency("heap_large", "alloc_touch_10g", samples,
                field("how", "cudaMalloc(10 GiB) + a kernel writing one word per 4 KiB page + sync"));
    return 0;
}
