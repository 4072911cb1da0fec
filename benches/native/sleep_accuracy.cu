// Row 5 baseline: sleeping d ns with a __nanosleep loop (__nanosleep alone is
// coarse and capped near 1 ms, so the loop re-sleeps until %globaltimer
// passes the deadline). The error is time slept - d; long sleeps run in
// several warps at once, as in the Rust program, for 10,000 samples each.
// On AMD the sleep is s_sleep and the clock the wall clock (gpu_portable.h).
#include "common.cuh"

__device__ void sleep_for(u64 d) {
    u64 end = gtimer() + d, now;
    while ((now = gtimer()) < end) {
        u64 left = end - now;
        gpu_sleep_ns(left > 1000000 ? 1000000u : (unsigned)left);
    }
}

// One warp per block; lane 0 sleeps `per` times.
__global__ void sleeps(u64 d, int per, u64* err) {
    if (threadIdx.x != 0) return;
    for (int i = 0; i < per; i++) {
        u64 t0 = gtimer();
        sleep_for(d);
        err[blockIdx.x * per + i] = gtimer() - t0 - d;
    }
}

int main() {
    gpu_timer_init();
    struct Case {
        const char* label;
        u64 d;
        int warps, per;
    } cases[] = {{"d=1us", 1000, 1, 10000},
                 {"d=10us", 10000, 1, 10000},
                 {"d=100us", 100000, 10, 1000},
                 {"d=1ms", 1000000, 10, 1000},
                 {"d=10ms", 10000000, 100, 100}};
    u64* err;
    CK(cudaMalloc(&err, 10000 * sizeof(u64)));
    for (const Case& c : cases) {
        sleeps<<<c.warps, 32>>>(c.d, c.per, err);
        CK_LAUNCH();
        row_latency("sleep_accuracy", c.label, download(err, (size_t)c.warps * c.per),
                    field("requested_ns", (long long)c.d) + field("threads", c.warps) +
                        field("measure", "time slept minus requested") + field("how", GPU_SLEEP " loop"));
    }
    return 0;
}
