#!/usr/bin/env python3
"""sample_addrs.py FUNCS INSNS N SEED > addrs

FUNCS: lines "start size" (hex start, decimal or 0x size) of FUNC symbols.
INSNS: instruction addresses (hex, one a line) from objdump -d.
Writes N addresses drawn uniformly with replacement from the instructions
that lie inside some function range, as 0x%x lines. Uses only
random.Random(SEED).random(), which is the same in every CPython 3.x.
"""
import bisect
import random
import sys


def main():
    funcs_path, insns_path, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ranges = []
    with open(funcs_path) as f:
        for line in f:
            start, size = line.split()
            start = int(start, 16)
            size = int(size, 0)
            ranges.append((start, start + size))
    ranges.sort()
    merged = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    starts = [r[0] for r in merged]
    insns = []
    with open(insns_path) as f:
        for line in f:
            a = int(line, 16)
            i = bisect.bisect_right(starts, a) - 1
            if i >= 0 and a < merged[i][1]:
                insns.append(a)
    insns = sorted(set(insns))
    if not insns:
        sys.exit("no instructions inside FUNC symbols")
    rng = random.Random(seed)
    out = sys.stdout
    m = len(insns)
    for _ in range(n):
        out.write("0x%x\n" % insns[int(rng.random() * m)])
    sys.stderr.write("%d FUNC symbols, %d instructions inside them, %d addresses, seed %d\n"
                     % (len(ranges), m, n, seed))


if __name__ == "__main__":
    main()
