#!/usr/bin/env bash
# A size lever's A/B on a CUDA machine (no Rust toolchain needed there), from
# a bundle made on the build machine:
#   B/gpurun                      the launcher
#   B/load/<variant>/<prog>.ptx.gz  programs linked each way (e.g. default, inline5)
#   B/load/<prog>.expected        the host's stdout, when the program has one
#   B/bench/                      a bench bundle (scripts/make-bench-bundle.sh
#                                 with AB_VARIANTS), optional
# Usage: bash scripts/gpu-size-ab.sh [B] [RESULTS_DIR] [ROUNDS]
# For each program, variants alternate ROUNDS times (default 2): `gpurun run`
# with an emptied cubin cache (ptxas, split and parallel: the first load),
# then a cached run; stdout is compared with the expected file. Then the
# bench bundle's variants run back to back (scripts/gpu-link-ab.sh).
# RESULTS_DIR/size-ab.json: one row per run (device, driver, commit, date).
set -u
B=${1:-gpu-bundle/size-ab}
RES=${2:-${OUT:-.}/size-ab}
ROUNDS=${3:-2}
WORK=/tmp/gpu-size-ab
export PATH=$PATH:/usr/local/cuda/bin
rm -rf "$WORK" && mkdir -p "$WORK" "$RES"
. "$(dirname "$0")/gpu-facts.sh"
rows=$WORK/rows.jsonl
: > "$rows"
for f in $(cd "$B/load" && find . -name '*.ptx.gz' | sort); do
    v=$(dirname "$f" | sed 's|^\./||'); n=$(basename "$f" .ptx.gz)
    mkdir -p "$WORK/$v" && gunzip -c "$B/load/$f" > "$WORK/$v/$n.ptx"
done
variants=$(cd "$WORK" && ls -d */ | tr -d / | grep -v '^cache$')
programs=$(cd "$WORK" && ls */*.ptx | xargs -n1 basename | sort -u | sed 's/\.ptx$//')
for n in $programs; do
    for round in $(seq "$ROUNDS"); do
        for v in $variants; do
            f=$WORK/$v/$n.ptx
            [ -e "$f" ] || continue
            for how in first cached; do
                [ "$how" = first ] && rm -rf "$WORK/cache"
                t=$(now)
                GPURUN_CACHE_DIR=$WORK/cache timeout 300 "$B/gpurun" run "$f" > "$WORK/$v.$n.out" 2> "$WORK/$v.$n.err"
                rc=$?
                s=$(since "$t")
                same=null
                [ -e "$B/load/$n.expected" ] && { cmp -s "$B/load/$n.expected" "$WORK/$v.$n.out" && same=true || same=false; }
                bytes=$(stat -c %s "$f")
                echo "$n $v round $round $how: exit $rc, $s s, PTX $bytes bytes, output equal to the host's: $same"
                [ "$rc" = 0 ] || tail -n 5 "$WORK/$v.$n.err"
                printf '{"benchmark":"load","program":"%s","variant":"%s","how":"%s","round":%s,"seconds":%s,"exit":%s,"equal_to_host":%s,"ptx_bytes":%s,"device":"%s","driver":"%s","commit":"%s","date":"%s"}\n' \
                    "$n" "$v" "$how" "$round" "$s" "$rc" "$same" "$bytes" "$device" "$driver" "$commit" "$date" >> "$rows"
            done
        done
    done
done
python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))' "$rows" > "$RES/size-ab.json"
if [ -d "$B/bench" ]; then
    bash "$(dirname "$0")/gpu-link-ab.sh" "$B/bench" "$RES/link-ab"
fi
