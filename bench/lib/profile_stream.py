"""profile_stream.py - a realistic stream of CPU profiles for the HTTP
benchmarks (bench/replica-query, bench/tenants), in Python: the stream of
pstore-bench (bench/profile-store/pstore_bench.c) as a client would push it.

Three services (checkout, cart, search: 8 + 6 + 6 pods, 20 series at a
time), each its own binary and Go-style function names (1,200 functions)
and 2,000 distinct stacks (paths in a random call tree, 8 to 40 frames,
runtime and libc leaves now and then).  Every `epoch` seconds each service
deploys a new version on new pods (new series), in which one function of
the service spends four times its samples (what a diff should find).  A
profile draws `samples` samples (1,500) from its service's stacks by a
Zipf law (s = 1.1), so it holds a few hundred distinct stacks and the heavy
ones recur in every profile.  Profiles are written as Go writes them
(samples/count and cpu/nanoseconds, period 10 ms, symbolized locations
with lines, mappings with build IDs) and gzip'd (level 1, Go's).

Drawing and encoding 1,500 samples in Python costs milliseconds, so each
(service, version) has a pool of `pool` encoded sample sets, drawn once;
a profile is one of them (chosen at random) with its own time and
duration appended (protobuf fields 9 and 10: a field given last wins, and
the pool's bodies carry none), then gzip'd.

    s = Stream(seed=1, epoch=6 * 3600)
    for t_ns in ...:
        for labels, body, samples in s.profiles(t_ns, interval_ns):
            POST /api/v1/profiles?<labels>  body
"""
import bisect
import gzip
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from ember_test import RawProfile, vfield  # noqa: E402

SERVICES = (("checkout", 8), ("cart", 6), ("search", 6))
NFUNCS, NSTACKS = 1200, 2000
PKGS = ("api", "pricing", "store", "cache", "auth", "render", "codec", "db", "queue",
        "metrics", "grpc", "http")
TYPES = ("Engine", "Client", "Server", "Handler", "Pool", "Encoder", "Tx", "Conn", "Batch",
         "Tracker")
VERBS = ("Compute", "Get", "Put", "Serve", "Encode", "Decode", "Flush", "Lookup", "Marshal",
         "Validate", "Run", "Close")
RUNTIME = ("runtime.mallocgc", "runtime.memmove", "runtime.mapaccess2", "runtime.gcBgMarkWorker",
           "runtime.scanobject", "runtime.futex", "syscall.Syscall", "runtime.selectgo")
LIBC = ("__memcpy_avx_unaligned_erms", "__GI___libc_write", "epoll_wait",
        "__pthread_mutex_lock", "malloc", "free")
PERIOD = 10_000_000


class Service:
    """One service's functions (name, file, library?) and stacks (function
    indexes, root first), and the Zipf law's cumulative weights."""

    def __init__(self, name, pods, rnd):
        self.name, self.pods = name, pods
        self.funcs = []
        for i in range(NFUNCS):
            pkg = rnd.choice(PKGS)
            if i < len(RUNTIME):
                self.funcs.append((RUNTIME[i], "/usr/lib/go-1.19/src/runtime/%s.go" %
                                   RUNTIME[i][8:], False))
            elif i < len(RUNTIME) + len(LIBC):
                self.funcs.append((LIBC[i - len(RUNTIME)],
                                   "./string/../sysdeps/x86_64/multiarch.S", True))
            else:
                self.funcs.append(("github.com/acme/%s/internal/%s.(*%s).%s%d" % (
                    name, pkg, rnd.choice(TYPES), rnd.choice(VERBS), i),
                    "/src/github.com/acme/%s/internal/%s/%s.go" % (name, pkg, VERBS[i % 12]),
                    False))
        self.stacks = []
        for k in range(NSTACKS):  # a stack extends a shorter one: shared callers
            base = self.stacks[rnd.randrange(k)] if k > 8 else []
            keep = int(len(base) * (0.5 + 0.5 * rnd.random())) if base else 0
            extra = min(max(2 + rnd.randrange(6), 8 - keep), 40 - keep)
            st = base[:keep] + [20 if keep + i == 0 else 20 + rnd.randrange(NFUNCS - 20)
                                for i in range(extra)]
            if rnd.randrange(3) == 0:
                st[-1] = rnd.randrange(len(RUNTIME) + len(LIBC))
            self.stacks.append(st)
        w = [1 / (k + 1) ** 1.1 for k in range(NSTACKS)]
        total, acc, self.cdf = sum(w), 0.0, []
        for x in w:
            acc += x / total
            self.cdf.append(acc)
        # The function a new version makes slower: the leaf of the 12th most
        # frequent stack (or the next) that is the service's own.
        self.slow = next(st[-1] for st in self.stacks[11:] if st[-1] >= 14)


class Stream:
    """The profiles of the three services; see the file's comment."""

    def __init__(self, seed=1, epoch=6 * 3600, samples=1500, pool=24):
        self.rnd = random.Random(seed)
        self.epoch, self.samples, self.pool = epoch, samples, pool
        self.services = [Service(n, p, self.rnd) for n, p in SERVICES]
        self.pools = {}  # (service index, version) -> [(raw body, samples)]

    def _encode(self, svc, version, rnd):
        """One sample set of svc's version: (raw pprof without time, samples)."""
        p = RawProfile([("samples", "count"), ("cpu", "nanoseconds")], PERIOD)
        bid = "%040x" % random.Random("%s-%d" % (svc.name, version)).getrandbits(160)
        binary = p.mapping(0x400000, 0x1400000, "/app/" + svc.name, bid)
        libc = p.mapping(0x7f3a00000000, 0x7f3a00200000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
                         "8a2b6f6f03c3a1a6a5d35d5f1c2b4d5e6f708192")
        counts = {}
        for _ in range(self.samples):
            k = bisect.bisect_left(svc.cdf, rnd.random())
            k = min(k, NSTACKS - 1)
            n = 4 if version % 2 and svc.stacks[k][-1] == svc.slow else 1
            counts[k] = counts.get(k, 0) + n
        locs = {}
        for k, n in counts.items():
            ids = []
            for depth, f in enumerate(svc.stacks[k]):
                if f not in locs:
                    name, file, lib = svc.funcs[f]
                    fid = p.function(name, file)
                    addr = (0x7f3a00020000 if lib else 0x401000) + 0x100 * f
                    locs[f] = p.location(libc if lib else binary, addr, [(fid, 10 + f % 200)])
                ids.append(locs[f])
            p.sample(list(reversed(ids)), [n, n * PERIOD])
        return p.encode(0, 0, gzip=False), sum(counts.values())

    def _body(self, s, version):
        key = (s, version)
        if key not in self.pools:
            rnd = random.Random("%d-%d" % (s, version))
            self.pools[key] = [self._encode(self.services[s], version, rnd)
                               for _ in range(self.pool)]
        return self.pools[key][self.rnd.randrange(self.pool)]

    def series(self, t_ns):
        """The label strings of the series live at t_ns (20)."""
        out = []
        version = t_ns // (self.epoch * 10**9)
        for svc in self.services:
            for pod in range(svc.pods):
                out.append("service_name=%s&version=v%d&pod=%s-%d-%d" % (
                    svc.name, version, svc.name, version, pod))
        return out

    def profiles(self, t_ns, duration_ns):
        """Every series' profile at t_ns: [(labels, gzip'd body, samples)]."""
        version = t_ns // (self.epoch * 10**9)
        labels, out, i = self.series(t_ns), [], 0
        for s, svc in enumerate(self.services):
            for pod in range(svc.pods):
                raw, n = self._body(s, version)
                body = gzip.compress(raw + vfield(9, t_ns) + vfield(10, duration_ns),
                                     compresslevel=1)
                out.append((labels[i], body, n))
                i += 1
        return out
