#!/usr/bin/env python3
"""Symbol cache under a budget: many distinct binaries through one server.

    bench/symcache/run.py EMBER_BIN FIXTURES_DIR [--binaries N] [--budget-mb B]

Makes N distinct binaries from the fixtures (each a copy whose GNU build-ID
note is rewritten, so each has its own build ID and its own index), uploads
them to a fresh `ember serve --symbol-cache-mb B`, symbolizes each once,
then revisits earlier ones at random, and samples after every request the
server's ember_symbol_cache_bytes and its resident memory (VmRSS, VmHWM).
Prints a markdown table: the sum of all indexes against the budget, the
most the cache held, peak RSS, evictions and disk loads.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

FIXTURES = ["c_O2_pie", "cxx_O2", "rust_O2", "go_prog", "libfixture.so", "c_dwarf4"]


def build_id_note(data):
    """(offset, size) of the GNU build ID bytes of an ELF64 image."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    for i in range(shnum):
        sh = shoff + i * shentsize
        typ, = struct.unpack_from("<I", data, sh + 4)
        off, size = struct.unpack_from("<QQ", data, sh + 0x18)
        if typ != 7:  # SHT_NOTE
            continue
        p = off
        while p + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, p)
            name_at = p + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if ntype == 3 and data[name_at:name_at + 3] == b"GNU":
                return desc_at, descsz
            p = desc_at + ((descsz + 3) & ~3)
    raise SystemExit("no build ID note")


def variants(fixdir, n, outdir):
    out = []
    for i in range(n):
        name = FIXTURES[i % len(FIXTURES)]
        data = bytearray(open(os.path.join(fixdir, name), "rb").read())
        at, size = build_id_note(data)
        data[at:at + size] = hashlib.sha1(b"%d" % i).digest()[:size]
        path = os.path.join(outdir, "%s.%d" % (name, i))
        open(path, "wb").write(data)
        out.append((path, data[at:at + size].hex()))
    return out


class Server:
    def __init__(self, ember, data, budget_mb):
        self.proc = subprocess.Popen([ember, "serve", "--listen", "127.0.0.1:0", "--data", data,
                                     "--symbol-cache-mb", str(budget_mb)],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        while True:
            m = re.search(rb"127\.0\.0\.1:(\d+)", self.proc.stdout.readline())
            if m:
                self.port = int(m.group(1))
                break
        time.sleep(0.2)
        self.token = open(os.path.join(data, "token")).read().strip()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def req(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        r = self.conn.getresponse()
        return r.status, r.read()

    def metric(self, name):
        _, body = self.req("GET", "/metrics")
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    def status(self, key):
        for line in open("/proc/%d/status" % self.proc.pid):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember")
    ap.add_argument("fixtures")
    ap.add_argument("--binaries", type=int, default=300)
    ap.add_argument("--budget-mb", type=int, default=8)
    ap.add_argument("--revisits", type=int, default=300)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ember-symcache-bench.")
    try:
        bins = variants(a.fixtures, a.binaries, tmp)
        srv = Server(a.ember, os.path.join(tmp, "data"), a.budget_mb)
        for path, bid in bins:
            s, _ = srv.req("PUT", "/api/v1/artifacts/%s/executable?name=x" % bid,
                           open(path, "rb").read(), {"Authorization": "Bearer " + srv.token})
            assert s == 201, s
        rss0 = srv.status("VmRSS")
        max_cache, max_rss, sizes = 0, 0, {}
        order = [b for _, b in bins]
        rng = random.Random(1)
        order += [rng.choice(order) for _ in range(a.revisits)]
        t0 = time.time()
        for bid in order:
            body = json.dumps({"modules": [{"build_id": bid, "addresses": [4096, 8192]}]})
            s, out = srv.req("POST", "/api/v1/symbolize", body.encode())
            assert s == 200, (s, out[:200])
            err = json.loads(out)["modules"][0]["results"][0]["error"]
            assert err in (None, "no_symbols_at_address"), err
            before = srv.metric("ember_symbol_cache_bytes")
            sizes.setdefault(bid, before)
            max_cache = max(max_cache, before)
            max_rss = max(max_rss, srv.status("VmRSS"))
        elapsed = time.time() - t0
        ev = lambda e: int(srv.metric('ember_symbol_cache_events_total{event="%s"}' % e))
        hwm = srv.status("VmHWM")
        budget = a.budget_mb << 20
        idx_files = sum(os.path.getsize(os.path.join(r, f))
                        for r, _, fs in os.walk(os.path.join(tmp, "data", "blobs")) for f in fs
                        if open(os.path.join(r, f), "rb").read(8) == b"EMBERSYM")
        print("| figure | value |\n|---|---|")
        print("| distinct binaries (build IDs) | %d |" % len(bins))
        print("| requests (each binary once, then %d revisits) | %d in %.1f s |"
              % (a.revisits, len(order), elapsed))
        print("| saved index files, all binaries | %.1f MB |" % (idx_files / 1e6))
        print("| budget (--symbol-cache-mb) | %.1f MB |" % (budget / 1e6))
        print("| most the cache held (ember_symbol_cache_bytes) | %.2f MB (%s the budget) |"
              % (max_cache / 1e6, "within" if max_cache <= budget else "OVER"))
        print("| server RSS after uploads / max while symbolizing / peak (VmHWM) | %.1f / %.1f / %.1f MB |"
              % (rss0 / 1e6, max_rss / 1e6, hwm / 1e6))
        print("| builds / disk loads / evictions / over budget | %d / %d / %d / %d |"
              % (ev("build"), ev("disk_load"), ev("eviction"), ev("over_budget")))
        srv.stop()
        return 0 if max_cache <= budget else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
