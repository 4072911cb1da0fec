#!/usr/bin/env bash
# Same PTX but for names (before / after gpu-ld's short local names): whole-program ptxas time
# and SASS of hello-threads, first (empty cubin cache) and cached loads of real-crates.
set -u
N=gpu-carry/names; G=${G:-gpu-bundle/gpurun}
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/names; rm -rf $W; mkdir -p $W
for v in before after; do mkdir -p $W/$v; for f in hello-threads real-crates; do gunzip -c $N/$v/$f.ptx.gz > $W/$v/$f.ptx; done; done
echo "ptxas $(ptxas --version | tail -1)"
for round in 1 2; do
  for v in before after; do
    s=$(date +%s.%N); ptxas -arch=sm_90 -O3 $W/$v/hello-threads.ptx -o $W/$v/hello.cubin; e=$(date +%s.%N)
    echo "round $round $v hello-threads whole-program ptxas $(python3 -c "print(round($e - $s, 2))") s, cubin $(stat -c %s $W/$v/hello.cubin) B"
  done
done
for v in before after; do
  cuobjdump -sass $W/$v/hello.cubin | grep -E '^\s+/\*[0-9a-f]{4,}\*/' | sed -E 's@^\s+/\*[0-9a-f]+\*/\s*@@; s@\s*/\*.*@@' > $W/$v/sass.txt
  echo "$v: $(wc -l < $W/$v/sass.txt) SASS instructions"
done
if cmp -s $W/before/sass.txt $W/after/sass.txt; then echo "SASS instruction streams identical"; else echo "SASS differs:"; diff $W/before/sass.txt $W/after/sass.txt | head -20; fi
for round in 1 2; do
  for v in before after; do
    export XDG_CACHE_HOME=$W/cache-$v-$round; rm -rf $XDG_CACHE_HOME
    s=$(date +%s.%N); $G run $W/$v/real-crates.ptx > $W/$v/out-$round.txt 2>$W/$v/err-$round.txt; rc=$?; e=$(date +%s.%N)
    s2=$(date +%s.%N); $G run $W/$v/real-crates.ptx > /dev/null 2>&1; e2=$(date +%s.%N)
    echo "round $round $v real-crates first load+run $(python3 -c "print(round($e - $s, 2))") s (rc $rc), cached $(python3 -c "print(round($e2 - $s2, 2))") s"
  done
done
cmp -s $W/before/out-1.txt $W/after/out-1.txt && echo "real-crates output: before and after equal ($(wc -l < $W/after/out-1.txt) lines)" || { echo "real-crates outputs differ"; diff $W/before/out-1.txt $W/after/out-1.txt | head; }
tail -3 $W/after/err-1.txt
