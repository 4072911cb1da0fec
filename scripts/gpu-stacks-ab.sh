#!/usr/bin/env bash
# Shared stacks against private stacks, on a GPU machine, from a bench bundle
# made with AB_PRIVATE_STACKS=1 scripts/make-bench-bundle.sh:
#   bash scripts/gpu-stacks-ab.sh [BUNDLE_DIR] [RESULTS_DIR] [ID...]
# For each benchmark ID (default: the latency and throughput rows a frame
# move can change), runs the shared-stack program (the default link) and the
# private-stack one (GPU_NVPTX_PRIVATE_STACKS=1) back to back, alternating,
# each into its own results folder; the JSON files are compared afterwards.
set -u
B=${1:-gpu-bundle/bench}
RES=${2:-${OUT:-.}/stacks-ab}
shift $(( $# < 2 ? $# : 2 ))
ARCH=${ARCH:-sm_90}
ids=("$@")
[ ${#ids[@]} -gt 0 ] || ids=(spawn_join wake_latency mutex_uncontended mutex_handoff channel_1p1c yield barrier println host_call heap reduction)
WORK=${BENCH_WORK:-/tmp/gpu-stacks-ab}
rm -rf "$WORK" && mkdir -p "$WORK/shared" "$WORK/private" "$RES/shared" "$RES/private"
export PATH=$PATH:/usr/local/cuda/bin
for variant in shared private; do
    src=$B; [ $variant = private ] && src=$B/private
    for id in "${ids[@]}"; do
        gunzip -c "$src/$id-$ARCH.ptx.gz" > "$WORK/$variant/$id-$ARCH.ptx"
        ( timeout 240 ptxas -arch="$ARCH" -O3 "$WORK/$variant/$id-$ARCH.ptx" -o "$WORK/$variant/$id-$ARCH.cubin" \
            >"$WORK/$variant/$id.ptxas.log" 2>&1 || rm -f "$WORK/$variant/$id-$ARCH.cubin" ) &
    done
done
wait
export GPURUN_COMMIT=${GPURUN_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
for id in "${ids[@]}"; do
    for variant in shared private; do
        echo "== $id ($variant stacks)"
        timeout 120 "$B/gpurun" bench --only "$id" --programs "$WORK/$variant" --out "$RES/$variant" --timeout 60 \
            2>&1 | tail -n 3
    done
done
ls -l "$RES"/*
