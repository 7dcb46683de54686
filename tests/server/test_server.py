#!/usr/bin/env python3
"""End-to-end tests of `ember serve` and `ember upload`.

Usage: test_server.py EMBER_BIN FIXTURES_DIR CASE

Each case is a function test_server__NAME.  Every case starts its own
server on a free loopback port with a fresh data directory, waits for
/healthz, and drives it with real clients (HTTP, debuginfod-find, gdb,
eu-addr2line, eu-stack, ember upload, elfutils' debuginfod as upstream).
Exit 0 pass, 1 fail, 77 skip (a peer tool is missing).
"""
import errno
import hashlib
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ember_test  # noqa: E402
from ember_test import NotFoundUpstream, hanging_upstream  # noqa: E402
import packages  # noqa: E402
from collections import Counter
from ember_test import (RawProfile, Skip, build_id, check, need, sanitized, vm_status,  # noqa: E402
                        wait_for)

EMBER, FIX, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp(prefix="ember-server-test.")


def fx(name):
    return os.path.join(FIX, name)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- the server --------------------------------------------------------------


class Server(ember_test.Server):
    def __init__(self, data=None, args=(), preexec=None, ready=True, env=None, wrap=()):
        super().__init__(EMBER, TMP, args, data, env, wrap, preexec, ready)

    def get(self, path, headers=None):
        return self.request("GET", path, headers=headers)

    def upload(self, path, build, kind, token=None, name=None):
        with open(path, "rb") as f:
            body = f.read()
        hdrs = {"Authorization": "Bearer " + (token if token is not None else self.token)}
        q = "?name=" + (name or os.path.basename(path))
        return self.request("PUT", "/api/v1/artifacts/%s/%s%s" % (build, kind, q), body, hdrs)

    def listing(self, build):
        status, body, _ = self.get("/api/v1/artifacts/" + build)
        check(status == 200, "listing: %d" % status)
        return json.loads(body)

    def metric(self, name):
        return super().metric(name, default=0.0)

    def tmp_files(self):
        return os.listdir(os.path.join(self.data, "tmp"))


def client_env(server_urls, cache=None):
    env = dict(os.environ)
    env["DEBUGINFOD_URLS"] = server_urls
    env["DEBUGINFOD_CACHE_PATH"] = cache or tempfile.mkdtemp(dir=TMP, prefix="cache.")
    env["DEBUGINFOD_TIMEOUT"] = "10"
    return env


def upload_split_pair(srv):
    """The stripped C fixture and its separate debug file."""
    b = build_id(fx("c_stripped"))
    check(srv.upload(fx("c_stripped"), b, "executable")[0] == 201, "exe upload")
    check(srv.upload(fx("c_stripped.debug"), b, "debuginfo")[0] == 201, "debug upload")
    return b


def ember_upload(srv, *args):
    env = dict(os.environ, EMBER_SERVER=srv.url, EMBER_TOKEN=srv.token)
    return subprocess.run([EMBER, "upload"] + list(args), capture_output=True, text=True,
                          env=env, timeout=120)


def fixture_sources_args():
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures",
                       "elf", "src")
    return ["--sources", "--source-prefix-map", "/ember/fixtures/src=" + os.path.abspath(src),
            "--debug-file-directory", fx("debug-root")]


# ---- storing and serving ----------------------------------------------------------


def test_server__upload_then_debuginfod_get():
    srv = Server()
    b = upload_split_pair(srv)
    status, body, h = srv.get("/buildid/%s/debuginfo" % b)
    check(status == 200, "debuginfo status %d" % status)
    check(body == open(fx("c_stripped.debug"), "rb").read(), "debuginfo bytes differ")
    check(h["content-length"] == str(len(body)) == h["x-debuginfod-size"], "size headers")
    check(h["x-debuginfod-file"] == "c_stripped.debug", "X-DEBUGINFOD-FILE " + h["x-debuginfod-file"])
    check(re.match(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", h["last-modified"]), "Last-Modified")
    check(h["etag"] == '"%s"' % sha256(fx("c_stripped.debug")), "ETag is the sha256")
    status, body, _ = srv.get("/buildid/%s/executable" % b)
    check(status == 200 and body == open(fx("c_stripped"), "rb").read(), "executable bytes")
    srv.stop()


def test_server__auth_required_nothing_stored():
    srv = Server()
    b = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), b, "debuginfo", token="")[0] == 401, "no token")
    check(srv.upload(fx("c_O2_pie"), b, "debuginfo", token="x" * 64)[0] == 401, "wrong token")
    check(srv.listing(b)["artifacts"] == [], "something was stored")
    check(srv.get("/buildid/%s/debuginfo" % b)[0] == 404, "served without upload")
    check(srv.metric('ember_uploads_total{result="rejected",reason="unauthorized"}') == 2,
          "rejections not counted")
    check(srv.tmp_files() == [], "temporary files left")
    srv.stop()


def serve_fails(args, want):
    """`ember serve ARGS` must exit 1 at once with want in its stderr."""
    r = subprocess.run([EMBER, "serve"] + args, capture_output=True, text=True, timeout=20)
    check(r.returncode == 1 and want in r.stderr,
          "serve %r: %d %r" % (args, r.returncode, r.stderr[-300:]))


def test_server__listen_addresses_and_refusals():
    srv = Server()
    # The port is taken: a clear error, nothing served.
    serve_fails(["--listen", "127.0.0.1:%d" % srv.port, "--data",
                 tempfile.mkdtemp(dir=TMP, prefix="data.")], "Address already in use")
    # The data directory is in use by the running server.
    serve_fails(["--listen", "127.0.0.1:0", "--data", srv.data], "in use by another process")
    srv.stop()
    # IPv6 loopback, when this kernel has it.
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError:
        raise Skip("no IPv6 loopback here (the IPv4 checks above passed)")
    p = subprocess.Popen([EMBER, "serve", "--listen", "[::1]:0", "--data", srv.data],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = ""
        while "listening" not in line:
            line = p.stdout.readline().decode()
            check(line, "no listening line")
        port = int(re.search(r"http://\[::1\]:(\d+)", line).group(1))
        deadline = time.time() + 20
        while True:
            c = http.client.HTTPConnection("::1", port, timeout=10)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                break
            check(time.time() < deadline, "never ready over IPv6")
            time.sleep(0.02)
    finally:
        p.terminate()
        p.wait(timeout=20)
        p.stdout.close()


def half_sent(port, src):
    """A connection from src whose request head never ends."""
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # no blank line
    return s


def closed_by_server(socks, timeout):
    """Which of socks the server closes (end of stream or reset) within
    timeout seconds, all watched at once: a set of sockets."""
    import selectors
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    closed, deadline = set(), time.time() + timeout
    while len(closed) < len(socks) and time.time() < deadline:
        for key, _ in sel.select(max(0.0, deadline - time.time())):
            try:
                gone = key.fileobj.recv(1) == b""
            except ConnectionResetError:
                gone = True
            except BlockingIOError:
                continue
            if gone:
                closed.add(key.fileobj)
                sel.unregister(key.fileobj)
    sel.close()
    return closed


def test_server__one_client_cannot_take_every_connection():
    srv = Server(args=["--max-connections", "64", "--max-connections-per-client", "8",
                       "--header-timeout", "10"])
    held = [half_sent(srv.port, "127.0.0.1") for _ in range(70)]
    held_at = time.time()
    # Another address is answered at once (its own slots, well before the
    # header timeout frees any); so is the metrics endpoint.
    for path in ("/healthz", "/metrics"):
        t0 = time.time()
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10,
                                       source_address=("127.0.0.2", 0))
        c.request("GET", path)
        check(c.getresponse().status == 200, path + " from another address")
        c.close()
        check(time.time() - t0 < 4, "%s took %.1f s" % (path, time.time() - t0))
    # Past 8 connections of one address, the server closes new ones at once
    # (8 or fewer get in: the start's health probes may not be reaped yet);
    # watched until a second before the header timeout could close the rest.
    window = max(1.0, min(4.0, 9.0 - (time.time() - held_at)))
    closed = closed_by_server(held, window)
    open_ = [s for s in held if s not in closed]
    check(1 <= len(open_) <= 8, "%d of %d connections of one address kept"
          % (len(open_), len(held)))
    # Those it took are closed once their head is late.
    t0 = time.time()
    late = len(closed_by_server(open_, 20))
    check(late == len(open_), "%d of %d half-sent requests closed" % (late, len(open_)))
    check(time.time() - t0 < 20, "closed after %.1f s" % (time.time() - t0))
    # Asked from the other address: the server may not have reaped the
    # closed connections of 127.0.0.1 yet, which still fill its 8 slots.
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10,
                                   source_address=("127.0.0.2", 0))
    c.request("GET", "/metrics")
    metrics = c.getresponse().read().decode()
    c.close()
    m = re.search(r"^ember_connections_timed_out_total (\d+)$", metrics, re.M)
    check(m and int(m.group(1)) >= len(open_), "timeouts not counted")
    for s in held:
        s.close()
    srv.stop()


def test_server__fd_limit_raised_and_connections_sized():
    import resource

    def limit(soft, hard):
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    srv = Server(preexec=limit(400, 4096))
    with open("/proc/%d/limits" % srv.proc.pid) as f:
        row = [l for l in f if l.startswith("Max open files")][0].split()
    check(row[3:5] == ["4096", "4096"], "fd limit: " + " ".join(row))
    check("at most 1024 connections" in srv.stderr(), "log: " + srv.stderr()[-300:])
    srv.stop()
    # A hard limit of 400 leaves room for (400 - 256) / 2 connections.
    srv = Server(preexec=limit(400, 400))
    check("at most 72 connections" in srv.stderr(), "log: " + srv.stderr()[-300:])
    srv.stop()
    r = subprocess.run([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", srv.data,
                        "--max-connections", "1024"], capture_output=True, text=True,
                       timeout=20, preexec_fn=limit(400, 400))
    check(r.returncode == 1 and "--max-connections 1024 needs 2304 file descriptors"
          in r.stderr, "refusal: %d %r" % (r.returncode, r.stderr[-300:]))


def test_server__gnutls_never_initialized():
    """ember-server links GnuTLS (Debian's libmicrohttpd has HTTPS) but serves
    plain HTTP, so neither GnuTLS's constructor nor libmicrohttpd's may
    initialize it (cli/server_tls_off.c): that was 2 ms of every start."""
    gdb = need("gdb")
    server = os.path.join(os.path.dirname(EMBER), "ember-server")
    r = subprocess.run([gdb, "-nx", "-batch", "-ex", "set breakpoint pending off",
                        "-ex", "break asn1_array2tree", "-ex", "break gnutls_global_init",
                        "-ex", "run", "--args", server],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))  # LSan refuses ptrace
    out = r.stdout + r.stderr
    if 'Function "asn1_array2tree" not defined' in out:
        raise Skip("GnuTLS is not linked statically (EMBER_STATIC_DEPS=OFF)")
    check("Breakpoint 1 at" in out and "Breakpoint 2 at" in out, "breakpoints not set: " + out[-600:])
    check(not re.search(r"Breakpoint [12], ", out), "GnuTLS was initialized: " + out[-800:])
    # Constructors, main (a usage error) and destructors ran to the end.
    check("exited with code 02" in out, "ember-server did not run to its exit: " + out[-600:])


def test_server__token_kept_and_token_file():
    """The token is printed once, by the start that made it; a start that
    reads it (DATA/token or --token-file) names only its file, on stdout
    and in the log alike (both end up in journald and CI output)."""
    srv = Server()
    token, data = srv.token, srv.data
    check(re.fullmatch(r"[0-9a-f]{64}", token), "token is not 256 random bits in hex")
    check(os.stat(os.path.join(data, "token")).st_mode & 0o777 == 0o600, "token file mode")
    srv.stop()
    check(token in "".join(srv.out), "the new token was not printed: %r" % srv.out)
    srv = Server(data=data)
    check(srv.token == token, "token changed across restarts")
    srv.stop()
    check(token not in "".join(srv.out) + srv.stderr(), "a kept token was printed again")
    check("upload token from '%s/token'" % data in srv.stderr(), "its file not named")
    tf = os.path.join(TMP, "tokfile")
    with open(tf, "w") as f:
        f.write("s3cret-token-of-ci\n")
    os.chmod(tf, 0o600)
    srv = Server(data=data, args=["--token-file", tf])
    b = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), b, "executable", token=token)[0] == 401,
          "DATA/token accepted although --token-file was given")
    check(srv.upload(fx("c_O2_pie"), b, "executable", token="s3cret-token-of-ci")[0] == 201,
          "--token-file token refused")
    srv.stop()
    check("s3cret" not in "".join(srv.out) + srv.stderr(), "the token was printed or logged")
    check(token not in "".join(srv.out) + srv.stderr(), "DATA/token was printed")


def test_server__secrets_and_files_private():
    data = tempfile.mkdtemp(dir=TMP, prefix="data.")
    os.chmod(data, 0o755)  # as an older version made it
    srv = Server(data=data)
    check(stat.S_IMODE(os.stat(data).st_mode) == 0o700, "data directory mode %o"
          % stat.S_IMODE(os.stat(data).st_mode))
    b = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), b, "executable")[0] == 201, "upload")
    blob = os.path.join(data, "blobs", sha256(fx("c_O2_pie"))[:2], sha256(fx("c_O2_pie")))
    check(stat.S_IMODE(os.stat(blob).st_mode) == 0o600, "blob mode")
    for sub in ("blobs", "tmp", "pins"):  # db/ is RocksDB's, private by the 0700 above
        check(stat.S_IMODE(os.stat(os.path.join(data, sub)).st_mode) & 0o077 == 0,
              sub + " is open to others")
    srv.stop()
    # A token file others may read, or too short, or too long: refused.
    tf = os.path.join(TMP, "tokfile")
    for content, mode, want in (("a-token-long-enough-1", 0o644, "open to other users"),
                                ("a-token-long-enough-2", 0o640, "open to other users"),
                                ("short", 0o600, "too short"),
                                ("x" * 200, 0o600, "longer than 127 bytes"),
                                ("two words here, spaced", 0o600, "not printable ASCII")):
        with open(tf, "w") as f:
            f.write(content)
        os.chmod(tf, mode)
        serve_fails(["--listen", "127.0.0.1:0", "--data", data, "--token-file", tf], want)
    # A token file of another user, however private: refused (run as root,
    # the server also takes root's own, so the test needs another uid).
    if os.geteuid() == 0:
        with open(tf, "w") as f:
            f.write("a-token-long-enough-3")
        os.chmod(tf, 0o600)
        os.chown(tf, 65534, 65534)
        serve_fails(["--listen", "127.0.0.1:0", "--data", data, "--token-file", tf],
                    "belongs to uid 65534")
        os.chown(tf, 0, 0)
    os.chmod(os.path.join(data, "token"), 0o644)
    serve_fails(["--listen", "127.0.0.1:0", "--data", data], "open to other users")


def strace_lines(log, data):
    """(time, call, path) of each fsync and rename strace logged in DATA."""
    out = []
    with open(log) as f:
        for line in f:
            m = re.match(r"\d+ +([\d.]+) (fsync|renameat2?|rename)\((.*)", line)
            if m and data in m.group(3):
                out.append((float(m.group(1)), m.group(2), m.group(3)))
    return out


def test_server__directories_fsynced():
    """Crash safety, read off the server's system calls (strace as the
    witness): the token file is renamed into place and then the data
    directory fsynced; a duplicate upload is acknowledged only after its
    blob's folder is fsynced."""
    strace = need("strace")
    r = subprocess.run([strace, "-f", "-o", os.devnull, "true"], capture_output=True, text=True)
    if r.returncode:
        raise Skip("strace may not trace (ptrace forbidden): " + r.stderr.strip()[-200:])
    data = os.path.realpath(tempfile.mkdtemp(dir=TMP, prefix="data."))
    log = os.path.join(TMP, "strace.log")
    asan = os.environ.get("ASAN_OPTIONS", "")
    srv = Server(data=data, env={"ASAN_OPTIONS": asan + ":detect_leaks=0" if asan else
                                 "detect_leaks=0"},  # LSan refuses ptrace
                 wrap=[strace, "-f", "-y", "-ttt", "-qq", "-e", "signal=none", "-e",
                       "trace=fsync,rename,renameat,renameat2", "-o", log])
    calls = strace_lines(log, data)
    token = [t for t, c, a in calls if c.startswith("rename") and '"%s/token"' % data in a]
    check(token, "the token file was not renamed into place: %r" % calls[:20])
    check(any(c == "fsync" and re.match(r"\d+<%s>\)" % re.escape(data), a) and t >= token[0]
              for t, c, a in calls), "DATA not fsynced after the token: %r" % calls[:40])
    b = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), b, "executable")[0] == 201, "upload")
    sub = "%s/blobs/%s" % (data, sha256(fx("c_O2_pie"))[:2])
    t0 = time.time()
    st, _, _ = srv.upload(fx("c_O2_pie"), b, "executable")
    t1 = time.time()
    check(st in (200, 201), "duplicate upload: %d" % st)
    synced = [t for t, c, a in strace_lines(log, data)
              if c == "fsync" and re.match(r"\d+<%s>\)" % re.escape(sub), a)]
    check(any(t0 <= t <= t1 for t in synced),
          "the duplicate's folder not fsynced before its answer (%.3f-%.3f): %r"
          % (t0, t1, synced))
    # The server under strace: stop it, not strace (which then exits).
    with open("/proc/%d/task/%d/children" % (srv.proc.pid, srv.proc.pid)) as f:
        for pid in f.read().split():
            os.kill(int(pid), signal.SIGTERM)
    srv.stop()


def test_server__rejects_bad_files_with_reason():
    srv = Server()
    b = build_id(fx("c_O2_pie"))
    notelf = os.path.join(TMP, "notelf")
    with open(notelf, "wb") as f:
        f.write(b"#!/bin/sh\necho not an elf\n" * 50)
    trunc = os.path.join(TMP, "truncated")
    with open(fx("c_O2_pie"), "rb") as f:
        data = f.read()
    with open(trunc, "wb") as f:
        f.write(data[: len(data) // 2])
    s, body, _ = srv.upload(notelf, b, "debuginfo")
    check(s == 415 and b"not an ELF" in body, "non-ELF: %d %r" % (s, body))
    s, body, _ = srv.upload(trunc, b, "debuginfo")
    check(s == 422 and b"truncated" in body, "truncated: %d %r" % (s, body))
    s, body, _ = srv.upload(fx("c_O2_pie"), build_id(fx("cxx_O2")), "debuginfo")
    check(s == 409 and b.encode() in body, "build-ID mismatch: %d %r" % (s, body))
    s, body, _ = srv.upload(fx("c_stripped.debug"), build_id(fx("c_stripped")), "executable")
    check(s == 422 and b"no code" in body, "debug file as executable: %d %r" % (s, body))
    s, body, _ = srv.request("PUT", "/api/v1/artifacts/%s/symbols" % b, b"x",
                             {"Authorization": "Bearer " + srv.token})
    check(s == 404, "unknown kind: %d" % s)
    for bid in (b, build_id(fx("cxx_O2"))):
        check(srv.listing(bid)["artifacts"] == [], "a rejected file was stored")
    check(srv.tmp_files() == [], "temporary files left")
    check(srv.metric('ember_uploads_total{result="rejected",reason="not_elf"}') == 1, "metric")
    check(srv.metric('ember_uploads_total{result="rejected",reason="build_id_mismatch"}') == 1,
          "metric")
    srv.stop()


def test_server__duplicate_upload_is_a_noop():
    srv = Server()
    b = build_id(fx("c_O2_pie"))
    s1, body1, _ = srv.upload(fx("c_O2_pie"), b, "executable")
    s2, body2, _ = srv.upload(fx("c_O2_pie"), b, "executable")
    check(s1 == 201 and json.loads(body1)["new"], "first upload")
    check(s2 == 200 and not json.loads(body2)["new"], "second upload not a no-op")
    check(len(srv.listing(b)["artifacts"]) == 1, "two records for one content")
    blobs = [f for _, _, fs in os.walk(os.path.join(srv.data, "blobs")) for f in fs]
    check(blobs == [sha256(fx("c_O2_pie"))], "blob files: %r" % blobs)
    check(srv.metric('ember_uploads_total{result="duplicate"}') == 1, "duplicate metric")
    srv.stop()


def test_server__best_candidate_wins_in_any_order():
    """A symtab-only executable never hides a full DWARF file."""
    symtab_only = os.path.join(TMP, "c_O2_pie.nodebug")
    subprocess.run(["objcopy", "--strip-debug", fx("c_O2_pie"), symtab_only], check=True)
    b = build_id(fx("c_O2_pie"))
    check(build_id(symtab_only) == b, "objcopy changed the build ID")
    for order in ((symtab_only, fx("c_O2_pie")), (fx("c_O2_pie"), symtab_only)):
        srv = Server()
        for path in order:
            check(srv.upload(path, b, "executable")[0] == 201, "upload " + path)
        _, body, _ = srv.get("/buildid/%s/debuginfo" % b)
        check(body == open(fx("c_O2_pie"), "rb").read(), "DWARF file hidden by symtab-only")
        lst = srv.listing(b)
        check(len(lst["artifacts"]) == 2, "both candidates kept")
        check(lst["best"]["symbols"] == sha256(fx("c_O2_pie")), "best for symbols")
        srv.stop()


def test_server__debuginfod_error_answers():
    srv = Server()
    b = upload_split_pair(srv)
    cases = [
        ("/buildid/%s/debuginfo" % b.upper(), 503), ("/buildid/abc/debuginfo", 503),
        ("/buildid/zz/debuginfo", 503), ("/buildid//debuginfo", 503),
        ("/buildid/%s/debuginfo" % ("ab" * 20), 404), ("/buildid/%s" % b, 503),
        ("/buildid/%s/symbols" % b, 503), ("/buildid/%s/source" % b, 503),
        ("/buildid/%s/debuginfo" % ("ab" * 5000), 404), ("/nope", 404),
        ("/no/such/path", 404), ("/symbolz", 404),
        ("/buildid/%s/source/etc/passwd" % b, 404),
        ("/buildid/%s/source/ember/fixtures/src/../../../etc/passwd" % b, 404),
        ("/buildid/%s/section/.no_such_section" % b, 404),
        ("/buildid/%s/debuginfo/trailing?x=1" % b, 200),
    ]
    for path, want in cases:
        got = srv.get(path)[0]
        check(got == want, "%s: %d, want %d" % (path[:90], got, want))
    check(srv.request("POST", "/buildid/%s/debuginfo" % b, b"")[0] == 400, "POST")
    gz = build_id(fx("c_gz"))
    check(srv.upload(fx("c_gz"), gz, "executable")[0] == 201, "upload c_gz")
    check(srv.get("/buildid/%s/section/.debug_info" % gz)[0] == 503,
          "compressed section must be 503 (client falls back)")
    srv.stop()


def test_server__http_extensions():
    srv = Server()
    b = upload_split_pair(srv)
    data = open(fx("c_stripped.debug"), "rb").read()
    path = "/buildid/%s/debuginfo" % b
    s, body, h = srv.request("HEAD", path)
    check(s == 200 and body == b"" and h["content-length"] == str(len(data)), "HEAD")
    etag = h["etag"]
    check(srv.get(path, {"If-None-Match": etag})[0] == 304, "304 on matching ETag")
    check(srv.get(path, {"If-None-Match": '"other"'})[0] == 200, "200 on other ETag")
    s, body, h = srv.get(path, {"Range": "bytes=100-199"})
    check(s == 206 and body == data[100:200], "Range 100-199")
    check(h["content-range"] == "bytes 100-199/%d" % len(data), "Content-Range")
    s, body, _ = srv.get(path, {"Range": "bytes=-10"})
    check(s == 206 and body == data[-10:], "suffix range")
    check(srv.get(path, {"Range": "bytes=%d-" % len(data)})[0] == 416, "416")
    s, body, _ = srv.get(path, {"X-DEBUGINFOD-MAXSIZE": "10"})
    check(s == 406 and b"max size=10" in body, "406 over MAXSIZE")
    check(srv.get(path, {"X-DEBUGINFOD-MAXSIZE": str(len(data))})[0] == 200, "at MAXSIZE")
    srv.stop()


# ---- faults -----------------------------------------------------------------------


def raw_put(srv, path, headers, body_parts, close_after=False):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=20)
    req = "PUT %s HTTP/1.1\r\nHost: x\r\n" % path
    req += "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
    s.sendall(req.encode())
    for part in body_parts:
        try:
            s.sendall(part)
        except OSError:
            break
    if close_after:
        s.close()
        return None
    s.settimeout(20)
    reply = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
            if b"\r\n\r\n" in reply:
                break
    except OSError:
        pass
    s.close()
    return reply


def test_server__oversized_upload():
    srv = Server(args=["--max-upload-mb", "1"])
    big = os.path.join(TMP, "big")
    shutil.copy(fx("c_O2_pie"), big)
    with open(big, "ab") as f:
        f.write(os.urandom(2 << 20))
    b = build_id(fx("c_O2_pie"))
    data = open(big, "rb").read()
    auth = {"Authorization": "Bearer " + srv.token, "Content-Length": str(len(data))}
    reply = raw_put(srv, "/api/v1/artifacts/%s/debuginfo" % b, auth, [data])
    check(reply.startswith(b"HTTP/1.1 413"), "declared oversize: %r" % reply[:60])
    check(b"limit" in reply or b"\r\n\r\n" in reply, "no reason given")
    # Chunked: no declared length, the cap is hit mid-stream.
    auth["Transfer-Encoding"] = "chunked"
    del auth["Content-Length"]
    chunk = os.urandom(256 << 10)
    parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 8 + [b"0\r\n\r\n"]
    reply = raw_put(srv, "/api/v1/artifacts/%s/debuginfo" % b, auth, parts)
    check(reply == b"" or reply.startswith(b"HTTP/1.1 413"), "chunked oversize: %r" % reply[:40])
    wait_for(lambda: srv.tmp_files() == [], "the partial upload to be removed")
    check(srv.listing(b)["artifacts"] == [], "oversized upload stored")
    check(srv.metric('ember_uploads_total{result="rejected",reason="too_large"}') == 2, "metric")
    srv.stop()


def test_server__client_disconnect_mid_upload():
    srv = Server()
    b = build_id(fx("cxx_O2"))
    data = open(fx("cxx_O2"), "rb").read()
    hdrs = {"Authorization": "Bearer " + srv.token, "Content-Length": str(len(data))}
    sock = socket.create_connection(("127.0.0.1", srv.port))
    sock.sendall(("PUT /api/v1/artifacts/%s/debuginfo HTTP/1.1\r\nHost: x\r\n" % b +
                  "".join("%s: %s\r\n" % kv for kv in hdrs.items()) + "\r\n").encode())
    sock.sendall(data[: len(data) // 2])
    wait_for(lambda: srv.tmp_files() != [], "the upload to start")
    sock.close()
    wait_for(lambda: srv.metric('ember_uploads_total{result="rejected",reason="aborted"}') == 1,
               "the aborted upload to be counted")
    check(srv.tmp_files() == [], "partial upload left in tmp/")
    check(srv.listing(b)["artifacts"] == [], "partial upload stored")
    check(srv.upload(fx("cxx_O2"), b, "debuginfo")[0] == 201, "server unusable afterwards")
    srv.stop()


def test_server__kill9_mid_upload_then_restart():
    srv = Server()
    b = upload_split_pair(srv)
    other = build_id(fx("cxx_O2"))
    data = open(fx("cxx_O2"), "rb").read()
    hdrs = {"Authorization": "Bearer " + srv.token, "Content-Length": str(len(data))}
    sock = socket.create_connection(("127.0.0.1", srv.port))
    sock.sendall(("PUT /api/v1/artifacts/%s/debuginfo HTTP/1.1\r\nHost: x\r\n" % other +
                  "".join("%s: %s\r\n" % kv for kv in hdrs.items()) + "\r\n").encode())
    sock.sendall(data[: len(data) // 2])
    wait_for(lambda: srv.tmp_files() != [], "the upload to start")
    srv.stop(signal.SIGKILL)
    sock.close()
    srv = Server(data=srv.data)
    check(srv.tmp_files() == [], "restart left the partial blob")
    check(srv.listing(other)["artifacts"] == [], "partial upload visible after restart")
    s, body, _ = srv.get("/buildid/%s/debuginfo" % b)
    check(s == 200 and body == open(fx("c_stripped.debug"), "rb").read(),
          "acknowledged upload lost after kill -9")
    check(srv.metric("ember_store_artifacts") == 2, "artifact count after restart")
    srv.stop()


def test_server__concurrent_uploads_same_build_id():
    srv = Server()
    b = build_id(fx("c_stripped"))
    results = []

    def put(path, kind):
        results.append(srv.upload(path, b, kind)[0])

    threads = [threading.Thread(target=put, args=(p, k)) for p, k in
               [(fx("c_stripped"), "executable"), (fx("c_stripped.debug"), "debuginfo")] * 6]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(sorted(set(results)) in ([200, 201], [201]), "statuses %r" % results)
    check(results.count(201) == 2, "exactly one 201 per content: %r" % results)
    lst = srv.listing(b)
    check(len(lst["artifacts"]) == 2, "candidates: %d" % len(lst["artifacts"]))
    check(lst["best"]["debuginfo"] == sha256(fx("c_stripped.debug")), "best debuginfo")
    check(srv.tmp_files() == [], "temporary files left")
    srv.stop()


def test_server__disk_full_gives_507():
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 << 10, 200 << 10))

    srv = Server(preexec=limit)
    b = build_id(fx("cxx_O2"))  # 570 KB: more than the 200 KB the server may write
    s, body, _ = srv.upload(fx("cxx_O2"), b, "debuginfo")
    check(s == 507, "disk full: %d %r" % (s, body))
    check(srv.listing(b)["artifacts"] == [], "partial file stored")
    check(srv.tmp_files() == [], "temporary files left")
    small = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), small, "executable")[0] == 201, "small upload after")
    srv.stop()


# ---- real clients -----------------------------------------------------------------


def section_bytes(path, name):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == name:
            off, size = int(f[4], 16), int(f[5], 16)
            return open(path, "rb").read()[off:off + size]
    raise AssertionError("no section " + name)


def lone_copy(path):
    """A copy with no debug file beside it, so only debuginfod can help."""
    d = tempfile.mkdtemp(dir=TMP, prefix="lone.")
    shutil.copy(path, d)
    return os.path.join(d, os.path.basename(path))


def test_server__debuginfod_find_all_kinds():
    need("debuginfod-find")
    srv = Server()
    r = ember_upload(srv, *fixture_sources_args(), fx("c_stripped"))
    check(r.returncode == 0, "ember upload failed: " + r.stderr)
    b = build_id(fx("c_stripped"))
    env = client_env(srv.url)

    def find(*args):
        p = subprocess.run(["debuginfod-find"] + list(args), capture_output=True, text=True,
                           env=env, timeout=60)
        check(p.returncode == 0, "debuginfod-find %s: %s" % (" ".join(args), p.stderr))
        return p.stdout.strip()

    check(open(find("debuginfo", b), "rb").read() == open(fx("c_stripped.debug"), "rb").read(),
          "debuginfo")
    check(open(find("executable", b), "rb").read() == open(fx("c_stripped"), "rb").read(),
          "executable")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../fixtures/elf/src/prog.c")
    check(open(find("source", b, "/ember/fixtures/src/prog.c"), "rb").read() ==
          open(src, "rb").read(), "source")
    check(open(find("source", b, "/ember/fixtures/src/./x/../prog.c"), "rb").read() ==
          open(src, "rb").read(), "source, uncanonical path")
    sec = find("section", b, ".debug_line")
    check(open(sec, "rb").read() == section_bytes(fx("c_stripped.debug"), ".debug_line"),
          "section")
    srv.stop()


def test_server__gdb_loads_symbols_of_stripped_binary():
    need("gdb")
    srv = Server()
    upload_split_pair(srv)
    cmd = ["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled on",
           "-ex", "info functions ^main$", "-ex", "info line main", lone_copy(fx("c_stripped"))]
    with_srv = subprocess.run(cmd, capture_output=True, text=True, env=client_env(srv.url),
                              timeout=120).stdout
    control = subprocess.run(cmd, capture_output=True, text=True,
                             env=client_env("http://127.0.0.1:9"), timeout=120).stdout
    check(re.search(r"^File (/ember/fixtures/src/)?prog\.c:\n\d+:\s+int main\(", with_srv, re.M),
          "gdb did not load symbols via debuginfod:\n" + with_srv)
    check("prog.c" not in control, "control run already has symbols: test proves nothing")
    srv.stop()


def main_addr(elf=None):
    out = subprocess.run(["readelf", "-sW", elf or fx("c_stripped.debug")], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[7] == "main":
            return f[1]
    raise AssertionError("no main in the debug file")


def test_server__eu_addr2line_via_debuginfod():
    need("eu-addr2line")
    srv = Server()
    upload_split_pair(srv)
    addr = "0x" + main_addr()
    cmd = ["eu-addr2line", "-f", "-e", lone_copy(fx("c_stripped")), addr]
    out = subprocess.run(cmd, capture_output=True, text=True, env=client_env(srv.url),
                         timeout=60).stdout
    control = subprocess.run(cmd, capture_output=True, text=True,
                             env=client_env("http://127.0.0.1:9"), timeout=60).stdout
    check(re.search(r"^main\n/ember/fixtures/src/prog\.c:\d+", out, re.M),
          "eu-addr2line: %r" % out)
    check("prog.c" not in control, "control already resolves: %r" % control)
    srv.stop()


SLEEPER = r"""
#include <unistd.h>
__attribute__((noinline)) void ember_wait_here(void) { for (;;) pause(); }
int main(void) { ember_wait_here(); return 0; }
"""


def test_server__eu_stack_via_debuginfod():
    need("eu-stack")
    need("gcc")
    d = tempfile.mkdtemp(dir=TMP)
    src, exe, dbg = (os.path.join(d, n) for n in ("sleeper.c", "sleeper", "sleeper.debug"))
    with open(src, "w") as f:
        f.write(SLEEPER)
    subprocess.run(["gcc", "-g", "-O1", "-Wl,--build-id", "-o", exe, src], check=True)
    subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
    subprocess.run(["objcopy", "--strip-all", exe], check=True)
    srv = Server()
    b = build_id(exe)
    check(srv.upload(exe, b, "executable")[0] == 201, "upload exe")
    check(srv.upload(dbg, b, "debuginfo")[0] == 201, "upload debug")
    os.unlink(dbg)
    proc = subprocess.Popen([exe])
    try:
        time.sleep(0.2)
        cmd = ["eu-stack", "-s", "-p", str(proc.pid)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=client_env(srv.url),
                             timeout=60)
        control = subprocess.run(cmd, capture_output=True, text=True,
                                 env=client_env("http://127.0.0.1:9"), timeout=60)
    finally:
        proc.kill()
        proc.wait()
    if "ptrace" in out.stderr and "ember_wait_here" not in out.stdout:
        raise Skip("eu-stack cannot attach here: " + out.stderr.strip())
    check(re.search(r"ember_wait_here\n\s+%s:\d+" % re.escape(src), out.stdout),
          "eu-stack did not name the frame:\n" + out.stdout + out.stderr)
    check("ember_wait_here" not in control.stdout, "control run already names it")
    srv.stop()


# ---- ember upload -------------------------------------------------------------------


def test_server__ember_upload_is_idempotent():
    srv = Server()
    files = [fx("c_stripped"), fx("c_O2_pie"), fx("cxx_O2")]
    r = ember_upload(srv, *fixture_sources_args(), *files)
    check(r.returncode == 0, "first run: " + r.stderr)
    check("c_stripped.debug: debuginfo" in r.stdout, "separate debug file not sent:\n" + r.stdout)
    accepted = srv.metric('ember_uploads_total{result="accepted"}')
    check(accepted == 7, "accepted %r, want 4 files + 3 source tars" % accepted)
    r = ember_upload(srv, "--debug-file-directory", fx("debug-root"), *files)
    check(r.returncode == 0 and r.stdout.count("already stored") == 4, "second run:\n" + r.stdout)
    check(srv.metric('ember_uploads_total{result="accepted"}') == accepted, "uploaded twice")
    check(srv.metric('ember_http_responses_total{endpoint="upload",code="201"}') == accepted,
          "second run sent bodies")
    srv.stop()


def test_server__ember_upload_sources_again_says_already_stored():
    """A second `ember upload --sources` prints what the server said of the
    source files: already stored, counted apart from those it took."""
    srv = Server()
    r = ember_upload(srv, *fixture_sources_args(), fx("c_O2_pie"))
    first = re.search(r"c_O2_pie: sources \w+: (\d+) files uploaded, 0 already stored, "
                      r"0 not named by its DWARF \(\d+ bytes sent\)", r.stdout)
    check(r.returncode == 0 and first and int(first.group(1)) > 0, "first run:\n" + r.stdout)
    r = ember_upload(srv, *fixture_sources_args(), fx("c_O2_pie"))
    check(r.returncode == 0 and re.search(r"c_O2_pie: sources \w+: 0 files uploaded, %s already "
                                          r"stored, 0 not named" % first.group(1), r.stdout) and
          "executable" in r.stdout and "uploaded (" not in r.stdout, "second run:\n" + r.stdout)
    srv.stop()


def test_server__ember_upload_fails_with_reason():
    srv = Server()
    env = dict(os.environ, EMBER_SERVER=srv.url, EMBER_TOKEN="wrong")
    r = subprocess.run([EMBER, "upload", fx("c_O2_pie")], capture_output=True, text=True,
                       env=env, timeout=60)
    check(r.returncode == 1 and "bearer token" in r.stderr, "bad token: %r" % r.stderr)
    r = ember_upload(srv, "/etc/passwd")
    check(r.returncode == 1 and "not an ELF file" in r.stderr, "non-ELF: %r" % r.stderr)
    srv.stop()
    env["EMBER_SERVER"] = srv.url
    r = subprocess.run([EMBER, "upload", fx("c_O2_pie")], capture_output=True, text=True,
                       env=env, timeout=60)
    check(r.returncode == 1 and "cannot reach" in r.stderr, "server down: %r" % r.stderr)


def test_server__sources_only_named_paths():
    srv = Server()
    b = build_id(fx("c_O2_pie"))
    tar = os.path.join(TMP, "src.tar")
    src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../fixtures/elf/src")
    subprocess.run(["tar", "-C", src_dir, "--transform", "s,^,ember/fixtures/src/,",
                    "-cf", tar, "prog.c"], check=True)
    s, body, _ = srv.upload(tar, b, "sources")
    check(s == 409 and b"upload it before" in body, "sources before debuginfo: %d" % s)
    check(srv.upload(fx("c_O2_pie"), b, "executable")[0] == 201, "upload")
    evil = os.path.join(TMP, "evil.tar")
    subprocess.run(["tar", "-C", "/", "-cf", evil, "etc/hostname"], check=True)
    s, body, _ = srv.upload(evil, b, "sources")
    check(s == 200 and json.loads(body)["skipped"] == 1, "unnamed path: %r" % body)
    check(srv.get("/buildid/%s/source/etc/hostname" % b)[0] == 404, "unnamed path served")
    s, body, _ = srv.upload(tar, b, "sources")
    check(s == 201 and json.loads(body)["stored"] == 1, "named source: %r" % body)
    s, body, _ = srv.get("/buildid/%s/source/ember/fixtures/src/prog.c" % b)
    check(s == 200 and body == open(os.path.join(src_dir, "prog.c"), "rb").read(), "source")
    s, body, _ = srv.upload(fx("c_O2_pie"), b, "sources")
    check(s == 422 and b"archive" in body, "not a tar: %d %r" % (s, body))
    srv.stop()


# ---- upstream -------------------------------------------------------------------------


class Upstream:
    """elfutils' debuginfod serving a directory, on a free port."""

    def __init__(self, files):
        self.dir = tempfile.mkdtemp(dir=TMP, prefix="upstream.")
        for f in files:
            shutil.copy(f, self.dir)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = open(os.path.join(TMP, "debuginfod.log"), "wb")
        self.proc = subprocess.Popen(
            [need("debuginfod"), "-F", "-t0", "-g0", "-p", str(self.port),
             "-d", os.path.join(self.dir, "db.sqlite"), self.dir],
            stdout=self.log, stderr=self.log)
        self.url = "http://127.0.0.1:%d" % self.port

    def wait_serving(self, build):
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (self.url, build)) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            check(time.time() < deadline, "upstream debuginfod never served " + build)
            time.sleep(0.2)

    def requests(self):
        with urllib.request.urlopen(self.url + "/metrics") as r:
            text = r.read().decode()
        return sum(float(l.split()[-1]) for l in text.splitlines()
                   if l.startswith("http_responses_total{"))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def test_server__upstream_federation():
    up = Upstream([fx("c_stripped"), fx("c_stripped.debug"), fx("cxx_O2")])
    try:
        b, cxx = build_id(fx("c_stripped")), build_id(fx("cxx_O2"))
        up.wait_serving(b)
        up.wait_serving(cxx)
        srv = Server(args=["--upstream", up.url, "--upstream-miss-ttl", "600"])
        results = []

        def get():
            results.append(srv.get("/buildid/%s/debuginfo" % cxx))

        threads = [threading.Thread(target=get) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cxx_bytes = open(fx("cxx_O2"), "rb").read()
        check(all(r[0] == 200 and r[1] == cxx_bytes for r in results), "proxied bytes")
        check(srv.metric('ember_upstream_requests_total{result="hit"}') == 1,
              "8 concurrent requests made %r upstream fetches" %
              srv.metric('ember_upstream_requests_total{result="hit"}'))
        s, body, _ = srv.get("/buildid/%s/debuginfo" % b)
        check(s == 200 and body == open(fx("c_stripped.debug"), "rb").read(), "split debuginfo")
        unknown = "ab" * 20
        before = up.requests()
        check(srv.get("/buildid/%s/debuginfo" % unknown)[0] == 404, "unknown id")
        check(srv.get("/buildid/%s/debuginfo" % unknown)[0] == 404, "unknown id again")
        check(up.requests() - before == 1, "miss not cached: upstream asked %d times" %
              (up.requests() - before))
        up.stop()
        s, body, _ = srv.get("/buildid/%s/debuginfo" % cxx)
        check(s == 200 and body == cxx_bytes, "not served locally once fetched")
        check(srv.listing(cxx)["artifacts"][0]["sha256"] == sha256(fx("cxx_O2")), "stored")
        srv.stop()
    finally:
        if up.proc.poll() is None:
            up.stop()


def with_build_id(src, dst, n):
    """A copy of ELF src whose GNU build ID is 20 bytes derived from n."""
    note = os.path.join(TMP, "note.%d" % n)
    bid = hashlib.sha1(b"ember-quota-%d" % n).digest()
    with open(note, "wb") as f:
        f.write((4).to_bytes(4, "little") + (20).to_bytes(4, "little") +
                (3).to_bytes(4, "little") + b"GNU\0" + bid)
    subprocess.run(["objcopy", "--update-section", ".note.gnu.build-id=" + note, src, dst],
                   check=True)
    check(build_id(dst) == bid.hex(), "build ID of the copy")
    return bid.hex()


def test_server__upstream_quota_evicts_oldest_fetched():
    files, ids = [], []
    for n in range(5):
        dst = os.path.join(TMP, "quota%d" % n)
        ids.append(with_build_id(fx("cxx_O2"), dst, n))
        files.append(dst)
    size = os.path.getsize(files[0])
    up = Upstream(files[1:])
    srv = Server(args=["--upstream", up.url, "--upstream-quota-mb", "2",
                       "--upstream-miss-ttl", "1"])
    check(srv.upload(files[0], ids[0], "executable")[0] == 201, "upload")  # never evicted
    for b in ids[1:]:
        up.wait_serving(b)
    for b in ids[1:]:  # 4 x 572 KB fetched, one second apart: past 2 MiB at the 4th
        check(srv.get("/buildid/%s/executable" % b)[0] == 200, "fetch " + b)
        time.sleep(1.1)
    listed = [len(srv.listing(b)["artifacts"]) for b in ids]
    check(listed == [1, 0, 1, 1, 1], "after the quota: %r" % listed)
    check(srv.metric("ember_store_evictions_total") == 1, "evictions")
    check(srv.metric("ember_store_upstream_bytes") == 3 * size, "upstream bytes %r"
          % srv.metric("ember_store_upstream_bytes"))
    blob = os.path.join(srv.data, "blobs", sha256(files[1])[:2], sha256(files[1]))
    check(not os.path.exists(blob), "the evicted file is still on disk")
    # Asked again, it is fetched again (and the next oldest goes).
    check(srv.get("/buildid/%s/executable" % ids[1])[0] == 200, "refetch")
    listed = [len(srv.listing(b)["artifacts"]) for b in ids]
    check(listed == [1, 1, 0, 1, 1], "after the refetch: %r" % listed)
    srv.stop()
    up.stop()


class RawUpstream:
    """An HTTP server sending files by build ID without their size
    (chunked), as a hostile or careless upstream may: libdebuginfod's
    DEBUGINFOD_MAXSIZE cannot refuse them before they arrive."""

    def __init__(self, files):
        import http.server
        by_id = {build_id(f): open(f, "rb").read() for f in files}

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                m = re.fullmatch(r"/buildid/([0-9a-f]+)/(executable|debuginfo)", self.path)
                data = by_id.get(m.group(1)) if m else None
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(0, len(data), 65536):
                    part = data[i:i + 65536]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_server__upstream_max_size():
    """--upstream-max-size-mb: a bigger file is an upstream failure (503)
    and nothing of it is kept, whether upstream says its size (elfutils'
    debuginfod: refused by DEBUGINFOD_MAXSIZE) or not (chunked: checked
    once it arrived); files under the limit are fetched from both."""
    pad = os.path.join(TMP, "pad")
    with open(pad, "wb") as f:
        f.write(os.urandom(2 << 20))
    padded = os.path.join(TMP, "padded")
    subprocess.run(["objcopy", "--add-section", ".ember_pad=" + pad, fx("cxx_O2"), padded],
                   check=True)
    small, big = os.path.join(TMP, "small_up"), os.path.join(TMP, "big_up")
    small2, big2 = os.path.join(TMP, "small_raw"), os.path.join(TMP, "big_raw")
    ids = [with_build_id(fx("cxx_O2"), small, 200), with_build_id(padded, big, 201),
           with_build_id(fx("cxx_O2"), small2, 202), with_build_id(padded, big2, 203)]
    check(os.path.getsize(small) < 1 << 20 < (2 << 20) < os.path.getsize(big), "sizes")
    up, raw = Upstream([small, big]), RawUpstream([small2, big2])
    for b in ids[:2]:
        up.wait_serving(b)
    for upstream, files, bids in ((up, (small, big), ids[:2]), (raw, (small2, big2), ids[2:])):
        srv = Server(args=["--upstream", upstream.url, "--upstream-max-size-mb", "1"])
        for b, want in zip(bids, (200, 503)):
            st, body, h = srv.get("/buildid/%s/executable" % b)
            check(st == want, "%s: %d %r" % (b, st, body[:100]))
            check(len(srv.listing(b)["artifacts"]) == (1 if want == 200 else 0),
                  "%s: listing %r" % (b, srv.listing(b)))
        check(srv.metric("ember_store_upstream_bytes") == os.path.getsize(files[0]),
              "upstream bytes %r" % srv.metric("ember_store_upstream_bytes"))
        check(srv.tmp_files() == [], "temporary files left")
        srv.stop()
    check("upstream sent %d bytes for '%s', more than the limit of 1048576"
          % (os.path.getsize(big2), ids[3]) in srv.stderr(), "log: " + srv.stderr()[-600:])
    up.stop()
    raw.stop()


def test_server__failed_upstream_is_503_not_404():
    """An upstream that cannot be reached is a failure, not a miss: 503
    with Retry-After (as elfutils' server answers a failed federation),
    remembered as such within the miss TTL, counted as an upstream error;
    only a real miss is 404."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused
    srv = Server(args=["--upstream", "http://127.0.0.1:%d" % port])
    b = "cd" * 20
    for attempt in ("fetched", "remembered"):
        s, body, h = srv.get("/buildid/%s/debuginfo" % b)
        check(s == 503 and h.get("retry-after") and b"upstream unavailable" in body,
              "%s: %d %r %r" % (attempt, s, h.get("retry-after"), body))
    check(srv.metric('ember_upstream_requests_total{result="error"}') == 1, "error count")
    check(srv.metric('ember_upstream_requests_total{result="negative_cached"}') == 1,
          "the failure was not remembered")
    check(srv.metric('ember_upstream_requests_total{result="miss"}') == 0, "counted as a miss")
    check(srv.metric('ember_store_errors_total{endpoint="debuginfo"}') == 0,
          "an upstream failure counted as the store's")
    srv.stop()


def test_server__info_log_says_what_happened():
    """At the default level (info) the server logs its start (data
    directory, where the upstream servers came from), the store's open,
    each upload accepted or refused with its reason, and each upstream
    fetch; --log-level=warn keeps all of that quiet."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    srv = Server(env={"DEBUGINFOD_URLS": "http://127.0.0.1:%d" % port})
    b = build_id(fx("c_O2_pie"))
    check(srv.upload(fx("c_O2_pie"), b, "debuginfo")[0] == 201, "upload")
    check(srv.upload(fx("c_O2_pie"), b, "debuginfo")[0] in (200, 201), "second upload")
    with tempfile.NamedTemporaryFile("w", dir=TMP) as f:
        f.write("not an ELF\n")
        f.flush()
        s = srv.upload(f.name, "ab" * 20, "debuginfo")[0]
    check(s == 415, "a text file: %d" % s)
    check(srv.get("/buildid/%s/executable" % ("cd" * 20))[0] == 503, "upstream down")
    srv.stop()
    log = srv.stderr()
    for want in ("info: ember serve: data directory '%s'" % srv.data,
                 "upstream servers http://127.0.0.1:%d (from the environment's "
                 "DEBUGINFOD_URLS)" % port,
                 "info: ember serve: store opened",
                 "upload of '%s' (debuginfo) accepted (201)" % b,
                 "upload of '%s' (debuginfo) already stored" % b,
                 "upload of '%s' (debuginfo) refused (415): " % ("ab" * 20),
                 "upstream fetch of '%s' (executable) failed: " % ("cd" * 20)):
        check(want in log, "%r not logged in:\n%s" % (want, log))
    quiet = Server(args=["--log-level=warn"])
    check(quiet.upload(fx("c_O2_pie"), b, "debuginfo")[0] == 201, "upload at warn")
    quiet.stop()
    check("info:" not in quiet.stderr(), "info logged at warn: " + quiet.stderr())


def test_server__slow_upstream_does_not_stall():
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)  # accepts connections, never answers
    srv = Server(args=["--upstream", "http://127.0.0.1:%d" % hang.getsockname()[1]])
    b = upload_split_pair(srv)
    slow = []
    t = threading.Thread(target=lambda: slow.append(srv.get("/buildid/%s/debuginfo" % ("cd" * 20))))
    t.start()
    time.sleep(0.3)
    t0 = time.time()
    for _ in range(20):
        check(srv.get("/buildid/%s/debuginfo" % b)[0] == 200, "local file")
    elapsed = time.time() - t0
    check(elapsed < 5, "local requests stalled behind the upstream: %.1f s" % elapsed)
    check(t.is_alive(), "the upstream request should still be waiting")
    srv.stop()
    hang.close()
    t.join(timeout=30)


# ---- unwind tables (issue 5's endpoint) ----------------------------------------------


def test_server__unwind_table_compiled_once_and_cached():
    srv = Server()
    b = build_id(fx("c_O2_pie"))
    s, body, _ = srv.get("/api/v1/unwind/" + b)
    check(s == 404 and b"no executable" in body, "nothing stored: %d %r" % (s, body))
    check(srv.upload(fx("c_O2_pie"), b, "executable")[0] == 201, "upload")
    s, table, h = srv.get("/api/v1/unwind/" + b)
    check(s == 200 and table[:8] == b"EMBUNWND", "unwind table: %d %r" % (s, table[:16]))
    check(h["etag"] == '"%s"' % hashlib.sha256(table).hexdigest(), "ETag is the sha256")
    local = os.path.join(TMP, "local.unwind")
    subprocess.run([EMBER, "unwind", "compile", fx("c_O2_pie"), "-o", local], check=True)
    check(open(local, "rb").read() == table, "served table differs from `ember unwind compile`")
    check(srv.get("/api/v1/unwind/" + b, {"If-None-Match": h["etag"]})[0] == 304, "304")
    s, again, _ = srv.get("/api/v1/unwind/" + b)
    check(again == table, "second answer differs")
    blobs = [f for _, _, fs in os.walk(os.path.join(srv.data, "blobs")) for f in fs]
    derived = [f for _, _, fs in os.walk(os.path.join(srv.data, "derived")) for f in fs]
    check(blobs == [sha256(fx("c_O2_pie"))] and derived == [hashlib.sha256(table).hexdigest()],
          "the table is stored once, apart from the executable: %r %r" % (blobs, derived))
    dbg_only = build_id(fx("c_stripped"))
    check(srv.upload(fx("c_stripped.debug"), dbg_only, "debuginfo")[0] == 201, "upload debug")
    s, body, _ = srv.get("/api/v1/unwind/" + dbg_only)
    check(s == 404 and b"cannot compile" in body, "no CFI: %d %r" % (s, body))
    check(srv.get("/api/v1/unwind/XYZ")[0] == 503, "bad build id")
    srv.stop()


# ---- symbolization API (issue 4) ---------------------------------------------------


def section_offset(path, name):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == name:
            return int(f[4], 16)
    raise AssertionError("no section " + name)


def test_server__unwind_rejection_names_no_server_path():
    srv = Server()
    bad = os.path.join(TMP, "bad_cfi")
    data = bytearray(open(fx("c_O2_pie"), "rb").read())
    off = section_offset(fx("c_O2_pie"), ".eh_frame")
    data[off:off + 4] = (0x7ffffff0).to_bytes(4, "little")  # a CIE past the section end
    open(bad, "wb").write(data)
    b = build_id(bad)
    check(srv.upload(bad, b, "executable")[0] == 201, "upload")
    st, body, _ = srv.get("/api/v1/unwind/" + b)
    check(st == 422 and b"eh_frame" in body, "unwind: %d %r" % (st, body))
    for path in (srv.data, os.path.realpath(srv.data), TMP):
        check(path.encode() not in body, "the answer names %s: %r" % (path, body))
    # The same inputs are not compiled again: the rejection is remembered.
    st2, body2, _ = srv.get("/api/v1/unwind/" + b)
    check((st2, body2) == (st, body), "again: %d %r" % (st2, body2))
    check(srv.metric("ember_unwind_failures_cached_total") == 1, "not remembered")
    srv.stop()


def test_server__failed_index_build_remembered():
    need("gcc")
    src, exe = os.path.join(TMP, "nosym.c"), os.path.join(TMP, "nosym")
    with open(src, "w") as f:
        f.write("void _start(void) { for (;;) ; }\n")
    subprocess.run(["gcc", "-O1", "-nostdlib", "-static", "-Wl,--build-id", "-o", exe, src],
                   check=True)
    subprocess.run(["strip", "--strip-all", exe], check=True)  # no symbols of any kind
    srv = Server()
    b = build_id(exe)
    check(srv.upload(exe, b, "executable")[0] == 201, "upload")
    for i in range(3):
        st, body = symbolize(srv, [{"build_id": b, "addresses": ["0x401000"]}])
        check(st == 200, "symbolize: %d %r" % (st, body))
        err = json.loads(body)["modules"][0]["results"][0]["error"]
        check(err == "no_debuginfo", "reason %r" % err)
    m = 'ember_symbol_cache_events_total{event="%s"}'
    check(srv.metric(m % "build_failed") == 1, "built %r times" % srv.metric(m % "build_failed"))
    check(srv.metric(m % "failure_cached") == 2, "remembered %r" % srv.metric(m % "failure_cached"))
    srv.stop()


def test_server__upload_name_escaped():
    srv = Server()
    b = build_id(fx("c_stripped"))
    with open(fx("c_stripped"), "rb") as f:
        body = f.read()
    hdrs = {"Authorization": "Bearer " + srv.token}
    st, _, _ = srv.request("PUT", "/api/v1/artifacts/%s/executable?name=%%FFbin%%0D%%0Ax%%C3%%A9"
                           % b, body, hdrs)
    check(st == 201, "upload: %d" % st)
    listing = srv.listing(b)  # valid JSON whatever the name was
    check(listing["artifacts"][0]["name"] == "%FFbin%0D%0Ax\u00e9", "name %r"
          % listing["artifacts"][0]["name"])
    st, _, h = srv.get("/buildid/%s/executable" % b)
    check(st == 200 and h["x-debuginfod-file"] == "%FFbin%0D%0Ax\u00c3\u00a9",
          "header %r" % h.get("x-debuginfod-file"))
    r = ember_upload(srv, fx("c_stripped"))  # lists first: the listing must parse
    check(r.returncode == 0, "ember upload: %s" % r.stderr[-300:])
    srv.stop()


def symbolize(srv, modules, **options):
    body = json.dumps({"modules": modules, "options": options} if options else
                      {"modules": modules}).encode()
    s, out, _ = srv.request("POST", "/api/v1/symbolize", body,
                            {"Content-Type": "application/json"})
    return s, out


def func_addrs(elf, n=40):
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True).stdout
    addrs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
            v, size = int(f[1], 16), int(f[2], 0)
            addrs += [v, v + size // 2]
    return sorted(set(addrs))[:n]


def test_server__symbolize_json_matches_llvm_symbolizer():
    llvm = packages.which("llvm-symbolizer", "llvm-symbolizer-14")
    if not llvm:
        raise Skip(packages.missing("llvm-symbolizer"))
    srv = Server()
    for name in ("c_O2_pie", "cxx_O2"):
        path = fx(name)
        b = build_id(path)
        check(srv.upload(path, b, "executable")[0] == 201, "upload " + name)
        addrs = func_addrs(path)
        s, out = symbolize(srv, [{"build_id": b, "addresses": ["0x%x" % a for a in addrs]}])
        check(s == 200, "status %d: %r" % (s, out[:200]))
        mod = json.loads(out)["modules"][0]
        # Raw names: the demanglers differ in spelling (lambdas, clone
        # suffixes; docs/symbolizer-correctness.md), the linkage names not.
        theirs = subprocess.run([llvm, "--output-style=JSON", "--inlines", "--no-demangle",
                                 "-e", path] +
                                ["0x%x" % a for a in addrs], capture_output=True, text=True)
        want = json.loads(theirs.stdout)
        check(len(mod["results"]) == len(want) == len(addrs), "result count")
        for got, exp in zip(mod["results"], want):
            lf = [(f["FunctionName"], f["FileName"], f["Line"]) for f in exp["Symbol"]
                  if f["FunctionName"] != "??"]
            gf = [(f.get("linkage_name"), f.get("file", ""), f.get("line", 0))
                  for f in got["frames"]]
            check(gf == lf, "%s %s: %r != llvm %r" % (name, got["address"], gf, lf))
        check(mod["resolved"] == sum(1 for r in mod["results"] if r["error"] is None),
              "resolved count")
        frames = [f for r in mod["results"] for f in r["frames"]]
        if name == "cxx_O2":
            check(any(f["linkage_name"].startswith("_Z") and not f["function"].startswith("_Z")
                      and "(" in f["function"] for f in frames), "C++ names not demangled")
    srv.stop()


def test_server__symbolize_json_reasons_and_bad_requests():
    srv = Server()
    b = upload_split_pair(srv)
    s, out = symbolize(srv, [{"build_id": b, "addresses": ["0x1", "0x" + main_addr(None)]},
                             {"build_id": "ab" * 20, "addresses": [4096]}])
    check(s == 200, "status %d" % s)
    mods = json.loads(out)["modules"]
    check(mods[0]["results"][0]["error"] == "no_symbols_at_address", "reason for 0x1")
    check(mods[0]["results"][1]["frames"][0]["function"] == "main", "main via split debug")
    check(mods[0]["results"][1]["source"] == "dwarf", "source")
    check(mods[1]["results"][0]["error"] == "unknown_build_id", "unknown build id kept")
    check(mods[1]["unresolved"] == 1, "unresolved count")
    s, out, _ = srv.request("POST", "/api/v1/symbolize", b'{"modules": [', {})
    check(s == 400 and out, "malformed JSON: %d %r" % (s, out))
    s, out = symbolize(srv, [{"build_id": "xyz", "addresses": [1]}])
    check(s == 400 and b"modules[0]" in out, "bad build id: %d %r" % (s, out))
    reply = raw_put(srv, "/api/v1/symbolize", {"Content-Length": str(64 << 20)}, [])
    check(reply.startswith(b"HTTP/1.1 405"), "PUT: %r" % reply[:40])
    sock = socket.create_connection(("127.0.0.1", srv.port))
    sock.sendall(b"POST /api/v1/symbolize HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                 % (64 << 20))
    check(sock.recv(100).startswith(b"HTTP/1.1 413"), "oversized batch not 413")
    sock.close()
    many = {"modules": [{"build_id": b, "addresses": list(range(1100000))}]}
    s, out, _ = srv.request("POST", "/api/v1/symbolize", json.dumps(many).encode(), {})
    check(s == 413, "1.1M addresses: %d %r" % (s, out[:100]))
    srv.stop()


def test_server__symbolize_batch_order_and_repeats():
    """Batches are looked up in address order: answers must come back in
    request order, repeats and file offsets included, equal to one-address
    requests."""
    srv = Server()
    path = fx("cxx_O2")
    b = build_id(path)
    check(srv.upload(path, b, "executable")[0] == 201, "upload")
    addrs = func_addrs(path, 300)
    rng = __import__("random").Random(7)
    mixed = []
    for a in addrs:
        mixed.append("0x%x" % a)
        if rng.random() < 0.3:
            mixed.append({"addr": "0x%x" % a, "kind": "file_offset"})
    mixed += [rng.choice(mixed) for _ in range(200)] + ["0x1", "0xffffffffffff"]
    rng.shuffle(mixed)
    s, out = symbolize(srv, [{"build_id": b, "addresses": mixed * 20}])  # > one batch
    check(s == 200, "status %d" % s)
    got = json.loads(out)["modules"][0]["results"]
    check(len(got) == 20 * len(mixed), "result count")
    single = {}
    for a in mixed:
        key = json.dumps(a, sort_keys=True)
        if key not in single:
            s, one = symbolize(srv, [{"build_id": b, "addresses": [a]}])
            single[key] = json.loads(one)["modules"][0]["results"][0]
    for i, a in enumerate(mixed * 20):
        check(got[i] == single[json.dumps(a, sort_keys=True)],
              "address %d (%r): %r != %r" % (i, a, got[i], single[json.dumps(a, sort_keys=True)]))
    check(any(r["frames"] and r["frames"][0]["inlined"] for r in got), "no inlined frames")
    srv.stop()


def test_server__concurrent_first_requests_build_once():
    srv = Server()
    path = fx("cxx_O2")
    b = build_id(path)
    check(srv.upload(path, b, "executable")[0] == 201, "upload")
    addrs = ["0x%x" % a for a in func_addrs(path, 100)]
    answers, go = [], threading.Event()

    def ask():
        go.wait()
        answers.append(symbolize(srv, [{"build_id": b, "addresses": addrs}]))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    check(len(answers) == 8 and all(s == 200 for s, _ in answers), "statuses")
    check(len(set(out for _, out in answers)) == 1, "answers differ")
    check(json.loads(answers[0][1])["modules"][0]["resolved"] > 50, "resolved")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 1,
          "8 concurrent first requests made %r builds" %
          srv.metric('ember_symbol_cache_events_total{event="build"}'))
    srv.stop()


def test_server__symbol_cache_stays_in_budget():
    srv = Server(args=["--symbol-cache-mb", "2"])
    names = ["c_O2_pie", "c_dwarf4", "c_gz", "cxx_O2", "go_prog", "libfixture.so", "rust_O2"]
    paths = [fx(n) for n in names]
    for lib in ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libc.so.6"):
        if os.path.exists(lib):  # dynsym only in the store: 0.4 MB and 0.1 MB indexes
            names.append(os.path.basename(lib))
            paths.append(os.path.realpath(lib))
    for n, p in zip(names, paths):
        check(srv.upload(p, build_id(p), "executable")[0] == 201, "upload " + n)
    for rnd in range(2):
        for n, p in zip(names, paths):
            s, out = symbolize(srv, [{"build_id": build_id(p), "addresses": [4096]}])
            check(s == 200, "status")
            err = json.loads(out)["modules"][0]["results"][0]["error"]
            if n == "rust_O2":  # a 2.8 MB index: over the whole budget
                check(err == "index_over_budget", "rust_O2: %r" % err)
            else:
                check(err in (None, "no_symbols_at_address"), "%s: %r" % (n, err))
            used = srv.metric("ember_symbol_cache_bytes")
            check(0 < used <= 2 << 20, "cache holds %d bytes, budget 2 MiB" % used)
    check(srv.metric('ember_symbol_cache_events_total{event="eviction"}') > 0, "no eviction")
    check(srv.metric('ember_symbol_cache_events_total{event="over_budget"}') == 2, "refusals")
    srv.stop()


def saved_indexes(data):
    """Derived blob files of the data directory that are saved symbol indexes."""
    found = []
    for root, _, files in os.walk(os.path.join(data, "derived")):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                if fh.read(8) == b"EMBERSYM":
                    found.append(os.path.join(root, f))
    return found


def symbolize_frames(srv, b, addrs):
    s, out = symbolize(srv, [{"build_id": b, "addresses": ["0x%x" % a for a in addrs]}])
    check(s == 200, "status %d: %r" % (s, out[:200]))
    return [(r["error"], r["source"], r["frames"]) for r in json.loads(out)["modules"][0]["results"]]


def folded_addrs(elf):
    """Addresses where several function symbols start (identical code
    folding: gold's --icf=all, Rust's folded impls)."""
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True).stdout
    seen = Counter(int(f[1], 16) for f in (l.split() for l in out.splitlines())
                   if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[1], 16))
    return sorted(a for a, n in seen.items() if n > 1)


def test_server__folded_functions_named_as_offline():
    """One rule names the outermost frame where identical code folding left
    several symbols at one address (docs/symbolizer-correctness.md):
    `ember symbolize` on the unstripped binary, on the stripped one with
    its debug file, and the server holding the stripped executable and the
    debug file (built, then mapped after a restart) all give the same
    names and lines."""
    full, stripped, debug = fx("cxx_icf"), fx("cxx_icf_stripped"), fx("cxx_icf.debug")
    b = build_id(full)
    addrs = folded_addrs(full)
    check(len(addrs) >= 3, "the fixture has no folded functions: %r" % addrs)
    hexes = ["0x%x" % a for a in addrs]

    def offline(path):
        r = subprocess.run([EMBER, "symbolize", "--obj=" + path, "--output-style=JSON"] + hexes,
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, r.stderr)
        return [[(f["FunctionName"], f["FileName"], f["Line"]) for f in json.loads(l)["Symbol"]]
                for l in r.stdout.splitlines()]

    want = offline(full)
    check(offline(stripped) == want, "stripped + debug file: %r\nvs %r" % (offline(stripped), want))
    srv = Server()
    check(srv.upload(stripped, b, "executable")[0] == 201, "upload executable")
    check(srv.upload(debug, b, "debuginfo")[0] == 201, "upload debuginfo")
    for run in ("built", "mapped after a restart"):
        got = [[(f["function"], f["file"], f["line"]) for f in frames]
               for _, _, frames in symbolize_frames(srv, b, addrs)]
        check(got == want, "%s: server %r\nvs offline %r" % (run, got, want))
        remote = subprocess.run([EMBER, "symbolize", "--server", srv.url, "--build-id", b,
                                 "--output-style=JSON"] + hexes,
                                capture_output=True, text=True, timeout=60)
        check(remote.returncode == 0, remote.stderr)
        check([[(f["FunctionName"], f["FileName"], f["Line"]) for f in json.loads(l)["Symbol"]]
               for l in remote.stdout.splitlines()] == want, "%s: --server: %s" % (run, remote.stdout))
        srv.stop()
        if run == "built":
            srv = Server(data=srv.data)


def test_server__symbol_index_saved_and_mapped_after_restart():
    srv = Server()
    ids, answers = [], {}
    for name in ("c_O2_pie", "cxx_O2"):
        check(srv.upload(fx(name), build_id(fx(name)), "executable")[0] == 201, "upload")
        ids.append((build_id(fx(name)), func_addrs(fx(name), 200)))
    for b, addrs in ids:
        answers[b] = symbolize_frames(srv, b, addrs)
        check(sum(1 for e, _, _ in answers[b] if e is None) > len(addrs) // 2, "resolved")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 2, "two builds")
    check(len(saved_indexes(srv.data)) == 2, "saved indexes: %r" % saved_indexes(srv.data))
    srv.stop()
    srv = Server(data=srv.data)
    for b, addrs in ids:
        check(symbolize_frames(srv, b, addrs) == answers[b], "answers differ after restart")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 0,
          "DWARF parsed again after restart")
    check(srv.metric('ember_symbol_cache_events_total{event="disk_load"}') == 2, "disk loads")
    srv.stop()
    # A damaged saved index (header) is refused, rebuilt and replaced.
    for path in saved_indexes(srv.data):
        with open(path, "r+b") as f:
            f.seek(20)
            f.write(b"\xff\xff\xff\xff")
    srv = Server(data=srv.data)
    for b, addrs in ids:
        check(symbolize_frames(srv, b, addrs) == answers[b], "answers differ after repair")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 2, "rebuilt")
    srv.stop()
    check(re.search(r"saved index symidx-\S+ of \S+: .*: header of 416 bytes and 4294967295 "
                    r"sections, not 416 and 12.*; rebuilding it",
                    srv.stderr()), "the log does not say which check refused the index: "
          + srv.stderr())
    srv = Server(data=srv.data)
    b, addrs = ids[0]
    check(symbolize_frames(srv, b, addrs) == answers[b], "answers after the repair's restart")
    check(srv.metric('ember_symbol_cache_events_total{event="disk_load"}') == 1, "repaired")
    srv.stop()


def holds_file(pid, st):
    """Whether process pid has the file st (an os.stat result) open."""
    fds = "/proc/%d/fd" % pid
    for fd in os.listdir(fds):
        try:
            f = os.stat(os.path.join(fds, fd))
        except OSError:
            continue
        if (f.st_dev, f.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def feed_fifo(path, content, pid):
    """Give content to each reader that opens FIFO path (RocksDB reads
    CURRENT more than once), one at a time, until it is replaced by a
    regular file."""
    fifo = os.stat(path)
    while True:
        try:  # succeeds only while a reader waits in open(): ENXIO otherwise
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno not in (errno.ENXIO, errno.ENOENT):
                raise
            time.sleep(0.001)
            continue
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return  # RocksDB wrote its new CURRENT: done
            while not holds_file(pid, fifo):  # its open() has returned
                time.sleep(0.001)
            os.write(fd, content)
        finally:
            os.close(fd)
        while holds_file(pid, fifo):  # it reads up to EOF, then closes
            time.sleep(0.001)


def test_server__restart_answers_from_pins_while_store_opens():
    srv = Server()
    full = fx("c_O2_pie")
    b = build_id(full)
    check(srv.upload(full, b, "executable")[0] == 201, "upload")
    addrs = func_addrs(full, 50)
    answers = symbolize_frames(srv, b, addrs)
    check(sum(1 for e, _, _ in answers if e is None) == len(addrs), "resolved: %r" % answers[:3])
    check(os.listdir(os.path.join(srv.data, "pins")) == [b], "pinned")
    srv.stop()
    # RocksDB's CURRENT file as a FIFO: the store's open blocks reading it
    # until this test writes it, so the requests below come, for sure,
    # while the store is still opening.
    current = os.path.join(srv.data, "db", "CURRENT")
    with open(current) as f:
        content = f.read().encode()
    os.unlink(current)
    os.mkfifo(current)
    srv = Server(data=srv.data, ready=False)
    check(srv.get("/healthz")[0] == 503, "ready before the store is open")
    check(symbolize_frames(srv, b, addrs) == answers, "answers from the pin differ")
    check(srv.metric('ember_symbol_cache_events_total{event="pin_load"}') == 1, "pin load")
    check(srv.metric("ember_store_artifacts") == 0, "store counted before its open")
    feed = threading.Thread(target=feed_fifo, args=(current, content, srv.proc.pid),
                            daemon=True)
    feed.start()  # the store opens now
    deadline = time.time() + 20
    while srv.get("/healthz")[0] != 200:
        check(time.time() < deadline, "store never opened")
        time.sleep(0.02)
    check(symbolize_frames(srv, b, addrs) == answers, "answers once checked")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 0, "rebuilt")
    check(srv.metric("ember_store_artifacts") == 1, "store count")
    srv.stop()


def symtab_first_server():
    """A server holding c_O2_pie without its DWARF (.symtab kept) as the
    executable: (server, full file, build ID, address of main)."""
    srv = Server()
    full = fx("c_O2_pie")
    b = build_id(full)
    nodebug = os.path.join(TMP, "c_O2_pie.nodebug")
    subprocess.run(["objcopy", "--strip-debug", full, nodebug], check=True)
    check(srv.upload(nodebug, b, "executable")[0] == 201, "exe upload")
    return srv, full, b, int(main_addr(full), 16)


def test_server__upload_unpins_so_restart_uses_better_files():
    srv, full, b, addr = symtab_first_server()
    check(symbolize_frames(srv, b, [addr])[0][1] == "symtab", "symtab first")
    check(os.listdir(os.path.join(srv.data, "pins")) == [b], "pinned")
    check(srv.upload(full, b, "debuginfo")[0] == 201, "debug upload")
    check(os.listdir(os.path.join(srv.data, "pins")) == [], "upload kept the pin")
    srv.stop()  # no request since: nothing pinned the better index yet
    srv = Server(data=srv.data, ready=False)
    after = symbolize_frames(srv, b, [addr])[0]
    check(after[1] == "dwarf" and after[2][-1].get("line", 0) > 0, "old pin served: %r" % (after,))
    check(srv.metric('ember_symbol_cache_events_total{event="pin_load"}') == 0, "pin load")
    srv.stop()


def test_server__better_debuginfo_rebuilds_index():
    srv, full, b, addr = symtab_first_server()
    before = symbolize_frames(srv, b, [addr])[0]
    check(before[0] is None and before[1] == "symtab" and before[2][-1]["function"] == "main"
          and "line" not in before[2][-1], "symtab only: %r" % (before,))
    check(srv.upload(full, b, "debuginfo")[0] == 201, "debug upload")
    after = symbolize_frames(srv, b, [addr])[0]
    check(after[1] == "dwarf" and after[2][-1]["function"] == "main" and
          after[2][-1].get("line", 0) > 0, "not rebuilt from the debug file: %r" % (after,))
    check(srv.metric('ember_symbol_cache_events_total{event="superseded"}') == 1, "superseded")
    check(srv.metric('ember_symbol_cache_events_total{event="build"}') == 2, "two builds")
    srv.stop()
    srv = Server(data=srv.data)
    check(symbolize_frames(srv, b, [addr])[0] == after, "restart serves the DWARF index")
    check(srv.metric('ember_symbol_cache_events_total{event="disk_load"}') == 1, "from disk")
    srv.stop()


def backdate_tree(root, seconds=7200):
    for r, _, files in os.walk(root):
        for f in files:
            t = time.time() - seconds
            os.utime(os.path.join(r, f), (t, t))


def test_server__superseded_and_unnamed_files_collected():
    srv, full, b, addr = symtab_first_server()
    symbolize_frames(srv, b, [addr])
    old = saved_indexes(srv.data)
    check(len(old) == 1, "saved indexes: %r" % old)
    backdate_tree(os.path.join(srv.data, "derived"))
    check(srv.upload(full, b, "debuginfo")[0] == 201, "debug upload")
    symbolize_frames(srv, b, [addr])  # a new index for the better files
    new = saved_indexes(srv.data)
    check(len(new) == 1 and new != old, "superseded index kept: %r" % new)
    srv.stop()
    # A file no record names (a crash between commit and record) goes at
    # the next start once older than the grace period; a fresh one stays.
    orphan = os.path.join(srv.data, "blobs", "ab", "ab" + "0" * 62)
    fresh = os.path.join(srv.data, "blobs", "ab", "ab" + "1" * 62)
    os.makedirs(os.path.dirname(orphan), exist_ok=True)
    for p in (orphan, fresh):
        with open(p, "w") as f:
            f.write("nobody names me")
    backdate_tree(os.path.dirname(orphan))
    os.utime(fresh)
    srv = Server(data=srv.data)
    wait_for(lambda: not os.path.exists(orphan), "the unnamed file removed")
    check(os.path.exists(fresh), "a fresh unnamed file was removed")
    check(symbolize_frames(srv, b, [addr])[0][1] == "dwarf", "the named files are whole")
    check("removed 1 files no record names" in srv.stderr(), "not logged")
    srv.stop()


def test_server__symbolize_fetches_from_upstream():
    up = Upstream([fx("c_stripped"), fx("c_stripped.debug")])
    try:
        b = build_id(fx("c_stripped"))
        up.wait_serving(b)
        srv = Server(args=["--upstream", up.url])
        addr = int(main_addr(None), 16)
        got = symbolize_frames(srv, b, [addr])[0]
        check(got[0] is None and got[1] == "dwarf" and got[2][-1]["function"] == "main",
              "via upstream: %r" % (got,))
        check(srv.listing(b)["artifacts"], "fetched files not stored")
        s, out = symbolize(srv, [{"build_id": "ab" * 20, "addresses": [4096]}])
        check(json.loads(out)["modules"][0]["results"][0]["error"] == "unknown_build_id",
              "unknown everywhere")
        srv.stop()
    finally:
        up.stop()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused
    srv = Server(args=["--upstream", "http://127.0.0.1:%d" % port])
    s, out = symbolize(srv, [{"build_id": "cd" * 20, "addresses": [4096, 8192]}])
    res = json.loads(out)["modules"][0]
    check([r["error"] for r in res["results"]] == ["upstream_unavailable"] * 2,
          "dead upstream: %r" % res["results"])
    check(res["unresolved"] == 2, "unresolved count")
    srv.stop()


# ---- `ember symbolize --server` (the API through the llvm-symbolizer CLI) -----------


def ember_symbolize(*args, stdin=""):
    return subprocess.run([EMBER, "symbolize"] + list(args), input=stdin, capture_output=True,
                          text=True, timeout=120)


def offline_as_remote(out, style):
    """Offline output with what the API does not carry (docs/cli.md) taken
    out: GNU discriminators, JSON Start*/SymbolOffset/Discriminator; the
    JSON ModuleName is the path offline, the build ID remotely."""
    if style == "GNU":
        out = re.sub(r" \(discriminator \d+\)", "", out)
    if style == "JSON":
        out = re.sub(r',"Discriminator":\d+', ',"Discriminator":0', out)
    return strip_module_and_start(out)


def strip_module_and_start(out):
    out = re.sub(r',"(Start[A-Za-z]+|SymbolOffset)":("[^"]*"|\d+)', "", out)
    return re.sub(r'"ModuleName":"[^"]*"', '"ModuleName":""', out)


def upload_exe(srv, name):
    b = build_id(fx(name))
    check(srv.upload(fx(name), b, "executable")[0] == 201, "upload " + name)
    return b


def test_server__symbolize_cli_matches_offline():
    srv = Server()
    flag_sets = (["-i"], ["--no-inlines", "-a"], ["-p", "-i", "-a"], ["--no-demangle"],
                 ["--functions=none", "-s"])
    for name in ("c_O2_pie", "cxx_O2"):
        b = upload_exe(srv, name)
        addrs = ["0x%x" % a for a in func_addrs(fx(name), 160)]
        inlined = 0
        for style in ("LLVM", "GNU", "JSON"):
            for k, flags in enumerate(flag_sets):
                flags = flags + ["--output-style=" + style]
                # addresses as arguments (one request) once, else on stdin
                args, stdin = (addrs, "") if k == 0 else ([], "\n".join(addrs) + "\n")
                off = ember_symbolize("--obj=" + fx(name), *flags, *args, stdin=stdin)
                rem = ember_symbolize("--server", srv.url, "--build-id", b, *flags, *args,
                                      stdin=stdin)
                check(off.returncode == 0 and rem.returncode == 0,
                      "%s %s: exit %d/%d: %s" % (name, flags, off.returncode, rem.returncode,
                                                 rem.stderr))
                want, got = offline_as_remote(off.stdout, style), strip_module_and_start(rem.stdout)
                for x, y in zip(want.splitlines(), got.splitlines()):
                    check(x == y, "%s %s: offline %r, server %r" % (name, flags, x, y))
                check(want == got, "%s %s: outputs differ in length" % (name, flags))
                if style == "LLVM" and flags[0] == "-i":
                    inlined = sum(a.count("\n") > 2 for a in got.split("\n\n"))
        check(inlined > 0, "%s: no address with inlined frames: test proves nothing" % name)
    srv.stop()


def test_server__symbolize_cli_short_names():
    """--functions=short: DW_AT_name offline, derived from the linkage name
    remotely; the same but for template instances (docs/cli.md)."""
    srv = Server()
    for name in ("c_O2_pie", "cxx_O2"):
        b = upload_exe(srv, name)
        addrs = ["0x%x" % a for a in func_addrs(fx(name), 160)]
        flags = ["--functions=short", "-i", "-a"]
        off = ember_symbolize("--obj=" + fx(name), *flags, *addrs).stdout.splitlines()
        rem = ember_symbolize("--server", srv.url, "--build-id", b, *flags, *addrs).stdout
        rem = rem.splitlines()
        check(len(off) == len(rem), "%s: %d lines offline, %d remote" % (name, len(off), len(rem)))
        same = 0
        for x, y in zip(off, rem):
            check(x == y or "<" in x, "%s: offline %r, server %r" % (name, x, y))
            same += x == y and not x.startswith(("/", "0x", "??"))
        check(same > 20, "%s: only %d names compared" % (name, same))
    srv.stop()


def test_server__symbolize_cli_coprocess():
    """A line on stdin is answered (and flushed) before the next is written."""
    srv = Server()
    b = upload_exe(srv, "c_O2_pie")
    addrs = ["0x%x" % a for a in func_addrs(fx("c_O2_pie"), 40)[::8]] + ["nonsense"]
    want = ember_symbolize("--obj=" + fx("c_O2_pie"), "-i", stdin="\n".join(addrs) + "\n").stdout
    proc = subprocess.Popen([EMBER, "symbolize", "--server=" + srv.url, "--build-id=" + b, "-i"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    got = b""
    try:
        for a in addrs:
            proc.stdin.write((a + "\n").encode())
            answer = b""
            while not (answer.endswith(b"\n\n") or answer == b"nonsense\n"):
                r, _, _ = select.select([proc.stdout], [], [], 20)
                check(r, "no answer to %s while stdin stays open" % a)
                chunk = os.read(proc.stdout.fileno(), 65536)
                check(chunk, "ember exited early")
                answer += chunk
            got += answer
    finally:
        proc.stdin.close()
        check(proc.wait(timeout=20) == 0, "exit status %s" % proc.returncode)
    check(got.decode() == want, "coprocess %r != offline %r" % (got, want))
    srv.stop()


def test_server__symbolize_cli_unknown_build_id():
    srv = Server()
    res = ember_symbolize("--server", srv.url, "--build-id", "ab" * 20, "0x1000", "4096")
    check(res.returncode == 0, "exit %d: %s" % (res.returncode, res.stderr))
    check(res.stdout == "??\n??:0:0\n\n" * 2, "stdout %r" % res.stdout)
    check(res.stderr.count("unknown_build_id") == 1, "reason once on stderr: %r" % res.stderr)
    res = ember_symbolize("--server", srv.url, "--build-id", "ab" * 20, "--output-style=JSON",
                          "0x1000")
    j = json.loads(res.stdout)
    check(j["Error"]["Message"] == "unknown_build_id" and j["Symbol"][0]["FunctionName"] == "",
          "JSON %r" % res.stdout)
    srv.stop()


def test_server__symbolize_cli_server_failures():
    srv = Server()
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d" % s.getsockname()[1]
    res = ember_symbolize("--server", dead, "--build-id", "abcd", "0x1000")
    check(res.returncode == 1 and "cannot reach" in res.stderr and dead in res.stderr,
          "dead server: %d %r" % (res.returncode, res.stderr))
    res = ember_symbolize("--server", srv.url + "/not/ember", "--build-id", "abcd",
                          stdin="0x1000\n")
    check(res.returncode == 1 and "HTTP" in res.stderr, "HTTP error: %d %r" % (res.returncode,
                                                                              res.stderr))
    res = ember_symbolize("--server", srv.url, "--obj", fx("c_O2_pie"), "--build-id", "abcd",
                          "0x1000")
    check(res.returncode == 2 and "--obj and --server" in res.stderr and not res.stdout,
          "--obj with --server: %d %r" % (res.returncode, res.stderr))
    res = ember_symbolize("--server", srv.url, "0x1000")
    check(res.returncode == 2 and "--build-id" in res.stderr, "no --build-id: %r" % res.stderr)
    srv.stop()


def pprof_tools():
    out = os.environ.get("EMBER_PPROF_TOOLS")
    if not out:
        raise Skip("EMBER_PPROF_TOOLS is not set")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pprof",
                          "build-pprof.sh")
    r = subprocess.run(["bash", script, out], capture_output=True, text=True)
    rc = r.returncode
    if rc == 77:
        raise Skip("cannot build pprof offline here: " + r.stderr.strip())
    check(rc == 0, "build-pprof.sh failed")
    return os.path.join(out, "pprof"), os.path.join(out, "addrprofile")


def raw_locations(pprof_bin, profile):
    """address -> [(function, file, line)] innermost first, from pprof -raw."""
    out = subprocess.run([pprof_bin, "-raw", "-symbolize=none", profile], capture_output=True,
                         text=True, timeout=120)
    check(out.returncode == 0, "pprof -raw failed: " + out.stderr)
    locs, cur, section = {}, None, None
    for line in out.stdout.splitlines():
        if line.startswith("Locations"):
            section = "loc"
            continue
        if line.startswith("Mappings"):
            section = None
        if section != "loc" or not line.strip():
            continue
        m = re.match(r"\s*\d+: (0x[0-9a-f]+) M=\d+ (.*)", line)
        if m:
            cur = int(m.group(1), 16)
            locs[cur] = []
            rest = m.group(2)
        else:
            rest = line.strip()
        f = re.match(r"(.+?) (\S*):(\d+)(?::\d+)? s=\d+", rest.strip())
        if f and cur is not None:
            locs[cur].append((f.group(1), f.group(2), int(f.group(3))))
    return locs


def test_server__symbolize_pprof_read_by_pprof():
    pprof_bin, addrprofile = pprof_tools()
    llvm = packages.which("llvm-symbolizer", "llvm-symbolizer-14")
    if not llvm:
        raise Skip(packages.missing("llvm-symbolizer"))
    srv = Server()
    path = fx("c_O2_pie")
    b = build_id(path)
    check(srv.upload(path, b, "executable")[0] == 201, "upload")
    start = 0x555555554000
    vaddrs = func_addrs(path, 30)
    prof = os.path.join(TMP, "raw.pb.gz")
    subprocess.run([addrprofile, "-o", prof, "-bin", "/opt/app/c_O2_pie", "-buildid", b,
                    "-start", hex(start), "-limit", hex(start + os.path.getsize(path) + 0x10000),
                    "-offset", "0"] + [hex(start + v) for v in vaddrs], check=True)
    s, body, h = srv.request("POST", "/api/v1/symbolize/pprof", open(prof, "rb").read(), {})
    check(s == 200, "status %d: %r" % (s, body[:200]))
    out = os.path.join(TMP, "sym.pb.gz")
    with open(out, "wb") as f:
        f.write(body)
    got = raw_locations(pprof_bin, out)
    theirs = json.loads(subprocess.run([llvm, "--output-style=JSON", "--inlines", "-e", path] +
                                       [hex(v) for v in vaddrs], capture_output=True,
                                       text=True).stdout)
    for v, exp in zip(vaddrs, theirs):
        want = [(f["FunctionName"], f["FileName"], f["Line"]) for f in exp["Symbol"]
                if f["FunctionName"] != "??"]
        want = [(fn, fl or "", ln) for fn, fl, ln in want]
        mine = [(fn, fl if fl != "?" else "", ln) for fn, fl, ln in got.get(start + v, [])]
        check(mine == want, "0x%x: pprof shows %r, llvm-symbolizer %r" % (v, mine, want))
    go = shutil.which("go")
    if go:
        top = subprocess.run([go, "tool", "pprof", "-top", "-symbolize=none", out],
                             capture_output=True, text=True, timeout=120)
        check(top.returncode == 0 and "main" in top.stdout, "go tool pprof -top: " + top.stderr)
    srv.stop()


def test_server__symbolize_pprof_bad_input():
    srv = Server()
    s, body, _ = srv.request("POST", "/api/v1/symbolize/pprof", b"\x1f\x8b\x08garbage", {})
    check(s == 400 and body, "corrupt gzip: %d %r" % (s, body))
    s, body, _ = srv.request("POST", "/api/v1/symbolize/pprof", b"\x0a\x05\x08", {})
    check(s == 400 and body, "truncated protobuf: %d %r" % (s, body))
    sock = socket.create_connection(("127.0.0.1", srv.port))
    sock.sendall(b"POST /api/v1/symbolize/pprof HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Length: %d\r\n\r\n" % (1 << 30))
    check(sock.recv(100).startswith(b"HTTP/1.1 413"), "oversized profile not 413")
    sock.close()
    srv.stop()


def pprof_profile(mappings, locations):
    """A profile.proto Profile: mappings as dicts (id, start, limit, offset,
    build_id), locations as (id, mapping_id, address); one sample each."""
    p = RawProfile([("samples", "count")], period_type=False)
    for m in mappings:
        p.mapping(m["start"], m["limit"], "/bin/prog", m["build_id"], m.get("offset", 0),
                  symbolized=False, mid=m["id"])
    for lid, mid, addr in locations:
        p.sample([p.location(mid, addr, lid=lid)], [1])
    return p.encode(gzip=False)


def test_server__request_timeout_stops_work():
    hang, url = hanging_upstream()
    srv = Server(args=["--upstream", url, "--request-timeout", "2"])
    b = upload_split_pair(srv)
    unknown = "cd" * 20

    def timed(fn):
        t0 = time.time()
        r = fn()
        check(time.time() - t0 < 6, "answered after %.1f s" % (time.time() - t0))
        return r

    # A debuginfod request waiting for the upstream: 504 at the deadline.
    st, body, _ = timed(lambda: srv.get("/buildid/%s/debuginfo" % unknown))
    check(st == 504 and b"request timeout of 2 s" in body, "debuginfod: %d %r" % (st, body))
    # A symbolization whose first module waits: 504 before any byte.
    st, body = timed(lambda: symbolize(srv, [{"build_id": "ab" * 20, "addresses": ["0x1"]}]))
    check(st == 504, "json first module: %d %r" % (st, body))
    # A later module's wait: the answer is whole, its addresses say why.
    st, body = timed(lambda: symbolize(srv, [
        {"build_id": b, "addresses": ["0x" + main_addr()]},
        {"build_id": "ef" * 20, "addresses": ["0x1", "0x2"]}]))
    check(st == 200, "json: %d %r" % (st, body))
    mods = json.loads(body)["modules"]
    check(mods[0]["resolved"] == 1, "first module: %r" % mods[0])
    check([r["error"] for r in mods[1]["results"]] == ["deadline_exceeded"] * 2,
          "second module: %r" % mods[1])
    # A profile: 504.
    prof = pprof_profile([{"id": 1, "start": 0x1000, "limit": 0x2000, "build_id": "12" * 20}],
                         [(1, 1, 0x1100)])
    st, body, _ = timed(lambda: srv.request("POST", "/api/v1/symbolize/pprof", prof))
    check(st == 504, "pprof: %d %r" % (st, body))
    check(srv.metric('ember_requests_stopped_total{reason="timeout"}') >= 4, "not counted")
    srv.stop()
    hang.close()


def test_server__slow_body_closed_at_deadline():
    """A symbolization body trickled a byte at a time (never idle long
    enough for an idle timeout) is cut at the request's deadline, and the
    server answers others meanwhile."""
    srv = Server(args=["--request-timeout", "2"])
    for path in ("/api/v1/symbolize", "/api/v1/symbolize/pprof"):
        before = srv.metric("ember_connections_timed_out_total")
        got, took = ember_test.trickle(srv.port, b"POST %s HTTP/1.1\r\nHost: x\r\n"
                                       b"Content-Length: 100000\r\n\r\n{" % path.encode())
        check(got == b"" and 1.5 < took < 6, "%s: trickled body %s after %.1f s"
              % (path, "still open" if got is None else "answered %r" % got[:40], took))
        check(srv.request("GET", "/healthz")[0] == 200, "healthz")
        check(srv.metric("ember_connections_timed_out_total") == before + 1,
              "%s: the cut is not counted" % path)
    srv.stop()


def test_server__slow_upload_closed_under_min_rate():
    """An upload trickled a byte every 0.5 s (never idle long enough for the
    idle timeout) is closed once it averages under --min-upload-rate-kb,
    after the grace of 10 s, counted, its blob discarded; an upload right
    after, at speed, is stored."""
    srv = Server(args=["--min-upload-rate-kb", "1"])
    b = build_id(fx("c_O2_pie"))
    before = srv.metric("ember_connections_timed_out_total")
    got, took = ember_test.trickle(
        srv.port, b"PUT /api/v1/artifacts/%s/executable HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Bearer %s\r\nContent-Length: 100000\r\n\r\n\x7fELF"
        % (b.encode(), srv.token.encode()), every=0.5, limit=14)
    check(got == b"" and 9.5 < took < 13.5, "trickled upload %s after %.1f s"
          % ("still open" if got is None else "answered %r" % got[:40], took))
    check(srv.metric("ember_connections_timed_out_total") == before + 1, "the cut is not counted")
    wait_for(lambda: srv.metric('ember_uploads_total{result="rejected",reason="aborted"}') == 1,
             "the cut upload to be discarded", timeout=5)
    check(srv.upload(fx("c_O2_pie"), b, "executable")[0] == 201, "an upload right after")
    srv.stop()


def test_server__client_gone_stops_work():
    hang, url = hanging_upstream()
    srv = Server(args=["--upstream", url, "--request-timeout", "60"])
    body = json.dumps({"modules": [{"build_id": "ab" * 20, "addresses": ["0x1"]}]}).encode()
    c = socket.create_connection(("127.0.0.1", srv.port))
    c.sendall(b"POST /api/v1/symbolize HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
              % len(body) + body)
    time.sleep(0.5)  # waiting for the upstream now
    c.close()
    wait_for(lambda: srv.metric('ember_requests_stopped_total{reason="client_gone"}') == 1,
               "the work of a request whose client went away stopped", timeout=5)
    srv.stop()
    hang.close()


def test_server__upstream_fetches_capped_per_request():
    up = NotFoundUpstream()
    srv = Server(args=["--upstream", up.url, "--upstream-fetches-per-request", "2"])
    ids = ["%02x" % i * 20 for i in range(1, 6)]
    st, body = symbolize(srv, [{"build_id": i, "addresses": ["0x1"]} for i in ids])
    check(st == 200, "json: %d %r" % (st, body))
    errors = [m["results"][0]["error"] for m in json.loads(body)["modules"]]
    check(errors == ["unknown_build_id"] * 2 + ["upstream_fetch_limit"] * 3, "%r" % errors)
    check(srv.metric('ember_upstream_requests_total{result="miss"}') == 4,
          "fetches: %r" % srv.metric('ember_upstream_requests_total{result="miss"}'))
    check(up.count == 4, "upstream asked %d times" % up.count)
    # A profile's mappings draw on the same cap, per request.
    ids = ["%02x" % i * 20 for i in range(11, 16)]
    maps = [{"id": n + 1, "start": (n + 1) << 32, "limit": ((n + 1) << 32) + 0x1000,
             "build_id": b} for n, b in enumerate(ids)]
    st, body, h = srv.request("POST", "/api/v1/symbolize/pprof",
                              pprof_profile(maps, [(n + 1, n + 1, ((n + 1) << 32) + 16)
                                                   for n in range(5)]))
    check(st == 200, "pprof: %d %r" % (st, body[:200]))
    check(h.get("x-ember-unresolved") == "unknown_build_id=2, upstream_fetch_limit=3",
          "pprof reasons: %r" % h.get("x-ember-unresolved"))
    check(up.count == 8, "upstream asked %d times in all" % up.count)
    srv.stop()
    up.stop()


def test_server__memory_stays_under_limit():
    import zlib
    limit = 256 << 20
    srv = Server(args=["--memory-limit-mb", "256"])
    b = upload_split_pair(srv)
    st, _ = symbolize(srv, [{"build_id": b, "addresses": ["0x" + main_addr()]}])
    check(st == 200, "symbolize before: %d" % st)  # its index is built: it needs no budget
    base = vm_status(srv.proc.pid, "VmRSS")
    # What clients may send: 32 MiB JSON bodies of a million addresses and
    # of empty objects, and profiles that inflate from a few KB to a
    # protobuf of millions of empty locations (each one an allocation).
    json_big = b'{"modules":[{"build_id":"ab","addresses":[' + b"0," * ((16 << 20) - 64) + b"0]}]}"
    json_empty = b'{"modules":[' + b"{}," * (10 << 20) + b"{}]}"
    bomb = zlib.compress(b"\x22\x00" * (16 << 20), 9)
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb_gz = gz.compress(b"\x22\x00" * (16 << 20)) + gz.flush()
    check(len(bomb_gz) < 200 << 10, "bomb of %d bytes" % len(bomb_gz))
    del bomb
    hostile = [("/api/v1/symbolize", json_big)] * 2 + [("/api/v1/symbolize", json_empty)] * 2 + \
        [("/api/v1/symbolize/pprof", bomb_gz)] * 8
    answers = [None] * len(hostile)

    def send(i):
        path, body = hostile[i]
        try:
            answers[i] = srv.request("POST", path, body, timeout=120)
        except OSError as e:
            answers[i] = (0, str(e).encode(), {})

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(hostile))]
    for t in threads:
        t.start()
    # Meanwhile the server keeps serving: a symbolization and a download.
    normal = 0
    while any(t.is_alive() for t in threads):
        st, body = symbolize(srv, [{"build_id": b, "addresses": ["0x" + main_addr()]}])
        check(st == 200 and json.loads(body)["modules"][0]["resolved"] == 1,
              "normal request: %d %r" % (st, body[:200]))
        check(srv.get("/buildid/%s/debuginfo" % b)[0] == 200, "download")
        normal += 1
    for t in threads:
        t.join()
    check(normal >= 1, "no normal request ran meanwhile")
    for (path, body), (st, out, h) in zip(hostile, answers):
        what = "%s (%d bytes)" % (path, len(body))
        check(st in (400, 413, 503), "%s: %d %r" % (what, st, out[:200]))
        check(st != 503 or h.get("retry-after"), what + ": 503 without Retry-After")
    check(any(a[0] == 413 for a in answers), "nothing refused as too large: %r"
          % [a[0] for a in answers])
    check(srv.request("GET", "/healthz")[0] == 200, "the server stopped serving")
    peak = vm_status(srv.proc.pid, "VmHWM")
    print("peak RSS %.1f MiB (at start %.1f MiB), limit %d MiB" % (peak / 2**20, base / 2**20,
                                                                    limit >> 20))
    if not sanitized(srv.proc.pid):  # ASan's shadow and quarantine are not the server's
        check(peak < limit, "peak RSS %.1f MiB over the limit" % (peak / 2**20))
    srv.stop()


def test_server__symbolize_pprof_inconsistent_mappings():
    srv = Server()
    path = fx("c_O2_pie")
    b = build_id(path)
    check(srv.upload(path, b, "executable")[0] == 201, "upload")
    main = int(main_addr(path), 16)
    base = 0x555555554000
    good = {"id": 1, "start": base, "limit": base + 0x100000, "build_id": b}
    # limit below start: the profile is refused, with the mapping named.
    bad = dict(good, id=2, start=base + 0x200000, limit=base + 0x100000)
    s, body, _ = srv.request("POST", "/api/v1/symbolize/pprof",
                             pprof_profile([good, bad], [(1, 1, base + main)]), {})
    check(s == 400 and b"mapping 2" in body and b"memory_limit" in body,
          "limit below start: %d %r" % (s, body))
    # A mapping whose offset is past every PT_LOAD of its ELF, addresses
    # outside their mapping and a location without one: all reported as
    # unresolved, none dropped, while the consistent one resolves.
    far = dict(good, id=3, start=base + 0x400000, limit=base + 0x500000, offset=0x7000000)
    unknown = dict(good, id=4, start=base + 0x600000, limit=base + 0x700000,
                   build_id="ab" * 20)
    locs = [(1, 1, base + main), (2, 1, base + 0x100000 + 16), (3, 3, base + 0x400000 + 64),
            (4, 0, 0x1234), (5, 4, base + 0x600000 + 16)]
    s, body, hdrs = srv.request("POST", "/api/v1/symbolize/pprof",
                                pprof_profile([good, far, unknown], locs), {})
    check(s == 200, "status %d %r" % (s, body[:200]))
    check(hdrs.get("x-ember-locations") == "1 resolved, 4 unresolved",
          "counts: %r" % hdrs.get("x-ember-locations"))
    check(hdrs.get("x-ember-unresolved") == "no_mapping=1, outside_mapping=1, "
          "offset_not_in_elf=1, unknown_build_id=1", "reasons: %r" % hdrs.get("x-ember-unresolved"))
    srv.stop()


# ---- a store that cannot be read ------------------------------------------------------


def check_unavailable(reply, what):
    s, body, h = reply
    check(s == 503 and h.get("retry-after") and body.startswith(b"store unavailable"),
          "%s: %d %r %r" % (what, s, h.get("retry-after"), body[:100]))


def test_server__unreadable_store_answers_503():
    """RocksDB failing every read once the store is open.  Nothing real
    fails on demand under a running server, so this uses the store's fault
    injection of test builds (EMBER_TEST_STORE_FAULT, rocksdb_fault.c):
    RocksDB's iterators then stop with their error set and its gets fail.
    Every route that needs a record answers 503 with Retry-After: never 404
    (debuginfod clients cache it), never "unknown build ID", never a
    question to upstream; /metrics counts them."""
    srv = Server()
    b = upload_split_pair(srv)
    main = int(main_addr(None), 16)
    srv.stop()
    hang = socket.socket()  # the upstream: must never be asked
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    hang.settimeout(0.2)
    srv = Server(data=srv.data, env={"EMBER_TEST_STORE_FAULT": "+0"},
                 args=["--upstream", "http://127.0.0.1:%d" % hang.getsockname()[1]])
    if "EMBER_TEST_STORE_FAULT=+0" not in srv.stderr():
        raise Skip("a Release build: the store's fault injection (EMBER_TEST_STORE_FAULT) "
                   "is in Debug builds only")
    for kind in ("debuginfo", "executable", "section/.debug_info",
                 "source/ember/fixtures/src/prog.c"):
        check_unavailable(srv.get("/buildid/%s/%s" % (b, kind)), kind)
    s, _, h = srv.request("HEAD", "/buildid/%s/debuginfo" % b)
    check(s == 503 and h.get("retry-after"), "HEAD: %d" % s)
    check_unavailable(srv.get("/api/v1/artifacts/" + b), "listing")
    check_unavailable(srv.get("/api/v1/unwind/" + b), "unwind")
    body = json.dumps({"modules": [{"build_id": b, "addresses": [main]}]}).encode()
    check_unavailable(srv.request("POST", "/api/v1/symbolize", body, {}), "symbolize")
    base = 0x555555554000
    prof = pprof_profile([{"id": 1, "start": base, "limit": base + 0x100000, "build_id": b}],
                         [(1, 1, base + main)])
    check_unavailable(srv.request("POST", "/api/v1/symbolize/pprof", prof, {}), "pprof")
    other = build_id(fx("c_O2_pie"))
    check_unavailable(srv.upload(fx("c_O2_pie"), other, "executable"), "upload")
    tar = os.path.join(TMP, "src.tar")
    src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../fixtures/elf/src")
    subprocess.run(["tar", "-C", src_dir, "--transform", "s,^,ember/fixtures/src/,",
                    "-cf", tar, "prog.c"], check=True)
    check_unavailable(srv.upload(tar, b, "sources"), "sources upload")
    check(srv.tmp_files() == [], "temporary files left")
    try:
        hang.accept()[0].close()
        check(False, "a store failure was asked upstream")
    except socket.timeout:
        pass
    for ep, n in (("debuginfo", 2), ("executable", 1), ("section", 1), ("source", 1),
                  ("list", 1), ("unwind", 1), ("symbolize", 1), ("symbolize_pprof", 1),
                  ("upload", 2)):
        got = srv.metric('ember_store_errors_total{endpoint="%s"}' % ep)
        check(got == n, "ember_store_errors_total{endpoint=%s}: %r, want %d" % (ep, got, n))
    check(srv.metric('ember_uploads_total{result="rejected",reason="store_unavailable"}') == 2,
          "upload rejection not counted")
    check(srv.metric('ember_upstream_requests_total{result="error"}') == 0, "upstream asked")
    srv.stop()
    hang.close()
    srv = Server(data=srv.data)  # the same store, readable: all there
    check(srv.get("/buildid/%s/debuginfo" % b)[0] == 200, "stored files lost")
    srv.stop()


# ---- metrics ----------------------------------------------------------------------------


def test_server__metrics_exposition():
    srv = Server()
    b = upload_split_pair(srv)
    srv.get("/buildid/%s/debuginfo" % b)
    srv.get("/buildid/%s/debuginfo" % ("ef" * 20))
    srv.upload(fx("c_O2_pie"), b, "debuginfo")  # build-ID mismatch
    _, body, h = srv.get("/metrics")
    text = body.decode()
    check(h["content-type"].startswith("text/plain"), "content type")
    want = {
        'ember_http_responses_total{endpoint="debuginfo",code="200"}': 1,
        'ember_http_responses_total{endpoint="debuginfo",code="404"}': 1,
        'ember_http_responses_total{endpoint="upload",code="201"}': 2,
        'ember_http_responses_total{endpoint="upload",code="409"}': 1,
        'ember_http_bytes_served_total{endpoint="debuginfo"}':
            os.path.getsize(fx("c_stripped.debug")) + len("not found"),
        'ember_uploads_total{result="accepted"}': 2,
        'ember_uploads_total{result="rejected",reason="build_id_mismatch"}': 1,
        "ember_store_artifacts": 2,
        "ember_store_bytes": os.path.getsize(fx("c_stripped")) + os.path.getsize(fx("c_stripped.debug")),
    }
    for k, v in want.items():
        m = re.search("^%s (\\d+)$" % re.escape(k), text, re.M)
        check(m and int(m.group(1)) == v, "%s: %s, want %d" % (k, m and m.group(1), v))
    for line in text.splitlines():
        check(line.startswith("#") or re.match(r"^[a-z_]+(\{[^}]*\})? \d+$", line),
              "not Prometheus text: " + line)
    srv.stop()


def main():
    fn = globals().get(CASE) if CASE.startswith("test_server__") else None
    if not fn:
        print("no such case " + CASE)
        return 2
    try:
        fn()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except AssertionError as e:
        print("FAIL: %s" % e)
        log = os.path.join(TMP, "server.log")
        if os.path.exists(log):
            print("--- server log ---\n" + open(log).read()[-3000:])
        return 1
    finally:
        ember_test.stop_servers()
        shutil.rmtree(TMP, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
