#!/usr/bin/env python3
"""report.py [OUT_DIR] > report.md

Markdown report of the symbolization benchmark from OUT_DIR/results/raw.tsv
(written by run.sh), OUT_DIR/results/machine.tsv, OUT_DIR/corpus/stats.tsv
and OUT_DIR/addrs/*.info. OUT_DIR defaults to the out/ next to this script.

Per rep r, binary b, tool t:
  full(r)     wall seconds of the run over all its addresses (n of them)
  startup(r)  wall seconds of the 1-address run
  addr/s      n / full(r)                       -> median over reps
  startup s   startup(r)                        -> median
  RSS MB      peak RSS of the full run          -> median
  us/addr excl. startup  (full(r) - startup(r)) / n -> median
  ratio       (full_t(r)/n_t) / (full_llvm(r)/n_llvm), same rep -> median (min-max)
  speed-up    full_peer(r) / full_ember(r), wall and CPU, against the peer
              with the lowest median wall: every rep, then the median
"""
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LABEL = {
    "llvm": "llvm-symbolizer",
    "gnu": "GNU addr2line",
    "eu": "eu-addr2line",
    "gimli": "gimli (addr2line crate, gimli-a2l)",
    "ember": "ember symbolize",
}
ORDER = ["ember", "gimli", "llvm", "gnu", "eu"]
TARGET_NS = 60.0


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def fmt_rate(x):
    if x >= 1e6:
        return "%.2fM" % (x / 1e6)
    if x >= 1e3:
        return "%.1fk" % (x / 1e3)
    return "%.0f" % x


def fmt_ratio(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def mb(x):
    return float(x) / (1 << 20)


def cpu(row):
    return float(row["user_s"]) + float(row["sys_s"])


def ember_vs_fastest_peer(p, bins, tools, runs):
    """Per binary: the peer with the lowest median full-run wall time (eu
    excluded: it answers fewer addresses), and for every rep the peer's
    wall and CPU time over Ember's, both measured in that rep."""
    p("## Ember against the fastest peer, every rep")
    p()
    p("Speed-up = the peer's full-run time over Ember's in the same rep (both answer "
      "every address; above 1: Ember is faster); wall = fork to exit, CPU = user + sys. "
      "Ember's index build runs on two threads, the peers on one, so on a machine whose "
      "cores are taken by other jobs the wall ratio falls towards the CPU ratio.")
    p()
    for b in bins:
        em = runs.get((b, "ember", "full"), {})
        peers = [(statistics.median(float(v["wall_s"]) for v in runs[(b, t, "full")].values()), t)
                 for t in tools if t not in ("ember", "eu") and runs.get((b, t, "full"))]
        if not em or not peers:
            continue
        peer = min(peers)[1]
        pf = runs[(b, peer, "full")]
        reps = [r for r in sorted(em) if r in pf]
        if not reps:
            continue
        p("### %s: ember vs %s" % (b, LABEL.get(peer, peer).split(" (")[0]))
        p()
        p("| rep | ember wall s | %s wall s | speed-up, wall | ember CPU s | %s CPU s | speed-up, CPU | load1 |"
          % (peer, peer))
        p("|---|---|---|---|---|---|---|---|")
        ws, cs = [], []
        for r in reps:
            e, q = em[r], pf[r]
            w = float(q["wall_s"]) / float(e["wall_s"])
            c = cpu(q) / cpu(e) if cpu(e) > 0 else float("nan")
            ws.append(w)
            cs.append(c)
            p("| %d | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2fx | %s |" % (
                r, float(e["wall_s"]), float(q["wall_s"]), w, cpu(e), cpu(q), c, e.get("load1", "?")))
        p("| median | %.3f | %.3f | **%.2fx** (%.2f\u2013%.2f) | %.3f | %.3f | **%.2fx** (%.2f\u2013%.2f) | |" % (
            statistics.median(float(em[r]["wall_s"]) for r in reps),
            statistics.median(float(pf[r]["wall_s"]) for r in reps),
            statistics.median(ws), min(ws), max(ws),
            statistics.median(cpu(em[r]) for r in reps),
            statistics.median(cpu(pf[r]) for r in reps),
            statistics.median(cs), min(cs), max(cs)))
        p()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "out")
    raw = read_tsv(os.path.join(out, "results", "raw.tsv"))
    machine = {r["key"]: r["value"] for r in read_tsv(os.path.join(out, "results", "machine.tsv"))}
    stats = {r["name"]: r for r in read_tsv(os.path.join(out, "corpus", "stats.tsv"))}
    slow_n = machine.get("slow_n", "2000")

    # runs[(bin, tool, kind)][rep] = row
    runs = {}
    for r in raw:
        runs.setdefault((r["binary"], r["tool"], r["kind"]), {})[int(r["rep"])] = r
    bins = []
    for r in raw:
        if r["binary"] not in bins:
            bins.append(r["binary"])
    tools_present = {r["tool"] for r in raw}
    tools = [t for t in ORDER if t in tools_present] + sorted(tools_present - set(ORDER))

    p = print
    p("# Symbolization benchmark: ember symbolize vs peers")
    p()
    p("- date: %s" % machine.get("date", "?"))
    p("- machine: %s; %s cores (`nproc`); %s; %s" % (machine.get("cpu", "?"), machine.get("nproc", "?"),
                                                   machine.get("mem", "?"), machine.get("host_os", "?")))
    p("- load average (1/5/15 min): %s at start, %s at end; benchmark loop took %s s"
      % (machine.get("loadavg_start", "?"), machine.get("loadavg_end", "?"), machine.get("bench_wall_s", "?")))
    loads = [float(r["load1"]) for r in raw if r.get("load1")]
    if loads:
        p("- 1-min load average sampled after each run: %.2f\u2013%.2f (median %.2f); "
          "anything above ~1 means other jobs shared the 2 cores" % (min(loads), max(loads), statistics.median(loads)))
    p("- reps: %s; tools: %s" % (machine.get("reps", "?"), machine.get("tools", "?").strip()))
    for t in tools:
        v = machine.get("version_" + t)
        if v:
            p("  - %s: %s" % (t, v))
    sets = ["%s %s" % (k[len("addrs_"):], v) for k, v in machine.items() if k.startswith("addrs_")]
    if sets:
        p("- address sets (`make-addrs.sh`, fixed seed; sha256 of NAME.addrs, first 16 hex digits): %s"
          % ", ".join(sets))
    skipped = machine.get("skipped", "").strip().rstrip(";")
    if skipped:
        p("- **skipped**: %s" % skipped)
    if "ember" not in tools_present and "ember:" not in skipped:
        p("- **ember: not measured** (not in TOOLS)")
    p()
    p("Every run is a fresh process: addresses on stdin from a file, output to a file, "
      "inline frames and demangling on. addr/s = addresses / wall time of the whole run; "
      "startup = wall time of a 1-address run; RSS = peak RSS of the full run. "
      "eu-addr2line gets only the first %s addresses (marked \u2020); its addr/s is per "
      "address over that smaller run. Values are medians over reps." % slow_n)
    p()

    # ---- corpus
    p("## Corpus")
    p()
    p("| binary | file MB | .text MB | DWARF MB (.debug_*) | NAME.debug MB | FUNC symbols | instructions in FUNCs | build s |")
    p("|---|---|---|---|---|---|---|---|")
    for b in bins:
        s = stats.get(b, {})
        info = ""
        ip = os.path.join(out, "addrs", b + ".info")
        nf = ni = "?"
        if os.path.exists(ip):
            info = open(ip).read().split(",")
            try:
                nf = info[0].split()[0]
                ni = info[1].split()[0]
            except IndexError:
                pass
        p("| %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            b, mb(s.get("file_bytes", 0)), mb(s.get("text_bytes", 0)), mb(s.get("dwarf_bytes", 0)),
            mb(s.get("debug_file_bytes", 0)), nf, ni, s.get("build_s", "-")))
    p()

    # ---- per-binary results
    ratios = {}   # (bin, tool) -> list of per-rep ratios
    excl = {}     # (bin, tool) -> list of per-rep ns/addr excluding startup
    for b in bins:
        llvm_full = runs.get((b, "llvm", "full"), {})
        p("## %s" % b)
        p()
        p("| tool | addresses | addr/s | startup s | peak RSS MB | \u00b5s/addr excl. startup "
          "| output B/addr | wall spread | ratio vs llvm-symbolizer, median (min\u2013max) | check |")
        p("|---|---|---|---|---|---|---|---|---|---|")
        for t in tools:
            full = runs.get((b, t, "full"), {})
            start = runs.get((b, t, "startup"), {})
            if not full:
                continue
            reps = sorted(full)
            n = int(full[reps[0]]["n_addrs"])
            walls = [float(full[r]["wall_s"]) for r in reps]
            rates = [n / w for w in walls]
            st = [float(start[r]["wall_s"]) for r in reps if r in start]
            rss = [int(full[r]["maxrss_kb"]) / 1024.0 for r in reps]
            ex = [max(0.0, float(full[r]["wall_s"]) - float(start[r]["wall_s"])) / n * 1e9
                  for r in reps if r in start]
            excl[(b, t)] = ex
            outb = statistics.median(int(full[r]["out_bytes"]) for r in reps) / n
            rr = []
            for r in reps:
                if r in llvm_full:
                    ln = int(llvm_full[r]["n_addrs"])
                    rr.append((float(full[r]["wall_s"]) / n) / (float(llvm_full[r]["wall_s"]) / ln))
            ratios[(b, t)] = rr
            bad = [full[r]["rc"] for r in reps if full[r]["rc"] != "0"]
            bad += [start[r]["rc"] for r in reps if r in start and start[r]["rc"] != "0"]
            blocks = [int(full[r]["blocks"]) for r in reps]
            check = []
            if bad:
                check.append("rc " + ",".join(sorted(set(bad))))
            if min(blocks) != n:
                check.append("answered %d of %d" % (min(blocks), n))
            spread = (max(walls) - min(walls)) / statistics.median(walls) * 100 if len(walls) > 1 else 0
            label = LABEL.get(t, t) + (" \u2020" if t == "eu" else "")
            if t == "llvm":
                rtxt = "1.00"
            elif rr:
                rtxt = "%s (%s\u2013%s)" % (fmt_ratio(statistics.median(rr)), fmt_ratio(min(rr)), fmt_ratio(max(rr)))
            else:
                rtxt = "\u2013"
            p("| %s | %s | %s | %s | %.0f | %s | %.0f | %.0f%% | %s | %s |" % (
                label, "{:,}".format(n), fmt_rate(statistics.median(rates)),
                "%.3f" % statistics.median(st) if st else "?",
                statistics.median(rss),
                "%.2f" % (statistics.median(ex) / 1e3) if ex else "?",
                outb, spread, rtxt, "; ".join(check) or "ok"))
        p()

    # ---- paired ratio matrix
    p("## Paired ratio vs llvm-symbolizer")
    p()
    p("Per-address wall time of the tool divided by llvm-symbolizer's in the same rep; "
      "median (min\u2013max) over reps; below 1 means faster than llvm-symbolizer.")
    p()
    others = [t for t in tools if t != "llvm"]
    p("| binary | " + " | ".join(LABEL.get(t, t).split(" (")[0] + (" \u2020" if t == "eu" else "")
                                   for t in others) + " |")
    p("|---|" + "---|" * len(others))
    for b in bins:
        cells = []
        for t in others:
            rr = ratios.get((b, t), [])
            cells.append("%s (%s\u2013%s)" % (fmt_ratio(statistics.median(rr)), fmt_ratio(min(rr)),
                                             fmt_ratio(max(rr))) if rr else "\u2013")
        p("| %s | %s |" % (b, " | ".join(cells)))
    p()

    # ---- ember against its fastest peer, rep by rep
    if "ember" in tools_present:
        ember_vs_fastest_peer(p, bins, tools, runs)

    # ---- page cache
    cold = ["%s/%s rep %s: %s" % (r["binary"], r["tool"], r["rep"], r["majflt"])
            for r in raw if r["kind"] == "full" and int(r.get("majflt") or 0) > 0]
    p("Major page faults in the full runs (file pages read from disk: the page cache "
      "was not warm): %s." % ("; ".join(cold) if cold else "none"))
    p()

    # ---- ember vs the 60 ns/lookup limit
    p("## Ember against the ~60 ns/lookup limit")
    p()
    p("(wall of the full run \u2212 wall of the 1-address run) / addresses, per rep, median: "
      "the per-address cost of lookup + formatting + output, without process start "
      "and index build. The peers doc's `limit.c` puts a random lookup in ~10^5 ranges "
      "at 50\u201360 ns on this machine.")
    p()
    if "ember" in tools_present:
        for b in bins:
            ex = excl.get((b, "ember"))
            if not ex:
                continue
            ns = statistics.median(ex)
            best = min((statistics.median(v), t) for (bb, t), v in excl.items()
                       if bb == b and t != "ember" and t != "eu" and v) if any(
                bb == b and t not in ("ember", "eu") for (bb, t) in excl) else None
            extra = ""
            if best:
                extra = " (fastest peer on this binary: %s, %.0f ns)" % (LABEL.get(best[1], best[1]).split(" (")[0], best[0])
            p("- %s: ember %.0f ns/address excluding startup = %.1fx the 60 ns lookup figure%s"
              % (b, ns, ns / TARGET_NS, extra))
    else:
        p("- Ember was not measured in this run.")
    p()


if __name__ == "__main__":
    main()
