#!/usr/bin/env python3
"""The source view from the command line and the HTTP API (issue 28): a
fixture binary with DWARF and its sources uploaded with `ember upload
--sources`, a pprof naming its addresses pushed, then `ember query
--format source --function NAME` (pprof -list's listing), GET
/api/v1/source (JSON), the same over a diff, and the case of a function
whose sources the store does not hold.

    test_source_view.py EMBER FIXTURES_DIR CASE      (CASE: test_source_view__*)

Each case starts its own real `ember serve` on a free loopback port
(tests/profiles/profiles_test.py) and runs the real `ember` client.
"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ember_test  # noqa: E402
from ember_test import Profile, build_id, check, skip  # noqa: E402
from profiles_test import EMBER, FIX, NOW_S, SEC, TMP, Server, nm_address, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
SRC = os.path.abspath(os.path.join(HERE, "..", "..", "fixtures", "elf", "src"))
BASE = 0x555555554000
FN = "helper_digest_points"


def ember(*args, env=None):
    e = dict(os.environ)
    e.pop("EMBER_SERVER", None)
    e.update(env or {})
    return subprocess.run([EMBER] + list(args), capture_output=True, text=True, env=e, timeout=120)


def upload_sources(srv, path):
    """`ember upload --sources` as CI runs it (the fixtures' DWARF names
    /ember/fixtures/src: read from the tree)."""
    r = ember("upload", "--server", srv.url, "--token", srv.token, "--sources",
              "--source-prefix-map", "/ember/fixtures/src=" + SRC, path)
    check(r.returncode == 0 and "sources" in r.stdout, r.stdout + r.stderr)


def push_digest(srv, exe, counts, version, t=T0):
    """main calling FN at each offset of counts {offset: samples}."""
    bid = build_id(exe)
    p = Profile(time_ns=t, duration_ns=10 * SEC)
    m = p.mapping(BASE, BASE + 0x100000, 0, "/opt/shop/bin/c_O2_pie", build_id=bid)
    main = (m, BASE + nm_address(exe, "main") + 1)
    for off, n in counts.items():
        p.sample([main, (m, BASE + nm_address(exe, FN) + off)], [n, n * 10_000_000])
    srv.push_ok(p.encode(gzip=True), "service_name=shop&version=%s" % version)


def source_json(srv, **params):
    params.setdefault("type", "cpu")
    params.setdefault("function", FN)
    qs = "&".join("%s=%s" % (k, q(v)) for k, v in params.items())
    return json.loads(srv.get("/api/v1/source?" + qs)[0])


COUNTS = {0x0: 2, 0x8: 5, 0x10: 20, 0x40: 10}  # lines 17, 20, 21 (mix_step inlined), 21


def test_source_view__query_lists_the_function_annotated():
    """`ember query --format source --function NAME` prints the function's
    source as pprof -list does: the header with its flat and cum, then
    each line with its own (self where its frame is the leaf, total on
    every stack through it, an inlined callee's samples on the call's
    line), from the sources `ember upload --sources` stored; GET
    /api/v1/source gives the same per line as JSON with the file's text."""
    srv = Server()
    exe = os.path.join(FIX, "c_O2_pie")
    upload_sources(srv, exe)
    push_digest(srv, exe, COUNTS, "1")
    r = ember("query", "--server", srv.url, "--type", "cpu", "--format", "source", "--function", FN,
              '{service_name="shop"}')
    check(r.returncode == 0, r.stderr)
    out = r.stdout
    check(re.search(r"^ROUTINE =+ helper_digest_points in /ember/fixtures/src/helper\.c$", out, re.M), out)
    check(re.search(r"^\s+70\.00 ms\s+370\.00 ms \(flat, cum\)", out, re.M), out)
    check(re.search(r"^\s+20\.00 ms\s+20\.00 ms\s+17: \{$", out, re.M), out)
    check(re.search(r"^\s+50\.00 ms\s+50\.00 ms\s+20: \tfor \(size_t i = 0; i < n; i\+\+\)$", out, re.M), out)
    check(re.search(r"^\s+\.\s+300\.00 ms\s+21: \t\th = mix_step\(h, &pts\[i\]\);$", out, re.M), out)
    check(re.search(r"^\s+\.\s+\.\s+24: \treturn h \* 0x85ebca6bu;$", out, re.M), out)
    check(out.startswith("Total: 370.00 ms\n"), out)
    j = source_json(srv, query='{service_name="shop"}')
    check(j["function_self"] == 70_000_000 and j["function_total"] == 370_000_000, j)
    f = j["files"][0]
    check(len(j["files"]) == 1 and f["file"] == "/ember/fixtures/src/helper.c" and
          f["build_id"] == build_id(exe) and f["module"] == "/opt/shop/bin/c_O2_pie", f)
    check(f["lines"] == [{"line": 17, "self": 20_000_000, "total": 20_000_000},
                         {"line": 20, "self": 50_000_000, "total": 50_000_000},
                         {"line": 21, "self": 0, "total": 300_000_000}], f["lines"])
    with open(os.path.join(SRC, "helper.c")) as src:
        check(f["text"] == src.read().splitlines(), "the text is not helper.c's")
    check("missing" not in f, f)
    # the inlined callee in the header it lives in, its own self
    j = source_json(srv, query='{service_name="shop"}', function="mix_round")
    check([x["file"] for x in j["files"]] == ["/ember/fixtures/src/mix.h"] and
          j["files"][0]["lines"][0]["self"] == 200_000_000, j["files"])
    j = source_json(srv, query='{service_name="shop"}', function="mix_round", file="/ember/fixtures/src/helper.c")
    check(j["files"] == [] and j["function_total"] == 300_000_000, j)
    # unknown parameters and a missing function are refused, saying which
    st, body, _ = srv.request("GET", "/api/v1/source?type=cpu&function=x&fn=y")
    check(st == 400 and b"fn: unknown parameter" in body, body)
    st, body, _ = srv.request("GET", "/api/v1/source?type=cpu")
    check(st == 400 and b"function" in body, body)
    r = ember("query", "--server", srv.url, "--type", "cpu", "--format", "source", '{}')
    check(r.returncode == 2 and "--function" in r.stderr, r.stderr)


def test_source_view__missing_source_names_the_upload():
    """Without the sources in the store, the lines still carry their values
    and the answer says which upload would add the text: the build ID, the
    module, `ember upload --sources`; an upload of the binary then fills
    it in."""
    srv = Server()
    exe = os.path.join(FIX, "c_O2_pie")
    r = ember("upload", "--server", srv.url, "--token", srv.token, exe)  # no --sources
    check(r.returncode == 0, r.stdout + r.stderr)
    push_digest(srv, exe, COUNTS, "1")
    f = source_json(srv)["files"][0]
    check(f["missing"]["reason"] == "not_stored" and "ember upload --sources" in f["missing"]["message"] and
          f["build_id"] == build_id(exe) and f["module"] == "/opt/shop/bin/c_O2_pie" and "text" not in f, f)
    check([x["line"] for x in f["lines"]] == [17, 20, 21], f["lines"])
    r = ember("query", "--type", "cpu", "--format", "source", "--function", FN, env={"EMBER_SERVER": srv.url})
    check(r.returncode == 0, r.stderr)
    check("build ID %s: ember upload --sources /opt/shop/bin/c_O2_pie)" % build_id(exe) in r.stdout,
          r.stdout)
    check(re.search(r"^\s+\.\s+300\.00 ms\s+21:$", r.stdout, re.M), r.stdout)
    upload_sources(srv, exe)
    f = source_json(srv)["files"][0]
    check("missing" not in f and f["text"][20] == "\t\th = mix_step(h, &pts[i]);", f.get("missing"))
    # a function no stack holds: no files, said as such
    r = ember("query", "--server", srv.url, "--type", "cpu", "--format", "source", "--function", "nope")
    check(r.returncode == 0 and "no source lines of function 'nope'" in r.stdout, r.stdout + r.stderr)


def test_source_view__diff_shows_before_and_after_per_line():
    """GET /api/v1/diff/source and `ember diff --format source`: each
    line's values on both sides, the text once; the line that grew is
    the one whose share grew."""
    srv = Server()
    exe = os.path.join(FIX, "c_O2_pie")
    upload_sources(srv, exe)
    push_digest(srv, exe, {0x8: 30, 0x10: 10}, "1")
    push_digest(srv, exe, {0x8: 10, 0x10: 30}, "2", T0 + SEC)
    qs = ("type=cpu&function=%s&base_query=%s&new_query=%s" %
          (FN, q('{version="1"}'), q('{version="2"}')))
    j = json.loads(srv.get("/api/v1/diff/source?" + qs)[0])
    f = j["files"][0]
    check(j["base_total"] == 400_000_000 and j["new_total"] == 400_000_000, j)
    check(f["lines"] == [{"line": 20, "base_self": 300_000_000, "base_total": 300_000_000,
                          "new_self": 100_000_000, "new_total": 100_000_000},
                         {"line": 21, "base_self": 0, "base_total": 100_000_000,
                          "new_self": 0, "new_total": 300_000_000}], f["lines"])
    check(f["text"][20] == "\t\th = mix_step(h, &pts[i]);", f["text"][20])
    r = ember("diff", "--server", srv.url, "--type", "cpu", "--base", '{version="1"}', "--new",
              '{version="2"}', "--format", "source", "--function", FN)
    check(r.returncode == 0, r.stderr)
    check("  base flat   base cum   new flat    new cum (shares of each side's total)" in r.stdout, r.stdout)
    check(re.search(r"^\s+\.\s+25\.00%\s+\.\s+75\.00%\s+21: \t\th = mix_step", r.stdout, re.M), r.stdout)
    check(re.search(r"^\s+75\.00%\s+75\.00%\s+25\.00%\s+25\.00%\s+20: ", r.stdout, re.M), r.stdout)


def test_source_view__unreadable_store_is_an_error():
    """A debuginfo store that cannot be read (the fault injection of test
    builds, EMBER_TEST_STORE_FAULT) is 503, never an answer saying the
    source is not stored."""
    srv = Server()
    exe = os.path.join(FIX, "c_O2_pie")
    upload_sources(srv, exe)
    push_digest(srv, exe, COUNTS, "1")
    srv.stop()
    srv = ember_test.Server(EMBER, TMP, data=srv.data, env={"EMBER_TEST_STORE_FAULT": "+0"})
    if "EMBER_TEST_STORE_FAULT=+0" not in srv.stderr():
        skip("a Release build: the store's fault injection is in Debug builds only")
    st, body, hdr = srv.request("GET", "/api/v1/source?type=cpu&function=" + FN)
    check(st == 503 and hdr.get("retry-after") and b"debuginfo store" in body, "%d %r" % (st, body))
    r = ember("query", "--server", srv.url, "--type", "cpu", "--format", "source", "--function", FN)
    check(r.returncode == 1 and "the debuginfo store cannot be read" in r.stderr, r.stderr)


if __name__ == "__main__":
    run_case("test_source_view__", globals())
