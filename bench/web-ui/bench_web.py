#!/usr/bin/python3
"""bench/web-ui/bench_web.py - how fast the web UI shows a flame graph
(issue 17): one hour of 10-second CPU profiles from 20 series, pushed to a
real `ember serve` through POST /api/v1/profiles, then shown in Debian's
headless Chromium (through chromedriver, python3-selenium).

The stream is the profile store benchmark's (bench/profile-store/
pstore_bench.c) drawn again here: three services (checkout, cart, search;
8 + 6 + 6 pods), each its own binary and 1,200 Go-style functions with
source files; 2,000 distinct stacks per service as paths in a random call
tree (depth 8 to 40, runtime or libc leaves now and then); each profile
draws 1,500 samples from them by a Zipf law (s = 1.1); samples/count and
cpu/nanoseconds, period 10 ms, gzip'd.  (The same shape, not the same
bytes: Python's random numbers, not the C benchmark's.)

Measured, REPS times each, interleaved:
  ui_click_to_painted   a real click on "Show" until the flame graph (and
                        its status line) is painted: the event's time to
                        two animation frames after the draw;
  ui_fetch_flatten      of that, the worker's fetch, parse and flatten;
  ui_longest_task       the longest main-thread task (PerformanceObserver
                        'longtask', installed before the page loads)
                        from the click until the table is filled; 0 when
                        none reached 50 ms, the API's floor;
  peer_json_fetch       the same JSON fetched and parsed by the page
                        (fetch + JSON.parse on the main thread): what any
                        client of the API pays before drawing anything;
  peer_server_svg       the server's own flame graph (format=svg, the
                        flamegraph.pl kind) opened in the same browser:
                        navigation start to the load event.
Printed as "name value unit (detail)"; run.sh takes medians over runs.

Usage: bench_web.py EMBER_BIN [-r REPS] [-k] [--url URL]
  -k: keep the data directory; --url: measure a running server (no push).
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))
from ember_test import RawProfile as Profile  # noqa: E402

MS = 10_000_000
STEP_S = 10
HOUR_S = 3600
NSTACKS, NFUNCS, SAMPLES = 2000, 1200, 1500
SERVICES = [("checkout", 8), ("cart", 6), ("search", 6)]
PKGS = ["api", "db", "cache", "auth", "render", "queue", "rpc", "codec", "store", "log", "http", "sched"]
TYPES = ["Server", "Client", "Pool", "Conn", "Tx", "Encoder", "Decoder", "Cache", "Worker", "Batch"]
VERBS = ["Compute", "Get", "Put", "Serve", "Encode", "Decode", "Flush", "Lookup", "Marshal", "Validate",
         "Run", "Close"]
RUNTIME = ["runtime.mallocgc", "runtime.memmove", "runtime.mapaccess2", "runtime.gcBgMarkWorker",
           "runtime.scanobject", "runtime.futex", "syscall.Syscall", "runtime.selectgo"]
LIBC = ["__memcpy_avx_unaligned_erms", "__GI___libc_write", "epoll_wait", "__pthread_mutex_lock",
        "malloc", "free"]


class Service:
    """One service's binary, functions and stacks, and the pprof parts
    that do not change between its profiles."""

    def __init__(self, name, pods, rnd):
        self.name, self.pods = name, pods
        self.build_id = "".join(rnd.choice("0123456789abcdef") for _ in range(40))
        funcs = []
        for i in range(NFUNCS):
            if i < len(RUNTIME):
                funcs.append((RUNTIME[i], "/usr/lib/go-1.19/src/runtime/%s.go" % RUNTIME[i][8:], 0))
            elif i < len(RUNTIME) + len(LIBC):
                funcs.append((LIBC[i - len(RUNTIME)], "./string/../sysdeps/x86_64/multiarch.S", 1))
            else:
                pkg = rnd.choice(PKGS)
                funcs.append(("github.com/acme/%s/internal/%s.(*%s).%s%d" % (
                    name, pkg, rnd.choice(TYPES), rnd.choice(VERBS), i),
                    "/src/github.com/acme/%s/internal/%s/%s.go" % (name, pkg, VERBS[i % 12]), 0))
        self.stacks = []
        for k in range(NSTACKS):  # a stack extends a shorter one: shared callers
            base = rnd.randrange(k) if k > 8 else -1
            keep = int(len(self.stacks[base]) * (0.5 + 0.5 * rnd.random())) if base >= 0 else 0
            extra = 2 + rnd.randrange(6)
            depth = min(max(keep + extra, 8), 40)
            st = (self.stacks[base][:keep] if base >= 0 else []) + \
                 [20 + rnd.randrange(NFUNCS - 20) for _ in range(depth - keep)]
            if st[0] != 20:
                st[0] = 20  # one root: main
            if rnd.randrange(3) == 0:
                st[-1] = rnd.randrange(14)
            self.stacks.append(st)
        w = [1 / (k + 1) ** 1.1 for k in range(NSTACKS)]
        total = sum(w)
        self.cdf, acc = [], 0.0
        for x in w:
            acc += x / total
            self.cdf.append(acc)
        self.p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
        mids = [self.p.mapping(0x400000, 0x1400000, "/app/" + name, self.build_id),
                self.p.mapping(0x7F3A00000000, 0x7F3A00200000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
                               "8a2b6f6f03c3a1a6a5d35d5f1c2b4d5e6f708192")]
        self.loc = []
        for i, (fn, file, lib) in enumerate(funcs):
            fid = self.p.function(fn, file, 10)
            addr = (0x7F3A00020000 if lib else 0x401000) + 0x100 * i
            self.loc.append(self.p.location(mids[lib], addr, [(fid, 10 + i % 50)]))

    def profile(self, rnd, t_ns):
        counts = {}
        for _ in range(SAMPLES):
            u = rnd.random()
            lo, hi = 0, NSTACKS - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if self.cdf[mid] < u:
                    lo = mid + 1
                else:
                    hi = mid
            counts[lo] = counts.get(lo, 0) + 1
        self.p.samples = []
        for k, n in counts.items():
            self.p.sample([self.loc[f] for f in reversed(self.stacks[k])], [n, n * MS])
        return self.p.encode(t_ns, STEP_S * 10**9)


# ---- the server and the push ------------------------------------------------------


def start_server(ember, data):
    # the profiles fill a closed hour two hours back: older than the default window
    proc = subprocess.Popen([ember, "serve", "--listen", "127.0.0.1:0", "--data", data,
                             "--max-profile-age", "3h"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for line in proc.stdout:
        m = re.search(rb"web UI: (http://127\.0\.0\.1:(\d+)/)", line)
        if m:
            break
    else:
        sys.exit("bench: the server printed no URL")
    url, port = m.group(1).decode(), int(m.group(2))
    for _ in range(500):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.02)
    with open(os.path.join(data, "token")) as f:
        token = f.read().strip()
    return proc, url, port, token


def push_stream(port, token, t0_ns):
    """Every series' profiles of the hour, pushed by 2 threads (one
    connection each, kept alive)."""
    rnd = random.Random(0x9E3779B97F4A7C15)
    services = [Service(n, pods, rnd) for n, pods in SERVICES]
    jobs = []
    for s in services:
        for pod in range(s.pods):
            for k in range(HOUR_S // STEP_S):
                jobs.append((s, pod, k))
    errors, lock, done = [], threading.Lock(), [0]

    def worker(part, seed):
        r = random.Random(seed)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for s, pod, k in part:
            body = s.profile(r, t0_ns + (k + 1) * STEP_S * 10**9)
            q = urllib.parse.urlencode({"service_name": s.name, "pod": "%s-%d" % (s.name, pod),
                                        "version": "1.0"})
            c.request("POST", "/api/v1/profiles?" + q, body, {"Authorization": "Bearer " + token})
            r_ = c.getresponse()
            text = r_.read()
            with lock:
                done[0] += 1
                if r_.status != 200:
                    errors.append("%d %s" % (r_.status, text[:200]))
        c.close()

    t = time.time()
    threads = [threading.Thread(target=worker, args=(jobs[i::2], i)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        sys.exit("bench: %d pushes failed, first: %s" % (len(errors), errors[0]))
    return len(jobs), time.time() - t


# ---- the browser ----------------------------------------------------------------------

LONGTASKS = """
window.__long = [];
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) window.__long.push({start: e.startTime, dur: e.duration});
}).observe({type: 'longtask', buffered: true});
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service as Driver
    o = Options()
    o.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,1000", "--force-device-scale-factor=1",
                 "--user-data-dir=" + tempfile.mkdtemp(prefix="ember-bench-chromium.")]:
        o.add_argument(flag)
    d = webdriver.Chrome(service=Driver("/usr/bin/chromedriver"), options=o)
    d.set_script_timeout(60)
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LONGTASKS})
    return d


def wait(d, script, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = d.execute_script(script)
        if v:
            return v
        time.sleep(0.01)
    sys.exit("bench: timed out waiting for: " + script)


def ui_once(d):
    """Click Show, wait for the graph and then the table; the figures."""
    from selenium.webdriver.common.by import By
    n = d.execute_script("return window.emberPerf.renders.length")
    d.find_element(By.ID, "apply").click()
    wait(d, "return window.emberPerf.renders.length > %d" % n)
    wait(d, "return document.querySelectorAll('#top tbody tr').length > 0")
    time.sleep(0.3)  # a long task that ends after the table is counted too
    r = d.execute_script("return window.emberPerf.renders[window.emberPerf.renders.length - 1]")
    tasks = d.execute_script("return window.__long.filter((e) => e.start + e.duration >= arguments[0])",
                             r["click"])
    return {"click_to_painted": r["painted"] - r["click"], "fetch_flatten": r["loaded"] - r["start"],
            "longest": max([t["dur"] for t in tasks] or [0]), "frames": r["frames"], "bytes": r["bytes"]}


def json_once(d, api):
    return d.execute_async_script("""
const done = arguments[arguments.length - 1], t0 = performance.now();
fetch(arguments[0]).then((r) => r.text()).then((t) => { JSON.parse(t); done(performance.now() - t0); });
""", api)


def svg_once(d, url):
    d.get(url)
    wait(d, "return performance.timing.loadEventEnd > 0")
    return d.execute_script("return performance.timing.loadEventEnd - performance.timing.navigationStart")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember")
    ap.add_argument("-r", type=int, default=7)
    ap.add_argument("-k", action="store_true")
    ap.add_argument("--url")
    a = ap.parse_args()
    data = tempfile.mkdtemp(prefix="ember-bench-web.")
    proc = None
    now_s = int(time.time())
    t0_ns = (now_s - 2 * HOUR_S) // HOUR_S * HOUR_S * 10**9  # a round hour, in the past
    try:
        if a.url:
            url = a.url
        else:
            proc, url, port, token = start_server(a.ember, data)
            n, secs = push_stream(port, token, t0_ns)
            print("pushed %d profiles in %.1f s (%.0f profiles/s, 2 connections)" % (n, secs, n / secs))
        sel = {"type": "process_cpu:cpu:nanoseconds:cpu:nanoseconds", "from": str(t0_ns // 10**6),
               "to": str(t0_ns // 10**6 + HOUR_S * 1000 + 1000)}
        page = url + "?" + urllib.parse.urlencode(sel)
        api = url + "api/v1/query?" + urllib.parse.urlencode(dict(sel, format="json"))
        svg = url + "api/v1/query?" + urllib.parse.urlencode(dict(sel, format="svg"))
        d = browser()
        res = {"click_to_painted": [], "fetch_flatten": [], "longest": [], "json": [], "svg": []}
        try:
            d.get(page)
            wait(d, "return window.emberPerf && window.emberPerf.renders.length > 0")
            first = ui_once(d)  # warms the server's and the browser's caches
            print("frames %d, json_bytes %d" % (first["frames"], first["bytes"]))
            for _ in range(a.r):
                d.get(page)
                wait(d, "return window.emberPerf && window.emberPerf.renders.length > 0")
                u = ui_once(d)
                for k in ("click_to_painted", "fetch_flatten", "longest"):
                    res[k].append(u[k])
                res["json"].append(json_once(d, api))
                res["svg"].append(svg_once(d, svg))
        finally:
            d.quit()
        med = {k: statistics.median(v) for k, v in res.items()}
        fmt = lambda v: ", ".join("%.0f" % x for x in v)  # noqa: E731
        print("ui_click_to_painted %.0f ms (median of %d: %s)" % (med["click_to_painted"], a.r, fmt(res["click_to_painted"])))
        print("ui_fetch_flatten %.0f ms (%s)" % (med["fetch_flatten"], fmt(res["fetch_flatten"])))
        print("ui_longest_task %.0f ms (max %.0f; 0: none of 50 ms or more)" % (med["longest"], max(res["longest"])))
        print("peer_json_fetch %.0f ms (%s)" % (med["json"], fmt(res["json"])))
        print("peer_server_svg %.0f ms (%s)" % (med["svg"], fmt(res["svg"])))
        print("ratio_ui_to_json %.2f x" % (med["click_to_painted"] / med["json"]))
        print("ratio_ui_to_svg %.2f x" % (med["click_to_painted"] / med["svg"]))
        return 0
    finally:
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        if not a.k:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
