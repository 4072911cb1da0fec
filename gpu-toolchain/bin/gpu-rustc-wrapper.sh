#!/usr/bin/env bash
# The `build.rustc-wrapper` of the examples' cargo configs, for plain `cargo`
# (the rustup proxy) driving the patched toolchain's rustc:
# - rustup puts the pinned toolchain's lib/ in LD_LIBRARY_PATH, which would
#   make the patched rustc load the pristine librustc_driver and so take the
#   pristine std's sources: drop it (rustc finds its own libraries by rpath);
# - cargo's bare `-Zbuild-std` builds std only for targets whose spec says
#   `"std": true`; rustc's built-in amdgcn-amd-amdhsa and nvptx64-nvidia-cuda
#   say false (upstream std does not build for them; the patched one does), so
#   the answer to cargo's target-spec query says true. That default crate set
#   has panic_unwind, not the panic_abort runtime these targets use, so a
#   program's final link (cdylib/bin) that names no panic_abort gets the one
#   cargo built beside std, when its panic strategy is abort: `-C panic=abort`
#   (cargo's for `panic = "abort"`), else the target's default (a `-std` spec's
#   `panic-strategy`; abort for the built-in targets). A panic=unwind program
#   links the panic_unwind that std's `panic-unwind` feature builds.
set -o pipefail
unset LD_LIBRARY_PATH
rustc=$1
shift
# The panic strategy rustc will use: the last `-C panic=` wins, else the
# target's default.
strategy=
prev=
target=
for arg in "$@"; do
    case $arg in -Cpanic=*) strategy=${arg#-Cpanic=} ;; esac
    case $prev in
    -C) case $arg in panic=*) strategy=${arg#panic=} ;; esac ;;
    --target) target=$arg ;;
    esac
    prev=$arg
done
if [ -z "$strategy" ]; then
    strategy=abort
    case $target in *.json)
        grep -q '"panic-strategy": *"unwind"' "$target" 2>/dev/null && strategy=unwind ;;
    esac
fi
case " $* " in
*target-spec-json*)
    "$rustc" "$@" | sed 's/"std": false/"std": true/'
    exit ;;
*panic_abort*) ;;
*" --crate-type cdylib "* | *" --crate-type bin "*)
    [ "$strategy" = abort ] || exec "$rustc" "$@"
    for arg in "$@"; do
        case $arg in dependency=*)
            for rlib in "${arg#dependency=}"/libpanic_abort-*.rlib; do
                if [ -e "$rlib" ]; then
                    set -- "$@" --extern "noprelude,nounused:panic_abort=$rlib"
                    break 2
                fi
            done ;;
        esac
    done ;;
esac
exec "$rustc" "$@"
