#!/usr/bin/env bash
# One device call: the load/size measurements, the end-to-end suite and a
# link A/B of a few benchmark rows, from bundles carried as
#   gpu-bundle/e2e.tgz (scripts/make-gpu-bundle.sh, tarred), gpu-bundle/load
#   (scripts/make-load-bundle.sh), gpu-bundle/bench (programs per variant).
# Results under $OUT: load/, e2e.log, ab/summary.txt.
set -u
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
tar xzf gpu-bundle/e2e.tgz
cp gpu-bundle/gpurun gpu-bundle/load/gpurun
SKIP_WHOLE=1 timeout 200 bash scripts/gpu-load.sh gpu-bundle/load "$OUT/load" > "$OUT/load.log" 2>&1
tail -n 30 "$OUT/load.log"
timeout 190 gpu-bundle/gpurun-dev acceptance gpu-bundle --arch sm_90 --logs /tmp/e2e-logs > "$OUT/e2e.log" 2>&1
grep -E "FAIL|^acceptance: [0-9]" "$OUT/e2e.log"
timeout 170 bash scripts/gpu-link-ab.sh gpu-bundle/bench "$OUT/ab" ${AB_IDS:-} > "$OUT/ab.log" 2>&1
cat "$OUT/ab/summary.txt" 2>/dev/null || tail -n 20 "$OUT/ab.log"
