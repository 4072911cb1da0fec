#!/usr/bin/env bash
# On an NVIDIA machine, from the bundle of scripts/make-gpu-bundle.sh: ptxas every
# PTX but std-coverage (its 16 MB outruns ptxas), the end-to-end checks, then
# the spawn profile at register caps 64, 40 and 32 (CAPS="..." to change), and
# what each memory-model scope costs one lane (benches/micro/scope_costs.cu).
# Logs go to $OUT.
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
t0=$(date +%s)
for f in gpu-bundle/*-sm_90.ptx; do
    case $f in *std-coverage*) continue;; esac
    ( timeout 240 ptxas -arch=sm_90 -O3 "$f" -o "${f%.ptx}.cubin" || rm -f "${f%.ptx}.cubin" ) &
done
wait; echo "ptxas: $(( $(date +%s) - t0 )) s"
gpu-bundle/gpurun-dev acceptance gpu-bundle --arch sm_90 --skip std-coverage --logs $OUT/e2e 2>&1 | tee $OUT/e2e.log | tail -n 70
if command -v nvcc >/dev/null; then
    timeout 120 nvcc -O3 -arch=sm_90 -o /tmp/scope_costs benches/micro/scope_costs.cu && timeout 60 /tmp/scope_costs | tee $OUT/scope-costs.log
fi
CAPS="${CAPS:-64 40 32}" timeout 200 bash scripts/gpu-spawn-profile.sh gpu-bundle/gpurun gpu-bundle/profile/spawn-profile.ptx > $OUT/profile.log 2>&1
grep -E "^==|spawn\+join|spawn call|closure|Box|Arc|raw" $OUT/profile.log | head -60
