#!/usr/bin/env python3
"""The web UI's chart and orientation (issue 28, "Views"), in a real
browser: the series chart grouped by a label (one line per value, a click
on a line or its legend entry selects the value, the top table split by
it), two ranges brushed on the chart compared in one click, the step
aligned to the data's period (a flat load draws flat), the diff view's
chart of base and new, the root on top by default (icicle=0 still the
other way), and kernel frames hidden.  Helpers from test_web.py; every
case saves screenshots to OUT_DIR/CASE/.

Usage: test_web_chart.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE
"""
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_web  # noqa: E402
from test_web import (CPU, MS, Browser, Server, check, push_shop, shop_profile,  # noqa: E402
                      table_rows, wait_for)
from ember_test import RawProfile as Profile, vfield  # noqa: E402


def chart_doc(b):
    """What the chart draws: its series answer (step, period, lines)."""
    return wait_for("the chart", lambda: b.js("return window.ember.chart.chart.doc"))


def lines(b):
    """The chart's lines as drawn: values per second of each point."""
    return b.js("return window.ember.chart.chart.lines().map((v) => Array.from(v))")


def legend(b):
    """The legend's entries (none shown for one line)."""
    return [e.text for e in b.els("#chart-legend button")] if b.el("#chart-legend").is_displayed() else []


def open_view(b, srv, view, **params):
    """Open the page on a view and its URL state; wait for its graph."""
    b.open(srv.ui + "?" + urllib.parse.urlencode(dict(params, view=view)))
    b.rendered(view)


def click_at(b, x, y):
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    a = ActionBuilder(b.d)
    a.pointer_action.move_to_location(int(x), int(y)).click()
    a.perform()


def drag_chart(b, frac0, frac1):
    """A real drag across the chart from frac0 to frac1 of its width."""
    from selenium.webdriver.common.action_chains import ActionChains
    chart = b.el("#chart")
    w = chart.rect["width"]
    ActionChains(b.d).move_to_element_with_offset(chart, int(w * frac0 - w / 2), 0).click_and_hold() \
        .move_by_offset(int(w * (frac1 - frac0)), 0).release().perform()


def frac_of(b, ms):
    """Where time ms (epoch milliseconds) is on the chart, 0 to 1."""
    r = b.js("return window.ember.chart.chart.range()")
    return (ms - r["from"]) / (r["to"] - r["from"])


def query_of(b):
    return urllib.parse.parse_qs(urllib.parse.urlparse(b.d.current_url).query)


# ---- the step: a whole number of the data's period ------------------------------


def flat_profile(t_ns):
    """One 10-second CPU profile of a load that never changes: 100 samples."""
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(0x400000, 0x500000, "/app/flat", "")
    f = p.function("spin", "/src/flat.c", 3)
    p.sample([p.location(m, 0x401000, [(f, 4)])], [100, 100 * MS])
    return p.encode(t_ns, 10 * 10**9)


def test_web__chart_flat_load_draws_flat():
    """Profiles every 10 s of a constant load over 40 minutes, the range the
    last hour: the server's own step (15 s) holds one profile in one point
    and two in the next (a saw); the chart's step is a whole number of
    the data's 10 s period, so every point between the first and the last
    is the same."""
    srv = Server()
    now = time.time_ns()
    for k in range(240):
        srv.push(flat_profile(now - (45 * 60 - 10 * k) * 10**9 - 3 * 10**9), service_name="flat")
    # the data does alias at the server's default step of the same range
    saw = srv.get_json("/api/v1/series", type=CPU, query='{service_name="flat"}', **{"from": "now-1h", "to": "now"})
    v = [x for x in saw["series"][0]["values"] if x]
    check(saw["step_ms"] == 15000 and len(set(v[1:-1])) == 2, "the default step draws no saw: %s" % v[:12])
    b = Browser()
    try:
        b.show(srv, '{service_name="flat"}')
        doc = wait_for("the aligned chart", lambda: (lambda d: d and d["period_ms"] and d)(chart_doc(b)))
        check(doc["period_ms"] == 10000 and doc["step_ms"] % 10000 == 0,
              "period %s, step %s" % (doc["period_ms"], doc["step_ms"]))
        (line,) = lines(b)
        on = [i for i, x in enumerate(line) if x]
        inner = line[on[0] + 1:on[-1]]
        check(len(inner) > 50 and max(inner) == min(inner),
              "a flat load draws %d distinct values: %s" % (len(set(inner)), sorted(set(inner))[:6]))
        # drawn as a rate: 100 samples of 10 ms every 10 s, a tenth of a core
        check(abs(inner[0] - 1e8) < 1, "per second: %s" % inner[0])
        info = b.text("#chart-info")
        check("10 s period" in info and "step 20 s" in info, "the chart says: %r" % info)
        b.shot("flat")
    finally:
        b.quit()
        srv.stop()


def test_web__series_period_and_step_rules():
    """series.js's rules, called in the page: the period of profile counts
    on a one-second grid (10 s; 15 s; 10 s and 15 s series together: 30 s;
    three series at 10 s with other phases: 10 s; too few profiles or no
    pattern: none), and the step, the smallest multiple of the period at
    least the server's (the range / 240 in whole seconds, at least 10 s)."""
    srv = Server()
    b = Browser()
    try:
        b.open(srv.ui)
        got = b.d.execute_async_script("""
const done = arguments[0];
import('/js/series.js').then((m) => {
  const grid = (n, series) => { const c = new Array(n).fill(0);
    for (const [p, ph] of series) for (let t = ph; t < n; t += p) c[t]++; return c; };
  let seed = 7; const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  done({
    p10: m.periodOf(grid(600, [[10, 3]])), p15: m.periodOf(grid(600, [[15, 0]])),
    mixed: m.periodOf(grid(600, [[10, 3], [15, 7]])), phases: m.periodOf(grid(600, [[10, 1], [10, 4], [10, 8]])),
    few: m.periodOf(grid(25, [[10, 3]])), random: m.periodOf(Array.from({ length: 600 }, () => (rnd() < 0.3 ? 1 : 0))),
    hour: m.alignStep(m.defaultStep(3600e3), 10e3), day: m.alignStep(m.defaultStep(86400e3), 15e3),
    short: m.alignStep(m.defaultStep(900e3), 15e3), none: m.alignStep(m.defaultStep(3600e3), 0),
    odd: m.defaultStep(3000e3),
  });
});""")
        want = {"p10": 10, "p15": 15, "mixed": 30, "phases": 10, "few": 0, "random": 0,
                "hour": 20000, "day": 360000, "short": 15000, "none": 15000, "odd": 13000}
        check(got == want, "got %s, want %s" % (got, want))
    finally:
        b.quit()
        srv.stop()


# ---- group by a label -----------------------------------------------------------------


def test_web__chart_group_by_draws_a_line_per_value_and_a_click_selects_it():
    """Group by version: two lines and a legend; a click on version 2's
    line adds version="2" to the selector and draws its graph; the legend
    entry of version 1 does the same for 1; the URL keeps group_by."""
    from selenium.webdriver.support.ui import Select
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        wait_for("the label names", lambda: "version" in [o.text for o in b.els("#group-by option")])
        Select(b.el("#group-by")).select_by_value("version")
        wait_for("a line per version", lambda: sorted(legend(b)) == ["version=1", "version=2"])
        check(query_of(b).get("group_by") == ["version"], "the URL: %s" % b.d.current_url)
        check(len(lines(b)) == 2, "lines drawn: %d" % len(lines(b)))
        b.shot("grouped")
        k = legend(b).index("version=2")
        p = b.js("return window.ember.chart.chart.linePoint(arguments[0])", k)
        n = b.renders()
        click_at(b, p["x"], p["y"])
        wait_for("version 2 selected", lambda: b.js("return window.ember.state().query")
                 == '{service_name="shop", version="2"}')
        b.rendered(n=n + 1)
        wait_for("one line left", lambda: legend(b) == [] and len(lines(b)) == 1)
        check("40.00%" in b.hover("slow_path"), "version 2's graph: %r" % b.text("#tooltip"))
        b.shot("line-clicked")
        b.d.back()
        wait_for("back to both", lambda: len(legend(b)) == 2)
        n = b.renders()
        [e for e in b.els("#chart-legend button") if e.text == "version=1"][0].click()
        wait_for("version 1 selected", lambda: b.js("return window.ember.state().query")
                 == '{service_name="shop", version="1"}')
        b.rendered(n=n + 1)
        check("10.00%" in b.hover("slow_path"), "version 1's graph: %r" % b.text("#tooltip"))
        b.shot("legend-clicked")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__top_table_split_by_the_group_by_label():
    """Split the top table by version: a column per version, each cell the
    function's self share of that version (slow_path 10% and 40%); a row
    click focuses the flame graph on it; off again, the plain table."""
    from selenium.webdriver.support.ui import Select
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}', group_by="version")
        wait_for("the split box usable", lambda: b.el("#split-top").is_enabled())
        b.el("#split-top").click()
        wait_for("the split table", lambda: b.el("#split-table").is_displayed() and table_rows(b, "#split-table tbody tr"))
        check(not b.el("#top").is_displayed(), "the plain table still shown")
        heads = [th.text for th in b.els("#split-table thead th")]
        check(heads[1:] == ["version=1", "version=2"] or heads[1:] == ["version=2", "version=1"], "headers: %s" % heads)
        rows = {r[0]: r[1:] for r in table_rows(b, "#split-table tbody tr")}
        want = {"version=1": "10.00%", "version=2": "40.00%"}
        check([rows["slow_path"][k - 1] for k in (1, 2)] == [want[heads[1]], want[heads[2]]],
              "slow_path's row: %s (%s)" % (rows["slow_path"], heads))
        check(query_of(b).get("split") == ["1"], "the URL: %s" % b.d.current_url)
        b.shot("split")
        [tr for tr in b.els("#split-table tbody tr") if tr.get_attribute("data-name") == "slow_path"][0].click()
        wait_for("the graph focused", lambda: b.js("return window.ember.state().focus") == "slow_path")
        b.el("#split-top").click()
        wait_for("the plain table", lambda: b.el("#top").is_displayed() and not b.el("#split-table").is_displayed())
        Select(b.el("#group-by")).select_by_value("")
        wait_for("no split without a label", lambda: not b.el("#split-top").is_enabled())
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


# ---- compare two ranges ------------------------------------------------------------------


def test_web__chart_compare_two_brushed_ranges_opens_their_diff():
    """Version 1 runs from 55 to 35 minutes ago, version 2 from 25 to 5 (the
    same service): Compare, drag over the first, drag over the second,
    one click: the diff of the two ranges, slow_path grown first, its
    chart marking both ranges."""
    srv = Server()
    now = time.time_ns()
    for v, minutes in (("1", (50, 45, 40)), ("2", (20, 15, 10))):
        for part, m in enumerate(minutes):
            srv.push(shop_profile(v, part, now - m * 60 * 10**9), service_name="shop")
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        chart_doc(b)
        now_ms = now / 1e6
        b.el("#compare").click()
        check(b.el("#compare").get_attribute("aria-pressed") == "true", "compare not pressed")
        drag_chart(b, frac_of(b, now_ms - 55 * 60e3), frac_of(b, now_ms - 35 * 60e3))
        wait_for("the base marked", lambda: len(b.js("return window.ember.chart.chart.marks")) == 1)
        check(not b.el("#compare-open").is_enabled(), "diff offered with one range")
        check("drag the new range" in b.text("#chart-info"), "info: %r" % b.text("#chart-info"))
        drag_chart(b, frac_of(b, now_ms - 25 * 60e3), frac_of(b, now_ms - 5 * 60e3))
        wait_for("the new marked", lambda: b.el("#compare-open").is_enabled())
        check(b.js("return window.ember.state().view") == "flame", "a drag in compare mode changed the view")
        b.shot("two-ranges")
        b.el("#compare-open").click()
        b.rendered("diff")
        st = b.js("return window.ember.state()")
        span = lambda a, z: (int(st[z]) - int(st[a])) / 60e3  # noqa: E731
        check(st["view"] == "diff" and st["base_query"] == st["new_query"] == '{service_name="shop"}'
              and 18 < span("base_from", "base_to") < 22 and 18 < span("new_from", "new_to") < 22
              and int(st["base_to"]) <= int(st["new_from"]), "the diff's state: %s" % st)
        rows = wait_for("the regressions", lambda: table_rows(b, "#regressions tbody tr"))
        check(rows[0][0] == "slow_path" and rows[0][3] == "+30.00", "first regression: %s" % rows[:2])
        check("base: 3 profiles" in b.text("#diff-status") and "new: 3 profiles" in b.text("#diff-status"),
              "status: %r" % b.text("#diff-status"))
        marks = wait_for("the marks", lambda: (lambda m: len(m) == 2 and m)(b.js("return window.ember.chart.chart.marks")))
        check([m["kind"] for m in marks] == ["base", "new"] and marks[0]["from"] == int(st["base_from"])
              and marks[1]["to"] == int(st["new_to"]), "marks: %s" % marks)
        b.shot("diff-of-two-ranges")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__diff_chart_draws_base_and_new():
    """The diff of version 1 against version 2: the chart draws the two
    selections (a line each, its legend naming the selector; each line the
    total of its own selection), not the whole host, with the ranges
    marked."""
    srv = Server()
    push_shop(srv)
    push_shop(srv, versions=("1",), services=("other",))  # the rest of the host
    b = Browser()
    try:
        base, new = '{service_name="shop", version="1"}', '{service_name="shop", version="2"}'
        open_view(b, srv, "diff", base_query=base, new_query=new, base_from="now-1h", base_to="now",
                  new_from="now-1h", new_to="now")
        wait_for("two lines", lambda: legend(b) == ["base " + base, "new " + new])
        doc = chart_doc(b)
        drawn = lines(b)
        per = doc["step_ms"] / 1000
        for sel, line in ((base, drawn[0]), (new, drawn[1])):
            api = srv.get_json("/api/v1/series", type=CPU, query=sel, step="%dms" % doc["step_ms"],
                               **{"from": doc["from_ms"], "to": doc["from_ms"] + doc["points"] * doc["step_ms"]})
            want = sum(sum(s["values"]) for s in api["series"])
            check(abs(sum(line) * per - want) < 1 and want > 0, "%s: drawn %s, the API %s" % (sel, sum(line) * per, want))
        marks = b.js("return window.ember.chart.chart.marks")
        check([m["kind"] for m in marks] == ["base", "new"], "marks: %s" % marks)
        b.shot("diff-chart")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


# ---- orientation and kernel frames ---------------------------------------------------------


def test_web__root_on_top_by_default_and_icicle_0_still_flips_it():
    srv = Server()
    push_shop(srv)
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        check(b.el("#icicle").is_selected(), "Icicle not checked by default")
        check(b.frame("main")["y"] < b.frame("handle")["y"], "the root is not on top")
        check(b.frame("main")["y"] < b.el("#flame").rect["y"] + 60, "the first frames are not at the top")
        check("icicle" not in query_of(b), "the default written in the URL: %s" % b.d.current_url)
        b.shot("icicle-default")
        b.el("#icicle").click()
        wait_for("root at the bottom", lambda: b.frame("main")["y"] > b.frame("handle")["y"])
        check(query_of(b).get("icicle") == ["0"], "the URL: %s" % b.d.current_url)
        b.shot("flame-way-up")
        for link, on_top in (("0", False), ("1", True)):
            b.show(srv, '{service_name="shop"}', icicle=link)
            check((b.frame("main")["y"] < b.frame("handle")["y"]) == on_top, "icicle=%s" % link)
            check(b.el("#icicle").is_selected() == on_top, "icicle=%s: the box" % link)
        open_view(b, srv, "diff", base_query='{version="1"}', new_query='{version="2"}')
        check(b.el("#diff-icicle").is_selected(), "the diff's Icicle box")
        check(b.frame("main", "diffFlame")["y"] < b.frame("handle", "diffFlame")["y"], "the diff's root not on top")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def kernel_profile(t_ns):
    """main;handle calling into the kernel three ways: a frame OTLP calls
    kernel (frame type, Location field 1000), a module's function as the
    agent names it, an address kallsyms could not name; and main;work in
    user space only."""
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(0x400000, 0x500000, "/app/shop", "")
    k = p.mapping(0xffffffff81000000, 0xffffffffffffffff, "[kernel.kallsyms]", "")

    def loc(mapping, addr, name, kernel=False):
        lid = p.location(mapping, addr, [(p.function(name), 0)])
        if kernel:
            p.locations[-1] += vfield(1000, p.s("kernel"))
        return lid
    main, handle, work = loc(m, 0x401000, "main"), loc(m, 0x401100, "handle"), loc(m, 0x401200, "work")
    sysc = loc(k, 0xffffffff81001000, "do_syscall_64", kernel=True)
    read = loc(k, 0xffffffff81002000, "vfs_read", kernel=True)
    nft = loc(k, 0xffffffffc0001000, "nft_do_chain [nf_tables]")
    unk = loc(k, 0xffffffff81003000, "[kernel 0xffffffff81003000]")
    p.sample([read, sysc, handle, main], [30, 30 * MS])
    p.sample([nft, handle, main], [20, 20 * MS])
    p.sample([unk, main], [10, 10 * MS])
    p.sample([handle, main], [15, 15 * MS])
    p.sample([work, main], [25, 25 * MS])
    return p.encode(t_ns, 10 * 10**9)


def test_web__hide_kernel_folds_kernel_frames_into_their_callers():
    srv = Server()
    srv.push(kernel_profile(time.time_ns() - 600 * 10**9), service_name="shop")
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        for name in ("do_syscall_64", "vfs_read", "nft_do_chain [nf_tables]"):
            b.frame(name)
        names = [r[0] for r in table_rows(b)]
        check("vfs_read" in names, "the table without kernel frames before hiding: %s" % names)
        b.shot("kernel-shown")
        n = b.renders()
        b.el("#hide-kernel").click()
        b.rendered(n=n + 1)
        check(query_of(b).get("kernel") == ["hide"], "the URL: %s" % b.d.current_url)
        drawn = b.js("return window.ember.flame.drawn.map((f) => window.ember.flame.label(f.i))")
        check(not [x for x in drawn if "kernel" in x or x in ("do_syscall_64", "vfs_read", "nft_do_chain [nf_tables]")],
              "kernel frames drawn: %s" % drawn)
        xs = b.js("const f = window.ember.flame, x = {};"
                  "for (const d of f.drawn) x[f.label(d.i)] = d.x; return x;")
        check(abs(xs["handle"] - xs["main"]) < 0.5, "main's callees not packed from its left: %s" % xs)
        tip = b.hover("handle")
        check("total: 650.00 ms (65 samples), 65.00%" in tip and "self: 650.00 ms (65 samples), 65.00%" in tip,
              "handle holds its kernel time as self: %r" % tip)
        rows = {r[0]: r for r in table_rows(b)}
        check(set(rows) == {"main", "handle", "work"}, "the table: %s" % sorted(rows))
        check(rows["handle"][2] == "65.00%" and rows["main"][2] == "10.00%", "self shares: %s" % rows)
        b.shot("kernel-hidden")
        # a link with kernel=hide opens the same view
        b.show(srv, '{service_name="shop"}', kernel="hide")
        check(b.el("#hide-kernel").is_selected(), "the box from the link")
        check(set(r[0] for r in table_rows(b)) == {"main", "handle", "work"}, "the table from the link")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


if __name__ == "__main__":
    sys.exit(test_web.main(globals()))
