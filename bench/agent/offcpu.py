#!/usr/bin/env python3
"""Overhead of ember-agent's --off-cpu on a context-switch-heavy workload,
in one run (docs/benchmarks.md; the machinery is run.py's).

    sudo bench/agent/offcpu.py [--agent build-release/ember-agent] [--rounds 5]
                               [--work 150] [--calls 200] [--before AGENT]

Two workloads (switch.c, C built here with -O2 -pthread), each a fixed
amount of work:

  - switch: two threads ping-pong a byte through two pipes, a short sleep
    every 1,000 round trips (100,000-330,000 context switches a second
    here, as the scheduler places the threads), under: no profiler; the
    agent at 19 Hz; the agent at 19 Hz with --off-cpu (threshold 10 ms);
    with --off-cpu --off-cpu-threshold 1000 (1 ms: ten times the walks,
    past the default budget of 500 a second); with --off-cpu
    --off-cpu-rseq-only (no sys_exit program, whatever runs on the host);
  - getpid: a getpid() loop (--calls x 100,000 calls), under no profiler,
    the agent at 19 Hz, with --off-cpu and with --off-cpu
    --off-cpu-rseq-only: the cost every system call of the host pays for
    --off-cpu (its sys_exit program, attached while threads without rseq
    block).

With --before AGENT (another build, say the previous commit's), its
--off-cpu runs too, as "before: ..." configurations of the same rounds.

The agent samples every process, as on a host.  Configurations are
interleaved round by round (rotated) and reported as the median over the
rounds of the workload's CPU time (user + system, wait4) to the same
round's "off" run; also the agent's CPU while the workload ran (its
start-up apart), and each of the agent's BPF programs (bpftool prog show
with kernel.bpf_stats_enabled=1): its runs a second and time a run, and
its share of the machine's CPU time.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import run  # noqa: E402  (run.py's helpers)

OFF_CPU = "agent@19 --off-cpu"
RSEQ_ONLY = OFF_CPU + " --off-cpu-rseq-only"
SWITCH = ["off", "agent@19", OFF_CPU, OFF_CPU + " --off-cpu-threshold 1000", RSEQ_ONLY]
GETPID = ["off", "agent@19", OFF_CPU, RSEQ_ONLY]
CALLS_PER_ROUND = 100000  # switch.c
BEFORE = "before: "


def bpf_by_name(ids):
    """{program name: (run_time_ns, run_cnt)} of the programs ids."""
    out = {}
    for i, (ns, cnt, name) in run.bpf_progs(None).items():
        if i in ids:
            t = out.get(name, (0, 0))
            out[name] = (t[0] + ns, t[1] + cnt)
    return out


def start(c, args, tmp):
    """run.start, with the --before agent for a "before: " configuration."""
    if c.startswith(BEFORE):
        return run.start(c[len(BEFORE):], argparse.Namespace(**dict(vars(args),
                                                                   agent=args.before)), tmp)
    return run.start(c, args, tmp)


def one_run(c, args, tmp, wl, extra, res):
    p = start(c, args, tmp)
    b0 = bpf_by_name(p.bpf_ids) if p else {}
    m0 = run.metrics(p.port) if p else ""
    w_cpu, w_wall, ru, _ = run.run_workload([wl], extra[0], extra[1:])
    r = {"cpu": w_cpu, "wall": w_wall, "switches/s": (ru.ru_nvcsw + ru.ru_nivcsw) / w_wall}
    if p:
        for name, (ns, cnt) in bpf_by_name(p.bpf_ids).items():
            dns, dcnt = ns - b0.get(name, (0, 0))[0], cnt - b0.get(name, (0, 0))[1]
            if dcnt:
                r[name] = (dns / dcnt, dcnt / w_wall,  # ns a run, runs a second, % of the CPUs
                           100 * dns / 1e9 / (w_wall * os.cpu_count()))
        m1 = run.metrics(p.port)
        for k in ("blocks", "kept", "lost"):
            name = "ember_agent_offcpu_%s_total" % k
            r[k] = (run.metric(m1, name) or 0) - (run.metric(m0, name) or 0)
        r["T ms"] = 1e3 * (run.metric(m1, "ember_agent_offcpu_threshold_seconds") or 0)
        t_end = time.time()
        p.stop()
        r["agent cpu %"] = 100 * (p.cpu - p.cpu_ready) / (t_end - p.t_ready)
    res.setdefault(c, []).append(r)
    print("  %-40s workload %.3f s cpu (%.2f s wall, %.0f switches/s)%s" % (
        c, w_cpu, w_wall, r["switches/s"],
        "" if not p else ", agent %.2f%% of a CPU" % r["agent cpu %"]), flush=True)


def report(title, configs, res):
    off = res["off"]
    print("\n%s (off: median %.3f s CPU, %.2f s wall, %.0f switches/s)" % (
        title, run.median([r["cpu"] for r in off]), run.median([r["wall"] for r in off]),
        run.median([r["switches/s"] for r in off])))
    print("| configuration | workload CPU, median ratio to off | agent CPU, % of a CPU "
          "| BPF programs: runs/s, ns a run, % of the machine's CPU |")
    print("|---|---:|---:|---|")
    for c in configs:
        ratio = run.median([r["cpu"] / o["cpu"] for r, o in zip(res[c], off)])
        progs = sorted({k for r in res[c] for k, v in r.items() if isinstance(v, tuple)})
        cells = ["%s %.0f/s, %.0f ns, %.3f%%" % (
            name, *(run.median([r[name][j] for r in res[c] if name in r]) for j in (1, 0, 2)))
            for name in progs]
        print("| %s | %.4f (%+.2f%%) | %s | %s |" % (
            c, ratio, 100 * (ratio - 1),
            "-" if c == "off" else "%.2f" % run.median([r["agent cpu %"] for r in res[c]]),
            "; ".join(cells) or "-"))
        if "--off-cpu" in c:
            print("|   | off-CPU blocks of the host a second (median): %.0f ended, %.0f kept, "
                  "%.1f lost; T at the end %.1f ms | | |"
                  % (tuple(run.median([r[k] / r["wall"] for r in res[c]])
                           for k in ("blocks", "kept", "lost"))
                     + (run.median([r["T ms"] for r in res[c]]),)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", default=os.path.join(run.ROOT, "build-release", "ember-agent"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=int, default=150, help="switch rounds of 1,000 round trips")
    ap.add_argument("--calls", type=int, default=200, help="getpid rounds of 100,000 calls")
    ap.add_argument("--before", help="another agent build whose --off-cpu runs too")
    args = ap.parse_args()
    if args.before:
        SWITCH.append(BEFORE + OFF_CPU)
        GETPID.append(BEFORE + OFF_CPU)
    tmp = tempfile.mkdtemp(prefix="agent-offcpu.")
    wl = os.path.join(tmp, "switch")
    subprocess.run(["cc", "-O2", "-g", "-pthread", "-o", wl, os.path.join(run.HERE, "switch.c")],
                   check=True)
    stats_before = run.bpf_stats_set("1")
    sw, gp = {}, {}
    try:
        for r in range(args.rounds):
            for configs, extra, res in ((SWITCH, [args.work], sw),
                                        (GETPID, [args.calls, "getpid"], gp)):
                order = configs[r % len(configs):] + configs[:r % len(configs)]
                print("round %d: %s" % (r + 1, ", ".join(order)), flush=True)
                for c in order:
                    one_run(c, args, tmp, wl, extra, res)
    finally:
        run.bpf_stats_set(stats_before)
    report("switch: %d x 1,000 pipe round trips" % args.work, SWITCH, sw)
    report("getpid: %d x 100,000 calls" % args.calls, GETPID, gp)
    calls = args.calls * CALLS_PER_ROUND
    for c in GETPID[1:]:
        print("%s: %+.1f ns of workload CPU a getpid() call against off (median of the rounds)"
              % (c, run.median([1e9 * (r["cpu"] - o["cpu"]) / calls
                                for r, o in zip(gp[c], gp["off"])])))
    for c in GETPID[2:]:
        print("%s against the agent without: %+.1f ns a getpid() call (median of the rounds)"
              % (c, run.median([1e9 * (r["cpu"] - o["cpu"]) / calls
                                for r, o in zip(gp[c], gp["agent@19"])])))


if __name__ == "__main__":
    main()
