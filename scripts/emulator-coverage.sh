#!/usr/bin/env bash
# Writes amd-emu/COVERAGE.md: every mnemonic in the code objects the
# emulated acceptance checks run (target/emulated-bundle, made by
# `scripts/make-gpu-bundle.sh --emulated gfx1100 gfx942`), how often each
# occurs per arch, and whether the emulator implements it.
set -euo pipefail
cd "$(dirname "$0")/.."
B=target/emulated-bundle
cargo build --quiet --release -p amd-emu --bin amd-emu-coverage
{
    echo "# amd-emu: coverage of our code objects"
    echo
    echo "Every mnemonic, as LLVM prints it, in the code objects the emulated"
    echo "acceptance checks run (\`scripts/make-gpu-bundle.sh --emulated\`: $(ls $B/*-gfx1100.elf | wc -l) programs"
    echo "per arch), with its occurrences. Written by \`scripts/emulator-coverage.sh\`"
    echo "at $(git rev-parse --short=12 HEAD)."
    echo
    target/release/amd-emu-coverage gfx1100 $B/*-gfx1100.elf gfx942 $B/*-gfx942.elf
} > amd-emu/COVERAGE.md
head -8 amd-emu/COVERAGE.md
