# Sourced by the scripts that run on a GPU machine: this run's facts for its
# JSON rows, and the clock they time with. Needs $B (the bundle, whose COMMIT
# file names the commit built).
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
commit=$(cat "$B/COMMIT" 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# now: a timestamp; since T: seconds from timestamp T, 2 decimals.
now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.2f\", $(now) - $1}"; }
