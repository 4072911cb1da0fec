#!/usr/bin/env python3
"""Summarises scripts/gpu-profile.sh's source.csv.gz by Rust source line.

    python3 xtask/probes/ncu_source_lines.py source.csv.gz ITERATIONS [TOP]

A benchmark loop runs ITERATIONS times; the lines whose execution count is
a whole multiple of it (and not of the warp count, 4,224 on the H100: the
start-up code every warp runs) are that loop's. Prints, for those lines,
warp-level instructions per iteration and the warp-stall samples, and the
SASS opcodes per iteration (fences: MEMBAR.ALL.GPU with CCTL.IVALL, the
L1 invalidation of an acquire at device scope).
"""
import collections
import csv
import gzip
import sys

WARPS = 4224


def main():
    path, it = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rows = list(csv.reader(gzip.open(path, "rt")))
    file_path = None
    lines = collections.defaultdict(lambda: [0, 0, ""])
    ops = collections.Counter()
    in_loop = False
    for r in rows:
        if not r:
            continue
        if r[0] == "File Path":
            file_path = r[1]
            continue
        if r[0] in ("Function Name", "Line No"):
            continue
        executed = int(r[7]) if r[7].isdigit() else 0
        if r[0]:  # a source line, its figures summed over its SASS
            q = executed / it
            in_loop = executed > 0 and abs(q - round(q)) < 0.03 and round(q) > 0 and executed % WARPS != 0
            if in_loop:
                key = (file_path.split("/library/")[-1], int(r[0]))
                entry = lines[key]
                entry[0] += int(r[4] or 0)
                entry[1] += executed
                entry[2] = r[1].strip()
        elif in_loop and r[2] not in ("-", "..."):
            src = r[3].strip()
            if src.startswith("@"):
                src = src.split(None, 1)[1]
            ops[src.split()[0]] += executed
    samples = sum(e[0] for e in lines.values())
    per_iter = sum(e[1] for e in lines.values()) / it
    print(f"{len(lines)} source lines in the loop, {per_iter:.0f} warp instructions per iteration, {samples} samples")
    print("--- lines by instructions per iteration (samples)")
    for (f, n), (s, e, src) in sorted(lines.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{e / it:7.1f} {s:6d}  {f}:{n}  {src[:80]}")
    print("--- opcodes per iteration")
    for op, n in ops.most_common(top):
        print(f"{n / it:7.1f}  {op}")


if __name__ == "__main__":
    main()
