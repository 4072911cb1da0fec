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
#   cargo built beside std.
set -o pipefail
unset LD_LIBRARY_PATH
rustc=$1
shift
case " $* " in
*target-spec-json*)
    "$rustc" "$@" | sed 's/"std": false/"std": true/'
    exit ;;
*panic_abort*) ;;
*" --crate-type cdylib "* | *" --crate-type bin "*)
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
