#!/usr/bin/env python3
"""bench/ab/rollup-queries.py - the rollup queries of two pstore-bench
binaries over one stored week, alternating, paired.

    bench/ab/rollup-queries.py A_BENCH B_BENCH [RUNS [STORE_DIR [ARGS [B_STORE_DIR]]]]

A_BENCH and B_BENCH are two pstore-bench binaries (of two Release
builds); STORE_DIR (default /tmp/perf-week) holds a store that
`pstore-bench -d STORE_DIR -w 7` (or ARGS' generation options) stored,
which both query with ARGS (default "-w 7 -k -q -r 5"; the day of 100
series: "-w 1 -i 10 -p 100 -k -q -r 3"; -k -q: no store written, the
same blocks and rollups for both), RUNS times each (default 9), the
order flipping every run.  B_STORE_DIR: B queries its own store there (a
change of the block format: the same profiles stored by each build with
the same generation options).
Prints per case the median of each side's per-run medians (the querying
thread's CPU ms), the median and range of the paired ratios A/B (run i
of A over run i of B: beyond noise when the range stays on one side of
1), and per side each case's median ratio to its own run's 1-hour
query.  /proc/loadavg's first figure goes to stderr after each run.
"""
import re
import statistics
import subprocess
import sys


def run(exe, store, args):
    out = subprocess.run([exe, "-d", store] + args,
                         capture_output=True, text=True, check=True).stdout
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^(\S+)_rollups_cpu ([\d.]+) ms", out, re.M)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    a, b = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    store = sys.argv[4] if len(sys.argv) > 4 else "/tmp/perf-week"
    args = (sys.argv[5] if len(sys.argv) > 5 else "-w 7 -k -q -r 5").split()
    stores = {a: store, b: sys.argv[6] if len(sys.argv) > 6 else store}
    res = {a: [], b: []}
    for i in range(runs):
        for exe in ((a, b) if i % 2 == 0 else (b, a)):
            res[exe].append(run(exe, stores[exe], args))
        with open("/proc/loadavg") as f:
            print(i, f.read().split()[0], file=sys.stderr)
    cases = list(res[a][0])
    print("%-22s %8s %8s %6s %13s" % ("case", "A ms", "B ms", "A/B", "range"))
    for c in cases:
        pa = [r[c] for r in res[a]]
        pb = [r[c] for r in res[b]]
        p = [x / y for x, y in zip(pa, pb) if y > 0] or [float("nan")]
        print("%-22s %8.1f %8.1f %6.2f %6.2f-%5.2f" % (c, statistics.median(pa),
              statistics.median(pb), statistics.median(p), min(p), max(p)))
    for exe in (a, b):
        print(exe, "x the hour:", ", ".join(
            "%s %.2f" % (c, statistics.median([r[c] / r["flame_1h"] for r in res[exe]]))
            for c in cases if c.startswith(("flame", "diff"))))


if __name__ == "__main__":
    main()
