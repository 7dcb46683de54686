#!/usr/bin/env python3
"""bench/ab/profile-store.py - the profile store's benchmarks of two builds,
interleaved and paired: pstore-bench, and ingest with symbolization (in
process and over HTTP).

    bench/ab/profile-store.py [--pairs N] [--what pstore,ingest] \
        [--binary ELF] [--n PROFILES] [--rounds R] [--peer] BUILD_A BUILD_B

BUILD_A and BUILD_B are two Release build directories (each with
pstore-bench, pstore-ingest-bench and ember).  For each of --pairs pairs
(default 4) and each benchmark of --what (default both), A and B run one
after the other, the order flipping every pair, on fresh directories under
--out (default $TMPDIR/ember-ab-pstore), with the same inputs:

  pstore: `pstore-bench -n -r 3` (bench/profile-store/pstore_bench.c; the
      two streams without fsync, then the cold and warm queries and
      diffs).  Without --peer the run is stopped once the diff's table is
      printed: the fsync group-commit pass and the peer (a minute of
      decoding 7,200 pprof files) measure neither side's code.  Figures:
      the appending thread's CPU a profile, the compaction thread's, the
      warm query's and diff's CPU (the querying thread's, median of 3) and
      wall time, and the block bytes a profile.
  ingest: `pstore-ingest-bench -b ELF -n PROFILES -r ROUNDS -F` (in
      process: the service's ingest, symbolized at ingest and already
      symbolized, without fsync) and bench/profile-store/ingest_http.py
      against the build's `ember` (1 connection, PROFILES pushes; the
      server's CPU a profile from /proc/PID/stat, in 10 ms clock ticks).
      The profiles point into ELF (default: bench/profile-store's own
      default, the Debug build's ember-server: a binary with DWARF and
      thousands of functions); they are written once, by B's
      pstore-ingest-bench -w, and sent to both sides.

Prints every run's figures, then per figure the medians of A and B and the
median and range of the paired ratios B/A (B's run against A's run of the
same pair): a difference is beyond noise when that range stays on one side
of 1.  /proc/loadavg is printed before and after each run.  Raw lines go to
OUT/raw.txt.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# pstore-bench line -> (figure, regex of its value)
PSTORE = [
    ("ingest_cpu_us", r"^ingest_nofsync .*, ([0-9.]+) us cpu/profile"),
    ("compaction_cpu_us", r"^compaction_cpu ([0-9.]+)"),
    ("block_bytes", r"^block_bytes_per_profile ([0-9.]+)"),
    ("query_cold_cpu_ms", r"^query_flame_cold_cpu ([0-9.]+)"),
    ("query_warm_ms", r"^query_flame_warm ([0-9.]+)"),
    ("query_warm_cpu_ms", r"^query_flame_warm_cpu ([0-9.]+)"),
    ("diff_warm_ms", r"^diff_flame_table_warm ([0-9.]+)"),
    ("diff_warm_cpu_ms", r"^diff_flame_table_warm_cpu ([0-9.]+)"),
]
INGEST = [
    ("sym_thread_cpu_us", r"^symbolized_at_ingest_thread_cpu_us ([0-9.]+)"),
    ("sym_process_cpu_us", r"^symbolized_at_ingest_process_cpu_us ([0-9.]+)"),
    ("named_thread_cpu_us", r"^already_symbolized_thread_cpu_us ([0-9.]+)"),
    ("http1_server_cpu_us", r"^http_server_cpu_us_per_profile ([0-9.]+)"),
    ("http1_wall_profiles_s", r"^http_wall_profiles_s ([0-9.]+)"),
]


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def parse(text, table):
    got = {}
    for name, rx in table:
        m = re.search(rx, text, re.M)
        if m:
            got[name] = float(m.group(1))
    return got


def run_pstore(build, work, peer):
    cmd = ["stdbuf", "-oL", os.path.join(build, "pstore-bench"), "-n", "-r", "3", "-d", work]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    text = ""
    for line in p.stdout:
        text += line
        if line.startswith("diff_top_row") and not peer:
            p.terminate()
            break
    p.wait()
    shutil.rmtree(work, ignore_errors=True)
    if "diff_top_row" not in text:
        sys.exit("profile-store.py: %s ended early:\n%s" % (" ".join(cmd), text))
    return parse(text, PSTORE)


def run_ingest(build, work, opts, pdir):
    text = subprocess.run([os.path.join(build, "pstore-ingest-bench"), "-b", opts.binary,
                           "-n", str(opts.n), "-r", str(opts.rounds), "-F", "-d", work],
                          check=True, capture_output=True, text=True).stdout
    shutil.rmtree(work, ignore_errors=True)
    text += subprocess.run([sys.executable, os.path.join(ROOT, "bench/profile-store/ingest_http.py"),
                            os.path.join(build, "ember"), opts.binary, pdir, str(opts.n), "1"],
                           check=True, capture_output=True, text=True).stdout
    return parse(text, INGEST)


def summary(rows, label_a, label_b):
    names = []
    for (_, _, _, got) in rows:
        names += [k for k in got if k not in names]
    print("\nfigure  A median [min, max]  B median [min, max]  paired B/A median [min, max]")
    for k in names:
        a = {p: g[k] for (p, s, _, g) in rows if s == "a" and k in g}
        b = {p: g[k] for (p, s, _, g) in rows if s == "b" and k in g}
        pr = [b[p] / a[p] for p in a if p in b and a[p]]
        if not pr:
            continue
        print("%-22s %s %.1f [%.1f, %.1f]  %s %.1f [%.1f, %.1f]  %.3f [%.3f, %.3f]" % (
            k, label_a, statistics.median(a.values()), min(a.values()), max(a.values()),
            label_b, statistics.median(b.values()), min(b.values()), max(b.values()),
            statistics.median(pr), min(pr), max(pr)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build_a")
    ap.add_argument("build_b")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--what", default="pstore,ingest")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ember-server"))
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer", action="store_true")
    ap.add_argument("--label", default="A,B")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "ember-ab-pstore"))
    opts = ap.parse_args()
    la, lb = opts.label.split(",")
    builds = {"a": os.path.abspath(opts.build_a), "b": os.path.abspath(opts.build_b)}
    os.makedirs(opts.out, exist_ok=True)
    raw = open(os.path.join(opts.out, "raw.txt"), "w")
    pdir = os.path.join(opts.out, "profiles")
    if "ingest" in opts.what:
        shutil.rmtree(pdir, ignore_errors=True)
        os.makedirs(pdir)
        subprocess.run([os.path.join(builds["b"], "pstore-ingest-bench"), "-b", opts.binary,
                        "-w", pdir], check=True, stdout=subprocess.DEVNULL)
    for what in opts.what.split(","):
        rows = []
        for i in range(1, opts.pairs + 1):
            for side in ("a", "b") if i % 2 else ("b", "a"):
                work = os.path.join(opts.out, "run-%s" % side)
                l0 = load()
                got = (run_pstore(builds[side], work, opts.peer) if what == "pstore"
                       else run_ingest(builds[side], work, opts, pdir))
                line = "%s %d %s load %s-%s %s" % (what, i, side, l0, load(), " ".join(
                    "%s=%g" % kv for kv in got.items()))
                print(line, flush=True)
                raw.write(line + "\n")
                raw.flush()
                rows.append((i, side, l0, got))
        print("\n## %s: %d pairs (A %s, B %s)" % (what, opts.pairs, builds["a"], builds["b"]))
        summary(rows, la, lb)
        sys.stdout.flush()


main()
