#!/usr/bin/env python3
"""End-to-end tests of ember-agent on JIT runtimes, with real BPF in this
kernel and real runtimes (Debian's OpenJDK 17 and Node.js).

    test_agent_jit.py AGENT EMBER FIXTURES_DIR CASE      (CASE: test_agent_jit__*)

Each case runs a real runtime, the real agent beside it, and reads the
profiles the agent wrote with real peers (a real `ember serve` symbolizes
the native frames, `go tool pprof -traces` lists the stacks), keeping only
the samples of its own processes (other agent tests may run at the same
time).  A case that cannot run here exits 77 with the reason: no BPF, no
root, no Go, no java/jcmd/javac, no node.
"""
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember_test  # noqa: E402
import packages  # noqa: E402
import test_agent as ta  # noqa: E402  (its Agent, Server, traces, require_bpf)
from ember_test import check, skip, wait_for  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERFMAP_MAX_BYTES = 64 << 20  # agent/agent_internal.h: a bigger perf map is refused


def need(*tools):
    for t in tools:
        if not packages.which(t):
            skip(packages.missing(t, "the runtime this case profiles"))


def jit_samples(agent, pid, upload=()):
    """pid's samples, symbolized by a real server (native frames by the
    files uploaded; JIT frames come named by the agent)."""
    srv = ta.Server()
    return ta.samples_of(srv, agent, pid, upload)


def report(samples, n=4):
    top = sorted(samples, key=lambda s: -s[1])[:n]
    return "; ".join("%d x %s: %s" % (c, lab.get("unwind"), " <- ".join(f[:12]))
                     for lab, c, f in top)


# ---- Java ---------------------------------------------------------------------


def test_agent_jit__java_perf_map_written_after_start():
    """A JVM (-XX:+PreserveFramePointer, Busy.hot and Busy.outer kept
    apart from inlining) runs before the agent's first scan, and writes its
    perf map only later (`jcmd PID Compiler.perfmap`): the agent reads the
    map when it appears, and Busy.hot <- Busy.outer names most samples of
    the JVM."""
    ta.needs_go()
    need("java", "javac", "jcmd")
    ta.require_bpf()
    classes = os.path.join(ta.TMP, "classes")
    os.mkdir(classes)
    subprocess.run([packages.which("javac"), "-d", classes,
                    os.path.join(SRC, "profiles", "java", "Busy.java")], check=True, timeout=120)
    p = subprocess.Popen([packages.which("java"), "-XX:+PreserveFramePointer",
                          "-XX:CompileCommand=quiet",
                          "-XX:CompileCommand=dontinline,Busy::hot",
                          "-XX:CompileCommand=dontinline,Busy::outer",
                          "-cp", classes, "Busy", "600000"], stdout=subprocess.DEVNULL)
    ta.CHILDREN.append(p)
    perfmap = "/tmp/perf-%d.map" % p.pid
    try:
        time.sleep(3)  # warmed up (Busy.hot compiled) before the agent starts
        check(not os.path.exists(perfmap), "the JVM wrote its perf map at start")
        agent = ta.Agent([])
        time.sleep(5)  # profiles built (its JIT frames looked up) before the map exists
        r = subprocess.run([packages.which("jcmd"), str(p.pid), "Compiler.perfmap"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and os.path.exists(perfmap),
              "jcmd Compiler.perfmap: %d %s" % (r.returncode, r.stdout + r.stderr))
        written = time.time()
        time.sleep(10)
        agent.stop()
    finally:
        p.kill()
        p.wait()
        if os.path.exists(perfmap):
            os.unlink(perfmap)
    # the profiles of intervals that began once the map could be re-read
    # (one interval, 2 s, plus the rate limit, 2 s)
    srv = ta.Server()
    later = [f for f in agent.profiles() if os.path.getmtime(f) >= written + 4.5]
    check(len(later) >= 2, "only %d profiles written after the map" % len(later))
    s = [x for f in later for x in ta.traces(ta.symbolize(srv, f)) if x[0].get("pid") == str(p.pid)]
    check(s, "no sample of the JVM (pid %d) once its map was written" % p.pid)
    frac, total = ta.share(s, lambda f: any(re.search(r"Busy[.:]+hot", n) for n in f[:2]) and
                           any(re.search(r"Busy[.:]+outer", n) for n in f[1:4]))
    print("%.1f%% of %d samples show Busy.hot <- Busy.outer" % (100 * frac, total))
    check(frac >= 0.5, "only %.1f%% of %d samples of the JVM show Busy.hot <- Busy.outer; "
          "the most frequent: %s" % (100 * frac, total, report(s)))


# ---- Node.js --------------------------------------------------------------------


NODE_JS = r"""
function leaf(n) { let x = 0; for (let i = 0; i < n; i++) x = (x + i * 31) ^ (x >>> 3); return x; }
function middle(n) { return leaf(n) + 1; }
function outer(n) { return middle(n) + 1; }
const until = Date.now() + Number(process.argv[2]);
let sink = 0;
while (Date.now() < until) sink += outer(200000);
console.log(sink > 0 ? "done" : "done.");
"""

NATIVE_OUTER = re.compile(r"^(main|node::Start\b.*|__libc_start_main.*|__libc_start_call_main.*)$")


def node_and_script():
    """node (its real path, to upload) and NODE_JS written out."""
    ta.needs_go()
    need("node")
    ta.require_bpf()
    js = os.path.join(ta.TMP, "busy.js")
    with open(js, "w") as f:
        f.write(NODE_JS)
    return os.path.realpath(packages.which("node")), js


def js_named(f):
    """leaf <- middle <- outer named (leaf among the first three frames)."""
    return any(re.search(r"\bleaf\b", n) for n in f[:3]) and \
        any(re.search(r"\bmiddle\b", n) for n in f) and any(re.search(r"\bouter\b", n) for n in f)


def test_agent_jit__node_walk_reaches_main():
    """node --perf-basic-prof running leaf <- middle <- outer: the JS
    names in most samples, and the walk goes on from the JIT code through
    node's own frames (V8's builtins, no CFI: frame pointers; node's C++:
    its table) to main or libc's __libc_start_main in most samples."""
    node, js = node_and_script()
    agent = ta.Agent([])
    p = subprocess.Popen([node, "--perf-basic-prof", "--interpreted-frames-native-stack",
                          "--no-turbo-inlining", js, "6000"], stdout=subprocess.DEVNULL)
    ta.CHILDREN.append(p)
    try:
        p.wait(timeout=60)
    finally:
        if os.path.exists("/tmp/perf-%d.map" % p.pid):
            os.unlink("/tmp/perf-%d.map" % p.pid)
    agent.stop()
    s = jit_samples(agent, p.pid, [node, ta.LIBC])

    def reaches_main(f):
        last_js = max([i for i, n in enumerate(f) if re.search(r"\b(leaf|middle|outer)\b", n)],
                      default=-1)
        return last_js >= 0 and any(NATIVE_OUTER.match(n) for n in f[last_js + 1:])
    frac, total = ta.share(s, js_named)
    print("%.1f%% of %d samples show leaf <- middle <- outer" % (100 * frac, total))
    check(frac >= 0.5, "only %.1f%% of %d samples of node show leaf <- middle <- outer; "
          "the most frequent: %s" % (100 * frac, total, report(s)))
    frac, total = ta.share(s, reaches_main)
    print("%.1f%% of %d samples reach main below the JS frames" % (100 * frac, total))
    check(frac >= 0.5, "only %.1f%% of %d samples of node reach main (or "
          "__libc_start_main) below the JS frames; the most frequent: %s"
          % (100 * frac, total, report(s)))


# ---- perf maps the agent refuses ----------------------------------------------


def test_agent_jit__unsafe_perf_maps_ignored():
    """The perf map is written by the profiled process and read by root: a
    map owned by another user than the process's (and not root), one that is
    a symlink, and one over the size bound are each ignored (the JIT frame
    stays unnamed), counted in /metrics and logged once for the process."""
    ta.needs_go()
    ta.require_bpf()
    procs = [ta.run_fixture("jit_fp", 600) for _ in range(3)]
    maps = ["/tmp/perf-%d.map" % p.pid for p in procs]
    for m in maps:
        wait_for(lambda: os.path.exists(m) and os.path.getsize(m) > 0, "the fixture's perf map")
    other, link, big = maps
    os.chown(other, 65534, 65534)  # the process runs as root: another user's file
    os.rename(link, link + ".real")
    os.symlink(link + ".real", link)
    os.truncate(big, PERFMAP_MAX_BYTES + 1)
    try:
        agent = ta.Agent([])
        time.sleep(6)  # three intervals: the maps are tried again (rate-limited)
        refused = agent.metric("ember_agent_perf_maps_refused_total", default=0)
        log = agent.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for m in maps + [link + ".real"]:
            if os.path.lexists(m):
                os.unlink(m)
    for p, why in zip(procs, ["owned by uid 65534", "a symlink", "larger than"]):
        lines = [l for l in log.splitlines()
                 if "pid %d" % p.pid in l and "perf map" in l and why in l]
        check(len(lines) == 1, "pid %d: %d log lines refusing its perf map (%s), not 1:\n%s"
              % (p.pid, len(lines), why, log[-3000:]))
        s = jit_samples(agent, p.pid, [ta.fx("jit_fp"), ta.LIBC])
        named = sum(c for _, c, f in s if "jit_spin" in f)
        check(named == 0, "pid %d (%s): %d samples named jit_spin from a refused map"
              % (p.pid, why, named))
    check(refused >= 3, "/metrics counts %r refused perf maps, not >= 3" % refused)



# ---- jitdump files ------------------------------------------------------------


def test_agent_jit__node_jitdump_names_js():
    """node --perf-prof (no --perf-basic-prof: no perf map) writes
    jit-PID.dump in its current directory and maps it executable; the
    agent finds it among the process's mappings, reads it as it grows,
    and names leaf <- middle <- outer in most of node's samples.  One
    interval for the whole run: V8 writes its jitdump through a 4 KiB
    buffer, so the records of the code it compiled last (here middle and
    outer) reach the file at its exit, which the agent still reads through
    the descriptor it kept."""
    node, js = node_and_script()
    cwd = os.path.join(ta.TMP, "node-cwd")
    os.mkdir(cwd)
    agent = ta.Agent(["--interval", "120"])
    p = subprocess.Popen([node, "--perf-prof", "--interpreted-frames-native-stack",
                          "--no-turbo-inlining", js, "6000"], stdout=subprocess.DEVNULL, cwd=cwd)
    ta.CHILDREN.append(p)
    p.wait(timeout=60)
    log = agent.stop()
    perfmap = "/tmp/perf-%d.map" % p.pid
    check(not os.path.exists(perfmap), "node --perf-prof wrote %s too" % perfmap)
    dump = os.path.join(cwd, "jit-%d.dump" % p.pid)
    check(os.path.exists(dump), "node --perf-prof wrote no %s: %r" % (dump, os.listdir(cwd)))
    refused = [line for line in log.splitlines() if "jitdump" in line and " ignored: " in line]
    check(not refused, "the agent refused the jitdump: %r" % refused)
    s = jit_samples(agent, p.pid, [node, ta.LIBC])
    frac, total = ta.share(s, js_named)
    print("%.1f%% of %d samples show leaf <- middle <- outer (%d bytes of jitdump)"
          % (100 * frac, total, os.path.getsize(dump)))
    check(frac >= 0.5, "only %.1f%% of %d samples of node show leaf <- middle <- outer from "
          "its jitdump; the most frequent: %s; the agent's jitdump reads: %s"
          % (100 * frac, total, report(s), [l for l in log.splitlines() if "jitdump" in l]))

def main():
    ember_test.run_case(ta.CASE, "test_agent_jit__", globals(), ta.TMP, ta.CHILDREN)


if __name__ == "__main__":
    main()
