#!/usr/bin/env bash
# Builds the bundle `gpurun-dev selftest --bundle` runs from, in gpu-bundle/
# (git-ignored): the acceptance suite's programs (make-gpu-bundle.sh) and the
# benchmark matrix's in gpu-bundle/bench (make-bench-bundle.sh), for ARCH
# (default sm_90). `gpurun-dev selftest` without --bundle runs this itself,
# for the GPU it finds. On the GPU machine, no Rust needed, from a checkout
# or from gpu-bundle/selftest.tgz alone (written last):
#   tar xzf gpu-bundle/selftest.tgz     # only where gpu-bundle/ came as the tarball
#   gpu-bundle/gpurun-dev selftest --bundle gpu-bundle --out DIR
# Usage: scripts/make-selftest-bundle.sh [ARCH...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/make-gpu-bundle.sh "$@"
bash scripts/make-bench-bundle.sh "$@"
du -sh gpu-bundle
# One file to carry to the GPU machine; `tar xzf gpu-bundle/selftest.tgz` there restores gpu-bundle/.
# Written outside gpu-bundle/ first: tar fails on a folder that changes as it reads it.
part=$(mktemp "${TMPDIR:-/tmp}/selftest.tgz.XXXXXX")
tar czf "$part" --exclude=selftest.tgz gpu-bundle
mv "$part" gpu-bundle/selftest.tgz
ls -l gpu-bundle/selftest.tgz
