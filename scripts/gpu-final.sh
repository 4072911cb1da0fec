#!/usr/bin/env bash
# The acceptance suite at a commit, plus real-crates' load times (cold cubin
# cache, then cached), from gpu-bundle/e2e.tgz (scripts/make-gpu-bundle.sh,
# tarred), and the link A/B of scripts/gpu-link-ab.sh if gpu-bundle/bench is
# there. Results under $OUT: e2e.log, load.log, ab/.
set -u
OUT=${OUT:-/tmp/gpu-final}
mkdir -p "$OUT"
tar xzf gpu-bundle/e2e.tgz
G=gpu-bundle/gpurun
{
    for n in 1 2; do
        t0=$(date +%s.%N)
        timeout 120 "$G" run gpu-bundle/real-crates-sm_90.ptx > /tmp/rc.out 2> /tmp/rc.err
        rc=$?
        echo "real-crates run $n: exit $rc, $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"
        grep -v "^gpurun: compiling.*: [0-9]" /tmp/rc.err | tail -n 3
        cmp -s gpu-bundle/real-crates.expected /tmp/rc.out && echo "  output equals the host's" || echo "  OUTPUT DIFFERS"
    done
} 2>&1 | tee "$OUT/load.log"
timeout 400 gpu-bundle/gpurun-dev acceptance gpu-bundle --arch sm_90 --logs /tmp/e2e-logs > "$OUT/e2e.log" 2>&1
grep -E "FAIL|^acceptance: [0-9]" "$OUT/e2e.log"
if [ -d gpu-bundle/bench ]; then
    timeout 240 bash scripts/gpu-link-ab.sh gpu-bundle/bench "$OUT/ab" > "$OUT/ab.log" 2>&1
    cat "$OUT/ab/summary.txt" 2>/dev/null || tail -n 20 "$OUT/ab.log"
fi
