// Row 1 baselines: an empty kernel launched and waited for from the host
// (launch_sync), and the same kernel as a one-node CUDA graph (graph_sync).
// Host timing with std::chrono around launch + stream sync.
#include "common.cuh"

__global__ void empty_kernel() {}

template <typename F>
static std::vector<long long> time_host(F launch_and_sync) {
    std::vector<long long> s;
    s.reserve(SAMPLES);
    for (int i = 0; i < WARMUP + SAMPLES; i++) {
        u64 t0 = host_ns();
        launch_and_sync();
        u64 t1 = host_ns();
        if (i >= WARMUP) s.push_back((long long)(t1 - t0));
    }
    return s;
}

int main() {
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    auto launch = time_host([&] {
        empty_kernel<<<1, 32, 0, st>>>();
        CK(cudaStreamSynchronize(st));
    });
    CK(cudaGetLastError());
    row_latency("spawn_join", "launch_sync", launch, field("how", "empty kernel <<<1,32>>> + " GPU_RT "StreamSynchronize"));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    empty_kernel<<<1, 32, 0, st>>>();
    CK(cudaStreamEndCapture(st, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    auto graphed = time_host([&] {
        CK(cudaGraphLaunch(exec, st));
        CK(cudaStreamSynchronize(st));
    });
    row_latency("spawn_join", "graph_sync", graphed, field("how", "one-kernel " GPU_API " graph launch + " GPU_RT "StreamSynchronize"));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaStreamDestroy(st));
    return 0;
}
