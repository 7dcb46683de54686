#!/usr/bin/env python3
"""bench/ab/ab.py - two commands, interleaved, repeated: medians, ranges, ratio.

    bench/ab/ab.py [-n RUNS] [--build DIR] [--stdin FILE] [--field NAME]... \
        [--label A,B] -- CMD_A... -- CMD_B...

Runs CMD_A and CMD_B alternately RUNS times (default 21; the order of the
pair flips every run so neither always goes first), each as a fresh
process under ember-runone (bench/runone.c) from the build directory
(--build, default build-release/), after one untimed warm-up run each
(the files in the page cache).  Both read --stdin (default /dev/null).
Metrics: wall_s (fork to exit), cpu_s (user_s + sys_s: the steadier one
when other jobs take the cores), user_s, sys_s, maxrss_kb (peak RSS),
minflt (page faults), and
every --field NAME: the number after the token NAME in the command's
stdout or stderr ("first_s 0.0312" from ember-unwind-bench, say).

Prints, per metric: the median and [min, max] of A and of B, the ratio of
the medians B/A, and the median and range of the paired ratios B_i/A_i
(run i of B against run i of A, measured back to back: the load the
machine is under moves both).  A difference is stable when the paired
ratios' range stays on one side of 1.  The load (/proc/loadavg) before
and after is printed with the figures.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BASE = ("wall_s", "cpu_s", "user_s", "sys_s", "maxrss_kb", "minflt")


def find_runone(build):
    if not build:
        here = os.path.dirname(os.path.abspath(__file__))
        build = os.path.join(os.path.dirname(os.path.dirname(here)), "build-release")
    p = os.path.join(build, "ember-runone")
    if not os.access(p, os.X_OK):
        sys.exit(f"ab.py: no {p} (make build-release, or "
                 f"cmake --build {build} --target ember-runone)")
    return p


def run_once(runone, cmd, opts, tmp):
    fields = opts.field
    out = os.path.join(tmp, "out")
    line = subprocess.run([runone, opts.stdin, out, "600", *cmd],
                          check=True, capture_output=True, text=True).stdout
    wall, user, sys_, rss, rc, minflt, _ = line.split()
    if rc != "0":
        err = open(out + ".err", errors="replace").read()
        sys.exit(f"ab.py: {' '.join(cmd)}: exit {rc}\n{err}")
    m = {"wall_s": float(wall), "cpu_s": float(user) + float(sys_),
         "user_s": float(user), "sys_s": float(sys_),
         "maxrss_kb": float(rss), "minflt": float(minflt)}
    text = open(out, errors="replace").read() + open(out + ".err", errors="replace").read()
    for f in fields:
        hit = re.search(r"(?:^|\s)" + re.escape(f) + r"[\s=:]+([-+0-9.eE]+)", text)
        if not hit:
            sys.exit(f"ab.py: no '{f}' in the output of {' '.join(cmd)}")
        m[f] = float(hit.group(1))
    return m


def split_cmds(argv):
    if argv.count("--") != 2 or argv[0] != "--":
        sys.exit("ab.py: give the commands as -- CMD_A... -- CMD_B...")
    k = argv.index("--", 1)
    a, b = argv[1:k], argv[k + 1:]
    if not a or not b:
        sys.exit("ab.py: an empty command")
    return a, b


def fmt(v):
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def main():
    argv = sys.argv[1:]
    k = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=21)
    ap.add_argument("--build")
    ap.add_argument("--field", action="append", default=[])
    ap.add_argument("--label", default="A,B")
    ap.add_argument("--stdin", default="/dev/null")
    opts = ap.parse_args(argv[:k])
    cmd_a, cmd_b = split_cmds(argv[k:])
    la, lb = opts.label.split(",")
    runone = find_runone(opts.build)
    load0 = open("/proc/loadavg").read().split()[:3]
    res = {la: [], lb: []}
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in (cmd_a, cmd_b):
            run_once(runone, cmd, opts, tmp)
        for i in range(opts.n):
            pair = [(la, cmd_a), (lb, cmd_b)]
            for lab, cmd in (pair if i % 2 == 0 else pair[::-1]):
                res[lab].append(run_once(runone, cmd, opts, tmp))
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"A ({la}): {' '.join(cmd_a)}")
    print(f"B ({lb}): {' '.join(cmd_b)}")
    print(f"{opts.n} interleaved runs each; {os.cpu_count()} cores; load "
          f"{' '.join(load0)} before, {' '.join(load1)} after; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'metric':<12} {la + ' median':>12} {la + ' range':>21} "
          f"{lb + ' median':>12} {lb + ' range':>21} {'B/A':>6} {'paired B/A [range]':>22}")
    for metric in (*BASE, *opts.field):
        a = [r[metric] for r in res[la]]
        b = [r[metric] for r in res[lb]]
        ma, mb = statistics.median(a), statistics.median(b)
        pr = [y / x for x, y in zip(a, b) if x]
        ratio = mb / ma if ma else float("nan")
        pr_s = (f"{statistics.median(pr):.3f} [{min(pr):.3f}, {max(pr):.3f}]"
                if pr else "-")
        print(f"{metric:<12} {fmt(ma):>12} {'[' + fmt(min(a)) + ', ' + fmt(max(a)) + ']':>21} "
              f"{fmt(mb):>12} {'[' + fmt(min(b)) + ', ' + fmt(max(b)) + ']':>21} "
              f"{ratio:6.3f} {pr_s:>22}")


if __name__ == "__main__":
    main()
