#!/usr/bin/env python3
"""bench.py EMBER OUT - the noisy neighbour (issue 27): does one tenant
pushing at ten times its ingest limit change another tenant's push
latency or query time?  run.sh builds Ember and runs this.

One `ember serve --multitenancy --limits FILE` (a local data directory),
two tenants (`X-Scope-OrgID`):
  b  given a generous limit (ingest_rate 8 MiB); first loaded with an hour
     of history (20 series, one 60-second profile each a minute, an hour
     and more ago, waited for until compacted: out of b's log), then, all along the rounds, pushes live
     profiles (dated now) at B_RATE a second on one keep-alive connection,
     on a fixed schedule (a late push is sent at once, never skipped),
     and queries the merged flame graph of its history hour
     (`/api/v1/query?format=json`, a new connection each) every
     QUERY_EVERY seconds;
  a  limited to A_LIMIT bytes a second (ingest_rate; the burst twice it);
     idle, or flooding: pushing at FLOOD times its limit (profiles of the
     same stream, about 36 KB each, made once, over A_CONNS connections of
     a process of its own, paced in bytes a second, never waiting for
     Retry-After), so most of its pushes are refused 429 with Retry-After.
Profiles: bench/lib/profile_stream.py (the stream of pstore-bench).

ROUNDS rounds, each an idle phase and a flood phase of PHASE seconds (the
order rotated every round, a settling pause of 2 s between phases, not
measured); PHASES=idle,flood,ping adds a control phase, ping, in which a's
process sends as many `GET /healthz` a second as the flood sends pushes:
the server as busy with requests, none of them profiles.  Per phase: b's
pushes' latency p50 and p99 (from the request to the answer), b's
queries' median time, a's requests sent, answered 200 and refused 429
(and whether every 429 said Retry-After), the server's CPU (utime + stime
over the phase's wall time) and the load average.  The figures that
answer the question are the ratios flood / idle within each round (the
machine is shared and noisy: a ratio of two phases 20 s apart is steadier
than either figure), their median over the rounds.

Env: ROUNDS=6, PHASE=20 (seconds), B_RATE=10 (pushes a second),
QUERY_EVERY=1 (seconds), A_LIMIT=262144 (bytes a second), FLOOD=10,
A_CONNS=4, PHASES=idle,flood.  Writes OUT/results.md, OUT/raw.tsv,
OUT/log/.
"""
import http.client
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from harness import run  # noqa: E402 (also puts tests/ on the path)
from profile_stream import Stream  # noqa: E402
from ember_test import Server, cpu_seconds  # noqa: E402

EMBER, OUT = sys.argv[1:3]
ROUNDS = int(os.environ.get("ROUNDS", "6"))
PHASE = float(os.environ.get("PHASE", "20"))
B_RATE = float(os.environ.get("B_RATE", "10"))
QUERY_EVERY = float(os.environ.get("QUERY_EVERY", "1"))
A_LIMIT = int(os.environ.get("A_LIMIT", "262144"))
FLOOD = float(os.environ.get("FLOOD", "10"))
A_CONNS = int(os.environ.get("A_CONNS", "4"))
PHASES = os.environ.get("PHASES", "idle,flood").split(",")
MODES = {"idle": 0, "flood": 1, "ping": 2}
assert PHASES[0] == "idle" and all(p in MODES for p in PHASES), "PHASES: idle,flood[,ping]"
SEC, MINUTE, HOUR = 10**9, 60 * 10**9, 3600 * 10**9
LOG = os.path.join(OUT, "log")
TMP = tempfile.mkdtemp(prefix="ember-tenants-bench.")


def log(msg):
    print("[tenants] " + msg, file=sys.stderr, flush=True)


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(len(vals) * p))] if vals else float("nan")


class Pusher:
    """One keep-alive connection pushing one tenant's profiles; a refused
    push (the server may close the connection after it) opens a new one."""

    def __init__(self, srv, tenant):
        self.srv, self.c = srv, None
        self.hdr = {"Authorization": "Bearer " + srv.token, "X-Scope-OrgID": tenant}

    def push(self, labels, body):
        """(status, Retry-After or None, ms)."""
        return self.send("POST", "/api/v1/profiles?" + labels, body)

    def get(self, path):
        return self.send("GET", path, None)

    def send(self, method, path, body):
        t = time.perf_counter()
        for attempt in range(2):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=60)
                self.c.request(method, path, body, self.hdr)
                r = self.c.getresponse()
                r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.c.close()
                    self.c = None
                return r.status, r.getheader("Retry-After"), (time.perf_counter() - t) * 1e3
            except (OSError, http.client.HTTPException):
                self.c.close()
                self.c = None
                if attempt:
                    raise
                t = time.perf_counter()


class Bodies:
    """Live profiles of the stream, dated when taken, thread-safe."""

    def __init__(self, seed):
        self.stream, self.lock, self.left = Stream(seed=seed, pool=8), threading.Lock(), []

    def next(self):
        with self.lock:
            if not self.left:
                now = time.time_ns()
                self.left = [(lab, body) for lab, body, _ in self.stream.profiles(now, 10 * SEC)]
            return self.left.pop()


class Phase:
    """What one phase records, filled by the threads below."""

    def __init__(self, name):
        self.name = name
        self.b_push, self.b_query, self.b_bad = [], [], []
        self.a = dict.fromkeys(A_COUNTS, 0)


def b_pusher(srv, bodies, stop, cur):
    p = Pusher(srv, "b")
    t_next = time.perf_counter()
    while not stop.is_set():
        delay = t_next - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        t_next += 1 / B_RATE
        status, _, ms = p.push(*bodies.next())
        ph = cur[0]
        if ph is not None:
            ph.b_push.append(ms)
            if status != 200:
                ph.b_bad.append(status)


def b_querier(srv, path, stop, cur):
    while not stop.is_set():
        t = time.perf_counter()
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        c.request("GET", path, headers={"X-Scope-OrgID": "b"})
        r = c.getresponse()
        r.read()
        c.close()
        ms = (time.perf_counter() - t) * 1e3
        ph = cur[0]
        if ph is not None:
            ph.b_query.append(ms)
            if r.status != 200:
                ph.b_bad.append(r.status)
        stop.wait(max(0.0, QUERY_EVERY - ms / 1e3))


A_COUNTS = ("sent", "ok", "429", "no_retry_after", "other")


def a_flooder(port, token, mode, stop, counts):
    """The process of a's client (so that its work does not share b's
    interpreter): A_CONNS connections, each at its share of FLOOD times
    a's limit in bytes a second, cycling through 40 bodies made once
    (dated at the start), counting into counts (A_COUNTS, shared memory).
    mode (shared): 0 idle; 1 flood, pushing them; 2 ping, the control,
    as many `GET /healthz` a second as the flood sends pushes (the
    server kept as busy with requests, none of them a's profiles)."""
    srv = type("Srv", (), {"port": port, "token": token})
    stream = Stream(seed=3, pool=8)
    bodies = [(lab, body) for k in range(2)
              for lab, body, _ in stream.profiles(time.time_ns() - k * 10 * SEC, 10 * SEC)]
    rate = FLOOD * A_LIMIT / A_CONNS

    def conn(k):
        p, i = Pusher(srv, "a"), k
        while not stop.is_set():
            m = mode.value
            if not m:
                time.sleep(0.05)
                continue
            t_next = time.perf_counter()
            while mode.value == m and not stop.is_set():
                delay = t_next - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                labels, body = bodies[i % len(bodies)]
                i += A_CONNS
                t_next += len(body) / rate
                if m == 2:
                    status, retry_after, _ = p.get("/healthz")
                    status = 0 if status != 200 else 1  # counted apart from pushes
                else:
                    status, retry_after, _ = p.push(labels, body)
                c = {"sent": 1, "ok": status in (1, 200), "429": status == 429,
                     "no_retry_after": status == 429 and retry_after is None,
                     "other": status not in (1, 200, 429)}
                with counts.get_lock():
                    for j, name in enumerate(A_COUNTS):
                        counts[j] += c[name]

    threads = [threading.Thread(target=conn, args=(k,)) for k in range(A_CONNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def preload_b(srv):
    """An hour of b's history, compacted: [start, start + 1 h)."""
    stream = Stream(seed=2, pool=8)
    start = (time.time_ns() - 2 * HOUR) // HOUR * HOUR
    p = Pusher(srv, "b")
    for t_ns in range(start, start + HOUR, MINUTE):
        for labels, body, _ in stream.profiles(t_ns, MINUTE):
            status, _, _ = p.push(labels, body)
            assert status == 200, "preload: %d" % status
    deadline = time.time() + 300
    while json.loads(srv.request("GET", "/api/v1/tenants/b/usage",
                                 headers={"X-Scope-OrgID": "b"})[1])["log_bytes"] > 0:
        assert time.time() < deadline, "b's history never left the log"
        time.sleep(0.5)
    return start


def run_phase(name, srv, mode, cur, counts):
    ph = Phase(name)
    mode.value = MODES[name]
    time.sleep(2)  # settle: not measured
    c0, l0, t0 = cpu_seconds(srv.proc.pid), os.getloadavg()[0], time.perf_counter()
    a0 = list(counts)
    cur[0] = ph
    time.sleep(PHASE)
    cur[0] = None
    ph.a = {k: counts[j] - a0[j] for j, k in enumerate(A_COUNTS)}
    ph.cpu = (cpu_seconds(srv.proc.pid) - c0) / (time.perf_counter() - t0)
    ph.load = (l0 + os.getloadavg()[0]) / 2
    mode.value = 0
    return ph


def main():
    os.makedirs(LOG, exist_ok=True)
    limits = os.path.join(TMP, "limits")
    with open(limits, "w") as f:
        f.write("default ingest_rate=8MiB\n")
        f.write("a ingest_rate=%d ingest_burst=%d\n" % (A_LIMIT, 2 * A_LIMIT))
    srv = Server(EMBER, TMP, ["--multitenancy", "--limits", limits, "--log-level", "warn",
                              "--max-profile-age", "4h", "--profile-head-age", "10s"],
                 log="server.log")
    log("loading b's history hour")
    start = preload_b(srv)
    path = "/api/v1/query?" + urllib.parse.urlencode(
        {"query": "{}", "type": "cpu", "format": "json", "from": start // 10**6,
         "to": (start + HOUR) // 10**6})
    stop, cur = threading.Event(), [None]
    a_stop, counts = multiprocessing.Event(), multiprocessing.Array("q", len(A_COUNTS))
    mode = multiprocessing.Value("i", 0)
    flooder = multiprocessing.Process(target=a_flooder, args=(
        srv.port, srv.token, mode, a_stop, counts))
    flooder.start()
    threads = [threading.Thread(target=b_pusher, args=(srv, Bodies(4), stop, cur)),
               threading.Thread(target=b_querier, args=(srv, path, stop, cur))]
    for t in threads:
        t.start()
    time.sleep(5)  # b's stream under way
    phases = []
    try:
        for rnd in range(ROUNDS):
            for k in range(len(PHASES)):  # the order rotated a round
                name = PHASES[(rnd + k) % len(PHASES)]
                ph = run_phase(name, srv, mode, cur, counts)
                ph.round = rnd + 1
                phases.append(ph)
                log("round %d %s: b push p50 %.1f p99 %.1f ms (%d), query %.1f ms (%d); "
                    "a sent %d, ok %d, 429 %d; server CPU %.2f, load %.1f" % (
                        rnd + 1, name, pct(ph.b_push, .5), pct(ph.b_push, .99), len(ph.b_push),
                        statistics.median(ph.b_query), len(ph.b_query), ph.a["sent"],
                        ph.a["ok"], ph.a["429"], ph.cpu, ph.load))
    finally:
        stop.set()
        a_stop.set()
        mode.value = 0
        for t in threads:
            t.join()
        flooder.join()
    usage = json.loads(srv.request("GET", "/api/v1/tenants/a/usage",
                                   headers={"X-Scope-OrgID": "a"})[1])
    srv.stop()
    report(phases, usage)


def report(phases, usage):
    keys = [("b_p50", lambda p: pct(p.b_push, .5)), ("b_p99", lambda p: pct(p.b_push, .99)),
            ("b_query", lambda p: statistics.median(p.b_query)),
            ("a_sent_per_s", lambda p: p.a["sent"] / PHASE),
            ("a_ok_per_s", lambda p: p.a["ok"] / PHASE),
            ("a_429_per_s", lambda p: p.a["429"] / PHASE), ("cpu", lambda p: p.cpu),
            ("load", lambda p: p.load)]
    with open(os.path.join(OUT, "raw.tsv"), "w") as f:
        f.write("round\tphase\tb_pushes\tb_queries\t" + "\t".join(k for k, _ in keys) + "\n")
        for p in phases:
            f.write("%d\t%s\t%d\t%d\t%s\n" % (p.round, p.name, len(p.b_push), len(p.b_query),
                                              "\t".join("%.3f" % fn(p) for _, fn in keys)))
    bad = [s for p in phases for s in p.b_bad]
    no_ra = sum(p.a["no_retry_after"] for p in phases)
    other = sum(p.a["other"] for p in phases)
    by = {n: [p for p in phases if p.name == n] for n in PHASES}  # each in round order
    others = PHASES[1:]
    lines = [
        "%d rounds of %s, %g s each; b pushes %g/s and queries its hour every %g s; "
        "a limited to %d bytes/s, flooding at %gx (%d connections).  b's refusals: %d; a's 429 "
        "without Retry-After: %d, other statuses: %d.  a's usage at the end: %s." % (
            ROUNDS, ", ".join(PHASES), PHASE, B_RATE, QUERY_EVERY, A_LIMIT, FLOOD, A_CONNS,
            len(bad), no_ra, other,
            json.dumps({"ingested_bytes": usage.get("ingested_bytes"),
                        "rejected_rate": usage.get("rejected", {}).get("rate")})),
        "",
        "| figure | " + " | ".join("a %s: median (min-max) over rounds" % n for n in PHASES) +
        "".join(" | %s / idle, median of the rounds' ratios (min-max)" % n for n in others) + " |",
        "|---|" + "---:|" * (len(PHASES) + len(others))]
    names = {"b_p50": "b's push, p50 ms", "b_p99": "b's push, p99 ms",
             "b_query": "b's flame graph of an hour, median ms",
             "a_sent_per_s": "a's requests/s (ping: GET /healthz)",
             "a_ok_per_s": "a's requests answered 200/s", "a_429_per_s": "a's pushes refused 429/s",
             "cpu": "server CPU, cores", "load": "load average (1 min)"}
    for i, (k, fn) in enumerate(keys):
        cells = []
        for n in PHASES:
            v = [fn(p) for p in by[n]]
            cells.append("%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)))
        for n in others:
            r = [fn(x) / fn(i0) for i0, x in zip(by["idle"], by[n])] if i < 3 else None
            cells.append("%.2f (%.2f-%.2f)" % (statistics.median(r), min(r), max(r)) if r else "")
        lines.append("| %s | %s |" % (names[k], " | ".join(cells)))
    pooled = {n: [x for p in by[n] for x in p.b_push] for n in PHASES}
    lines += ["", "Pooled over the rounds, b's push p50 and p99 (ms, pushes): " + "; ".join(
        "%s %.1f, %.1f (%d)" % (n, pct(pooled[n], .5), pct(pooled[n], .99), len(pooled[n]))
        for n in PHASES) + "."]
    text = "\n".join(lines) + "\n"
    open(os.path.join(OUT, "results.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    run(main, TMP, LOG)
