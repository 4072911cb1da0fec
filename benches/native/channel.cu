// Row 4 baselines: a hand-written bounded queue (1024 slots, a ticket per
// message, a sequence word per slot: the same protocol as gpurun's host ring),
// P producer warps and one consumer warp (lane 0 each), for one second.
// Throughput = messages the consumer took / its elapsed %globaltimer time.
//
// Variant `std_protocol`: the protocol of std's bounded channel (mpmc's array
// flavor, crossbeam's), written out here with the orderings Rust's atomics
// get on the GPU: a sender loads the tail, checks the slot's stamp (acquire)
// and claims the slot with a compare-exchange on the tail (it may not claim a
// slot that is not free: `try_send` and a disconnect need that), then writes
// the message and releases the stamp; the one receiver (mpsc's) checks the
// stamp at its head, reads, releases the stamp and stores the head. What
// that protocol costs on this GPU, without Rust's calls around it: the floor
// of the std rows.
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

// std's bounded channel, 1024 slots: the stamp's index bits, then a mark bit
// (a disconnect, never set here), then the lap.
const u64 MARK = 2048, ONE_LAP = 4096;

struct StdQueue {
    u64 head;  // the receiver's; senders read it when a slot is not free
    u64 pad0[15];
    u64 tail;  // senders claim slots here
    u64 pad1[15];
    int stop, done;
    u64 sent, sent_sum, received, received_sum, elapsed_ns;
    u64 stamp[CAP];
    u64 val[CAP];
};

__global__ void std_init(StdQueue* q) {
    for (unsigned i = threadIdx.x; i < CAP; i += blockDim.x) q->stamp[i] = i;
    if (threadIdx.x == 0) {
        q->head = q->tail = 0;
        q->stop = q->done = 0;
        q->sent = q->sent_sum = q->received = q->received_sum = q->elapsed_ns = 0;
    }
}

// Block 0: the receiver; blocks 1..P: senders, each message its sender's
// index and count.
__global__ void std_run(StdQueue* q, int producers) {
    if (threadIdx.x != 0) return;
    volatile StdQueue* v = q;
    if (blockIdx.x > 0) {
        u64 sent = 0, sum = 0;
        while (!v->stop) {
            u64 msg = ((u64)blockIdx.x << 40) | sent;
            u64 tail = gpu_load_relaxed(&q->tail);
            for (;;) {
                unsigned index = (unsigned)(tail & (MARK - 1));
                u64 lap = tail & ~(ONE_LAP - 1);
                u64 stamp = gpu_load_acquire(&q->stamp[index]);
                if (tail == stamp) {
                    u64 next = index + 1 < CAP ? tail + 1 : lap + ONE_LAP;
                    u64 seen = atomicCAS(&q->tail, tail, next);
                    if (seen == tail) {
                        q->val[index] = msg;
                        gpu_store_release(&q->stamp[index], tail + 1);
                        sent++, sum += msg;
                        break;
                    }
                    tail = seen;
                } else if (stamp + ONE_LAP == tail + 1) {
                    // Full, or the slot not read out yet: std looks at the head.
                    if (gpu_load_relaxed(&q->head) + ONE_LAP == tail && v->stop) break;
                    tail = gpu_load_relaxed(&q->tail);
                } else {
                    tail = gpu_load_relaxed(&q->tail);
                }
            }
        }
        atomicAdd(&q->sent, sent);
        atomicAdd(&q->sent_sum, sum);
        __threadfence();
        atomicAdd(&q->done, 1);
        return;
    }
    u64 t0 = gtimer(), head = 0, received = 0, sum = 0;
    bool stopping = false;
    for (;;) {
        unsigned index = (unsigned)(head & (MARK - 1));
        u64 lap = head & ~(ONE_LAP - 1);
        u64 stamp = gpu_load_acquire(&q->stamp[index]);
        if (head + 1 == stamp) {
            u64 next = index + 1 < CAP ? head + 1 : lap + ONE_LAP;
            sum += q->val[index];
            gpu_store_release(&q->stamp[index], head + ONE_LAP);
            gpu_store_relaxed(&q->head, next);
            head = next;
            received++;
            if (!stopping && (received & 4095) == 0 && gtimer() - t0 >= RUN_NS) v->stop = 1, stopping = true;
            continue;
        }
        if (!stopping && gtimer() - t0 >= RUN_NS) v->stop = 1, stopping = true;
        // Every sender has left, so every slot claimed was written.
        if (stopping && v->done == producers && (gpu_load_relaxed(&q->tail) & ~MARK) == head) break;
    }
    v->elapsed_ns = gtimer() - t0;
    v->received = received;
    v->received_sum = sum;
}

static void bench_std(const char* id, int producers, StdQueue* q) {
    std_init<<<1, 256>>>(q);
    CK_LAUNCH();
    std_run<<<1 + producers, WARP>>>(q, producers);
    CK_LAUNCH();
    u64 r[5];  // sent, sent_sum, received, received_sum, elapsed_ns
    CK(cudaMemcpy(r, &q->sent, sizeof r, cudaMemcpyDeviceToHost));
    bool exact = r[2] > 0 && r[0] == r[2] && r[1] == r[3];
    row_value(id, "std_protocol", "msg/s", r[2] / (r[4] * 1e-9),
              field("producers", producers) + field("messages", (long long)r[2]) + field_bool("all_received", exact) +
                  field("how", "std's bounded-channel protocol (tail CAS after a stamp check; one receiver), hand-written"));
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
    StdQueue* sq;
    CK(cudaMalloc(&sq, sizeof(StdQueue)));
    bench_std("channel_1p1c", 1, sq);
    bench_std("channel_32p1c", 32, sq);
    return 0;
}
