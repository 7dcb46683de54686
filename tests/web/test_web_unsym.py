#!/usr/bin/env python3
"""Unsymbolized frames and coverage in a real browser (issue 28,
docs/web-ui.md "Unsymbolized frames", "Debuginfo"): a module's
unsymbolized frames drawn as one frame "[MODULE]" and one row of the top
table, expanded in place after real clicks; the debuginfo view's coverage
rows per module with its path as the profile names it, the share named at
the leaf and whole, the `ember upload` line that fixes it and no
--build-id advice for JIT code.  Screenshots go to OUT_DIR/CASE/.

Usage: test_web_unsym.py EMBER_BIN FIXTURES_DIR OUT_DIR CASE (test_web.py's).
"""
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_web  # noqa: E402
from test_web import (MS, SHELL_DIR, Browser, Profile, Server, check, shell_argv,  # noqa: E402
                      table_rows, wait_for)

PY = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
PY_ID = "ab34" * 10
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
LIBC_ID = "cd56" * 10
GROUP = "[libpython3.11.so.1.0]"
N_ADDR = 24  # unsymbolized addresses of libpython, of which the profile calls USED
USED = sorted({3 * i + k for i in range(N_ADDR // 3) for k in range(1 + i % 3)} | {0, 1})


def python_profile(t_ns):
    """main (named) calling libpython through runs of 1 to 3 of its
    unsymbolized frames (len(USED) addresses), some down to a named leaf,
    libc's memcpy unsymbolized under them, a perf map's JIT code, and a
    named work: 100 samples."""
    p = Profile([("samples", "count"), ("cpu", "nanoseconds")], period=MS)
    app = p.mapping(0x400000, 0x500000, "/app/py", "")
    py = p.mapping(0x7f0000000000, 0x7f0000400000, PY, PY_ID, symbolized=False)
    libc = p.mapping(0x7f1000000000, 0x7f1000200000, LIBC, LIBC_ID, symbolized=False)
    jit = p.mapping(0x7f2000000000, 0x7f2000100000, "/tmp/perf-4242.map", "", symbolized=False)
    named = {}
    for i, name in enumerate(["main", "work", "PyObject_Call"]):
        f = p.function(name, "/src/%s.c" % name, 1)
        named[name] = p.location(app, 0x401000 + 0x100 * i, [(f, 2)])
    addr = [p.location(py, 0x7f0000001000 + 0x40 * i) for i in range(N_ADDR)]
    memcpy = p.location(libc, 0x7f1000012345)
    jitted = p.location(jit, 0x7f2000000100)
    for i in range(N_ADDR // 3):
        run = addr[3 * i:3 * i + 1 + i % 3]
        p.sample(list(reversed(run)) + [named["main"]], [3, 3 * MS])
    p.sample([memcpy, addr[0], named["main"]], [10, 10 * MS])
    p.sample([named["PyObject_Call"], addr[1], named["main"]], [20, 20 * MS])
    p.sample([jitted, named["main"]], [6, 6 * MS])
    p.sample([named["work"], named["main"]], [40, 40 * MS])
    return p.encode(t_ns, 10 * 10**9)


def pushed():
    srv = Server()
    srv.push(python_profile(time.time_ns() - 60 * 10**9), service_name="py")
    return srv


def test_web__unsym_grouped_frame_expands():
    """libpython's unsymbolized addresses are one frame and one row;
    zoomed into, "Show each frame" draws them one by one (the zoom at the
    caller, the URL saying so); the box groups them again."""
    srv = pushed()
    b = Browser()
    try:
        b.show(srv, '{service_name="py"}')
        rows = wait_for("the top table", lambda: table_rows(b) or None)
        names = [r[0] for r in rows]
        check(names.count(GROUP) == 1 and not [n for n in names if "+0x" in n], names)
        check(b.el("#unsym-group").is_selected() and b.el("#unsym-diff-group"), "the boxes")
        tip = b.hover(GROUP)
        check(tip.startswith(GROUP), tip)
        b.shot("grouped")
        b.click_frame(GROUP)
        expand = wait_for("the expand button", lambda: b.el("#unsym-expand").is_displayed() and b.el("#unsym-expand"))
        check(expand.text == "Show each frame of " + GROUP, expand.text)
        b.shot("group-zoomed")
        n = b.renders()
        expand.click()
        b.rendered(n=n + 1)
        check(b.js("return window.ember.state().unsym") == "frames", "the URL state")
        check("unsym=frames" in b.d.current_url, b.d.current_url)
        check(b.js("return window.ember.flame.zoomPath().join(';')") == "main", "zoomed to the caller")
        rows = wait_for("each frame's row", lambda: [r[0] for r in table_rows(b) if "+0x" in r[0]] or None)
        want = {"libpython3.11.so.1.0+0x%x" % (0x1000 + 0x40 * i) for i in USED}
        check(want <= set(rows) and len(rows) == len(USED) + 2, rows)  # and libc's, the JIT's
        check(not b.el("#unsym-group").is_selected() and not b.el("#unsym-expand").is_displayed(), "unticked")
        b.frame("libpython3.11.so.1.0+0x1000")
        b.shot("expanded")
        n = b.renders()
        b.el("#unsym-group").click()
        b.rendered(n=n + 1)
        names = wait_for("grouped again", lambda: [r[0] for r in table_rows(b)] if GROUP in
                         [r[0] for r in table_rows(b)] else None)
        check(not [x for x in names if "+0x" in x] and "unsym=" not in b.d.current_url, names)
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def test_web__unsym_diff_groups_both_sides():
    """The diff view of two versions draws the group once in the table,
    its box in the diff's toolbar shows each frame."""
    srv = Server()
    now = time.time_ns()
    srv.push(python_profile(now - 40 * 60 * 10**9), service_name="py", version="1")
    srv.push(python_profile(now - 10 * 60 * 10**9), service_name="py", version="2")
    b = Browser()
    try:
        b.open(srv.ui + "?" + urllib.parse.urlencode({
            "view": "diff", "query": '{service_name="py"}', "base_query": '{version="1"}',
            "new_query": '{version="2"}'}))
        b.rendered("diff")
        names = wait_for("the diff table", lambda: [r[0] for r in table_rows(b, "#regressions tbody tr")] or None)
        check(GROUP in names and not [n for n in names if "+0x" in n], names)
        b.shot("diff-grouped")
        n = b.renders("diff")
        b.el("#unsym-diff-group").click()
        b.rendered("diff", n + 1)
        names = wait_for("each frame", lambda: [r[0] for r in table_rows(b, "#regressions tbody tr")
                                                if r[0].startswith("libpython3.11.so.1.0+0x")] or None)
        check(len(names) == len(USED), names)
        b.shot("diff-expanded")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


def coverage_row(b, module):
    return [r for r in table_rows(b, "#coverage tbody tr") if r[0] == module]


def test_web__unsym_coverage_rows_and_command():
    """The coverage view: leaf-named and all-named shares, a row per module
    named by its path as the profile names it, the `ember upload` line of
    that path (which a shell reads as the path), the agent's
    --upload-missing, and for the perf map's JIT code no command and no
    --build-id advice."""
    os.makedirs(SHELL_DIR)
    srv = pushed()
    b = Browser()
    try:
        b.open(srv.ui + "?view=debuginfo")
        row = wait_for("libpython's row", lambda: coverage_row(b, PY))
        summary = b.text("#coverage-summary")
        # leaves named: PyObject_Call 20 + work 40 of 100; all named: work's 40
        check("leaf frame named: 60.00%" in summary and "every frame named: 40.00%" in summary, summary)
        _, bid, reason, unnamed, leaf, whole, stored, fix = row[0]
        check(bid == PY_ID and reason == "unknown_build_id" and stored == "no", row)
        # libpython: in 24 + 10 + 20 = 54 samples, all with one of its frames
        # unnamed; leaf in it: the 24, none named
        check(unnamed == "54.00%" and leaf == "0.00%" and whole == "0.00%", row)
        cmd = fix.split("\n")[0]
        check(shell_argv(cmd) == ["upload", "--server", srv.url, "--token", "tok", "--sources", PY],
              "the command: %r" % cmd)
        check("--upload-missing" in fix, fix)
        libc = coverage_row(b, LIBC)
        check(libc and libc[0][1] == LIBC_ID and libc[0][3] == "10.00%" and ("--sources " + LIBC) in libc[0][7],
              libc)
        jit = coverage_row(b, "/tmp/perf-4242.map")
        check(jit and jit[0][2] == "jit" and jit[0][3] == "6.00%", jit)
        check("ember upload" not in jit[0][7] and "--build-id" not in jit[0][7] and "JIT" in jit[0][7], jit)
        b.shot("coverage")
        b.no_errors()
    finally:
        b.quit()
        srv.stop()


if __name__ == "__main__":
    sys.exit(test_web.main(globals()))
