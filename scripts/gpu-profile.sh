#!/usr/bin/env bash
# Nsight Compute on one program's kernel, on the GPU machine: warp-stall
# sampling and per-instruction execution counts, by Rust source line.
#   make the bundle here (a program built with line tables, and the std
#   sources its line info names, at the same absolute paths there):
#     CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
#       gpurun build benches/programs --arch sm_90 --release --bin spawn_join
#     bash scripts/gpu-profile.sh --bundle PTX gpu-bundle/prof
#   then there:
#     bash scripts/gpu-profile.sh gpu-bundle/prof OUTDIR [gpurun run options] [-- program arguments]
# Writes OUTDIR/source.csv.gz (ncu's source page: each source line, then
# its SASS, with samples, stall reasons and instructions executed) and the
# run's output; summarise it with xtask/probes/ncu_source_lines.py.
# ncu replays the kernel (12 passes) and runs it instrumented: a benchmark
# of 10,000 spawn+joins takes about 2 minutes.
set -u
if [ "${1:-}" = --bundle ]; then
    ptx=$2 B=$3
    mkdir -p "$B"
    cp target/release/gpurun "$B/"
    cp "$ptx" "$B/program.ptx"
    root=$(cd target/gpu-toolchain/lib/rustlib/src/rust && pwd -P)
    grep -o "\"$PWD/target/gpu-toolchain/lib/rustlib/src/rust/[^\"]*\"" "$ptx" | tr -d '"' \
        | sed "s|^$PWD/target/gpu-toolchain/lib/rustlib/src/rust/||" | sort -u > "$B/sources.txt"
    tar czhf "$B/sources.tgz" -C "$root" -T "$B/sources.txt"
    echo "$PWD" > "$B/ROOT"
    echo "bundle in $B: $(wc -l < "$B/sources.txt") std source files"
    exit 0
fi
B=$1 O=$2; shift 2
opts=() args=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
[ $# -gt 0 ] && args=("$@")
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$O"
# The line info names the build machine's paths: put the sources there.
src=$(cat "$B/ROOT")/target/gpu-toolchain/lib/rustlib/src/rust
mkdir -p "$src" && tar xzf "$B/sources.tgz" -C "$src"
export GPURUN_CACHE_DIR=/tmp/gpu-profile-cache
"$B/gpurun" run "${opts[@]}" "$B/program.ptx" "${args[@]}" > "$O/plain.out" 2> "$O/plain.err"
timeout 500 ncu --clock-control none --target-processes all --launch-count 1 \
    --section WarpStateStats --section SourceCounters --warp-sampling-interval 0 \
    -o /tmp/gpu-profile -f "$B/gpurun" run "${opts[@]}" "$B/program.ptx" "${args[@]}" > "$O/ncu-run.log" 2>&1
echo "ncu exit $?"
tail -n 3 "$O/ncu-run.log"
ncu -i /tmp/gpu-profile.ncu-rep --page source --print-source cuda,sass --csv 2> "$O/source.err" | gzip > "$O/source.csv.gz"
ncu -i /tmp/gpu-profile.ncu-rep --page details > "$O/details.txt" 2>&1
