#!/usr/bin/env bash
# gpurun on a real NVIDIA GPU with hand-written PTX kernels that speak the
# launch/ring protocol directly (no toolchain, no runtime): launch sizing,
# co-residency of every warp, output, exit codes, faults, timeouts, errors.
#   bash launcher/gpu-check/check.sh [PATH_TO_GPURUN]
# Ends with "N passed, M failed".
set -u
D=$(cd "$(dirname "$0")" && pwd)
G=${1:-$D/../../target/release/gpurun}
T=$(mktemp -d)
pass=0; fail=0
check() { if eval "$2"; then echo "  PASS: $1"; pass=$((pass+1)); else echo "  FAIL: $1"; fail=$((fail+1)); fi; }
run() { echo "== gpurun $*"; timeout 120 "$G" "$@" >"$T/out" 2>"$T/err"; rc=$?; sed 's/^/   out| /' "$T/out" | head -3; sed 's/^/   err| /' "$T/err" | tail -6; }

run devices;                                    check "devices lists a GPU" '[ $rc = 0 ]'
run run -v "$D/modes.ptx";                      check "hello, exit 7" '[ $rc = 7 ] && grep -qx "hello from ptx" $T/out'
run run --threads 10 --json "$D/modes.ptx";     check "--threads 10 in the JSON status" '[ $rc = 7 ] && tail -1 $T/err | grep -q "\"num_threads\":10"'
run run --threads 1000000 "$D/modes.ptx";       check "too many threads: usage error" '[ $rc = 2 ]'
run run "$D/modes.ptx" fault;                   check "fault: exit 5, output kept" '[ $rc = 5 ] && grep -qx "hello from ptx" $T/out && grep -q ILLEGAL_ADDRESS $T/err'
run run --timeout 3 "$D/modes.ptx" hang x;      check "timeout: 124, names the thread" '[ $rc = 124 ] && grep -q "\"ptx-main\": sleeping" $T/err'
run run "$D/all-warps.ptx";                     check "every warp co-resident and printed" '[ $rc = 0 ] && [ $(grep -cx "line ok" $T/out) -gt 1000 ]'
run run --ring-slots 4 --threads 512 "$D/all-warps.ptx"; check "backpressure (4 slots)" '[ $rc = 0 ] && [ $(grep -cx "line ok" $T/out) = 512 ]'
sed 's/^\.version .*/.version 9.9/' "$D/modes.ptx" > "$T/future.ptx"
run run "$T/future.ptx";                        check "PTX too new: exit 4" '[ $rc = 4 ] && grep -q "needs a newer driver" $T/err'
sed 's/__gpu_start/not_the_entry/' "$D/modes.ptx" > "$T/noentry.ptx"
run run "$T/noentry.ptx";                       check "no kernel entry: exit 4" '[ $rc = 4 ]'
run run --stack-size 1G "$D/modes.ptx";         check "stack too large: exit 2" '[ $rc = 2 ]'
echo "gpu-check: $pass passed, $fail failed"
rm -rf "$T"
[ $fail = 0 ]
