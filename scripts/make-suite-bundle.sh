#!/usr/bin/env bash
# A real crate's own test suite under `cargo test` on the GPU: crossbeam-channel
# 0.5.17's 14 test harnesses (391 #[test]s), built here, run on a GPU machine
# without Rust by scripts/gpu-suite.sh. Writes gpu-bundle/suite/ (git-ignored):
#   gpurun                  the launcher
#   gpu/<test>.ptx.gz       each harness built for ARCH (cargo test --no-run), gzipped
#   host/<test>.gz          the same harnesses built for this host (the CPU time), gzipped
#   host.json               this machine's `cargo test --release --tests` wall time
#                           (build excluded), a bench-results row
#   COMMIT, CRATE           the commit built and the crate's name-version
#   Cargo.lock              the versions cargo resolved (the crate ships none)
# and gpu-bundle/crossbeam-select_macro-ARCH.ptx for the acceptance suite.
# Usage: scripts/make-suite-bundle.sh [ARCH]   (default sm_90)
# Env: SUITE_WORK (default $TMPDIR/crate-suite, outside this workspace): where the
# crate is fetched and built.
# The crate comes from crates.io through cargo itself (scripts/crate-source.sh),
# so a clean machine gets the same source. Our edit to its manifest is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
arch=${1:-sm_90}
crate=crossbeam-channel
version=0.5.17
work=${SUITE_WORK:-${TMPDIR:-/tmp}/crate-suite}
B=$root/gpu-bundle/suite

cargo build --quiet --release --bin gpurun
G=$root/target/release/gpurun
$G setup >/dev/null

# 1. The crate's source, as cargo downloads it.
. scripts/crate-source.sh
src=$(crate_source "$crate" "$version" "$work/fetch")
echo "source: $src"

# 2. Two copies: one for the host, one made a GPU crate by `gpurun init`.
#    The manifest edit: getrandom 0.2's custom backend (rand 0.8 needs a getrandom
#    for the GPU; the runtime defines __getrandom_custom; on Linux getrandom uses
#    the OS as before), and no signal-hook (only the stopwatch example uses it).
patch_manifest() {
    python3 - "$1/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
t = re.sub(r'\n\[dev-dependencies\.signal-hook\]\nversion = "[^"]*"\n', '\n', t)
t = re.sub(r'\n\[\[example\]\]\nname = "stopwatch"\npath = "examples/stopwatch.rs"\n', '\n', t)
t += '\n[dev-dependencies.getrandom]\nversion = "0.2"\nfeatures = ["custom"]\n'
open(p, "w").write(t)
PY
}
for side in host gpu; do
    rm -rf "${work:?}/$side"
    cp -r "$src" "$work/$side"
    chmod -R u+w "$work/$side"
    patch_manifest "$work/$side"
done
echo "our edit to $crate-$version's Cargo.toml:"
diff -u "$src/Cargo.toml" "$work/host/Cargo.toml" | sed 1,2d || true
$G init --arch "$arch" "$work/gpu"

# Every harness's path from cargo's own JSON messages: NAME PATH per line.
harnesses() {
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])'
}

rm -rf "$B" && mkdir -p "$B/gpu" "$B/host"
# 3. The GPU: every harness (std itself is built first: minutes the first time).
(cd "$work/gpu" && cargo test --release --tests --no-run --message-format=json) | harnesses > "$work/gpu.list"
while read -r name exe; do gzip -9 -c "$exe" > "$B/gpu/$name.${exe##*.}.gz"; done < "$work/gpu.list"
# The acceptance suite's `crate-tests` checks run one of them from gpu-bundle/
# (scripts/make-gpu-bundle.sh's bundle, which it empties: run that first).
exe=$(awk '$1 == "select_macro" {print $2}' "$work/gpu.list")
cp "$exe" "$root/gpu-bundle/crossbeam-select_macro-$arch.${exe##*.}"
# 4. The host: build, then time the run alone (as the GPU side is timed).
(cd "$work/host" && cargo test --release --tests --no-run --message-format=json 2>/dev/null) | harnesses > "$work/host.list"
t0=$(date +%s.%N)
(cd "$work/host" && cargo test --release --tests) > "$work/host.log" 2>&1 || echo "host: cargo test failed (see $work/host.log)"
host_s=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}")
while read -r name exe; do gzip -9 -c "$exe" > "$B/host/$name.gz"; done < "$work/host.list"

[ "$(wc -l < "$work/gpu.list")" = "$(wc -l < "$work/host.list")" ] || { echo "the GPU build made $(wc -l < "$work/gpu.list") harnesses, the host's $(wc -l < "$work/host.list")" >&2; exit 1; }

cp "$G" "$B/"
git -C "$root" rev-parse --short=12 HEAD > "$B/COMMIT"
echo "$crate-$version" > "$B/CRATE"
cp "$work/gpu/Cargo.lock" "$B/"
counts=$(awk '/^test result:/ {p+=$4; f+=$6; i+=$8} END {printf "%d %d %d", p, f, i}' "$work/host.log")
read -r passed failed ignored <<< "$counts"
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
python3 - "$B/host.json" <<PY
import json, sys
row = {"benchmark": "cargo_test", "backend": "cpu", "variant": "$crate-$version",
       "device": "$cpu ($(nproc) threads)", "driver": "Linux $(uname -r)",
       "commit": "$(cat "$B/COMMIT")", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
       "unit": "s", "status": "measured", "value": $host_s,
       "passed": $passed, "failed": $failed, "ignored": $ignored,
       "note": "cargo test --release --tests, build excluded, on the machine that built the bundle"}
json.dump([row], open(sys.argv[1], "w"), indent=1)
PY
echo "host: $passed passed, $failed failed, $ignored ignored in $host_s s"
du -sh "$B"
