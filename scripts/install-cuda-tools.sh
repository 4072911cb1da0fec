#!/usr/bin/env bash
# Puts CUDA's ptxas and nvlink (from NVIDIA's `nvidia-cuda-nvcc` wheel on
# PyPI; no GPU or driver needed) in target/cuda-tools/bin and prints that
# folder. The tests use them to compile real programs' PTX the way `gpurun
# run` does on a CUDA machine. Exits non-zero, saying why, if they cannot be had.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=13.0.88   # CUDA 13.0, as on the H100 the project measures on
dest=$root/target/cuda-tools
if [ -x "$dest/bin/ptxas" ] && [ -x "$dest/bin/nvlink" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$version" ]; then
    echo "$dest/bin"; exit 0
fi
rm -rf "$dest" && mkdir -p "$dest/wheel"
python3 -m pip download --quiet --no-deps -d "$dest/wheel" "nvidia-cuda-nvcc==$version" >&2
python3 -m zipfile -e "$dest"/wheel/*.whl "$dest/unpacked" >&2
mkdir -p "$dest/bin"
for t in ptxas nvlink; do
    cp "$(find "$dest/unpacked" -path "*/bin/$t" | head -n 1)" "$dest/bin/$t"
    chmod +x "$dest/bin/$t"
done
rm -rf "$dest/wheel" "$dest/unpacked"
echo "$version" > "$dest/VERSION"
echo "$dest/bin"
