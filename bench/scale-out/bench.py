#!/usr/bin/env python3
"""bench.py EMBER FIXTURES CEPH_ENV OUT - the scale-out benchmark's driver
(run.sh starts the Ceph cluster and builds Ember).

Two backends, the same work, interleaved rep by rep:
  local  `ember serve --data DIR`
  s3     `ember serve --storage s3://BUCKET/PREFIX --data DIR` on radosgw
Figures, each the median over REPS:
  upload MB/s      one PUT of an UPLOAD_MB executable (random bytes in a
                   section; a new build ID and content each rep), from the
                   request's first byte to its answer: the server receives,
                   hashes, inspects and stores it (s3: a multipart upload
                   of 8 MiB parts, two at a time, and the records, before
                   the answer)
  hit req/s, p99   wrk (WRK_CONNS connections, WRK_SECONDS) on one
                   /buildid/ID/debuginfo (24 KiB) the replica holds
  cold req/s, p99  COLD distinct build IDs (24 KiB debug files) fetched
                   once each, 8 at a time, from a replica that has not
                   served them: s3, a new replica on an empty directory
                   (list, record, GET the blob, then sendfile); local, the
                   same server restarted on its directory (records opened
                   again; the page cache is warm either way)
  symbolize first  one symbolization request for cxx_O2 on such a replica,
                   its saved symbol index made beforehand by another
                   request (s3: on another replica, so the index and the
                   files are only in the bucket); /metrics says whether it
                   was loaded (disk_load) or built
  profiles         PROFILES profiles (PROF_SERIES services, PROF_SAMPLES
                   samples each from a pool of 2000 stacks 8-24 deep) with
                   timestamps spread over the last hour, pushed to replica
                   a (--profile-head-age 1s) and compacted (its log empty,
                   its blocks merged); then a new replica b:
    prof open      b's start to its first healthy answer (the profile
                   store's catalog is read before it listens: s3, the
                   block index and each live block's header by range GET)
    prof first     the first one-hour merged query on b (format=top, every
                   stack summed): s3, b on an empty directory, so every
                   block is fetched from the bucket into b's cache; local,
                   the same directory in a new process (the blocks'
                   decoded dictionaries are not in memory; the page cache
                   is warm: this machine cannot drop it)
    prof warm      the median of PROF_REPEATS more of the same query
    push           the PROFILES pushes to a, one at a time on one
                   connection: pushes per second and each push's latency
                   (s3: the local log's fsync and the record's create-only
                   PUT to the bucket before the answer; local: the fsync)
ONLY_PROFILES=1 measures the profile figures alone.
"""
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import random
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from ember_test import Profile  # noqa: E402

EMBER, FIX, CEPH_ENV, OUT = sys.argv[1:5]
REPS = int(os.environ.get("REPS", "3"))
UPLOAD_MB = int(os.environ.get("UPLOAD_MB", "64"))
COLD = int(os.environ.get("COLD", "200"))
WRK_CONNS = int(os.environ.get("WRK_CONNS", "16"))
WRK_SECONDS = int(os.environ.get("WRK_SECONDS", "5"))
PROFILES = int(os.environ.get("PROFILES", "720"))
PROF_SERIES = int(os.environ.get("PROF_SERIES", "4"))
PROF_SAMPLES = int(os.environ.get("PROF_SAMPLES", "300"))
PROF_REPEATS = int(os.environ.get("PROF_REPEATS", "5"))
ONLY_PROFILES = os.environ.get("ONLY_PROFILES") == "1"  # the profile figures alone
SEC = 1_000_000_000
TMP = tempfile.mkdtemp(prefix="ember-scaleout-bench.")
LOG = os.path.join(OUT, "log")
TOKEN = os.path.join(TMP, "token")
with open(TOKEN, "w") as f:
    f.write(os.urandom(16).hex() + "\n")
os.chmod(TOKEN, 0o600)
CEPH = dict(l.rstrip("\n").split("=", 1) for l in open(CEPH_ENV) if "=" in l)
PREFIX = "bench-%d" % os.getpid()


def log(msg):
    print("[scale-out] " + msg, file=sys.stderr, flush=True)


class Server:
    def __init__(self, backend, data, name, extra=(), prefix=PREFIX):
        self.started = time.perf_counter()
        args = [EMBER, "serve", "--listen", "127.0.0.1:0", "--data", data,
                "--token-file", TOKEN, "--max-connections-per-client", "256",
                "--max-profile-age", "2h"] + list(extra)  # the profiles span the last hour
        env = dict(os.environ)
        if backend == "s3":
            args += ["--storage", "s3://%s/%s" % (CEPH["OBJSTORE_TEST_BUCKET"], prefix),
                     "--s3-endpoint", CEPH["OBJSTORE_TEST_ENDPOINT"],
                     "--s3-region", CEPH["OBJSTORE_TEST_REGION"]]
            env.update(AWS_ACCESS_KEY_ID=CEPH["AWS_ACCESS_KEY_ID"],
                       AWS_SECRET_ACCESS_KEY=CEPH["AWS_SECRET_ACCESS_KEY"])
        self.err = open(os.path.join(LOG, name + ".log"), "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.err, env=env)
        self.port = None
        while self.port is None:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise RuntimeError("server exited at start (out/log/%s.log)" % name)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            self.port = int(m.group(1)) if m else None
        deadline = time.time() + 20
        while self.get("/healthz")[0] != 200:
            if time.time() > deadline:
                raise RuntimeError("server never healthy")
            time.sleep(0.005)
        self.healthy_ms = (time.perf_counter() - self.started) * 1e3
        self.token = open(TOKEN).read().strip()

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read()
        except OSError:
            return 0, b""
        finally:
            c.close()

    def get(self, path):
        return self.request("GET", path)

    def upload(self, path, bid, kind):
        with open(path, "rb") as f:
            return self.request("PUT", "/api/v1/artifacts/%s/%s?name=%s" % (
                bid, kind, os.path.basename(path)), f, {
                "Authorization": "Bearer " + self.token,
                "Content-Length": str(os.path.getsize(path))})[0]

    def metric(self, name):
        for line in self.get("/metrics")[1].decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.err.close()


# ---- inputs ---------------------------------------------------------------------


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def with_build_id(src, dst):
    """A copy of src whose build ID is random: another file, another ID."""
    data = open(src, "rb").read()
    old = bytes.fromhex(build_id(src))
    new = os.urandom(len(old))
    with open(dst, "wb") as f:
        f.write(data.replace(old, new))
    return new.hex()


def big_exe():
    src = os.path.join(TMP, "big.c")
    open(src, "w").write("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-o", os.path.join(TMP, "big0"), src], check=True)
    pad = os.path.join(TMP, "pad")
    with open(pad, "wb") as f:
        f.write(os.urandom(UPLOAD_MB << 20))
    subprocess.run(["objcopy", "--add-section", ".pad=" + pad, os.path.join(TMP, "big0"),
                    os.path.join(TMP, "big")], check=True)
    return os.path.join(TMP, "big")


def func_addrs(elf, n=50):
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True).stdout
    addrs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
            addrs.append("0x%x" % (int(f[1], 16) + int(f[2], 0) // 2))
    return addrs[:n]


# ---- measurements ---------------------------------------------------------------------


def upload_mbps(srv, big):
    path = os.path.join(TMP, "big-rep")
    bid = with_build_id(big, path)
    t = time.perf_counter()
    status = srv.upload(path, bid, "executable")
    dt = time.perf_counter() - t
    os.unlink(path)
    assert status == 201, "upload: %d" % status
    return os.path.getsize(big) / dt / 1e6


def wrk_hit(srv, bid):
    out = subprocess.run(["wrk", "-t2", "-c%d" % WRK_CONNS, "-d%ds" % WRK_SECONDS, "--latency",
                          "http://127.0.0.1:%d/buildid/%s/debuginfo" % (srv.port, bid)],
                         capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * {"us": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]
    assert "Non-2xx" not in out, out
    return rps, p99


def fetch_all(srv, ids):
    """GET each debuginfo once, 8 at a time: (req/s, p50 ms, p99 ms)."""
    lat, lock, todo = [], threading.Lock(), list(ids)
    bad = []

    def worker():
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        while True:
            with lock:
                if not todo:
                    break
                bid = todo.pop()
            t = time.perf_counter()
            c.request("GET", "/buildid/%s/debuginfo" % bid)
            r = c.getresponse()
            r.read()
            dt = time.perf_counter() - t
            with lock:
                lat.append(dt * 1e3)
                if r.status != 200:
                    bad.append(r.status)
        c.close()

    ts = [threading.Thread(target=worker) for _ in range(8)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    assert not bad, "cold GETs failed: %r" % bad[:5]
    lat.sort()
    return len(ids) / wall, lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]


def symbolize(srv, bid, addrs):
    body = json.dumps({"modules": [{"build_id": bid, "addresses": addrs}]}).encode()
    t = time.perf_counter()
    s, out = srv.request("POST", "/api/v1/symbolize", body, {"Content-Type": "application/json"})
    dt = (time.perf_counter() - t) * 1e3
    assert s == 200 and json.loads(out)["modules"][0]["results"][0]["frames"], out[:200]
    return dt


def profile_bodies(rep):
    """The profiles of one rep (the same for both backends): (bodies, total
    samples, the hour's start in ms)."""
    rnd = random.Random(rep)
    funcs = ["fn_%03d" % i for i in range(400)]
    pool = [[rnd.choice(funcs) for _ in range(rnd.randint(8, 24))] for _ in range(2000)]
    now = int(time.time()) * SEC
    start = now - 3600 * SEC - 60 * SEC
    bodies, total = [], 0
    for i in range(PROFILES):
        t = start + i * (3600 * SEC // PROFILES)
        p = Profile(time_ns=t, duration_ns=10 * SEC)
        counts = {}
        for _ in range(PROF_SAMPLES):
            k = rnd.randrange(len(pool))
            counts[k] = counts.get(k, 0) + 1
        for k, n in counts.items():
            p.sample(["main"] + pool[k], [n, n * 10_000_000])
            total += n
        bodies.append(("service_name=svc%d" % (i % PROF_SERIES), p.encode(gzip=True)))
    return bodies, total, start // 1_000_000


def compacted(srv):
    """Wait until srv's log is empty and its block count stays put."""
    last, since = -1, time.time()
    deadline = time.time() + 180
    while time.time() < deadline:
        n = srv.metric("ember_profile_store_blocks")
        if n != last or srv.metric("ember_profile_store_wal_bytes") > 64:
            last, since = n, time.time()
        elif time.time() - since > 3:
            return
        time.sleep(0.2)
    raise RuntimeError("the profile store never settled")


def merged_query(srv, from_ms):
    path = "/api/v1/query?type=samples&format=top&limit=20&from=%d&until=%d&query=%%7B%%7D" % (
        from_ms, from_ms + 3600 * 1000 + 120 * 1000)
    t = time.perf_counter()
    s, out = srv.get(path)
    dt = (time.perf_counter() - t) * 1e3
    assert s == 200, "query: %d %r" % (s, out[:200])
    return dt, json.loads(out)["total"]


def profile_rep(backend, rep, bodies, want, from_ms):
    data = tempfile.mkdtemp(dir=TMP, prefix="%s-prof-%d-" % (backend, rep))
    fast = ["--profile-head-age", "1s", "--profile-refresh", "1s"]
    prefix = "%s-prof-%d" % (PREFIX, rep)  # the profiles of this rep alone
    a = Server(backend, data, "%s-prof-a" % backend, fast, prefix)
    lat = []
    t0 = time.perf_counter()
    for labels, body in bodies:
        t = time.perf_counter()
        s, out = a.request("POST", "/api/v1/profiles?" + labels, body,
                           {"Authorization": "Bearer " + a.token})
        lat.append((time.perf_counter() - t) * 1e3)
        assert s == 200, "push: %d %r" % (s, out[:200])
    push_s = time.perf_counter() - t0
    lat.sort()
    time.sleep(1.5)
    compacted(a)
    blocks = a.metric("ember_profile_store_blocks")
    a.stop()
    if backend == "s3":  # a new replica, nothing local
        b_data = tempfile.mkdtemp(dir=TMP, prefix="s3-prof-empty-")
    else:  # the same directory, a new process
        b_data = data
    b = Server(backend, b_data, "%s-prof-b" % backend, fast, prefix)
    r = {"prof_open_ms": b.healthy_ms, "prof_blocks": blocks,
         "push_ps": len(bodies) / push_s, "push_p50_ms": lat[len(lat) // 2],
         "push_p99_ms": lat[min(len(lat) - 1, len(lat) * 99 // 100)]}
    r["prof_first_ms"], got = merged_query(b, from_ms)
    assert got == want, "%s: total %d, pushed %d" % (backend, got, want)
    warm = [merged_query(b, from_ms)[0] for _ in range(PROF_REPEATS)]
    r["prof_warm_ms"] = statistics.median(warm)
    b.stop()
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(b_data, ignore_errors=True)
    return r


def one_rep(backend, rep, big, small, cold_dir, cxx):
    """Every figure of one backend, one rep."""
    data = tempfile.mkdtemp(dir=TMP, prefix="%s-%d-" % (backend, rep))
    a = Server(backend, data, "%s-a" % backend)
    r = {"upload_mbps": upload_mbps(a, big)}
    sbid = build_id(small)
    a.upload(small, sbid, "debuginfo")
    r["hit_rps"], r["hit_p99_ms"] = wrk_hit(a, sbid)
    ids = []
    for i in range(COLD):  # new build IDs each rep, uploaded untimed
        p = os.path.join(cold_dir, "d%d" % i)
        bid = with_build_id(small, p)
        assert a.upload(p, bid, "debuginfo") == 201
        ids.append(bid)
    cbid = build_id(cxx)
    cxx_rep = os.path.join(TMP, "cxx-rep")
    cbid = with_build_id(cxx, cxx_rep)  # a new index each rep
    assert a.upload(cxx_rep, cbid, "executable") == 201
    symbolize(a, cbid, func_addrs(cxx))  # builds and saves the index
    time.sleep(0.5)
    a.stop()
    if backend == "s3":  # another replica, nothing local
        b = Server(backend, tempfile.mkdtemp(dir=TMP, prefix="s3-empty-"), "s3-b")
    else:  # the same directory, a new process
        b = Server(backend, data, "local-b")
    r["cold_rps"], r["cold_p50_ms"], r["cold_p99_ms"] = fetch_all(b, ids)
    r["sym_first_ms"] = symbolize(b, cbid, func_addrs(cxx))
    r["sym_loaded"] = b.metric('ember_symbol_cache_events_total{event="disk_load"}') + \
        b.metric('ember_symbol_cache_events_total{event="pin_load"}')
    r["sym_built"] = b.metric('ember_symbol_cache_events_total{event="build"}')
    b.stop()
    shutil.rmtree(data, ignore_errors=True)
    return r


def main():
    os.makedirs(LOG, exist_ok=True)
    big = big_exe()
    small = os.path.join(FIX, "c_stripped.debug")
    cxx = os.path.join(FIX, "cxx_O2")
    cold_dir = tempfile.mkdtemp(dir=TMP, prefix="cold.")
    rows = []
    for rep in range(REPS):
        order = ["local", "s3"] if rep % 2 == 0 else ["s3", "local"]
        bodies, want, from_ms = profile_bodies(rep)
        for backend in order:
            log("rep %d: %s" % (rep + 1, backend))
            r = {} if ONLY_PROFILES else one_rep(backend, rep, big, small, cold_dir, cxx)
            r.update(profile_rep(backend, rep, bodies, want, from_ms))
            r.update(backend=backend, rep=rep + 1)
            rows.append(r)
            log("  " + json.dumps(r))
    keys = ([] if ONLY_PROFILES else
            ["upload_mbps", "hit_rps", "hit_p99_ms", "cold_rps", "cold_p50_ms", "cold_p99_ms",
             "sym_first_ms", "sym_loaded", "sym_built"]) + [
            "push_ps", "push_p50_ms", "push_p99_ms", "prof_open_ms", "prof_first_ms",
            "prof_warm_ms", "prof_blocks"]
    with open(os.path.join(OUT, "raw.tsv"), "w") as f:
        f.write("\t".join(["backend", "rep"] + keys) + "\n")
        for r in rows:
            f.write("\t".join([r["backend"], str(r["rep"])] + ["%.3f" % r[k] for k in keys]) + "\n")
    med = {b: {k: statistics.median(r[k] for r in rows if r["backend"] == b) for k in keys}
           for b in ("local", "s3")}
    names = [("upload_mbps", "upload, MB/s (%d MiB)" % UPLOAD_MB),
             ("hit_rps", "debuginfod cache hit, req/s (wrk -c%d)" % WRK_CONNS),
             ("hit_p99_ms", "debuginfod cache hit, p99 ms"),
             ("cold_rps", "debuginfod cold miss, req/s (%d IDs, 8 at a time)" % COLD),
             ("cold_p50_ms", "debuginfod cold miss, p50 ms"),
             ("cold_p99_ms", "debuginfod cold miss, p99 ms"),
             ("sym_first_ms", "symbolize cxx_O2 on a cold replica, ms to the answer"),
             ("sym_loaded", "  index loaded (saved), count"),
             ("sym_built", "  index built, count"),
             ("push_ps", "profile pushes, one connection, per s"),
             ("push_p50_ms", "profile push, p50 ms (s3: + its log object's PUT)"),
             ("push_p99_ms", "profile push, p99 ms"),
             ("prof_open_ms", "profiles: a new replica's start to healthy, ms"),
             ("prof_first_ms", "profiles: one-hour merged query, cold replica, first, ms"),
             ("prof_warm_ms", "profiles: the same query again, median of %d, ms" % PROF_REPEATS),
             ("prof_blocks", "  blocks after compaction (%d profiles)" % PROFILES)]
    lines = ["| figure (median of %d) | local | s3 (radosgw) | s3 / local |" % REPS,
             "|---|---|---|---|"]
    for k, name in names:
        if k not in keys:
            continue
        lo, s3 = med["local"][k], med["s3"][k]
        ratio = "%.2f" % (s3 / lo) if lo else "-"
        lines.append("| %s | %.1f | %.1f | %s |" % (name, lo, s3, ratio))
    text = "\n".join(lines) + "\n"
    open(os.path.join(OUT, "results.md"), "w").write(text)
    print(text)
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
