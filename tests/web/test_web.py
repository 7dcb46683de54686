#!/usr/bin/env python3
"""The web UI (web/, docs/web-ui.md) in a real browser, end to end.

Usage: test_web.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE

Each case is a function test_web__NAME.  It starts `ember serve` on a free
loopback port with a fresh data directory, pushes profiles to it through
POST /api/v1/profiles (pprof written by tests/ember_test.py), opens the page
in Debian's headless Chromium through chromedriver (python3-selenium) and
asserts on what a person sees after real clicks and typing: the tooltip
of the frame under the mouse, the rows of the tables, the suggestions of
the label completion, the colour of a frame.  Every case writes a
screenshot of each view it shows to OUT_DIR/CASE/.  Exit 0 pass, 1 fail,
77 skip: only when Chromium, chromedriver or selenium cannot be had.
"""
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import RawProfile as Profile, Skip, check  # noqa: E402

EMBER, FIX, OUT, CASE = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="ember-web-test.")
SHOTS = os.path.join(OUT, CASE)
CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
MS = 10_000_000  # one sample: 10 ms of cpu


def wait_for(what, fn, timeout=15):
    """fn() until it returns something true; its last value, or fail."""
    deadline = time.time() + timeout
    while True:
        try:
            v = fn()
        except Exception as e:  # noqa: BLE001 - the page is still changing
            v, err = None, e
        else:
            err = None
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out waiting for %s%s" % (what, ": %s" % err if err else ""))
        time.sleep(0.05)


# ---- the server -----------------------------------------------------------------


class Server(ember_test.Server):
    def __init__(self, args=()):
        super().__init__(EMBER, TMP, args)
        # printed once the store is open, after the address
        self.ui = self.await_line(r"web UI: (http://\S+)", "web UI address").group(1)

    def get_json(self, path, **params):
        q = urllib.parse.urlencode(params)
        status, body, _ = self.request("GET", path + ("?" + q if q else ""))
        check(status == 200, "%s: %d %s" % (path, status, body[:200]))
        return json.loads(body)

    def push(self, body, **labels):
        status, text, _ = self.request("POST", "/api/v1/profiles?" + urllib.parse.urlencode(labels),
                                       body, {"Authorization": "Bearer " + self.token,
                                              "Content-Type": "application/octet-stream"})
        check(status == 200, "push %s: %d %s" % (labels, status, text[:300]))
        return json.loads(text)

    def upload(self, path, build, kind):
        with open(path, "rb") as f:
            body = f.read()
        return self.request("PUT", "/api/v1/artifacts/%s/%s?name=%s" % (build, kind, os.path.basename(path)),
                            body, {"Authorization": "Bearer " + self.token})[0]


# The pushed profiles: per version, samples per stack (root first).  In
# version 1 slow_path has 10% of the samples, in version 2 40%: the diff
# must put it at the top, grown.
STACKS = {
    "1": {("main", "handle", "parse"): 200, ("main", "handle", "slow_path"): 100, ("main", "idle"): 700},
    "2": {("main", "handle", "parse"): 200, ("main", "handle", "slow_path"): 400, ("main", "idle"): 400},
}
FILES = {"main": ("/src/shop/main.c", 10), "handle": ("/src/shop/handle.c", 20),
         "parse": ("/src/shop/parse.c", 31), "slow_path": ("/src/shop/slow.c", 42),
         "idle": ("/src/shop/main.c", 50)}
PARTS = 5  # each version is pushed as 5 profiles, one a minute


def shop_profile(version, part, t_ns):
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(0x400000, 0x500000, "/app/shop", "")
    locs = {}
    for i, name in enumerate(FILES):
        f = p.function(name, FILES[name][0], FILES[name][1])
        locs[name] = p.location(m, 0x401000 + 0x100 * i, [(f, FILES[name][1] + 2)])
    for stack, n in STACKS[version].items():
        k = n // PARTS
        p.sample([locs[f] for f in reversed(stack)], [k, k * MS])
    return p.encode(t_ns, 10 * 10**9)


def push_shop(srv, versions=("1", "2"), services=("shop",), ago_s=0):
    """Each version's profiles at 50, 40, 30, 20 and 10 minutes (version 2
    a minute later) before now - ago_s."""
    now = time.time_ns() - ago_s * 10**9
    for service in services:
        for v in versions:
            for part in range(PARTS):
                t = now - (50 - 10 * part - (1 if v == "2" else 0)) * 60 * 10**9
                srv.push(shop_profile(v, part, t), service_name=service, version=v)


# ---- the browser -------------------------------------------------------------------


class Browser:
    """Debian's Chromium, headless, through chromedriver: the flags of
    .library's machine notes (no background networking on a closed net)."""

    def __init__(self, width=1280, height=1000):
        chromium = packages.which("chromium")
        driver = packages.which("chromedriver")
        if not chromium:
            raise Skip(packages.missing("chromium"))
        if not driver:
            raise Skip(packages.missing("chromedriver"))
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.options import Options
            from selenium.webdriver.chrome.service import Service
        except ImportError as e:
            raise Skip(packages.missing("/usr/lib/python3/dist-packages/selenium",
                                        "python3-selenium cannot be imported by %s (%s)"
                                        % (sys.executable, e)))
        o = Options()
        o.binary_location = chromium
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-extensions",
                     "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1",
                     "--user-data-dir=" + tempfile.mkdtemp(dir=TMP, prefix="chromium.")]:
            o.add_argument(flag)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            self.d = webdriver.Chrome(service=Service(driver, log_path=os.path.join(TMP, "chromedriver.log")),
                                      options=o)
        except Exception as e:  # noqa: BLE001 - whatever keeps Chromium from starting
            raise Skip("chromium cannot start headless here: %s" % str(e).strip().splitlines()[0])
        self.d.set_script_timeout(20)
        os.makedirs(SHOTS, exist_ok=True)

    def open(self, url):
        self.d.get(url)
        wait_for("the page's script", lambda: self.js("return !!window.ember"))

    def show(self, srv, query, view="flame", **params):
        """Open the page on a selector (and more of the URL's state) and
        wait for the view's first graph."""
        self.open(srv.ui + "?" + urllib.parse.urlencode(dict(params, query=query)))
        self.rendered(view)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def el(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_element(By.CSS_SELECTOR, css)

    def els(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def text(self, css):
        return self.el(css).text

    def shot(self, name):
        path = os.path.join(SHOTS, name + ".png")
        self.d.save_screenshot(path)
        return path

    def errors(self):
        """The page's console errors since the last call (a failed request
        shows there too)."""
        return [e["message"] for e in self.d.get_log("browser") if e["level"] == "SEVERE"]

    def no_errors(self):
        errors = self.errors()
        check(not errors, "console errors: %s" % errors)

    def renders(self, view="flame"):
        """How many times view was drawn so far."""
        return len([r for r in self.js("return window.emberPerf.renders") if r["view"] == view])

    def rendered(self, view="flame", n=1):
        wait_for("%s rendered" % view, lambda: self.renders(view) >= n)

    def frame(self, name, graph="flame"):
        """Where the widest drawn frame of function name is (client px)."""
        return wait_for("frame '%s' drawn" % name,
                        lambda: self.js("return window.ember.%s.frameRect(arguments[0])" % graph, name))

    def point(self, name, graph="flame"):
        """Scroll a frame into view and move the real mouse over it."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        r = self.frame(name, graph)
        h = self.js("return window.innerHeight")
        if not 20 < r["y"] < h - 20:
            self.js("window.scrollBy(0, arguments[0])", r["y"] - h / 2)
            r = self.frame(name, graph)
        a = ActionBuilder(self.d)
        a.pointer_action.move_to_location(int(r["x"]), int(r["y"]))
        a.perform()
        return r

    def hover(self, name, graph="flame"):
        """Move the real mouse over a frame; the tooltip's text."""
        self.point(name, graph)
        return wait_for("the tooltip of '%s'" % name,
                        lambda: self.el("#tooltip").is_displayed() and self.text("#tooltip").startswith(name)
                        and self.text("#tooltip"))

    def click_frame(self, name, graph="flame"):
        from selenium.webdriver.common.action_chains import ActionChains
        self.hover(name, graph)
        ActionChains(self.d).click().perform()

    def keys(self, *keys):
        """Real key presses, to whatever has the focus."""
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.d).send_keys(*keys).perform()

    def focused(self):
        """What has the focus, as describe_js names it."""
        return self.js("return (" + DESCRIBE_JS + ")(document.activeElement)")

    def tab_to(self, what, limit=150):
        """Tab (real key presses) until `what` (a focused() name) has the
        focus; how many presses it took."""
        from selenium.webdriver.common.keys import Keys
        for n in range(1, limit + 1):
            self.keys(Keys.TAB)
            if self.focused() == what:
                return n
        raise AssertionError("Tab never reached %s" % what)

    def download(self, css, name):
        """Click a download link; the file the browser saved."""
        folder = tempfile.mkdtemp(dir=TMP, prefix="downloads.")
        self.d.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
        self.el(css).click()
        path = os.path.join(folder, name)
        wait_for("the download of " + name, lambda: os.path.exists(path) and not
                 [f for f in os.listdir(folder) if f.endswith(".crdownload")])
        with open(path, "rb") as f:
            return f.read()

    def quit(self):
        self.d.quit()


# How the keyboard test names an element: its id, or for a table row its
# table and function, or its tag and text.
DESCRIBE_JS = """(e) => !e || e === document.body ? 'body'
  : e.id ? '#' + e.id
  : e.tagName === 'TR' ? e.closest('table').id + ' row ' + e.dataset.name
  : e.tagName === 'INPUT' && e.type === 'radio' ? 'radio ' + e.name + ' ' + e.value
  : e.tagName.toLowerCase() + ' ' + (e.textContent || '').trim().slice(0, 40)"""

# Every control a person can reach with the keyboard, in the view shown:
# focusable, visible, enabled; of a radio group the checked one (Tab
# enters a group there, arrows move in it).
FOCUSABLE_JS = """
const describe = %s;
const sel = 'a[href], button, input, select, textarea, [tabindex]';
return [...document.querySelectorAll(sel)].filter((e) =>
  e.tabIndex >= 0 && !e.disabled && e.getClientRects().length && !e.closest('[hidden]')
  && getComputedStyle(e).visibility !== 'hidden' && (e.type !== 'radio' || e.checked)).map(describe);
""" % DESCRIBE_JS


def tab_walk(b):
    """Every element Tab reaches from the top of the page, in order, once
    round (real key presses)."""
    from selenium.webdriver.common.keys import Keys
    b.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    seen = []
    for _ in range(300):  # from wherever the focus was, until it comes round
        b.keys(Keys.TAB)
        f = b.focused()
        if seen and f == seen[0]:
            break
        if f != "body" and f not in seen:
            seen.append(f)
    return seen


def check_keyboard_reaches_all(b, view):
    want = b.js(FOCUSABLE_JS)
    got = tab_walk(b)
    missing = [w for w in want if w not in got]
    check(len(want) > 10, "%s: too few controls found: %s" % (view, want))
    check(not missing, "%s: Tab never reaches %s (reached %s)" % (view, missing, got))
    return got


# Colour vision deficiency: Machado, Oliveira and Fernandes (2009), the
# matrices for severity 1.0, on linear RGB; the distance between two
# colours as CIE76 Delta E in CIELAB (D65).
CVD = {"protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                      [-0.003882, -0.048116, 1.051998]],
       "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                        [-0.011820, 0.042940, 0.968881]],
       "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                      [0.004733, 0.691367, 0.303900]]}


def lin(c):
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def lab(rgb_lin):
    r, g, b = (min(max(x, 0.0), 1.0) for x in rgb_lin)
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b,
           0.0193 * r + 0.1192 * g + 0.9505 * b)
    f = [(t / w) ** (1 / 3) if t / w > 0.008856 else 7.787 * t / w + 16 / 116
         for t, w in zip(xyz, (0.95047, 1.0, 1.08883))]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


def seen_as(fill, deficiency=None):
    """A CSS rgb() colour in CIELAB, as a reader with deficiency sees it."""
    c = [lin(float(x)) for x in re.findall(r"\d+", fill)[:3]]
    if deficiency:
        m = CVD[deficiency]
        c = [sum(m[i][j] * c[j] for j in range(3)) for i in range(3)]
    return lab(c)


def delta_e(a, b):
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def pct_of(tooltip, line):
    """The percentage at the end of the tooltip's `line:` line."""
    m = re.search(r"^%s: .*?([0-9.]+)%%$" % line, tooltip, re.M)
    check(m, "no %s percentage in the tooltip %r" % (line, tooltip))
    return float(m.group(1))


def go_pprof_top(pprof):
    """`go tool pprof -top` of a pprof file: per function its row (flat,
    flat%, sum%, cum, cum%)."""
    go = packages.which("go")
    if not go:
        raise Skip(packages.missing("go", "`go tool pprof` reads the downloaded pprof"))
    path = os.path.join(TMP, "download.pb.gz")
    with open(path, "wb") as f:
        f.write(pprof)
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"), PPROF_TMPDIR=os.path.join(TMP, "pprof"))
    r = subprocess.run([go, "tool", "pprof", "-top", "-symbolize=none", path], capture_output=True, text=True,
                       env=env, timeout=120)
    check(r.returncode == 0, "go tool pprof: " + r.stderr[-2000:])
    return {f[-1]: f[:5] for f in (line.split() for line in r.stdout.splitlines())
            if len(f) == 6 and f[1].endswith("%") and f[4].endswith("%")}


def table_rows(b, css="#top tbody tr"):
    return [[td.text for td in tr.find_elements("css selector", "td")] for tr in b.els(css)]


# ---- cases ----------------------------------------------------------------------------


def test_web__assets_cached_and_self_contained():
    """/ is the page; every file it names is served with an ETag that
    gives 304 when the browser has it, and the CSP lets nothing load
    from elsewhere."""
    srv = Server()
    status, html, h = srv.request("GET", "/")
    check(status == 200 and h["content-type"].startswith("text/html"), "GET /: %d %s" % (status, h))
    check("default-src 'self'" in h.get("content-security-policy", ""), "no CSP: %s" % h)
    check(h.get("cache-control") == "no-cache" and h.get("etag"), "caching headers: %s" % h)
    status, _, h2 = srv.request("GET", "/", headers={"If-None-Match": h["etag"]})
    check(status == 304 and h2["etag"] == h["etag"], "revalidation: %d" % status)
    names = set(re.findall(r'(?:src|href)="(/[^"?]+)"', html.decode()))
    js = srv.request("GET", "/js/main.js")[1].decode()
    names |= {"/js/" + m for m in re.findall(r"from '\./([a-z-]+\.js)'", js)}
    check(len(names) >= 8, "the page names too few files: %s" % names)
    for n in sorted(names):
        status, body, hh = srv.request("GET", n)
        check(status == 200 and body and hh.get("etag"), "%s: %d" % (n, status))
        check(not re.search(rb"https?://(?!www\.w3\.org/2000/svg\b)", body), "%s names another host" % n)
    check(srv.request("GET", "/js/nothing.js")[0] != 200, "an unknown file is served")
    check(srv.request("GET", "/js/../index.html")[0] != 200, "a path with .. is served")
    srv.stop()


def test_web__artifacts_listing_pages():
    """GET /api/v1/artifacts lists every stored build ID with what its
    files carry, a page at a time (the debuginfo view's source)."""
    srv = Server()
    ids = []
    for name in ("c_O2_pie", "c_stripped"):
        out = subprocess.run(["readelf", "-n", os.path.join(FIX, name)], capture_output=True, text=True).stdout
        b = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
        check(srv.upload(os.path.join(FIX, name), b, "executable") == 201, "upload " + name)
        ids.append(b)
    ids.sort()
    first = srv.get_json("/api/v1/artifacts", limit=1)
    check([x["build_id"] for x in first["build_ids"]] == ids[:1] and first["next"] == ids[0],
          "first page: %s" % first)
    second = srv.get_json("/api/v1/artifacts", limit=1, after=first["next"])
    check([x["build_id"] for x in second["build_ids"]] == ids[1:2], "second page: %s" % second)
    check(second["next"] is None, "a third page: %s" % second)
    whole = srv.get_json("/api/v1/artifacts")
    check([x["build_id"] for x in whole["build_ids"]] == ids, "listing: %s" % whole)
    pie = [x for x in whole["build_ids"] if x["artifacts"][0]["name"] == "c_O2_pie"][0]
    check("dwarf" in pie["artifacts"][0]["features"] and pie["sources_named"] > 0,
          "c_O2_pie carries DWARF and names sources: %s" % pie)
    check(srv.request("GET", "/api/v1/artifacts?limit=x")[0] == 400, "a bad limit is 400")
    check(srv.request("GET", "/api/v1/artifacts?after=XYZ")[0] == 400, "a bad after is 400")
    srv.stop()


def test_web__label_completion_offers_pushed_values():
    srv = Server()
    push_shop(srv, versions=("1",), services=("shop", "cart"))
    b = Browser()
    try:
        b.open(srv.ui)
        q = b.el("#query")
        q.click()
        q.send_keys("{serv")
        names = wait_for("label names offered", lambda: b.el("#query-suggest").is_displayed()
                         and b.text("#query-suggest").split("\n"))
        check(names == ["service_name"], "names offered for 'serv': %s" % names)
        from selenium.webdriver.common.keys import Keys
        q.send_keys(Keys.ARROW_DOWN, Keys.ENTER)
        check(q.get_attribute("value") == '{service_name="', "after taking the name: %r" % q.get_attribute("value"))
        values = wait_for("values offered", lambda: b.el("#query-suggest").is_displayed()
                          and sorted(b.text("#query-suggest").split("\n")))
        check(values == ["cart", "shop"], "values offered: %s" % values)
        b.shot("completion")
        q.send_keys("sh", Keys.ARROW_DOWN, Keys.ENTER)
        check(q.get_attribute("value") == '{service_name="shop"}', "taken: %r" % q.get_attribute("value"))
        q.send_keys(Keys.ENTER)
        wait_for("the URL holds the selector",
                 lambda: urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query)
                 .get("query") == ['{service_name="shop"}'])
    finally:
        b.quit()
        srv.stop()


def test_web__flame_graph_shows_pushed_percentages():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop",version="1"}')
        want = {"main": (100, 0), "handle": (30, 0), "parse": (20, 20), "slow_path": (10, 10), "idle": (70, 70)}
        for name, (total, self_) in want.items():
            tip = b.hover(name)
            check(abs(pct_of(tip, "total") - total) < 0.01 and abs(pct_of(tip, "self") - self_) < 0.01,
                  "%s: want total %s%% self %s%%, tooltip %r" % (name, total, self_, tip))
        tip = b.hover("slow_path")
        # the file and line of the location pushed (the function starts at 42)
        check("file: /src/shop/slow.c:44" in tip.split("\n"), "the source file and line of slow_path: %r" % tip)
        check("(100 samples)" in tip, "slow_path's samples: %r" % tip)
        rows = {r[0]: r for r in table_rows(b)}
        check(set(rows) == {"main", "handle", "parse", "slow_path", "idle"}, "top table: %s" % rows)
        check(rows["idle"][2] == "70.00%" and rows["idle"][4] == "70.00%", "idle row: %s" % rows["idle"])
        check(rows["handle"][2] == "0.00%" and rows["handle"][4] == "30.00%", "handle row: %s" % rows["handle"])
        b.shot("flame")
        # the downloads are what is on screen: folded stacks and SVG drawn
        # here, pprof from the server
        folded = b.download("#dl-folded", "profile.folded.txt").decode()
        check(sorted(folded.split("\n")) == ["", "main;handle;parse 2000000000", "main;handle;slow_path 1000000000",
                                             "main;idle 7000000000"], "folded download: %r" % folded)
        svg = b.download("#dl-svg", "flamegraph.svg").decode()
        check(svg.startswith("<svg") and ">slow_path</text>" in svg and "total: 1.00 s (100 samples), 10.00%" in svg,
              "SVG download: %r" % svg[:300])
        pprof = b.download("#dl-pprof", "profile.pb.gz")
        check(pprof[:2] == b"\x1f\x8b", "the pprof download is gzip'd: %r" % pprof[:8])
        href = urllib.parse.urlparse(b.el("#dl-pprof").get_attribute("href"))
        status, api_pprof, _ = srv.request("GET", href.path + "?" + href.query)
        check(status == 200 and gzip.decompress(api_pprof) == gzip.decompress(pprof),
              "unzoomed, the pprof download is not the server's of the selection")
        # the table sorts by a column header click
        b.el('#top th[data-key="name"] button').click()
        names = [r[0] for r in table_rows(b)]
        check(names == sorted(names), "sorted by name: %s" % names)
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__zoom_and_search_change_the_view():
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        idle_w = b.frame("idle")["w"]
        b.click_frame("handle")
        wait_for("zoomed on handle", lambda: b.js("return window.ember.state().zoom") == "main;handle")
        check(b.js("return window.ember.flame.frameRect('idle')") is None, "idle still drawn once zoomed on handle")
        check(b.frame("parse")["w"] > 2 * idle_w * 0.2 / 0.7, "parse not widened by the zoom")
        crumbs = [x.text for x in b.els("#crumbs button")]
        check(crumbs == ["all", "main", "handle"], "the zoom path: %s" % crumbs)
        b.shot("zoomed")
        tip = b.hover("parse")
        check(abs(pct_of(tip, "of zoomed frame") - 66.67) < 0.01, "parse of handle: %r" % tip)
        # the downloads are of what is on screen: the zoomed subtree
        folded = b.download("#dl-folded", "profile.folded.txt").decode()
        check(sorted(folded.split("\n")) == ["", "main;handle;parse 2000000000", "main;handle;slow_path 1000000000"],
              "folded download, zoomed on handle: %r" % folded)
        svg = b.download("#dl-svg", "flamegraph.svg").decode()
        check(">parse</text>" in svg and ">idle</text>" not in svg, "SVG download, zoomed: %r" % svg[:300])
        pprof = b.download("#dl-pprof", "profile.pb.gz")
        top = go_pprof_top(pprof)
        check(top["parse"][0] == "2s" and top["slow_path"][0] == "1s" and top["handle"][3] == "3s"
              and top["main"][3] == "3s" and "idle" not in top, "go tool pprof -top of the zoomed pprof: %s" % top)
        # deeper, then back: Zoom out one step, a caller's button of the path
        b.click_frame("parse")
        wait_for("zoomed on parse", lambda: b.js("return window.ember.state().zoom") == "main;handle;parse")
        b.el("#zoom-out").click()
        wait_for("zoom out", lambda: b.js("return window.ember.state().zoom") == "main;handle")
        [x for x in b.els("#crumbs button") if x.text == "main"][0].click()
        wait_for("the path's main", lambda: b.js("return window.ember.state().zoom") == "main")
        check(b.frame("idle"), "idle drawn again under main")
        b.el("#reset-zoom").click()
        wait_for("reset", lambda: b.js("return window.ember.state().zoom") == "")
        b.click_frame("handle")
        wait_for("zoomed on handle again", lambda: b.js("return window.ember.state().zoom") == "main;handle")
        from selenium.webdriver.common.keys import Keys
        b.el("#flame").send_keys(Keys.ESCAPE)
        wait_for("zoomed out", lambda: b.js("return window.ember.state().zoom") == "")
        check(b.frame("idle"), "idle drawn again")
        # keyboard: from the root, Up (flame: towards the leaves) and Enter zoom
        b.el("#flame").send_keys(Keys.ARROW_UP, Keys.ARROW_UP, Keys.ENTER)
        wait_for("zoom from the keyboard", lambda: b.js("return window.ember.state().zoom") == "main;idle")
        b.el("#reset-zoom").click()
        s = b.el("#search")
        s.send_keys("pars|slow")
        info = wait_for("search share", lambda: b.text("#search-info"))
        check("2 functions match, 30.00% of the total" in info, "search info: %r" % info)
        rows = [r[0] for r in table_rows(b)]
        check(sorted(rows) == ["parse", "slow_path"], "the table filtered by the search: %s" % rows)
        hl = b.frame("parse")["fill"]
        check(hl == "rgb(190,60,200)" and b.frame("idle")["fill"] != hl, "highlight: %s" % hl)
        b.shot("search")
        # a row click focuses the flame graph on that function
        s.send_keys(Keys.CONTROL, "a")
        s.send_keys(Keys.DELETE)
        wait_for("search cleared", lambda: len(table_rows(b)) == 5)
        [tr for tr in b.els("#top tbody tr") if tr.text.startswith("slow_path")][0].click()
        wait_for("focused on slow_path", lambda: b.js("return window.ember.state().zoom") == "main;handle;slow_path")
        b.shot("focused")
    finally:
        b.quit()
        srv.stop()


def test_web__diff_puts_the_slowed_function_first_in_red():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.open(srv.ui + '?view=diff&query=' + urllib.parse.quote('{service_name="shop"}'))
        b.rendered("diff")
        names = wait_for("preset label names", lambda: [o.text for o in b.els("#preset-name option")])
        check("version" in names, "label names for the preset: %s" % names)
        wait_for("preset values", lambda: [o.text for o in b.els("#preset-b option")] == ["1", "2"])
        check(b.el("#preset-name").get_attribute("value") == "version", "version preselected")
        b.el("#preset-ab").click()
        b.rendered("diff", 2)
        st = b.js("return window.ember.state()")
        check(st["base_query"] == '{service_name="shop", version="1"}'
              and st["new_query"] == '{service_name="shop", version="2"}', "preset: %s" % st)
        rows = table_rows(b, "#regressions tbody tr")
        check(rows and rows[0][0] == "slow_path", "first regression: %s" % rows[:2])
        check(rows[0][3] == "+30.00" and rows[0][8] == "grew", "slow_path's row: %s" % rows[0])
        idle = [r for r in rows if r[0] == "idle"][0]
        check(idle[3] == "-30.00", "idle's row: %s" % idle)
        fill = b.frame("slow_path", "diffFlame")["fill"]
        r, g, bl = map(int, re.findall(r"\d+", fill))
        check(r == 255 and g < 100 and bl < 100, "slow_path drawn as grown (red): %s" % fill)
        r, g, bl = map(int, re.findall(r"\d+", b.frame("idle", "diffFlame")["fill"]))
        check(bl == 255 and r < 200, "idle drawn as shrunk (blue)")
        tip = b.hover("slow_path", "diffFlame")
        check("base 10.00% → new 40.00% (+30.00 points, grew)" in tip, "diff tooltip: %r" % tip)
        check("file: /src/shop/slow.c:44" in tip.split("\n"), "the diff tooltip's file and line: %r" % tip)
        # the thresholds and the noise estimate are the API's
        doc = srv.get_json("/api/v1/diff", type=CPU, format="table", **{k: st[k] for k in (
            "base_query", "new_query", "base_from", "base_to", "new_from", "new_to")})
        want = "at least %g points, %g%% relative and %gσ" % (doc["min_abs_pct"], round(doc["min_rel"] * 100, 4),
                                                               doc["min_z"])
        check(want in b.text("#diff-thresholds"), "thresholds %r, want %r" % (b.text("#diff-thresholds"), want))
        api_row = [r for r in doc["rows"] if r["name"] == "slow_path"][0]
        check(rows[0][4] == "±%.2f" % api_row["noise_self_pct"] and rows[0][5] == "%.1f" % api_row["z"],
              "slow_path's noise and z: %s, the API's %s" % (rows[0], api_row))
        # grew, shrank and unchanged stay apart for readers with each
        # colour vision deficiency (not red against green)
        grew, shrank = fill, b.frame("idle", "diffFlame")["fill"]
        same = b.frame("main", "diffFlame")["fill"]
        for cvd in [None] + sorted(CVD):
            g_, s_, n_ = seen_as(grew, cvd), seen_as(shrank, cvd), seen_as(same, cvd)
            check(delta_e(g_, s_) > 40 and delta_e(g_, n_) > 20 and delta_e(s_, n_) > 20,
                  "%s: grew %s, shrank %s, same %s are %.0f, %.0f, %.0f apart (Delta E)"
                  % (cvd or "normal vision", grew, shrank, same, delta_e(g_, s_), delta_e(g_, n_), delta_e(s_, n_)))
        check(b.el("#diff-legend").is_displayed(), "no legend to the overlaid diff's colours")
        b.shot("diff")
        # the downloads: pprof is the API's diff, folded what is drawn (all
        # of it: the API's folded diff line for line)
        href = b.el("#dl-diff-pprof").get_attribute("href")
        pprof = b.download("#dl-diff-pprof", "diff.pb.gz")
        check(pprof[:2] == b"\x1f\x8b", "the diff's pprof is gzip'd: %r" % pprof[:8])
        href = urllib.parse.urlparse(href)
        status, api_pprof, _ = srv.request("GET", href.path + "?" + href.query)
        check(status == 200 and gzip.decompress(api_pprof) == gzip.decompress(pprof), "the pprof is not the API's")
        folded = b.download("#dl-diff-folded", "diff.folded.txt").decode()
        status, api_folded, _ = srv.request("GET", "/api/v1/diff?" + urllib.parse.urlencode({
            "type": CPU, "base_query": st["base_query"], "new_query": st["new_query"], "base_from": st["base_from"],
            "base_to": st["base_to"], "new_from": st["new_from"], "new_to": st["new_to"], "format": "folded"}))
        check(sorted(folded.split()) == sorted(api_folded.decode().split()),
              "folded download %r, the API's %r" % (folded, api_folded))
        # one click from the diff frame to the plain flame graph of a side
        b.click_frame("slow_path", "diffFlame")
        wait_for("the diff zoomed", lambda: b.js("return window.ember.state().dzoom") == "main;handle;slow_path")
        folded = b.download("#dl-diff-folded", "diff.folded.txt").decode()
        check(folded.split() == ["main;handle;slow_path", "1000000000", "4000000000"], "zoomed folded: %r" % folded)
        flames = b.renders("flame")
        b.el("#open-new").click()
        b.rendered("flame", flames + 1)
        st = b.js("return window.ember.state()")
        check(st["view"] == "flame" and st["query"] == '{service_name="shop", version="2"}'
              and st["zoom"] == "main;handle;slow_path", "the new side's flame graph: %s" % st)
        tip = b.hover("slow_path")
        check(abs(pct_of(tip, "total") - 40) < 0.01, "new side: %r" % tip)
        b.shot("diff-new-side")
        # Back returns to the diff; side by side is a click
        b.d.back()
        b.rendered("diff", 3)
        check(b.js("return window.ember.diffFlame.zoomPath().join(';')") == "main;handle;slow_path", "zoom kept")
        b.el('input[name=diff-layout][value=side]').click()
        b.rendered("diff", 4)
        check(b.js("return window.ember.state().layout") == "side" and b.el("#diff-overlay").is_displayed() is False,
              "side by side shown")
        check(not b.el("#diff-legend").is_displayed(), "the red/blue legend shown beside two plain graphs")
        for g in ("sideBase", "sideNew"):
            check(b.js("return window.ember.%s.zoomPath().join(';')" % g) == "main;handle;slow_path", g + " zoom")
        [x for x in b.els("#diff-crumbs button") if x.text == "all"][0].click()
        wait_for("both sides at the root", lambda: b.js(
            "return window.ember.sideBase.zoom === 0 && window.ember.sideNew.zoom === 0"))
        check(b.frame("slow_path", "sideNew")["w"] > 3 * b.frame("slow_path", "sideBase")["w"],
              "side by side: slow_path wider in new")
        tip = b.hover("slow_path", "sideBase")
        check(abs(pct_of(tip, "total") - 10) < 0.01, "base side: %r" % tip)
        b.shot("diff-side-by-side")
        # a frame clicked on one side zooms both
        b.click_frame("handle", "sideBase")
        wait_for("new follows base", lambda: b.js("return window.ember.sideNew.zoomPath().join(';')") == "main;handle")
        check(b.js("return window.ember.state().dzoom") == "main;handle", "dzoom in the URL")
        b.el("#diff-search").send_keys("slow")
        info = wait_for("side search", lambda: b.text("#diff-search-info"))
        check(info == "1 functions match: base 10.00%, new 40.00%", "side by side search: %r" % info)
        svg = b.download("#dl-diff-svg", "diff-flamegraph.svg").decode()
        check(svg.count(">slow_path</text>") == 2 and ">Base</text>" in svg and ">New</text>" in svg,
              "both sides in the SVG: %r" % svg[:400])
        url = b.d.current_url
        b.quit()
        # the link holds the diff's state
        b = Browser()
        b.open(url)
        b.rendered("diff")
        check(b.el('input[name=diff-layout][value=side]').is_selected(), "layout restored")
        for g in ("sideBase", "sideNew"):
            check(b.js("return window.ember.%s.zoomPath().join(';')" % g) == "main;handle", g + " zoom restored")
        check(b.el("#diff-search").get_attribute("value") == "slow"
              and wait_for("search info", lambda: b.text("#diff-search-info")) == info, "search restored")
        check(b.el("#base-query").get_attribute("value") == '{service_name="shop", version="1"}', "base restored")
        b.click_frame("slow_path", "sideBase")
        flames = b.renders("flame")
        b.el("#open-base").click()
        b.rendered("flame", flames + 1)
        st = b.js("return window.ember.state()")
        check(st["query"] == '{service_name="shop", version="1"}' and st["zoom"] == "main;handle;slow_path",
              "the base side's flame graph: %s" % st)
        tip = b.hover("slow_path")
        check(abs(pct_of(tip, "total") - 10) < 0.01, "base side: %r" % tip)
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__diff_presets_a_day_earlier_and_a_against_b():
    """Version 1 ran yesterday, version 2 today: "A against B" over the last
    hour has an empty base; "this range against a day earlier" finds the
    slowed function, and the base side's flame graph is yesterday's."""
    srv = Server(["--max-profile-age", "2d"])  # yesterday's profiles taken
    push_shop(srv, versions=("1",), ago_s=86400)
    push_shop(srv, versions=("2",))
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        b.el("#tab-diff").click()
        b.rendered("diff")
        wait_for("preset values", lambda: [o.text for o in b.els("#preset-b option")] == ["2"])
        b.el("#preset-ab").click()
        b.rendered("diff", 2)
        st = b.js("return window.ember.state()")
        check(st["base_query"] == st["new_query"] == '{service_name="shop", version="2"}',
              "A against B with one value in range: %s" % st)
        b.el("#preset-day").click()
        b.rendered("diff", 3)
        st = b.js("return window.ember.state()")
        check(st["base_query"] == st["new_query"] == '{service_name="shop"}' and st["base_from"] == "now-25h"
              and st["base_to"] == "now-24h" and st["new_from"] == "now-1h" and st["new_to"] == "now",
              "a day earlier: %s" % st)
        check(b.el("#base-from").get_attribute("value") == "now-25h", "the base's range in the form")
        check(b.text("#diff-status").startswith("base: 5 profiles"), "status: %r" % b.text("#diff-status"))
        rows = table_rows(b, "#regressions tbody tr")
        check(rows and rows[0][0] == "slow_path" and rows[0][3] == "+30.00", "first regression: %s" % rows[:2])
        b.shot("diff-day-earlier")
        b.click_frame("slow_path", "diffFlame")
        flames = b.renders("flame")
        b.el("#open-base").click()
        b.rendered("flame", flames + 1)  # the base side's, not the first view's
        st = b.js("return window.ember.state()")
        check(st["from"] == "now-25h" and st["to"] == "now-24h" and st["zoom"] == "main;handle;slow_path",
              "the base side: %s" % st)
        check(abs(pct_of(b.hover("slow_path"), "total") - 10) < 0.01, "yesterday's share of slow_path")
        b.shot("diff-base-side")
    finally:
        b.quit()
        srv.stop()


def test_web__range_presets_typed_range_and_profile_type():
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        check(b.text("#flame-status").startswith("5 profiles merged, total 10.00 s"), b.text("#flame-status"))
        # the profiles are at 50, 40, 30, 20 and 10 minutes ago
        b.el('[data-range="15m"]').click()
        b.rendered(n=2)
        wait_for("the last 15 minutes", lambda: b.text("#flame-status").startswith("1 profiles merged"))
        check(b.js("return window.ember.state().from") == "now-15m", "from: %s" % b.js("return window.ember.state()"))
        check(b.el('[data-range="15m"]').get_attribute("aria-pressed") == "true", "the preset shown as pressed")
        f = b.el("#from")
        f.clear()
        f.send_keys("now-35m")
        from selenium.webdriver.common.keys import Keys
        f.send_keys(Keys.ENTER)
        b.rendered(n=3)
        wait_for("a typed range", lambda: b.text("#flame-status").startswith("3 profiles merged"))
        b.el('[data-range="1h"]').click()
        b.rendered(n=4)
        # every type the API lists is offered; the samples type counts samples
        types = [t["id"] for t in srv.get_json("/api/v1/profile-types")["types"]]
        offered = [o.get_attribute("value") for o in b.els("#type option")]
        check(sorted(offered) == sorted(types) and len(types) == 2, "types offered %s, listed %s" % (offered, types))
        samples = [t for t in types if ":samples:count:" in t][0]
        from selenium.webdriver.support.ui import Select
        Select(b.el("#type")).select_by_value(samples)
        b.rendered(n=5)
        wait_for("the samples type", lambda: b.text("#flame-status").startswith("5 profiles merged, total 1,000,"))
        check(b.js("return window.ember.state().type") == samples, "type in the state")
        tip = b.hover("idle")
        check("total: 700 (700 samples), 70.00%" in tip.split("\n"), "idle in samples: %r" % tip)
        b.shot("samples-type")
    finally:
        b.quit()
        srv.stop()


def test_web__keyboard_reaches_and_drives_every_view():
    """Tab (real key presses) reaches every control of each view; the
    chart, the flame graph, the tables and the diff are driven from the
    keyboard alone."""
    from selenium.webdriver.common.keys import Keys
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop",version="2"}')
        wait_for("the table", lambda: len(table_rows(b)) == 5)
        order = check_keyboard_reaches_all(b, "flame")
        check(order.index("#query") < order.index("#apply") < order.index("#flame") < order.index("top row idle"),
              "tab order: %s" % order)
        # the flame graph: Up (towards the leaves) twice, Enter zooms
        b.tab_to("#flame")
        b.keys(Keys.ARROW_UP, Keys.ARROW_UP, Keys.ENTER)
        wait_for("zoomed from the keyboard", lambda: b.js("return window.ember.state().zoom").startswith("main;"))
        b.keys(Keys.ESCAPE)
        wait_for("zoomed out", lambda: b.js("return window.ember.state().zoom") == "")
        # a table row: Enter focuses the graph on it
        b.tab_to("top row slow_path")
        b.keys(Keys.ENTER)
        wait_for("focused on slow_path", lambda: b.js("return window.ember.state().zoom") == "main;handle;slow_path")
        # a sort header: Enter sorts
        b.tab_to("button Function")
        b.keys(Keys.ENTER)
        wait_for("sorted by name", lambda: b.js("return window.ember.state().sort") == "name")
        # the chart: Shift+Left narrows the range from its end, Enter takes it
        b.tab_to("#chart")
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(b.d).key_down(Keys.SHIFT).send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT).key_up(Keys.SHIFT) \
            .send_keys(Keys.ENTER).perform()
        wait_for("a range from the keyboard", lambda: b.js("return window.ember.state().to").isdigit())
        st = b.js("return window.ember.state()")
        span = (int(st["to"]) - int(st["from"])) / 60000
        check(48 < span < 58, "two steps of twenty narrowed the hour to %.1f minutes: %s" % (span, st))
        # the diff, opened from the keyboard
        b.open(srv.ui + "?" + urllib.parse.urlencode({
            "query": '{service_name="shop"}', "base_query": '{service_name="shop", version="1"}',
            "new_query": '{service_name="shop", version="2"}', "base_from": "now-1h", "new_from": "now-1h"}))
        b.rendered()
        b.tab_to("#tab-diff")
        b.keys(Keys.ENTER)
        b.rendered("diff")
        wait_for("the regressions", lambda: table_rows(b, "#regressions tbody tr"))
        check_keyboard_reaches_all(b, "diff")
        b.tab_to("#diff-flame")
        b.keys(Keys.ARROW_UP, Keys.ENTER)
        wait_for("the diff zoomed on main", lambda: b.js("return window.ember.state().dzoom") == "main")
        b.tab_to("regressions row slow_path")
        b.keys(Keys.ENTER)
        wait_for("the diff focused on slow_path",
                 lambda: b.js("return window.ember.state().dzoom") == "main;handle;slow_path")
        b.tab_to("#open-new")
        flames = b.renders("flame")
        b.keys(Keys.ENTER)
        b.rendered("flame", flames + 1)
        st = b.js("return window.ember.state()")
        check(st["zoom"] == "main;handle;slow_path" and st["query"] == '{service_name="shop", version="2"}',
              "the new side from the keyboard: %s" % st)
        # the debuginfo view
        b.tab_to("#tab-debuginfo")
        b.keys(Keys.ENTER)
        wait_for("the debuginfo view", lambda: b.el("#view-debuginfo").is_displayed())
        check_keyboard_reaches_all(b, "debuginfo")
        b.shot("keyboard")
    finally:
        b.quit()
        srv.stop()


def test_web__serve_ends_with_the_ui_url_and_the_page_works():
    """What `make run` shows: `ember serve` prints the UI's URL last, once
    the store is open, and the page at that URL works with no
    configuration (an empty store says how to fill it)."""
    data = tempfile.mkdtemp(dir=TMP, prefix="data.")
    proc = subprocess.Popen([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", data],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        lines = []
        deadline = time.time() + 20
        while not lines or "web UI:" not in lines[-1]:
            line = proc.stdout.readline().decode()
            check(line and time.time() < deadline, "no web UI line: %s" % lines)
            lines.append(line.rstrip("\n"))
        check(any("store opened" in x for x in lines[:-1]), "the URL before the store opened: %s" % lines)
        url = re.search(r"web UI: (http://\S+/)$", lines[-1]).group(1)
        b = Browser()
        try:
            b.open(url)
            msg = wait_for("the empty store's message", lambda: b.text("#flame-status"))
            check(msg.startswith("No profiles in this range") and "POST /api/v1/profiles" in msg, msg)
            b.el("#tab-debuginfo").click()
            wait_for("the debuginfo view", lambda: "no build IDs stored yet" in b.text("#artifacts"))
            b.no_errors()
            b.shot("empty")
        finally:
            b.quit()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        proc.stdout.close()


def test_web__url_round_trips_the_state():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        b.el("#icicle").click()
        b.click_frame("handle")
        b.el("#search").send_keys("slow")
        wait_for("state recorded", lambda: b.js("return window.ember.state().search") == "slow")
        b.el('#top th[data-key="total"] button').click()
        url = b.d.current_url
        q = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
        check(q.get("zoom") == ["main;handle"] and q.get("icicle") == ["1"] and q.get("search") == ["slow"]
              and q.get("sort") == ["-total"] and q.get("type") == [CPU], "the URL: %s" % q)
        b.quit()
        b = Browser()
        b.open(url)
        b.rendered()
        st = b.js("return window.ember.state()")
        check(st["zoom"] == "main;handle" and st["icicle"] == "1" and st["search"] == "slow", "state: %s" % st)
        check(b.js("return window.ember.flame.zoomPath().join(';')") == "main;handle", "zoom restored")
        check(b.el("#search").get_attribute("value") == "slow" and b.el("#icicle").is_selected(), "inputs restored")
        check(b.el('#top th[data-key="total"]').get_attribute("aria-sort") == "descending", "sort restored")
        top, root = b.frame("handle"), b.frame("main")
        check(top["y"] > root["y"], "icicle: callees below callers")
        b.shot("restored")
    finally:
        b.quit()
        srv.stop()


def test_web__selector_with_an_unknown_label_says_so():
    """{Service_name="shop"} where the series have service_name: the status
    names the label and the one meant (issue 28), not an empty graph."""
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser()
    try:
        b.show(srv, '{Service_name="shop"}')
        wait_for("the hint", lambda: "no series in this range has the label 'Service_name' "
                 "(did you mean 'service_name'?)" in b.text("#flame-status"))
        b.shot("unknown-label")
    finally:
        b.quit()
        srv.stop()


def push_tenant(srv, tenant, stacks):
    """One CPU profile of stacks to tenant (X-Scope-OrgID), ten minutes ago."""
    body = ember_test.cpu_profile(stacks, time_ns=time.time_ns() - 600 * 10**9).encode()
    status, text, _ = srv.request("POST", "/api/v1/profiles?service_name=shop", body,
                                  {"Authorization": "Bearer " + srv.token, "X-Scope-OrgID": tenant,
                                   "Content-Type": "application/octet-stream"})
    check(status == 200, "push to %s: %d %s" % (tenant, status, text[:300]))


def test_web__tenant_switches_the_flame_graph():
    """Against `ember serve --multitenancy` (two tenants' profiles): opened
    without a tenant the UI says the server needs one and shows the Tenant
    field; naming one draws that tenant's profiles only, another switches
    to its own; the URL keeps the tenant (a link opens it, Back returns to
    the one before), and the server's pprof download is the tenant's."""
    from selenium.webdriver.common.keys import Keys
    srv = Server(["--multitenancy"])
    push_tenant(srv, "team-a", {"main;alpha_work": 30})
    push_tenant(srv, "team-b", {"main;beta_work": 20})
    b = Browser()

    def drawn(name):
        return b.js("return window.ember.flame.frameRect(arguments[0])", name)

    def switch(tenant, want, other):
        n = b.renders()
        b.el("#tenant").send_keys(Keys.CONTROL, "a", Keys.NULL, tenant, Keys.ENTER)  # typed over
        b.rendered(n=n + 1)
        b.frame(want)
        check(not drawn(other), "%s's frame %s drawn as %s" % (other, other, tenant))
        check(b.js("return window.ember.state().tenant") == tenant and
              urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query).get("tenant") == [tenant],
              "the URL does not name %s: %s" % (tenant, b.d.current_url))
    try:
        b.open(srv.ui)
        wait_for("the server's demand for a tenant", lambda: b.el("#tenant-form").is_displayed()
                 and "keeps profiles by tenant" in b.text("#flame-status"))
        check("name yours" in b.text("#tenant-note"), "the note: %r" % b.text("#tenant-note"))
        check(b.el("#tenant").get_attribute("aria-invalid") == "true", "the field is not marked")
        b.shot("tenant-required")
        b.errors()  # the refused requests of the page's start, logged by the console
        switch("team-a", "alpha_work", "beta_work")
        check(not b.el("#tenant-note").is_displayed(), "the note stays once a tenant is named")
        check("30 samples" in b.hover("alpha_work"), "team-a's samples: %r" % b.text("#tooltip"))
        b.shot("team-a")
        pprof = b.download("#dl-pprof", "profile.pb.gz")
        check(pprof[:2] == b"\x1f\x8b", "the pprof download is not gzip'd: %r" % pprof[:60])
        href = urllib.parse.urlparse(b.el("#dl-pprof").get_attribute("href"))
        status, api_pprof, _ = srv.request("GET", href.path + "?" + href.query,
                                           headers={"X-Scope-OrgID": "team-a"})
        check(status == 200 and gzip.decompress(api_pprof) == gzip.decompress(pprof),
              "the pprof download is not team-a's")
        switch("team-b", "beta_work", "alpha_work")
        b.shot("team-b")
        n = b.renders()
        b.d.back()
        b.rendered(n=n + 1)
        b.frame("alpha_work")
        check(b.el("#tenant").get_attribute("value") == "team-a", "Back: the field does not say team-a")
        # a link names its tenant: opened afresh, team-b's graph at once
        b.open(srv.ui + "?tenant=team-b")
        b.rendered()
        b.frame("beta_work")
        check(not drawn("alpha_work"), "team-a's frame drawn from team-b's link")
        check(b.el("#tenant-form").is_displayed() and not b.el("#tenant-note").is_displayed(),
              "a link's tenant: the field hidden or the note shown")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__chart_drag_selects_a_sub_range():
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser()
    try:
        b.open(srv.ui + '?query=' + urllib.parse.quote('{service_name="shop"}') + "&from=now-1h&to=now")
        b.rendered()
        before = b.text("#flame-status")
        check(before.startswith("5 profiles merged"), "before: %r" % before)
        chart = b.el("#chart")
        r = chart.rect
        from selenium.webdriver.common.action_chains import ActionChains
        # the profiles are at 50, 40, 30, 20 and 10 minutes ago: select
        # from about 45 to 25 minutes ago
        x0, x1 = r["width"] * 15 / 60, r["width"] * 35 / 60
        ActionChains(b.d).move_to_element_with_offset(chart, int(x0 - r["width"] / 2), 0).click_and_hold() \
            .move_by_offset(int(x1 - x0), 0).release().perform()
        wait_for("a numeric range", lambda: b.js("return window.ember.state().from").isdigit())
        st = b.js("return window.ember.state()")
        span = (int(st["to"]) - int(st["from"])) / 60000
        check(18 < span < 22, "selected %.1f minutes: %s" % (span, st))
        b.rendered(n=2)
        after = wait_for("the sub-range's graph", lambda: b.text("#flame-status").startswith("2 profiles") and b.text("#flame-status"))
        check(after.startswith("2 profiles merged"), "after: %r" % after)
        b.shot("sub-range")
    finally:
        b.quit()
        srv.stop()


def test_web__debuginfo_view_shows_stores_and_coverage():
    srv = Server(["--profile-head-age", "1s"])  # blocks rewritten soon after an upload
    out = subprocess.run(["readelf", "-n", os.path.join(FIX, "c_O2_pie")], capture_output=True, text=True).stdout
    stored = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
    check(srv.upload(os.path.join(FIX, "c_O2_pie"), stored, "executable") == 201, "upload")
    missing = "5ee1" * 10
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(0x400000, 0x500000, "/opt/blind/bin/blind", missing)
    p.sample([p.location(m, 0x401234)], [7, 7 * MS])
    f = p.function("known", "/src/k.c")
    m2 = p.mapping(0x600000, 0x700000, "/opt/blind/bin/other", "")
    p.sample([p.location(m2, 0x601000, [(f, 3)])], [3, 3 * MS])
    # c_dwarf4, not stored yet: its main, unsymbolized
    dwarf4 = os.path.join(FIX, "c_dwarf4")
    dwarf4_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["readelf", "-n", dwarf4], capture_output=True,
                                                                   text=True).stdout).group(1)
    nm = subprocess.run(["nm", dwarf4], capture_output=True, text=True).stdout
    base = 0x555555554000
    m3 = p.mapping(base, base + 0x100000, "/opt/blind/bin/dwarf4", dwarf4_id)
    p.sample([p.location(m3, base + int(re.search(r"^([0-9a-f]+) T main$", nm, re.M).group(1), 16) + 1)],
             [10, 10 * MS])
    srv.push(p.encode(time.time_ns() - 60 * 10**9, 10 * 10**9), service_name="blind")
    b = Browser()
    try:
        b.open(srv.ui + "?view=debuginfo")
        # a row a module (issue 28): its path, build ID, reason, the share
        # it leaves unnamed, named at the leaf and whole, stored, the fix
        row = wait_for("the coverage row", lambda: [r for r in table_rows(b, "#coverage tbody tr") if r[1] == missing])
        check(row[0][0] == "/opt/blind/bin/blind" and row[0][3] == "35.00%", "coverage of %s: %s" % (missing, row))
        check(row[0][6] == "no", "the missing build ID is not stored: %s" % row)
        check(("ember upload --server %s" % srv.url) in row[0][7], "the fix: %s" % row[0][7])
        check("3 of 20 samples" in b.text("#coverage-summary"), "summary: %r" % b.text("#coverage-summary"))
        # the command shown for c_dwarf4, run with its file in place of the
        # path the profile names: the view then says it is stored, and its
        # samples are symbolized
        fix = [r for r in table_rows(b, "#coverage tbody tr") if r[1] == dwarf4_id]
        check(fix and fix[0][2] == "unknown_build_id" and fix[0][6] == "no", "c_dwarf4's row: %s" % fix)
        cmd = fix[0][7].split("\n")[0]
        check(re.fullmatch(r'ember upload --server %s --token "\$EMBER_TOKEN" --sources /opt/blind/bin/dwarf4' % re.escape(srv.url),
                           cmd), "the command: %r" % cmd)
        bindir = tempfile.mkdtemp(dir=TMP, prefix="bin.")
        os.symlink(EMBER, os.path.join(bindir, "ember"))
        run = subprocess.run(["bash", "-c", cmd.replace("/opt/blind/bin/dwarf4", dwarf4)], capture_output=True, text=True,
                             env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], EMBER_TOKEN=srv.token),
                             timeout=60)
        check(run.returncode == 0, "%s: %d %s" % (cmd, run.returncode, run.stderr))
        b.el("#tab-debuginfo").click()
        wait_for("c_dwarf4 stored", lambda: [r for r in table_rows(b, "#artifacts tbody tr") if r[0] == dwarf4_id])

        def symbolized():  # the view shown again, as a person would look again
            b.el("#tab-debuginfo").click()
            summary = wait_for("the coverage", lambda: "of 20 samples" in b.text("#coverage-summary")
                               and b.text("#coverage-summary"))
            if "13 of 20 samples" not in summary:
                time.sleep(0.5)
                return False
            return not [r for r in table_rows(b, "#coverage tbody tr") if r[1] == dwarf4_id]
        wait_for("c_dwarf4's samples symbolized", symbolized, timeout=60)
        art = wait_for("the stored build ID", lambda: [r for r in table_rows(b, "#artifacts tbody tr") if r[0] == stored])
        check(art[0][1] == "c_O2_pie" and art[0][3].startswith("DWARF") and art[0][4] == "yes"
              and "eh_frame" in art[0][5], "what c_O2_pie carries: %s" % art)
        b.shot("debuginfo")
    finally:
        b.quit()
        srv.stop()


SHELL_DIR = os.path.join(TMP, "shell")  # where a command that ran something would leave "pwned"


def shell_argv(cmd, env=None):
    """The arguments cmd gives `ember` under bash (an ember function that
    prints them), after `bash -n` has read it: a value reaches the
    program literally or the check fails."""
    check(subprocess.run(["bash", "-n", "-c", cmd]).returncode == 0, "bash -n: %r" % cmd)
    r = subprocess.run(["bash", "-c", "ember() { printf '%s\\0' \"$@\"; }; " + cmd], capture_output=True,
                       timeout=10, env=dict(os.environ, EMBER_TOKEN="tok", **(env or {})), cwd=SHELL_DIR)
    check(r.returncode == 0 and not r.stderr, "%r: %d %r" % (cmd, r.returncode, r.stderr))
    return r.stdout.decode().split("\0")[:-1]


def test_web__debuginfo_upload_command_is_safe_to_paste():
    """The upload command is built from text pushed profiles carry: a
    build ID that is not hex gets no command and says why; a file name is
    one single-quoted shell word (a control character: no command), so
    $(...), backticks, ;, quotes reach `ember upload` literally."""
    os.makedirs(SHELL_DIR)
    srv = Server()
    hostile = "$(reboot)aa`touch pwned`;'\"\nx"
    good = "ab12" * 10
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(0x400000, 0x500000, "/opt/x/bin/evil$(reboot)", hostile)
    p.sample([p.location(m, 0x401234)], [5, 5 * MS])
    m2 = p.mapping(0x600000, 0x700000, "/opt/x/bin/plain", good)
    p.sample([p.location(m2, 0x601000)], [3, 3 * MS])
    srv.push(p.encode(time.time_ns() - 60 * 10**9, 10 * 10**9), service_name="paste")
    b = Browser()
    try:
        b.open(srv.ui + "?view=debuginfo")
        rows = wait_for("both coverage rows", lambda: len(b.els("#coverage tbody tr")) >= 2 and b.js(
            "return [...document.querySelectorAll('#coverage tbody tr')]"
            ".map((tr) => [tr.dataset.buildId, (tr.children[7].querySelector('code') || tr.children[7]).textContent])"))
        by_id = dict(rows)
        check(hostile in by_id, "the hostile build ID's row: %r" % rows)
        check("ember upload" not in by_id[hostile], "no command for a build ID that is not hex: %r" % by_id[hostile])
        argv = shell_argv(by_id[good])
        # the file as the profile names it (issue 28)
        check(argv == ["upload", "--server", srv.url, "--token", "tok", "--sources",
                       "/opt/x/bin/plain"], "the hex build ID's command: %r" % argv)
        # The server calls that build ID's reason no_build_id; one it calls
        # unsymbolized (the case) still gets no command.
        def command(row):
            return b.d.execute_async_script(
                "const done = arguments[1];"
                "import('/js/debuginfo.js').then((m) => done(m.uploadCommand(arguments[0])));", row)
        got = command({"build_id": hostile, "reason": "unsymbolized"})
        check("command" not in got and "not a hex build ID" in got.get("why", ""), "%r" % got)
        # File names a profile may carry (the coverage answer's module path),
        # through the module's function called in the page.
        for name in ["/opt/x/evil$(reboot)", "a`touch pwned`b", "x; reboot", "it's", 'say "hi" & ok',
                     "sp ace*", "'", "\\'$HOME"]:
            got = command({"build_id": "ab12", "file": name})
            check(got.get("command"), "%r: %r" % (name, got))
            argv = shell_argv(got["command"], {"HOME": "/nonexistent"})
            check(argv[-2:] == ["--sources", name], "%r arrives as %r" % (name, argv))
        for name in ["a\nreboot", "a\rb", "esc\x1b[2J"]:
            got = command({"build_id": "ab12", "file": name})
            check("command" not in got and "control character" in got.get("why", ""), "%r: %r" % (name, got))
        check(not os.path.exists(os.path.join(SHELL_DIR, "pwned")), "a backtick ran")
        b.shot("debuginfo-paste")
    finally:
        b.quit()
        srv.stop()


def test_web__narrow_screen_still_usable():
    """At 480 px no view scrolls sideways and the graphs fill the width."""
    srv = Server()
    push_shop(srv)
    b = Browser(width=480, height=900)

    def fits(view):
        width, room = b.js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        wide = b.js("const W = document.documentElement.clientWidth, out = [];"
                    "for (const e of document.querySelectorAll('body *')) {"
                    "  const r = e.getBoundingClientRect();"
                    "  if (r.right > W + 0.5 && r.width) out.push(e.tagName + '#' + e.id + ' ' + Math.round(r.right)); }"
                    "return out.slice(0, 8);")
        check(width <= room, "%s: the page scrolls sideways at 480 px: %d px wide in %d (%s)" % (view, width, room, wide))
        b.shot("narrow-" + view)

    try:
        b.show(srv, '{service_name="shop",version="1"}')
        fits("flame")
        check(b.frame("idle")["w"] > 100, "the flame graph fills the width")
        b.el("#tab-diff").click()
        b.rendered("diff")
        b.el("#preset-ab").click()
        b.rendered("diff", 2)
        wait_for("the regressions", lambda: table_rows(b, "#regressions tbody tr"))
        fits("diff")
        check(b.frame("idle", "diffFlame")["w"] > 100, "the diff graph fills the width")
        b.el('input[name=diff-layout][value=side]').click()
        b.rendered("diff", 3)
        fits("diff-side")
        check(b.frame("main", "sideNew")["w"] > 200, "side by side stacks the two graphs, each the full width")
        b.el("#tab-debuginfo").click()
        wait_for("the coverage", lambda: "samples" in b.text("#coverage-summary"))
        fits("debuginfo")
    finally:
        b.quit()
        srv.stop()


def main(cases=None):
    """Run CASE from cases (a module's globals(): another test_web_*.py
    file's, which imports this one's helpers), else from this file's."""
    fn = (cases or globals()).get(CASE)
    if not fn or not CASE.startswith("test_web__"):
        print("no case " + CASE, file=sys.stderr)
        return 2
    try:
        fn()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except AssertionError as e:
        print("FAIL: %s" % e, file=sys.stderr)
        log = os.path.join(TMP, "server.log")
        if os.path.exists(log):
            sys.stderr.write(open(log, errors="replace").read()[-3000:])
        return 1
    finally:
        ember_test.stop_servers()
        shutil.rmtree(TMP, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
