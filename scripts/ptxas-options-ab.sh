#!/usr/bin/env bash
# ptxas options on the programs that did not compile in 200 s at -O3 (whole
# program): -c (relocatable, then nvlink), -O1, -O0, on a CUDA machine, from
# gpu-bundle/load (scripts/make-load-bundle.sh). What it found on the H100
# (2026-11-23): -c compiles far faster than whole-program, but a part's
# functions need the kernel's register cap passed as
# `--device-function-maxrregcount N` (nvlink refuses the link otherwise),
# and nvlink takes its inputs by extension (.o). launcher/src/cubin_cache.rs
# does it that way. Kept to re-run that comparison.
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/pab; rm -rf $W; mkdir -p $W
for p in real-crates std-coverage; do gunzip -c gpu-bundle/load/$p.ptx.gz > $W/$p.ptx; done
now() { date +%s.%N; }
for p in real-crates std-coverage; do
  for o in "O3 -c" "O1" "O1 -c" "O0 -c"; do
    n=$p-$(echo $o | tr -d ' -')
    ( ulimit -v $((14 << 20)); t=$(now)
      /usr/bin/time -f %M -o $W/$n.rss timeout 300 ptxas -arch=sm_90 -$o $W/$p.ptx -o $W/$n.out > $W/$n.log 2>&1; rc=$?
      echo "ptxas -$o $p: exit $rc, $(awk "BEGIN{printf \"%.1f\", $(now) - $t}") s, rss $(tail -1 $W/$n.rss) KB"; tail -2 $W/$n.log ) &
  done
done
wait
for f in $W/*-O3c.out $W/*-O1c.out $W/*-O0c.out; do  # (nvlink wants .o names: these give an empty link)
  [ -s "$f" ] || continue
  t=$(now); nvlink -arch=sm_90 $f -o ${f%.out}.cubin > ${f%.out}.nvlink.log 2>&1; echo "nvlink $(basename $f): exit $? $(awk "BEGIN{printf \"%.1f\", $(now) - $t}") s"; tail -2 ${f%.out}.nvlink.log
done
for f in $W/*-O1.out; do [ -s "$f" ] && cp $f ${f%.out}.cubin; done
ls -la $W/*.cubin 2>/dev/null
for c in $W/real-crates-*.cubin; do
  [ -e "$c" ] || continue
  t=$(now); timeout 60 gpu-bundle/load/gpurun run $c > $W/rc.out 2> $W/rc.err; rc=$?
  echo "run $(basename $c): exit $rc $(awk "BEGIN{printf \"%.2f\", $(now) - $t}") s"; tail -3 $W/rc.err
  cmp gpu-bundle/load/real-crates.expected $W/rc.out && echo "  output equals the host's" || diff gpu-bundle/load/real-crates.expected $W/rc.out | head
  mkdir -p $OUT; cp $W/rc.out $OUT/$(basename $c).out
done
for c in $W/std-coverage-*.cubin; do
  [ -e "$c" ] || continue
  t=$(now); timeout 120 gpu-bundle/load/gpurun run $c > $W/sc.out 2> $W/sc.err; rc=$?
  echo "run $(basename $c): exit $rc $(awk "BEGIN{printf \"%.2f\", $(now) - $t}") s"; tail -5 $W/sc.out; tail -3 $W/sc.err
  cp $W/sc.out $OUT/$(basename $c).out; break
done
