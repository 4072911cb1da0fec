#!/usr/bin/env bash
# A few rows of the benchmark matrix, re-run on a GPU machine from a bench
# bundle (BENCH_IDS="..." scripts/make-bench-bundle.sh), to compare with the
# committed matrix:
#   bash scripts/gpu-rows.sh BUNDLE_DIR RESULTS_DIR ID...
# The first ID goes through scripts/gpu-bench.sh (which compiles the CUDA
# baselines and the PTX once); the others reuse what it compiled. One JSON
# file per ID in RESULTS_DIR (not rendered into the matrix).
set -u
B=$1 RES=$2
shift 2
export BENCH_WORK=${BENCH_WORK:-/tmp/gpu-rows}
mkdir -p "$RES"
first=$1
shift
bash scripts/gpu-bench.sh "$B" "$RES/$first" --only "$first" 2>&1 | tail -n 25
export GPURUN_COMMIT=${GPURUN_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
for id in "$@"; do
    echo "== $id"
    timeout 200 "$B/gpurun-dev" bench --programs "$BENCH_WORK/programs" --native "$BENCH_WORK/native" --cpu "$B/cpu" \
        --out "$RES/$id" --timeout 60 --only "$id" 2>&1 | tail -n 12
done
