#!/usr/bin/env bash
# ptxas's time on each part of a split module, for fitting the cost model
# that balances `gpurun run`'s parts (gpu-toolchain/src/ptx_parts.rs):
#   gpurun-dev ptx-split PROGRAM.ptx --out DIR          # one function per part
#   PTXAS=ptxas JOBS=16 xtask/probes/ptxas-costs.sh DIR > costs.tsv
# Writes one line per part: file, bytes, ms (wall, JOBS compiles at a time,
# as `gpurun run` runs them), exit status. REGS: the kernel's register cap
# (`ptx-split` prints it), passed as --device-function-maxrregcount.
set -u
dir=$1
PTXAS=${PTXAS:-ptxas}
JOBS=${JOBS:-$(nproc)}
REGS=${REGS:-64}
ARCH=${ARCH:-sm_90}
export PTXAS REGS ARCH
one() {
    local f=$1 start end rc
    start=$(date +%s%N)
    "$PTXAS" -c -arch="$ARCH" --device-function-maxrregcount "$REGS" -o "${f%.ptx}.o" "$f" 2> "${f%.ptx}.log"
    rc=$?
    end=$(date +%s%N)
    rm -f "${f%.ptx}.o"
    printf '%s\t%s\t%s\t%s\n' "$(basename "$f")" "$(stat -c %s "$f")" $(( (end - start) / 1000000 )) "$rc"
}
export -f one
printf 'file\tbytes\tms\trc\n'
ls "$dir"/*.ptx | xargs -P "$JOBS" -I{} bash -c 'one {}'
