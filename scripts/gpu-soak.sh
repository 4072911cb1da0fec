#!/usr/bin/env bash
# The soak run, on a GPU machine, from the bundle of scripts/make-gpu-bundle.sh:
#   bash scripts/gpu-soak.sh [BUNDLE_DIR] [RESULTS_DIR]
# Runs examples/gpu-checks' soak for SECONDS (default 300) with every thread
# the GPU gives: each worker mixes spawn/join, channels, a shared lock,
# println, files and the heap. Samples gpurun's resident memory every 5 s
# and checks: exit 0, the program's own accounting ("soak: ok": every message
# received in order, every lock counted, every warp free again), every
# printed line arrived (counted here against the summary's `lines=`), and
# host memory flat (the last sample at most 10 % above the one at a fifth of
# the run). Writes RESULTS_DIR/soak.json (device, driver, commit, date).
# ARCH (default sm_90), EMULATE=ARCH to run on the AMD emulator, GPURUN_OPTS
# more `gpurun run` options, PACE_MS
# (default 50) the pause per iteration.
set -u
B=${1:-gpu-bundle}
RES=${2:-/tmp/soak}
SECONDS_=${SECONDS_RUN:-300}
ARCH=${ARCH:-sm_90}
PACE=${PACE_MS:-50}
mkdir -p "$RES"
W=$(mktemp -d)
obj=$(ls "$B"/soak-"$ARCH".{cubin,ptx,elf} 2>/dev/null | head -n 1)
[ -n "$obj" ] || { echo "gpu-soak: no soak-$ARCH code object in $B" >&2; exit 1; }
emulate=()
[ -n "${EMULATE:-}" ] && emulate=(--emulate "$EMULATE")
"$B/gpurun" run "${emulate[@]}" ${GPURUN_OPTS:-} --timeout $((SECONDS_ + 300)) "$obj" -- "$SECONDS_" "$W" "$PACE" \
    > "$W/stdout" 2> "$W/stderr" &
pid=$!
: > "$RES/soak-rss.csv"
t0=$(date +%s)
while kill -0 "$pid" 2> /dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2> /dev/null)
    [ -n "$rss" ] && echo "$(($(date +%s) - t0)),$rss" >> "$RES/soak-rss.csv"
    sleep 5
done
wait "$pid"
code=$?
lines=$(grep -c '^soak w' "$W/stdout")
summary=$(grep '^soak: ' "$W/stdout" | tail -n 1)
tail -n 20 "$W/stderr" > "$RES/soak-stderr.txt"
echo "$summary"
echo "exit $code, $lines lines counted"
python3 - "$RES/soak.json" "$code" "$lines" "$summary" "$RES/soak-rss.csv" "$SECONDS_" "$PACE" \
    "$(cat "$B/COMMIT" 2>/dev/null || echo unknown)" "${EMULATE:-}" <<'PY'
import json, re, subprocess, sys, datetime
out, code, lines, summary, rss_csv, secs, pace, commit, emulate = sys.argv[1:]
rss = [tuple(map(int, l.split(","))) for l in open(rss_csv) if l.strip()]
m = re.search(r"lines=(\d+)", summary)
claimed = int(m[1]) if m else None
early = next((kb for t, kb in rss if t >= int(secs) // 5), rss[0][1] if rss else None)
last = rss[-1][1] if rss else None
flat = early is not None and last <= early * 1.10
ok = code == "0" and summary.startswith("soak: ok") and claimed == int(lines) and flat
def smi(f):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={f}", "--format=csv,noheader"], capture_output=True, text=True)
        return (r.stdout.strip().splitlines() or ["unknown"])[0]
    except OSError:
        return "unknown"
json.dump({
    "benchmark": "soak", "seconds": int(secs), "pace_ms": int(pace), "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "device": f"emulated {emulate}" if emulate else smi("name"), "driver": "amd-emu" if emulate else smi("driver_version"),
    "exit": int(code), "summary": summary, "lines_counted": int(lines), "lines_claimed": claimed,
    "rss_kib_at_fifth": early, "rss_kib_last": last, "rss_kib_max": max((kb for _, kb in rss), default=None),
    "rss_samples": len(rss), "host_memory_flat": flat, "ok": ok,
}, open(out, "w"), indent=1)
print("gpu-soak:", "PASS" if ok else "FAIL", f"(rss {early} -> {last} KiB)")
sys.exit(0 if ok else 1)
PY
status=$?
rm -rf "$W"
exit $status
