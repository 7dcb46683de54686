#!/usr/bin/env python3
"""Overhead of ember-agent against its peers, in one run (docs/benchmarks.md).

    sudo bench/agent/run.py [--agent build-release/ember-agent] [--rounds 5]
                            [--workload cxx|python] [--work N]

The workload does a fixed amount of work (--work rounds): with --workload
cxx (the default), workload.cc, C++ built here with -O2
-fomit-frame-pointer, linking libstdc++ and libc (300 rounds); with
--workload python, workload.py, pure Python run by Debian's
/usr/bin/python3.11 (400 rounds), about 30 Python frames deep, whose
Python frames the agent walks in BPF.  Its CPU time
(user + system, from wait4) is measured with no profiler, with the agent
at 19 Hz and at 99 Hz (every CPU, every process: what it does on a host),
with `perf record -a -g -F 99` and with bpftrace's
`profile:hz:99 { @[kstack, ustack] = count(); }`.  Configurations are
interleaved round by round and each is reported as the median over the
rounds of its ratio to the "off" run of the same round, so the VM's drift
between rounds cancels.  Also: each profiler's own CPU time and peak RSS
under load, the agent idle (10 s, no workload), the agent with --pid of
the workload only (the tables of its files loaded; the BPF program's time
a sample of the workload, a bound from above), and the time from the
agent's start to its first table-unwound sample.  With --workload python,
also the Python frames the agent's BPF program recorded (every process),
and in two profiles the share of the workload's samples (by @pid) that
hold Python frames, how many, and how many of them are named: the last
round's at 99 Hz (written after the workload exited, so its code objects
could not be read) and the --pid run's (written while it runs).  A walk
that recorded no Python frame would measure nothing.
"""
import argparse
import gzip
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
from ember_test import free_port, pb_fields, read_varint  # noqa: E402
PYTHON = "/usr/bin/python3.11"  # Debian's: the python3 on PATH may be another build


def cpu(ru):
    return ru.ru_utime + ru.ru_stime


def wait_line(path, pattern, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path, errors="replace") as f:
            if re.search(pattern, f.read()):
                return
        if proc.poll() is not None:
            sys.exit("profiler exited: " + open(path).read()[-1000:])
        time.sleep(0.05)
    sys.exit("timed out waiting for %r in %s" % (pattern, path))


class Profiler:
    """A profiler process: started, made ready, stopped; its rusage kept."""

    def __init__(self, name, argv, ready, tmp, env=None):
        self.name = name
        self.log = os.path.join(tmp, name + ".log")
        self.proc = subprocess.Popen(argv, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                     env=env)
        self.t0 = time.time()
        ready(self)

    def stop(self, sig=signal.SIGINT):
        self.proc.send_signal(sig)
        # bpftrace 0.17 sometimes misses a SIGINT: ask again, then kill
        for _ in range(120):
            pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.5)
            if _ % 20 == 19:
                self.proc.send_signal(sig)
        else:
            self.proc.kill()
            _, status, ru = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu = cpu(ru)
        self.rss_mb = ru.ru_maxrss / 1024
        self.wall = time.time() - self.t0
        return self


def agent_argv(args, tmp, hz, extra=()):
    port = free_port()  # not a fixed one: another run may be going on
    return ([args.agent, "--output", tempfile.mkdtemp(dir=tmp), "--frequency", str(hz),
             "--metrics-listen", "127.0.0.1:%d" % port] + list(extra)), port


def metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode()


def metric(text, name):
    m = re.search(r"^%s ([0-9.e+]+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def start(config, args, tmp):
    if config == "off":
        return None
    before = set(bpf_progs(None))
    p = start_profiler(config, args, tmp)
    p.bpf_ids = set(bpf_progs(None)) - before  # this bpftool has no pids to match by
    return p


def start_profiler(config, args, tmp):
    if config.startswith("agent"):  # agent@HZ[ OPTION...]
        hz, *extra = config.split("@")[1].split()
        argv, port = agent_argv(args, tmp, int(hz), extra)
        p = Profiler(config, argv, lambda p: wait_line(p.log, "agent: sampling at", p.proc), tmp)
        p.port, p.output = port, argv[2]
        # its start-up (scanning every process, compiling their tables) apart
        p.cpu_ready = metric(metrics(port), "process_cpu_seconds_total")
        p.t_ready = time.time()
        return p
    if config == "perf@99":
        out = os.path.join(tmp, "perf.data")
        return Profiler(config, ["perf", "record", "-a", "-g", "-F", "99", "-o", out, "-q"],
                        lambda p: time.sleep(1.0), tmp)  # perf says nothing when ready
    if config == "bpftrace@99":
        return Profiler(config, ["bpftrace", "-e",
                                 "profile:hz:99 { @[kstack, ustack] = count(); }"],
                        lambda p: wait_line(p.log, "Attaching", p.proc), tmp,
                        env=dict(os.environ, BPFTRACE_STRLEN="64"))
    raise ValueError(config)


def bpf_progs(types=("perf_event",)):
    """{id: (run_time_ns, run_cnt, name)} of the loaded BPF programs of
    those types (kernel.bpf_stats_enabled=1 makes the kernel time them);
    types None: every program."""
    import json
    r = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True)
    return {p["id"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0), p.get("name", ""))
            for p in json.loads(r.stdout or "[]") if types is None or p.get("type") in types}


def bpf_stats_set(value):
    """kernel.bpf_stats_enabled set to value; returns the value it had."""
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        before = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(value)
    return before


def bpf_time(ids):
    """(run_time_ns, run_cnt) summed over the perf_event programs ids: the
    exact in-kernel cost of a profiler's samples, which the workload's CPU
    time carries."""
    progs = bpf_progs()
    return (sum(progs[i][0] for i in ids if i in progs),
            sum(progs[i][1] for i in ids if i in progs))


def run_workload(wl, work, extra=()):
    """The CPU time, wall time, rusage and process ID of the workload wl (its
    command, to which work and extra are appended)."""
    t = time.time()
    p = subprocess.Popen(wl + [str(work)] + list(extra), stdout=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    return cpu(ru), time.time() - t, ru, p.pid


def one_round(configs, args, tmp, wl, results, prof):
    for c in configs:
        p = start(c, args, tmp)
        b0 = bpf_time(p.bpf_ids) if p else (0, 0)
        w_cpu, w_wall, _, pid = run_workload(wl, args.work)
        if p:
            b1 = bpf_time(p.bpf_ids)
            if b1[1] > b0[1]:
                prof.setdefault(c + " bpf ns/sample", []).append((b1[0] - b0[0]) / (b1[1] - b0[1]))
                prof.setdefault(c + " bpf % of cpu time", []).append(
                    100 * (b1[0] - b0[0]) / 1e9 / (w_wall * os.cpu_count()))
        if p and p.name.startswith("agent"):
            text = metrics(p.port)
            prof.setdefault(c + " table frames", []).append(
                metric(text, 'ember_agent_frames_total{unwinder="table"}'))
            prof.setdefault(c + " fp frames", []).append(
                metric(text, 'ember_agent_frames_total{unwinder="frame_pointer"}'))
            prof.setdefault(c + " first table sample s", []).append(
                metric(text, "ember_agent_first_table_sample_seconds"))
            prof.setdefault(c + " python frames", []).append(
                metric(text, "ember_agent_python_frames_total"))
            prof.setdefault(c + " output", []).append((p.output, pid))
        if p:
            t_end = time.time()
            p.stop()
            steady = p.cpu - getattr(p, "cpu_ready", 0)
            span = t_end - getattr(p, "t_ready", p.t0)
            prof.setdefault(c + " cpu s", []).append(steady)
            prof.setdefault(c + " cpu %", []).append(100 * steady / span)
            prof.setdefault(c + " rss MB", []).append(p.rss_mb)
            if hasattr(p, "cpu_ready"):
                prof.setdefault(c + " startup cpu s", []).append(p.cpu_ready)
        results.setdefault(c, []).append(w_cpu)
        print("  %-12s workload %.3f s cpu (%.2f s wall)%s" % (
            c, w_cpu, w_wall, "" if not p else ", profiler %.3f s cpu, %.1f MB peak"
            % (p.cpu, p.rss_mb)), flush=True)


def agent_idle(args, tmp):
    argv, port = agent_argv(args, tmp, 19)
    p = Profiler("agent-idle", argv, lambda p: wait_line(p.log, "agent: sampling at", p.proc), tmp)
    c0 = metric(metrics(port), "process_cpu_seconds_total")
    time.sleep(10)
    text = metrics(port)
    p.stop()
    return (p, metric(text, "process_resident_memory_bytes"),
            metric(text, "process_cpu_seconds_total") - c0)


def agent_pid_only(args, tmp, wl):
    """--pid of the workload: only the tables of its files loaded (the C++
    workload: libc, libstdc++, libm, libgcc_s, ld.so and itself), and the
    BPF program's time a sample of the workload: its run time over the
    samples it walked (the other processes' samples, which it returns
    from early, are in the time: a bound from above)."""
    w = subprocess.Popen(wl + [str(args.work * 2)], stdout=subprocess.DEVNULL)
    argv, port = agent_argv(args, tmp, 99, ["--pid", str(w.pid)])
    before = set(bpf_progs(None))
    p = Profiler("agent-pid", argv, lambda p: wait_line(p.log, "agent: sampling at", p.proc), tmp)
    p.output = argv[2]
    ids = set(bpf_progs(None)) - before
    time.sleep(5)
    text = metrics(port)
    ns, _ = bpf_time(ids)
    p.stop()
    w.wait()
    walked = (metric(text, "ember_agent_samples_total") or 0) - (
        metric(text, "ember_agent_samples_filtered_total") or 0)
    return p, text, w.pid, ns / walked if walked else float("nan")


def pb_dict(b):
    """{field number: [value, ...]} of a protobuf message (pb_fields)."""
    out = {}
    for k, v in pb_fields(b):
        out.setdefault(k, []).append(v)
    return out


def pb_ints(values):
    """The integers of a repeated field, packed or not."""
    out = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
            continue
        pos = 0
        while pos < len(v):
            n, pos = read_varint(v, pos)
            out.append(n)
    return out


def python_stacks(outdir, pid):
    """[(Python frames, of them named, frames)] of every sample of process
    pid in the profiles in outdir (pprof, gzip: the agent's --output)."""
    out = []
    for name in sorted(os.listdir(outdir)):
        with gzip.open(os.path.join(outdir, name)) as f:
            prof = pb_dict(f.read())
        strs = [s.decode(errors="replace") for s in prof.get(6, [])]
        pymaps = {pb_ints(m.get(1, [0]))[0] for m in map(pb_dict, prof.get(3, []))
                  if strs[pb_ints(m.get(5, [0]))[0]] == "[python]"}
        named = {pb_ints(fn.get(1, [0]))[0] for fn in map(pb_dict, prof.get(5, []))
                 if strs[pb_ints(fn.get(2, [0]))[0]] != "[python]"}
        pylocs, namedlocs = set(), set()
        for loc in map(pb_dict, prof.get(4, [])):
            lid = pb_ints(loc.get(1, [0]))[0]
            if pb_ints(loc.get(2, [0]))[0] in pymaps:
                pylocs.add(lid)
                if any(pb_ints(pb_dict(ln).get(1, [0]))[0] in named for ln in loc.get(4, [])):
                    namedlocs.add(lid)
        for s in map(pb_dict, prof.get(2, [])):
            if str(pid) not in (strs[pb_ints(lb.get(2, [0]))[0]]
                                for lb in map(pb_dict, s.get(3, []))
                                if strs[pb_ints(lb.get(1, [0]))[0]] == "@pid"):
                continue
            ids = pb_ints(s.get(1, []))
            out += [(sum(i in pylocs for i in ids), sum(i in namedlocs for i in ids),
                     len(ids))] * pb_ints(s.get(2, [1]))[0]
    return out


def median(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else float("nan")


def python_report(prof):
    """The Python frames the agent recorded, and how deep: a walk that
    recorded none would measure nothing."""
    for c in ("agent@19", "agent@99"):
        print("%s: %d Python frames recorded in BPF (median of the runs, every process)"
              % (c, median(prof[c + " python frames"])))
    python_profile("agent@99, last round's profile", *prof["agent@99 output"][-1])


def python_profile(title, outdir, pid):
    st = python_stacks(outdir, pid)
    py = [x for x in st if x[0]]
    print("%s: %d samples of the workload, %d (%.1f%%) with Python frames, %s Python frames "
          "(%s named) of %s frames a sample (median)"
          % (title, len(st), len(py), 100 * len(py) / max(len(st), 1), median([x[0] for x in py]),
             median([x[1] for x in py]), median([x[2] for x in py])))


def workload_command(kind, tmp):
    """The command of workload kind (cxx: built into tmp; python), to which
    its rounds are appended."""
    if kind == "python":
        return [PYTHON, os.path.join(HERE, "workload.py")]
    wl = os.path.join(tmp, "workload")
    subprocess.run(["g++", "-O2", "-g", "-fomit-frame-pointer", "-o", wl,
                    os.path.join(HERE, "workload.cc")], check=True)
    return [wl]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", default=os.path.join(ROOT, "build-release", "ember-agent"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workload", choices=("cxx", "python"), default="cxx")
    ap.add_argument("--work", type=int, help="rounds of the workload (cxx 300, python 400)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agent-bench.")
    wl = workload_command(args.workload, tmp)
    if args.work is None:
        args.work = 400 if args.workload == "python" else 300
    configs = ["off", "agent@19", "agent@99", "perf@99", "bpftrace@99"]
    stats_before = bpf_stats_set("1")
    results, prof = {}, {}
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        print("round %d: %s" % (r + 1, " ".join(order)), flush=True)
        one_round(order, args, tmp, wl, results, prof)
    print("\n| configuration | workload CPU, median ratio to off | profiler CPU while the workload ran (s, % of a CPU) | profiler peak RSS (MB) |")
    print("|---|---:|---:|---:|")
    for c in configs:
        ratios = [x / o for x, o in zip(results[c], results["off"])]
        extra = " | - | -" if c == "off" else " | %.3f (%.2f%%) | %.1f" % (
            median(prof[c + " cpu s"]), median(prof[c + " cpu %"]), median(prof[c + " rss MB"]))
        print("| %s | %.4f (median off %.3f s)%s |" % (c, median(ratios), median(results["off"]),
                                                    extra) if c == "off" else
              "| %s | %.4f (%+.2f%%)%s |" % (c, median(ratios), 100 * (median(ratios) - 1), extra))
    print("agent start-up (scan of every process, tables compiled here): %.3f s CPU (median)"
          % median(prof["agent@19 startup cpu s"] + prof["agent@99 startup cpu s"]))
    for c in ("agent@19", "agent@99", "bpftrace@99"):
        if prof.get(c + " bpf ns/sample"):
            print("%s: BPF program %.0f ns a sample (median), %.3f%% of the machine's CPU time"
                  % (c, median(prof[c + " bpf ns/sample"]), median(prof[c + " bpf % of cpu time"])))
    for c in ("agent@19", "agent@99"):
        print("%s: frames table %d, frame pointer %d (last round); first table-unwound sample "
              "%.3f s after start (median)" % (c, prof[c + " table frames"][-1] or 0,
                                              prof[c + " fp frames"][-1] or 0,
                                              median(prof[c + " first table sample s"])))
    if args.workload == "python":
        python_report(prof)
    p, rss, idle_cpu = agent_idle(args, tmp)
    print("agent idle 10 s at 19 Hz: %.3f s CPU after start-up (%.2f%% of a CPU), peak RSS "
          "%.1f MB, RSS %.1f MB" % (idle_cpu, 10 * idle_cpu, p.rss_mb, (rss or 0) / 2**20))
    p, text, pid, ns = agent_pid_only(args, tmp, wl)
    bpf_stats_set(stats_before)
    print("agent --pid WORKLOAD at 99 Hz: peak RSS %.1f MB, %d files with tables (%d bytes of "
          "tables), BPF program %.0f ns a sample of the workload"
          % (p.rss_mb, sum(metric(text, 'ember_agent_files{source="%s"}' % s) or 0
                           for s in ("cache", "server", "compiled")),
             metric(text, "ember_agent_table_bytes") or 0, ns))
    if args.workload == "python":  # written while the workload runs: its code objects readable
        python_profile("agent --pid WORKLOAD at 99 Hz, its profile", p.output, pid)


if __name__ == "__main__":
    main()
