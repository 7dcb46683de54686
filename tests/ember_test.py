"""What the Python test drivers share (tests/*/test_*.py, and the
benchmarks that drive a server): a real `ember serve` (class Server), the
checks and waits, and a pprof (profile.proto) writer and reader.  Each driver puts
tests/ on sys.path (as for packages.py) and imports from here.

    srv = Server(EMBER, TMP, args=["--max-series", "3"])
    st, body, headers = srv.request("GET", "/api/v1/labels")
    srv.stop()

The server listens on a free loopback port ("--listen 127.0.0.1:0": the
port is read from its first line), and is ready once /healthz answers
200 (polled, never a bare sleep).  Every Server started is in SERVERS;
a driver calls stop_servers() when a case ends, whatever the outcome.
"""
import gzip as gz
import http.client
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import packages


class Skip(Exception):
    """Raised by a case that cannot run here; its driver exits 77."""


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def skip(msg):
    """A case that cannot run here: CTest reports it skipped (77)."""
    print("skip: " + msg)
    sys.exit(77)


def wait_for(cond, what, timeout=30):
    """cond() until it returns something true, which is returned."""
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        check(time.time() < deadline, "timed out waiting for " + what)
        time.sleep(0.05)


def need(tool):
    """The path of tool, or Skip saying which package provides it."""
    path = packages.which(tool)
    if not path:
        raise Skip(packages.missing(tool))
    return path


def build_id(path):
    """The GNU build ID of ELF file path, as lowercase hex."""
    out = subprocess.run([packages.which("readelf") or "readelf", "-n", path],
                         capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, "no build ID in %s" % path)
    return m.group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trickle(port, head, every=0.25, limit=12):
    """Send head (a request's head and the first bytes of its body) to
    port, then one more body byte every `every` s (never idle long enough
    for an idle timeout) for at most `limit` s, until the server answers or
    closes.  (what it sent back: b"" when it closed without an answer,
    None when the body was still taken at the limit; seconds taken)."""
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(head)
    t0, got = time.time(), None
    while time.time() - t0 < limit and got is None:
        try:
            c.sendall(b" ")
            if select.select([c], [], [], every)[0]:
                got = c.recv(4096)
        except (BrokenPipeError, ConnectionResetError):
            got = b""
    took = time.time() - t0
    c.close()
    return got, took


def vm_status(pid, field):
    """A field of /proc/PID/status in bytes (VmHWM: the peak resident set)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def cpu_seconds(pid):
    """utime + stime of pid, from /proc/PID/stat, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sanitized(pid):
    """Whether the server runs under ASan (whose shadow memory is resident)."""
    with open("/proc/%d/maps" % pid) as f:
        return "libasan" in f.read()


# ---- the server ------------------------------------------------------------------


SERVERS = []  # every Server started: stop_servers() ends those still running


def stop_servers():
    for srv in SERVERS:
        if srv.proc and srv.proc.poll() is None:
            srv.proc.kill()
            srv.proc.wait()


def run_case(case, prefix, cases, tmp, children=()):
    """A driver's main: run case (a function of cases, a module's globals,
    named prefix...), then stop every server and child process and remove
    tmp; exit 2 for a case the driver does not have."""
    fn = cases.get(case)
    if not fn or not case.startswith(prefix):
        print("%s: no case '%s'" % (os.path.basename(sys.argv[0]), case))
        sys.exit(2)
    try:
        fn()
    finally:
        stop_servers()
        for c in children:
            if c.poll() is None:
                c.kill()
                c.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok " + case)


def agent_require_bpf(agent, tmp):
    """Skip (77) with the kernel's reason when ember-agent cannot load here
    (the agent drivers' check before a case that needs BPF)."""
    if os.geteuid() != 0:
        skip("not root: the agent needs CAP_BPF and CAP_PERFMON")
    out = tempfile.mkdtemp(dir=tmp, prefix="probe.")
    r = subprocess.run([agent, "--output", out, "--duration", "0.2", "--pid", "1"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        reason = (r.stderr.strip().splitlines() or ["?"])[-1]
        if re.search(r"missing CAP_|too old|no kernel BTF|loading the BPF|perf_event_open|"
                     r"attaching", reason):
            skip("BPF cannot be loaded here: " + reason)
        raise AssertionError("the agent failed to start: " + r.stderr[-2000:])


class Server:
    """`ember serve --listen 127.0.0.1:PORT --data DATA ARGS...`, started at
    once.  data: a new directory under tmp unless given; env: variables
    added to the environment (None: removed from it); wrap: a command the server runs under
    (strace); ready: wait for /healthz; log: its stderr, appended to
    tmp/log (one file for all the servers of a case, as the drivers print
    it on failure).  The token is read from --token-file when args give
    one, else from DATA/token."""

    def __init__(self, ember, tmp, args=(), data=None, env=None, wrap=(), preexec=None,
                 ready=True, port=0, log="server.log"):
        SERVERS.append(self)
        self.ember, self.proc = ember, None
        self.data = data or tempfile.mkdtemp(dir=tmp, prefix="data.")
        self.args, self.wrap, self.preexec = list(args), list(wrap), preexec
        self.env = ({k: v for k, v in dict(os.environ, **env).items() if v is not None}
                    if env else None)
        self.logpath = os.path.join(tmp, log)
        self.start(ready, port)

    def start(self, ready=True, port=0):
        """Start (again); with ready, also wait for /healthz (the store open)."""
        self.log = open(self.logpath, "ab")
        self.log_start = self.log.tell()
        self.proc = subprocess.Popen(
            self.wrap + [self.ember, "serve", "--listen", "127.0.0.1:%d" % port,
                         "--data", self.data] + self.args,
            stdout=subprocess.PIPE, stderr=self.log, preexec_fn=self.preexec, env=self.env)
        self.out = []  # what this run printed on stdout (the rest read at stop)
        self.port = int(self.await_line(r"listening on http://127\.0\.0\.1:(\d+)",
                                        "address").group(1))
        self.url = "http://127.0.0.1:%d" % self.port
        if ready:
            wait_for(self.healthy, "the server's /healthz", 30)
        tf = (self.args[self.args.index("--token-file") + 1] if "--token-file" in self.args
              else os.path.join(self.data, "token"))
        with open(tf) as f:
            self.token = f.read().strip()

    def await_line(self, pattern, what, timeout=30):
        """The match of the first line the server prints (from now) that
        matches pattern; the lines are kept in self.out."""
        deadline = time.time() + timeout
        while True:
            line = self.proc.stdout.readline().decode()
            self.out.append(line)
            m = re.search(pattern, line)
            if m:
                return m
            check(line and time.time() < deadline, "server printed no " + what)
            check(self.proc.poll() is None, "server exited at start:\n" + self.stderr()[-2000:])

    def stop(self, sig=signal.SIGTERM):
        """Stop with sig (SIGKILL: a crash) and wait; start() may follow."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        if not self.proc.stdout.closed:
            self.out.append(self.proc.stdout.read().decode(errors="replace"))
            self.proc.stdout.close()
        if not self.log.closed:
            self.log.close()

    def healthy(self):
        try:
            return self.request("GET", "/healthz")[0] == 200
        except OSError:
            return False

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, body bytes, headers with lowercase names)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

    def metric(self, name, labels="", default=None):
        """The value of name{labels} in /metrics, or default when absent."""
        body = self.request("GET", "/metrics")[1].decode()
        m = re.search(r"^%s (\S+)$" % re.escape(name + labels), body, re.M)
        return float(m.group(1)) if m else default

    def stderr(self):
        """What this run of the server wrote to stderr so far."""
        with open(self.logpath, "rb") as f:
            f.seek(self.log_start)
            return f.read().decode(errors="replace")


class NotFoundUpstream:
    """An HTTP server that has nothing (404 to every request), counting
    them (count) and keeping their paths (paths)."""

    def __init__(self):
        import http.server
        import threading
        outer = self
        self.count, self.paths = 0, []

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.count += 1
                outer.paths.append(self.path)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def hanging_upstream():
    """A socket that accepts connections and never answers."""
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(64)
    return hang, "http://127.0.0.1:%d" % hang.getsockname()[1]


# ---- pprof (profile.proto) --------------------------------------------------------
#
# Field numbers are those of github.com/google/pprof's profile.proto,
# encoded by hand (varints and length-delimited fields): no protobuf
# package needed.  RawProfile takes ids as pprof has them; Profile, on top
# of it, takes stacks of function names.


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def vfield(field, n):
    return key(field, 0) + varint(n)


def bfield(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def packed(field, nums):
    return bfield(field, b"".join(varint(n) for n in nums))


def read_varint(b, pos):
    v, shift = 0, 0
    while True:
        v |= (b[pos] & 0x7f) << shift
        shift += 7
        pos += 1
        if not b[pos - 1] & 0x80:
            return v, pos


def pb_fields(b):
    """(field number, value) of a protobuf message (as pprof writes them):
    ints, or bytes when length-delimited."""
    pos = 0
    while pos < len(b):
        key, pos = read_varint(b, pos)
        if key & 7 == 0:
            v, pos = read_varint(b, pos)
        elif key & 7 == 2:
            n, pos = read_varint(b, pos)
            v, pos = b[pos:pos + n], pos + n
        else:
            raise AssertionError("pprof: wire type %d" % (key & 7))
        yield key >> 3, v


class RawProfile:
    """A profile by its tables, as pprof has them:

        p = RawProfile([("samples", "count"), ("cpu", "nanoseconds")], period=10_000_000)
        m = p.mapping(0x400000, 0x500000, "/app/shop", "ab12...")
        f = p.function("main", "/src/shop/main.c")
        loc = p.location(m, 0x401000, [(f, 12)])
        p.sample([loc_leaf, ..., loc_root], [3, 30_000_000])
        body = p.encode(time_ns, duration_ns)        # gzip'd bytes

    period_type: the last sample type unless given; False: none written."""

    def __init__(self, sample_types, period=0, period_type=None):
        self.strings = [""]
        self.index = {"": 0}
        self.sample_types = [(self.s(t), self.s(u)) for t, u in sample_types]
        pt = sample_types[-1] if period_type is None else period_type
        self.period_type = (self.s(pt[0]), self.s(pt[1])) if pt else None
        self.period = period
        self.mappings, self.functions, self.locations, self.samples = [], [], [], []

    def s(self, text):
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def mapping(self, start, limit, filename, build_id="", offset=0, symbolized=True, mid=None):
        """symbolized: has_functions, _filenames and _line_numbers set
        (the server then leaves the mapping alone)."""
        mid = mid or len(self.mappings) + 1
        body = (vfield(1, mid) + vfield(2, start) + vfield(3, limit) + vfield(4, offset) +
                vfield(5, self.s(filename)) + vfield(6, self.s(build_id)))
        if symbolized:
            body += vfield(7, 1) + vfield(8, 1) + vfield(9, 1)
        self.mappings.append(body)
        return mid

    def function(self, name, filename="", start_line=0):
        fid = len(self.functions) + 1
        self.functions.append(vfield(1, fid) + vfield(2, self.s(name)) + vfield(3, self.s(name)) +
                              vfield(4, self.s(filename)) + vfield(5, start_line))
        return fid

    def location(self, mapping_id, address, lines=(), lid=None):
        """lines: [(function_id, line)], innermost first; empty: an
        unsymbolized address, for the server to resolve (or not)."""
        lid = lid or len(self.locations) + 1
        body = vfield(1, lid) + vfield(2, mapping_id) + vfield(3, address)
        for fid, line in lines:
            body += bfield(4, vfield(1, fid) + vfield(2, line))
        self.locations.append(body)
        return lid

    def sample(self, location_ids, values, labels=None):
        """location_ids leaf first, as pprof orders them; labels {key:
        str (a string label) or int (a numeric one)}."""
        body = packed(1, location_ids) + packed(2, values)
        for k, v in (labels or {}).items():
            body += bfield(3, vfield(1, self.s(k)) + (vfield(2, self.s(v)) if isinstance(v, str)
                                                       else vfield(3, v)))
        self.samples.append(body)

    def tables(self):
        """Mappings, locations, functions and strings, encoded once for as
        long as none is added (a benchmark's profiles share them)."""
        k = (len(self.mappings), len(self.locations), len(self.functions), len(self.strings))
        if getattr(self, "_tables", (None,))[0] != k:
            out = bytearray()
            for m in self.mappings:
                out += bfield(3, m)
            for loc in self.locations:
                out += bfield(4, loc)
            for f in self.functions:
                out += bfield(5, f)
            for s in self.strings:
                out += bfield(6, s)
            self._tables = (k, bytes(out))
        return self._tables[1]

    def encode(self, time_ns=0, duration_ns=0, gzip=True):
        out = bytearray()
        for t, u in self.sample_types:
            out += bfield(1, vfield(1, t) + vfield(2, u))
        for s in self.samples:
            out += bfield(2, s)
        out += self.tables()
        if time_ns:
            out += vfield(9, time_ns)
        if duration_ns:
            out += vfield(10, duration_ns)
        if self.period_type:
            out += bfield(11, vfield(1, self.period_type[0]) + vfield(2, self.period_type[1]))
        if self.period:
            out += vfield(12, self.period)
        return gz.compress(bytes(out), compresslevel=1) if gzip else bytes(out)


class Profile:
    """A profile by its stacks of names (the profile tests):

        p = Profile(types=[("samples", "count"), ("cpu", "nanoseconds")],
                    period=("cpu", "nanoseconds", 10_000_000), time_ns=..., duration_ns=...)
        m = p.mapping(0x555555554000, 0x555555600000, 0, "/usr/bin/app", build_id="ab12...")
        p.sample(["main", "work", "hot"], [3, 30_000_000])          # root first, named frames
        p.sample(["main", (m, 0x555555555139)], [1, 10_000_000])     # a raw address in m
        data = p.encode(gzip=True)

    A name is one function (in NAME.c) at one location; a (mapping,
    address) frame is an unsymbolized location."""

    def __init__(self, types=(("samples", "count"), ("cpu", "nanoseconds")),
                 period=("cpu", "nanoseconds", 10_000_000), time_ns=0, duration_ns=0):
        self.raw = RawProfile(types, period[2] if period else 0,
                              (period[0], period[1]) if period else False)
        self.time_ns, self.duration_ns = time_ns, duration_ns
        self.locations = {}

    def mapping(self, start, limit, offset, filename, build_id=""):
        return self.raw.mapping(start, limit, filename, build_id, offset, symbolized=False)

    def _loc(self, frame):
        if frame not in self.locations:
            if isinstance(frame, tuple):  # (mapping id, address): unsymbolized
                self.locations[frame] = self.raw.location(frame[0], frame[1])
            else:
                fid = self.raw.function(frame, frame + ".c")
                self.locations[frame] = self.raw.location(0, 0, [(fid, 1)])
        return self.locations[frame]

    def sample(self, stack, values, labels=None):
        """stack root first; frames are names or (mapping id, address)."""
        self.raw.sample([self._loc(f) for f in reversed(stack)], list(values), labels)

    def encode(self, gzip=False):
        return self.raw.encode(self.time_ns, self.duration_ns, gzip)


def cpu_profile(stacks, time_ns=0, labels=None, period=10_000_000):
    """A Go-style CPU profile: stacks {"a;b;c": count} (root first)."""
    p = Profile(time_ns=time_ns, duration_ns=10_000_000_000, period=("cpu", "nanoseconds", period))
    for stack, n in stacks.items():
        p.sample(stack.split(";"), [n, n * period], labels)
    return p


# ---- HTTP/2 frames (RFC 9113), for OTLP/gRPC's tests and fuzz seeds -----------------

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(typ, flags, sid, payload=b""):
    """One frame: its 9-byte header (length, type, flags, stream), then payload."""
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + struct.pack(">I", sid) + payload


def hpack_literals(headers):
    """A header block of literals without indexing, no Huffman (RFC 7541
    6.2.2); names and values under 127 bytes."""
    out = b""
    for name, value in headers:
        n, v = name.encode(), value.encode()
        check(len(n) < 127 and len(v) < 127, "header too long for this encoder")
        out += b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v
    return out
