#!/usr/bin/env python3
"""The floors under the runtime's primitives: what one memory operation costs
on this GPU, measured by one thread in a CUDA kernel (CuPy, on the GPU
machine; no Rust needed).

    python3 xtask/probes/memory_floors.py [--json OUT.json]

Each row is the mean of N dependent repetitions (each uses the last one's
result, so none overlaps the next), timed with %globaltimer:

- atomics, loads and fences at gpu and sys scope, on device memory and on
  mapped pinned host memory (where the host-call ring lives);
- one counter taken by every warp at once (host memory, device memory):
  the throughput of a shared ticket counter;
- a round trip between two warps of different blocks through device memory
  (one writes, the other waits for it and answers): the floor of any
  handoff between threads (spawn, join, channels, unpark).
"""
import json
import sys
import time

import cupy as cp

SRC = r"""
__device__ __forceinline__ unsigned long long T() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
    return t;
}

// A call that is not inlined, directly and through a pointer (how
// core::fmt reaches `Display::fmt` and `Write::write_str`).
__device__ __noinline__ unsigned long long bump(unsigned long long x) { return x + 1; }
typedef unsigned long long (*bump_fn)(unsigned long long);

extern "C" __global__ void ops(unsigned long long *host, unsigned long long *dev, unsigned long long *out, int n, unsigned long long zero) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long v = 0, t;
    int k = 0;
#define ROW(body) { t = T(); for (int i = 0; i < n; i++) { body; } out[k++] = (T() - t); }
    // The address depends on the last result (`v * zero`: `zero` is 0, a
    // kernel argument the compiler cannot fold) so that nothing overlaps.
    ROW(asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(host + (v * zero)) : "memory"));
    ROW(asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(host + (v * zero)) : "memory"));
    ROW(asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(dev + (v * zero)) : "memory"));
    ROW(asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(dev + (v * zero)) : "memory"));
    ROW(asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(dev + (v * zero)) : "memory"));
    ROW(asm volatile("fence.acq_rel.gpu; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("fence.sc.gpu; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("fence.acq_rel.sys; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("st.global.u64 [%0], %1; fence.acq_rel.sys; ld.relaxed.gpu.global.u64 %1, [%2];" : "+l"(host), "+l"(v) : "l"(dev + 16) : "memory"));
    ROW(asm volatile("nanosleep.u32 0; ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("nanosleep.u32 0;" ::: "memory"));
    ROW(asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(v = bump(v));
    bump_fn f = zero ? (bump_fn)0 : bump;
    ROW(v = f(v));
    // What a device-scope fence does to the SM's L1 (CCTL.IVALL after
    // MEMBAR.GPU in the SASS): a line loaded the iteration before, read
    // again after the fence; the same for shared and local memory and for
    // the read-only (non-coherent) path.
    __shared__ unsigned long long sh[4];
    sh[0] = 0;
    unsigned long long loc[8];
    for (int i = 0; i < 8; i++) loc[i] = 0;
    volatile unsigned long long *lp = loc;
    ROW(asm volatile("fence.acq_rel.gpu; ld.global.u64 %0, [%1];" : "=l"(v) : "l"(dev + 16 + (v * zero)) : "memory"));
    ROW(asm volatile("fence.acq_rel.gpu; ld.shared.u64 %0, [%1];" : "=l"(v) : "r"((unsigned)__cvta_generic_to_shared(sh + (v * zero))) : "memory"));
    ROW(asm volatile("fence.acq_rel.gpu;" ::: "memory"); v = lp[v * zero]);
    ROW(v = lp[v * zero]);
    ROW(asm volatile("fence.acq_rel.gpu; ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(dev + 24 + (v * zero)) : "memory"));
    ROW(asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(dev + 24 + (v * zero)) : "memory"));
    ROW(asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"((unsigned)__cvta_generic_to_shared(sh + (v * zero))) : "memory"));
    // The clocks a yield may read to decide whether to look at the exit flag.
    unsigned long long c;
    ROW(asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c) :: "memory"); v ^= c);
    ROW(asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c) :: "memory"); v ^= c; asm volatile("nanosleep.u32 0;" ::: "memory"));
    ROW(asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) :: "memory"); v ^= c);
    ROW(asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) :: "memory"); v ^= c; asm volatile("nanosleep.u32 0;" ::: "memory"));
    out[k++] = v;
}

// Every warp's lane 0 takes n tickets from one word: the throughput of a
// shared counter (the host-call ring's ticket counter is one).
extern "C" __global__ void contend(unsigned long long *word, int sys, unsigned long long *out, int n, unsigned long long zero) {
    if (threadIdx.x % 32 != 0) return;
    unsigned long long t = T(), v = 0;
    for (int i = 0; i < n; i++) {
        if (sys) asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(word + (v * zero)) : "memory");
        else asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(word + (v * zero)) : "memory");
    }
    atomicMax(out, T() - t);
}

// Ping-pong between block 0 (thread 0) and block 1 (thread 0) through one
// device word each way: the handoff floor.
extern "C" __global__ void pingpong(unsigned long long *dev, unsigned long long *out, int n) {
    if (threadIdx.x != 0) return;
    volatile unsigned long long *ping = dev + 32, *pong = dev + 64;
    if (blockIdx.x == 0) {
        unsigned long long t = T();
        for (int i = 1; i <= n; i++) {
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(ping), "l"((unsigned long long)i) : "memory");
            unsigned long long v;
            do { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(pong) : "memory"); } while (v != i);
        }
        out[0] = T() - t;
    } else if (blockIdx.x == 1) {
        for (int i = 1; i <= n; i++) {
            unsigned long long v;
            do { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(ping) : "memory"); } while (v != i);
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(pong), "l"((unsigned long long)i) : "memory");
        }
    }
}
"""

ROWS = [
    "atomic add, sys scope, host-mapped memory (PCIe)",
    "load, sys scope, host-mapped memory (PCIe)",
    "atomic add, gpu scope, device memory",
    "atomic add, sys scope, device memory",
    "load relaxed, gpu scope, device memory",
    "load acquire, gpu scope, device memory",
    "atomic add acq_rel, gpu scope, device memory",
    "fence.acq_rel.gpu + load",
    "fence.sc.gpu + load",
    "fence.acq_rel.sys + load",
    "store to host memory + fence.acq_rel.sys + load",
    "nanosleep 0 + load",
    "nanosleep 0 alone (thread::yield_now's hint)",
    "plain load, device memory (L1 hit)",
    "call of a non-inlined function",
    "call through a function pointer",
    "fence.acq_rel.gpu + plain load of a line in L1 before the fence",
    "fence.acq_rel.gpu + shared-memory load",
    "fence.acq_rel.gpu + local-memory load",
    "local-memory load (L1 hit)",
    "fence.acq_rel.gpu + read-only (nc) load of a line in L1 before",
    "read-only (nc) load (L1 hit)",
    "shared-memory load",
    "%globaltimer read",
    "%globaltimer read + nanosleep 0",
    "%clock64 read",
    "%clock64 read + nanosleep 0",
]


def main():
    n = 2000
    mod = cp.RawModule(code=SRC, options=("-std=c++14",))
    ops, pingpong = mod.get_function("ops"), mod.get_function("pingpong")
    # Mapped pinned host memory, as the launcher allocates the ring.
    flags = cp.cuda.runtime.hostAllocMapped
    host_ptr = cp.cuda.runtime.hostAlloc(4096, flags)
    # Unified addressing (every 64-bit CUDA platform): the device uses the
    # mapped host pointer as it is.
    host_dev = host_ptr
    dev = cp.zeros(1024, dtype=cp.uint64)
    out = cp.zeros(64, dtype=cp.uint64)
    results = {}
    for _ in range(2):  # the first round warms up (JIT, TLB); keep the second
        ops((1,), (32,), (cp.uint64(host_dev), dev, out, cp.int32(n), cp.uint64(0)))
        cp.cuda.runtime.deviceSynchronize()
        o = out.get()
        results = {name: o[i] / n for i, name in enumerate(ROWS)}
        dev[32:] = 0
        pingpong((2,), (32,), (dev, out, cp.int32(n)))
        cp.cuda.runtime.deviceSynchronize()
        results["round trip between two warps (device memory, polling)"] = out.get()[0] / n
    # Shared-counter throughput: every warp of 132 blocks x 32 warps.
    contend = mod.get_function("contend")
    m = 200
    for label, ptr, sys_scope in [("host-mapped memory, sys scope", host_dev, 1), ("device memory, gpu scope", dev.data.ptr, 0)]:
        for _ in range(2):
            out[:] = 0
            contend((132,), (1024,), (cp.uint64(ptr), cp.int32(sys_scope), out, cp.int32(m), cp.uint64(0)))
            cp.cuda.runtime.deviceSynchronize()
        ns = int(out.get()[0])
        results[f"shared counter, 4224 warps, {label}: ns per atomic (all warps)"] = ns / (132 * 32 * m)
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"memory floors on {name} (driver {cp.cuda.runtime.driverGetVersion()}), mean of {n}, ns:")
    for k, v in results.items():
        print(f"  {v:9.1f}  {k}")
    if "--json" in sys.argv:
        path = sys.argv[sys.argv.index("--json") + 1]
        with open(path, "w") as f:
            json.dump({"device": name, "date": time.strftime("%Y-%m-%d"), "n": n, "ns": results}, f, indent=1)
    cp.cuda.runtime.freeHost(host_ptr)


if __name__ == "__main__":
    main()
