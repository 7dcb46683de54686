#!/usr/bin/env python3
"""End-to-end tests of the profile routes of `ember serve` (issue 15).

    test_profiles.py EMBER FIXTURES_DIR CASE      (CASE: test_profiles__*)

Each case starts its own real `ember serve` on a free loopback port with a
fresh data directory, waits for /healthz (never a bare sleep), and drives
it with real clients: HTTP from Python, `ember query`/`ember diff`,
`go tool pprof` reading the query URL, xmllint on the flame graphs,
Grafana's Pyroscope SDK for Node.js (tests/profiles/node), a Go program
serving net/http/pprof for --scrape.  Profiles are written by
tests/ember_test.py (profile.proto by hand) or by the real clients.  A case that
cannot run here (no Go, no Node.js modules) exits 77 with the reason.
"""
import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import Profile, check, cpu_profile, skip, wait_for  # noqa: E402
from profiles_test import (CHILDREN, EMBER, FIX, NOW_S, SEC, TMP, OtlpRequest, Server,  # noqa: E402,F401
                           folded, ms, otlp_folded, otlp_post,
                           otlp_sample_request, otlp_stubs, q, raw_profile, run_case,
                           upload_executable)


S3 = {"main;work;hot": 30, "main;work;cold": 10, "main;idle": 5}
T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour


# ---- ingest and query ------------------------------------------------------------


def test_profiles__push_then_query_every_format():
    srv = Server()
    a = srv.push_ok(cpu_profile(S3, T0).encode(gzip=True), "service_name=checkout&version=2.4")
    check(a["profiles"] == 1 and a["samples"] == 45 and a["resolved_samples"] == 45, a)
    check(a["time_ms"] == T0 // 1_000_000, a)
    # the same profile raw, another series (the agent's tests send zstd)
    raw = cpu_profile(S3, T0 + 10 * SEC).encode()
    srv.push_ok(raw, "service_name=checkout&version=2.5")
    # a gzip'd pprof sent again with Content-Encoding: gzip (two layers)
    srv.push_ok(gzip.compress(cpu_profile(S3, T0).encode(gzip=True)), "service_name=cart2",
                headers={"Content-Encoding": "gzip"})
    sel = '{service_name="checkout"}'
    check(folded(srv, sel) == {"main;work;hot": 600000000, "main;work;cold": 200000000,
                               "main;idle": 100000000}, folded(srv, sel))
    check(folded(srv, '{service_name="checkout",version=~"2\\\\.4.*"}')["main;work;hot"] ==
          300000000, "regex selector")
    t = srv.json("/api/v1/query?type=cpu&format=json&query=" + q(sel))
    check(t["type"] == "process_cpu:cpu:nanoseconds:cpu:nanoseconds" and t["unit"] ==
          "nanoseconds" and t["total"] == 900000000 and t["profiles"] == 2, t)
    main = t["tree"]["children"][0]
    check(t["tree"]["name"] == "total" and main["name"] == "main" and
          main["file"] == "main.c" and main["total"] == 900000000, t["tree"])
    check(t["min_time_ms"] == T0 // 1_000_000, t)
    top = srv.json("/api/v1/query?type=samples&format=top&query=" + q(sel))
    check(top["rows"][0] == {"name": "hot", "file": "hot.c", "self": 60, "self_pct": 66.6667,
                             "total": 60, "total_pct": 66.6667}, top["rows"][0])
    body, hdr = srv.get("/api/v1/query?type=cpu&format=top-text&limit=2&query=" + q(sel))
    check(hdr["x-ember-profiles"] == "2" and hdr["x-ember-total"] == "900000000", hdr)
    check(re.search(r"600\.00 ms\s+66\.67%\s+66\.67%\s+600\.00 ms\s+66\.67%\s+hot",
                    body.decode()), body)
    check(len(body.decode().strip().splitlines()) == 5, "limit=2: " + body.decode())
    svg, hdr = srv.get("/api/v1/query?type=cpu&format=svg&title=t&query=" + q(sel))
    check(hdr["content-type"] == "image/svg+xml" and b"<title>hot" in svg, svg[:200])
    xmllint = packages.which("xmllint")
    if xmllint:
        path = os.path.join(TMP, "q.svg")
        with open(path, "wb") as f:
            f.write(svg)
        r = subprocess.run([xmllint, "--noout", path], capture_output=True, text=True)
        check(r.returncode == 0, "xmllint: " + r.stderr)
    pb, hdr = srv.get("/api/v1/query?type=cpu&format=pprof&query=" + q(sel))
    check(pb[:2] == b"\x1f\x8b" and hdr["content-type"] == "application/octet-stream", pb[:8])
    # an empty selection is an empty answer
    e = srv.json("/api/v1/query?type=cpu&format=json&query=" + q('{service_name="none"}'))
    check(e["total"] == 0 and e["profiles"] == 0 and "children" not in e["tree"], e)
    # cart2: the doubly compressed body was read
    check(folded(srv, '{service_name="cart2"}')["main;idle"] == 50000000, "two gzip layers")
    # the other two matchers
    check(set(folded(srv, '{service_name="checkout",version!="2.4"}').values()) ==
          {300000000, 100000000, 50000000}, "!= selector")
    check(folded(srv, '{service_name!~"check.*"}') == folded(srv, '{service_name="cart2"}'),
          "!~ selector")
    # labels from the profile's own sample labels, beside the query's
    srv.push_ok(cpu_profile(S3, T0, labels={"span": "db"}).encode(), "service_name=own")
    check(folded(srv, '{service_name="own",span="db"}')["main;idle"] == 50000000,
          "a sample label as a series label")
    # no time in the profile: the arrival time
    before = int(time.time() * 1000)
    a = srv.push_ok(cpu_profile(S3).encode(), "service_name=arrival")
    check(before - 1 <= a["time_ms"] <= int(time.time() * 1000) + 1, "arrival time: %r" % a)
    # zstd, declared and by its magic alone
    zstd = packages.which("zstd")
    if not zstd:
        skip(packages.missing("zstd", "zstd compresses a body"))
    zs = subprocess.run([zstd, "-q", "-c"], input=raw, capture_output=True, check=True).stdout
    srv.push_ok(zs, "service_name=zs1", headers={"Content-Encoding": "zstd"})
    srv.push_ok(zs, "service_name=zs2")
    check(folded(srv, '{service_name=~"zs."}')["main;work;hot"] == 600000000, "zstd bodies")


def chromium_headless():
    """Debian's Chromium, headless, through chromedriver (the flags of
    tests/web: no background networking on a closed net); skips (77)
    with the package when one is missing, and with the reason when
    Chromium cannot start (as tests/web does: a chroot without
    /etc/hosts, where chromedriver's localhost does not resolve)."""
    chromium, driver = packages.which("chromium"), packages.which("chromedriver")
    if not chromium or not driver:
        skip(packages.missing("chromium" if not chromium else "chromedriver"))
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        skip(packages.missing("/usr/lib/python3/dist-packages/selenium",
                              "python3-selenium cannot be imported (%s)" % e))
    o = Options()
    o.binary_location = chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-extensions", "--window-size=1300,900",
                 "--user-data-dir=" + tempfile.mkdtemp(dir=TMP, prefix="chromium.")]:
        o.add_argument(flag)
    try:
        return webdriver.Chrome(service=Service(driver), options=o)
    except Exception as e:  # noqa: BLE001 - whatever keeps Chromium from starting, as test_web.py
        skip("chromium cannot start headless here: %s" % str(e).strip().splitlines()[0])


def test_profiles__flamegraph_svg_works_in_a_browser():
    """The query's SVG opened alone (its own script, no page around it) in
    headless Chromium, driven by the real mouse and keyboard: hover names a
    frame with its value and share, a click zooms into it (its callers full
    width, the rest hidden), Escape restores, ?s=REGEX highlights the
    matches and sums their share."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=fg")
    url = srv.url + "/api/v1/query?type=cpu&format=svg&query=" + q('{service_name="fg"}')
    d = chromium_headless()
    try:
        d.get(url)
        find = ("return Array.from(document.querySelectorAll('#frames g')).find(g => "
                "g.getAttributeNS('urn:ember:flamegraph', 'n') === arguments[0])")
        g = {n: d.execute_script(find, n) for n in ("main", "work", "hot", "idle")}
        check(all(g.values()), "frames: %r" % g)
        W = float(d.execute_script("return document.documentElement.getAttribute('width')"))

        def rect(n):
            return d.execute_script("var r = arguments[0].querySelector('rect'); return ["
                                    "+r.getAttribute('x'), +r.getAttribute('width'), "
                                    "arguments[0].style.display]", g[n])

        def details():
            return d.execute_script("return document.getElementById('details').textContent")
        ActionChains(d).move_to_element(g["hot"].find_element("css selector", "rect")).perform()
        wait_for(lambda: details().startswith("hot ("), "the details of hot", 10)
        check(details() == "hot (300.00 ms, 30 samples, 66.67%)", details())
        work0, hot0 = rect("work"), rect("hot")
        ActionChains(d).click(g["work"].find_element("css selector", "rect")).perform()
        wait_for(lambda: rect("idle")[2] == "none", "the zoom to hide idle", 10)
        check(abs(rect("work")[1] - (W - 20)) < 0.01 and abs(rect("main")[1] - (W - 20)) < 0.01,
              "zoomed: work %r main %r of %r" % (rect("work"), rect("main"), W))
        check(abs(rect("hot")[1] - hot0[1] * (W - 20) / work0[1]) < 0.01, "hot scaled: %r"
              % rect("hot"))
        ActionChains(d).send_keys(Keys.ESCAPE).perform()
        wait_for(lambda: rect("idle")[2] == "", "Escape to restore", 10)
        check(rect("work") == work0 and rect("hot") == hot0, "restored: %r" % rect("work"))
        d.get(url + "&s=" + q("^(hot|idle)$"))
        fills = d.execute_script("return Array.from(document.querySelectorAll('#frames g'))"
                                 ".map(g => [g.getAttributeNS('urn:ember:flamegraph', 'n'), "
                                 "g.querySelector('rect').getAttribute('fill')])")
        pink = sorted(n for n, f in fills if f == "rgb(230,0,230)")
        check(pink == ["hot", "idle"], "highlighted: %r" % fills)
        matched = d.execute_script("return document.getElementById('matched').textContent")
        check(matched == "Matched: 77.78%", matched)  # (30 + 5) of 45 samples
    finally:
        d.quit()


def test_profiles__go_tool_pprof_reads_the_query_url():
    go = packages.which("go")
    if not go:
        skip(packages.missing("go", "`go tool pprof` reads the query URL"))
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(gzip=True), "service_name=checkout")
    url = "%s/api/v1/query?query=%s&type=cpu&from=now-1h&format=pprof" % (
        srv.url, q('{service_name="checkout"}'))
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"),
               PPROF_TMPDIR=os.path.join(TMP, "pprof"))
    r = subprocess.run([go, "tool", "pprof", "-top", "-symbolize=none", url],
                       capture_output=True, text=True, env=env, timeout=180)
    check(r.returncode == 0, "go tool pprof: " + r.stderr[-2000:])
    rows = {f[-1]: f for f in (line.split() for line in r.stdout.splitlines())
            if len(f) == 6 and f[1].endswith("%") and f[4].endswith("%")}
    check(rows.get("hot", [""])[0] == "300ms" and rows["cold"][0] == "100ms" and
          rows["main"][3] == "450ms", "go tool pprof -top:\n" + r.stdout)
    # Pyroscope's /ingest takes the sample period from the pprof when it has
    # one, from sampleRate when not: what the query's pprof says (-raw)
    for name, period, want in (("p5", 5_000_000, 5_000_000), ("p0", 0, 10_000_000)):
        p = Profile(types=[("samples", "count")], time_ns=(NOW_S - 5) * SEC,
                    period=("cpu", "nanoseconds", period) if period else None)
        p.sample(["main", "go_work"], [4])
        st, body, _ = srv.push(p.encode(gzip=True), path="/ingest",
                               labels="name=%s&format=pprof&sampleRate=100" % name)
        check(st == 200, "/ingest: %d %r" % (st, body))
        url = "%s/api/v1/query?type=samples&format=pprof&query=%s" % (
            srv.url, q('{service_name="%s"}' % name))
        r = subprocess.run([go, "tool", "pprof", "-raw", "-symbolize=none", url],
                           capture_output=True, text=True, env=env, timeout=180)
        check(r.returncode == 0 and "PeriodType: cpu nanoseconds" in r.stdout and
              "Period: %d\n" % want in r.stdout, "%s: go tool pprof -raw:\n%s%s"
              % (name, r.stdout[:400], r.stderr[-400:]))


def test_profiles__discovery_series_and_coverage():
    srv = Server()
    for i, v in enumerate(["2.3", "2.4"]):
        for k in range(3):
            srv.push_ok(cpu_profile(S3, T0 + (i * 100 + k * 10) * SEC).encode(),
                        "service_name=checkout&version=%s&host=h%d" % (v, k))
    srv.push_ok(cpu_profile({"a;b": 1}, T0).encode(), "service_name=cart")
    names = srv.json("/api/v1/labels")["names"]
    check(names == ["__name__", "host", "service_name", "version"], names)
    check(srv.json("/api/v1/labels?query=" + q('{service_name="cart"}'))["names"] ==
          ["__name__", "service_name"], "labels of a selection")
    v = srv.json("/api/v1/labels/version/values")
    check(v == {"name": "version", "values": ["2.3", "2.4"]}, v)
    types = srv.json("/api/v1/profile-types")["types"]
    check([t["id"] for t in types] == ["process_cpu:cpu:nanoseconds:cpu:nanoseconds",
                                       "process_cpu:samples:count:cpu:nanoseconds"], types)
    check(types[0] == {"id": "process_cpu:cpu:nanoseconds:cpu:nanoseconds",
                       "name": "process_cpu", "sample_type": "cpu",
                       "sample_unit": "nanoseconds", "period_type": "cpu",
                       "period_unit": "nanoseconds"}, types[0])
    frm = T0 // SEC - T0 // SEC % 60
    s = srv.json("/api/v1/series?type=samples&from=%d&to=%d&step=1m&group_by=version&query=%s"
                 % (frm, frm + 600, q('{service_name="checkout"}')))
    check(s["step_ms"] == 60000 and s["points"] == 10 and s["from_ms"] == frm * 1000, s)
    lines = {tuple(x["labels"].items()): x["values"] for x in s["series"]}
    check(sum(lines[(("version", "2.3"),)]) == 135 and sum(lines[(("version", "2.4"),)]) == 135,
          lines)
    one = srv.json("/api/v1/series?type=cpu&from=%d&to=%d&step=10m" % (frm, frm + 600))
    check(one["series"][0]["labels"] == {} and one["series"][0]["values"][0] == 2710000000, one)
    cov = srv.json("/api/v1/coverage")
    check(cov["profiles"] == 7 and cov["resolved_pct"] == 100 and cov["build_ids"] == [], cov)
    # what the request got wrong, said
    for path, want in [("/api/v1/query?type=cpu&query=" + q("{bad"), "selector"),
                       ("/api/v1/query?type=nosuch", "unknown profile type"),
                       ("/api/v1/query?type=cpu&from=yesterday", "from: 'yesterday'"),
                       ("/api/v1/query?type=cpu&from=now&to=now-1h", "range is empty"),
                       ("/api/v1/query?type=cpu&format=gif", "format: 'gif'"),
                       ("/api/v1/series?type=cpu&step=1s&from=0", "points"),
                       ("/api/v1/series?type=cpu&step=fast", "step:")]:
        st, body, _ = srv.request("GET", path)
        check(st == 400 and want in body.decode(), "%s: %d %r" % (path, st, body))
    st, body, _ = srv.request("GET", "/api/v1/nothing")
    check(st == 404, "unknown route: %d" % st)
    st, _, hdr = srv.request("POST", "/api/v1/query")
    check(st == 405 and "GET" in hdr.get("allow", ""), "POST on a read: %d" % st)


def test_profiles__diff_puts_the_slowed_function_first():
    srv = Server()
    base = {"main;serve;parse": 300, "main;serve;encode": 300, "main;serve;slow_path": 20,
            "main;serve;gone": 30, "main;idle": 350}
    new = dict(base, **{"main;serve;slow_path": 120})
    new.pop("main;serve;gone")  # vanished in version 2
    for k in range(6):
        b, n = dict(base), dict(new)
        if k == 0:  # 2 -> 5 samples, once: +150%, and noise
            b["main;serve;few"], n["main;serve;few"] = 2, 5
        srv.push_ok(cpu_profile(b, T0 + k * 10 * SEC).encode(), "service_name=app&version=1")
        srv.push_ok(cpu_profile(n, T0 + k * 10 * SEC).encode(), "service_name=app&version=2")
    d = srv.json("/api/v1/diff?type=cpu&base_query=%s&new_query=%s" %
                 (q('{version="1"}'), q('{version="2"}')))
    check(d["rows"][0]["name"] == "slow_path" and d["rows"][0]["flagged"], d["rows"][:2])
    rows = {r["name"]: r for r in d["rows"]}
    few, gone = rows["few"], rows["gone"]
    check(few["rel_self"] > 1 and not few["flagged"] and abs(few["z"]) < 3 and
          few["noise_self_pct"] > 0, "2 -> 5 samples flagged: %r" % few)
    check(gone["new_self_pct"] == 0 and gone["delta_self_pct"] < 0 and gone["flagged"] and
          d["rows"][-1]["name"] == "gone", "the vanished function: %r" % gone)
    check(d["base_profiles"] == 6 and d["new_profiles"] == 6, d)
    # Pyroscope's names read too, and the other outputs
    d2 = srv.json("/api/v1/diff?type=cpu&leftQuery=%s&rightQuery=%s&format=json" %
                  (q('{version="1"}'), q('{version="2"}')))
    serve = [c for c in d2["tree"]["children"][0]["children"] if c["name"] == "serve"][0]
    slow = [c for c in serve["children"] if c["name"] == "slow_path"][0]
    check(slow["base_self"] == 6 * 20 * 10_000_000 and slow["new_self"] == 6 * 120 * 10_000_000,
          slow)
    body, _ = srv.get("/api/v1/diff?type=samples&format=folded&base_query=%s&new_query=%s" %
                      (q('{version="1"}'), q('{version="2"}')))
    check("main;serve;slow_path 120 720\n" in body.decode() and
          "main;serve;gone 180 0\n" in body.decode(), body)
    svg, hdr = srv.get("/api/v1/diff?type=cpu&format=svg&base_query=%s&new_query=%s" %
                       (q('{version="1"}'), q('{version="2"}')))
    check(hdr["content-type"] == "image/svg+xml" and b"slow_path" in svg, "diff svg")
    pb, hdr = srv.get("/api/v1/diff?type=cpu&format=pprof&base_query=%s&new_query=%s" %
                      (q('{version="1"}'), q('{version="2"}')))
    check(pb[:2] == b"\x1f\x8b" and hdr["x-ember-new-profiles"] == "6", "diff pprof")
    # ember diff against the server and offline on two files
    r = subprocess.run([EMBER, "diff", "--server", srv.url, "--type", "cpu", "--base",
                        '{version="1"}', "--new", '{version="2"}'], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and r.stdout.splitlines()[3].endswith("! slow_path"),
          "ember diff --server:\n%s%s" % (r.stdout, r.stderr))
    bpath, npath = os.path.join(TMP, "b.pb.gz"), os.path.join(TMP, "n.pb.gz")
    with open(bpath, "wb") as f:
        f.write(cpu_profile(base).encode(gzip=True))
    with open(npath, "wb") as f:
        f.write(cpu_profile(new).encode(gzip=True))
    r = subprocess.run([EMBER, "diff", bpath, npath, "--format", "table"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    rows = json.loads(r.stdout)["rows"]
    check(rows[0]["name"] == "slow_path" and rows[0]["flagged"], rows[:2])
    r = subprocess.run([EMBER, "query", "--server", srv.url, "--type", "cpu",
                        '{version="2"}', "--limit", "1"], capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.splitlines()[-1].split()[-1] == "idle", r.stdout)
    r = subprocess.run([EMBER, "query", "--server", srv.url, "--type", "nosuch"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "unknown profile type 'nosuch'" in r.stderr, r.stderr)


# ---- writes: tokens and limits ------------------------------------------------------------


# ---- hostile reads and writes (issue 23) ------------------------------------------------


def store_error_lines(srv):
    """The ember_store_errors_total samples of /metrics (none: no store error)."""
    body = srv.request("GET", "/metrics")[1].decode()
    return re.findall(r"^ember_store_errors_total\{.*$", body, re.M)


def xml_parses(svg, name):
    xmllint = packages.which("xmllint")
    if not xmllint:
        skip(packages.missing("xmllint", "xmllint parses the flame graphs"))
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(svg)
    r = subprocess.run([xmllint, "--noout", path], capture_output=True, text=True)
    check(r.returncode == 0, "xmllint %s: %s" % (name, r.stderr))


def test_profiles__empty_range_is_an_empty_answer_never_a_store_error():
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=app")
    # an hour before the one profile, and everything in a store that holds nothing
    before = "from=%s&to=%s" % (ms(NOW_S - 3 * 3600), ms(NOW_S - 2 * 3600))
    bare = Server()
    cases = [(srv, "query", f, before) for f in
             ("json", "pprof", "folded", "top", "top-text", "svg")]
    cases += [(srv, "diff", f, before) for f in
              ("table", "table-text", "json", "folded", "svg", "pprof")]
    cases += [(bare, route, f, "from=0") for _, route, f, _ in cases]
    for s_, route, fmt, rng in cases:
        path = "/api/v1/%s?type=cpu&format=%s&%s&query=%s" % (route, fmt, rng, q("{}"))
        st, body, hdr = s_.request("GET", path)
        check(st == 200, "%s: HTTP %d %r" % (path, st, body[:200]))
        what = "%s %s" % (route, fmt)
        if fmt == "svg":
            check(hdr["content-type"] == "image/svg+xml" and
                  b"no profiles in " in body, what + ": " + body[-300:].decode())
            xml_parses(body, "empty-%s.svg" % route)
        elif fmt == "pprof":
            check(body[:2] == b"\x1f\x8b" and b"nanoseconds" in gzip.decompress(body), what)
        elif fmt in ("folded",):
            check(body == b"", what + ": %r" % body)
        elif not fmt.endswith("-text"):
            j = json.loads(body)
            check(j.get("total", 0) == 0 and j.get("rows", []) == [] and
                  "children" not in j.get("tree", {}), what + ": %r" % j)
        if route == "query":
            check(hdr["x-ember-profiles"] == "0" and hdr["x-ember-total"] == "0", hdr)
    check(store_error_lines(srv) == [] and store_error_lines(bare) == [],
          "an empty range counted as a store error: %r" %
          (store_error_lines(srv) + store_error_lines(bare)))


HOSTILE_NAMES = [b"ffff_\xef\xbf\xbf", b"fffe_\xef\xbf\xbe", b"ctl_\x01\x1b_x",
                 b"byte_\xff_x", b"surrogate_\xed\xa0\x80"]


def hostile_profile(time_ns, extra=0):
    """A profile whose function names hold what XML forbids and bytes that
    are not UTF-8: main;<each name>, one sample each."""
    p = ember_test.RawProfile([("samples", "count"), ("cpu", "nanoseconds")], 10_000_000)
    main = p.location(0, 0, [(p.function("main", "main.c"), 1)])
    for i, name in enumerate(HOSTILE_NAMES):
        loc = p.location(0, 0, [(p.function(name, b"f\x02ile_\xef\xbf\xbf.c"), 1)])
        p.sample([loc, main], [1 + i + extra, (1 + i + extra) * 10_000_000])
    return p.encode(time_ns)


def text_json(body, what):
    """body as JSON, its bytes read as strict UTF-8 (json.loads alone lets
    encoded surrogates through)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, "%s: not UTF-8: %s" % (what, e))
    check(not re.search("[\ud800-\udfff\ufffe\uffff]", text), what + ": a forbidden character")
    return json.loads(text)


def test_profiles__names_xml_forbids_give_valid_svg_and_json():
    srv = Server()
    srv.push_ok(hostile_profile(T0), "service_name=a")
    srv.push_ok(hostile_profile(T0, 3), "service_name=b")
    sel = "type=cpu&from=0&query=" + q("{}")
    sides = "&base_query=%s&new_query=%s" % (q('{service_name="a"}'), q('{service_name="b"}'))
    for route, fmt in (("query", "svg"), ("diff", "svg")):
        path = "/api/v1/%s?%s&format=%s%s" % (route, sel, fmt, sides if route == "diff" else "")
        svg, _ = srv.get(path)
        xml_parses(svg, "%s.svg" % route)
        check(b'e:n="ffff_\xef\xbf\xbd"' in svg and b'e:n="fffe_\xef\xbf\xbd"' in svg and
              b'e:n="surrogate_\xef\xbf\xbd' in svg, route)
    for route, fmt in (("query", "json"), ("query", "top"), ("diff", "json"),
                       ("diff", "table")):
        body, _ = srv.get("/api/v1/%s?%s&format=%s%s" % (route, sel, fmt,
                                                         sides if route == "diff" else ""))
        j = text_json(body, route + " " + fmt)
        text = json.dumps(j)
        check("ctl_" in text and "byte_" in text and "surrogate_" in text, text[:300])


def test_profiles__a_pushed_type_cannot_hijack_the_cpu_alias():
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=real")
    # the same sample type under another name, and another unit
    fake = cpu_profile({"evil;hijack": 7}, T0).encode()
    srv.push_ok(fake, "service_name=evil&__name__=aaa_cpu")
    other = ember_test.RawProfile([("cpu", "count")], 1, ("cpu", "count"))
    f = other.function("evil2", "evil2.c")
    other.sample([other.location(0, 0, [(f, 1)])], [99])
    srv.push_ok(other.encode(T0), "service_name=evil2")
    ids = {t["id"] for t in srv.json("/api/v1/profile-types?from=0")["types"]}
    check({"aaa_cpu:cpu:nanoseconds:cpu:nanoseconds", "process_cpu:cpu:count:cpu:count",
           "process_cpu:cpu:nanoseconds:cpu:nanoseconds"} <= ids, ids)
    for typ in ("cpu", "process_cpu:cpu"):
        t = srv.json("/api/v1/query?type=%s&from=0&format=json&query=%s" % (typ, q("{}")))
        check(t["type"] == "process_cpu:cpu:nanoseconds:cpu:nanoseconds" and
              t["total"] == 450_000_000, "type=%s: %r" % (typ, t))
    # without the real one, an alias still answers, one type by the documented order
    bare = Server()
    bare.push_ok(other.encode(T0), "service_name=evil2")
    bare.push_ok(fake, "service_name=evil&__name__=aaa_cpu")
    t = bare.json("/api/v1/query?type=cpu&from=0&format=json&query=%s" % q("{}"))
    check(t["type"] == "aaa_cpu:cpu:nanoseconds:cpu:nanoseconds", t)


def test_profiles__writes_need_a_token_reads_none():
    tok = os.path.join(TMP, "ingest-token")
    with open(tok, "w") as f:
        f.write("ingest-only-token-0123456789\n")
    os.chmod(tok, 0o600)
    srv = Server(["--ingest-token-file", tok])
    data = cpu_profile(S3, T0).encode()
    st, body, hdr = srv.request("POST", "/api/v1/profiles?service_name=a", data)
    check(st == 401 and hdr.get("www-authenticate") == "Bearer", "no token: %d" % st)
    st, _, _ = srv.push(data, "service_name=a", token="wrong")
    check(st == 401, "wrong token: %d" % st)
    srv.push_ok(data, "service_name=a", token="ingest-only-token-0123456789")
    basic = "Basic " + __import__("base64").b64encode(b"any:" + srv.token.encode()).decode()
    st, body, _ = srv.request("POST", "/api/v1/profiles?service_name=b", data,
                              {"Authorization": basic})
    check(st == 200, "Basic with the token as password: %d %r" % (st, body))
    # the ingest token cannot upload debug info
    st, _, _ = srv.request("PUT", "/api/v1/artifacts/abcd/debuginfo", b"x",
                           {"Authorization": "Bearer ingest-only-token-0123456789"})
    check(st == 401, "ingest token uploading: %d" % st)
    check(srv.metric("ember_profiles_rejected_total", '{reason="unauthorized"}') == 2, "metric")
    check(srv.metric("ember_profiles_ingested_total", '{route="profiles"}') == 2, "ingested")
    check(len(folded(srv)) == 3, "reads need no token")


def test_profiles__trickled_write_closed_at_request_timeout():
    """A profile body trickled a byte every 0.5 s with a valid token (never
    idle long enough for the idle timeout) is cut at --request-timeout from
    its head, on both write routes, counted; a push right after works."""
    srv = Server(["--request-timeout", "3"])
    for path in ("/api/v1/profiles?service_name=a", "/ingest?name=a"):
        before = srv.metric("ember_connections_timed_out_total")
        got, took = ember_test.trickle(
            srv.port, b"POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
            b"Content-Length: 100000\r\n\r\nm" % (path.encode(), srv.token.encode()),
            every=0.5, limit=10)
        check(got == b"" and 2.5 < took < 6, "%s: trickled body %s after %.1f s"
              % (path, "still open" if got is None else "answered %r" % got[:40], took))
        check(srv.metric("ember_connections_timed_out_total") == before + 1,
              "%s: the cut is not counted" % path)
        srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=a")
    check(len(folded(srv, '{service_name="a"}')) == 3, "the pushes right after")
    srv.stop()


def test_profiles__limits_answer_4xx_with_reasons():
    srv = Server(["--max-profile-mb", "1", "--max-series", "3"])

    def refused(data, labels, status, reason, **kw):
        st, body, _ = srv.push(data, labels, **kw)
        check(st == status and reason in body.decode(),
              "%s: HTTP %d %r (wanted %d %r)" % (labels, st, body[:300], status, reason))

    # a declared size past the limit: answered before any byte of the body
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    sock.sendall(("POST /api/v1/profiles?service_name=a HTTP/1.1\r\nHost: x\r\n"
                  "Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n"
                  % (srv.token, 1100 * 1024)).encode())
    head = sock.recv(4096).decode(errors="replace")
    sock.close()
    check(head.startswith("HTTP/1.1 413") and "larger than the limit of 1048576" in head, head)
    many = Profile()
    for i in range(100001):
        many.sample(["main", "f%d" % (i % 7)], [1, 1])
    refused(many.encode(gzip=True), "service_name=a", 413, "100001 samples")
    deep = Profile()
    deep.sample(["f%d" % i for i in range(1100)], [1, 1])
    refused(deep.encode(), "service_name=a", 400, "1024")
    ok = cpu_profile(S3, T0).encode()
    refused(ok, "&".join("l%d=v" % i for i in range(40)), 400, "more than the limit of 32")
    refused(ok, "service_name=a&" + "n" * 200 + "=v", 400, "longer than 128 bytes")
    refused(ok, "service_name=" + "v" * 1100, 400, "value longer than 1024 bytes")
    refused(ok, "service_name=a&1bad=v", 400, "is not [a-zA-Z_]")
    refused(b"not a profile", "service_name=a", 400, "not a pprof profile")
    # small on the wire (65 KiB), past the 64 MiB cap once decompressed
    bomb = gzip.compress(bytes(65 << 20), 9)
    refused(bomb, "service_name=a", 413, "larger than")
    refused(bomb, "service_name=a", 413, "once decompressed", headers={"Content-Encoding": "gzip"})
    refused(ok, "service_name=a", 415, "Content-Encoding 'br'", headers={"Content-Encoding": "br"})
    for i in range(3):
        srv.push_ok(ok, "service_name=s%d" % i)
    refused(ok, "service_name=s9", 429, "series, its limit")
    srv.push_ok(ok, "service_name=s1")  # an existing series still takes profiles
    check(srv.metric("ember_profiles_rejected_total", '{reason="series_limit"}') == 1, "metric")
    check(srv.metric("ember_profiles_rejected_total", '{reason="too_large"}') >= 1, "metric")


# 45 bytes that took glibc's regcomp 1.1 GB and 1.8 s to compile (issue 23)
HOSTILE_RE = "((((a|b|c|d|e|f|g|h|i|j|k)?){0,9}){0,9}){0,9}"


def test_profiles__hostile_selector_regexes_cost_bounded():
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=Checkout&pid=1234")
    folded(srv, '{service_name=~"C.*"}')  # the query path warmed up
    hwm0 = ember_test.vm_status(srv.proc.pid, "VmHWM")
    cpu0 = ember_test.cpu_seconds(srv.proc.pid)

    def ask(selector, status, reason=""):
        t = time.monotonic()
        st, body, _ = srv.request("GET", "/api/v1/query?type=cpu&format=folded&from=0&query=" +
                                  q(selector))
        wall = time.monotonic() - t
        check(st == status and reason in body.decode(errors="replace"),
              "%.80s: HTTP %d %r (wanted %d %r)" % (selector, st, body[:300], status, reason))
        check(wall < 5, "%.80s: answered in %.1f s" % (selector, wall))
        hwm = ember_test.vm_status(srv.proc.pid, "VmHWM")
        check(hwm - hwm0 < 100 << 20, "%.80s: peak RSS grew %d MB" % (selector,
                                                                     (hwm - hwm0) >> 20))
        return body

    # one, then eight of the hostile regex: compiled within their bound
    check(ask('{service_name=~"%s"}' % HOSTILE_RE, 200) == b"", "no series matches")
    ask("{" + ",".join('a%d=~"%s"' % (i, HOSTILE_RE) for i in range(8)) + "}", 200)
    # past the limits: 400 with the reason, before anything is compiled
    ask("{" + ",".join('a%d=~"%s"' % (i, HOSTILE_RE) for i in range(9)) + "}", 400,
        "more than 8 regex matchers")
    ask("{" + ",".join('a%d="%s"' % (i, "x" * 100) for i in range(64)) + "}", 400,
        "more than 32 matchers")
    ask('{a=~"%s"}' % ("x" * 1025), 400, "regex longer than 1024 bytes")
    ask('{a=~"[\\\\pL\\\\pN]{1,500}"}', 400, "too large: pattern too large")
    ask('{a=~"(x)\\\\1"}', 400, "invalid escape sequence")
    cpu = ember_test.cpu_seconds(srv.proc.pid)
    check(cpu - cpu0 < 5, "the hostile selectors took %.1f s of CPU" % (cpu - cpu0))
    # RE2's syntax, as Prometheus and Pyroscope take it
    want = folded(srv, '{service_name="Checkout"}')
    check(want, "the profile is there")
    check(folded(srv, '{pid=~"\\\\d+"}') == want, "\\d matches digits")
    check(folded(srv, '{service_name=~"(?i)checkout"}') == want, "(?i) folds case")
    check(folded(srv, '{pid=~"\\\\d{3}"}') == {}, "the whole value, not a part of it")


def test_profiles__times_outside_the_window_refused():
    """A profile dated in 2200 (it held --max-series for good and made a
    block per future hour) or two hours ago: 400 "out of bounds", from a
    push, Pyroscope's /ingest and a scrape target, counted; nothing of it
    stored; inside the window, or with the limits lifted, taken."""
    y2200 = 7258118400 * SEC
    tgt = http_target({"/pprof": cpu_profile(S3, y2200).encode()})
    srv = Server(["--max-series", "3", "--scrape",
                  "http://127.0.0.1:%d/pprof,interval=1s" % tgt.server_address[1]])
    for t, why in ((y2200, "in the future, past the limit of 600 s (--max-profile-future)"),
                   ((NOW_S - 7200) * SEC, "in the past, older than the limit of 3600 s "
                                          "(--max-profile-age)")):
        st, body, _ = srv.push(cpu_profile(S3, t).encode(), "service_name=late")
        check(st == 400 and b"out of bounds" in body and why.encode() in body,
              "HTTP %d %r" % (st, body[:300]))
    st, body, _ = srv.request("POST", "/ingest?name=late&from=7258118400&until=7258118410",
                              b"main;work 10\n", {"Authorization": "Bearer " + srv.token})
    check(st == 400 and b"out of bounds" in body, "/ingest: HTTP %d %r" % (st, body[:300]))
    wait_for(lambda: srv.metric("ember_profiles_rejected_total", '{reason="out_of_bounds"}') >= 4,
             "the scraped profile refused and every refusal counted", 30)
    check(srv.json("/api/v1/labels")["names"] == [], "a refused profile stored")
    for i in range(3):  # the refusals held no series: the limit is whole
        srv.push_ok(cpu_profile(S3, T0 + 600 * SEC).encode(), "service_name=s%d" % i)
    check(srv.metric("ember_profile_store_series") == 3, "series")
    srv.stop()
    srv = Server(["--max-profile-age", "0", "--max-profile-future", "0"])
    srv.push_ok(cpu_profile(S3, y2200).encode(), "service_name=future")
    srv.push_ok(cpu_profile(S3, (NOW_S - 7200) * SEC).encode(), "service_name=past")


def test_profiles__unbounded_label_warned_in_log_and_metrics():
    srv = Server()
    data = cpu_profile({"main;work": 1}, T0).encode()
    for i in range(300):
        srv.push_ok(data, "service_name=api&request_id=r%05d" % i)
    check(srv.metric("ember_profile_unbounded_labels") == 1, "unbounded labels metric")
    check(srv.metric("ember_profile_unbounded_label", '{name="request_id"}') == 1,
          "the label named in /metrics")
    check(re.search(r"label 'request_id' looks unbounded", srv.stderr()), "not in the log")
    check(srv.metric("ember_profile_unbounded_label", '{name="service_name"}') is None,
          "a bounded label flagged")


def test_profiles__kill9_keeps_acknowledged_profiles():
    srv = Server()
    for i in range(40):
        srv.push_ok(cpu_profile({"main;work": i + 1}, T0 + i * SEC).encode(), "service_name=k")
    srv.stop(signal.SIGKILL)
    srv.start()
    body, hdr = srv.get("/api/v1/query?type=samples&format=folded&query=" + q('{service_name="k"}'))
    check(hdr["x-ember-profiles"] == "40" and body.decode() == "main;work %d\n" % (40 * 41 // 2),
          "after kill -9: %s %r" % (hdr.get("x-ember-profiles"), body))


def test_profiles__kill9_mid_write_keeps_acknowledged_and_no_partial_profile():
    """Four clients push while the head is compacted into blocks every
    second; kill -9 lands among writes in flight.  After the restart every
    acknowledged profile is there, and each profile there is whole: its two
    stacks both, once (one that was written but not yet answered may be)."""
    import threading
    srv = Server(["--profile-head-age", "1s"])
    acked, sent, lock = set(), set(), threading.Lock()
    stop = threading.Event()

    def pusher(w):
        i = w
        while not stop.is_set():
            data = cpu_profile({"main;p%d;a" % i: 1, "main;p%d;b" % i: 1},
                               T0 + i * 1_000_000).encode()  # 1 ms apart: all in the past
            with lock:
                sent.add(i)
            try:
                st, _, _ = srv.push(data, "service_name=k9&writer=w%d" % w)
            except (OSError, http.client.HTTPException):
                return
            if st != 200:
                return
            with lock:
                acked.add(i)
            i += 4
    threads = [threading.Thread(target=pusher, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: len(acked) >= 150 and srv.metric("ember_profile_store_blocks") >= 1,
             "150 acknowledged profiles and a block", 60)
    srv.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(60)
    srv.start()
    body, hdr = srv.get("/api/v1/query?type=samples&format=folded&from=0&query=" +
                        q('{service_name="k9"}'))
    got = {}
    for line in body.decode().splitlines():
        stack, n = line.rsplit(" ", 1)
        m = re.fullmatch(r"main;p(\d+);([ab])", stack)
        check(m and n == "1", "a stack stored wrong: %r" % line)
        got.setdefault(int(m.group(1)), set()).add(m.group(2))
    check(acked <= set(got), "acknowledged but lost after kill -9: %r" % sorted(acked - set(got)))
    check(set(got) <= sent, "a profile nobody sent: %r" % sorted(set(got) - sent))
    partial = sorted(i for i, ab in got.items() if ab != {"a", "b"})
    check(not partial, "partial profiles visible: %r" % partial)
    check(int(hdr["x-ember-profiles"]) == len(got), "profiles %s, stored %d" %
          (hdr["x-ember-profiles"], len(got)))
    print("%d acknowledged, %d stored after kill -9" % (len(acked), len(got)))


def test_profiles__retention_drops_old_blocks_and_metrics_show_the_store():
    # data older than the default window of times: its limit lifted
    srv = Server(["--retention", "1h", "--profile-head-age", "1s", "--max-profile-age", "0"])
    old = (NOW_S - 3 * 3600) * SEC
    srv.push_ok(cpu_profile(S3, old).encode(), "service_name=old")
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=new")
    wait_for(lambda: srv.metric("ember_profile_store_retention_drops_total") >= 1,
             "the old block to be dropped", 60)
    check(folded(srv, '{service_name="old"}', frm="0") == {}, "an expired profile answered")
    check(folded(srv, '{service_name="new"}')["main;idle"] == 50000000, "the new one lost")
    check(srv.metric("ember_profile_store_blocks") >= 1 and
          srv.metric("ember_profile_store_bytes") > 0, "store size and blocks in /metrics")
    # the two queries above summed the new profile (the old one is gone)
    # (row bytes: none when the new profile is answered from the head)
    check(srv.metric("ember_profile_store_profiles_read_total") >= 1 and
          srv.metric("ember_profile_store_rows_bytes_read_total", default=-1) >= 0 and
          srv.metric("ember_profile_store_rollups") >= 0,
          "profiles and row bytes read, and rollups in /metrics")


# ---- symbolization at ingest, and later --------------------------------------------------


def test_profiles__symbolized_at_ingest_and_once_debug_info_arrives():
    exe = os.path.join(FIX, "c_O2_pie")
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    srv = Server(["--profile-head-age", "1s"])
    a = srv.push_ok(raw_profile(exe, bid, ["main", "helper_digest_points"], T0), "service_name=c")
    check(a["samples"] == 10 and a["resolved_samples"] == 3, a)
    check(a["unresolved"] == [{"build_id": bid, "reason": "unknown_build_id", "locations": 2}], a)
    cov = srv.json("/api/v1/coverage")
    check(cov["build_ids"] == [{"build_id": bid, "reason": "unknown_build_id", "samples": 7,
                                "pct": 70.0}], cov)
    names = folded(srv)  # unsymbolized frames grouped per module by default
    check("[c_O2_pie]" in names, names)
    upload_executable(srv, exe, bid)
    # at query time at once
    names = folded(srv)
    hit = [k for k in names if k.startswith("main;") and k.endswith("helper_digest_points")]
    check(hit and names[hit[0]] == 70_000_000, names)
    # and in the stored blocks once compacted: the coverage recounted
    wait_for(lambda: srv.json("/api/v1/coverage")["resolved_pct"] == 100,
             "the blocks to be rewritten with the frames resolved", 60)
    # a profile sent now is symbolized at ingest
    a = srv.push_ok(raw_profile(exe, bid, ["main", "helper_digest_points"], T0 + SEC), "service_name=c")
    check(a["resolved_samples"] == 10 and a["unresolved"] == [], a)
    srv.stop()
    srv.start()
    check(srv.json("/api/v1/coverage")["resolved_pct"] == 100, "coverage lost at restart")
    check(srv.metric("ember_profile_samples_total", '{resolved="true"}') is not None, "metric")



# ---- OTLP/HTTP: POST /v1development/profiles ---------------------------------------


def test_profiles__otlp_http_protobuf_symbolized_counted_partial_gzip():
    svc, _ = otlp_stubs()
    exe = os.path.join(FIX, "c_O2_pie")
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    srv = Server()
    upload_executable(srv, exe, bid)
    r = otlp_sample_request(svc, exe, bid, T0)
    old = r.profile("old", T0 - 3 * 3600 * SEC)  # outside the window: refused alone
    old.samples.add(stack_index=1, values=[1])
    st, body, hdr = otlp_post(srv, r.encode())
    check(st == 200 and hdr.get("content-type") == "application/x-protobuf",
          "export: HTTP %d %r %r" % (st, hdr, body[:300]))
    resp = svc.ExportProfilesServiceResponse.FromString(body)
    check(resp.HasField("partial_success"), "no partial_success: %r" % resp)
    ps = resp.partial_success
    check(ps.rejected_profiles == 1 and "profile 3" in ps.error_message
          and "out of bounds" in ps.error_message, "partial_success: %r" % ps)
    stack = "main;helper_digest_points;do_syscall_64"
    for service, total in (("ts", 5), ("values", 7), ("both", 7)):
        names = otlp_folded(srv, service)
        check(names == {stack: total}, "%s: %r" % (service, names))
    labels = srv.json("/api/v1/labels?from=0")["names"]
    check("service_name" in labels and not any("pid" in n for n in labels), labels)
    # gzip: the same content, all accepted, an empty response
    st, body, _ = otlp_post(srv, otlp_sample_request(svc, exe, bid, T0 + SEC,
                                                     ("gz",) * 3).encode(gz=True),
                            headers={"Content-Encoding": "gzip"})
    check(st == 200, "gzip export: HTTP %d %r" % (st, body[:300]))
    check(not svc.ExportProfilesServiceResponse.FromString(body).HasField("partial_success"),
          "gzip export: %r" % body)
    check(otlp_folded(srv, "gz") == {stack: 19}, otlp_folded(srv, "gz"))
    check(srv.metric("ember_profiles_ingested_total", '{route="otlp"}') == 6, "metric")


def test_profiles__otlp_http_refusals_are_status_bodies():
    svc, status = otlp_stubs()
    srv = Server()
    good = OtlpRequest(svc)
    good.profile("a", T0).samples.add(stack_index=good.stack([good.named("f")]), values=[1])

    def refused(st_want, code, text, data, **kw):
        st, body, hdr = otlp_post(srv, data, **kw)
        check(st == st_want, "HTTP %d, not %d: %r" % (st, st_want, body[:300]))
        check(hdr.get("content-type") == "application/x-protobuf", hdr)
        s = status.Status.FromString(body)
        check(s.code == code and text in s.message, "status %r" % s)

    st, body, _ = otlp_post(srv, b"")  # an empty request is a success
    check(st == 200 and body == b"", "empty request: HTTP %d %r" % (st, body))
    refused(401, 16, "Authorization", good.encode(), token=False)
    refused(401, 16, "Authorization", good.encode(), token="wrong")
    refused(400, 3, "not an OTLP", b"\xff\xff\xff\xff")
    refused(400, 3, "not an OTLP", b"\x1f\x8b\x08\x00garbage",
            headers={"Content-Encoding": "gzip"})
    empty = OtlpRequest(svc)  # samples with neither values nor timestamps
    empty.profile("a", T0).samples.add(stack_index=empty.stack([empty.named("f")]))
    refused(400, 3, "1.10", empty.encode())
    refused(415, 3, "application/x-protobuf", b"{}",
            headers={"Content-Type": "text/plain"})
    # past the decompression cap (4 times --max-profile-mb) once gunzipped
    refused(413, 8, "too large", gzip.compress(b"\0" * (65 << 20)),
            headers={"Content-Encoding": "gzip"})
    st, body, _ = otlp_post(srv, good.encode())
    check(st == 200, "a good request after: HTTP %d %r" % (st, body))



def test_profiles__otlp_http_series_limit_429_or_partial():
    svc, status = otlp_stubs()
    srv = Server(["--max-series", "1"])
    r = OtlpRequest(svc)
    st_ = r.stack([r.named("f")])
    for service in ("first", "second", "first"):
        r.profile(service, T0).samples.add(stack_index=st_, values=[1])
    # the second profile meets the series limit: retryable, so the request
    # stops there (the third, of a stored series, is not stored either); the
    # first was stored, so not a 429 but a partial success counting both
    st, body, _ = otlp_post(srv, r.encode())
    check(st == 200, "HTTP %d %r" % (st, body[:300]))
    ps = svc.ExportProfilesServiceResponse.FromString(body).partial_success
    check(ps.rejected_profiles == 2 and ps.error_message.startswith("profile 1: "), ps)
    check(otlp_folded(srv, "first") == {"f": 1}, otlp_folded(srv, "first"))
    # nothing storable: 429 with Retry-After, a google.rpc.Status
    again = OtlpRequest(svc)
    again.profile("fourth", T0).samples.add(stack_index=again.stack([again.named("f")]),
                                             values=[1])
    st, body, hdr = otlp_post(srv, again.encode())
    check(st == 429 and hdr.get("retry-after"), "HTTP %d %r %r" % (st, hdr, body[:300]))
    check(status.Status.FromString(body).code == 8, body)


def many_build_ids(n, first, time_ns):
    """A profile of n mappings, each with its own build ID (first, first
    + 1, ...) and one unsymbolized location."""
    p = Profile(time_ns=time_ns, duration_ns=10 * SEC)
    for i in range(n):
        start = 0x7f0000000000 + i * 0x100000
        m = p.mapping(start, start + 0x100000, 0, "/lib/l%d.so" % i, build_id="%040x" % (first + i))
        p.sample([(m, start + 0x1234)], [1, 10_000_000])
    return p.encode(gzip=True)


def test_profiles__many_build_ids_ingested_in_linear_time_queries_answered():
    """A push of 60,000 build IDs (a linear search per build ID took 68 s
    of CPU, under the head's lock, so that a query waited 67 s): stored
    in a bounded time, and the queries sent meanwhile answered at once."""
    import threading
    srv = Server()
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=other")
    body = many_build_ids(60000, 0xb1d0000, T0)
    got, slow = {}, []

    def push():
        t = time.time()
        try:
            got["push"] = srv.push(body, "service_name=big")[0]
        except OSError as e:  # the bound passed: the driver's timeout
            got["push"] = repr(e)
        got["took"] = time.time() - t
    th = threading.Thread(target=push)
    th.start()
    while th.is_alive():
        t = time.time()
        st, _, _ = srv.request("GET", "/api/v1/query?type=cpu&format=folded&query=" +
                               q('{service_name="other"}'), timeout=60)
        check(st == 200, "query during the push: HTTP %d" % st)
        slow += [time.time() - t] if time.time() - t > 5 else []
        th.join(0.3)
    print("push: %r in %.1f s; queries slower than 5 s: %r" % (got["push"], got["took"], slow))
    check(got["push"] == 200 and got["took"] < 40, "the push: %r after %.1f s"
          % (got["push"], got["took"]))
    check(not slow, "queries waited %r s during the push" % slow)
    cov = srv.json("/api/v1/coverage?limit=0")
    check(len(cov["build_ids"]) == 60000, "coverage lists %d build IDs" % len(cov["build_ids"]))


# ---- Pyroscope's /ingest ------------------------------------------------------------------


def test_profiles__pyroscope_ingest_folded_lines_and_pprof():
    srv = Server()
    frm, until = NOW_S - 20, NOW_S - 10
    name = q("shop.cpu{env=prod,process.runtime.name=go,region=eu-1}")
    st, body, _ = srv.push(b"main;work;hot 30\nmain;idle 5\n", path="/ingest",
                           labels="name=%s&from=%d&until=%d&sampleRate=100&spyName=gospy"
                           % (name, frm, until))
    check(st == 200, "folded: %d %r" % (st, body))
    sel = '{service_name="shop",env="prod",process.runtime.name="go",pyroscope_spy="gospy"}'
    check(folded(srv, sel) == {"main;work;hot": 300000000, "main;idle": 50000000},
          folded(srv, sel))
    t = srv.json("/api/v1/query?type=cpu&format=json&query=" + q(sel))
    check(t["min_time_ms"] == frm * 1000, t)
    st, body, _ = srv.push(b"main;lineA\nmain;lineA\nmain;lineB\n", path="/ingest",
                           labels="name=lines.alloc_objects&format=lines")
    check(st == 200, "lines: %d %r" % (st, body))
    check(folded(srv, '{service_name="lines"}', typ="alloc_objects") ==
          {"main;lineA": 2, "main;lineB": 1}, "lines")
    # a pprof body, raw and as the Go SDK's multipart form; a service_name tag keeps APP as app_name
    pp = cpu_profile({"main;go_work": 4}, (NOW_S - 5) * SEC).encode(gzip=True)
    st, body, _ = srv.push(pp, path="/ingest", labels="name=%s&format=pprof&sampleRate=100"
                           % q("goapp{service_name=payments}"))
    check(st == 200, "pprof: %d %r" % (st, body))
    check(folded(srv, '{service_name="payments",app_name="goapp"}') == {"main;go_work": 40000000},
          "pprof body")
    boundary = "XyZ"
    form = ("--%s\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n" % boundary).encode() + pp + \
        ("\r\n--%s--\r\n" % boundary).encode()
    st, body, _ = srv.push(form, path="/ingest", labels="name=formapp&format=pprof",
                           headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    check(st == 200, "multipart: %d %r" % (st, body))
    check(folded(srv, '{service_name="formapp"}') == {"main;go_work": 40000000}, "form body")
    form2 = form.replace(b'name="profile"', b'name="prev_profile"', 1)
    st, body, _ = srv.push(form2, path="/ingest", labels="name=formapp&format=pprof",
                           headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    check(st == 400 and b"prev_profile" in body, "prev_profile: %d %r" % (st, body))
    st, body, _ = srv.push(b"x", path="/ingest", labels="name=a&format=trie")
    check(st == 415, "trie: %d" % st)
    st, body, _ = srv.push(b"main 1\n", path="/ingest", labels="format=folded")
    check(st == 400 and b"name" in body, "no name: %d %r" % (st, body))
    st, _, _ = srv.request("POST", "/ingest?name=a", b"main 1\n")
    check(st == 401, "ingest without a token: %d" % st)
    check(srv.metric("ember_profiles_ingested_total", '{route="ingest"}') == 4, "metric")


def pyroscope_nodejs_case(module, min_node):
    """push.js with the SDK of module pushing wall and heap profiles of a
    Node.js process to a real ember serve's /ingest; busyLoop in the wall
    profile.  Skips (77) when node is older than min_node, which that SDK
    needs."""
    node = packages.which("node")
    mods = os.path.join(HERE, "node", "node_modules", *module.split("/"))
    if not node:
        skip(packages.missing("node", "Node.js runs Grafana's Pyroscope SDK"))
    if not os.path.isdir(mods):
        skip("tests/profiles/node/node_modules missing: `make test` runs `npm ci` there "
             "(the npm registry)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    have = tuple(int(x) for x in re.findall(r"\d+", version)[:3])
    if have < min_node:
        skip("%s needs Node.js %s, this is %s" % (module, ".".join(map(str, min_node)),
                                                   version.strip()))
    srv = Server()
    env = dict(os.environ, EMBER_URL=srv.url, EMBER_TOKEN=srv.token, EMBER_SDK=module,
               NODE_PATH="")
    r = subprocess.run([node, os.path.join(HERE, "node", "push.js")], capture_output=True,
                       text=True, env=env, timeout=120, cwd=os.path.join(HERE, "node"))
    check(r.returncode == 0, "node push.js: %s%s" % (r.stdout, r.stderr))
    sel = '{service_name="node-demo",team="ember"}'
    wait_for(lambda: srv.json("/api/v1/profile-types?query=" + q(sel))["types"],
             "the SDK's profiles", 30)
    types = [t["id"] for t in srv.json("/api/v1/profile-types?query=" + q(sel))["types"]]
    check(any(t.startswith("wall:") for t in types), types)
    wall = [t for t in types if t.startswith("wall:") and ":cpu:" not in t.split(":", 2)[2]
            or t.startswith("wall:samples")][0]
    top = srv.json("/api/v1/query?format=top&limit=0&type=%s&query=%s" % (q(wall), q(sel)))
    check(any("busyLoop" in r["name"] for r in top["rows"]),
          "the workload's function is not in the profile: %r" % top["rows"][:10])


def test_profiles__pyroscope_nodejs_sdk_0_4_multipart_pushes_real_profiles():
    """The 0.4 SDK (Debian 12's Node.js 18 runs it) sends each profile as
    the "profile" field of a multipart form, with no format parameter."""
    pyroscope_nodejs_case("@pyroscope/nodejs", (18, 0, 0))


def test_profiles__pyroscope_nodejs_sdk_0_6_pushes_real_profiles():
    pyroscope_nodejs_case("pyroscope-nodejs-0.6", (20, 20, 2))


# ---- --scrape --------------------------------------------------------------------------------


GO_PROG = r'''
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"time"
)

//go:noinline
func scrapedSpin(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	return x
}

var keep [][]byte

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stdout, "%d\n", l.Addr().(*net.TCPAddr).Port)
	go func() {
		for {
			keep = append(keep, make([]byte, 1<<16))
			if len(keep) > 64 {
				keep = keep[1:]
			}
			scrapedSpin(1 << 20)
			time.Sleep(time.Millisecond)
		}
	}()
	http.Serve(l, nil)
}
'''


def test_profiles__scrape_go_pprof_endpoints():
    go = packages.which("go")
    if not go:
        skip(packages.missing("go", "a Go program serves net/http/pprof"))
    d = tempfile.mkdtemp(dir=TMP, prefix="goprog.")
    with open(os.path.join(d, "main.go"), "w") as f:
        f.write(GO_PROG)
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), GOFLAGS="-mod=mod",
               GO111MODULE="off", CGO_ENABLED="0")
    r = subprocess.run([go, "build", "-o", os.path.join(d, "prog"), "main.go"], cwd=d, env=env,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "go build: " + r.stderr)
    prog = subprocess.Popen([os.path.join(d, "prog")], stdout=subprocess.PIPE)
    CHILDREN.append(prog)
    port = int(prog.stdout.readline())
    base = "http://127.0.0.1:%d" % port
    srv = Server(["--scrape", base + ",interval=2s,team=scrape",
                  "--scrape", base + "/debug/pprof/allocs,interval=2s,kind=allocs"])
    sel = '{instance="127.0.0.1:%d",team="scrape"}' % port
    wait_for(lambda: srv.metric("ember_scrapes_total",
                                '{target="%s/debug/pprof/profile?seconds=1",result="ok"}' % base)
             or 0 >= 2, "two CPU scrapes", 60)
    # The heap is scraped after the CPU profile of its round, and a Go
    # program's first heap profiles may hold no sample yet: wait for it.
    want = ("process_cpu:cpu:nanoseconds:cpu:nanoseconds", "memory:inuse_space:bytes:space:bytes")
    types = []

    def both_types():
        types[:] = [t["id"] for t in srv.json("/api/v1/profile-types?query=" + q(sel))["types"]]
        return all(w in types for w in want)
    try:
        wait_for(both_types, "the CPU and heap types", 30)
    except AssertionError:
        check(False, "%r; the server's log:\n%s" % (types, srv.stderr()[-3000:]))
    top = srv.json("/api/v1/query?format=top&limit=0&type=cpu&query=" + q(sel))
    check(any(r["name"] == "main.scrapedSpin" for r in top["rows"]), top["rows"][:5])
    check(srv.json("/api/v1/labels/service_name/values?query=" + q(sel))["values"] ==
          ["127.0.0.1:%d" % port], "service_name defaults to the instance")
    wait_for(lambda: srv.json("/api/v1/profile-types?query=" + q('{kind="allocs"}'))["types"],
             "the allocs endpoint", 30)
    heap = srv.json("/api/v1/query?format=top&type=alloc_space&query=" + q('{kind="allocs"}'))
    check(heap["total"] > 0, heap)


def http_target(routes, want_auth=None):
    """A loopback HTTP server: a GET of a path of routes {path (without
    its query): body bytes} that carries the Authorization want_auth (any
    when None; 401 otherwise) is answered that body, any other 500 (a
    path of /buildid/: 404, as a debuginfod server answers a build ID it
    lacks); the (path, Authorization) of every GET it saw are in .seen.
    Stopped at exit."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            srv.seen.append((self.path, self.headers.get("Authorization")))
            body = routes.get(self.path.split("?")[0])
            ok = want_auth is None or self.headers.get("Authorization") == want_auth
            st = (404 if self.path.startswith("/buildid/") else 500) if body is None else \
                200 if ok else 401
            self.send_response(st)
            self.send_header("Content-Length", str(len(body) if st == 200 else 0))
            self.end_headers()
            try:
                if st == 200:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that stops reading (a body past its limit)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.seen = []
    srv.url = "http://127.0.0.1:%d" % srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_profiles__scrape_url_credentials_never_shown():
    """A --scrape URL's "user:password@" and secret-named query values are
    sent to the target and shown nowhere: not in /metrics, the log, the
    labels of the stored profiles or the answer to a failing scrape."""
    import base64
    body = cpu_profile(S3, NOW_S * SEC).encode()
    tgt = http_target({"/pprof": body}, "Basic " + base64.b64encode(b"scraper:s3cretPW").decode())
    port = tgt.server_address[1]
    good = "http://scraper:s3cretPW@127.0.0.1:%d/pprof?access_token=tok3n42&x=1" % port
    bad = "http://scraper:s3cretPW@127.0.0.1:%d/fail?apikey=k3y99" % port
    srv = Server(["--log-level", "info", "--scrape", good + ",interval=1s,team=creds",
                  "--scrape", bad + ",interval=1s"])
    shown = "http://127.0.0.1:%d/pprof?access_token=REDACTED&x=1" % port
    wait_for(lambda: (srv.metric("ember_scrapes_total", '{target="%s",result="ok"}' % shown)
                      or 0) >= 1, "a scrape with the credentials", 30)
    failed = "http://127.0.0.1:%d/fail?apikey=REDACTED" % port
    wait_for(lambda: (srv.metric("ember_scrapes_total", '{target="%s",result="error"}' % failed)
                      or 0) >= 1, "a failing scrape", 30)
    check(("/pprof?access_token=tok3n42&x=1", "Basic " +
           base64.b64encode(b"scraper:s3cretPW").decode()) in tgt.seen,
          "the request uses the credentials: %r" % tgt.seen[:3])
    sel = '{team="creds"}'
    wait_for(lambda: srv.json("/api/v1/profile-types?query=" + q(sel))["types"], "a profile", 30)
    check(srv.json("/api/v1/labels/instance/values?query=" + q(sel))["values"] ==
          ["127.0.0.1:%d" % port], "instance is HOST:PORT")
    stored = []
    for name in srv.json("/api/v1/labels")["names"]:
        stored += [name] + srv.json("/api/v1/labels/%s/values" % name)["values"]
    metrics = srv.request("GET", "/metrics")[1].decode()
    log = srv.stderr()
    check(failed in log and shown in log, "the log names the URLs as shown:\n" + log[-2000:])
    for secret in ("s3cretPW", "scraper", "tok3n42", "k3y99"):
        check(secret not in metrics, "%s in /metrics" % secret)
        check(secret not in log, "%s in the log:\n%s" % (secret, log[-2000:]))
        check(all(secret not in v for v in stored), "%s in the labels: %r" % (secret, stored))
    tgt.shutdown()


# ---- a read's request context (issue 23) ------------------------------------------


def labelled_profiles(n, per_body, time_ns):
    """Bodies of n series in all: one sample each, told apart by an id label."""
    for first in range(0, n, per_body):
        p = Profile(time_ns=time_ns, duration_ns=10 * SEC)
        for i in range(first, min(n, first + per_body)):
            p.sample(["main", "work"], [1, 10_000_000], {"id": "s%05d" % i})
        yield p.encode(gzip=True)


def test_profiles__series_grid_bounded_before_the_work():
    """10,000 series and a series query at a 361 ms step grouped by their
    id: a grid of 10,000 lines of 9,973 points (0.8 GB and 10 s before
    the bound) refused at once with 400 and what to change, the server's
    memory flat; the points alone past Prometheus' 11,000, 400 too; a grid
    within the bounds answered."""
    srv = Server()
    for body in labelled_profiles(10000, 2500, T0):
        srv.push_ok(body, "service_name=grid")
    frm = T0 // SEC - 1800
    rss = ember_test.vm_status(srv.proc.pid, "VmRSS")
    t0 = time.time()
    st, body, _ = srv.request("GET", "/api/v1/series?type=cpu&from=%d&to=%d&step=361ms"
                              "&group_by=id" % (frm, frm + 3600))
    took = time.time() - t0
    grew = ember_test.vm_status(srv.proc.pid, "VmHWM") - rss
    check(st == 400 and b"lines of 9973 points" in body, "grid: %d %r" % (st, body[:300]))
    check(took < 3, "refused after %.1f s" % took)
    check(grew < 200 << 20, "the server grew by %d MB" % (grew >> 20))
    st, body, _ = srv.request("GET", "/api/v1/series?type=cpu&from=%d&to=%d&step=300ms"
                              % (frm, frm + 3600))
    check(st == 400 and b"more than 11000" in body, "points: %d %r" % (st, body[:300]))
    s = srv.json("/api/v1/series?type=cpu&from=%d&to=%d&step=10m&group_by=id&query=%s"
                 % (frm, frm + 3600, q('{id=~"s0000.*"}')))
    check(len(s["series"]) == 10 and s["points"] == 6, "a grid within the bounds: %r" % s)
    srv.stop()


def unresolved_profile(n, time_ns):
    """One profile of n mappings, each its own build ID, with an address
    left for the query-time resolver."""
    p = Profile(time_ns=time_ns, duration_ns=10 * SEC)
    for i in range(n):
        start = (i + 1) << 32
        m = p.mapping(start, start + 0x10000, 0, "/usr/lib/lib%d.so" % i,
                      build_id="%08x" % (i + 1) + "ab" * 16)
        p.sample(["main", (m, start + 0x1000)], [1, 10_000_000])
    return p.encode(gzip=True)


def test_profiles__query_time_symbolization_capped_per_request():
    """A stored profile of 2,000 build IDs none has, then queried with an
    upstream: one query asks upstream for at most 16 build IDs
    (--upstream-fetches-per-request; 4,000 requests before the cap), the
    rest answered unresolved."""
    srv = Server()
    srv.push_ok(unresolved_profile(2000, T0), "service_name=many")
    srv.stop()
    up = ember_test.NotFoundUpstream()
    srv = Server(["--upstream", up.url], data=srv.data)
    body, _ = srv.get("/api/v1/query?type=cpu&from=0&format=folded")
    ids = set(re.search(r"/buildid/([0-9a-f]+)/", path).group(1) for path in up.paths)
    check(len(ids) == 16 and up.count <= 32, "upstream asked %d times for %d build IDs"
          % (up.count, len(ids)))
    check(body.count(b"\n") == 2000, "every mapping answered: %r" % body[:300])
    up.stop()
    srv.stop()


def test_profiles__reads_stop_at_the_deadline_and_when_the_client_goes():
    """A query whose resolver waits for an upstream that never answers:
    504 at --request-timeout, not after the upstream's own timeout; a
    client that goes away stops its query's work; both counted like the
    symbolization routes' (ember_requests_stopped_total)."""
    srv = Server()
    srv.push_ok(unresolved_profile(1, T0), "service_name=slow")
    srv.stop()
    hang, url = ember_test.hanging_upstream()
    srv = Server(["--upstream", url, "--request-timeout", "2"], data=srv.data)
    t0 = time.time()
    st, body, _ = srv.request("GET", "/api/v1/query?type=cpu&from=0&format=folded", timeout=30)
    took = time.time() - t0
    check(st == 504 and b"request timeout of 2 s" in body and took < 6,
          "query: %d %r after %.1f s" % (st, body[:200], took))
    check(srv.metric('ember_requests_stopped_total{reason="timeout"}') == 1, "not counted")
    srv.stop()
    srv = Server(["--upstream", url, "--request-timeout", "60"], data=srv.data)
    c = socket.create_connection(("127.0.0.1", srv.port))
    c.sendall(b"GET /api/v1/query?type=cpu&from=0&format=svg HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.5)  # the resolver waits for the upstream now
    c.close()
    wait_for(lambda: srv.metric('ember_requests_stopped_total{reason="client_gone"}') == 1,
             "the work of a query whose client went away stopped", timeout=5)
    srv.stop()
    hang.close()


# ---- writes under the server's limits (issue 23) ----------------------------------------------


def pprof_bomb(mib=16):
    """A gzip'd protobuf of mib MiB of empty Location messages (22 00),
    each one an allocation once unpacked: about 16 KiB on the wire."""
    import zlib
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    return gz.compress(b"\x22\x00" * (mib << 19)) + gz.flush()


def folded_flood(mib=15):
    """A folded body of mib MiB whose every frame is new (a function, a
    location and a string each)."""
    return b"".join(b"main;f%07d;g%07d 1\n" % (i, i) for i in range((mib << 20) // 26))


def memory_bounded(srv, base, limit_mib, what):
    """The server's peak RSS (VmHWM) under its --memory-limit-mb; under
    ASan (whose shadow and quarantine are resident) its growth from base
    under three times the limit: unbounded writes took gigabytes."""
    peak = ember_test.vm_status(srv.proc.pid, "VmHWM")
    print("%s: peak RSS %.1f MiB (%.1f MiB before), limit %d MiB"
          % (what, peak / 2**20, base / 2**20, limit_mib))
    if ember_test.sanitized(srv.proc.pid):
        check(peak - base < 3 * limit_mib << 20, "%s: RSS grew by %.1f MiB"
              % (what, (peak - base) / 2**20))
    else:
        check(peak < limit_mib << 20, "%s: peak RSS %.1f MiB" % (what, peak / 2**20))


def at_once(srv, requests):
    """POST requests [(path, body, headers)] all at once with the token;
    their (status, body, headers) once all are answered, while the server
    keeps taking a normal push and answering a query (counted: .normal)."""
    import threading
    answers = [None] * len(requests)

    def send(i):
        path, body, headers = requests[i]
        h = dict(headers, Authorization="Bearer " + srv.token)
        try:
            answers[i] = srv.request("POST", path, body, h, timeout=120)
        except OSError as e:
            answers[i] = (0, str(e).encode(), {})

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    normal = queried = 0
    calm = cpu_profile(S3, T0).encode()
    query = "/api/v1/query?type=cpu&from=0&format=folded&query=" + q('{service_name="calm"}')
    while any(t.is_alive() for t in threads) or not normal or not queried:
        st, body, h = srv.push(calm, "service_name=calm")
        check(st == 200 or (st == 503 and h.get("retry-after")), "a normal push: %d %r"
              % (st, body[:200]))
        normal += st == 200
        # a read draws on the same budget: while the hostile writes hold
        # it, "busy" with Retry-After, as for a push
        st, body, h = srv.request("GET", query)
        check((st == 200 and body) or (st == 503 and h.get("retry-after")),
              "a query meanwhile: %d %r" % (st, body[:200]))
        queried += st == 200
    for t in threads:
        t.join()
    return answers


def test_profiles__writes_stay_within_the_memory_budget():
    """Every profile write draws on --memory-limit-mb as a symbolization
    does: gzip bombs (one layer, and two: Content-Encoding gzip over a
    gzip'd pprof; POST /api/v1/profiles and /ingest) and folded bodies of
    15 MiB of distinct frames, ten at once, are refused with 413 or 503
    and Retry-After, the server's RSS stays bounded and other writes and
    queries are served meanwhile."""
    srv = Server(["--memory-limit-mb", "256"])
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=calm")
    base = ember_test.vm_status(srv.proc.pid, "VmRSS")
    bomb = pprof_bomb()
    check(len(bomb) < 70 << 10, "a bomb of %d bytes" % len(bomb))
    flood = folded_flood()
    hostile = [("/api/v1/profiles?service_name=bomb", bomb, {})] * 3 + \
        [("/api/v1/profiles?service_name=bomb2", gzip.compress(bomb),
          {"Content-Encoding": "gzip"})] * 3 + \
        [("/ingest?name=bomb&format=pprof", bomb, {})] * 2 + \
        [("/ingest?name=flood.cpu&format=folded", flood, {})] * 2
    answers = at_once(srv, hostile)
    for (path, body, _), (st, out, h) in zip(hostile, answers):
        what = "%s (%d bytes)" % (path, len(body))
        check(st in (413, 503), "%s: HTTP %d %r" % (what, st, out[:200]))
        check(st != 503 or (h.get("retry-after") and b"busy" in out), "%s: %r" % (what, out))
        check(b"store unavailable" not in out, "%s: %r" % (what, out))
    # at once, each is refused too large, or busy when the others took the
    # budget first (which of the two is the race's); alone, below, too large
    too_large = sum(a[0] == 413 for a in answers)
    busy = sum(a[0] == 503 for a in answers)
    counted = dict((r, srv.metric("ember_profiles_rejected_total", '{reason="%s"}' % r) or 0)
                   for r in ("too_large", "busy"))
    check(counted["too_large"] >= too_large and counted["busy"] >= busy,
          "the refusals counted: %r for %d and %d" % (counted, too_large, busy))
    check(not store_error_lines(srv), "a refusal counted as a store error")
    memory_bounded(srv, base, 256, "ten hostile writes")
    # the budget is given back: the same writes, one at a time, get 413
    for path, body, headers in hostile[::3]:
        st, out, _ = srv.request("POST", path, body, dict(headers, Authorization="Bearer " +
                                                          srv.token))
        check(st == 413, "%s alone: HTTP %d %r" % (path, st, out[:200]))
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=calm")


def many_label_sets(n, time_ns):
    """A CPU profile of n samples, each with its own label value: n series."""
    p = Profile(time_ns=time_ns, duration_ns=10 * SEC)
    for i in range(n):
        p.sample(["main", "work"], [1, 10_000_000], {"request": "r%d" % i})
    return p.encode()


def test_profiles__refused_profile_holds_no_series_slot():
    """A push of 200 label sets (200 new series) with 5 of --max-series 10
    left: refused 429, and none of its series holds a slot (before, the 5
    admitted before the refusal stayed, with no data, and every new series
    got 429 until the head was flushed); a new series then fits, and after
    kill -9 the log's replay counts the same."""
    srv = Server(["--max-series", "10"])
    for i in range(5):
        srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=s%d" % i)
    st, body, _ = srv.push(many_label_sets(200, T0), "service_name=hostile")
    check(st == 429, "HTTP %d %r" % (st, body[:300]))
    check(srv.metric("ember_profile_store_series") == 5,
          "slots held after the refusal: %s" % srv.metric("ember_profile_store_series"))
    check(b"no room for the profile's 200 new series" in body, body[:300])
    srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=s5")
    check(folded(srv, '{service_name="hostile"}') == {}, "the refused profile stored")
    srv.stop(signal.SIGKILL)
    srv.start()
    check(srv.metric("ember_profile_store_series") == 6, "series after the replay: %s"
          % srv.metric("ember_profile_store_series"))
    for i in range(6, 10):
        srv.push_ok(cpu_profile(S3, T0).encode(), "service_name=s%d" % i)
    st, body, _ = srv.push(cpu_profile(S3, T0).encode(), "service_name=s10")
    check(st == 429, "an 11th series: HTTP %d %r" % (st, body[:300]))


def test_profiles__scraped_bodies_get_the_limits_of_a_push():
    """A hostile --scrape target answering a gzip bomb, a body past the
    profile limit or a profile of more label sets than --max-series takes
    gets a push's refusal, counted in /metrics as a push's, while the
    server's RSS stays bounded and a good target is still scraped."""
    bodies = {"/bomb": pprof_bomb(), "/huge": bytes((17 << 20) + 1),
              "/labels": many_label_sets(200, NOW_S * SEC),
              "/good": cpu_profile(S3, NOW_S * SEC).encode()}
    tgt = http_target(bodies)
    # the good target's series stored first: the label sets that fill
    # --max-series cannot take its place
    instance = "127.0.0.1:%d" % tgt.server_address[1]
    first = Server(["--max-series", "100"])
    first.push_ok(bodies["/good"], "team=good&instance=%s&service_name=%s" % (instance, instance))
    first.stop()
    args = ["--memory-limit-mb", "256", "--max-series", "100"]
    for path in ("/bomb", "/bomb", "/huge", "/labels"):
        args += ["--scrape", tgt.url + path + ",interval=1s"]
    srv = Server(args + ["--scrape", tgt.url + "/good,interval=1s,team=good"], data=first.data)
    base = ember_test.vm_status(srv.proc.pid, "VmRSS")

    def scrapes(path, result):
        return srv.metric("ember_scrapes_total", '{target="%s%s",result="%s"}'
                          % (tgt.url, path, result), 0)

    wait_for(lambda: all(scrapes(p, "error") >= 3 for p in ("/bomb", "/huge", "/labels")),
             "three failed scrapes of each hostile target", 90)
    wait_for(lambda: scrapes("/good", "ok") >= 2, "two scrapes of the good target", 30)
    check(srv.json("/api/v1/profile-types?query=" + q('{team="good"}'))["types"], "stored")
    rejected = {r: srv.metric("ember_profiles_rejected_total", '{reason="%s"}' % r, 0)
                for r in ("too_large", "series_limit")}
    check(rejected["too_large"] >= 6 and rejected["series_limit"] >= 3, rejected)
    memory_bounded(srv, base, 256, "scrapes of hostile targets")
    # the same bodies pushed get the same refusals (the huge one by its
    # declared size, before the body is sent)
    # (the bomb may find the budget taken by the scrapes: 503 then)
    for path, status in (("/bomb", (413, 503)), ("/labels", (429,))):
        st, out, _ = srv.push(bodies[path], "service_name=pushed")
        check(st in status, "%s pushed: HTTP %d %r" % (path, st, out[:200]))
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    sock.sendall(("POST /api/v1/profiles?service_name=pushed HTTP/1.1\r\nHost: x\r\n"
                  "Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n"
                  % (srv.token, len(bodies["/huge"]))).encode())
    head = sock.recv(4096).decode(errors="replace")
    sock.close()
    check(head.startswith("HTTP/1.1 413"), "/huge pushed: " + head)
    log = srv.stderr()
    check(re.search(r"scrape: '[^']*/bomb': .*(needs more memory|no memory free)", log),
          "the bomb's reason in the log:\n" + log[-2000:])
    check(re.search(r"scrape: '[^']*/huge': answer larger than the profile limit", log),
          "the huge body's reason in the log")
    tgt.shutdown()


def test_profiles__ingest_asks_upstream_at_most_max_fetches_build_ids():
    """A pushed or scraped profile of 2,000 build IDs unknown to the store
    asks upstream for at most --max-fetches (16) of them, as a
    symbolization request does (without the cap: about 4,000 requests);
    the others stay addresses, unresolved with reason upstream_fetch_limit."""
    upstream = http_target({})
    tgt = http_target({"/many": many_build_ids(2000, 1 << 20, NOW_S * SEC)})
    srv = Server(["--upstream", upstream.url, "--scrape", tgt.url + "/many,interval=1h"])

    def asked(first):
        ids = {p.split("/")[2] for p, _ in list(upstream.seen)
               if p.startswith("/buildid/") and int(p.split("/")[2], 16) >= first}
        return len(ids), sum(1 for p, _ in list(upstream.seen)
                             if p.startswith("/buildid/") and int(p.split("/")[2], 16) >= first)

    wait_for(lambda: srv.metric("ember_scrapes_total", '{target="%s/many",result="ok"}'
                                % tgt.url, 0) >= 1, "the scrape", 120)
    ids, requests = asked(1 << 20)
    print("scrape: %d upstream requests for %d build IDs" % (requests, ids))
    check(0 < ids <= 16, "the scrape asked upstream for %d build IDs (%d requests)"
          % (ids, requests))
    before = len(upstream.seen)
    a = srv.push_ok(many_build_ids(2000, 1, T0), "service_name=many")
    pushed = upstream.seen[before:]
    ids = {p.split("/")[2] for p, _ in pushed if p.startswith("/buildid/")}
    print("push: %d upstream requests for %d build IDs" % (len(pushed), len(ids)))
    check(0 < len(ids) <= 16, "the push asked upstream for %d build IDs (%d requests)"
          % (len(ids), len(pushed)))
    check(a["samples"] == 2000 and a["resolved_samples"] == 0, a)
    reasons = {u["reason"] for u in a["unresolved"]}
    check("upstream_fetch_limit" in reasons, reasons)
    upstream.shutdown()
    tgt.shutdown()


if __name__ == "__main__":
    run_case("test_profiles__", globals())
