#!/usr/bin/env bash
# The project's tests (no GPU needed): unit tests, the CPU harness, the
# code-object checks of GPU builds, and the loom model of the runtime's
# protocols. GPU runs are separate: `gpurun-dev acceptance` (xtask/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-toolchain.sh
cargo test --workspace --release
# The native baselines' HIP twins (benches/native), compiled for gfx90a with
# hipcc, build-only (no GPU needed; .ci/run installs Debian's hipcc). Without
# hipcc it says SKIPPED and why.
cargo test --release -p xtask --test native_hip -- --ignored --nocapture
# The split PTX compile (launcher/src/cubin_cache.rs) on a real program, with
# CUDA's ptxas and nvlink from PyPI (no GPU needed), where they can be had.
if cuda_bin=$(bash scripts/install-cuda-tools.sh); then
    GPURUN_PTXAS=$cuda_bin/ptxas GPURUN_TEST_PTX=$PWD/target/gpu-build/sm_90/nvptx64-nvidia-cuda-std/release/hello-threads.ptx \
        cargo test --release -p launcher --lib -- --ignored real_ptxas
    # ... and with line info (tests/tests/line_info.rs built it): -lineinfo.
    GPURUN_PTXAS=$cuda_bin/ptxas GPURUN_TEST_PTX=$PWD/target/gpu-build-line-info/nvptx64-nvidia-cuda-std/release/hello-threads.ptx \
        cargo test --release -p launcher --lib -- --ignored real_ptxas
else
    echo "test.sh: skipped the split PTX compile test: CUDA's ptxas/nvlink could not be installed from PyPI"
fi
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p rt-host --release
# Our AMD code objects executed: the acceptance checks that run on the ISA
# emulator (amd-emu behind gpurun's own HIP path; tests/src/acceptance.rs,
# EMULATED), built for gfx1100 (wave32) and gfx942 (wave64). Each check
# prints how many instructions it emulated and how fast.
bash scripts/make-gpu-bundle.sh --emulated gfx1100 gfx942
for arch in gfx1100 gfx942; do
    target/release/gpurun-dev acceptance target/emulated-bundle --arch "$arch" --emulate --timeout 300
done
