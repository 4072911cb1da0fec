#!/usr/bin/env bash
# Builds what a GPU machine without a Rust toolchain needs to run the
# acceptance suite (`gpurun-dev acceptance`): gpurun, gpurun-dev and the
# example programs' code objects, in gpu-bundle/ (git-ignored).
# Usage: scripts/make-gpu-bundle.sh [--emulated] [ARCH...]
# --emulated: only what the checks run on the AMD emulator need
# (tests/src/acceptance.rs, EMULATED), in target/emulated-bundle/.
set -euo pipefail
cd "$(dirname "$0")/.."
examples=(hello-threads std-coverage real-crates crate-sweep files-stdin async-tasks)
checks=(all-threads-print panic hang fault exit-code spawn-exhaust spawn-cycles maths lanes lanes-misuse
        scoped-stacks stack-overflow deep-recursion file-throughput soak fs-root heap-big host-limits)
B=gpu-bundle
emulated=false
if [ "${1:-}" = --emulated ]; then
    shift
    emulated=true
    examples=(hello-threads std-coverage files-stdin async-tasks)
    checks=(panic hang fault exit-code spawn-cycles maths lanes stack-overflow deep-recursion soak fs-root heap-big host-limits)
    B=target/emulated-bundle
fi
# Both bundles: std details, unwinding and core's sorts compared with the
# host's (std-details.expected, unwind.expected, sort.expected below).
checks+=(std-details unwind sort)
# Both bundles: std's unwinding (examples/unwind-checks; the emulator runs
# the small ones, EMULATED), the expected output from host runs below.
unwind_bins=(unwind-facts std-docs panic-in-main panic-while-panicking)
archs=("${@:-sm_90}")
cargo build --release -p launcher -p xtask -p hip-emu --bin gpurun --bin gpurun-dev --lib
G=target/release/gpurun
$G setup
rm -rf $B && mkdir -p $B
cp $G target/release/gpurun-dev target/release/libhip_emu.so $B/
for arch in "${archs[@]}"; do
    for ex in "${examples[@]}"; do
        echo "make-gpu-bundle: $ex for $arch" >&2
        obj=$($G build examples/$ex --arch "$arch" --release | tail -n 1)
        cp "$obj" "$B/$ex-$arch.${obj##*.}"
    done
    for bin in "${checks[@]}"; do
        echo "make-gpu-bundle: gpu-checks $bin for $arch" >&2
        obj=$($G build examples/gpu-checks --arch "$arch" --bin "$bin" --release | tail -n 1)
        cp "$obj" "$B/$bin-$arch.${obj##*.}"
    done
    for bin in "${unwind_bins[@]}"; do
        echo "make-gpu-bundle: unwind-checks $bin for $arch" >&2
        obj=$($G build examples/unwind-checks --arch "$arch" --bin "$bin" --release | tail -n 1)
        cp "$obj" "$B/$bin-$arch.${obj##*.}"
    done
done
# `cargo test` on the GPU: examples/cargo-test's harness, built as a user's
# crate is after `gpurun init` (in a copy: init writes absolute paths).
for arch in "${archs[@]}"; do
    crate=$(mktemp -d)/cargo-test
    cp -r examples/cargo-test "$crate"
    $G init "$crate" --arch "$arch" --force > /dev/null
    harness=$(cd "$crate" && cargo test --release --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m.get("profile",{}).get("test")][0])')
    cp "$harness" "$B/cargo-test-$arch.${harness##*.}"
    # The same crate saying panic = "abort": one launch per test.
    harness=$(cd "$crate" && CARGO_PROFILE_RELEASE_PANIC=abort CARGO_PROFILE_BENCH_PANIC=abort \
        cargo test --release --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable") and m.get("profile",{}).get("test")][0])')
    cp "$harness" "$B/cargo-test-abort-$arch.${harness##*.}"
done
# What the programs print on the host: the GPU runs must print the same.
cargo run --quiet --release --manifest-path examples/async-tasks/Cargo.toml > $B/async-tasks.expected
# files-stdin on the host, with the input file and stdin the acceptance suite gives it.
cp examples/files-stdin/input.txt $B/files-stdin.input
cp examples/files-stdin/stdin.txt $B/files-stdin.stdin
cargo run --quiet --release --manifest-path examples/files-stdin/Cargo.toml -- \
    $B/files-stdin.input "$(mktemp -d)/work" < $B/files-stdin.stdin > $B/files-stdin.expected
# Unwinding (a panic's drops, join's Err, catch_unwind, scope) on the host.
cargo run --quiet --release --manifest-path examples/gpu-checks/Cargo.toml --bin unwind > $B/unwind.expected
# core's sorts on the host.
cargo run --quiet --release --manifest-path examples/gpu-checks/Cargo.toml --bin sort > $B/sort.expected
# std-details (args[0], current_exe, Permissions, errno texts) on the host.
cargo run --quiet --release --manifest-path examples/gpu-checks/Cargo.toml --bin std-details -- \
    "$(mktemp -d)/work" > $B/std-details.expected
# The unwinding checks on the host; their panic messages (stderr) kept
# beside, to compare by eye with a GPU run's logs/<check>.err.
run_unwind_checks() { cargo run --quiet --release --manifest-path examples/unwind-checks/Cargo.toml --bin "$@"; }
run_unwind_checks unwind-facts > $B/unwind-facts.expected 2> $B/unwind-facts.host-stderr
run_unwind_checks unwind-facts -- 32 > $B/unwind-facts-32.expected 2> $B/unwind-facts-32.host-stderr
run_unwind_checks std-docs > $B/std-docs.expected 2> $B/std-docs.host-stderr
if ! $emulated; then
    # The spawn profile (scripts/gpu-spawn-profile.sh) and the println profile
    # (ptxas it, then `gpurun run`: examples/gpu-checks/src/bin/print-profile.rs).
    mkdir -p $B/profile
    for bin in spawn-profile print-profile; do
        obj=$($G build examples/gpu-checks --arch "${archs[0]}" --bin $bin --release | tail -n 1)
        cp "$obj" $B/profile/
    done
    # An AMD code object, to check the launcher refuses it on an NVIDIA device,
    # and an NVIDIA one for an AMD device (check wrong-vendor).
    obj=$($G build examples/hello-threads --arch gfx90a --release | tail -n 1)
    cp "$obj" $B/hello-threads-gfx90a.elf
    if ! [ -e $B/hello-threads-sm_90.ptx ]; then
        obj=$($G build examples/hello-threads --arch sm_90 --release | tail -n 1)
        cp "$obj" $B/hello-threads-sm_90.ptx
    fi
    # What real-crates prints on the host: the GPU run must print the same.
    cargo run --quiet --release --manifest-path examples/real-crates/Cargo.toml > $B/real-crates.expected
    cp examples/crate-sweep/expected-output.txt $B/crate-sweep.expected
    # file-throughput for the host CPU (scripts/gpu-file-io.sh compares the two).
    cargo build --quiet --release --manifest-path examples/gpu-checks/Cargo.toml --bin file-throughput
    cp examples/gpu-checks/target/release/file-throughput $B/file-throughput-host
    c=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    if [ "$c" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c="$c-dirty"; fi
    echo "$c" > $B/COMMIT
fi
ls -l $B
