#!/usr/bin/env bash
# Code size and load time on a CUDA machine, from a bundle made by
# scripts/make-load-bundle.sh (no Rust toolchain needed there):
#   bash scripts/gpu-load.sh [BUNDLE_DIR] [RESULTS_DIR]
# For each PTX in the bundle (NAME.ptx.gz; a variant's under VARIANT/):
#   - ptxas -arch=$ARCH time (bounded by PTXAS_TIMEOUT, default 240 s);
#   - for the default variant: `gpurun run` three ways, each timed from process
#     start to exit: the driver's JIT with its cache off (no ptxas: the
#     launcher's path on a machine without the CUDA toolkit), the first run
#     with ptxas and an empty cubin cache, and the second (cached) run; the
#     program's stdout is kept and compared across the three.
# Writes RESULTS_DIR/load.json (one row per measurement: device, driver,
# commit, date) and prints a table. The bundle's programs must exit 0.
set -u
B=${1:-gpu-bundle/load}
RES=${2:-${OUT:-.}/load-results}
ARCH=${ARCH:-sm_90}
PTXAS_TIMEOUT=${PTXAS_TIMEOUT:-240}
WORK=${LOAD_WORK:-/tmp/gpu-load}
export PATH=$PATH:/usr/local/cuda/bin
rm -rf "$WORK" && mkdir -p "$WORK" "$RES"
G=$B/gpurun
. "$(dirname "$0")/gpu-facts.sh"
rows=$WORK/rows.jsonl
: > "$rows"
row() { # benchmark variant program seconds status [extra json]; load.json is rewritten each time
    printf '{"benchmark":"%s","variant":"%s","program":"%s","seconds":%s,"status":"%s","device":"%s","driver":"%s","commit":"%s","date":"%s","arch":"%s"%s}\n' \
        "$1" "$2" "$3" "$4" "$5" "$device" "$driver" "$commit" "$date" "$ARCH" "${6:-}" >> "$rows"
    python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))' "$rows" > "$RES/load.json"
}

# 1. ptxas on every PTX, all at once (16 cores), each bounded (SKIP_WHOLE=1: not).
for f in $(cd "$B" && find . -name '*.ptx.gz' | sort); do
    v=$(dirname "$f" | sed 's|^\./\?||'); v=${v:-default}; n=$(basename "$f" .ptx.gz)
    mkdir -p "$WORK/$v"
    gunzip -c "$B/$f" > "$WORK/$v/$n.ptx"
    [ -n "${SKIP_WHOLE:-}" ] && continue
    (
        ulimit -v $((48 << 20)) # KB: a runaway ptxas must not take the machine's memory from the others
        t=$(now)
        /usr/bin/time -f "%M" -o "$WORK/$v/$n.rss" timeout "$PTXAS_TIMEOUT" ptxas -arch="$ARCH" -O3 "$WORK/$v/$n.ptx" \
            -o "$WORK/$v/$n.cubin" > "$WORK/$v/$n.ptxas.log" 2>&1
        rc=$?
        s=$(since "$t")
        bytes=$(stat -c %s "$WORK/$v/$n.ptx")
        rss=$(tail -n 1 "$WORK/$v/$n.rss" 2>/dev/null | tr -dc 0-9)
        status=measured
        [ "$rc" = 0 ] || status="not run: ptxas exit $rc after $s s (124 = the ${PTXAS_TIMEOUT} s limit)"
        row ptxas "$v" "$n" "$s" "$status" ",\"ptx_bytes\":$bytes,\"max_rss_kb\":${rss:-0}"
        echo "ptxas $v/$n: exit $rc, $s s, PTX $bytes bytes, max RSS ${rss:-?} KB"
    ) &
done
wait

# 2. gpurun run: JIT (no ptxas, no JIT cache), then ptxas cold, then cached.
export GPURUN_CACHE_DIR=$WORK/cubin-cache
for f in "$WORK"/default/*.ptx; do
    n=$(basename "$f" .ptx)
    args=(); [ -e "$B/$n.args" ] && read -r -a args < "$B/$n.args"
    # The JIT compiles as slowly as whole-program ptxas: skip it where that
    # took over a minute (or, with SKIP_WHOLE, for PTX over 2 MB).
    slow=$(python3 -c 'import json,sys; print(any(r["program"]==sys.argv[2] and r["variant"]=="default" and r["benchmark"]=="ptxas" and r["seconds"]>60 for r in map(json.loads, open(sys.argv[1]))))' "$rows" "$n")
    [ -n "${SKIP_WHOLE:-}" ] && [ "$(stat -c %s "$f")" -gt 2000000 ] && slow=True
    for how in jit ptxas-first cached; do
        if [ "$how" = jit ] && [ "$slow" = True ]; then
            row load jit "$n" 0 "not run: whole-program ptxas takes minutes, the JIT would too"; continue
        fi
        case $how in
            jit) envs=(GPURUN_PTXAS=/nonexistent); flags=(--no-cache);;
            *) envs=(); flags=();;
        esac
        t=$(now)
        env "${envs[@]}" timeout 300 "$G" run "${flags[@]}" "$f" "${args[@]}" > "$WORK/$n.$how.out" 2> "$WORK/$n.$how.err"
        rc=$?
        s=$(since "$t")
        status=measured; [ "$rc" = 0 ] || status="not run: exit $rc"
        row load "$how" "$n" "$s" "$status"
        echo "gpurun run ($how) $n: exit $rc, $s s"
        tail -n 4 "$WORK/$n.$how.err" | sed 's/^/   err| /'
    done
    if { [ "$slow" = True ] || cmp -s "$WORK/$n.jit.out" "$WORK/$n.cached.out"; } && cmp -s "$WORK/$n.ptxas-first.out" "$WORK/$n.cached.out"; then
        echo "   the runs printed the same $(wc -l < "$WORK/$n.cached.out") lines"
    else
        echo "   OUTPUT DIFFERS between the runs of $n"
    fi
    [ -e "$B/$n.expected" ] && { cmp -s "$B/$n.expected" "$WORK/$n.cached.out" && echo "   output equals the host's" \
        || { echo "   OUTPUT DIFFERS from the host's:"; diff "$B/$n.expected" "$WORK/$n.cached.out" | head -n 20; }; }
    cp "$WORK/$n.cached.out" "$RES/$n.gpu.out" 2>/dev/null
done
"$G" cache
echo "== $(wc -l < "$rows") rows in $RES/load.json"
