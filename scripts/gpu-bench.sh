#!/usr/bin/env bash
# The benchmark matrix on a GPU machine (no Rust needed there), from a bundle
# made by scripts/make-bench-bundle.sh:
#   bash scripts/gpu-bench.sh [BUNDLE_DIR] [RESULTS_DIR] [gpurun-dev bench options, e.g. --only spawn_join]
# 1. compiles the native CUDA baselines (benches/native) with nvcc and the
#    bundle's PTX ahead of time with ptxas (sparing the driver's JIT at each
#    program's first start), all in parallel;
# 2. runs `gpurun-dev bench` with those GPU programs, baselines and the host
#    programs, back to back per benchmark;
# 3. leaves RESULTS_DIR (default $OUT/bench-results, else ./bench-results)
#    with the new JSON file and README.md + latency.svg rendered over it and
#    every earlier result in ./bench-results (copied in first).
# Everything is bounded in time: compiling 4 min, the bench 7 min, each program 60 s.
# Build outputs go to $BENCH_WORK (default /tmp/gpu-bench), not to $OUT.
set -u
B=${1:-gpu-bundle/bench}
RES=${2:-${OUT:-.}/bench-results}
shift $(( $# < 2 ? $# : 2 ))
ARCH=${ARCH:-sm_90}
WORK=${BENCH_WORK:-/tmp/gpu-bench}
NATIVE=$WORK/native
PROGRAMS=$WORK/programs
SRC=$B/native-src
[ -d "$SRC" ] || SRC=benches/native
rm -rf "$WORK"
mkdir -p "$RES" "$NATIVE" "$PROGRAMS"
for f in "$B"/*-"$ARCH".ptx.gz; do gunzip -c "$f" > "$PROGRAMS/$(basename "$f" .gz)"; done
cp "$B"/*-"$ARCH".ptx "$PROGRAMS"/ 2>/dev/null || true
if [ -d bench-results ] && [ "$(cd bench-results && pwd)" != "$(cd "$RES" && pwd)" ]; then
    cp -n bench-results/*.json "$RES"/ 2>/dev/null || true
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
t0=$(date +%s)
if [ -x "$NVCC" ]; then
    echo "== nvcc: $("$NVCC" --version | tail -n 1)"
    for f in "$SRC"/*.cu; do
        n=$(basename "$f" .cu)
        ( timeout 240 "$NVCC" -O3 -arch="$ARCH" -std=c++17 -rdc=true -o "$NATIVE/$n" "$f" -lcudadevrt \
              >"$NATIVE/$n.log" 2>&1 \
          && echo "   built $n" \
          || { echo "   FAILED $n:"; tail -n 15 "$NATIVE/$n.log" | sed 's/^/   | /'; rm -f "$NATIVE/$n"; } ) &
    done
    PTXAS=${PTXAS:-$(dirname "$NVCC")/ptxas}
    for f in "$PROGRAMS"/*.ptx; do
        n=$(basename "$f" .ptx)
        ( timeout 240 "$PTXAS" -arch="$ARCH" -O3 "$f" -o "$PROGRAMS/$n.cubin" >"$WORK/$n.ptxas.log" 2>&1 \
          && echo "   ptxas $n" \
          || { echo "   ptxas FAILED $n (the driver will JIT the PTX):"; tail -n 5 "$WORK/$n.ptxas.log" | sed 's/^/   | /'; rm -f "$PROGRAMS/$n.cubin"; } ) &
    done
    wait
    echo "   compiling took $(( $(date +%s) - t0 )) s"
else
    echo "== no nvcc ($NVCC): the native baselines will say 'not run'"
fi

export GPURUN_COMMIT=${GPURUN_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
echo "== gpurun-dev bench (commit $GPURUN_COMMIT)"
timeout 420 "$B/gpurun-dev" bench --programs "$PROGRAMS" --native "$NATIVE" --cpu "$B/cpu" --out "$RES" --timeout 60 "$@"
rc=$?
if [ "$rc" != 0 ]; then
    echo "== gpurun-dev bench exited $rc; rendering what was written"
    "$B/gpurun-dev" bench --render-only --out "$RES" || true
fi
echo "== results in $RES ($(( $(date +%s) - t0 )) s in all):"
ls -l "$RES"
exit "$rc"
