#!/usr/bin/env bash
# Session 21's size changes on the H100, from gpu-carry/s21 (PTX, gzipped) and gpu-bundle (made at the new commit):
#   hello-before: 1fa396f; hello-params: + short parameter names only; hello-now / real-crates: the bundle's build.
# Whole-program ptxas time and SASS of hello-threads (the parameter names must leave the SASS identical),
# then real-crates' first (empty cubin cache) and cached loads, before and after, and their outputs.
set -u
N=gpu-carry/s21; G=${G:-gpu-bundle/gpurun}
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/s21w; rm -rf $W; mkdir -p $W
for f in hello-before hello-params rc-before; do gunzip -c $N/$f.ptx.gz > $W/$f.ptx; done
cp gpu-bundle/hello-threads-sm_90.ptx $W/hello-now.ptx; cp gpu-bundle/real-crates-sm_90.ptx $W/rc-now.ptx
echo "ptxas $(ptxas --version | tail -1); bundle $(cat gpu-bundle/COMMIT)"
for v in hello-before hello-params hello-now rc-before rc-now; do echo "$v.ptx $(stat -c %s $W/$v.ptx) B"; done
for round in 1 2; do
  for v in hello-before hello-params hello-now; do
    s=$(date +%s.%N); ptxas -arch=sm_90 -O3 $W/$v.ptx -o $W/$v.cubin; e=$(date +%s.%N)
    echo "round $round $v whole-program ptxas $(python3 -c "print(round($e - $s, 2))") s, cubin $(stat -c %s $W/$v.cubin) B"
  done
done
for v in hello-before hello-params hello-now; do
  cuobjdump -sass $W/$v.cubin | grep -E '^\s+/\*[0-9a-f]{4,}\*/' | sed -E 's@^\s+/\*[0-9a-f]+\*/\s*@@; s@\s*/\*.*@@' > $W/$v.sass
  echo "$v: $(wc -l < $W/$v.sass) SASS instructions"
done
cmp -s $W/hello-before.cubin $W/hello-params.cubin && echo "hello-before and hello-params: cubins byte-identical" \
  || { cmp -s $W/hello-before.sass $W/hello-params.sass && echo "hello-before and hello-params: SASS identical" || echo "hello-params SASS DIFFERS"; }
for round in 1 2; do
  for v in rc-before rc-now; do
    export XDG_CACHE_HOME=$W/cache-$v-$round; rm -rf $XDG_CACHE_HOME
    s=$(date +%s.%N); $G run $W/$v.ptx > $W/$v-out-$round.txt 2>$W/$v-err-$round.txt; rc=$?; e=$(date +%s.%N)
    s2=$(date +%s.%N); $G run $W/$v.ptx > /dev/null 2>&1; e2=$(date +%s.%N)
    echo "round $round $v real-crates first load+run $(python3 -c "print(round($e - $s, 2))") s (rc $rc), cached $(python3 -c "print(round($e2 - $s2, 2))") s"
  done
done
cmp -s $W/rc-before-out-1.txt $W/rc-now-out-1.txt && echo "real-crates output: before and now equal ($(wc -l < $W/rc-now-out-1.txt) lines)" \
  || { echo "real-crates outputs differ"; diff $W/rc-before-out-1.txt $W/rc-now-out-1.txt | head; }
tail -2 $W/rc-now-err-1.txt
