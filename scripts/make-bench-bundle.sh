#!/usr/bin/env bash
# Builds what a GPU machine without a Rust toolchain needs to run the
# benchmark matrix, in gpu-bundle/bench/ (git-ignored):
#   gpurun, gpurun-dev      the launcher, and the tool that runs the matrix through it
#   <id>-<arch>.ptx.gz      benches/programs built for the GPU, one per benchmark,
#                           gzipped (PTX is text of a few MB: the bundle must stay small)
#   cpu/<id>                the same programs built for the host (the CPU column)
#   native-src/             benches/native, compiled there with nvcc (scripts/gpu-bench.sh),
#                           or with hipcc on AMD (gpurun-dev selftest --bundle)
#   COMMIT                  the commit the results are tagged with
#   <variant>/<id>-<arch>.ptx.gz  with AB_VARIANTS="private sysscope": the programs
#                           AB_IDS (default: AB_DEFAULT_IDS below) linked another way, for
#                           scripts/gpu-link-ab.sh: private = frames in private memory
#                           (GPU_PRIVATE_STACKS=1), args = shared frames that pass the stack
#                           pointer and limit as arguments (GPU_STACK_ARGS=1), sysscope = std atomics left at
#                           system scope (GPU_SYSTEM_SCOPE=1), nodepth = recursion
#                           without call-stack depth checks (GPU_NO_DEPTH_CHECKS=1), inlineN =
#                           gpu-ld's whole-program inliner threshold N (GPU_INLINE_THRESHOLD=N),
#                           maxstackN = its largest inlined frame (GPU_INLINE_MAX_STACK=N),
#                           ptxN = PTX ISA N.N from gpu-ld's llc (GPU_NVPTX_PTX_ISA=N; ptx78:
#                           every release and acquire fence a fence.acq_rel, as before 8.6),
#                           unwind = built with panic = "unwind" (the GPU targets' default; the
#                           programs themselves say abort: what unwinding costs),
#                           slsr = llc's straight-line strength reduction on again
#                           (gpu-ld's NO_SLSR: what leaving it off costs)
# Usage: [BENCH_IDS="spawn_join heap ..."] scripts/make-bench-bundle.sh [ARCH...]
#   (default: sm_90, every benchmark program)
# Run it after scripts/make-gpu-bundle.sh, which empties gpu-bundle/.
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("${@:-sm_90}")
cargo build --release --bin gpurun --bin gpurun-dev
G=target/release/gpurun
$G setup
B=gpu-bundle/bench
rm -rf "$B" && mkdir -p "$B/cpu" "$B/native-src"
cp "$G" target/release/gpurun-dev "$B/"
ids=${BENCH_IDS:-$(ls benches/programs/src/bin/ | sed -n 's/\.rs$//p')}
AB_DEFAULT_IDS="spawn_join wake_latency mutex_uncontended mutex_handoff channel_1p1c yield barrier println host_call heap reduction"
for arch in "${archs[@]}"; do
    for id in $ids; do
        obj=$($G build benches/programs --arch "$arch" --release --bin "$id" | tail -n 1)
        gzip -9 -c "$obj" > "$B/$id-$arch.${obj##*.}.gz"
        for variant in ${AB_VARIANTS:-}; do
            case " ${AB_IDS:-$AB_DEFAULT_IDS} " in *" $id "*) ;; *) continue;; esac
            case $variant in
                private) setting=GPU_PRIVATE_STACKS=1;;
                args) setting=GPU_STACK_ARGS=1;;
                sysscope) setting=GPU_SYSTEM_SCOPE=1;;
                nodepth) setting=GPU_NO_DEPTH_CHECKS=1;;
                inline*) setting=GPU_INLINE_THRESHOLD=${variant#inline};;
                maxstack*) setting=GPU_INLINE_MAX_STACK=${variant#maxstack};;
                ptx*) setting=GPU_NVPTX_PTX_ISA=${variant#ptx};;
                unwind) setting=CARGO_PROFILE_RELEASE_PANIC=unwind;;
                slsr) setting="GPU_LD_LLC_ARGS=-debug-counter=slsr-counter=0-1000000000";;
                *) echo "unknown AB variant $variant" >&2; exit 2;;
            esac
            # The linker's choice does not change cargo's fingerprint: touch
            # the source so the program is linked again, both times.
            mkdir -p "$B/$variant"
            touch "benches/programs/src/bin/$id.rs"
            obj=$(env "$setting" $G build benches/programs --arch "$arch" --release --bin "$id" | tail -n 1)
            gzip -9 -c "$obj" > "$B/$variant/$id-$arch.${obj##*.}.gz"
            touch "benches/programs/src/bin/$id.rs"
        done
    done
done
# The host build: plain cargo, its own target dir (the GPU build's is per arch).
cargo build --release --quiet --manifest-path benches/programs/Cargo.toml --target-dir target/bench-host
for id in $ids; do
    cp "target/bench-host/release/$id" "$B/cpu/"
    strip "$B/cpu/$id" 2>/dev/null || true
done
cp benches/native/*.cu benches/native/*.cuh benches/native/*.h "$B/native-src/"
c=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$c" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c="$c-dirty"; fi
echo "$c" > "$B/COMMIT"
ls -l "$B" "$B/cpu"
du -sh "$B"
