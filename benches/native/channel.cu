// Row 4 baselines: a hand-written bounded queue (1024 slots, a ticket per
// message, a sequence word per slot: the same protocol as gpurun's host ring),
// P producer warps and one consumer warp (lane 0 each), for one second.
// Throughput = messages the consumer took / its elapsed %globaltimer time.
#include "common.cuh"

const unsigned CAP = 1024;
const u64 RUN_NS = 1000000000ull;

struct Queue {
    u64 tail;  // next ticket (producers)
    int stop;  // set by the consumer after RUN_NS
    int done;  // producers that have left
    u64 received, elapsed_ns, checksum;
    u64 seq[CAP];  // == t: free for ticket t; == t + 1: holds ticket t
    u64 val[CAP];
};

__global__ void init(Queue* q) {
    for (unsigned i = threadIdx.x; i < CAP; i += blockDim.x) q->seq[i] = i;
    if (threadIdx.x == 0) {
        q->tail = 0;
        q->stop = q->done = 0;
        q->received = q->elapsed_ns = q->checksum = 0;
    }
}

// Block 0: the consumer; blocks 1..P: producers.
__global__ void run(Queue* q, int producers) {
    if (threadIdx.x != 0) return;
    volatile Queue* v = q;
    if (blockIdx.x > 0) {
        while (!v->stop) {
            u64 t = atomicAdd(&q->tail, 1ull);
            unsigned slot = (unsigned)(t & (CAP - 1));
            while (v->seq[slot] != t) {
            }
            v->val[slot] = t;
            __threadfence();
            v->seq[slot] = t + 1;
        }
        __threadfence();
        atomicAdd(&q->done, 1);
        return;
    }
    u64 t0 = gtimer(), head = 0, sum = 0;
    bool stopping = false;
    for (;;) {
        unsigned slot = (unsigned)(head & (CAP - 1));
        if (v->seq[slot] == head + 1) {
            __threadfence();
            sum += v->val[slot];
            __threadfence();
            v->seq[slot] = head + CAP;
            head++;
            if (!stopping && (head & 4095) == 0 && gtimer() - t0 >= RUN_NS) v->stop = 1, stopping = true;
            continue;
        }
        if (!stopping && gtimer() - t0 >= RUN_NS) v->stop = 1, stopping = true;
        // Every producer has left, so every ticket taken was published.
        if (stopping && v->done == producers && v->tail == head) break;
    }
    v->elapsed_ns = gtimer() - t0;
    v->received = head;
    v->checksum = sum;
}

static void bench(const char* id, int producers, Queue* q) {
    init<<<1, 256>>>(q);
    CK_LAUNCH();
    run<<<1 + producers, WARP>>>(q, producers);
    CK_LAUNCH();
    u64 r[3];  // received, elapsed_ns, checksum
    CK(cudaMemcpy(r, &q->received, sizeof r, cudaMemcpyDeviceToHost));
    // Tickets 0 .. received-1, each taken exactly once.
    bool exact = r[0] > 0 && r[2] == r[0] * (r[0] - 1) / 2;
    row_value(id, "", "msg/s", r[0] / (r[1] * 1e-9),
              field("producers", producers) + field("messages", (long long)r[0]) + field_bool("all_received", exact) +
                  field("how", "hand-written bounded ticket queue, 1024 slots"));
}

int main() {
    gpu_timer_init();
    Queue* q;
    CK(cudaMalloc(&q, sizeof(Queue)));
    bench("channel_1p1c", 1, q);
    bench("channel_32p1c", 32, q);
    return 0;
}
