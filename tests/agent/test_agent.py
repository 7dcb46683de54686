#!/usr/bin/env python3
"""End-to-end tests of ember-agent with real BPF in this kernel.

    test_agent.py AGENT EMBER FIXTURES_DIR CASE      (CASE: test_agent_bpf__*)

Each case starts the real agent (waiting for its "sampling" line, never a
bare sleep), runs a fixture from tests/agent/fixtures/, stops the agent
(SIGTERM: it drains the last interval) and reads what it wrote with real
peers: the profiles are symbolized by a real `ember serve` (POST
/api/v1/symbolize/pprof, after uploading the fixture and libc) and read
with `go tool pprof -traces`.  A case that cannot run here (no BPF, no
root, no Go) exits 77 with the reason; it never passes silently.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import build_id, check, free_port, skip, wait_for  # noqa: E402

AGENT, EMBER, FXDIR, CASE = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="ember-agent-test.")
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
GO = packages.which("go")
CHILDREN = []  # stopped at exit, whatever the outcome
AGENT_TABLE_SHARE_DIV = 4  # agent/agent_internal.h: a process' share of the unwind maps


def fx(name):
    return os.path.join(FXDIR, name)


# ---- the server (symbolization, tables, uploads) ----------------------------


class Server(ember_test.Server):
    def __init__(self, port=0, args=(), data=None):
        super().__init__(EMBER, TMP, port=port, args=args, data=data)

    def upload(self, path):
        with open(path, "rb") as f:
            body = f.read()
        st = self.request("PUT", "/api/v1/artifacts/%s/executable?name=%s"
                          % (build_id(path), os.path.basename(path)), body,
                          {"Authorization": "Bearer " + self.token})[0]
        check(st in (200, 201), "upload of %s: HTTP %d" % (path, st))


# ---- the agent ---------------------------------------------------------------


class Agent:
    def __init__(self, args, out=None, env=None):
        self.out = out or tempfile.mkdtemp(dir=TMP, prefix="out.")
        self.metrics_port = free_port()
        self.logpath = os.path.join(TMP, "agent.%d.log" % len(CHILDREN))
        self.log = open(self.logpath, "wb")
        argv = [AGENT, "--output", self.out, "--frequency", "99", "--interval", "2",
                "--metrics-listen", "127.0.0.1:%d" % self.metrics_port,
                "--log-level", "debug"] + args  # each file's table: a debug line
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=self.log, env=env)
        CHILDREN.append(self.proc)
        wait_for(lambda: "agent: sampling at" in self.text() or self.proc.poll() is not None,
                 "the agent to start", 90)
        check(self.proc.poll() is None, "the agent exited at start:\n" + self.text()[-2000:])

    def text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=10)
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read().decode()
        c.close()
        check(r.status == 200, "/metrics answered %d" % r.status)
        return body

    def metric(self, name, labels="", default=None):
        m = re.search(r"^%s%s ([0-9.e+]+)$" % (re.escape(name), re.escape(labels)),
                      self.metrics(), re.M)
        check(m or default is not None, "no metric %s%s" % (name, labels))
        return float(m.group(1)) if m else default

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        check(rc == 0, "the agent exited with %d:\n%s" % (rc, self.text()[-2000:]))
        return self.text()

    def profiles(self):
        return sorted(os.path.join(self.out, f) for f in os.listdir(self.out)
                      if f.endswith(".pb.gz"))


def require_bpf():
    """Skip (77) with the kernel's reason when the agent cannot load here."""
    ember_test.agent_require_bpf(AGENT, TMP)


def run_fixture(name, seconds=4.0, wrapper=()):
    p = subprocess.Popen(list(wrapper) + [fx(name), str(seconds)])
    CHILDREN.append(p)
    return p


# ---- reading profiles with real peers ----------------------------------------


def symbolize(srv, path):
    """POST the agent's profile to the server, return the symbolized file."""
    with open(path, "rb") as f:
        st, body, _ = srv.request("POST", "/api/v1/symbolize/pprof", f.read())
    check(st == 200, "symbolize/pprof of %s: HTTP %d %r" % (path, st, body[:200]))
    out = path + ".sym.pb.gz"
    with open(out, "wb") as f:
        f.write(body)
    return out


def traces(path, sample_index="samples", symbolizer="none"):
    """`go tool pprof -traces`: [(labels, value, [function, ...] leaf first)]
    (a value in nanoseconds: -unit=ns)."""
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"))
    r = subprocess.run([GO, "tool", "pprof", "-traces", "-sample_index=" + sample_index,
                        "-unit=ns", "-symbolize=" + symbolizer, path],
                       capture_output=True, text=True, env=env,
                       timeout=120)
    check(r.returncode == 0, "go tool pprof failed: " + r.stderr[-1000:])
    out = []
    for block in r.stdout.split("-----------+")[1:]:
        labels, frames, count = {}, [], 0
        for line in block.splitlines()[1:]:
            if not line.strip():
                continue
            m = re.match(r"^\s*(\d+)(?:ns)?\s{2,}(\S.*)$", line)
            if not frames and m:
                count = int(m.group(1))
                frames.append(m.group(2).strip())
            elif frames:
                frames.append(line.strip())
            else:
                # the agent's sample attributes are "@KEY" (per sample, no series)
                lm = re.match(r"^\s*@?([a-z_.]+):\s+(.*)$", line)
                if lm:
                    labels[lm.group(1)] = lm.group(2).strip()
        if frames:
            out.append((labels, count, frames))
    return out


def samples_of(srv, agent, pid, upload=()):
    """The symbolized samples of process pid in every profile the agent wrote."""
    for path in upload:
        srv.upload(path)
    got = []
    profiles = agent.profiles()
    check(profiles, "the agent wrote no profile")
    for p in profiles:
        got += [s for s in traces(symbolize(srv, p)) if s[0].get("pid") == str(pid)]
    check(got, "no sample of pid %d in %d profiles" % (pid, len(profiles)))
    return got


def has_run(frames, run):
    n = len(run)
    return any(frames[i:i + n] == run for i in range(len(frames) - n + 1))


def share(samples, pred):
    total = sum(c for _, c, _ in samples)
    return sum(c for _, c, f in samples if pred(f)) / total, total


def check_chain(samples, run, at_least=0.9):
    frac, total = share(samples, lambda f: has_run(f, run))
    bad = {}
    for lab, c, f in samples:
        if not has_run(f, run):
            k = "%s %s" % (lab.get("unwind"), " <- ".join(f[:6]))
            bad[k] = bad.get(k, 0) + c
    check(frac >= at_least, "only %.1f%% of %d samples show %s; the others: %r"
          % (100 * frac, total, " <- ".join(run), sorted(bad.items(), key=lambda kv: -kv[1])))
    return frac, total


CHAIN = ["c", "b", "a", "main"]


def needs_go():
    if not GO:
        skip(packages.missing("go", "`go tool pprof` reads the profiles"))


# ---- cases --------------------------------------------------------------------


def test_agent_bpf__chain_without_frame_pointers():
    """-O2 -fomit-frame-pointer, already running when the agent starts:
    only the table the agent compiles can walk it."""
    needs_go()
    require_bpf()
    p = run_fixture("chain_nofp", 600)
    time.sleep(0.3)  # it exists before the agent: found by the start-up scan of /proc
    agent = Agent([])
    time.sleep(4)  # sampled for 4 s once the agent samples (its start-up may take long)
    p.terminate()
    p.wait()
    log = agent.stop()
    check(re.search(r"'%s' \(build ID [0-9a-f]+\): unwind table compiled by the agent"
                    % re.escape(fx("chain_nofp")), log), "no table compiled for the fixture")
    srv = Server()
    s = samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC])
    frac, total = check_chain(s, CHAIN)
    print("%.1f%% of %d samples show c <- b <- a <- main" % (100 * frac, total))


def test_agent_bpf__chain_with_frame_pointers():
    needs_go()
    require_bpf()
    agent = Agent([])
    p = run_fixture("chain_fp", 4)
    p.wait()
    agent.stop()
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_fp"), LIBC]), CHAIN)


def test_agent_bpf__process_started_after_the_agent():
    """Started after the agent: found by its exec event or its first sample,
    its libc by the next unknown pc; unwound by tables all the same."""
    needs_go()
    require_bpf()
    agent = Agent(["--log-level", "debug"])
    p = run_fixture("chain_nofp", 6)  # its table is compiled while it runs
    p.wait()
    check(agent.metric("ember_agent_frames_total", '{unwinder="table"}') > 0,
          "no frame unwound by a table")
    # no process maps it any more: unloaded once idle a whole interval
    wait_for(lambda: "'%s': unwind table unloaded" % fx("chain_nofp") in agent.text(),
             "the fixture's table to be unloaded", 30)
    check(agent.metric("ember_agent_table_unloads_total") >= 1, "no unload counted")
    agent.stop()
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN)


def test_agent_bpf__qsort_walk_crosses_libc():
    """main -> sorter -> qsort (libc, unwound by libc's table) -> cmp."""
    needs_go()
    require_bpf()
    agent = Agent([])
    p = run_fixture("qsort_nofp", 4)
    p.wait()
    agent.stop()
    srv = Server()
    s = samples_of(srv, agent, p.pid, [fx("qsort_nofp"), LIBC])
    check_chain(s, ["sorter", "main"])

    def through_libc(f):
        return (f and f[0] == "cmp" and "sorter" in f and f.index("sorter") > 1
                and has_run(f[f.index("sorter"):], ["sorter", "main"]))
    frac, total = share(s, through_libc)
    check(frac >= 0.3, "only %.1f%% of %d samples show cmp <- (libc) <- sorter <- main"
          % (100 * frac, total))


def test_agent_bpf__frame_pointers_and_a_table_mixed_per_frame():
    """--no-local-compile, and the server holds libc's table but not the
    fixture's: the fixture (built with frame pointers) is walked by its frame
    pointers, said in the log and /metrics, and qsort inside libc by libc's
    table from the server, in one stack: cmp <- qsort (table) <- sorter <-
    main (frame pointers)."""
    needs_go()
    require_bpf()
    srv = Server()
    srv.upload(LIBC)
    agent = Agent(["--server", srv.url, "--token", srv.token, "--no-local-compile"])
    # A copy of the fixture runs first until libc's table from the server
    # is loaded, so that the measured run's samples are not walked before
    # it (under load the fetch can take a second: 10% of them "read_failed")
    warm = os.path.join(TMP, "warm_qsort")
    shutil.copy(fx("qsort_fp"), warm)
    w = subprocess.Popen([warm, "60"])
    CHILDREN.append(w)
    wait_for(lambda: re.search(r"libc\.so\.6': table job waited .* loaded", agent.text()),
             "libc's table loaded", 60)
    p = run_fixture("qsort_fp", 4)
    # the copy's file or the fixture's, whichever the agent met first: one
    # build ID, one decision
    wait_for(lambda: re.search(r"'(%s|%s)' \(build ID %s\): frame pointers: "
                               % (re.escape(fx("qsort_fp")), re.escape(warm),
                                  build_id(fx("qsort_fp"))),
                               agent.text()), "the fixture's frame pointers in the log", 20)
    fp = agent.metric("ember_agent_files", '{source="frame_pointers"}')
    p.wait()
    w.kill()
    w.wait()
    log = agent.stop()
    check(fp >= 1, "/metrics counts no file walked by frame pointers")
    check(re.search(r"libc\.so\.6' \(build ID %s\): unwind table from the server"
                    % build_id(LIBC), log), "libc's table not from the server")
    check("'%s' (build ID %s): unwind table compiled" % (fx("qsort_fp"), build_id(fx("qsort_fp")))
          not in log, "compiled a table despite --no-local-compile")
    s = samples_of(srv, agent, p.pid, [fx("qsort_fp")])
    check_chain(s, ["sorter", "main"])
    frac, total = share(s, lambda f: (f and f[0] == "cmp" and "sorter" in f and
                                      f.index("sorter") > 1))
    check(frac >= 0.3, "only %.1f%% of %d samples show cmp <- (libc, by its table) <- sorter "
          "(frame pointers)" % (100 * frac, total))


def cgroup2_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, where, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return where
    return None


def sampled_pids(agent):
    """{pid: labels of its first sample} over every profile the agent wrote."""
    pids = {}
    for path in agent.profiles():
        for labels, _, _ in traces(path):
            pids.setdefault(labels.get("pid"), labels)
    return pids


def test_agent_bpf__pid_and_cgroup_choose_what_is_sampled():
    """--pid P samples P alone, --cgroup DIR the tasks in DIR alone, while
    another copy of the fixture runs beside them; the samples carry host,
    comm, pid, executable, build_id, cgroup and the container ID read from
    the cgroup path."""
    needs_go()
    require_bpf()
    root = cgroup2_root()
    if not root or not os.access(root, os.W_OK):
        skip("no writable cgroup v2 hierarchy here (/proc/self/mounts)")
    cid = "%064x" % (0xe3be4 * (os.getpid() + 1) << 100)
    cg = os.path.join(root, "ember-agent-test-" + cid)
    os.mkdir(cg)
    try:
        a = run_fixture("chain_fp", 600)
        b = run_fixture("chain_nofp", 600)
        agent = Agent(["--pid", str(a.pid)])
        time.sleep(3)
        agent.stop()
        pids = sampled_pids(agent)
        check(set(pids) == {str(a.pid)}, "--pid %d sampled %r" % (a.pid, sorted(pids)))
        lab = pids[str(a.pid)]
        check(lab.get("comm") == "chain_fp" and lab.get("executable") == fx("chain_fp") and
              lab.get("build_id") == build_id(fx("chain_fp")) and
              lab.get("host") == socket.gethostname(), "labels: %r" % lab)
        srv = Server()
        check_chain(samples_of(srv, agent, a.pid, [fx("chain_fp"), LIBC]), CHAIN)
        c = run_fixture("chain_fp", 600, wrapper=[
            "sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$1" "$2"', cg])
        wait_for(lambda: str(c.pid) in open(os.path.join(cg, "cgroup.procs")).read().split(),
                 "the fixture in its cgroup")
        agent = Agent(["--cgroup", cg])
        time.sleep(3)
        agent.stop()
        pids = sampled_pids(agent)
        check(set(pids) == {str(c.pid)}, "--cgroup sampled %r, not just %d" % (sorted(pids), c.pid))
        lab = pids[str(c.pid)]
        check(lab.get("cgroup") == "/" + os.path.basename(cg) and
              lab.get("container_id") == cid, "cgroup labels: %r" % lab)
    finally:
        for ch in CHILDREN:
            if ch.poll() is None:
                ch.kill()
                ch.wait()
        wait_for(lambda: not open(os.path.join(cg, "cgroup.procs")).read().strip(),
                 "the cgroup to empty", 10)
        os.rmdir(cg)


def test_agent_bpf__syscall_kernel_frames_named():
    needs_go()
    require_bpf()
    agent = Agent([])
    p = run_fixture("syscalls_nofp", 4)
    p.wait()
    agent.stop()
    srv = Server()
    s = samples_of(srv, agent, p.pid, [fx("syscalls_nofp"), LIBC])

    def kernel_under_user(f):
        k = [i for i, name in enumerate(f) if re.search(r"(ksys|vfs)_read", name)]
        return k and has_run(f[k[0]:], ["reader", "main"])
    frac, total = share(s, kernel_under_user)
    check(frac >= 0.7, "only %.1f%% of %d samples show vfs_read/ksys_read under "
          "reader <- main; e.g. %r" % (100 * frac, total, s[0][2]))


def test_agent_bpf__maps_transport_counts_in_bpf():
    """--transport maps (kept to measure against the default ring buffer,
    docs/performance-notes.md): samples counted in BPF hash maps, drained
    every interval; the same stacks, user frames by the table and kernel
    frames named."""
    needs_go()
    require_bpf()
    agent = Agent(["--transport", "maps"])
    p = run_fixture("chain_nofp", 4)
    q = run_fixture("syscalls_nofp", 4)
    p.wait()
    q.wait()
    agent.stop()
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN)
    s = samples_of(srv, agent, q.pid, [fx("syscalls_nofp"), LIBC])
    frac, total = share(s, lambda f: any(re.search(r"(ksys|vfs)_read", n) for n in f))
    check(frac >= 0.7, "only %.1f%% of %d samples show vfs_read/ksys_read; e.g. %r"
          % (100 * frac, total, s[0][2]))


def need_private_mount_namespace():
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                       capture_output=True, text=True)
    if r.returncode != 0:  # a chroot whose / is no mount point, or no CAP_SYS_ADMIN
        skip("no private mount namespace here: " + r.stderr.strip())


def test_agent_bpf__process_in_another_mount_namespace():
    """The binary exists only in the process's own mount namespace, at a path
    that does not exist outside it: read through /proc/PID/map_files."""
    needs_go()
    require_bpf()
    if not packages.which("unshare"):
        skip(packages.missing("unshare"))
    need_private_mount_namespace()
    where = tempfile.mkdtemp(dir=TMP, prefix="ns.")
    app = os.path.join(where, "app")
    agent = Agent([])
    p = run_fixture("chain_nofp", 4, wrapper=[
        "unshare", "-m", "--propagation", "private", "sh", "-c",
        'mount -t tmpfs tmpfs "$0" && cp "$1" "$0/app" && exec "$0/app" "$2"', where])
    p.wait()
    check(p.returncode == 0, "the fixture failed in its namespace")
    check(not os.path.exists(app), "the binary is visible outside its namespace")
    log = agent.stop()
    check("'%s'" % app in log, "the agent never read '%s'" % app)
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN)


def test_agent_bpf__server_without_table_agent_compiles():
    needs_go()
    require_bpf()
    srv = Server()  # stores nothing: GET /api/v1/unwind/ID answers 404
    agent = Agent(["--server", srv.url, "--token", srv.token])
    p = run_fixture("chain_nofp", 4)
    p.wait()
    compiled = agent.metric("ember_agent_files", '{source="compiled"}')
    log = agent.stop()
    check(re.search(r"'%s' \(build ID [0-9a-f]+\): unwind table compiled by the agent "
                    r"\(\d+ bytes\): the server has no table \(404"
                    % re.escape(fx("chain_nofp")), log),
          "the agent did not say it compiled the table the server lacks")
    check(compiled >= 1, "/metrics counts no compiled table")
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN)


def test_agent_bpf__table_from_server_then_from_cache():
    needs_go()
    require_bpf()
    srv = Server()
    srv.upload(fx("chain_nofp"))
    bid = build_id(fx("chain_nofp"))
    cache = os.path.join(TMP, "cache")
    agent = Agent(["--server", srv.url, "--token", srv.token, "--cache-dir", cache])
    p = run_fixture("chain_nofp", 2)
    p.wait()
    log = agent.stop()
    check(re.search(r"'%s' \(build ID %s\): unwind table from the server"
                    % (re.escape(fx("chain_nofp")), bid), log), "table not from the server")
    st, body, hdr = srv.request("GET", "/api/v1/unwind/" + bid)
    with open(os.path.join(cache, bid + ".unwind"), "rb") as f:
        check(f.read() == body, "the cached table differs from the server's")
    with open(os.path.join(cache, bid + ".etag")) as f:
        check(f.read() == hdr["etag"], "the cached ETag differs from the server's")
    # Restarted: the cached table, revalidated (If-None-Match -> 304).
    agent = Agent(["--server", srv.url, "--token", srv.token, "--cache-dir", cache])
    p = run_fixture("chain_nofp", 4)
    p.wait()
    log = agent.stop()
    check(re.search(r"'%s' \(build ID %s\): unwind table from the cache"
                    % (re.escape(fx("chain_nofp")), bid), log), "table not from the cache")
    check_chain(samples_of(srv, agent, p.pid, [LIBC]), CHAIN)


def test_agent_bpf__unreachable_server_keeps_sampling_bounded():
    """Nothing listens at --server: the agent compiles its tables, keeps
    sampling and writing profiles, queues pushes within --buffer-kb, drops
    the oldest and counts them.  Only the fixture is sampled (--pid), so a
    profile's size does not follow what else the machine runs; the cap is
    sized from a probe run's profiles (two and a half of them), so that one
    profile fits, is pushed and fails, and five intervals overflow the
    queue."""
    needs_go()
    require_bpf()
    dead = "http://127.0.0.1:%d" % free_port()
    p = run_fixture("chain_nofp", 600)
    probe = Agent(["--server", dead, "--interval", "1", "--pid", str(p.pid)])
    time.sleep(3.2)
    n, size = (probe.metric("ember_agent_push_queue_profiles"),
               probe.metric("ember_agent_push_queue_bytes"))
    probe.stop()
    p.terminate()
    p.wait()
    check(n >= 1, "the probe queued no profile")
    cap_kb = max(1, int(2.5 * size / n) // 1024)
    p = run_fixture("chain_nofp", 600)
    agent = Agent(["--server", dead, "--interval", "1", "--buffer-kb", str(cap_kb),
                   "--pid", str(p.pid)])
    time.sleep(5)
    p.terminate()
    p.wait()
    time.sleep(1.2)  # one more interval
    queued = agent.metric("ember_agent_push_queue_bytes")
    dropped = agent.metric("ember_agent_profiles_total", '{result="dropped"}')
    dropped_bytes = agent.metric("ember_agent_push_dropped_bytes_total")
    failures = agent.metric("ember_agent_push_failures_total")
    log = agent.stop()
    check(queued <= cap_kb * 1024, "push queue at %d bytes, past its %d KiB cap" % (queued, cap_kb))
    check(queued + dropped_bytes > cap_kb * 1024,
          "the profiles took %d bytes in all: too few to fill the queue" % (queued + dropped_bytes))
    check(dropped >= 1, "no profile dropped although the queue is full")
    check(failures >= 1, "no failed push counted")
    check("cannot push a profile to '%s/api/v1/profiles'" % dead in log,
          "the failed push is not in the log")
    check(len(agent.profiles()) >= 4, "sampling stopped: %d profiles" % len(agent.profiles()))
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN)


def test_agent_bpf__delivered_once_the_server_is_back():
    require_bpf()
    srv = Server()
    port, token = srv.port, srv.token
    srv.stop()
    # the token from $EMBER_TOKEN (--token and --token-file are the other cases')
    agent = Agent(["--server", "http://127.0.0.1:%d" % port, "--interval", "1"],
                  env=dict(os.environ, EMBER_TOKEN=token))
    p = run_fixture("chain_nofp", 3)
    p.wait()
    time.sleep(1.5)
    check(agent.metric("ember_agent_push_queue_profiles") >= 1, "nothing queued while down")
    srv.start(port=port)  # the same data, on the same port
    wait_for(lambda: agent.metric("ember_agent_push_queue_profiles") == 0,
             "the queue to drain into the restarted server", 400)
    check(agent.metric("ember_agent_profiles_total", '{result="sent"}') >= 1, "none sent")
    agent.stop()
    st, body, _ = srv.request("GET", "/api/v1/query?type=samples&from=now-10m&format=folded"
                              "&query=" + urllib.parse.quote('{service_name="chain_nofp"}'))
    check(st == 200 and body.strip(), "the restarted server holds no sample of chain_nofp: "
          "HTTP %d %r" % (st, body[:200]))


def ember(*args, timeout=120):
    """`ember ARGS...`: (returncode, stdout, stderr)."""
    r = subprocess.run([EMBER] + list(args), capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def test_agent_bpf__regression_found_by_diff_across_versions():
    """Issue 15's end to end: two builds of a program, the second with a
    slower checksum(), profiled for real by the agent while each runs
    (--label version=1, then 2), pushed to a real `ember serve`; `ember
    diff` and GET /api/v1/diff put checksum at the top of the regressions."""
    require_bpf()
    srv = Server()
    for v in ("v1", "v2"):
        srv.upload(fx(v + "/regress"))
    for v in ("1", "2"):
        agent = Agent(["--server", srv.url, "--token", srv.token, "--label", "version=" + v,
                       "--interval", "1"] +
                      (["--compression", "gzip"] if v == "2" else []))  # zstd, then gzip
        p = run_fixture("v%s/regress" % v, 2)  # CPU seconds: 200 samples at 99 Hz
        p.wait()
        agent.stop()  # drains and pushes the last interval
    base, new = '{version="1",service_name="regress"}', '{version="2",service_name="regress"}'
    for sel in (base, new):
        st, body, hdr = srv.request("GET", "/api/v1/query?type=cpu&from=now-10m&format=top"
                                    "&query=" + urllib.parse.quote(sel))
        check(st == 200 and int(hdr["x-ember-profiles"]) >= 2,
              "%s: HTTP %d, %s profiles" % (sel, st, hdr.get("x-ember-profiles")))
    rc, out, err = ember("diff", "--server", srv.url, "--type", "cpu", "--from", "now-10m",
                         "--base", base, "--new", new, "--format", "table")
    check(rc == 0, "ember diff: " + err)
    rows = json.loads(out)["rows"]
    check(rows[0]["name"] == "checksum" and rows[0]["flagged"] and
          rows[0]["delta_self_pct"] > 10,
          "the slowed function is not the top regression: %r" % rows[:3])
    print("checksum: %.1f%% -> %.1f%% of the CPU (z = %.0f)"
          % (rows[0]["base_self_pct"], rows[0]["new_self_pct"], rows[0]["z"]))
    st, body, _ = srv.request("GET", "/api/v1/diff?type=cpu&from=now-10m&format=table"
                              "&base_query=%s&new_query=%s"
                              % (urllib.parse.quote(base), urllib.parse.quote(new)))
    check(st == 200 and json.loads(body)["rows"][0]["name"] == "checksum", body[:300])


def test_agent_bpf__whole_pipeline_stripped_binary_named_by_ember_query():
    """ember serve; ember upload of a stripped binary's debug file;
    ember-agent --server (with --upload-missing: the server has no
    executable of the build ID, and a debug file alone cannot place the
    agent's file offsets: objcopy --only-keep-debug leaves its PT_LOADs
    without file bytes); the binary run after the agent loaded its unwind
    table; ember query shows main -> a -> b -> c by name."""
    require_bpf()
    objcopy, strip = packages.which("objcopy"), packages.which("strip")
    if not objcopy or not strip:
        skip(packages.missing("objcopy"))
    exe = os.path.join(TMP, "chain_stripped")
    dbg = exe + ".debug"
    subprocess.run([objcopy, "--only-keep-debug", fx("chain_nofp"), dbg], check=True)
    subprocess.run([strip, "--strip-all", "-o", exe, fx("chain_nofp")], check=True)
    check(build_id(exe) == build_id(dbg), "the stripped binary lost its build ID")
    srv = Server()
    rc, out, err = ember("upload", "--server", srv.url, "--token", srv.token, dbg)
    check(rc == 0, "ember upload: %s%s" % (out, err))
    agent = Agent(["--server", srv.url, "--token", srv.token, "--interval", "1",
                   "--upload-missing"])
    # A first copy (a hard link: the same file, another service name) runs
    # until the agent has loaded the binary's unwind table (the server has
    # none: the agent uploads the executable, then compiles it); the
    # measured run starts after that, so how long that took on a loaded
    # machine does not count against it.
    warm = os.path.join(TMP, "warm_chain")
    os.link(exe, warm)
    w = subprocess.Popen([warm, "60"])
    CHILDREN.append(w)
    loaded = r"'%s': table job waited .* loaded" % re.escape(warm)
    try:
        wait_for(lambda: re.search(loaded, agent.text()), "the binary's unwind table", 60)
    except AssertionError as e:
        raise AssertionError("%s; the agent said: %r" % (
            e, [l for l in agent.text().splitlines() if warm in l]))
    p = subprocess.Popen([exe, "8"])
    CHILDREN.append(p)
    p.wait()
    w.kill()
    w.wait()
    agent.stop()
    rc, out, err = ember("query", "--server", srv.url, "--type", "cpu", "--from", "now-10m",
                         "--format", "folded", '{service_name="chain_stripped"}')
    check(rc == 0, "ember query: " + err)
    stacks = {" ".join(l.split(" ")[:-1]): int(l.split(" ")[-1]) for l in out.splitlines()}
    total = sum(stacks.values())
    chain = sum(v for k, v in stacks.items() if "main;a;b;c" in k)
    check(total and chain >= 0.9 * total,
          "only %d of %d ns show main;a;b;c: %r" % (chain, total, sorted(stacks.items(),
                                                                        key=lambda kv: -kv[1])[:5]))
    print("%.1f%% of the process's CPU shows main;a;b;c by name" % (100.0 * chain / total))


def test_agent_bpf__upload_missing_and_refused_upload():
    require_bpf()
    srv = Server()
    bid = build_id(fx("chain_fp"))
    tokfile = os.path.join(srv.data, "token")
    agent = Agent(["--server", srv.url, "--upload-missing", "--token-file", tokfile,
                   "--pid", "1"])  # only what the test starts matters; pid 1 is quiet
    agent.stop()
    # Sampling everything, the fixture's executable is uploaded when first seen.
    agent = Agent(["--server", srv.url, "--upload-missing", "--token-file", tokfile])
    p = run_fixture("chain_fp", 2)
    p.wait()
    want = "uploaded '%s' (build ID %s" % (fx("chain_fp"), bid)
    wait_for(lambda: want in agent.text(), "the upload (on the agent's table thread)", 60)
    agent.stop()
    st, body, _ = srv.request("GET", "/api/v1/artifacts/" + bid)
    check(st == 200 and b'"executable":"' in body, "the server has no executable: %r" % body)
    # With the ingest token (pushes, not uploads) the server refuses the
    # upload, and the agent says why.
    bid2 = build_id(fx("qsort_nofp"))
    ingest = os.path.join(TMP, "ingest-token")
    with open(os.open(ingest, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write("ingest-only-token-0123456789abcdef\n")
    srv.stop()
    srv = Server(args=["--ingest-token-file", ingest])
    agent = Agent(["--server", srv.url, "--upload-missing", "--token-file", ingest])
    p = run_fixture("qsort_nofp", 2)
    p.wait()
    refused = r"the server refused the upload of '%s': HTTP 401" % re.escape(fx("qsort_nofp"))
    wait_for(lambda: re.search(refused, agent.text()), "the refusal to be explained", 60)
    agent.stop()
    st, body, _ = srv.request("GET", "/api/v1/artifacts/" + bid2)
    check(b'"executable":"' not in body, "uploaded despite the wrong token")


def test_agent_bpf__upload_missing_only_roots_files():
    """Any user can write an ELF claiming the build ID of a binary root
    runs.  With --upload-missing, a copy of the fixture owned by uid 65534
    (the same build ID) is not uploaded, and the agent says why; root's
    own file of that build ID, run next, is uploaded and gets its own
    entry (the user's file shared no table with it)."""
    require_bpf()
    srv = Server()
    bid = build_id(fx("chain_fp"))
    crafted = os.path.join(tempfile.mkdtemp(dir=TMP, prefix="user."), "chain_fp")
    shutil.copy(fx("chain_fp"), crafted)
    os.chown(crafted, 65534, 65534)
    os.chmod(crafted, 0o755)
    agent = Agent(["--server", srv.url, "--upload-missing", "--token", srv.token])
    p = subprocess.Popen([crafted, "1"])
    CHILDREN.append(p)
    p.wait()
    refused = "not uploading '%s' (build ID %s): not owned by root (uid 65534" % (crafted, bid)
    wait_for(lambda: refused in agent.text(), "the refusal of the user's file", 60)
    st, body, _ = srv.request("GET", "/api/v1/artifacts/" + bid)
    check(b'"executable":"' not in body, "the user's file was uploaded: %r" % body[:300])
    p = run_fixture("chain_fp", 1)
    p.wait()
    want = "uploaded '%s' (build ID %s" % (fx("chain_fp"), bid)
    wait_for(lambda: want in agent.text(), "the upload of root's file", 60)
    log = agent.stop()
    check(re.search(r"'%s' \(build ID %s\): unwind table" % (re.escape(fx("chain_fp")), bid),
                    log), "root's file shared the entry of the user's file")
    st, body, _ = srv.request("GET", "/api/v1/artifacts/" + bid)
    check(st == 200 and b'"executable":"' in body, "root's file not uploaded: %r" % body[:300])


def test_agent_bpf__jit_frames_named_from_perf_map():
    """Code in anonymous executable memory, named in /tmp/perf-PID.map."""
    needs_go()
    require_bpf()
    agent = Agent([])
    p = run_fixture("jit_fp", 4)
    p.wait()
    agent.stop()
    srv = Server()
    s = samples_of(srv, agent, p.pid, [fx("jit_fp"), LIBC])
    frac, total = share(s, lambda f: f[0] == "jit_spin" and "main" in f)
    check(frac >= 0.8, "only %.1f%% of %d samples have the leaf jit_spin under main; e.g. %r"
          % (100 * frac, total, [f for _, _, f in s[:3]]))


def test_agent_bpf__truncated_stacks_are_marked():
    needs_go()
    require_bpf()
    agent = Agent([])
    p = run_fixture("deep_nofp", 3)
    p.wait()
    truncated = agent.metric("ember_agent_walk_stops_total", '{reason="truncated"}')
    agent.stop()
    check(truncated >= 1, "no truncated walk counted")
    srv = Server()
    s = samples_of(srv, agent, p.pid, [fx("deep_nofp"), LIBC])
    frac, total = share(s, lambda f: f[-1] == "[truncated]" and f.count("deep") >= 100)
    check(frac >= 0.8, "only %.1f%% of %d deep samples end in [truncated]" % (100 * frac, total))
    check(all(lab.get("unwind") == "truncated" for lab, _, f in s if f[-1] == "[truncated]"),
          "truncated samples not labelled unwind=truncated")


def as_nobody():
    """setpriv to uid/gid 65534 (a local user without privileges), or []
    (then root) where setpriv is missing."""
    setpriv = packages.which("setpriv")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else []


def executable_mappings_except(pid):
    """The executable file mappings of every process but pid, now."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == pid:
            continue
        try:
            with open("/proc/%s/maps" % d) as f:
                n += sum(1 for l in f if len(l.split()) >= 6 and l.split()[1][2] == "x")
        except OSError:
            pass
    return n


def test_agent_bpf__many_mappings_bounded():
    """A local user's process with 64,000 executable mappings (one page of
    a file each, with gaps, below its own code): the agent reads its maps
    no further than AGENT_PROCESS_MAPPINGS_MAX, says so once and counts
    it, rescans it at most every 30 s; its scan, CPU time and memory stay
    small, and a process started next to it is unwound by its table."""
    needs_go()
    require_bpf()
    hog = subprocess.Popen(as_nobody() + [fx("many_maps"), "600", "64000"],
                           stdout=subprocess.PIPE, text=True)
    CHILDREN.append(hog)
    check(hog.stdout.readline().startswith("ready"), "many_maps did not map its pages")
    agent = Agent(["--interval", "1"])
    scan_s = float(re.search(r"\(scanned in ([0-9.]+) s\)", agent.text()).group(1))
    cpu0, t0 = ember_test.cpu_seconds(agent.proc.pid), time.time()
    p = run_fixture("chain_nofp", 4)
    p.wait()
    time.sleep(max(0, 8 - (time.time() - t0)))
    cpu, wall = ember_test.cpu_seconds(agent.proc.pid) - cpu0, time.time() - t0
    mappings = agent.metric("ember_agent_mappings")
    dropped = agent.metric("ember_agent_dropped_total", '{what="mappings_process_limit"}')
    hwm = ember_test.vm_status(agent.proc.pid, "VmHWM") // 1024
    log = agent.stop()
    print("start-up scan %.2f s; agent CPU %.2f s in %.1f s; peak RSS %d kB; %d mappings held"
          % (scan_s, cpu, wall, hwm, mappings))
    check(scan_s < 10, "the start-up scan took %.1f s" % scan_s)
    check(cpu < 0.25 * wall, "the agent took %.2f s of CPU in %.1f s" % (cpu, wall))
    others = executable_mappings_except(hog.pid)
    check(mappings <= others + 1024 + 4096 and dropped >= 1,
          "%d mappings held (the host's other processes map %d), %d truncated scans counted"
          % (mappings, others, dropped))
    warned = re.findall(r"pid %d \(many_maps\) has more executable mappings than a process "
                        r"may hold" % hog.pid, log)
    check(len(warned) == 1, "the truncation logged %d times" % len(warned))
    # The peak includes the tables of whatever else runs on the host (the
    # mappings check above is the host-independent one): a loose guard.
    check(hwm < 512 * 1024, "the agent's peak RSS reached %d kB" % hwm)
    check(re.search(r"'%s' \(build ID [0-9a-f]+\): unwind table compiled by the agent"
                    % re.escape(fx("chain_nofp")), log), "no table for the other process")
    srv = Server()
    check_chain(samples_of(srv, agent, p.pid, [fx("chain_nofp"), LIBC]), CHAIN, 0.8)


HOG_MAPS = """
import mmap, sys, time
maps = []
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        maps.append(mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC,
                              flags=mmap.MAP_PRIVATE))
print("ready", flush=True)
time.sleep(600)
"""


def libc_copies(n):
    """n copies of libc, each with its own build ID (the note's bytes
    rewritten): n distinct binaries with a 63 KB table each."""
    with open(LIBC, "rb") as f:
        body = f.read()
    old = bytes.fromhex(build_id(LIBC))
    check(body.count(old) == 1, "libc's build ID is not found once in it")
    out = []
    d = tempfile.mkdtemp(dir=TMP, prefix="copies.")
    for i in range(n):
        new = bytes([i + 1]) * len(old)
        path = os.path.join(d, "lib%d.so" % i)
        with open(path, "wb") as f:
            f.write(body.replace(old, new))
        out.append(path)
    return out


def test_agent_bpf__unwind_maps_shared_by_rule():
    """One process maps 150 distinct binaries with tables (libc copies)
    (some 40 KB of unwind_data each) into unwind maps of 6 MiB: its
    tables past a quarter of the maps are refused, said once and counted;
    a library (another copy, as large) mapped by a process started later
    (scanned after it) still gets its table loaded."""
    require_bpf()
    copies = libc_copies(151)
    hog = subprocess.Popen([sys.executable, "-c", HOG_MAPS] + copies[:150],
                           stdout=subprocess.PIPE, text=True)
    CHILDREN.append(hog)
    check(hog.stdout.readline().startswith("ready"), "the hog did not map its copies")
    late = subprocess.Popen([sys.executable, "-c", HOG_MAPS, copies[150]],
                            stdout=subprocess.PIPE, text=True)
    CHILDREN.append(late)
    check(late.stdout.readline().startswith("ready"), "the later process did not map its copy")
    # both found by the start-up scan, in pid order: the hog's tables first
    agent = Agent(["--unwind-data-mb", "6"])
    wait_for(lambda: agent.metric("ember_agent_tables_pending") == 0, "the tables", 120)
    refused = agent.metric("ember_agent_tables_refused_total", '{reason="process_share"}')
    log = agent.stop()
    print("hog's tables refused by its share: %d" % refused)
    check(refused >= 1, "none of the hog's tables refused")
    check(len(re.findall(r"pid %d maps more binaries than its share" % hog.pid, log)) == 1,
          "the hog's share not logged exactly once")
    mine = [l for l in log.splitlines() if "'%s'" % copies[150] in l]
    check(mine and "unwind table compiled by the agent" in mine[0],
          "the later library got no table: %r" % mine)


EXEC_WHEN_TOLD = """
import os, sys
sys.stdin.readline()
os.environ["LD_LIBRARY_PATH"] = sys.argv[1]
os.execv(sys.argv[2], sys.argv[2:])
"""


def table_data_bytes(path):
    """The unwind_data bytes of path's table (its header's data_size,
    docs/unwind-format.md), as `ember unwind compile` makes it."""
    out = os.path.join(TMP, "table.unwind")
    r = subprocess.run([EMBER, "unwind", "compile", path, "-o", out], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, "ember unwind compile %s: %s" % (path, r.stderr[-500:]))
    with open(out, "rb") as f:
        return int.from_bytes(f.read(128)[40:44], "little")  # data_size


def outcomes(log, path):
    """What the agent said of path's table, in order: 'loaded', 'evicted',
    'refused' (its share), 'full' or another reason."""
    said = []
    for line in log.splitlines():
        if "'%s' (build ID" % path not in line:
            continue
        said.append("loaded" if "unwind table compiled by the agent" in line else
                    "evicted" if "frame pointers: evicted" in line else
                    "refused" if "frame pointers: refused" in line else
                    "full" if "the unwind maps are full" in line else line)
    return said


def test_agent_bpf__unwind_maps_fair_share_evicts_the_largest():
    """Five processes each map private binaries (libc copies) up to their
    share of unwind maps of 2 MiB (a quarter each: together more than the
    maps, so the fifth gets room by evicting the others' newest tables);
    then a sixth process, known to the agent before, execs a binary only
    it maps, with its own libc (another copy, as large as a hog's): room
    is made for both tables by evicting the newest table of the process
    holding the most (counted, logged once for it), so they are loaded
    and its stacks unwound.  Only the test's processes are sampled
    (--pid): the host's own tables take no room here."""
    needs_go()
    require_bpf()
    data_mb, per_copy = 2, table_data_bytes(LIBC)
    per_hog = (data_mb << 20) // AGENT_TABLE_SHARE_DIV // per_copy
    copies = libc_copies(5 * per_hog + 1)
    own_libc = os.path.join(tempfile.mkdtemp(dir=TMP, prefix="own."), "libc.so.6")
    os.rename(copies.pop(), own_libc)
    hogs = []
    for i in range(5):
        hog = subprocess.Popen([sys.executable, "-c", HOG_MAPS] +
                               copies[i * per_hog:(i + 1) * per_hog],
                               stdout=subprocess.PIPE, text=True)
        CHILDREN.append(hog)
        check(hog.stdout.readline().startswith("ready"), "hog %d did not map its copies" % i)
        hogs.append(hog)
    late = subprocess.Popen([sys.executable, "-c", EXEC_WHEN_TOLD, os.path.dirname(own_libc),
                             fx("chain_nofp"), "5"], stdin=subprocess.PIPE, text=True)
    CHILDREN.append(late)
    pids = [h.pid for h in hogs] + [late.pid]  # scanned in this order: the hogs first
    agent = Agent(["--unwind-data-mb", str(data_mb), "--pid", ",".join(map(str, pids))])
    wait_for(lambda: agent.metric("ember_agent_tables_pending") == 0, "the hogs' tables", 120)
    full = agent.metric("ember_agent_tables_refused_total", '{reason="maps_full"}')
    late.stdin.write("go\n")
    late.stdin.flush()
    wait_for(lambda: all("'%s' (build ID" % p in agent.text()
                         for p in (fx("chain_nofp"), own_libc)), "the newcomer's tables", 60)
    late.wait()
    evicted = agent.metric("ember_agent_tables_evicted_total", '{reason="fair_share"}', 0)
    log = agent.stop()
    held = []
    for i in range(5):
        said = [outcomes(log, c) for c in copies[i * per_hog:(i + 1) * per_hog]]
        held.append(sum(1 for o in said if o and o[-1] == "loaded"))
    said = {p: outcomes(log, p) for p in (fx("chain_nofp"), own_libc)}
    print("%d copies a hog (%d data bytes each); maps_full refusals before the newcomer: %d; "
          "evicted: %d; copies each hog holds at the end: %r; the newcomer's tables: %r"
          % (per_hog, per_copy, full, evicted, held, sorted(said.values())))
    check(all(o == ["loaded"] for o in said.values()), "the newcomer's tables: %r" % said)
    check(evicted >= 1, "no table evicted for the newcomer")
    warned = [len(re.findall(r"pid %d holds more of the unwind maps" % h.pid, log))
              for h in hogs]
    check(max(warned) == 1, "the evictions logged %r times a hog" % warned)
    check(min(held) >= 1 and max(held) - min(held) <= 2,
          "the hogs hold %r copies: not shared fairly" % held)
    srv = Server()
    check_chain(samples_of(srv, agent, late.pid, [fx("chain_nofp"), LIBC]), CHAIN, 0.8)


def test_agent_bpf__clear_errors():
    r = subprocess.run([AGENT], capture_output=True, text=True)
    check(r.returncode == 2 and "give --output DIR or --server URL" in r.stderr, r.stderr)
    r = subprocess.run([AGENT, "--output", TMP, "--frequency", "x"], capture_output=True,
                       text=True)
    check(r.returncode == 2 and "invalid value 'x' for --frequency" in r.stderr, r.stderr)
    if os.geteuid() != 0:
        skip("the capability check needs root (to drop its capabilities)")
    if not packages.which("setpriv"):
        skip(packages.missing("setpriv"))
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "--inh-caps=-all", AGENT, "--output", TMP],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "missing CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)"
          in r.stderr, "without capabilities: %d %r" % (r.returncode, r.stderr))
    # a kernel too old, as uname tells it (setarch --uname-2.6)
    setarch, unshare = packages.which("setarch"), packages.which("unshare")
    if not setarch or not unshare:
        skip(packages.missing("setarch" if not setarch else "unshare"))
    r = subprocess.run([setarch, os.uname().machine, "--uname-2.6", AGENT, "--output", TMP],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and re.search(r"kernel 2\.6 is too old: the agent needs 5\.17",
                                          r.stderr), "uname 2.6: %d %r" % (r.returncode, r.stderr))
    # no kernel BTF: /sys/kernel/btf hidden by an empty tmpfs in a mount
    # namespace (the checks above passed when this one skips)
    need_private_mount_namespace()
    r = subprocess.run([unshare, "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs tmpfs /sys/kernel/btf && exec "$0" --output "$1"',
                        AGENT, TMP], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "no kernel BTF ('/sys/kernel/btf/vmlinux': No such file"
          in r.stderr, "without BTF: %d %r" % (r.returncode, r.stderr))


def main():
    ember_test.run_case(CASE, "test_agent_bpf__", globals(), TMP, CHILDREN)


if __name__ == "__main__":
    main()
