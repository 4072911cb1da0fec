// Row 3 baselines: an atomicCAS spinlock (with __nanosleep backoff, the usual
// CUDA idiom; s_sleep on AMD), lane 0 of each warp taking part, timed with
// %globaltimer (the wall clock on AMD):
//   mutex_uncontended: one warp, lock + unlock, mean of batches of 16;
//   mutex_handoff:     two warps pass the lock by turns (as the Rust program);
//   mutex_contended:   every resident warp acquires it 8 times.
#include "common.cuh"

const int BATCH = 16;
const int ROUNDS = 8;
const u64 GIVE_UP_NS = 20000000000ull;  // 20 s: report instead of hanging

__device__ void lock(int* l) {
    unsigned ns = 8;
    while (atomicCAS(l, 0, 1) != 0) {
        gpu_sleep_ns(ns);
        if (ns < 256) ns *= 2;
    }
    __threadfence();
}

__device__ void unlock(int* l) {
    __threadfence();
    atomicExch(l, 0);
}

struct Shared {
    int lock;
    int turn;
    u64 stamp;
    u64 counter;
    unsigned arrived;
    int gave_up;
};

__global__ void uncontended(Shared* s, u64* out, int n) {
    if (threadIdx.x != 0) return;
    volatile Shared* v = s;
    for (int i = 0; i < WARMUP + n; i++) {
        u64 t0 = gtimer();
        for (int k = 0; k < BATCH; k++) {
            lock(&s->lock);
            v->counter = v->counter + 1;
            unlock(&s->lock);
        }
        u64 t1 = gtimer();
        if (i >= WARMUP) out[i - WARMUP] = (t1 - t0) / BATCH;
    }
}

// Two blocks of one warp; block b plays turn b.
__global__ void handoff(Shared* s, u64* out, int n) {
    if (threadIdx.x != 0) return;
    volatile Shared* v = s;
    int me = blockIdx.x;
    u64 deadline = gtimer() + GIVE_UP_NS;
    int turns = 0;
    while (turns < WARMUP + n) {
        lock(&s->lock);
        if (v->turn == me) {
            u64 now = gtimer();
            if (turns >= WARMUP) out[me * n + turns - WARMUP] = now - v->stamp;
            turns++;
            v->turn = 1 - me;
            v->stamp = gtimer();
        }
        unlock(&s->lock);
        if (gtimer() > deadline) {
            v->gave_up = 1;
            return;
        }
    }
}

// Lane 0 of every warp: wait for all to arrive, then ROUNDS timed acquisitions.
__global__ void contended(Shared* s, u64* out, unsigned warps) {
    if (lane_id() != 0) return;
    volatile Shared* v = s;
    unsigned w = global_warp();
    u64 deadline = gtimer() + GIVE_UP_NS;
    atomicAdd(&s->arrived, 1u);
    while (v->arrived < warps) {
        if (gtimer() > deadline) {
            v->gave_up = 1;
            return;
        }
    }
    for (int r = 0; r < ROUNDS; r++) {
        u64 t0 = gtimer();
        lock(&s->lock);
        out[w * ROUNDS + r] = gtimer() - t0;
        v->counter = v->counter + 1;
        unlock(&s->lock);
    }
}

static Shared* fresh(Shared* s) {
    CK(cudaMemset(s, 0, sizeof(Shared)));
    return s;
}

static Shared read(Shared* s) {
    Shared h;
    CK(cudaMemcpy(&h, s, sizeof(Shared), cudaMemcpyDeviceToHost));
    return h;
}

int main() {
    gpu_timer_init();
    Shared* s;
    CK(cudaMalloc(&s, sizeof(Shared)));
    const int block = 2 * WARP;  // 2 warps per block reach 64 resident warps per SM
    unsigned warps = (unsigned)resident_blocks(contended, block) * (block / WARP);
    u64* out;
    size_t cap = std::max((size_t)2 * SAMPLES, (size_t)warps * ROUNDS);
    CK(cudaMalloc(&out, cap * sizeof(u64)));

    uncontended<<<1, 32>>>(fresh(s), out, SAMPLES);
    CK_LAUNCH();
    row_latency("mutex_uncontended", "", download(out, SAMPLES), field("batch", BATCH) + field("how", "atomicCAS spinlock"));

    handoff<<<2, 32>>>(fresh(s), out, SAMPLES);
    CK_LAUNCH();
    if (read(s).gave_up) {
        row_not_run("mutex_handoff", "", "ns", "the two warps did not finish within 20 s");
    } else {
        row_latency("mutex_handoff", "", download(out, 2 * SAMPLES), field("threads", 2) + field("how", "atomicCAS spinlock"));
    }

    contended<<<warps / 2, block>>>(fresh(s), out, warps);
    CK_LAUNCH();
    Shared h = read(s);
    if (h.gave_up) {
        row_not_run("mutex_contended", "", "ns", "the warps did not finish within 20 s");
    } else {
        row_latency("mutex_contended", "", download(out, (size_t)warps * ROUNDS),
                    field("contenders", warps) + field_bool("counter_ok", h.counter == (u64)warps * ROUNDS) +
                        field("how", "atomicCAS spinlock, lane 0 of every resident warp"));
    }
    return 0;
}
