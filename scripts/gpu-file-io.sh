#!/usr/bin/env bash
# File throughput from a GPU thread against the host, on a GPU machine, from
# the bundle of scripts/make-gpu-bundle.sh:
#   bash scripts/gpu-file-io.sh [BUNDLE_DIR] [RESULTS_DIR]
# Runs examples/gpu-checks' file-throughput (MIB MiB, default 64, written
# and read back in 1 MiB calls) on the GPU (std::fs through host calls; a
# first run compiles the PTX), the same program built for the host CPU, and
# the host's `cp` of a file of that size (with `sync`), back to back; writes
# RESULTS_DIR/file-io.json (device, driver, commit, date, MB/s of each).
set -u
B=${1:-gpu-bundle}
RES=${2:-/tmp/file-io}
MIB=${MIB:-64}
ARCH=${ARCH:-sm_90}
mkdir -p "$RES"
W=$(mktemp -d)
mbs() { awk "BEGIN{printf \"%.1f\", $MIB * 1.048576 / ($2 - $1)}"; }
"$B/gpurun" run "$B/file-throughput-$ARCH.ptx" -- "$W/warm.bin" 1 > /dev/null || echo "warm-up run failed"
gpu=$("$B/gpurun" run "$B/file-throughput-$ARCH.ptx" -- "$W/gpu.bin" "$MIB" | tail -n 1)
host=$("$B/file-throughput-host" "$W/host.bin" "$MIB" | tail -n 1)
head -c $((MIB << 20)) /dev/urandom > "$W/src.bin"
sync
t0=$(date +%s.%N); cp "$W/src.bin" "$W/dst.bin"; sync; t1=$(date +%s.%N)
cp_mbs=$(mbs "$t0" "$t1")
echo "gpu:  $gpu"
echo "host: $host"
echo "cp:   $cp_mbs MB/s ($MIB MiB, with sync)"
python3 - "$RES/file-io.json" "$gpu" "$host" "$cp_mbs" "$MIB" "$(cat "$B/COMMIT" 2>/dev/null || echo unknown)" <<'PY'
import json, re, subprocess, sys, datetime
out, gpu, host, cp, mib, commit = sys.argv[1:]
def rates(line):
    m = re.search(r"write ([0-9.]+) MB/s, read ([0-9.]+) MB/s, equal (\w+)", line)
    return {"write_mb_s": float(m[1]), "read_mb_s": float(m[2]), "equal": m[3] == "true"} if m else {"error": line}
smi = lambda f: subprocess.run(["nvidia-smi", f"--query-gpu={f}", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()[:1]
json.dump({
    "benchmark": "file_io", "mib": int(mib), "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "device": (smi("name") or ["unknown"])[0], "driver": (smi("driver_version") or ["unknown"])[0],
    "gpu": rates(gpu), "host_program": rates(host), "host_cp_mb_s": float(cp),
}, open(out, "w"), indent=1)
PY
rm -rf "$W"
