#!/usr/bin/env python3
"""Interleaved A/B of ember-agent variants, in one run (docs/benchmarks.md,
docs/performance-notes.md).

    sudo bench/agent/ab.py --variant maps=build-release/ember-agent,--transport,maps \\
                           --variant ringbuf=build-release/ember-agent,--transport,ringbuf \\
                           [--hz 19,99] [--scope host,pid] [--seconds 20] [--rounds 3]
                           [--churn 10] [--no-workload] [--workload cxx|python]

A variant is NAME=BINARY[,ARG...]: the same binary with other options, or
two binaries (an old build against a new one).  Each round runs every
(scope, rate) once per variant, the variants in a rotated order, so the
machine's drift between rounds falls on each alike.  Per run, counted
from the agent's "sampling at" line (its start-up apart) for --seconds:

  - the kernel's timing of the agent's perf_event BPF program
    (kernel.bpf_stats_enabled=1: run_time_ns / run_cnt, bpftool prog show),
    the cost each sample takes from the interrupted task;
  - the agent's own CPU (user + system of all its threads, /proc/PID/stat);
  - its peak RSS (wait4's ru_maxrss, the whole life, start-up included)
    and its RSS at the end (VmRSS, the steady state);
  - with --time-transport (EMBER_AGENT_TIME_TRANSPORT=1 for the agent):
    the kernel's time in the transport's part of each counted sample (the
    count maps' updates, or the ring buffer record), from the agent's
    /metrics (ember_agent_transport_nanoseconds_total), apart from the
    walk, which both transports share and which is most of a sample.

While it runs: the CPU-bound workload (workload.cc, -O2
-fomit-frame-pointer, libstdc++ and libc; with --workload python,
workload.py under Debian's python3.11, run.py's) unless --no-workload, and with
--churn N, N short processes a second (sh, cat, wc: what a build does to
the agent, exec events and scans); scope "pid" samples the workload only
(--pid), "host" every process.  Reported: medians over the rounds, and the
median of each round's ratio to the first variant.
"""
import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import run  # noqa: E402  (run.py's workloads)
TICK = os.sysconf("SC_CLK_TCK")


def perf_event_progs():
    r = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True)
    return {p["id"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.loads(r.stdout or "[]") if p.get("type") == "perf_event"}


def bpf_time(ids):
    progs = perf_event_progs()
    return (sum(progs[i][0] for i in ids if i in progs),
            sum(progs[i][1] for i in ids if i in progs))


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def wait_ready(log, proc, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log, errors="replace") as f:
            if "agent: sampling at" in f.read():
                return
        if proc.poll() is not None:
            sys.exit("agent exited: " + open(log).read()[-2000:])
        time.sleep(0.05)
    sys.exit("timed out waiting for the agent")


class Churn(threading.Thread):
    """n short-lived processes a second, until stopped."""

    def __init__(self, n):
        super().__init__(daemon=True)
        self.n, self.stop = n, threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.time()
            subprocess.run(["sh", "-c", "cat /proc/loadavg | wc -c > /dev/null"])
            self.stop.wait(max(0.0, 1.0 / self.n - (time.time() - t)))


def metrics(port):
    """(transport ns, counted samples) from the agent's /metrics."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    def val(name):  # nan when this build has no such metric
        m = re.search(r"^%s ([0-9.e+]+)$" % name, text, re.M)
        return float(m.group(1)) if m else float("nan")
    return (val("ember_agent_transport_nanoseconds_total"),
            val("ember_agent_samples_total") - val("ember_agent_samples_filtered_total"))


def vm_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1)) / 1024


def one_run(variant, argv, hz, scope, wl_pid, args, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    log = os.path.join(tmp, "%s-%s-%d.log" % (variant, scope, hz))
    port = 19400 + hz
    cmd = argv[:1] + ["--output", out, "--frequency", str(hz),
                      "--metrics-listen", "127.0.0.1:%d" % port] + argv[1:]
    if scope == "pid":
        cmd += ["--pid", str(wl_pid)]
    env = dict(os.environ, EMBER_AGENT_TIME_TRANSPORT="1") if args.time_transport else None
    before = set(perf_event_progs())
    p = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)
    try:
        wait_ready(log, p)
        ids = set(perf_event_progs()) - before
        b0, c0, t0, m0 = bpf_time(ids), proc_cpu(p.pid), time.time(), metrics(port)
        time.sleep(args.seconds)
        b1, c1, t1, m1 = bpf_time(ids), proc_cpu(p.pid), time.time(), metrics(port)
        rss = vm_rss_mb(p.pid)
    except BaseException:
        p.kill()
        p.wait()
        raise
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("agent failed: " + open(log).read()[-2000:])
    n, counted = b1[1] - b0[1], m1[1] - m0[1]
    return {"ns/sample": (b1[0] - b0[0]) / n if n else float("nan"), "samples": n,
            "transport ns": (m1[0] - m0[0]) / counted if counted else float("nan"),
            "cpu %": 100 * (c1 - c0) / (t1 - t0), "rss MB": ru.ru_maxrss / 1024,
            "end rss MB": rss}


def median(v):
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", action="append", required=True, help="NAME=BINARY[,ARG...]")
    ap.add_argument("--hz", default="19,99")
    ap.add_argument("--scope", default="host,pid")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--churn", type=float, default=0, help="short processes a second")
    ap.add_argument("--no-workload", action="store_true")
    ap.add_argument("--workload", choices=("cxx", "python"), default="cxx")
    ap.add_argument("--time-transport", action="store_true")
    args = ap.parse_args()
    variants = []
    for v in args.variant:
        name, spec = v.split("=", 1)
        variants.append((name, spec.split(",")))
    rates = [int(x) for x in args.hz.split(",")]
    scopes = args.scope.split(",")
    tmp = tempfile.mkdtemp(prefix="agent-ab.")
    wl = run.workload_command(args.workload, tmp)
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_before = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    # the workload, running through the whole benchmark (restarted if done)
    wl_proc = None if args.no_workload else subprocess.Popen(
        ["sh", "-c", 'while :; do "$@" 100000; done', "sh"] + wl, stdout=subprocess.DEVNULL)
    churn = Churn(args.churn) if args.churn else None
    if churn:
        churn.start()
    res = {}
    try:
        for r in range(args.rounds):
            for scope in scopes:
                for hz in rates:
                    order = variants[r % len(variants):] + variants[:r % len(variants)]
                    for name, argv in order:
                        wl_pid = None
                        if scope == "pid":
                            if not wl_proc:
                                sys.exit("--scope pid needs the workload")
                            for _ in range(100):  # the loop's workload, once started
                                kids = open("/proc/%d/task/%d/children"
                                            % (wl_proc.pid, wl_proc.pid)).read().split()
                                if kids:
                                    break
                                time.sleep(0.05)
                            wl_pid = int(kids[0])
                        m = one_run(name, argv, hz, scope, wl_pid, args, tmp)
                        res.setdefault((scope, hz, name), []).append(m)
                        print("round %d %-4s %3d Hz %-10s %7.0f ns/sample (%d samples), "
                              "transport %.0f ns, agent %.2f%% of a CPU, peak RSS %.1f MB, "
                              "at the end %.1f MB"
                              % (r + 1, scope, hz, name, m["ns/sample"], m["samples"],
                                 m["transport ns"], m["cpu %"], m["rss MB"], m["end rss MB"]),
                              flush=True)
    finally:
        if churn:
            churn.stop.set()
        if wl_proc:
            kids = open("/proc/%d/task/%d/children" % (wl_proc.pid, wl_proc.pid)).read()
            wl_proc.kill()
            for k in kids.split():
                os.kill(int(k), signal.SIGKILL)
            wl_proc.wait()
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_before)
    base = variants[0][0]
    print("\n| scope | Hz | variant | BPF ns/sample | transport ns/sample | agent CPU %% "
          "| peak RSS MB | RSS at the end MB | ratio to %s: BPF ns, transport ns, CPU, peak RSS |"
          % base)
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for scope in scopes:
        for hz in rates:
            for name, _ in variants:
                ms, bs = res[(scope, hz, name)], res[(scope, hz, base)]
                ratio = lambda k: median([a[k] / b[k] if b[k] else float("nan")
                                          for a, b in zip(ms, bs)])
                print("| %s | %d | %s | %.0f | %.0f | %.2f | %.1f | %.1f | %.3f, %.3f, %.3f, %.3f |"
                      % (scope, hz, name, median([m["ns/sample"] for m in ms]),
                         median([m["transport ns"] for m in ms]),
                         median([m["cpu %"] for m in ms]), median([m["rss MB"] for m in ms]),
                         median([m["end rss MB"] for m in ms]), ratio("ns/sample"),
                         ratio("transport ns"), ratio("cpu %"), ratio("rss MB")))


if __name__ == "__main__":
    main()
