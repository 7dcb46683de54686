#!/usr/bin/env python3
"""The views of a query over HTTP and from `ember query` / `ember diff`
(issue 28): only the stacks through a frame anywhere in them (through=),
frames hidden into their callers by an RE2 pattern (hide=), a function's
sandwich (sandwich=, sandwich_side=), and the root-first call path
(focus=) working beside them.

    test_query_views.py EMBER FIXTURES_DIR CASE      (CASE: test_query_views__*)

Each case starts its own real `ember serve` on a free loopback port
(tests/profiles/profiles_test.py).
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import Profile, check, cpu_profile  # noqa: E402
from profiles_test import EMBER, NOW_S, SEC, TMP, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
STACKS = {"main;a;malloc": 5, "main;b;malloc": 3, "main;b;work": 4, "main;rec;rec;malloc": 2,
          "other;x": 1}
NEWER = {"main;a;malloc": 9, "main;b;work": 4}


def shop():
    srv = Server()
    srv.push_ok(cpu_profile(STACKS, T0).encode(gzip=True), "service_name=shop&version=1")
    srv.push_ok(cpu_profile(NEWER, T0).encode(gzip=True), "service_name=shop&version=2")
    return srv


def as_dict(text):
    return dict((" ".join(line.split(" ")[:-1]), int(line.split(" ")[-1]))
                for line in text.splitlines())


def viewed(srv, params, selector='{version="1"}'):
    body, hdr = srv.get("/api/v1/query?type=samples&format=folded&query=%s&%s"
                        % (q(selector), params))
    return as_dict(body.decode()), hdr


def test_query_views__through_hide_sandwich_over_http():
    srv = shop()
    got, hdr = viewed(srv, "through=malloc")
    check(got == {"main;a;malloc": 5, "main;b;malloc": 3, "main;rec;rec;malloc": 2}, got)
    check(hdr.get("x-ember-total") == "10", hdr)
    # a root-first call path (focus=) keeps working, and finds no malloc at the root
    got, _ = viewed(srv, "focus=" + q("main;b"))
    check(got == {"main;b;malloc": 3, "main;b;work": 4}, got)
    check(viewed(srv, "focus=malloc")[0] == {}, "focus= is a root-first path")
    check(viewed(srv, "focus=main&through=work")[0] == {"main;b;work": 4}, "focus and through")
    # hidden frames: their callees hang from their callers, the values kept;
    # RE2 syntax, anchored as the selectors' =~ (\w, (?i))
    got, hdr = viewed(srv, "hide=" + q("main|b"))
    check(got == {"a;malloc": 5, "malloc": 3, "work": 4, "rec;rec;malloc": 2, "other;x": 1}, got)
    check(hdr.get("x-ember-total") == "15", hdr)
    check(viewed(srv, "hide=" + q(r"\w{3}"))[0] ==
          {"main;a;malloc": 5, "main;b;malloc": 3, "main;b;work": 4, "main;malloc": 2,
           "other;x": 1}, "\\w{3} hides rec alone")
    got = viewed(srv, "hide=" + q("(?i)MALLOC"))[0]
    check(got == {"main;a": 5, "main;b": 3, "main;b;work": 4, "main;rec;rec": 2, "other;x": 1},
          got)
    # the sandwich: callees rooted at the function, callers inverted from it;
    # recursion counted once
    check(viewed(srv, "sandwich=malloc")[0] == {"malloc": 10}, "callees of malloc")
    got, hdr = viewed(srv, "sandwich=malloc&sandwich_side=callers")
    check(got == {"malloc;a;main": 5, "malloc;b;main": 3, "malloc;rec;rec;main": 2}, got)
    check(hdr.get("x-ember-total") == "10", hdr)
    check(viewed(srv, "sandwich=rec")[0] == {"rec;rec;malloc": 2}, "recursion once")
    check(viewed(srv, "sandwich=b&sandwich_side=callees")[0] == {"b;malloc": 3, "b;work": 4},
          "callees of b")
    # every format takes them: the top table of b's callees
    doc = srv.json("/api/v1/query?type=samples&format=top&query=%s&sandwich=b"
                   % q('{version="1"}'))
    check(doc["total"] == 7 and {r["name"] for r in doc["rows"]} == {"b", "malloc", "work"}, doc)
    # the diff's two sides viewed alike
    body, _ = srv.get("/api/v1/diff?type=samples&format=folded&base_query=%s&new_query=%s"
                      "&through=malloc" % (q('{version="1"}'), q('{version="2"}')))
    lines = sorted(body.decode().splitlines())
    check(lines == ["main;a;malloc 5 9", "main;b;malloc 3 0", "main;rec;rec;malloc 2 0"], lines)


def test_query_views__unsymbolized_frames_named_as_shown():
    """The views see the names the answer shows: a module's unsymbolized
    frames grouped as [MODULE] (unsymbolized=module, the default), each
    MODULE+0xOFFSET with unsymbolized=frames."""
    srv = Server()
    base, period = 0x7f0000000000, 10_000_000
    p = Profile(time_ns=T0, duration_ns=10 * SEC, period=("cpu", "nanoseconds", period))
    lib = p.mapping(base, base + 0x100000, 0x1000, "/opt/none/libnodebug.so", build_id="ab" * 20)
    for stack, n in ((["main", (lib, base + 0x139), (lib, base + 0x1139)], 3),
                     (["main", "work", (lib, base + 0x1000)], 5), (["main", "idle"], 4)):
        p.sample(stack, [n, n * period])
    srv.push_ok(p.encode(gzip=True), "service_name=raw")

    def got(params):
        body, _ = srv.get("/api/v1/query?type=cpu&format=folded&query=%s&%s"
                          % (q('{service_name="raw"}'), params))
        return {k: v // period for k, v in as_dict(body.decode()).items()}

    lib_ = q("[libnodebug.so]")
    check(got("through=" + lib_) == {"main;[libnodebug.so]": 3, "main;work;[libnodebug.so]": 5},
          got("through=" + lib_))
    check(got("hide=" + q(r"\[.*\]")) == {"main": 3, "main;work": 5, "main;idle": 4},
          got("hide=" + q(r"\[.*\]")))
    check(got("sandwich=%s&sandwich_side=callers" % lib_) ==
          {"[libnodebug.so];main": 3, "[libnodebug.so];work;main": 5}, "callers of the module")
    one = got("unsymbolized=frames&through=libnodebug.so%2B0x2139")
    check(one == {"main;libnodebug.so+0x1139;libnodebug.so+0x2139": 3}, one)


def test_query_views__bad_values_refused_by_name():
    srv = shop()
    for params, want in (("hide=" + q("(unclosed"), "hide: '(unclosed' is not a pattern"),
                         ("sandwich=malloc&sandwich_side=up",
                          "sandwich_side: 'up' is not callers or callees"),
                         ("sandwhich=malloc", "sandwhich: unknown parameter")):
        for route in ("/api/v1/query?type=samples&", "/api/v1/diff?type=samples&"):
            st, body, _ = srv.request("GET", route + params)
            check(st == 400 and body.decode().startswith(want), "%s%s: HTTP %d %r"
                  % (route, params, st, body))


def ember(*args):
    r = subprocess.run([EMBER] + list(args), capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "%r: %d %s" % (args, r.returncode, r.stderr))
    return r.stdout


def test_query_views__ember_query_and_diff_options():
    srv = shop()
    sel = ["--server", srv.url, "--type", "samples", "--format", "folded"]
    got = as_dict(ember("query", *sel, "--through", "malloc", '{version="1"}'))
    check(got == {"main;a;malloc": 5, "main;b;malloc": 3, "main;rec;rec;malloc": 2}, got)
    got = as_dict(ember("query", *sel, "--hide", "main|rec", "--through=work", '{version="1"}'))
    check(got == {"b;work": 4}, got)
    got = as_dict(ember("query", *sel, "--sandwich", "malloc", "--sandwich-side", "callers",
                        '{version="1"}'))
    check(got == {"malloc;a;main": 5, "malloc;b;main": 3, "malloc;rec;rec;main": 2}, got)
    got = as_dict(ember("query", *sel, "--focus", "main;b", '{version="1"}'))
    check(got == {"main;b;malloc": 3, "main;b;work": 4}, got)
    text = ember("query", "--server", srv.url, "--type", "samples", "--sandwich", "b",
                 '{version="1"}')
    check("total 7 " in text.splitlines()[1] and " work" in text, text)
    # ember diff: against the server, and offline on two pprof files
    out = ember("diff", "--server", srv.url, "--type", "samples", "--format", "folded",
                "--base", '{version="1"}', "--new", '{version="2"}', "--sandwich", "b")
    check(sorted(out.splitlines()) == ["b;malloc 3 0", "b;work 4 4"], out)
    files = []
    for v in ("1", "2"):
        body, _ = srv.get("/api/v1/query?type=cpu&format=pprof&query=%s" % q('{version="%s"}' % v))
        files.append(os.path.join(TMP, "v%s.pb.gz" % v))
        with open(files[-1], "wb") as f:
            f.write(body)
    out = ember("diff", *files, "--format", "folded", "--through", "malloc")  # nanoseconds
    check(sorted(out.splitlines()) == ["main;a;malloc 50000000 90000000", "main;b;malloc 30000000 0",
                                       "main;rec;rec;malloc 20000000 0"], out)
    r = subprocess.run([EMBER, "diff", *files, "--hide", "x"], capture_output=True, text=True)
    check(r.returncode == 1 and "--hide and --focus need --server" in r.stderr, r.stderr)


if __name__ == "__main__":
    run_case("test_query_views__", globals())
