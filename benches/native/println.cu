// Row 8 baseline: device printf (1 MB FIFO by default: it overwrites when
// full and is flushed only at a synchronisation). Lines per second from 1
// warp, 132 warps and all resident warps (lane 0 each) = lines / host time
// of launch + cudaDeviceSynchronize (which writes them out). Every line is
// `~ln VARIANT WARP I`, so `gpurun-dev bench` counts how many arrived.
// HIP's printf on AMD has no FIFO: each call is a round trip to a host
// thread (ROCm's hostcall), which writes the line out itself.
#include "common.cuh"

#if defined(GPU_HIP)
#define PRINTF_HOW "device printf, a host call per line"
#else
#define PRINTF_HOW "device printf, 1 MB FIFO"
#endif

__global__ void lines(int variant, int per) {
    if (lane_id() != 0) return;
    int w = (int)global_warp();
    for (int i = 0; i < per; i++) {
        if (variant == 0) printf("~ln 1_thread %d %d\n", w, i);
        else if (variant == 1) printf("~ln 132_threads %d %d\n", w, i);
        else printf("~ln all_threads %d %d\n", w, i);
    }
}

// Device-side cost of one printf call, one lane.
__global__ void call_cost(u64* out, int n) {
    if (threadIdx.x != 0) return;
    for (int i = 0; i < n; i++) {
        u64 t0 = gtimer();
        printf("~ln call_1_thread 0 %d\n", i);
        out[i] = gtimer() - t0;
    }
}

static void throughput(const char* variant, int code, int warps, int per) {
    int block = warps >= 64 ? 2 * WARP : WARP * warps;
    u64 t0 = host_ns();
    lines<<<(warps * WARP + block - 1) / block, block>>>(code, per);
    CK_LAUNCH();
    double secs = (host_ns() - t0) * 1e-9;
    long long total = (long long)warps * per;
    fflush(stdout);
    row_value("println", variant, "lines/s", total / secs,
              field("threads", warps) + field("lines_expected", total) + field("how", PRINTF_HOW));
}

int main() {
    gpu_timer_init();
#if defined(GPU_HIP)
    fprintf(stderr, "printf: HIP's, a host call per line (no FIFO)\n");
#else
    size_t fifo = 0;
    CK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    fprintf(stderr, "printf FIFO: %zu bytes\n", fifo);
#endif
    int all = resident_blocks(lines, 2 * WARP) * 2;
    all -= all % 2;
    throughput("1_thread", 0, 1, 100000);
    throughput("132_threads", 1, 132, 1000);
    throughput("all_threads", 2, all, std::max(1, 400000 / all));

    u64* out;
    CK(cudaMalloc(&out, SAMPLES * sizeof(u64)));
    call_cost<<<1, 32>>>(out, SAMPLES);
    CK_LAUNCH();
    fflush(stdout);
    row_latency("println", "call_1_thread", download(out, SAMPLES),
                field("lines_expected", SAMPLES) + field("how", "one device printf call"));
    return 0;
}
