#!/usr/bin/env bash
# Installs the nightly pinned in rust-toolchain.toml with the components the
# GPU builds need (rust-src for -Zbuild-std, llvm-tools for the GPU linker).
# rustup does not do this by itself where RUSTUP_AUTO_INSTALL=0; when the
# toolchain is already there this costs one `rustup` query.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
channel=$(sed -n 's/^channel = "\(.*\)"/\1/p' "$root/rust-toolchain.toml")
if ! command -v rustup >/dev/null 2>&1; then
    echo "gpurun: rustup is not on PATH; install it (https://rustup.rs), then run this again" >&2
    exit 3
fi
installed=$(rustup component list --toolchain "$channel" --installed 2>/dev/null || true)
if grep -q '^rust-src' <<<"$installed" && grep -q '^llvm-tools' <<<"$installed"; then
    exit 0
fi
echo "gpurun: installing Rust $channel with rust-src and llvm-tools (once; about 250 MB)" >&2
rustup toolchain install "$channel" --profile minimal -c rust-src -c llvm-tools >&2
