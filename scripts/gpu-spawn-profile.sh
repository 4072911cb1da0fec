#!/usr/bin/env bash
# Where a std spawn+join's time goes, and what a register cap does to it, on
# an NVIDIA GPU (no Rust needed there):
#   bash scripts/gpu-spawn-profile.sh [GPURUN] [PTX]
# The PTX is examples/gpu-checks' spawn-profile, built with
#   gpurun build examples/gpu-checks --arch sm_90 --bin spawn-profile --release
# It is compiled with ptxas at several register caps; for each cap the script
# prints the registers per lane, the resident warps gpurun launches, and the
# program's profile lines.
set -u
G=${1:-gpu-bundle/gpurun}
PTX=${2:-gpu-bundle/profile/spawn-profile.ptx}
ARCH=${ARCH:-sm_90}
W=${BENCH_WORK:-/tmp/spawn-profile}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
# The linker caps registers with a .maxnreg directive (which ptxas obeys over
# -maxrregcount): take it out, so each cap below is the one measured.
sed "/^\.maxnreg/d" "$PTX" > "$W/uncapped.ptx"
for cap in ${CAPS:-0 128 64 40 32}; do
    out=$W/cap$cap.cubin
    if [ "$cap" = 0 ]; then flag=; else flag="-maxrregcount=$cap"; fi
    t0=$(date +%s)
    timeout 300 ptxas -arch="$ARCH" -O3 $flag "$W/uncapped.ptx" -o "$out" || { echo "ptxas failed (cap $cap)"; continue; }
    echo "== register cap ${cap/#0/none}: ptxas $(( $(date +%s) - t0 )) s; $(cuobjdump -res-usage "$out" 2>/dev/null | grep -A1 '__gpu_start' | grep -o 'REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*' | tr '\n' ' ')"
    timeout 120 "$G" run --json "$out" >"$W/cap$cap.out" 2>"$W/cap$cap.err"; echo "   exit $?"
    grep "^profile" "$W/cap$cap.out"; tail -n 1 "$W/cap$cap.out" | grep -o "\"launch\":{[^}]*}"; tail -n 3 "$W/cap$cap.err"
done
