#!/usr/bin/env bash
# A real crate's test suite on a CUDA machine without Rust, from the bundle
# scripts/make-suite-bundle.sh made (gpu-bundle/suite):
#   bash scripts/gpu-suite.sh [BUNDLE_DIR] [RESULTS_DIR]
# 1. compiles every harness's PTX once (`gpurun run H -- --list`: ptxas, as
#    the host's build, is not in the suite's time), then
# 2. runs the suite as `cargo test --release --tests` would: each harness once,
#    one after another, `gpurun run H` (one launch per harness: libtest's
#    threads run its tests side by side, default --test-threads), timed whole;
# 3. runs the same host-built harnesses on this machine's CPU, timed the same way;
# 4. runs one harness with --test-threads 1 and with --test-threads 64.
# Env: SUITE_COMPILE_ONLY=1 stops after 1 (the cubins stay in SUITE_CUBINS,
# default /tmp/gpu-suite-cubins, for the next run); SUITE_TIMEOUT (300 s) per run.
# Writes RESULTS_DIR/cargo_test.json (bench-results rows: `cargo_test`, unit s,
# passed/failed/ignored from libtest's reports, the GPU/host ratio) and each
# run's log. Exit 1 if any harness failed or a count differs from the host's.
set -u
B=${1:-gpu-bundle/suite}
RES=${2:-${OUT:-.}/suite-results}
WORK=${SUITE_WORK:-/tmp/gpu-suite}
LIMIT=${SUITE_TIMEOUT:-300}   # seconds, per harness run (gpurun --timeout: a hang reports each thread)
export PATH=$PATH:/usr/local/cuda/bin   # ptxas, where the CUDA toolkit is
rm -rf "$WORK" && mkdir -p "$WORK/ptx" "$RES/logs"
G=$(realpath "$B/gpurun")
. "$(dirname "$0")/gpu-facts.sh"
# The cubins outlive WORK: `SUITE_COMPILE_ONLY=1` (step 1 alone) in one call,
# the rest in the next, where one call may not last for both.
export GPURUN_CACHE_DIR=${SUITE_CUBINS:-/tmp/gpu-suite-cubins}
crate=$(cat "$B/CRATE")
names=$(cd "$B/gpu" && ls | sed 's/\.ptx\.gz$//' | sort)
mkdir -p "$WORK/host"
for n in $names; do
    gunzip -c "$B/gpu/$n.ptx.gz" > "$WORK/ptx/$n.ptx"
    gunzip -c "$B/host/$n.gz" > "$WORK/host/$n" && chmod +x "$WORK/host/$n"
done

# 1. ptxas: one harness at a time (a launch takes the GPU's free memory for
#    its heap; gpurun compiles a PTX's parts on every core).
t=$(now)
for n in $names; do
    "$G" run "$WORK/ptx/$n.ptx" -- --list > "$RES/logs/$n.list" 2>&1 || echo "listing $n failed: $RES/logs/$n.list"
done
compile_s=$(since "$t")
echo "compiled $(echo $names | wc -w) harnesses in $compile_s s"
[ -n "${SUITE_COMPILE_ONLY:-}" ] && exit 0

# run SIDE LOG_SUFFIX CMD...: every harness in turn; prints the seconds.
run_suite() {
    local side=$1 sfx=$2; shift 2
    local t0 rc
    t0=$(now)
    for n in $names; do
        if [ "$side" = gpu ]; then
            timeout $((LIMIT + 30)) "$G" run --timeout "$LIMIT" "$WORK/ptx/$n.ptx" -- "$@" > "$RES/logs/$n.$sfx.log" 2>&1
        else
            timeout "$LIMIT" "$WORK/host/$n" "$@" > "$RES/logs/$n.$sfx.log" 2>&1
        fi
        rc=$?
        echo "$n $rc" >> "$WORK/$sfx.rc"
    done
    since "$t0"
}
# counts SFX: "passed failed ignored harnesses_not_ok" from libtest's summaries.
counts() {
    local p f i bad
    read -r p f i <<< "$(cat "$RES"/logs/*."$1".log | awk '/^test result:/ {p+=$4; f+=$6; i+=$8} END {printf "%d %d %d", p, f, i}')"
    bad=$(awk '$2 != 0' "$WORK/$1.rc" | wc -l)
    echo "$p $f $i $bad"
}

# 2 and 3.
gpu_s=$(run_suite gpu gpu)
read -r gp gf gi gbad <<< "$(counts gpu)"
host_s=$(run_suite host host)
read -r hp hf hi hbad <<< "$(counts host)"
echo "GPU:  $gp passed, $gf failed, $gi ignored, $gbad harnesses not ok, $gpu_s s"
echo "host: $hp passed, $hf failed, $hi ignored, $hbad harnesses not ok, $host_s s"
awk '$2 != 0 {print "  not ok on the GPU: " $1 " (exit " $2 ")"}' "$WORK/gpu.rc"

# 4. --test-threads 1 and 64 on one harness.
one=${SUITE_THREADS_HARNESS:-ready}
threads_rows=""
for tt in 1 64; do
    t=$(now)
    timeout $((LIMIT + 30)) "$G" run --timeout "$LIMIT" "$WORK/ptx/$one.ptx" -- --test-threads "$tt" > "$RES/logs/$one.threads$tt.log" 2>&1
    rc=$?; s=$(since "$t")
    summary=$(grep '^test result:' "$RES/logs/$one.threads$tt.log" | tail -n 1)
    echo "$one --test-threads $tt: exit $rc, $s s: $summary"
    threads_rows+=$(printf ',{"test_threads":%d,"harness":"%s","exit":%d,"seconds":%s,"summary":"%s"}' "$tt" "$one" "$rc" "$s" "$summary")
done

ratio=$(awk "BEGIN{printf \"%.2f\", $gpu_s / $host_s}")
# Both rows are `measured`: failures are their `failed` and `harnesses_not_ok`
# (the matrix's goal checks them).
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
cat > "$RES/cargo_test.json" <<EOF
[
 {"benchmark":"cargo_test","backend":"nvidia","variant":"$crate","device":"$device","driver":"$driver","commit":"$commit","date":"$date","unit":"s","status":"measured","value":$gpu_s,"host_seconds":$host_s,"ratio_gpu_host":$ratio,"passed":$gp,"failed":$gf,"ignored":$gi,"harnesses":$(echo $names | wc -w),"harnesses_not_ok":$gbad,"ptxas_seconds":$compile_s,"note":"each harness once, one launch each, libtest's default --test-threads; ptxas (cached before) not counted","test_threads_checks":[${threads_rows#,}]},
 {"benchmark":"cargo_test","backend":"cpu","variant":"$crate","device":"$cpu ($(nproc) threads)","driver":"Linux $(uname -r)","commit":"$commit","date":"$date","unit":"s","status":"measured","value":$host_s,"passed":$hp,"failed":$hf,"ignored":$hi,"harnesses_not_ok":$hbad,"note":"the same harnesses built for the host, run the same way"}
]
EOF
echo "cargo_test: GPU $gpu_s s / host $host_s s = ${ratio}x (goal <= 1.5x); rows in $RES/cargo_test.json"
[ "$gbad" = 0 ] && [ "$gf" = 0 ] && [ "$gp" = "$hp" ] && [ "$gi" = "$hi" ]
