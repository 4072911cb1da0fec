#!/usr/bin/env bash
# Builds the select probe (xtask/select-probe/README.md): crossbeam-channel
# 0.5.17 with counters, and a program that runs golang's test_select_stress
# under a watchdog. Writes gpu-bundle/select-probe/ (git-ignored): the code
# object, gpurun, run.sh. Usage: scripts/select-probe.sh [ARCH] (sm_90).
# Env: PROBE_WORK (default $TMPDIR/select-probe): where the crate is built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
arch=${1:-sm_90}
case $arch in sm_*) ext=ptx;; *) ext=elf;; esac
work=${PROBE_WORK:-${TMPDIR:-/tmp}/select-probe}
B=$root/gpu-bundle/select-probe

cargo build --quiet --release --bin gpurun
G=$root/target/release/gpurun

rm -rf "$work" && mkdir -p "$work/src/bin" "$work/vendor"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "select-probe"
version = "0.0.0"
edition = "2024"
publish = false
[workspace]
[dependencies]
crossbeam-channel = "=0.5.17"
[patch.crates-io]
crossbeam-channel = { path = "vendor/crossbeam-channel" }
TOML
cp xtask/select-probe/main.rs "$work/src/bin/xbstress.rs"
# The crate's source as cargo downloads it (in a package of its own: the
# probe's patch would replace it before it is fetched).
. scripts/crate-source.sh
cp -r "$(crate_source crossbeam-channel 0.5.17 "$work/fetch")" "$work/vendor/crossbeam-channel"
chmod -R u+w "$work/vendor"
patch -s -p1 -d "$work/vendor/crossbeam-channel" < xtask/select-probe/counters.diff

obj=$($G build --release --arch "$arch" "$work" | tail -1)
rm -rf "$B" && mkdir -p "$B"
cp "$obj" "$B/xbstress.$ext"
cp "$G" "$B/"
# The emulator is far slower: fewer messages, a longer watchdog.
if [ "$ext" = ptx ]; then run='./gpurun run --timeout 30 xbstress.ptx'; args='10000 12'
else run="./gpurun run --emulate $arch --timeout 250 xbstress.elf"; args='2000 60'; fi
cat > "$B/run.sh" <<RUN
#!/bin/bash
# The select probe, both modes: a hang prints the counters each second until the watchdog exits 3.
cd "\$(dirname "\$0")"
for m in pair full; do $run \$m $args 2>&1 | grep -v '^gpurun: comp' | tail -14; done
RUN
echo "select-probe: $B (run: bash $B/run.sh)"
