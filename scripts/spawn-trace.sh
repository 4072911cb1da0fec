#!/usr/bin/env bash
# Where a std spawn+join's time goes, phase by phase: builds the commit
# checked out here with timestamp probes in std's spawn path and the runtime
# (xtask/spawn-trace/probes.diff, applied in a throwaway worktree), each
# program twice, under the GPU targets' default `panic = "unwind"` and under
# `CARGO_PROFILE_RELEASE_PANIC=abort`, and writes to OUT_DIR (default
# gpu-bundle/trace):
#   trace-spawn.ptx, trace-spawn-abort.ptx  2000 spawn+join of `|| ()`: each
#       phase's mean, p10, p50, p90 (the spawning side split finely)
#   prim-costs.ptx, prim-costs-abort.ptx    per-operation costs (TLS, Box,
#       Arc, fences, yield, Mutex)
#   gpurun                                  the launcher they were built with
# Run them on a GPU machine in one call:
#   cd OUT_DIR && ./gpurun run trace-spawn.ptx && ./gpurun run trace-spawn-abort.ptx
# ARCH=gfx1100 (or another gfx*) writes .elf files instead, for
# `gpurun run --emulate gfx1100 X.elf`.
# The throwaway worktree is built with this checkout's gpurun
# (target/release/gpurun, built here if needed; the probes do not touch the
# launcher) and GPURUN_REPO pointing at the worktree, so std is made from
# the probed sources there (the first build there makes std, ~2 min per
# panic strategy). KEEP_WT=1 leaves the worktree (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=$(realpath -m "${1:-gpu-bundle/trace}")
ARCH=${ARCH:-sm_90}
case $ARCH in sm_*) ext=ptx;; *) ext=elf;; esac
REPO=$PWD
WT=$(mktemp -d /tmp/spawn-trace.XXXXXX)
if [ "${KEEP_WT:-0}" = 1 ]; then
    trap 'echo "spawn-trace: worktree left at $WT" >&2' EXIT
else
    trap 'git -C "$REPO" worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT
fi
git worktree add -q --detach "$WT" HEAD
git -C "$WT" apply --whitespace=nowarn "$REPO/xtask/spawn-trace/probes.diff"
cargo build --quiet --release -p launcher --bin gpurun
G=$REPO/target/release/gpurun
mkdir -p "$OUT_DIR"
for variant in unwind abort; do
    for bin in trace-spawn prim-costs; do
        if [ "$variant" = abort ]; then
            setting=CARGO_PROFILE_RELEASE_PANIC=abort suffix=-abort
        else
            setting=CARGO_PROFILE_RELEASE_PANIC=unwind suffix=
        fi
        # The profile's panic strategy may not change cargo's fingerprint of
        # the program: touch the source so it is linked again each time.
        touch "$WT/examples/gpu-checks/src/bin/$bin.rs"
        obj=$(cd "$WT" && env GPURUN_REPO="$WT" "$setting" "$G" build examples/gpu-checks \
            --arch "$ARCH" --bin "$bin" --release | tail -n 1)
        cp "$obj" "$OUT_DIR/$bin$suffix.$ext"
        echo "spawn-trace: $OUT_DIR/$bin$suffix.$ext"
    done
done
cp "$G" "$OUT_DIR/gpurun"
git rev-parse --short=12 HEAD > "$OUT_DIR/COMMIT"
