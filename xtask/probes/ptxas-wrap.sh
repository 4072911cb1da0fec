#!/usr/bin/env bash
# A stand-in for ptxas that runs the real one ($REAL_PTXAS), logs each
# compile's part, size, options and seconds to $WRAP_LOG, and adds
# $WRAP_OPT (e.g. -O1) to the parts that contain $WRAP_MATCH. For measuring
# `gpurun run`'s split compile part by part:
#   GPURUN_PTXAS=xtask/probes/ptxas-wrap.sh REAL_PTXAS=$(command -v ptxas) \
#   WRAP_LOG=/tmp/parts.log gpurun run --no-cache PROGRAM.ptx
set -u
if [ "${1:-}" = --version ]; then exec "$REAL_PTXAS" "$@"; fi
input=${@: -1}
extra=()
if [ -n "${WRAP_OPT:-}" ] && grep -qE -- "${WRAP_MATCH:-}" "$input"; then extra=("$WRAP_OPT"); fi
start=$(date +%s%N)
"$REAL_PTXAS" "${extra[@]}" "$@"
rc=$?
end=$(date +%s%N)
echo "$(basename "$input") $(wc -l < "$input") lines ${extra[*]:-default} $(( (end - start) / 1000000 )) ms rc=$rc" >> "${WRAP_LOG:-/dev/stderr}"
exit $rc
