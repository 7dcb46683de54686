#!/usr/bin/env python3
"""The web UI (web/, docs/web-ui.md) in a real browser, end to end.

Usage: test_web.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE

Each case is a function test_web__NAME.  It starts `ember serve` on a free
loopback port with a fresh data directory, pushes profiles to it through
POST /api/v1/profiles (pprof written by pprof_encode.py), opens the page
in Debian's headless Chromium through chromedriver (python3-selenium) and
asserts on what a person sees after real clicks and typing: the tooltip
of the frame under the mouse, the rows of the tables, the suggestions of
the label completion, the colour of a frame.  Every case writes a
screenshot of each view it shows to OUT_DIR/CASE/.  Exit 0 pass, 1 fail,
77 skip: only when Chromium, chromedriver or selenium cannot be had.
"""
import http.client
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
sys.path.insert(0, HERE)
import packages  # noqa: E402
from pprof_encode import Profile  # noqa: E402

EMBER, FIX, OUT, CASE = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="ember-web-test.")
SHOTS = os.path.join(OUT, CASE)
CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
MS = 10_000_000  # one sample: 10 ms of cpu


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


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


SERVERS = []  # stopped at exit, whatever the outcome


class Server:
    def __init__(self):
        SERVERS.append(self)
        self.data = tempfile.mkdtemp(dir=TMP, prefix="data.")
        self.log = open(os.path.join(TMP, "server.log"), "ab")
        self.proc = subprocess.Popen([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", self.data],
                                     stdout=subprocess.PIPE, stderr=self.log)
        self.port, self.ui = None, None
        deadline = time.time() + 20
        while self.ui is None:
            line = self.proc.stdout.readline().decode()
            check(line or time.time() < deadline, "server printed no address")
            check(self.proc.poll() is None, "server exited at start")
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            m = re.search(r"web UI: (http://\S+)", line)
            if m:
                self.ui = m.group(1)
        self.url = "http://127.0.0.1:%d" % self.port
        wait_for("/healthz", lambda: self.request("GET", "/healthz")[0] == 200)
        with open(os.path.join(self.data, "token")) as f:
            self.token = f.read().strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        if not self.log.closed:
            self.proc.stdout.close()
            self.log.close()

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

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


def push_shop(srv, versions=("1", "2"), services=("shop",)):
    now = time.time_ns()
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
        """The page's console errors (a failed request shows there too)."""
        return [e["message"] for e in self.d.get_log("browser") if e["level"] == "SEVERE"]

    def rendered(self, view="flame", n=1):
        wait_for("%s rendered" % view,
                 lambda: len([r for r in self.js("return window.emberPerf.renders") if r["view"] == view]) >= n)

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


def pct_of(tooltip, line):
    """The percentage at the end of the tooltip's `line:` line."""
    m = re.search(r"^%s: .*?([0-9.]+)%%$" % line, tooltip, re.M)
    check(m, "no %s percentage in the tooltip %r" % (line, tooltip))
    return float(m.group(1))


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
        b.open(srv.ui + '?query=' + urllib.parse.quote('{service_name="shop",version="1"}'))
        b.rendered()
        want = {"main": (100, 0), "handle": (30, 0), "parse": (20, 20), "slow_path": (10, 10), "idle": (70, 70)}
        for name, (total, self_) in want.items():
            tip = b.hover(name)
            check(abs(pct_of(tip, "total") - total) < 0.01 and abs(pct_of(tip, "self") - self_) < 0.01,
                  "%s: want total %s%% self %s%%, tooltip %r" % (name, total, self_, tip))
        tip = b.hover("slow_path")
        check("file: /src/shop/slow.c" in tip, "the source file of slow_path: %r" % tip)
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
        # the table sorts by a column header click
        b.el('#top th[data-key="name"] button').click()
        names = [r[0] for r in table_rows(b)]
        check(names == sorted(names), "sorted by name: %s" % names)
        check(not b.errors(), "console errors: %s" % b.errors())
    finally:
        b.quit()
        srv.stop()


def test_web__zoom_and_search_change_the_view():
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser()
    try:
        b.open(srv.ui + '?query=' + urllib.parse.quote('{service_name="shop"}'))
        b.rendered()
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
        b.shot("diff")
        # one click from the diff frame to the plain flame graph of a side
        b.click_frame("slow_path", "diffFlame")
        b.el("#open-new").click()
        b.rendered("flame")
        st = b.js("return window.ember.state()")
        check(st["view"] == "flame" and st["query"] == '{service_name="shop", version="2"}'
              and st["zoom"] == "main;handle;slow_path", "the new side's flame graph: %s" % st)
        tip = b.hover("slow_path")
        check(abs(pct_of(tip, "total") - 40) < 0.01, "new side: %r" % tip)
        b.shot("diff-new-side")
        q = urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query)
        q.update(view=["diff"], layout=["side"])
        b.open(srv.ui + "?" + urllib.parse.urlencode(q, doseq=True))
        b.rendered("diff")
        check(b.frame("slow_path", "sideNew")["w"] > 3 * b.frame("slow_path", "sideBase")["w"],
              "side by side: slow_path wider in new")
        b.shot("diff-side-by-side")
    finally:
        b.quit()
        srv.stop()


def test_web__url_round_trips_the_state():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.open(srv.ui + '?query=' + urllib.parse.quote('{service_name="shop"}'))
        b.rendered()
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
    srv = Server()
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
    srv.push(p.encode(time.time_ns() - 60 * 10**9, 10 * 10**9), service_name="blind")
    b = Browser()
    try:
        b.open(srv.ui + "?view=debuginfo")
        row = wait_for("the coverage row", lambda: [r for r in table_rows(b, "#coverage tbody tr") if r[0] == missing])
        check(row[0][2] == "7" and row[0][3] == "70.00%", "coverage of %s: %s" % (missing, row))
        check(row[0][4] == "no", "the missing build ID is not stored: %s" % row)
        check(("ember upload --server %s" % srv.url) in row[0][5], "the fix: %s" % row[0][5])
        check("3 of 10 samples" in b.text("#coverage-summary"), "summary: %r" % b.text("#coverage-summary"))
        art = wait_for("the stored build ID", lambda: [r for r in table_rows(b, "#artifacts tbody tr") if r[0] == stored])
        check(art[0][1] == "c_O2_pie" and art[0][3].startswith("DWARF") and art[0][4] == "yes"
              and "eh_frame" in art[0][5], "what c_O2_pie carries: %s" % art)
        b.shot("debuginfo")
    finally:
        b.quit()
        srv.stop()


def test_web__narrow_screen_still_usable():
    srv = Server()
    push_shop(srv, versions=("1",))
    b = Browser(width=480, height=900)
    try:
        b.open(srv.ui + '?query=' + urllib.parse.quote('{service_name="shop"}'))
        b.rendered()
        width, room = b.js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        wide = b.js("const W = document.documentElement.clientWidth, out = [];"
                    "for (const e of document.querySelectorAll('body *')) {"
                    "  const r = e.getBoundingClientRect();"
                    "  if (r.right > W + 0.5 && r.width) out.push(e.tagName + '#' + e.id + ' ' + Math.round(r.right)); }"
                    "return out.slice(0, 8);")
        check(width <= room, "the page scrolls sideways at 480 px: %d px wide in %d (%s)" % (width, room, wide))
        check(b.frame("idle")["w"] > 100, "the flame graph fills the width")
        b.shot("narrow")
    finally:
        b.quit()
        srv.stop()


def main():
    fn = globals().get(CASE)
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
        for srv in SERVERS:
            srv.stop()
        shutil.rmtree(TMP, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
