#!/usr/bin/env bash
# First load of one program with an empty cubin cache, for several ways of
# compiling it, interleaved in one run (a same-run A/B of `gpurun run`'s
# split ptxas compile). On a CUDA machine, from a bundle made here:
#   BUNDLE/NAME.ptx.gz, BUNDLE/NAME.expected (the host run's stdout),
#   BUNDLE/variants: one line per variant, "LABEL GPURUN [VAR=VALUE ...]"
#                    (GPURUN relative to BUNDLE)
#   bash scripts/gpu-first-load-ab.sh BUNDLE NAME RESULTS_DIR [ROUNDS]
# Each round runs every variant once without a wrapper (timed from process
# start to exit); a round before them (unless NO_WRAPPED=1) runs each
# through xtask/probes/ptxas-wrap.sh to log every part's ptxas time. Then one cached
# run of the first variant. Writes RESULTS_DIR/first-load.json and the logs.
set -u
B=$1 N=$2 RES=$3 ROUNDS=${4:-3}
ARCH=${ARCH:-sm_90}
export PATH=$PATH:/usr/local/cuda/bin
WORK=/tmp/first-load-ab
rm -rf "$WORK" && mkdir -p "$WORK/wrap" "$RES"
. "$(dirname "$0")/gpu-facts.sh"
gunzip -c "$B/$N.ptx.gz" > "$WORK/$N.ptx"
real_ptxas=$(command -v ptxas) || { echo "no ptxas on PATH"; exit 1; }
cp "$(dirname "$0")/../dev/probes/ptxas-wrap.sh" "$WORK/wrap/ptxas"
ln -s "$(dirname "$real_ptxas")/nvlink" "$WORK/wrap/nvlink"
rows=$WORK/rows.jsonl; : > "$rows"
run() { # label gpurun round how env...
    local label=$1 g=$2 round=$3 how=$4; shift 4
    local t rc s
    export GPURUN_CACHE_DIR=$WORK/cache-$label-$round-$how
    rm -rf "$GPURUN_CACHE_DIR"
    local extra=()
    [ "$how" = wrapped ] && extra=(GPURUN_PTXAS=$WORK/wrap/ptxas REAL_PTXAS=$real_ptxas WRAP_LOG=$RES/parts-$label.log)
    t=$(now)
    env "$@" "${extra[@]}" timeout 300 "$B/$g" run --no-cache "$WORK/$N.ptx" > "$WORK/out-$label-$round-$how" 2> "$RES/err-$label-$round-$how.log"
    rc=$?
    s=$(since "$t")
    same=false; cmp -s "$WORK/out-$label-$round-$how" "$B/$N.expected" && same=true
    printf '{"benchmark":"first_load","variant":"%s","how":"%s","round":%s,"program":"%s","seconds":%s,"exit":%s,"output_equals_host":%s,"device":"%s","driver":"%s","date":"%s","arch":"%s"}\n' \
        "$label" "$how" "$round" "$N" "$s" "$rc" "$same" "$device" "$driver" "$date" "$ARCH" >> "$rows"
    echo "$label round $round ($how): exit $rc, $s s ($(grep -o 'compiled in .*' "$RES/err-$label-$round-$how.log")), output equals the host's: $same"
    [ "$rc" = 0 ] && [ "$same" = true ] && mv "$RES/err-$label-$round-$how.log" "$WORK/"
}
if [ -z "${NO_WRAPPED:-}" ]; then
    while read -r label g envs; do
        [ -n "$label" ] || continue
        run "$label" "$g" 0 wrapped $envs
    done < "$B/variants"
fi
for round in $(seq 1 "$ROUNDS"); do
    while read -r label g envs; do
        [ -n "$label" ] || continue
        run "$label" "$g" "$round" plain $envs
    done < "$B/variants"
done
read -r label g envs < "$B/variants"
export GPURUN_CACHE_DIR=$WORK/cache-cached
env $envs "$B/$g" run "$WORK/$N.ptx" > /dev/null 2>&1
t=$(now); env $envs "$B/$g" run "$WORK/$N.ptx" > "$WORK/out-cached" 2> "$RES/err-cached.log"; rc=$?; s=$(since "$t")
echo "$label cached: exit $rc, $s s"
[ "$rc" = 0 ] && mv "$RES/err-cached.log" "$WORK/"
python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))' "$rows" > "$RES/first-load.json"
for f in "$RES"/parts-*.log; do
    [ -e "$f" ] || continue # NO_WRAPPED: no part logs
    echo "== $(basename "$f"): $(wc -l < "$f") parts, ptxas ms: sum $(awk "{s+=\$5} END{print s}" "$f"), max $(awk "{if(\$5>m)m=\$5} END{print m}" "$f")"
    sort -k5 -n -r "$f" | head -3
done
