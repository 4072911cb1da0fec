#!/usr/bin/env bash
# Builds what scripts/gpu-load.sh measures, in gpu-bundle/load/ (git-ignored):
#   gpurun, COMMIT
#   NAME.ptx.gz          hello-threads, real-crates and std-coverage for ARCH
#   NAME.expected        the host run's stdout (where the program runs on the host)
#   before/NAME.ptx.gz   with BASE=/path/to/another/checkout: the same programs
#                        built by that checkout's gpurun (a same-run A/B of size,
#                        ptxas time and load time)
# Also writes gpu-bundle/load/build.json: each program's PTX bytes and build
# time (cold: the arch's target dir emptied first) for each checkout, and
# real-crates' rebuild time after main.rs is touched (with one llc and split).
# Usage: [BASE=DIR] scripts/make-load-bundle.sh [ARCH]   (default sm_90)
# Run it after scripts/make-gpu-bundle.sh, which empties gpu-bundle/.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-sm_90}
# real-crates first: its build time is the cold one (std included).
programs=(real-crates hello-threads std-coverage)
cargo build --release -p launcher --bin gpurun
B=gpu-bundle/load
rm -rf "$B" && mkdir -p "$B"
cp target/release/gpurun "$B/"
c=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || c="$c-dirty"
echo "$c" > "$B/COMMIT"
rows=()
# build REPO VARIANT_DIR: each program, cold std first (the first program).
build() {
    local repo=$1 dest=$2 variant=$3
    mkdir -p "$dest"
    (cd "$repo" && cargo build --release -p launcher --bin gpurun >/dev/null 2>&1 && target/release/gpurun setup >/dev/null)
    rm -rf "$repo/target/gpu-build/$arch" "$repo"/examples/*/target/gpu/"$arch"
    for p in "${programs[@]}"; do
        [ -d "$repo/examples/$p" ] || cp -r "examples/$p" "$repo/examples/$p"
        local t0=$(date +%s.%N)
        obj=$("$repo/target/release/gpurun" build "$repo/examples/$p" --arch "$arch" --release | tail -n 1)
        local s=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
        gzip -1 -c "$obj" > "$dest/$p.ptx.gz"
        rows+=("{\"benchmark\":\"build\",\"variant\":\"$variant\",\"program\":\"$p\",\"arch\":\"$arch\",\"seconds\":$s,\"ptx_bytes\":$(stat -c %s "$obj"),\"commit\":\"$(cd "$repo" && git rev-parse --short=12 HEAD)\",\"date\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"host\":\"$(nproc) cores\"}")
        echo "built $variant/$p for $arch in $s s: $(stat -c %s "$obj") bytes"
    done
}
build "$PWD" "$B" default
# Rebuild after editing main.rs (the edit-compile loop), with gpu-ld's
# llc split (default) and with one llc (GPU_LD_JOBS=1), alternating.
for round in 1 2; do
    for jobs in default 1; do
        touch examples/real-crates/src/main.rs
        t0=$(date +%s.%N)
        if [ "$jobs" = 1 ]; then v="one llc (GPU_LD_JOBS=1)"; GPU_LD_JOBS=1 target/release/gpurun build examples/real-crates --arch "$arch" --release >/dev/null
        else v=default; target/release/gpurun build examples/real-crates --arch "$arch" --release >/dev/null; fi
        s=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
        rows+=("{\"benchmark\":\"rebuild\",\"variant\":\"$v\",\"program\":\"real-crates\",\"arch\":\"$arch\",\"seconds\":$s,\"round\":$round,\"commit\":\"$c\",\"date\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"host\":\"$(nproc) cores\"}")
        echo "rebuilt real-crates ($v, round $round) in $s s"
    done
done
if [ -n "${BASE:-}" ]; then
    build "$BASE" "$B/before" before
fi
for p in hello-threads real-crates; do
    cargo run --quiet --release --manifest-path "examples/$p/Cargo.toml" > "$B/$p.expected"
done
(IFS=,; echo "[${rows[*]}]") | python3 -m json.tool > "$B/build.json"
du -sh "$B"
