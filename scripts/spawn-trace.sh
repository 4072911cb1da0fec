#!/usr/bin/env bash
# Where a std spawn+join's time goes, phase by phase: builds the commit
# checked out here with timestamp probes in std's spawn path and the runtime
# (xtask/spawn-trace/probes.diff, applied in a throwaway worktree), and writes
# two PTX files to OUT_DIR (default gpu-bundle/trace):
#   trace-spawn.ptx  2000 spawn+join of `|| ()`, mean and p50 of each phase
#   prim-costs.ptx   per-operation costs (TLS get/set, Box, Arc, fences, yield)
# Run them on a GPU machine with `gpurun run X.ptx` (carry OUT_DIR and a
# gpurun). For an A/B, run this at both commits and compare in one GPU call.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=$(realpath -m "${1:-gpu-bundle/trace}")
ARCH=${ARCH:-sm_90}
WT=$(mktemp -d /tmp/spawn-trace.XXXXXX)
trap 'git worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT
git worktree add -q --detach "$WT" HEAD
git -C "$WT" apply "$PWD/dev/spawn-trace/probes.diff"
mkdir -p "$OUT_DIR"
for bin in trace-spawn prim-costs; do
    obj=$(cd "$WT" && ./gpurun build examples/gpu-checks --arch "$ARCH" --bin "$bin" --release | tail -n 1)
    cp "$obj" "$OUT_DIR/$bin.ptx"
    echo "spawn-trace: $OUT_DIR/$bin.ptx"
done
cp "$WT/target/release/gpurun" "$OUT_DIR/gpurun"
