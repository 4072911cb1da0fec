#!/usr/bin/env bash
# The GPU end-to-end checks, run on a GPU machine from a bundle made by
# scripts/make-gpu-bundle.sh (no Rust toolchain needed there):
#   bash scripts/gpu-e2e.sh [BUNDLE_DIR] [ARCH]
# Each check prints its command, exit code and what it verified; a failed
# check is counted, and the script ends with "N passed, M failed".
set -u
B=${1:-gpu-bundle}
ARCH=${2:-sm_90}
G="$B/gpurun"
LOG=${OUT:-/tmp}/gpu-e2e
mkdir -p "$LOG"
pass=0; fail=0
ok()  { echo "  PASS: $*"; pass=$((pass+1)); }
bad() { echo "  FAIL: $*"; fail=$((fail+1)); }
# run NAME EXPECTED_RC ARGS... : runs gpurun, keeps stdout/stderr in $LOG/NAME.{out,err}
run() {
    local name=$1 want=$2; shift 2
    echo "== $name: gpurun $*"
    local t0=$(date +%s.%N)
    timeout 180 "$G" "$@" >"$LOG/$name.out" 2>"$LOG/$name.err"
    rc=$?
    local t1=$(date +%s.%N)
    echo "   exit $rc ($(awk "BEGIN{print $t1 - $t0}") s)"
    head -c 1500 "$LOG/$name.out" | head -n 8 | sed 's/^/   out| /'
    tail -n 12 "$LOG/$name.err" | sed 's/^/   err| /'
    if [ "$rc" = "$want" ]; then ok "$name exit code $rc"; else bad "$name exit code $rc, expected $want"; fi
}
# The code object of program NAME: a cubin made beforehand (ptxas) if there
# is one, else the PTX (the driver compiles it at load).
obj() { if [ -e "$B/$1-$ARCH.cubin" ]; then echo "$B/$1-$ARCH.cubin"; else echo "$B/$1-$ARCH.ptx"; fi; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
run devices 0 devices
run hello 0 run "$B/hello-threads-$ARCH.ptx"
run hello-cubin 0 run "$(obj hello-threads)"
grep -qx "sum: 499500, factorial: 121645100408832000" "$LOG/hello.out" && ok "seed demo output" || bad "seed demo output"
if [ -z "${SKIP_STD_COVERAGE:-}" ]; then
    run std-coverage 0 run "$(obj std-coverage)"
else
    echo "== std-coverage: skipped (SKIP_STD_COVERAGE is set)"
fi
run all-threads-print 0 run "$(obj all-threads-print)"
threads=$(sed -n 's/^all-threads-print: \([0-9]*\) threads.*/\1/p' "$LOG/all-threads-print.out")
lines=$(grep -c '^thread [0-9]* line [0-9]*$' "$LOG/all-threads-print.out")
distinct=$(grep '^thread [0-9]* line [0-9]*$' "$LOG/all-threads-print.out" | sort -u | wc -l)
echo "   $threads threads, $lines numbered lines, $distinct distinct"
[ -n "$threads" ] && [ "$lines" = $((threads*100)) ] && [ "$distinct" = "$lines" ] \
    && ok "no line lost or mangled ($lines lines)" || bad "lines lost: $lines of $((${threads:-0}*100))"
run panic 101 run "$(obj panic)"
grep -Eq "thread 'worker-7' (\([0-9]+\) )?panicked at src/bin/panic.rs:[0-9]+:[0-9]+:" "$LOG/panic.err" \
    && grep -q "the worker found nothing to do (0 items)" "$LOG/panic.err" && ok "panic message" || bad "panic message"
run hang 124 run --timeout 5 "$(obj hang)"
grep -q "sleeps-forever" "$LOG/hang.err" && grep -q "waits-for-lock" "$LOG/hang.err" && ok "timeout report names the threads" || bad "timeout report"
run fault 5 run "$(obj fault)"
grep -q "printed before the fault" "$LOG/fault.out" && ok "output before the fault kept" || bad "output before the fault lost"
run exit-code 7 run "$(obj exit-code)"
run maths 0 run "$(obj maths)"
grep -q "^maths: 17 of 17 correct$" "$LOG/maths.out" && ok "f32/f64 maths correct" || bad "maths results"
if [ -e "$B/real-crates-$ARCH.ptx" ]; then
    # rayon, crossbeam-channel, parking_lot, serde_json and regex, unmodified:
    # the GPU's output must be the host's.
    # At the default stacks (rayon's workers and regex's compiler need more
    # than 64K of frames).
    run real-crates 0 run "$(obj real-crates)"
    cmp -s "$B/real-crates.expected" "$LOG/real-crates.out" && ok "real-crates output equals the host's" \
        || { bad "real-crates output differs from the host's"; diff "$B/real-crates.expected" "$LOG/real-crates.out" | head -n 20; }
fi
if [ -e "$B/crate-sweep-$ARCH.ptx" ]; then
    # 40 of the most-downloaded crates, default features (getrandom through
    # the runtime's backend): the GPU's output must be the host's.
    run crate-sweep 0 run "$(obj crate-sweep)"
    cmp -s "$B/crate-sweep.expected" "$LOG/crate-sweep.out" && ok "crate-sweep output equals the host's" \
        || { bad "crate-sweep output differs from the host's"; diff "$B/crate-sweep.expected" "$LOG/crate-sweep.out" | head -n 20; }
fi
run spawn-exhaust 0 run "$(obj spawn-exhaust)"
run spawn-cycles 0 run "$(obj spawn-cycles)" -- 100000
run spawn-cycles-1m 0 run "$(obj spawn-cycles)" -- 1000000
for bin in lanes lanes-misuse; do [ -e "$B/$bin-$ARCH.ptx" ] || continue
    case $bin in lanes) want=0;; *) want=134;; esac
    run $bin $want run "$(obj $bin)"
done
[ -e "$LOG/lanes.out" ] && { grep -q "^lanes: ok" "$LOG/lanes.out" && ok "every lane ran once per call" || bad "lanes output"; }
[ -e "$LOG/lanes-misuse.err" ] && { grep -q "called from lane" "$LOG/lanes-misuse.err" && ok "std call from a lane refused" || bad "lanes-misuse message"; }
if [ -e "$B/scoped-stacks-$ARCH.ptx" ]; then
    run scoped-stacks 0 run "$(obj scoped-stacks)"
    grep -q "^scoped-stacks: ok" "$LOG/scoped-stacks.out" && ok "threads borrow their parent's stack" || bad "scoped-stacks output"
    run scoped-stacks-deep 0 run "$(obj scoped-stacks)" -- 100
    grep -q "^scoped-stacks: ok" "$LOG/scoped-stacks-deep.out" && ok "100-level recursion on a 256 KiB thread stack" || bad "scoped-stacks-deep output"
    run stack-overflow 134 run "$(obj stack-overflow)"
    grep -q "^thread 'deep-recursion' has overflowed its stack$" "$LOG/stack-overflow.err" \
        && ok "stack overflow reported like std" || bad "stack-overflow message"
fi
if [ -e "$B/deep-recursion-$ARCH.ptx" ]; then
    # A Box-linked list hashed and dropped by recursion, at the default
    # settings; past the call stack's depth, std's report (exit 134).
    for depth in 10 100 1000; do
        run deep-recursion-$depth 0 run "$(obj deep-recursion)" -- $depth
        grep -q "^deep-recursion: $depth levels ok" "$LOG/deep-recursion-$depth.out" \
            && ok "$depth levels of recursion at the default stacks" || bad "deep-recursion $depth output"
    done
    run deep-recursion-10000 134 run "$(obj deep-recursion)" -- 10000
    grep -q "^thread 'walker' has overflowed its stack$" "$LOG/deep-recursion-10000.err" \
        && ok "10,000 levels past the default call stack: std's overflow report" || bad "deep-recursion 10000 message"
    run deep-recursion-10000-big 0 run --call-stack-size 256K "$(obj deep-recursion)" -- 10000
    grep -q "^deep-recursion: 10000 levels ok" "$LOG/deep-recursion-10000-big.out" \
        && ok "10,000 levels with --call-stack-size 256K" || bad "deep-recursion 10000 at 256K output"
fi
if [ -e "$B/hello-threads-gfx90a.elf" ]; then
    run wrong-vendor 4 run "$B/hello-threads-gfx90a.elf"
fi
sed 's/^\.version .*/.version 9.9/' "$B/hello-threads-$ARCH.ptx" > "$LOG/future.ptx"
run ptx-too-new 4 run "$LOG/future.ptx"
echo "gpu-e2e: $pass passed, $fail failed"
[ "$fail" = 0 ]
