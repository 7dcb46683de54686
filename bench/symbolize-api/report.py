#!/usr/bin/env python3
"""report.py OUT: the markdown report of bench/symbolize-api/run.sh.

Reads OUT/machine.txt, stats.tsv, raw.tsv (warm), pprof.tsv, cold.tsv and
prints the tables (medians over reps with min-max, paired ratios against
llvm-symbolizer within each rep, the goals of the issue).
"""
import csv
import os
import re
import shlex
import statistics as st
import sys

out = sys.argv[1]
med = st.median
C_BINARIES = ("objdump", "c_O2_pie", "c_O2_nopie", "libfixture.so")


def fields(s):
    return dict(kv.split("=", 1) for kv in shlex.split(s) if "=" in kv)


def rows(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return []
    res = []
    for r in csv.DictReader(open(path), delimiter="\t"):
        r.update(fields(r.pop("fields") or ""))
        res.append(r)
    return res


def rng(v, f):
    return f"{f(med(v))} ({f(min(v))}–{f(max(v))})" if len(v) > 1 else f(v[0])


def rate(x):
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k" if x >= 1e4 else f"{x / 1e3:.1f}k"


def ms(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


machine = dict(l.rstrip("\n").split("\t", 1) for l in open(os.path.join(out, "machine.txt")) if "\t" in l)
stats = {r["binary"]: r for r in csv.DictReader(open(os.path.join(out, "stats.tsv")), delimiter="\t")}
warm, pprof, cold = rows("raw.tsv"), rows("pprof.tsv"), rows("cold.tsv")


def dwarf_mb(b):
    return int(stats[b]["dwarf_bytes"]) / 1e6


def mbs(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


print("# Symbolization API benchmark: `ember serve` against a warm llvm-symbolizer\n")
print(f"{machine['date']}; {machine['cpu']}, {machine['mem']}; llvm-symbolizer {machine['llvm']}; "
      f"{machine['reps']} reps; `{machine['ember']}`.")
loads = [float(r["load1"]) for r in warm + pprof + cold]
print(f"Load average (1/5/15 min): before {machine['load_before']}, at the end {machine.get('load_after', '?')}; "
      + (f"1-min load over the measurements {min(loads):.2f}–{max(loads):.2f} (median {med(loads):.2f}); " if loads else "")
      + f"compiler processes running: {machine.get('compilers_before', '?')} at the start, "
      f"{machine.get('compilers_after', '?')} at the end.\n")
print("DWARF = sum of the `.debug_*` section sizes (`readelf -S`); MB = 10^6 bytes.\n")

# ---------------------------------------------------------------- warm
if warm:
    bins = list(dict.fromkeys(r["binary"] for r in warm))
    reps = sorted({r["rep"] for r in warm}, key=int)
    batches = sorted({int(r["batch"]) for r in warm if r["tool"] == "ember"})

    def cell(b, tool, batch=None):
        return [r for r in warm if r["binary"] == b and r["tool"] == tool
                and (batch is None or int(r["batch"]) == batch)]

    def paired(b, batch, key="wall_s"):
        v = []
        for rp in reps:
            e = [r for r in cell(b, "ember", batch) if r["rep"] == rp]
            l = [r for r in cell(b, "llvm") if r["rep"] == rp]
            if e and l:
                v.append((int(e[0]["addrs"]) / float(e[0]["wall_s"])) /
                         (int(l[0]["addrs"]) / float(l[0][key])))
        return v

    print("## Warm: addresses per second\n")
    print(f"One keep-alive HTTP connection, {machine['duration']} s of requests per cell; llvm-symbolizer "
          f"as a coprocess fed {int(machine['llvm_n']):,} addresses one line at a time. "
          "Medians over reps (min–max). *wall*: addresses / client wall time (end to end, HTTP and "
          "JSON included); *per server CPU s*: addresses / (utime+stime of the server, or of "
          "llvm-symbolizer, over the same window); *ratio*: Ember's wall rate / llvm-symbolizer's, "
          "paired within each rep; *2nd pass*: the same llvm-symbolizer process fed the same "
          "addresses again (every unit they touch already parsed: its best case), and the ratio "
          "against that.\n")
    print("| binary (DWARF) | who | batch | addr/s wall | addr/s per server CPU s | server CPU % | client CPU % | request ms | frames/addr | ratio vs llvm | vs llvm 2nd pass |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|---|---|")
    for b in bins:
        head = f"{b} ({mbs(dwarf_mb(b))} MB)"
        l = cell(b, "llvm")
        if l:
            w = [int(r["addrs"]) / float(r["wall_s"]) for r in l]
            c = [int(r["addrs"]) / float(r["llvm_cpu_s"]) for r in l if float(r["llvm_cpu_s"]) > 0]
            sp = [100 * float(r["llvm_cpu_s"]) / float(r["wall_s"]) for r in l]
            cp = [100 * float(r["client_cpu_s"]) / float(r["wall_s"]) for r in l]
            per = [1e3 * float(r["wall_s"]) / int(r["addrs"]) for r in l]
            fr = int(l[0]["frames"]) / int(l[0]["addrs"])
            print(f"| {head} | llvm-symbolizer | 1 | {rng(w, rate)} | {rng(c, rate) if c else '-'} | "
                  f"{med(sp):.0f} | {med(cp):.0f} | {med(per):.3f} | {fr:.3f} | 1 | |")
            hw = [int(r["addrs"]) / float(r["hot_wall_s"]) for r in l]
            hc = [int(r["addrs"]) / float(r["hot_llvm_cpu_s"]) for r in l if float(r["hot_llvm_cpu_s"]) > 0]
            hp = [1e3 * float(r["hot_wall_s"]) / int(r["addrs"]) for r in l]
            print(f"| {head} | llvm-symbolizer, 2nd pass | 1 | {rng(hw, rate)} | {rng(hc, rate) if hc else '-'} | "
                  f"{med([100 * float(r['hot_llvm_cpu_s']) / float(r['hot_wall_s']) for r in l]):.0f} | | "
                  f"{med(hp):.3f} | | | 1 |")
        for n in batches:
            e = cell(b, "ember", n)
            if not e:
                continue
            w = [int(r["addrs"]) / float(r["wall_s"]) for r in e]
            c = [int(r["addrs"]) / float(r["server_cpu_s"]) for r in e if float(r["server_cpu_s"]) > 0]
            sp = [100 * float(r["server_cpu_s"]) / float(r["wall_s"]) for r in e]
            cp = [100 * float(r["client_cpu_s"]) / float(r["wall_s"]) for r in e]
            rq = [float(r["req_ms_median"]) for r in e]
            fr = int(e[0]["frames_first"]) / n
            bad = [r for r in e if int(r["resolved_first"]) != n]
            pr, ph = paired(b, n), paired(b, n, "hot_wall_s")
            print(f"| {head} | Ember | {n:,} | {rng(w, rate)} | {rng(c, rate) if c else '-'} | {med(sp):.0f} | "
                  f"{med(cp):.0f} | {ms(med(rq))} | {fr:.3f}{' ⚠ unresolved' if bad else ''} | "
                  f"{rng(pr, lambda x: f'{x:.1f}x') if pr else '-'} | {rng(ph, lambda x: f'{x:.1f}x') if ph else '-'} |")
    print("\n*frames/addr*: frames per address in the first answer (Ember: the first request of the "
          "batch; llvm-symbolizer: all its addresses), a check that both sides do the same work "
          "(inline frames on both).  Every Ember request answered 200, and every address of each "
          "cell's first answer was resolved unless marked.\n")

    fr = [(k[len("first_request_"):], fields(v).get("warmup_ms")) for k, v in machine.items()
          if k.startswith("first_request_")]
    if fr:
        print("First request of each binary on the warm server (1 address; builds the index): "
              + ", ".join(f"{b} {float(t):.1f} ms" for b, t in fr if t) + ".  Server memory after the "
              f"warm and pprof parts: {machine.get('server_after', '?')} (answers are streamed in "
              "64 KB chunks, so a 200 MB answer never sits whole in memory).\n")
    print("### Against the warm goals\n")
    print("| goal | binary | " + " | ".join(f"batch {n:,}" for n in batches) + " | status |")
    print("|---|---|" + "---|" * len(batches) + "---|")
    for b in bins:
        if b not in C_BINARIES:
            continue
        vals, ok = [], []
        for n in batches:
            c = [int(r["addrs"]) / float(r["server_cpu_s"]) for r in cell(b, "ember", n) if float(r["server_cpu_s"]) > 0]
            vals.append(rate(med(c)) if c else "-")
            ok.append(bool(c) and med(c) >= 1e6)
        st_ = "met at every batch" if all(ok) else ("met at some batches" if any(ok) else "**not met**")
        print(f"| ≥ 1M addr/s per core (server CPU), C | {b} | {' | '.join(vals)} | {st_} |")
    for b in bins:
        vals, ok = [], []
        for n in batches:
            pr = paired(b, n)
            vals.append(f"{med(pr):.1f}x" if pr else "-")
            ok.append(bool(pr) and med(pr) >= 5)
        st_ = "met at every batch" if all(ok) else ("met at some batches" if any(ok) else "**not met**")
        print(f"| ≥ 5x llvm-symbolizer, wall, end to end | {b} | {' | '.join(vals)} | {st_} |")
    for b in bins:
        vals = []
        for n in batches:
            ph = paired(b, n, "hot_wall_s")
            vals.append(f"{med(ph):.1f}x" if ph else "-")
        print(f"| (the same against llvm-symbolizer's 2nd pass) | {b} | {' | '.join(vals)} | |")
    print()

# ---------------------------------------------------------------- pprof
if pprof:
    reqs = [float(r["ms"]) for r in pprof if "ms" in r]
    summ = [r for r in pprof if "ms_median" in r]
    print("## pprof: POST /api/v1/symbolize/pprof\n")
    print(f"Profile: {machine.get('pprof_profile', '?')}; 10,000 samples, 2,000 distinct locations over 5 "
          "mappings (objdump, cxx_O2, c_O2_pie, c_O2_nopie, libfixture.so) with build IDs and "
          "perf-style start/limit/offset.  One warm-up request per rep, then "
          f"{summ[0]['n'] if summ else '?'} timed ones on one keep-alive connection.\n")
    print("| requests | median ms (min–max of all) | per-rep medians | server CPU ms/request | client CPU ms/request | profile bytes | answer bytes | X-Ember-Locations | goal < 50 ms |")
    print("|---:|---|---|---:|---:|---:|---:|---|---|")
    m = med(reqs)
    print(f"| {len(reqs)} | {ms(m)} ({ms(min(reqs))}–{ms(max(reqs))}) | "
          f"{', '.join(ms(float(r['ms_median'])) for r in summ)} | "
          f"{med([float(r['server_cpu_ms_per_req']) for r in summ]):.1f} | "
          f"{med([float(r['client_cpu_ms_per_req']) for r in summ]):.1f} | {summ[0]['profile_bytes']} | "
          f"{summ[0]['answer_bytes']} | {summ[0]['locations']} | {'met' if m < 50 else '**not met**'} |")
    print(f"\n`go tool pprof -top -symbolize=none` on the answer: {machine.get('pprof_top', 'not run')}.\n")

# ---------------------------------------------------------------- cold
if cold:
    print("## Cold: server start to the first answer\n")
    print("`apibench cold` spawns `ember serve` (posix_spawn), waits for its `listening on` line "
          "(blocked on the pipe, no CPU) and POSTs /api/v1/symbolize with one address: *first "
          "answer* is spawn to the answer.  (a) fresh data directory (files uploaded by an "
          "earlier, stopped server): the index must be built from DWARF; (b) a server restarted "
          "on the same directory after (a) answered; (c) the same as (b), spawning the server "
          "binary `ember-server serve` itself (`ember serve` execs it: the difference is that "
          "exec).  *listening*: spawn to that line (process start, dynamic loading, listen; the "
          "store opens after it); *request*: the answering request; *faults*: the server's minor "
          "page faults (/proc/PID/stat) at its `listening` line and at the answer (a fault costs "
          "10-25 µs on this VM).  Medians over reps (min–max) for the first column, medians for "
          "the others.\n")
    print("| binary | DWARF MB | case | first answer ms | listening ms | request ms | next request ms | faults listening / answer | server VmHWM MB | index in memory MB | index on disk (files) | on disk / DWARF |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    bins = list(dict.fromkeys(r["binary"] for r in cold))
    for b in bins:
        for c in ("a", "b", "c"):
            v = [r for r in cold if r["binary"] == b and r["case"] == c]
            if not v:
                continue
            fa = [float(r["first_answer_ms"]) for r in v]
            ready = [float(r["listening_ms"]) for r in v]
            req = [float(r["last_attempt_ms"]) for r in v]
            nxt = [float(r["second_req_ms"]) for r in v]
            hwm = [int(r["vmhwm_kb"]) / 1024 for r in v]
            flt = [(int(r.get("faults_listening", -1)), int(r.get("faults_first_answer", -1))) for r in v]
            flt_s = f"{med([f[0] for f in flt]):.0f} / {med([f[1] for f in flt]):.0f}" if min(flt)[0] >= 0 else "?"
            im = [int(r.get("index_mem_bytes", -1)) / 1e6 for r in v]
            bad = [r for r in v if r["resolved"] != "1"]
            if c == "a":
                ib = [int(r["index_bytes"]) for r in v]
                files = v[-1]["index_files"]
                idx = f"{med(ib):,} B ({files})" if med(ib) else "none"
                ratio = f"{med(ib) / int(stats[b]['dwarf_bytes']):.2f}" if med(ib) else "-"
            else:
                idx, ratio = "", ""
            label = {"a": "(a) build from DWARF", "b": "(b) restart, same data",
                     "c": "(c) as (b), `ember-server serve`"}[c]
            print(f"| {b} | {mbs(dwarf_mb(b))} | {label}{' ⚠ unresolved' if bad else ''} | {rng(fa, ms)} | "
                  f"{ms(med(ready))} | {ms(med(req))} | {ms(med(nxt))} | {flt_s} | {med(hwm):.1f} | "
                  f"{mbs(med(im)) if med(im) >= 0 else '?'} | {idx} | {ratio} |")
    print()
    print("Index in memory: `ember_symbol_cache_bytes` from `/metrics` after the answer.\n")
    print("Goal: under 10 ms from start to the first answer for a binary with 100 MB of DWARF.")
    for b in bins:
        for c in ("a", "b", "c"):
            v = [float(r["first_answer_ms"]) for r in cold if r["binary"] == b and r["case"] == c]
            if v:
                print(f"- {b} ({mbs(dwarf_mb(b))} MB of DWARF), ({c}): {ms(med(v))} ms: "
                      f"{'under' if med(v) < 10 else '**over**'} 10 ms"
                      + (f"; {100 / dwarf_mb(b):.1f}x less DWARF than the goal's binary" if dwarf_mb(b) < 100 else ""))
    dbd = [int(r["db_delta_bytes"]) for r in cold if r["case"] == "a" and "db_delta_bytes" in r]
    if dbd:
        print(f"\nChange in the size of RocksDB's directory across an (a) run: {min(dbd):,} to {max(dbd):,} bytes "
              "(its own logs, options and compaction at each open; an index kept in RocksDB would show here "
              "as megabytes).")
