#!/usr/bin/env bash
# The project's tests (no GPU needed): unit tests, the CPU harness, the
# code-object checks of GPU builds, and the loom model of the runtime's
# protocols. GPU runs are separate: see scripts/gpu-e2e.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-toolchain.sh
cargo test --workspace --release
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p rt-common --release
