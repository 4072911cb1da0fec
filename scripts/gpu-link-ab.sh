#!/usr/bin/env bash
# The same benchmark programs linked different ways, on a GPU machine, from a
# bench bundle made with AB_VARIANTS="private sysscope" scripts/make-bench-bundle.sh:
#   bash scripts/gpu-link-ab.sh [BUNDLE_DIR] [RESULTS_DIR] [ID...]
# RESULTS_DIR (default $OUT/link-ab, else ./link-ab) gets a summary table
# (summary.txt: p50 or throughput per row and variant, ratio to default) and
# every JSON file in results.tar.gz.
# Variants: `default` (the bundle's own programs: shared stacks, device-scope
# atomics) and each variant folder of the bundle (`private`: frames in private
# memory; `sysscope`: std atomics at system scope; `before`: another
# checkout's build; `split*`: the default PTX compiled by gpurun's split
# compile instead of whole-program ptxas). For each benchmark ID
# (default: those the variants were built for), runs every variant back to
# back, each into RESULTS_DIR/<variant>/, so the JSON files compare. A variant
# folder with its own gpurun and gpurun-dev (a checkout whose launch ABI
# differs) runs its programs with those.
set -u
B=${1:-gpu-bundle/bench}
DEST=${2:-${OUT:-.}/link-ab}
shift $(( $# < 2 ? $# : 2 ))
ARCH=${ARCH:-sm_90}
WORK=${BENCH_WORK:-/tmp/gpu-link-ab}
RES=$WORK/results
variants=(default)
for d in "$B"/*/; do
    v=$(basename "$d"); [ "$v" = cpu ] || [ "$v" = native-src ] && continue
    ls "$d"/*-"$ARCH".ptx.gz >/dev/null 2>&1 && variants+=("$v")
done
ids=("$@")
if [ ${#ids[@]} = 0 ]; then
    for f in "$B/${variants[1]:-.}"/*-"$ARCH".ptx.gz; do ids+=("$(basename "$f" "-$ARCH.ptx.gz")"); done
fi
rm -rf "$WORK"
export PATH=$PATH:/usr/local/cuda/bin
for v in "${variants[@]}"; do
    src=$B; [ "$v" = default ] || src=$B/$v
    mkdir -p "$WORK/$v" "$RES/$v"
    for id in "${ids[@]}"; do
        gunzip -c "$src/$id-$ARCH.ptx.gz" > "$WORK/$v/$id-$ARCH.ptx" 2>/dev/null || { rm -f "$WORK/$v/$id-$ARCH.ptx"; continue; }
        # `split*` variants: no cubin here, so gpurun compiles the PTX itself
        # (split into parts, ptxas -c, nvlink; see launcher/src/cubin_cache.rs).
        case $v in split*) continue;; esac
        ( timeout 240 ptxas -arch="$ARCH" -O3 "$WORK/$v/$id-$ARCH.ptx" -o "$WORK/$v/$id-$ARCH.cubin" \
            >"$WORK/$v/$id.ptxas.log" 2>&1 || rm -f "$WORK/$v/$id-$ARCH.cubin" ) &
    done
done
wait
echo "== variants: ${variants[*]}; benchmarks: ${ids[*]}"
export GPURUN_COMMIT=${GPURUN_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
# The summary and the tarball, rewritten after each benchmark: a run cut
# short by its time limit still leaves what it measured.
summarize() {
mkdir -p "$DEST"
tar czf "$DEST/results.tar.gz" -C "$RES" .
python3 - "$RES" "${variants[@]}" <<'PY' | tee "$DEST/summary.txt"
import glob, json, os, sys
res, variants = sys.argv[1], sys.argv[2:]
rows = {}
for v in variants:
    for f in glob.glob(os.path.join(res, v, "*.json")):
        for r in json.load(open(f)):
            if r.get("backend") != "nvidia" or r.get("status") != "measured":
                continue
            metric, value = ("p50", r["p50"]) if "p50" in r else ("value", r.get("value"))
            key = (r["benchmark"], r.get("variant", ""), metric, r.get("unit", ""))
            rows.setdefault(key, {})[v] = value
print("%-44s %-6s %s" % ("benchmark / row", "metric", "  ".join("%14s" % v for v in variants)))
for key in sorted(rows):
    vals = rows[key]
    base = vals.get("default")
    cells = []
    for v in variants:
        x = vals.get(v)
        if x is None:
            cells.append("%14s" % "-")
        elif v != "default" and base:
            cells.append("%8.4g (x%.2f)" % (x, x / base))
        else:
            cells.append("%14.4g" % x)
    name = key[0] + (" " + key[1] if key[1] else "")
    print("%-44s %-6s %s  %s" % (name[:44], key[2], "  ".join(cells), key[3]))
PY
}
for id in "${ids[@]}"; do
    for v in "${variants[@]}"; do
        [ -s "$WORK/$v/$id-$ARCH.ptx" ] || continue # a variant built without this program
        echo "== $id ($v)"
        tool=$B/gpurun-dev
        [ -x "$B/$v/gpurun-dev" ] && tool=$B/$v/gpurun-dev
        timeout 120 "$tool" bench --only "$id" --programs "$WORK/$v" --out "$RES/$v" --timeout 60 2>&1 | tail -n 2
    done
    summarize >/dev/null
done
summarize
