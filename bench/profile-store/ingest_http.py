#!/usr/bin/env python3
"""ingest_http.py - POST /api/v1/profiles of a real `ember serve`, with
symbolization included: the server's CPU time per profile.

    ingest_http.py EMBER BINARY PROFILES_DIR [N] [CONNECTIONS]

Starts EMBER serve on a free port with a fresh data directory, uploads
BINARY (the profiles' build ID, written by `pstore-ingest-bench -w`),
pushes one profile (the symbol index is built once), then N profiles
(default 600) over CONNECTIONS keep-alive connections (default 1), each
with labels service_name=bench and pod=pNN, and reads the server's CPU
time (utime + stime of /proc/PID/stat) before and after: profiles per
second per core = N / CPU seconds.  Prints "name value" lines.
"""
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

EMBER, BINARY, PDIR = sys.argv[1:4]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 600
CONNS = int(sys.argv[5]) if len(sys.argv) > 5 else 1
TMP = tempfile.mkdtemp(prefix="ember-ingest-http.")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    proc = subprocess.Popen([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", TMP,
                             "--log-level", "warn"], stdout=subprocess.PIPE)
    try:
        port = None
        while port is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", proc.stdout.readline().decode())
            port = int(m.group(1)) if m else None
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        token = open(os.path.join(TMP, "token")).read().strip()
        bid = subprocess.run(["readelf", "-n", BINARY], capture_output=True,
                             text=True).stdout.split("Build ID: ")[1].split()[0]
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        c.request("PUT", "/api/v1/artifacts/%s/executable" % bid, open(BINARY, "rb").read(),
                  {"Authorization": "Bearer " + token})
        assert c.getresponse().read() is not None
        bodies = [open(os.path.join(PDIR, f), "rb").read() for f in sorted(os.listdir(PDIR))]
        hdr = {"Authorization": "Bearer " + token}

        def push(conn, i):
            conn.request("POST", "/api/v1/profiles?service_name=bench&pod=p%02d" % (i % 20),
                         bodies[i % len(bodies)], hdr)
            r = conn.getresponse()
            body = r.read()
            assert r.status == 200, (r.status, body[:200])
            return body

        first = push(c, 0)
        assert b'"unresolved":[]' in first, first[:300]

        def worker(k):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            for i in range(k, N, CONNS):
                push(conn, i)

        c0, w0 = cpu_s(proc.pid), time.monotonic()
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(CONNS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        c1, w1 = cpu_s(proc.pid), time.monotonic()
        print("http_connections %d" % CONNS)
        print("http_server_cpu_us_per_profile %.1f" % ((c1 - c0) / N * 1e6))
        print("http_profiles_per_core_s %.0f" % (N / (c1 - c0)))
        print("http_wall_profiles_s %.0f" % (N / (w1 - w0)))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(TMP, ignore_errors=True)


main()
