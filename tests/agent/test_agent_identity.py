#!/usr/bin/env python3
"""Service identity of ember-agent's samples, with real BPF in this kernel.

    test_agent_identity.py AGENT EMBER FIXTURES_DIR CASE  (CASE: test_agent_identity__*)

Two fixtures run in units of their own (a transient scope from
`systemd-run --scope` where systemd is PID 1, else cgroup v2 directories
named NAME.service made here); the agent (--pid: those two alone) pushes to
a real `ember serve`, whose label index then says what the series labels
are (host, service_name from the unit, the --label ones that apply: no pid,
no comm), and whose pprof answer still labels each sample with its pid.
A process of named threads (fixtures/threads.c) gets its thread IDs as
the samples' tid, one series whatever its threads.
The cgroup-path parser's table of paths is tests/unit/test_agent.c's
test_agent__service_name_from_cgroup_paths.  A case that cannot run here
exits 77 with the reason.
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_agent as ta  # noqa: E402  (the same argv: AGENT EMBER FIXTURES_DIR CASE)
from ember_test import check, skip, wait_for  # noqa: E402

AGENT, CASE = ta.AGENT, ta.CASE


def systemd_is_init():
    return os.path.isdir("/run/systemd/system")


class Unit:
    """A fixture run in a unit named name: a transient scope under systemd,
    else a cgroup v2 directory name.service under the hierarchy's root."""

    def __init__(self, name, fixture, seconds):
        self.name, self.cg = name, None
        if systemd_is_init():
            self.proc = ta.run_fixture(fixture, seconds, wrapper=[
                "systemd-run", "--quiet", "--collect", "--unit=" + name, "--scope"])
            return
        root = ta.cgroup2_root()
        if not root or not os.access(root, os.W_OK):
            skip("systemd is not PID 1 and no cgroup v2 hierarchy is writable here "
                 "(/proc/self/mounts): no unit to run a fixture in")
        self.cg = os.path.join(root, name + ".service")
        os.mkdir(self.cg)
        self.proc = ta.run_fixture(fixture, seconds, wrapper=[
            "sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$1" "$2"', self.cg])
        wait_for(lambda: str(self.proc.pid) in self.procs(), "the fixture in " + self.cg)

    def procs(self):
        with open(os.path.join(self.cg, "cgroup.procs")) as f:
            return f.read().split()

    def remove(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.cg and os.path.isdir(self.cg):
            wait_for(lambda: not self.procs(), "the cgroup to empty", 10)
            os.rmdir(self.cg)


def get_json(srv, path, **q):
    st, body, _ = srv.request("GET", path + "?" + urllib.parse.urlencode(q))
    check(st == 200, "%s: HTTP %d %r" % (path, st, body[:300]))
    return json.loads(body)


def query_samples(srv, selector):
    """The samples of selector on the server, from its pprof answer, read by
    `go tool pprof -traces`: [(labels, count, frames)]."""
    st, body, _ = srv.request("GET", "/api/v1/query?" + urllib.parse.urlencode(
        {"type": "samples", "from": "now-10m", "format": "pprof", "query": selector}))
    check(st == 200, "query %s: HTTP %d %r" % (selector, st, body[:300]))
    path = os.path.join(ta.TMP, "query.%d.pb.gz" % time.monotonic_ns())
    with open(path, "wb") as f:
        f.write(body)
    return ta.traces(path)


def test_agent_identity__series_by_service_pid_per_sample():
    """Two processes in units A and B: one series each, labelled host,
    service_name (the unit) and the --label ones that apply (team for both;
    version=1 for both but A, whose --label 'service_name=A:version=2.4'
    wins); no series label pid or comm; the server's pprof still says each
    sample's pid."""
    ta.needs_go()
    ta.require_bpf()
    tag = "ember-test-%d" % os.getpid()
    units = []
    try:
        units.append(Unit(tag + "-a", "chain_fp", 600))
        units.append(Unit(tag + "-b", "chain_nofp", 600))
        a, b = units
        srv = ta.Server()
        agent = ta.Agent(["--server", srv.url, "--token", srv.token, "--interval", "1",
                          "--pid", "%d,%d" % (a.proc.pid, b.proc.pid), "--label", "team=t1", "--label", "version=1",
                          "--label", "service_name=%s:version=2.4" % a.name])
        def services():
            return sorted(get_json(srv, "/api/v1/labels/service_name/values", query="{}",
                                   **{"from": "now-10m"})["values"])

        # pushed every second: both there within a minute even on a loaded host
        wait_for(lambda: services() == sorted([a.name, b.name]),
                 "the two units among service_name's values", 90)
        agent.stop()  # drains and pushes the last interval
        values = services()
        check(values == sorted([a.name, b.name]),
              "service_name values %r, not the two units %r" % (values, [a.name, b.name]))
        for u, want in ((a, {"host", "service_name", "team", "version"}),
                        (b, {"host", "service_name", "team", "version"})):
            sel = '{service_name="%s"}' % u.name
            names = set(get_json(srv, "/api/v1/labels", query=sel,
                                 **{"from": "now-10m"})["names"]) - {"__name__"}
            check(names == want, "%s: series labels %r, want %r" % (u.name, sorted(names),
                                                                  sorted(want)))
            samples = query_samples(srv, sel)
            pids = {lab.get("pid") for lab, _, _ in samples}
            check(samples and pids == {str(u.proc.pid)},
                  "%s: samples labelled pid %r, want {%d}" % (u.name, pids, u.proc.pid))
        for u, want in ((a, ["2.4"]), (b, ["1"])):
            values = get_json(srv, "/api/v1/labels/version/values",
                              query='{service_name="%s"}' % u.name, **{"from": "now-10m"})
            check(values["values"] == want, "%s: version %r, want %r"
                  % (u.name, values["values"], want))
    finally:
        for u in units:
            u.remove()


def thread_names(pid):
    """{tid: comm} of pid's threads, from /proc/PID/task."""
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                out[t] = f.read().strip()
        except OSError:
            pass  # the thread ended
    return out


def test_agent_identity__thread_id_a_sample_attribute():
    """A process with named threads (spin-a doing work_a, spin-b doing
    work_b, four more named pool): each sample's tid is one of the
    process's threads as /proc/PID/task lists them, with that thread's
    name and work, several threads are told apart, and the process is
    still one series (host and service_name, one value each: no tid, no
    pid)."""
    ta.needs_go()
    ta.require_bpf()
    p = subprocess.Popen([ta.fx("threads_fp"), "2.5", "4"], stdout=subprocess.DEVNULL)
    ta.CHILDREN.append(p)
    wait_for(lambda: len(thread_names(p.pid)) == 7 and
             "pool" in thread_names(p.pid).values(), "the fixture's 7 threads", 30)
    names = thread_names(p.pid)
    by_name = {v: k for k, v in names.items()}
    srv = ta.Server()
    srv.upload(ta.fx("threads_fp"))
    agent = ta.Agent(["--server", srv.url, "--token", srv.token, "--interval", "1",
                      "--pid", str(p.pid)])
    p.wait(timeout=120)
    agent.stop()  # drains and pushes the last interval
    samples = query_samples(srv, "{}")
    tids = {}
    for lab, c, f in samples:
        check(lab.get("pid") == str(p.pid), "a sample of pid %r, not %d" % (lab.get("pid"), p.pid))
        tid = lab.get("tid")
        check(tid in names, "a sample of tid %r, not a thread of %d (%r)" % (tid, p.pid, names))
        check(lab.get("comm") == names[tid], "tid %s labelled comm %r, its name is %r"
              % (tid, lab.get("comm"), names[tid]))
        tids[tid] = tids.get(tid, 0) + c
    pool = [t for t, n in names.items() if n == "pool" and t in tids]
    check(by_name["spin-a"] in tids and by_name["spin-b"] in tids and len(pool) >= 2,
          "samples by thread %r; threads %r" % (tids, names))
    for name, work in (("spin-a", "work_a"), ("spin-b", "work_b")):
        mine = [s for s in samples if s[0].get("tid") == by_name[name]]
        frac, total = ta.share(mine, lambda f: work in f)
        check(frac >= 0.8, "%s (tid %s): %.0f%% of %d samples in %s"
              % (name, by_name[name], 100 * frac, total, work))
    labels = set(get_json(srv, "/api/v1/labels", query="{}",
                          **{"from": "now-10m"})["names"]) - {"__name__"}
    check(labels == {"host", "service_name"}, "series labels %r" % sorted(labels))
    for name in labels:
        values = get_json(srv, "/api/v1/labels/%s/values" % name, query="{}",
                          **{"from": "now-10m"})["values"]
        check(len(values) == 1, "%d values of %s (%r): more than one series for %d threads"
              % (len(values), name, values, len(tids)))


def test_agent_identity__malformed_label_refused_at_start():
    """A malformed --label ends the agent before it samples: status 2 and
    the reason, for the plain and the per-service form alike."""
    for arg, why in (("version", "not K=V"), ("x-y=1", "[a-zA-Z_][a-zA-Z0-9_.]*"),
                     ("service_name=:version=2", "no service name"),
                     ("service_name=checkout:version", "not K=V")):
        r = subprocess.run([AGENT, "--output", ta.TMP, "--label", arg], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 2 and "invalid --label" in r.stderr and why in r.stderr,
              "--label %r: exit %d, %r" % (arg, r.returncode, r.stderr))


def main():
    import ember_test
    ember_test.run_case(CASE, "test_agent_identity__", globals(), ta.TMP, ta.CHILDREN)


if __name__ == "__main__":
    main()
