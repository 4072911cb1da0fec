#!/usr/bin/env bash
# Where the cold_start row's time goes, on a GPU machine, from a bench bundle
# (scripts/make-bench-bundle.sh with cold_start in BENCH_IDS):
#   bash xtask/probes/cold-start-parts.sh [BUNDLE_DIR] [ROUNDS]
# 1. gpurun's own timeline (GPURUN_TIMELINE=1) of three cached starts;
# 2. process start to first stdout line, interleaved, for the native
#    baseline, gpurun's default and gpurun with one resource shrunk at a time.
set -eu
B=${1:-gpu-bundle/bench}
ROUNDS=${2:-15}
W=${BENCH_WORK:-/tmp/cold-start-parts}
rm -rf "$W" && mkdir -p "$W"
gunzip -c "$B/cold_start-sm_90.ptx.gz" > "$W/cold_start-sm_90.ptx"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$NVCC" -O3 -arch=sm_90 -std=c++17 -o "$W/native_cold_start" "$B/native-src/cold_start.cu"
G="$B/gpurun"
P="$W/cold_start-sm_90.ptx"
"$G" run "$P" >/dev/null 2>&1 # fills the cubin cache
for i in 1 2 3; do GPURUN_TIMELINE=1 "$G" run "$P" 2>&1 | grep -v "cached cubin"; done
python3 "$(dirname "$0")/cold_start_parts.py" "$ROUNDS" \
    "native=$W/native_cold_start" \
    "gpurun=$G run $P" \
    "call-stack-size 4K=$G run --call-stack-size 4096 $P" \
    "stack-size 16K=$G run --stack-size 16384 $P" \
    "heap-size 16M=$G run --heap-size 16777216 $P" \
    "threads 132=$G run --threads 132 $P" \
    "all four=$G run --call-stack-size 4096 --stack-size 16384 --heap-size 16777216 --threads 132 $P"
