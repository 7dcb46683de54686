#!/usr/bin/env python3
"""bench/load/report.py RAW CONNS THREADS DURATION MEMORY_MB: the load
test's table (medians over the reps, and each rep) in Markdown."""
import statistics
import sys

raw, conns, threads, duration, mem = sys.argv[1:6]
rows = [l.rstrip("\n").split("\t") for l in open(raw)][1:]
cols = ["req_s", "p50_ms", "p90_ms", "p99_ms", "max_ms", "non2xx", "socket_errors",
        "healthz_other_addr_ms", "vmhwm_kb"]
print("`wrk -t%s -c%s -d%s --latency -s bench/load/mixed.lua` against `ember serve "
      "--max-connections %d --max-connections-per-client %s --memory-limit-mb %s`, "
      "%d reps\n" % (threads, conns, duration, int(conns) + 16, conns, mem, len(rows)))
print("| rep | req/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | socket errors | "
      "/healthz from 127.0.0.2 ms | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f |" % (
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], int(r[9]) / 1024))
def num(v):
    return float(v) if v != "failed" else float("nan")


med = [statistics.median(num(r[i + 1]) for r in rows) for i in range(len(cols))]
print("| median | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.1f | %.1f |" % (
    med[0], med[1], med[2], med[3], med[4], med[5], med[6], med[7], med[8] / 1024))
