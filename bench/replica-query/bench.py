#!/usr/bin/env python3
"""bench.py EMBER CEPH_ENV OUT - profile queries over HTTP on a replica
with `--storage s3://` (issue 27); run.sh builds Ember and starts the
Ceph cluster (tests/objstore/ceph_cluster.sh) whose ENV file this reads.

1. A writer, `ember serve --storage s3://BUCKET/PREFIX` on an empty data
   directory, is pushed HOURS hours of profiles over HTTP (`POST
   /api/v1/profiles`, CONNS keep-alive connections): 20 series (three
   services, new versions and pods every 6 hours), one INTERVAL-second
   profile per series per INTERVAL seconds, ending at the last whole hour
   at least 5 minutes ago (bench/lib/profile_stream.py says what a profile
   holds).  Then it is left to compact: its log emptied, each hour merged
   into one block, each block rolled up (1 minute, 1 hour), everything
   in the bucket and listed in its block index.  The writer stops.
2. For each rep, for each query below: a new replica on an empty data
   directory on the same prefix (nothing local: the catalog is read from
   the bucket at open, every block and rollup a query reads is fetched
   into its cache), its start to its first healthy answer ("open"); the
   query once ("cold"), then WARM times more ("warm": their median, and
   the replica's CPU time over them divided by WARM, from /proc).  Each
   time is a client's: from the request to the last byte of the answer, a
   new connection each.  Each flame graph's total is checked against the
   pushed profiles of its range.

The queries, ranges ending at the data's end E (the last hour pushed) and
starting at its start S:
  fg 1h, fg 24h, fg all     /api/v1/query?format=json (the merged flame
                            graph's tree, what the web UI draws), type cpu
  fg 1h/24h/all unaligned   the same from 13 s past an hour to 37 s before
                            one (1 h - 50 s, ...): partial minutes at both
                            edges, read from full resolution
  series 1h, series all     /api/v1/series, the 1 h range at its default
                            step (15 s), the whole range at 1 h grouped by
                            service_name
  diff 1h, diff half        /api/v1/diff (the regression table): the last
                            hour against the one before; the last half of
                            the range against the half before

Env: HOURS=48, INTERVAL=60 (seconds), CONNS=4, REPS=3, WARM=5.
Writes OUT/results.md, OUT/raw.tsv, OUT/log/.
"""
import http.client
import json
import os
import queue
import shutil
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
from profile_stream import PERIOD, Stream  # noqa: E402
from ember_test import Server, cpu_seconds  # noqa: E402

EMBER, CEPH_ENV, OUT = sys.argv[1:4]
HOURS = int(os.environ.get("HOURS", "48"))
INTERVAL = int(os.environ.get("INTERVAL", "60"))
CONNS = int(os.environ.get("CONNS", "4"))
REPS = int(os.environ.get("REPS", "3"))
WARM = int(os.environ.get("WARM", "5"))
SEC, HOUR = 10**9, 3600 * 10**9
LOG = os.path.join(OUT, "log")
TMP = tempfile.mkdtemp(prefix="ember-replica-query.")
CEPH = dict(l.rstrip("\n").split("=", 1) for l in open(CEPH_ENV) if "=" in l)
PREFIX = "replica-query-%d" % os.getpid()
TOKEN = os.path.join(TMP, "token")


def log(msg):
    print("[replica-query] " + msg, file=sys.stderr, flush=True)


def replica(extra=()):
    """`ember serve` on the bucket's PREFIX, on a new empty data directory."""
    env = {"AWS_ACCESS_KEY_ID": CEPH["AWS_ACCESS_KEY_ID"],
           "AWS_SECRET_ACCESS_KEY": CEPH["AWS_SECRET_ACCESS_KEY"], "AWS_SESSION_TOKEN": None}
    args = ["--token-file", TOKEN, "--log-level", "warn",
            "--storage", "s3://%s/%s" % (CEPH["OBJSTORE_TEST_BUCKET"], PREFIX),
            "--s3-endpoint", CEPH["OBJSTORE_TEST_ENDPOINT"],
            "--s3-region", CEPH["OBJSTORE_TEST_REGION"]] + list(extra)
    return Server(EMBER, TMP, args, env=env, log="server.log")


# ---- 1. the writer ----------------------------------------------------------------


def push_all(srv, stream, start, end):
    """Push every profile of [start, end) over CONNS connections, in time
    order: (profiles, seconds, [(time, samples)])."""
    todo = queue.Queue(maxsize=256)
    errors, pushed = [], []

    def worker():
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        hdr = {"Authorization": "Bearer " + srv.token}
        while True:
            item = todo.get()
            if item is None:
                break
            labels, body = item
            c.request("POST", "/api/v1/profiles?" + labels, body, hdr)
            r = c.getresponse()
            out = r.read()
            if r.status != 200:
                errors.append((r.status, out[:200]))
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(CONNS)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    n = 0
    for t_ns in range(start, end, INTERVAL * SEC):
        for labels, body, samples in stream.profiles(t_ns, INTERVAL * SEC):
            todo.put((labels, body))
            pushed.append((t_ns, samples))
            n += 1
        if n % 2000 < 20:
            log("  pushed %d profiles (%.0f/s)" % (n, n / (time.perf_counter() - t0)))
        if errors:
            break
    for _ in threads:
        todo.put(None)
    for t in threads:
        t.join()
    assert not errors, "pushes refused: %r" % errors[:3]
    return n, time.perf_counter() - t0, pushed


def settled(srv, partitions, timeout=1800):
    """Wait until srv's log is empty, each hour one block and each block
    rolled up (two rollups), steady for 3 s; the seconds it took."""
    t0, last, since = time.time(), None, time.time()
    while time.time() - t0 < timeout:
        m = {k: srv.metric("ember_profile_store_" + k, default=0.0)
             for k in ("blocks", "rollups", "wal_bytes")}
        state = (m["blocks"], m["rollups"])
        done = m["blocks"] == partitions and m["rollups"] >= 2 * partitions and m["wal_bytes"] <= 64
        if state != last or not done:
            if state != last:
                log("  compaction: %d blocks, %d rollups, log %d bytes" % (
                    m["blocks"], m["rollups"], m["wal_bytes"]))
            last, since = state, time.time()
        elif time.time() - since > 3:
            return time.time() - t0
        time.sleep(1)
    raise RuntimeError("the writer never settled (%r)" % (last,))


# ---- 2. the queries -----------------------------------------------------------------


def sel(**kw):
    return urllib.parse.urlencode(kw)


def queries(start, end):
    """[(name, path, (from, to) of a flame graph whose total is checked, or None)]."""
    ms = lambda t: t // 10**6  # noqa: E731
    q = []

    def fg(name, a, b):
        q.append((name, "/api/v1/query?" + sel(query="{}", type="cpu", format="json",
                                                 **{"from": ms(a), "to": ms(b)}), (a, b)))
    ranges = [("1h", end - HOUR)] + ([("24h", end - 24 * HOUR)] if HOURS > 24 else []) + \
        [("all (%d h)" % HOURS, start)]
    for name, a in ranges:
        fg("flame graph, " + name, a, end)
    for name, a in ranges:
        fg("flame graph, %s - 50 s, unaligned" % name, a + 13 * SEC, end - 37 * SEC)
    q.append(("series line, 1h (15 s step)", "/api/v1/series?" + sel(
        query="{}", type="cpu", **{"from": ms(end - HOUR), "to": ms(end)}), None))
    q.append(("series line, all at 1 h by service", "/api/v1/series?" + sel(
        query="{}", type="cpu", step="1h", group_by="service_name",
        **{"from": ms(start), "to": ms(end)}), None))
    half = (end - start) // 2 // HOUR * HOUR
    for name, span in (("1h against the hour before", HOUR),
                       ("%d h against the %d h before" % (half // HOUR, half // HOUR), half)):
        q.append(("diff, " + name, "/api/v1/diff?" + sel(
            query="{}", type="cpu", base_from=ms(end - 2 * span), base_to=ms(end - span),
            new_from=ms(end - span), new_to=ms(end)), None))
    return q


def timed(srv, path):
    """(ms from the request to the answer's last byte, the answer)."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    t = time.perf_counter()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    dt = (time.perf_counter() - t) * 1e3
    c.close()
    assert r.status == 200, "%s: %d %r" % (path, r.status, body[:200])
    return dt, body, r.getheader("X-Ember-Profiles")


def one(name, path, check, pushed):
    """A fresh replica: open, the query cold, WARM times warm."""
    t0 = time.perf_counter()
    srv = replica()
    r = {"open_ms": (time.perf_counter() - t0) * 1e3}
    r["cold_ms"], body, r["profiles"] = timed(srv, path)
    r["read"] = srv.metric("ember_profile_store_profiles_read_total", default=0.0)
    if check:
        want = sum(n for t, n in pushed if check[0] <= t < check[1]) * PERIOD
        got = json.loads(body)["total"]
        assert got == want, "%s: total %d, pushed %d" % (name, got, want)
    c0 = cpu_seconds(srv.proc.pid)
    warm = [timed(srv, path)[0] for _ in range(WARM)]
    r["warm_cpu_ms"] = (cpu_seconds(srv.proc.pid) - c0) * 1e3 / WARM
    r["warm_ms"] = statistics.median(warm)
    r["bytes"] = len(body)
    srv.stop()
    shutil.rmtree(srv.data, ignore_errors=True)
    return r


def fmt(vals):
    return "%.1f (%.1f-%.1f)" % (statistics.median(vals), min(vals), max(vals))


def main():
    os.makedirs(LOG, exist_ok=True)
    with open(TOKEN, "w") as f:
        f.write(os.urandom(16).hex() + "\n")
    os.chmod(TOKEN, 0o600)
    end = (time.time_ns() - 300 * SEC) // HOUR * HOUR
    start = end - HOURS * HOUR
    load = [os.getloadavg()[0]]
    log("writer: %d h of %d-second profiles, 20 series, %d connections" % (HOURS, INTERVAL, CONNS))
    w = replica(["--max-profile-age", "%dh" % (HOURS + 2), "--profile-head-age", "10s",
                 "--profile-refresh", "1s"])
    stream = Stream(epoch=6 * 3600)
    n, secs, pushed = push_all(w, stream, start, end)
    log("pushed %d profiles in %.1f s (%.0f/s)" % (n, secs, n / secs))
    settle_s = settled(w, HOURS)
    stats = {k: w.metric("ember_profile_store_" + k, default=0.0)
             for k in ("blocks", "bytes", "rollups", "rollup_bytes", "profiles")}
    w.stop()
    load.append(os.getloadavg()[0])
    qs = queries(start, end)
    rows = {name: [] for name, _, _ in qs}
    for rep in range(REPS):
        order = qs if rep % 2 == 0 else list(reversed(qs))
        for name, path, check in order:
            r = one(name, path, check, pushed)
            rows[name].append(r)
            log("rep %d: %s: %s" % (rep + 1, name, json.dumps(r)))
        load.append(os.getloadavg()[0])
    with open(os.path.join(OUT, "raw.tsv"), "w") as f:
        keys = ["open_ms", "cold_ms", "warm_ms", "warm_cpu_ms", "profiles", "read", "bytes"]
        f.write("query\trep\t" + "\t".join(keys) + "\n")
        for name, rs in rows.items():
            for i, r in enumerate(rs):
                f.write("%s\t%d\t%s\n" % (name, i + 1, "\t".join(str(r[k]) for k in keys)))
    lines = [
        "%d profiles (%d h, %d series, one each %d s) pushed in %.1f s over %d connections "
        "(%.0f/s); compacted and rolled up %.0f s after: %d blocks (%.1f MB), %d rollups "
        "(%.1f MB).  Load average (1 min) during the run: %s." % (
            n, HOURS, 20, INTERVAL, secs, CONNS, n / secs, settle_s, stats["blocks"],
            stats["bytes"] / 1e6, stats["rollups"], stats["rollup_bytes"] / 1e6,
            ", ".join("%.1f" % x for x in load)),
        "",
        "| query (median of %d, min-max) | profiles | read | replica open, ms | cold, ms | warm, ms "
        "(median of %d) | cold / warm | warm, replica CPU ms | answer bytes |" % (REPS, WARM),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, _, _ in qs:
        rs = rows[name]
        ratio = statistics.median(r["cold_ms"] / r["warm_ms"] for r in rs)
        lines.append("| %s | %s | %d | %s | %s | %s | %.2f | %.1f | %d |" % (
            name, rs[0]["profiles"] or "-", rs[0]["read"], fmt([r["open_ms"] for r in rs]),
            fmt([r["cold_ms"] for r in rs]), fmt([r["warm_ms"] for r in rs]), ratio,
            statistics.median(r["warm_cpu_ms"] for r in rs), rs[0]["bytes"]))
    text = "\n".join(lines) + "\n"
    open(os.path.join(OUT, "results.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    run(main, TMP, LOG)
