set -u
export PATH=$PATH:/usr/local/cuda/bin
W=/tmp/s21load; rm -rf $W; mkdir -p $W
echo "bundle $(cat gpu-bundle/COMMIT); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for r in 1 2; do s=$(date +%s.%N); ptxas -arch=sm_90 -O3 gpu-bundle/hello-threads-sm_90.ptx -o $W/hello.cubin; e=$(date +%s.%N); echo "hello-threads whole-program ptxas $(python3 -c "print(round($e-$s,2))") s, cubin $(stat -c %s $W/hello.cubin) B"; done
echo "hello-threads: $(cuobjdump -sass $W/hello.cubin | grep -cE '^\s+/\*[0-9a-f]{4,}\*/') SASS instructions"
for r in 1 2; do
  export XDG_CACHE_HOME=$W/cache-$r
  s=$(date +%s.%N); gpu-bundle/gpurun run gpu-bundle/real-crates-sm_90.ptx > $W/rc-$r.out 2>$W/rc-$r.err; rc=$?; e=$(date +%s.%N)
  s2=$(date +%s.%N); gpu-bundle/gpurun run gpu-bundle/real-crates-sm_90.ptx > /dev/null 2>&1; e2=$(date +%s.%N)
  echo "round $r real-crates first load+run $(python3 -c "print(round($e-$s,2))") s (rc $rc), cached $(python3 -c "print(round($e2-$s2,2))") s"
done
cmp -s $W/rc-1.out gpu-bundle/real-crates.expected && echo "real-crates output equal to the host's" || echo "real-crates output DIFFERS from the host's"
tail -1 $W/rc-1.err
