#!/usr/bin/env bash
# Same-call A/B of loading the PTX of 1fc3290's linker (old) against this
# commit's (new): real-crates cold (split ptxas + nvlink) and cached, and
# hello-threads through the driver's JIT and whole-program ptxas.
set -u
export PATH=$PATH:/usr/local/cuda/bin
G=gpu-bundle/gpurun
L=gpu-bundle/loadab
gunzip -kf $L/rc-old.ptx.gz
cp gpu-bundle/real-crates-sm_90.ptx $L/rc-new.ptx
cp gpu-bundle/hello-threads-sm_90.ptx $L/hello-new.ptx
ls -l $L
t() { local t0=$(date +%s.%N); "$@" > /tmp/ab.out 2> /tmp/ab.err; local rc=$?; echo "exit $rc, $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"; }
for n in 1 2; do
    for v in old new; do
        echo "real-crates $v cold $n: $(GPURUN_CACHE_DIR=/tmp/cache-$v t timeout 120 $G run --no-cache $L/rc-$v.ptx)"
        cmp -s gpu-bundle/real-crates.expected /tmp/ab.out && echo "  output equals the host's" || { echo "  OUTPUT DIFFERS"; tail -3 /tmp/ab.err; }
    done
done
for v in old new; do
    GPURUN_CACHE_DIR=/tmp/cache2-$v timeout 120 $G run $L/rc-$v.ptx > /dev/null 2>&1
    for n in 1 2; do echo "real-crates $v cached $n: $(GPURUN_CACHE_DIR=/tmp/cache2-$v t timeout 60 $G run $L/rc-$v.ptx)"; done
done
for n in 1 2; do
    for v in old new; do
        echo "hello-threads $v driver JIT $n: $(GPURUN_PTXAS=/nonexistent t timeout 120 $G run --no-cache $L/hello-$v.ptx)"
        sort /tmp/ab.out | md5sum
        echo "hello-threads $v whole-program ptxas $n: $(t ptxas -arch=sm_90 -O3 $L/hello-$v.ptx -o /tmp/h-$v.cubin)"
    done
done
ls -l /tmp/h-old.cubin /tmp/h-new.cubin
cuobjdump -sass /tmp/h-old.cubin | grep -cE '^\s+/\*[0-9a-f]+\*/' 
cuobjdump -sass /tmp/h-new.cubin | grep -cE '^\s+/\*[0-9a-f]+\*/'
