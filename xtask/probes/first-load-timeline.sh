#!/usr/bin/env bash
# Where a first load's time goes, on the GPU machine: runs
#   gpurun run --no-cache PROGRAM.ptx
# with ptxas and nvlink wrapped to log when each starts and ends, and prints
# the timeline from process start: the split (until the first ptxas), the
# ptxas span, nvlink, and the rest (module load, the program, exit).
#   bash xtask/probes/first-load-timeline.sh GPURUN PROGRAM.ptx [gpurun run options]
set -u
G=$1 P=$2; shift 2
W=/tmp/first-load-timeline
rm -rf "$W" && mkdir -p "$W/bin"
real=$(dirname "$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)")
for tool in ptxas nvlink; do
    cat > "$W/bin/$tool" <<WRAP
#!/usr/bin/env bash
[ "\${1:-}" = --version ] && exec "$real/$tool" "\$@"
s=\$(date +%s%N); "$real/$tool" "\$@"; rc=\$?; e=\$(date +%s%N)
echo "$tool \$s \$e \$(basename "\${@: -1}")" >> "$W/log"
exit \$rc
WRAP
    chmod +x "$W/bin/$tool"
done
t0=$(date +%s%N)
GPURUN_PTXAS=$W/bin/ptxas GPURUN_CACHE_DIR=$W/cache "$G" run --no-cache "$@" "$P" > "$W/out" 2> "$W/err"
rc=$?
t1=$(date +%s%N)
awk -v t0="$t0" -v t1="$t1" -v rc="$rc" '
    $1 == "ptxas" { n++; if (!fs || $2 < fs) fs = $2; if ($3 > le) le = $3; d = ($3 - $2) / 1e9; if (d > mx) { mx = d; mp = $4 } }
    $1 == "nvlink" { ns = $2; ne = $3 }
    END {
        printf "exit %d, %.2f s in all\n", rc, (t1 - t0) / 1e9
        printf "  start -> first ptxas (read, split, write parts): %.2f s\n", (fs - t0) / 1e9
        printf "  ptxas, %d parts: %.2f s (slowest part %s: %.2f s)\n", n, (le - fs) / 1e9, mp, mx
        printf "  last ptxas -> nvlink start: %.2f s\n", (ns - le) / 1e9
        printf "  nvlink: %.2f s\n", (ne - ns) / 1e9
        printf "  nvlink end -> exit (cache write, load, the program): %.2f s\n", (t1 - ne) / 1e9
    }' "$W/log"
