// The floor under `host_call`: one GPU thread and one host thread doing
// round trips through a slot in mapped pinned host memory (where the
// runtime's ring lives), in the runtime's protocol and in variants that
// leave out one of its steps.
//   nvcc -O3 -arch=sm_90 -std=c++17 xtask/probes/host_round_trip.cu -o /tmp/hrt && /tmp/hrt
//
// The runtime's protocol (rt-common/src/ring.rs, `call_host`):
//   check   the slot is free: an acquire load of `seq` (host memory)
//   fill    the packet's words, relaxed stores
//   publish fence.acq_rel.sys, then `seq = t + 1`
//   wait    poll `reply_seq` relaxed until the host's `t + 1`
//   acquire fence.acq_rel.sys
//   free    fence.acq_rel.gpu, then `seq` = free for the next ticket
// Variants:
//   no-check   as the runtime, without the free check's load
//   ld.acquire the reply polled with ld.acquire.sys, no fence after it
//   tagged     every word the host reads carries the ticket in its high
//              half (NCCL's LL idea): the host waits until every word has
//              it, the device until the reply word has it; no fences. The
//              free check and the free store stay.
//   tagged, no-check
// The host thread answers each packet the same way in every mode: it spins
// on the slot, then writes the reply (for the fenced modes the status then
// `reply_seq` with a release; for the tagged ones one word with the tag).
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <thread>
#include <vector>
#include <algorithm>

struct alignas(128) Slot {
    unsigned long long seq;        // 2t: free for t; 2t+1: published
    unsigned long long reply_seq;  // t+1 once the reply is in (fenced modes)
    unsigned long long words[4];   // the packet's header words
    unsigned long long reply;      // status (fenced) or status|tag (tagged)
};

enum Mode { RUNTIME, NO_CHECK, LD_ACQUIRE, TAGGED, TAGGED_NO_CHECK, MODES };
static const char* NAMES[MODES] = {
    "runtime's protocol (check, fill, fence.sys, publish, poll relaxed, fence.sys, fence.gpu, free)",
    "no free check",
    "reply polled with ld.acquire.sys, no fence.sys after",
    "tagged words, no fences (free check and free store kept)",
    "tagged words, no fences, no free check",
};

__device__ __forceinline__ unsigned long long T() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
    return t;
}
__device__ __forceinline__ unsigned long long ld_relaxed_sys(const unsigned long long* p) {
    unsigned long long v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
__device__ __forceinline__ unsigned long long ld_acquire_sys(const unsigned long long* p) {
    unsigned long long v; asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
__device__ __forceinline__ void st_relaxed_sys(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

// Gives up (out[MODES] = the ticket it stopped at + 1) after a second.
#define SPIN(cond) { unsigned long long s0 = T(); while (cond) { if (T() - s0 > 1000000000ull) { out[MODES] = t + 1; return; } } }

__global__ void device_side(Slot* s, int mode, int n, unsigned long long* out) {
    if (threadIdx.x != 0) return;
    bool tagged = mode == TAGGED || mode == TAGGED_NO_CHECK;
    bool check = mode == RUNTIME || mode == LD_ACQUIRE || mode == TAGGED;
    for (int t = 0; t < n; t++) {
        unsigned long long t0 = T();
        unsigned long long tag = (unsigned long long)(t + 1) << 32;
        if (check) {
            SPIN(ld_acquire_sys(&s->seq) != 2ull * t);
        }
        for (int w = 0; w < 4; w++) st_relaxed_sys(&s->words[w], tagged ? tag | w : w);
        if (!tagged) {
            asm volatile("fence.acq_rel.sys;" ::: "memory");
            st_relaxed_sys(&s->seq, 2ull * t + 1);
            if (mode == LD_ACQUIRE) {
                SPIN(ld_acquire_sys(&s->reply_seq) != (unsigned long long)(t + 1));
            } else {
                SPIN(ld_relaxed_sys(&s->reply_seq) != (unsigned long long)(t + 1));
                asm volatile("fence.acq_rel.sys;" ::: "memory");
            }
            unsigned long long status = ld_relaxed_sys(&s->reply);
            if (status != 7) { out[MODES + 1] = 1; return; }
            asm volatile("fence.acq_rel.gpu;" ::: "memory");
        } else {
            unsigned long long r;
            SPIN(((r = ld_relaxed_sys(&s->reply)) >> 32) != (unsigned long long)(t + 1));
            if ((r & 0xffffffffull) != 7) { out[MODES + 1] = 1; return; }
        }
        st_relaxed_sys(&s->seq, 2ull * t + 2);
        out[MODES + 2 + t] = T() - t0;
    }
}

// Gives up (returns the ticket it stopped at + 1) after two seconds.
#define HSPIN(cond) { auto h0 = std::chrono::steady_clock::now(); while (cond) { if (std::chrono::steady_clock::now() - h0 > std::chrono::seconds(2)) { *stuck = t + 1; return; } } }

static void host_side(volatile Slot* s, int mode, int n, int* stuck) {
    bool tagged = mode == TAGGED || mode == TAGGED_NO_CHECK;
    for (int t = 0; t < n; t++) {
        unsigned long long tag = (unsigned long long)(t + 1) << 32;
        if (tagged) {
            for (int w = 0; w < 4; w++)
                HSPIN((s->words[w] & ~0xffffffffull) != tag);
            std::atomic_thread_fence(std::memory_order_acquire);
            s->reply = tag | 7;
        } else {
            HSPIN(s->seq < 2ull * t + 1);
            std::atomic_thread_fence(std::memory_order_acquire);
            s->reply = 7;
            std::atomic_thread_fence(std::memory_order_release);
            s->reply_seq = t + 1;
        }
        // In the tagged no-check mode nothing else paces the host: wait for
        // the device's free store before the next packet's words (or a later
        // value: the device may have published its next packet already).
        HSPIN(s->seq < 2ull * t + 2);
    }
}

int main() {
    setvbuf(stdout, nullptr, _IONBF, 0);
    const int n = 20000, warm = 1000;
    Slot* h;
    cudaHostAlloc(&h, sizeof(Slot), cudaHostAllocMapped);
    Slot* d;
    cudaHostGetDevicePointer(&d, h, 0);
    unsigned long long* out;
    cudaMalloc(&out, (MODES + 2 + n) * 8);
    std::vector<unsigned long long> lat(n);
    printf("host round trip through mapped pinned memory, one GPU thread, one host thread spinning; %d round trips after %d warm-up, ns\n", n, warm);
    for (int round = 0; round < 2; round++)
        for (int mode = 0; mode < MODES; mode++) {
            memset((void*)h, 0, sizeof(Slot));
            cudaMemset(out, 0, (MODES + 2 + n) * 8);
            int stuck = 0;
            std::thread host(host_side, (volatile Slot*)h, mode, n, &stuck);
            device_side<<<1, 32>>>(d, mode, n, out);
            cudaError_t e = cudaDeviceSynchronize();
            host.join();
            unsigned long long bad = 0, dstuck = 0;
            cudaMemcpy(&bad, out + MODES + 1, 8, cudaMemcpyDeviceToHost);
            cudaMemcpy(&dstuck, out + MODES, 8, cudaMemcpyDeviceToHost);
            if (stuck || dstuck) {
                printf("%-96s STUCK: host at ticket %d, device at %llu (1-based; 0 = not stuck), %s\n", NAMES[mode], stuck, dstuck, cudaGetErrorString(e));
                continue;
            }
            cudaMemcpy(lat.data(), out + MODES + 2, n * 8, cudaMemcpyDeviceToHost);
            std::vector<unsigned long long> v(lat.begin() + warm, lat.end());
            std::sort(v.begin(), v.end());
            printf("%-96s p50 %6llu  p99 %6llu%s%s\n", NAMES[mode], v[v.size() / 2], v[v.size() * 99 / 100],
                   e ? " CUDA ERROR" : "", bad ? " WRONG REPLY" : "");
        }
    return 0;
}
