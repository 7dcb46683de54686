#!/usr/bin/env python3
"""End-to-end tests of `ember serve --storage s3://` (issue 18): replicas
of the real server on one prefix of the real radosgw that the
objstore_ceph fixture starts (ceph_cluster.sh), driven by real clients
(ember upload, debuginfod-find, HTTP).

Usage: test_scaleout.py EMBER_BIN FIXTURES_DIR CEPH_ENV CASE

Exit 0 pass, 1 fail, 77 skip (no cluster: the fixture's reason; a peer
tool missing).  The bucket's own state (objects, unfinished multipart
uploads) is read with SigV4-signed requests made here, so the test does
not trust the server's account of what it wrote.
"""
import datetime
import hashlib
import hmac
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
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import Skip, build_id, check, cpu_profile, need  # noqa: E402

EMBER, FIX, CEPH_ENV, CASE = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="ember-scaleout-test.")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "elf",
                   "src")


def fx(name):
    return os.path.join(FIX, name)


def load_env():
    env = {}
    try:
        with open(CEPH_ENV) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                env[k] = v
    except OSError:
        raise Skip("no Ceph cluster ('%s' missing: the objstore_ceph_start fixture "
                   "writes it)" % CEPH_ENV)
    if "OBJSTORE_TEST_SKIP" in env:
        raise Skip(env["OBJSTORE_TEST_SKIP"])
    return env


CEPH = None
PREFIX = "scaleout/%s-%d-%d" % (CASE.split("__")[-1], os.getpid(), int(time.time()))


# ---- the bucket, read directly ---------------------------------------------------


def s3_get(query):
    """GET on the bucket (path style) with query (dict), SigV4-signed:
    (status, body)."""
    ep = urllib.parse.urlparse(CEPH["OBJSTORE_TEST_ENDPOINT"])
    region, bucket = CEPH["OBJSTORE_TEST_REGION"], CEPH["OBJSTORE_TEST_BUCKET"]
    now = datetime.datetime.utcnow()
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    q = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                            urllib.parse.quote(v, safe="-_.~")) for k, v in sorted(query.items()))
    payload = hashlib.sha256(b"").hexdigest()
    headers = {"host": ep.netloc, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
    signed = ";".join(sorted(headers))
    canonical = "\n".join(["GET", "/" + bucket, q] +
                          ["%s:%s" % (k, headers[k]) for k in sorted(headers)] +
                          ["", signed, payload])
    scope = "%s/%s/s3/aws4_request" % (day, region)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + CEPH["AWS_SECRET_ACCESS_KEY"]).encode()
    for part in (day, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s" % (CEPH["AWS_ACCESS_KEY_ID"], scope, signed, sig))
    c = http.client.HTTPConnection(ep.hostname, ep.port, timeout=10)
    try:
        c.request("GET", "/%s?%s" % (bucket, q), headers=headers)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def bucket_keys(sub=""):
    """Every key under our prefix (one page is plenty here)."""
    s, body = s3_get({"list-type": "2", "prefix": PREFIX + "/" + sub})
    check(s == 200, "ListObjectsV2: %d %s" % (s, body[:200]))
    check("<IsTruncated>true" not in body, "more keys than a page")
    return re.findall(r"<Key>([^<]*)</Key>", body)


def unfinished_uploads(details=False):
    s, body = s3_get({"uploads": "", "prefix": PREFIX + "/"})
    check(s == 200, "ListMultipartUploads: %d %s" % (s, body[:200]))
    keys = re.findall(r"<Key>([^<]*)</Key>", body)
    return (keys, body) if details else keys


# ---- replicas ----------------------------------------------------------------------


TOKEN_FILE = os.path.join(TMP, "token")


class Replica(ember_test.Server):
    """A replica: `ember serve` on the case's bucket prefix, with the token
    every replica shares."""

    def __init__(self, data=None, args=()):
        if not os.path.exists(TOKEN_FILE):  # one token for every replica
            with open(TOKEN_FILE, "w") as f:
                f.write(os.urandom(16).hex() + "\n")
            os.chmod(TOKEN_FILE, 0o600)
        env = {"AWS_ACCESS_KEY_ID": CEPH["AWS_ACCESS_KEY_ID"],
               "AWS_SECRET_ACCESS_KEY": CEPH["AWS_SECRET_ACCESS_KEY"], "AWS_SESSION_TOKEN": None}
        self.extra = list(args)  # this replica's options (a case may change them to restart)
        super().__init__(EMBER, TMP, (), data, env)

    def start(self, ready=True, port=0):
        self.args = ["--token-file", TOKEN_FILE,
                     "--storage", "s3://%s/%s" % (CEPH["OBJSTORE_TEST_BUCKET"], PREFIX),
                     "--s3-endpoint", CEPH["OBJSTORE_TEST_ENDPOINT"],
                     "--s3-region", CEPH["OBJSTORE_TEST_REGION"]] + self.extra
        super().start(ready, port)

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, body bytes)."""
        return super().request(method, path, body, headers, timeout)[:2]

    def upload(self, path, build, kind):
        with open(path, "rb") as f:  # streamed by http.client
            return self.request("PUT", "/api/v1/artifacts/%s/%s?name=%s" % (
                build, kind, os.path.basename(path)), f,
                {"Authorization": "Bearer " + self.token,
                 "Content-Length": str(os.path.getsize(path))})

    def metric(self, name):
        return super().metric(name, default=0.0)

    def candidates(self, build):
        s, body = self.request("GET", "/api/v1/artifacts/" + build)
        check(s == 200, "listing on %s: %d %r" % (self.url, s, body[:200]))
        return sorted((a["sha256"], tuple(sorted(a["kinds"])))
                      for a in json.loads(body)["artifacts"])


def ember_upload(rep, *args):
    env = dict(os.environ, EMBER_SERVER=rep.url, EMBER_TOKEN=rep.token)
    return subprocess.run([EMBER, "upload"] + list(args), capture_output=True, text=True,
                          env=env, timeout=120)


def upload_pair_with_sources(rep):
    """The stripped C fixture, its debug file and the source file its
    DWARF names (prog.c), through ember upload."""
    r = ember_upload(rep, "--sources", "--source-prefix-map",
                     "/ember/fixtures/src=" + os.path.abspath(SRC),
                     "--debug-file-directory", fx("debug-root"),
                     fx("c_stripped"), fx("c_stripped.debug"))
    check(r.returncode == 0, "ember upload: %s %s" % (r.stdout, r.stderr))
    return build_id(fx("c_stripped"))


def debuginfod_find(rep, *args):
    env = dict(os.environ, DEBUGINFOD_URLS=rep.url, DEBUGINFOD_TIMEOUT="20",
               DEBUGINFOD_CACHE_PATH=tempfile.mkdtemp(dir=TMP, prefix="cache."))
    r = subprocess.run([need("debuginfod-find")] + list(args), capture_output=True, text=True,
                       env=env, timeout=60)
    check(r.returncode == 0, "debuginfod-find %s on %s: %s" % (" ".join(args), rep.url, r.stderr))
    return r.stdout.strip()


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def check_serves_everything(rep, b):
    check(same_file(debuginfod_find(rep, "debuginfo", b), fx("c_stripped.debug")),
          "debuginfo differs on %s" % rep.url)
    check(same_file(debuginfod_find(rep, "executable", b), fx("c_stripped")),
          "executable differs on %s" % rep.url)
    src = debuginfod_find(rep, "source", b, "/ember/fixtures/src/prog.c")
    check(same_file(src, os.path.join(SRC, "prog.c")), "source differs on %s" % rep.url)


# ---- cases ----------------------------------------------------------------------------


def test_scaleout__replica_serves_the_others_upload():
    a, b = Replica(), Replica()
    bid = upload_pair_with_sources(a)
    check_serves_everything(b, bid)
    check_serves_everything(a, bid)
    check(a.candidates(bid) == b.candidates(bid), "candidate sets differ")
    keys = bucket_keys("v1/buildid/%s/cand/" % bid)
    check(len(keys) == 2, "candidate objects: %r" % keys)


def test_scaleout__concurrent_uploads_leave_one_candidate_set():
    """An unstripped binary (both kinds) pushed to both replicas at once,
    as another kind to each, with the same replica's second upload in the
    middle: one candidate, both kinds, the same on every replica."""
    a, b = Replica(), Replica()
    f = fx("c_O2_pie")
    bid = build_id(f)
    results = {}

    def push(rep, kinds):
        results[rep.url] = [rep.upload(f, bid, k)[0] for k in kinds]

    ts = [threading.Thread(target=push, args=(a, ["executable", "debuginfo"])),
          threading.Thread(target=push, args=(b, ["debuginfo", "executable"]))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for url, codes in results.items():
        check(all(c in (200, 201) for c in codes), "uploads to %s: %r" % (url, codes))
    check(sorted(results[a.url] + results[b.url]).count(201) >= 1, "nothing new: %r" % results)
    sha = hashlib.sha256(open(f, "rb").read()).hexdigest()
    want = [(sha, ("debuginfo", "executable"))]
    c = Replica()  # never saw an upload
    check(c.candidates(bid) == want, "c: %r" % c.candidates(bid))
    time.sleep(1.1)  # past the listing's reuse (1 s)
    check(a.candidates(bid) == want, "a: %r" % a.candidates(bid))
    check(b.candidates(bid) == want, "b: %r" % b.candidates(bid))
    keys = bucket_keys("v1/buildid/%s/cand/" % bid)
    check(sorted(k.rsplit("/", 1)[1] for k in keys) == ["1-0", "2-0"], "objects: %r" % keys)
    check(len(bucket_keys("v1/blobs/" + sha)) == 1, "one blob")


def big_elf(path, mib):
    """An executable with its own build ID and mib MiB of random bytes in a
    section of its own."""
    need("gcc")
    need("objcopy")
    src = os.path.join(TMP, "big.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    bid = os.urandom(20).hex()
    subprocess.run(["gcc", "-o", path + ".tmp", src, "-Wl,--build-id=0x" + bid], check=True)
    pad = os.path.join(TMP, "pad")
    with open(pad, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    subprocess.run(["objcopy", "--add-section", ".pad=" + pad, path + ".tmp", path], check=True)
    return bid


def test_scaleout__kill9_during_multipart_upload():
    a, b = Replica(), Replica()
    acked = upload_pair_with_sources(a)  # acknowledged before the kill
    big = os.path.join(TMP, "big")
    bid = big_elf(big, 64)
    sha = hashlib.sha256(open(big, "rb").read()).hexdigest()
    answer = {}

    def push():
        try:
            answer["status"] = a.upload(big, bid, "executable")[0]
        except OSError as e:
            answer["error"] = e

    t = threading.Thread(target=push)
    t.start()
    deadline = time.time() + 60
    while not unfinished_uploads():  # the blob's multipart upload began
        check(t.is_alive() and time.time() < deadline, "no multipart upload seen: %r" % answer)
        time.sleep(0.01)
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait()
    t.join()
    check("status" not in answer or answer["status"] >= 500, "answered: %r" % answer)
    # nothing partial visible: no blob, no candidate, on either replica
    check(not bucket_keys("v1/blobs/" + sha), "a partial blob is visible")
    check(not bucket_keys("v1/buildid/%s/" % bid), "a record of the killed upload")
    check(b.request("GET", "/buildid/%s/executable" % bid)[0] == 404, "b serves the killed upload")
    # nothing acknowledged lost; the restarted replica aborts what it left
    check_serves_everything(b, acked)
    a.stop()
    a.extra = ["--s3-abandoned-after", "1s"]
    time.sleep(2.1)  # "older than 1 s" in whole seconds (S3's Initiated, time())
    a.start()
    left, body = unfinished_uploads(details=True)
    check(not left, "the abandoned upload is still there at %s: %s" % (
        time.strftime("%H:%M:%S", time.gmtime()), body[-600:]))
    check_serves_everything(a, acked)
    check(a.request("GET", "/buildid/%s/executable" % bid)[0] == 404, "a serves the killed upload")


def test_scaleout__empty_cache_serves_everything_from_the_bucket():
    a = Replica()
    bid = upload_pair_with_sources(a)
    s, out = a.request("POST", "/api/v1/symbolize", json.dumps(
        {"modules": [{"build_id": bid, "addresses": ["0x1139"]}]}).encode(),
        {"Content-Type": "application/json"})
    check(s == 200, "symbolize on a: %d %r" % (s, out[:200]))
    a.stop()
    shutil.rmtree(a.data)
    fresh = Replica()  # an empty data directory: only the bucket
    check_serves_everything(fresh, bid)
    s, again = fresh.request("POST", "/api/v1/symbolize", json.dumps(
        {"modules": [{"build_id": bid, "addresses": ["0x1139"]}]}).encode(),
        {"Content-Type": "application/json"})
    check(s == 200 and json.loads(again) == json.loads(out),
          "symbolize from the bucket: %d %r != %r" % (s, again[:300], out[:300]))
    check(json.loads(again)["modules"][0]["results"][0]["frames"], "no frames: %r" % again)
    # the index a saved is what fresh loaded: it was not built again
    check(fresh.metric('ember_symbol_cache_events_total{event="build"}') == 0, "index rebuilt")
    check(fresh.metric('ember_symbol_cache_events_total{event="disk_load"}') == 1,
          "the saved index not loaded")


class Proxy:
    """A TCP proxy on a free loopback port to radosgw, closed on demand:
    a bucket that goes away under a running replica."""

    def __init__(self):
        ep = urllib.parse.urlparse(CEPH["OBJSTORE_TEST_ENDPOINT"])
        self.target = (ep.hostname, ep.port)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns = []
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.closed:
                c.close()
                return
            u = socket.create_connection(self.target)
            self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        """Refuse new connections (shutdown wakes the blocked accept: a
        plain close would leave it listening) and cut the open ones."""
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_scaleout__unreachable_bucket_answers_503():
    """A lookup the replica cannot answer because the bucket is gone is
    503 (try again), never 404 (which clients cache); an upload is refused
    the same way and acknowledged by nobody."""
    proxy = Proxy()
    a = Replica(args=["--s3-endpoint", proxy.url])  # the later option wins
    bid = upload_pair_with_sources(a)
    check(a.request("GET", "/buildid/%s/debuginfo" % bid)[0] == 200, "served through the proxy")
    proxy.close()
    unknown = "ab" * 20
    s, body = a.request("GET", "/buildid/%s/debuginfo" % unknown)
    check(s == 503, "a lookup without the bucket: %d %r" % (s, body[:200]))
    s, body = a.upload(fx("c_O2_pie"), build_id(fx("c_O2_pie")), "executable")
    check(s == 503, "an upload without the bucket: %d %r" % (s, body[:200]))
    b = Replica()  # on the bucket itself: the refused upload is nowhere
    check(b.request("GET", "/buildid/%s/executable" % build_id(fx("c_O2_pie")))[0] == 404,
          "the refused upload is served")



# ---- profiles (the profile store's blocks and block index in the bucket) --------------

SEC = 1_000_000_000
FAST = ["--profile-head-age", "1s", "--profile-refresh", "1s"]


def push_profiles(rep, service, n, t0_ns, step_ns=SEC, headers=None):
    """n profiles of service at t0, t0 + step... (with headers besides the
    token's); their total of samples."""
    total = 0
    for i in range(n):
        stacks = {"main;work;hot": 30 + i, "main;work;cold": 10 + (i % 7), "main;idle": 5}
        total += sum(stacks.values())
        data = cpu_profile(stacks, t0_ns + i * step_ns).encode(gzip=True)
        st, body = rep.request("POST", "/api/v1/profiles?service_name=%s" % service, data,
                               dict({"Authorization": "Bearer " + rep.token}, **(headers or {})))
        check(st == 200, "push to %s: %d %r" % (rep.url, st, body[:200]))
    return total


def samples_total(rep, selector="{}", headers=None):
    s, body = rep.request("GET", "/api/v1/query?type=samples&from=0&format=json&query=" +
                          urllib.parse.quote(selector, safe=""), headers=headers)
    check(s == 200, "query on %s: %d %r" % (rep.url, s, body[:300]))
    return json.loads(body)["total"]


def wait_total(rep, want, selector="{}", timeout=40, headers=None):
    """Poll rep until its total is want; never above it (a profile counted
    twice) on the way."""
    deadline = time.time() + timeout
    while True:
        got = samples_total(rep, selector, headers)
        check(got <= want, "%s counts %d > %d pushed" % (rep.url, got, want))
        if got == want:
            return
        check(time.time() < deadline, "%s: total %d, want %d after %d s" % (
            rep.url, got, want, timeout))
        time.sleep(0.2)


def profile_keys(sub):
    return bucket_keys("v1/profiles/" + sub)


def test_scaleout__profiles_pushed_to_both_are_in_either():
    a, b = Replica(args=FAST), Replica(args=FAST)
    now = int(time.time()) * SEC
    want_a = push_profiles(a, "a", 12, now - 1800 * SEC, 60 * SEC)
    want_b = push_profiles(b, "b", 9, now - 900 * SEC, 45 * SEC)
    # each sees its own at once (its head), the other's once compacted
    check(samples_total(a, '{service_name="a"}') == want_a, "a's own")
    check(samples_total(b, '{service_name="b"}') == want_b, "b's own")
    for rep in (a, b):
        wait_total(rep, want_a + want_b)
        wait_total(rep, want_a, '{service_name="a"}')
    check(profile_keys("blocks/"), "no block in the bucket")
    check(profile_keys("index/"), "no index entry in the bucket")
    for rep in (a, b):
        check(rep.metric("ember_profile_store_compaction_errors_total") == 0,
              "compaction errors on " + rep.url)


def test_scaleout__tenants_each_under_their_prefix():
    """With --multitenancy, a tenant's blocks and index go under
    PREFIX/tenants/TENANT/v1/profiles/, anonymous's where they were: a
    replica sees a tenant's profiles another pushed, and only that
    tenant's."""
    a, b = (Replica(args=FAST + ["--multitenancy"]) for _ in range(2))
    now = int(time.time()) * SEC
    t1, t2 = {"X-Scope-OrgID": "t1"}, {"X-Scope-OrgID": "t2"}
    want1 = push_profiles(a, "svc", 6, now - 1800 * SEC, 60 * SEC, t1)
    want2 = push_profiles(a, "svc", 4, now - 900 * SEC, 60 * SEC, t2)
    samples_total(b, headers=t1)  # b opens t1 and t2: their blocks come with the refresh
    wait_total(b, want1, headers=t1)
    wait_total(b, want2, headers=t2)
    check(samples_total(b, headers={"X-Scope-OrgID": "anonymous"}) == 0, "anonymous")
    deadline = time.time() + 30
    while not bucket_keys("tenants/t1/v1/profiles/blocks/"):
        check(time.time() < deadline, "no block of t1 under its prefix")
        time.sleep(0.2)
    check(bucket_keys("tenants/t2/v1/profiles/index/"), "no index entry of t2")
    check(not bucket_keys("v1/profiles/blocks/"), "a tenant's block in anonymous's place")


def test_scaleout__racing_compactions_count_once():
    """Both replicas flush blocks into one closed partition (the previous
    hour, which every refresh lists) round after round, and both merge it
    as soon as they see two blocks: their merges race; the total stays what
    was pushed, on both."""
    old = FAST + ["--max-profile-age", "3h"]  # the previous hour's profiles taken
    a, b = Replica(args=old), Replica(args=old)
    t0 = ((int(time.time()) // 3600 - 1) * 3600 + 10) * SEC
    want = 0
    for rnd in range(4):
        ts = [threading.Thread(target=lambda r=r, n=n: results.append(
            push_profiles(r, n, 5, t0 + rnd * 10 * SEC))) for r, n in ((a, "a"), (b, "b"))]
        results = []
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        check(len(results) == 2, "a push failed")
        want += sum(results)
        time.sleep(1.5)  # past a head age: flushed, merging
    for rep in (a, b):
        wait_total(rep, want)

    def merged():  # one block per replica for the partition, no compaction left
        return all(r.metric("ember_profile_store_blocks") == 1 for r in (a, b))

    deadline = time.time() + 45  # an hour's end in between: the next full listing
    while not merged():
        check(time.time() < deadline, "not merged into one block: %r" % [
            r.metric("ember_profile_store_blocks") for r in (a, b)])
        time.sleep(0.2)
    for rep in (a, b):
        check(samples_total(rep) == want, "after the merges on %s" % rep.url)
        check(rep.metric("ember_profile_store_compaction_errors_total") == 0,
              "compaction errors on " + rep.url)
    entries = profile_keys("index/")
    check(len(entries) >= 9, "index entries: %r" % entries)  # 8 flushes, merges
    c = Replica(args=FAST)  # reads the index alone
    check(samples_total(c) == want, "a new replica's total")


def test_scaleout__kill9_after_acknowledged_pushes_loses_nothing():
    """Acknowledged pushes are in the replica's log; kill -9 before they
    are compacted, restart on the same data directory: replayed, compacted
    into the bucket, served by another replica."""
    a = Replica(args=["--profile-head-age", "60s", "--profile-refresh", "1s"])
    b = Replica(args=FAST)
    want = push_profiles(a, "a", 10, (int(time.time()) - 600) * SEC)
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait()
    check(not profile_keys("blocks/"), "compacted before the kill: the case shows nothing")
    records = [k for k in profile_keys("log/") if re.search(r"/[0-9a-f]{16}-\d{10}$", k)]
    check(len(records) == 10, "acknowledged pushes as log objects: %r" % records)
    check(samples_total(b) == 0, "b sees profiles that are in no block")
    a.stop()
    a.extra = FAST
    a.start()
    check(samples_total(a) == want, "replayed on a")
    wait_total(b, want)
    wait_total(a, want)
    deadline = time.time() + 20  # the segments' blocks are in the index: deleted
    while any(re.search(r"-\d{10}$", k) for k in profile_keys("log/")):
        check(time.time() < deadline, "log objects left: %r" % profile_keys("log/"))
        time.sleep(0.2)


def test_scaleout__lost_disk_log_taken_over_from_the_bucket():
    """Acknowledged pushes not yet compacted, then kill -9 and the replica's
    data directory deleted: the pushes' log objects are in the bucket, and
    another replica takes the dead writer's log over once its lease is old
    (by radosgw's Last-Modified): every acknowledged profile counted once,
    the log objects deleted once compacted, the claim left."""
    a = Replica(args=["--profile-head-age", "60s", "--profile-refresh", "1s",
                      "--profile-lease-expiry", "3s", "--max-profile-age", "3h"])
    want = push_profiles(a, "a", 10, (int(time.time()) - 600) * SEC)
    want += push_profiles(a, "a2", 3, (int(time.time()) - 7200) * SEC)  # another partition
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait()
    check(not profile_keys("blocks/"), "compacted before the kill: the case shows nothing")
    writer = [k for k in profile_keys("log/") if k.endswith("/lease")]
    check(len(writer) == 1, "a's lease: %r" % profile_keys("log/"))
    a.stop()
    shutil.rmtree(a.data)  # the disk is gone
    b = Replica(args=FAST + ["--profile-lease-expiry", "3s"])
    wait_total(b, want, timeout=30)
    claim = writer[0][:-len("lease")] + "claim"
    check(claim in profile_keys("log/"), "no claim: %r" % profile_keys("log/"))
    deadline = time.time() + 20
    while any(re.search(r"-\d{10}$", k) for k in profile_keys("log/")):
        check(time.time() < deadline, "log objects left: %r" % profile_keys("log/"))
        time.sleep(0.2)
    wait_total(Replica(args=FAST), want)  # from the blocks alone
    check(samples_total(b) == want, "b's total after its flush")


def test_scaleout__taken_over_writer_back_on_its_disk_is_fenced():
    """A replica killed and taken over comes back on its own data
    directory: its log is claimed, so it takes no push (503) and stores
    nothing under the claimed name; what it replays from its disk is the
    same records the claimant flushed, counted once everywhere."""
    slow = ["--profile-head-age", "60s", "--profile-refresh", "1s",
            "--profile-lease-expiry", "3s"]
    a = Replica(args=slow)
    want = push_profiles(a, "a", 6, (int(time.time()) - 600) * SEC)
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait()
    b = Replica(args=FAST + ["--profile-lease-expiry", "3s"])
    wait_total(b, want, timeout=30)  # taken over
    a.stop()
    a.extra = FAST + ["--profile-lease-expiry", "3s"]
    a.start()  # its disk: the writer ID whose log b claimed
    data = cpu_profile({"main;late": 1000}, (int(time.time()) - 60) * SEC).encode(gzip=True)
    st, body = a.request("POST", "/api/v1/profiles?service_name=a", data,
                         {"Authorization": "Bearer " + a.token})
    check(st == 503, "a push to the fenced writer: %d %r" % (st, body[:200]))
    check(b"taken over" in body, "the 503's reason: %r" % body[:200])
    time.sleep(3)  # a flushes its replayed segment (an entry b's blocks make skipped)
    wait_total(a, want)
    wait_total(b, want)
    wait_total(Replica(args=FAST), want)
    check(samples_total(a) == want and samples_total(b) == want, "counted twice at the end")


def test_scaleout__empty_data_dir_serves_compacted_profiles():
    a = Replica(args=FAST)
    want = push_profiles(a, "a", 8, (int(time.time()) - 3000) * SEC, 300 * SEC)
    deadline = time.time() + 30
    while a.metric("ember_profile_store_blocks") < 1 or profile_keys("index/") == []:
        check(time.time() < deadline, "never compacted")
        time.sleep(0.2)
    time.sleep(1.5)  # every head past its age
    wait_total(Replica(args=FAST), want)  # all of it in the bucket
    a.stop()
    shutil.rmtree(a.data)
    fresh = Replica(args=FAST)  # an empty data directory: only the bucket
    check(samples_total(fresh) == want, "fresh replica: %d, want %d" % (
        samples_total(fresh), want))
    check(os.path.isdir(os.path.join(fresh.data, "profiles", "cache")), "no block cache")


def test_scaleout__profiles_unreachable_bucket_answers_503():
    """A query whose replica cannot read the block index is 503, never an
    answer with fewer profiles; a push whose log object cannot be written
    is 503 too, and counted nowhere (neither by the replica nor by one on
    the bucket)."""
    proxy = Proxy()
    a = Replica(args=FAST + ["--s3-endpoint", proxy.url])
    want = push_profiles(a, "a", 3, (int(time.time()) - 600) * SEC)
    wait_total(a, want)
    deadline = time.time() + 30
    while a.metric("ember_profile_store_blocks") < 1:
        check(time.time() < deadline, "never compacted")
        time.sleep(0.2)
    proxy.close()
    time.sleep(1.2)  # past --profile-refresh
    s, body = a.request("GET", "/api/v1/query?type=samples&from=0&format=json&query=%7B%7D")
    check(s == 503, "a query without the bucket: %d %r" % (s, body[:200]))
    data = cpu_profile({"main;lost": 1000}, (int(time.time()) - 60) * SEC).encode(gzip=True)
    st, body = a.request("POST", "/api/v1/profiles?service_name=a", data,
                         {"Authorization": "Bearer " + a.token})
    check(st == 503, "a push without the bucket: %d %r" % (st, body[:200]))
    check(b"log object" in body, "the 503's reason: %r" % body[:200])
    wait_total(Replica(args=FAST), want)  # on the bucket: the refused push is nowhere


def dir_bytes(*parts):
    """Bytes of the files under the directory os.path.join(*parts)."""
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(os.path.join(*parts)) for f in files)


def backdate(seconds, *parts):
    """The files under os.path.join(*parts) last modified seconds ago."""
    t = time.time() - seconds
    for root, _, files in os.walk(os.path.join(*parts)):
        for f in files:
            os.utime(os.path.join(root, f), (t, t))


def test_scaleout__cache_mb_one_budget_counted_from_an_existing_data_dir():
    """--cache-mb is one budget over the blob files (blobs/, derived/) and
    the profile blocks' cache (profiles/cache/), where every version keeps
    them: a replica restarted with a bound on a data directory an unbounded
    run filled counts what is there at start, removes the least recently
    used down to the budget, and still serves everything (fetched again)."""
    a = Replica(args=FAST)
    files = []
    for i in range(3):
        path = os.path.join(TMP, "big%d" % i)
        files.append((big_elf(path, 1), path))
        check(a.upload(path, files[-1][0], "executable")[0] == 201, "upload " + path)
    want = push_profiles(a, "a", 8, (int(time.time()) - 3000) * SEC, 300 * SEC)
    cache = os.path.join(a.data, "profiles", "cache")
    deadline = time.time() + 30
    while not os.path.isdir(cache) or not os.listdir(cache):  # cached by its writer
        check(time.time() < deadline, "never compacted into a cached block")
        time.sleep(0.2)
    a.stop()
    check(dir_bytes(a.data, "blobs") > 3 << 20, "the blob files: %d bytes"
          % dir_bytes(a.data, "blobs"))
    blocks = os.listdir(cache)
    backdate(7200, a.data, "blobs")  # an earlier run's: past the grace, blobs older
    backdate(7200, a.data, "derived")
    backdate(3600, cache)
    b = Replica(data=a.data, args=FAST + ["--cache-mb", "2"])
    held = (dir_bytes(b.data, "blobs") + dir_bytes(b.data, "derived") +
            dir_bytes(b.data, "profiles", "cache"))
    check(held <= 2 << 20, "%d bytes kept under --cache-mb 2" % held)
    check(set(blocks) <= set(os.listdir(cache)), "the newer blocks went before older blobs")
    for bid, path in files:
        s, body = b.request("GET", "/buildid/%s/executable" % bid)
        check(s == 200 and body == open(path, "rb").read(), "%s: %d" % (bid, s))
    wait_total(b, want)


def main():
    global CEPH
    rc = 1
    try:
        CEPH = load_env()
        fn = globals().get(CASE)
        check(fn is not None, "no such case " + CASE)
        fn()
        rc = 0
    except Skip as e:
        print("SKIP: %s" % e)
        rc = 77
    except AssertionError as e:
        print("FAIL: %s" % e)
    finally:
        ember_test.stop_servers()
        log = os.path.join(TMP, "server.log")
        if rc == 1 and os.path.exists(log):
            sys.stdout.write(open(log, errors="replace").read()[-4000:])
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
