#!/usr/bin/env python3
"""The agent's start-up with --server, against a real `ember serve`.

    test_agent_startup.py AGENT EMBER FIXTURES_DIR CASE  (CASE: test_agent_startup__*)

Without the token, with a wrong one, or with a --label the server would
refuse, the agent stops within seconds, exit status 1, the server's
reason on stderr, having pushed nothing; with the right token it
samples, pushes, logs one info line an interval (no line per file) and a
summary at SIGTERM.  Against `ember serve --multitenancy`, the agent's
--tenant names the store its profiles land in, and without one (or with
another tenant's token) it stops with the server's reason.  A case that
needs BPF exits 77 with the kernel's reason where the agent cannot load
here.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember_test  # noqa: E402
from ember_test import check, skip, wait_for  # noqa: E402

AGENT, EMBER, _FXDIR, CASE = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="ember-agent-startup.")
CHILDREN = []
CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"


def require_bpf():
    ember_test.agent_require_bpf(AGENT, TMP)


def stored_series(srv, tenant=None):
    """The series srv holds (with --multitenancy: tenant's)."""
    st, body, _ = srv.request("GET", "/api/v1/series?type=%s&from=now-1h&to=now" % CPU,
                              headers={"X-Scope-OrgID": tenant} if tenant else None)
    check(st == 200, "/api/v1/series: %d %r" % (st, body))
    return body.count(b'"labels"')


def refused(args, reason, status=1, serve=(), tenants=(None,)):
    """The agent with args stops in seconds with status (1: the server's
    refusal; 2: its own, of a malformed option), reason on stderr; a
    server started with serve holds no series of any of tenants."""
    require_bpf()
    srv = ember_test.Server(EMBER, TMP, serve)
    t = time.time()
    r = subprocess.run([AGENT, "--server", srv.url, "--pid", str(os.getpid())]
                       + [a.replace("TOKEN", srv.token) for a in args],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == status, "exit %d, not %d:\n%s" % (r.returncode, status,
                                                           r.stderr[-2000:]))
    check(time.time() - t < 20, "the agent took %.1f s to stop" % (time.time() - t))
    check(re.search(reason, r.stderr), "no %r on stderr:\n%s" % (reason, r.stderr[-2000:]))
    check("sampling at" not in r.stderr, "the agent sampled:\n" + r.stderr[-2000:])
    for t in tenants:
        check(stored_series(srv, t) == 0, "the server holds a series the agent pushed")


def test_agent_startup__no_token_refused():
    os.environ.pop("EMBER_TOKEN", None)
    refused([], r"refuses the token and labels: HTTP 401: a profile write needs "
                r"Authorization.*give --token, --token-file or EMBER_TOKEN")


def test_agent_startup__wrong_token_refused():
    refused(["--token", "wrong"], r"refuses the token and labels: HTTP 401")


def test_agent_startup__invalid_label_refused():
    """A label the server refuses (a value past its 1,024 bytes) ends the
    agent with the server's reason; a malformed name is refused by the
    agent itself before it asks (status 2, docs/agent.md "Labels")."""
    refused(["--token", "TOKEN", "--label", "env=" + "x" * 1500],
            r"refuses the token and labels: HTTP 400: .*label")
    refused(["--token", "TOKEN", "--label", "bad-name=x"],
            r"invalid --label 'bad-name=x': the name is not \[a-zA-Z_\]", status=2)


TEAMS = ("team-a", "team-b", "anonymous")


def tokens_file(text):
    """A --tokens file of ember serve (TOKEN TENANT a line), this user's."""
    path = os.path.join(TMP, "tokens")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(text)
    return path


def test_agent_startup__tenant_refused():
    """A server with --multitenancy refuses an agent that names no tenant
    (HTTP 401, told from the token's 401: the agent says to give
    --tenant), and one whose token is another tenant's (403); an invalid
    --tenant the agent refuses itself, by the server's rule (status 2)."""
    refused(["--token", "TOKEN"], r"refuses the token and labels: HTTP 401: this server keeps "
            r"profiles by tenant.*\(give --tenant NAME\)", serve=["--multitenancy"],
            tenants=TEAMS)
    token_b = "team-b-" + "x" * 24
    refused(["--token", token_b, "--tenant", "team-a"],
            r"refuses the token and labels: HTTP 403: this token writes the profiles of "
            r"tenant 'team-b' only, not of 'team-a'",
            serve=["--multitenancy", "--tokens", tokens_file(token_b + " team-b\n")],
            tenants=TEAMS)
    refused(["--token", "TOKEN", "--tenant", "../a"],
            r"invalid --tenant '\.\./a': not a tenant ID", status=2)


def test_agent_startup__tenant_pushes_land_in_its_store():
    """--tenant team-a against --multitenancy: the agent's profiles are
    team-a's, and neither team-b nor anonymous sees a series of them."""
    require_bpf()
    srv = ember_test.Server(EMBER, TMP, ["--multitenancy"])
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    CHILDREN.append(busy)
    logpath = os.path.join(TMP, "agent.log")
    with open(logpath, "wb") as log:
        agent = subprocess.Popen([AGENT, "--server", srv.url, "--token", srv.token,
                                  "--tenant", "team-a", "--interval", "2", "--frequency", "99",
                                  "--pid", str(busy.pid)], stdout=log, stderr=log)
    CHILDREN.append(agent)

    def text():
        with open(logpath, errors="replace") as f:
            return f.read()
    wait_for(lambda: stored_series(srv, "team-a") > 0 or agent.poll() is not None,
             "a profile of tenant team-a", 90)
    check(agent.poll() is None, "the agent stopped:\n" + text()[-2000:])
    check("takes the token, the labels and the tenant 'team-a'" in text(),
          "no start-up line naming the tenant:\n" + text()[-2000:])
    agent.send_signal(signal.SIGTERM)
    check(agent.wait(timeout=60) == 0, "exit after SIGTERM:\n" + text()[-2000:])
    check(re.search(r"profiles: 0 written, [1-9]\d* sent, 0 failed attempts, 0 refused", text()),
          "no pushes in the summary:\n" + text()[-2000:])
    for other in TEAMS[1:]:
        check(stored_series(srv, other) == 0, "tenant %s sees team-a's series" % other)


def test_agent_startup__check_header_checks_and_stores_nothing():
    """The server's side of the check (no BPF needed): a push with
    X-Ember-Check: 1 is answered, its labels checked, and nothing stored."""
    srv = ember_test.Server(EMBER, TMP)
    body = ember_test.cpu_profile({"main;work": 3}, time_ns=time.time_ns()).encode()
    auth = {"Authorization": "Bearer " + srv.token, "X-Ember-Check": "1"}
    st, ans, _ = srv.request("POST", "/api/v1/profiles?env=prod", body, auth)
    check(st == 200 and b'"profiles":0' in ans, "checked push: %d %r" % (st, ans))
    st, ans, _ = srv.request("POST", "/api/v1/profiles?bad-name=x", body, auth)
    check(st == 400 and b"label name 'bad-name'" in ans, "bad label: %d %r" % (st, ans))
    st, ans, _ = srv.request("POST", "/api/v1/profiles?env=prod", body,
                             {"Authorization": "Bearer wrong", "X-Ember-Check": "1"})
    check(st == 401, "wrong token: %d %r" % (st, ans))
    check(stored_series(srv) == 0, "a checked profile made a series")
    st, ans, _ = srv.request("GET", "/api/v1/labels")
    check(st == 200 and b"env" not in ans, "a checked profile's label is stored: %r" % ans)
    # without the header, the same push is stored
    del auth["X-Ember-Check"]
    st, ans, _ = srv.request("POST", "/api/v1/profiles?env=prod", body, auth)
    check(st == 200 and b'"profiles":1' in ans, "push: %d %r" % (st, ans))
    check(stored_series(srv) == 1, "the push made no series")


def test_agent_startup__right_token_runs_pushes_and_summarizes():
    require_bpf()
    srv = ember_test.Server(EMBER, TMP)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    CHILDREN.append(busy)
    logpath = os.path.join(TMP, "agent.log")
    with open(logpath, "wb") as log:
        agent = subprocess.Popen([AGENT, "--server", srv.url, "--token", srv.token,
                                  "--interval", "2", "--frequency", "99",
                                  "--pid", str(busy.pid), "--label", "env=test"],
                                 stdout=log, stderr=log)
    CHILDREN.append(agent)

    def text():
        with open(logpath, errors="replace") as f:
            return f.read()
    wait_for(lambda: "sampling at" in text() or agent.poll() is not None, "sampling", 90)
    check(agent.poll() is None, "the agent stopped:\n" + text()[-2000:])
    start = len(text())
    wait_for(lambda: text()[start:].count("agent: interval:") >= 2, "two intervals", 60)
    wait_for(lambda: stored_series(srv) > 0, "a pushed profile", 30)
    agent.send_signal(signal.SIGTERM)
    rc = agent.wait(timeout=60)
    log = text()
    check(rc == 0, "exit %d after SIGTERM:\n%s" % (rc, log[-2000:]))
    check(re.search(r"exiting after [0-9.]+ s: [1-9][0-9]* samples in \d+ intervals; "
                    r"profiles: 0 written, [1-9]\d* sent, 0 failed attempts, 0 refused", log),
          "no exit summary:\n" + log[-2000:])
    # one interval's info lines: its summary, nothing a file
    one = log[start:].split("agent: interval:")[1]
    lines = [ln for ln in one.splitlines()[1:] if ln.startswith("info:")]
    check(len(lines) <= 3, "%d info lines in one interval:\n%s" % (len(lines), one))
    check(not re.search(r"\(build ID [0-9a-f]+|none\)", log),
          "per-file lines at info:\n" + log[-2000:])


def main():
    ember_test.run_case(CASE, "test_agent_startup__", globals(), TMP, CHILDREN)


if __name__ == "__main__":
    main()
