#!/usr/bin/env python3
"""The source view (web/js/source.js, docs/web-ui.md "Source view") in a
real browser: a fixture binary with DWARF and its sources uploaded with
`ember upload --sources`, profiles naming its addresses pushed, then real
clicks: a frame of the flame graph, a row of the top table, a frame of
the diff, each opening its function's source with every line's shares,
scrolled to the hottest line; without the sources stored, the view says
which upload adds them.  Screenshots in OUT_DIR/CASE/.

Usage: test_web_source.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE
"""
import os
import re
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_web  # noqa: E402
from test_web import (EMBER, FIX, MS, Browser, Profile, Server, check, table_rows,  # noqa: E402
                      wait_for)

SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "fixtures", "elf", "src"))
EXE = os.path.join(FIX, "c_O2_pie")
BASE = 0x555555554000
MODULE = "/opt/shop/bin/c_O2_pie"


def build_id():
    out = subprocess.run(["readelf", "-n", EXE], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def nm(name):
    out = subprocess.run(["nm", EXE], capture_output=True, text=True).stdout
    return int(re.search(r"^([0-9a-f]+) [tT] %s$" % re.escape(name), out, re.M).group(1), 16)


def upload(srv, sources=True):
    args = [EMBER, "upload", "--server", srv.url, "--token", srv.token]
    if sources:
        args += ["--sources", "--source-prefix-map", "/ember/fixtures/src=" + SRC]
    r = subprocess.run(args + [EXE], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, r.stdout + r.stderr)


# main's own lines (prog.c: 198, 204, 205) as leaves, and main calling
# helper_digest_points (helper.c: 20, and 21 with mix_step inlined);
# samples per (function, offset) of each version.
V1 = {("main", 0x80): 5, ("main", 0x100): 10, ("main", 0x180): 40,
      ("helper_digest_points", 0x10): 20, ("helper_digest_points", 0x8): 5}
V2 = {("main", 0x80): 5, ("main", 0x100): 40, ("main", 0x180): 10,
      ("helper_digest_points", 0x10): 20, ("helper_digest_points", 0x8): 5}


def push(srv, samples, version, ago_s=600):
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    m = p.mapping(BASE, BASE + 0x100000, MODULE, build_id(), symbolized=False)
    main = p.location(m, BASE + nm("main") + 1)
    for (fn, off), n in samples.items():
        leaf = p.location(m, BASE + nm(fn) + off)
        p.sample([leaf] if fn == "main" else [leaf, main], [n, n * MS])
    srv.push(p.encode(time.time_ns() - ago_s * 10**9, 10 * 10**9), service_name="shop", version=version)


def source_rows(b):
    """{line: [cells]} of the source table as shown."""
    rows = b.js("return [...document.querySelectorAll('#source-lines tbody tr')]"
                ".map((tr) => [Number(tr.dataset.line), [...tr.children].map((td) => td.textContent),"
                " tr.className])")
    return {no: (cells, cls) for no, cells, cls in rows}


def shown(b, fn):
    """The source view of fn, drawn; its rows."""
    wait_for("the source of " + fn, lambda: b.text("#source-title").startswith(fn)
             and b.els("#source-lines tbody tr") and "loading" not in b.text("#source-status"))
    return source_rows(b)


def hot_in_view(b, line):
    """The hot row is line, and is inside the scrolled box, which moved."""
    r = b.js("const box = document.getElementById('source-scroll'), tr = box.querySelector('tr.hot');"
             "if (!tr) return null; const a = box.getBoundingClientRect(), t = tr.getBoundingClientRect();"
             "return [Number(tr.dataset.line), t.top >= a.top && t.bottom <= a.bottom, box.scrollTop,"
             " box.scrollHeight > box.clientHeight];")
    check(r and r[0] == line and r[1], "the hot row: %r (want line %d, in view)" % (r, line))
    check(not r[3] or r[2] > 0, "the box did not scroll to line %d: %r" % (line, r))


def test_web__source_view_from_a_frame_and_the_top_table():
    srv = Server()
    upload(srv)
    push(srv, V1, "1")
    b = Browser()
    try:
        b.show(srv, '{service_name="shop"}')
        check(b.el("#open-source").get_attribute("disabled") is not None, "Source enabled with no frame picked")
        b.click_frame("main")
        wait_for("Source enabled", lambda: b.el("#open-source").is_enabled())
        b.el("#open-source").click()
        rows = shown(b, "main")
        check(b.js("return window.ember.state().view") == "source", "the URL's view")
        check("fn=main" in b.js("return location.search"), b.js("return location.search"))
        # 80 samples: line 205 40 (self), 204 10, 198 5, 194 (the calls) 25 total
        check(rows[205][0][1:3] == ["50.00%", "50.00%"], "line 205: %r" % (rows[205],))
        check(rows[204][0][1:3] == ["12.50%", "12.50%"], "line 204: %r" % (rows[204],))
        check(rows[194][0][1:3] == ["", "31.25%"], "line 194: %r" % (rows[194],))
        check(rows[205][0][3] == open(os.path.join(SRC, "prog.c")).read().splitlines()[204],
              "line 205's text: %r" % (rows[205],))
        check(len(rows) == 236 and rows[1][0][1:3] == ["", ""], "the whole file: %d lines" % len(rows))
        check("self 68.75%" in b.text("#source-status") and "total 100.00%" in b.text("#source-status"),
              b.text("#source-status"))
        hot_in_view(b, 205)
        b.shot("source-from-frame")
        # back to the flame graph, then a row of the top table
        b.d.back()
        wait_for("the flame graph again", lambda: b.el("#view-flame").is_displayed())
        row = wait_for("the top table's row", lambda: [e for e in b.els("#top tbody tr")
                                                      if e.text.startswith("helper_digest_points")])
        row[0].click()
        wait_for("zoomed on it", lambda: b.js("return window.ember.flame.zoomPath().slice(-1)[0]")
                 == "helper_digest_points")
        b.el("#open-source").click()
        rows = shown(b, "helper_digest_points")
        # 25 of 80 samples through it: line 21 (mix_step inlined) 20, line 20 5 (self)
        check(rows[21][0][1:3] == ["", "25.00%"] and rows[20][0][1:3] == ["6.25%", "6.25%"],
              "lines 20, 21: %r %r" % (rows[20], rows[21]))
        check(rows[21][0][3] == "\t\th = mix_step(h, &pts[i]);", rows[21])
        hot_in_view(b, 21)
        check(b.el("#source-missing").get_attribute("hidden") is not None, "a missing note with the text shown")
        b.shot("source-from-top-table")
        b.no_errors()
    finally:
        b.quit()


def test_web__source_view_without_sources_names_the_upload():
    srv = Server()
    upload(srv, sources=False)
    push(srv, V1, "1")
    b = Browser()
    try:
        b.open(srv.ui + "?view=source&fn=main&query=" + '%7Bservice_name%3D%22shop%22%7D')
        rows = shown(b, "main")
        check(sorted(rows) == [194, 198, 204, 205], "the lines with values alone: %r" % sorted(rows))
        check(rows[205][0][1:3] == ["50.00%", "50.00%"] and rows[205][0][3] == "", rows[205])
        note = wait_for("the note", lambda: b.el("#source-missing").is_displayed() and b.text("#source-missing"))
        check("no source of this path" in note, note)
        cmd = b.text("#source-missing code")
        check(cmd == 'ember upload --server %s --token "$EMBER_TOKEN" --sources %s' % (srv.url, MODULE), cmd)
        hot_in_view(b, 205)
        b.shot("source-missing")
        upload(srv)  # what the command does, with the binary at hand
        b.d.refresh()
        rows = shown(b, "main")
        check(len(rows) == 236 and b.el("#source-missing").get_attribute("hidden") is not None,
              "the text after the upload: %d lines" % len(rows))
        b.no_errors()
    finally:
        b.quit()


def test_web__source_view_of_a_diff_shows_before_and_after():
    srv = Server()
    upload(srv)
    push(srv, V1, "1", ago_s=900)
    push(srv, V2, "2", ago_s=600)
    b = Browser()
    try:
        b.open(srv.ui + "?" + urllib.parse.urlencode({"view": "diff", "query": '{service_name="shop"}',
                                                      "base_query": '{version="1"}',
                                                      "new_query": '{version="2"}'}))
        b.rendered("diff")
        b.click_frame("main", graph="diffFlame")
        wait_for("Source enabled", lambda: b.el("#diff-source").is_enabled())
        b.el("#diff-source").click()
        rows = shown(b, "main")
        head = [th.text for th in b.els("#source-lines thead th")]
        check(head == ["Line", "Self base", "Self new", "Total base", "Total new", "Δ total", "Source"], head)
        # line 204: 10 of 80 before, 40 of 80 after: grew 37.5 points; 205 shrank as much
        check(rows[204][0][1:6] == ["12.50%", "50.00%", "12.50%", "50.00%", "+37.50"] and "grew" in rows[204][1],
              "line 204: %r" % (rows[204],))
        check(rows[205][0][5] == "-37.50" and "shrank" in rows[205][1], "line 205: %r" % (rows[205],))
        check(rows[194][0][1:6] == ["", "", "31.25%", "31.25%", ""], "line 194: %r" % (rows[194],))
        check("before and after" in b.text("#source-title"), b.text("#source-title"))
        hot_in_view(b, 204)
        red = b.js("return getComputedStyle(document.querySelector('#source-lines tr[data-line=\"204\"]'))"
                   ".backgroundColor")
        blue = b.js("return getComputedStyle(document.querySelector('#source-lines tr[data-line=\"205\"]'))"
                    ".backgroundColor")
        r, g, bl = [int(x) for x in re.findall(r"\d+", red)[:3]]
        r2, g2, b2 = [int(x) for x in re.findall(r"\d+", blue)[:3]]
        check(r > bl and b2 > r2, "grew red, shrank blue: %s %s" % (red, blue))
        b.shot("source-diff")
        b.no_errors()
    finally:
        b.quit()


if __name__ == "__main__":
    sys.exit(test_web.main(globals()))
