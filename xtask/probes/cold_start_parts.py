#!/usr/bin/env python3
"""Where a cold start's time goes: times process start to the first line on
stdout (as `gpurun-dev bench` times the cold_start row) for several commands,
interleaved round by round, and prints p50/min per command.

    python3 xtask/probes/cold_start_parts.py ROUNDS 'label=command' ...

One uncounted start per command first (file cache, cubin cache)."""
import shlex
import statistics
import subprocess
import sys
import time


def first_line_ns(cmd):
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline()
    t = time.perf_counter_ns() - t0
    p.stdout.read()
    rc = p.wait()
    if not line or rc != 0:
        raise SystemExit(f"{cmd}: exit {rc}, first line {line!r}")
    return t


def main():
    rounds = int(sys.argv[1])
    cmds = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[2:]]
    for _, c in cmds:
        first_line_ns(c)
    samples = {label: [] for label, _ in cmds}
    for _ in range(rounds):
        for label, c in cmds:
            samples[label].append(first_line_ns(c))
    base = statistics.median(samples[cmds[0][0]])
    for label, _ in cmds:
        s = samples[label]
        p50 = statistics.median(s)
        print(f"{label:40s} p50 {p50 / 1e6:8.2f} ms  min {min(s) / 1e6:8.2f} ms  x{p50 / base:.3f} of {cmds[0][0]}  ({len(s)} starts)")


if __name__ == "__main__":
    main()
