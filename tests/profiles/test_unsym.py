#!/usr/bin/env python3
"""Unsymbolized frames grouped per module (issue 28): the query's and the
diff's outputs drawn from trees (json, folded, top, svg; a diff's table,
tree, folded and flame graph) name a run of one module's unsymbolized
frames "[MODULE]" once, unless unsymbolized=frames (`ember query
--unsymbolized frames`) asks for each "MODULE+0xOFFSET"; focus= takes the
group's name; the pprof stays exact (test_pprof_cli.py reads it with `go
tool pprof`).

    test_unsym.py EMBER FIXTURES_DIR CASE      (CASE: test_unsym__*)

Each case starts its own real `ember serve` on a free loopback port
(tests/profiles/profiles_test.py) and runs the real `ember` client.
"""
import gzip
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import Profile, check  # noqa: E402
from profiles_test import EMBER, NOW_S, SEC, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
PERIOD = 10_000_000
BASE = 0x7f0000000000
SEL = '{service_name="raw"}'


def profile(scale=1):
    """main;lib+0x1139;lib+0x2139 3*scale samples, main;work;lib+0x2000 5,
    main;lib+0x3000 4, main;<build ID cd..>+0x40 2 (a mapping that names no
    file), lib being /opt/none/libnodebug.so: its pprof, gzip'd."""
    p = Profile(time_ns=T0, duration_ns=10 * SEC, period=("cpu", "nanoseconds", PERIOD))
    lib = p.mapping(BASE, BASE + 0x100000, 0x1000, "/opt/none/libnodebug.so",
                    build_id="ab" * 20)
    anon = p.mapping(BASE + 0x200000, BASE + 0x300000, 0, "", build_id="cd" * 20)
    for stack, n in ((["main", (lib, BASE + 0x139), (lib, BASE + 0x1139)], 3 * scale),
                     (["main", "work", (lib, BASE + 0x1000)], 5),
                     (["main", (lib, BASE + 0x2000)], 4),
                     (["main", (anon, BASE + 0x200040)], 2)):
        p.sample(stack, [n, n * PERIOD])
    return p.encode(gzip=True)


def pushed(srv, service="raw", scale=1):
    srv.push_ok(profile(scale), "service_name=" + service)


def folded(srv, extra="", sel=SEL):
    body, _ = srv.get("/api/v1/query?type=cpu&from=now-1h&format=folded&query=%s%s" %
                      (q(sel), extra))
    return dict((line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]))
                for line in body.decode().splitlines())


def query(*args):
    return subprocess.run([EMBER, "query"] + list(args), capture_output=True, text=True,
                          timeout=60)


LIB, ANON = "[libnodebug.so]", "[%s]" % ("cd" * 20)


def test_unsym__query_outputs_group_per_module():
    """folded, json, top and svg name the module once; unsymbolized=frames
    gives each frame back; a bad value is refused naming it."""
    srv = Server()
    pushed(srv)
    ms = PERIOD
    check(folded(srv) == {"main;" + LIB: 7 * ms, "main;work;" + LIB: 5 * ms,
                          "main;" + ANON: 2 * ms}, folded(srv))
    check(folded(srv, "&unsymbolized=frames") ==
          {"main;libnodebug.so+0x1139;libnodebug.so+0x2139": 3 * ms,
           "main;work;libnodebug.so+0x2000": 5 * ms, "main;libnodebug.so+0x3000": 4 * ms,
           "main;%s+0x40" % ("cd" * 20): 2 * ms}, folded(srv, "&unsymbolized=frames"))
    check(folded(srv, "&unsymbolized=module") == folded(srv), "module is the default")
    top = srv.json("/api/v1/query?type=cpu&from=now-1h&format=top&query=" + q(SEL))
    names = [r["name"] for r in top["rows"]]
    check(names.count(LIB) == 1 and not [n for n in names if "+0x" in n], names)
    lib = [r for r in top["rows"] if r["name"] == LIB][0]
    check(lib["self"] == 12 * ms and lib["total"] == 12 * ms, lib)
    tree = srv.json("/api/v1/query?type=cpu&from=now-1h&query=" + q(SEL))
    main = tree["tree"]["children"][0]
    check(sorted(c["name"] for c in main["children"]) == sorted([LIB, ANON, "work"]), main)
    svg, _ = srv.get("/api/v1/query?type=cpu&from=now-1h&format=svg&query=" + q(SEL))
    check(b"[libnodebug.so]" in svg and b"+0x" not in svg, svg[-2000:])
    st, body, _ = srv.request("GET", "/api/v1/query?type=cpu&from=now-1h&unsymbolized=all"
                              "&query=" + q(SEL))
    check(st == 400 and b"unsymbolized: 'all' is not module or frames" in body, (st, body))


def test_unsym__focus_names_the_group():
    """focus= through "[MODULE]" keeps the stacks through the run of its
    frames, grouped or each frame shown; an exact frame still works."""
    srv = Server()
    pushed(srv)
    ms = PERIOD
    got = folded(srv, "&focus=" + q("main;work;" + LIB))
    check(got == {"main;work;" + LIB: 5 * ms}, got)
    got = folded(srv, "&focus=" + q("main;" + LIB))
    check(got == {"main;" + LIB: 7 * ms}, got)
    got = folded(srv, "&unsymbolized=frames&focus=" + q("main;" + LIB))
    check(got == {"main;libnodebug.so+0x1139;libnodebug.so+0x2139": 3 * ms,
                  "main;libnodebug.so+0x3000": 4 * ms}, got)
    got = folded(srv, "&focus=" + q("main;libnodebug.so+0x3000"))
    check(got == {"main;" + LIB: 4 * ms}, got)


def test_unsym__diff_groups_both_sides():
    """The diff's table and folded group both sides alike (a module's row
    once, its change measured); unsymbolized=frames compares the frames;
    the diff's pprof is exact."""
    srv = Server()
    pushed(srv, "before")
    pushed(srv, "after", scale=3)
    url = ("/api/v1/diff?base_query=%s&new_query=%s&base_from=now-1h&new_from=now-1h&type=cpu" %
           (q('{service_name="before"}'), q('{service_name="after"}')))
    table = srv.json(url + "&format=table&limit=0")
    names = [r["name"] for r in table["rows"]]
    check(names.count(LIB) == 1 and not [n for n in names if "+0x" in n], names)
    body, _ = srv.get(url + "&format=folded")
    stacks = {line.rsplit(" ", 2)[0] for line in body.decode().splitlines()}
    check(stacks == {"main;" + LIB, "main;work;" + LIB, "main;" + ANON}, stacks)
    table = srv.json(url + "&format=table&limit=0&unsymbolized=frames")
    names = [r["name"] for r in table["rows"]]
    check("libnodebug.so+0x2139" in names and LIB not in names, names)
    body, _ = srv.get(url + "&format=pprof")
    check(b"libnodebug.so+0x2139" in gzip.decompress(body), "the diff's pprof is exact")


def test_unsym__cli_query_and_offline_diff():
    """`ember query` groups by default and takes --unsymbolized frames;
    `ember diff` of two pprof files groups both sides as the server does."""
    srv = Server()
    pushed(srv)
    r = query("--server", srv.url, "--type", "cpu", SEL)
    check(r.returncode == 0 and " %s\n" % LIB in r.stdout and "+0x" not in r.stdout,
          r.stdout + r.stderr)
    r = query("--server", srv.url, "--type", "cpu", "--unsymbolized", "frames", SEL)
    check(r.returncode == 0 and " libnodebug.so+0x3000\n" in r.stdout, r.stdout + r.stderr)
    r = query("--server", srv.url, "--type", "cpu", "--unsymbolized", "bogus", SEL)
    check(r.returncode != 0 and "unsymbolized" in r.stderr, r.stdout + r.stderr)
    files = []
    for name, scale in (("base", 1), ("new", 3)):  # as a profiler wrote them: no lines
        body = profile(scale)
        files.append(os.path.join(os.environ.get("TMPDIR", "/tmp"), "unsym-%d-%s.pb.gz" %
                                  (os.getpid(), name)))
        with open(files[-1], "wb") as f:
            f.write(body)
    try:
        r = subprocess.run([EMBER, "diff", files[0], files[1], "--format", "table"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, r.stderr)
        names = [row["name"] for row in json.loads(r.stdout)["rows"]]
        check(LIB in names and not [n for n in names if "+0x" in n], names)
        r = subprocess.run([EMBER, "diff", files[0], files[1], "--format", "table",
                            "--unsymbolized", "frames"], capture_output=True, text=True,
                           timeout=60)
        names = [row["name"] for row in json.loads(r.stdout)["rows"]]
        check("libnodebug.so+0x3000" in names and LIB not in names, names)
    finally:
        for f in files:
            os.unlink(f)


def test_unsym__coverage_names_leaf_and_whole_per_module():
    """GET /api/v1/coverage with a type: the share named at the leaf and
    whole, and per module its path as the profile names it, its share left
    unnamed, the stored reason; a perf map's code is marked jit."""
    srv = Server()
    pushed(srv)
    p = Profile(time_ns=T0, duration_ns=10 * SEC, period=("cpu", "nanoseconds", PERIOD))
    jit = p.mapping(BASE + 0x400000, BASE + 0x500000, 0, "/tmp/perf-4242.map")
    p.sample(["main", "hot"], [6, 6 * PERIOD])
    p.sample(["main", (jit, BASE + 0x400100)], [2, 2 * PERIOD])
    srv.push_ok(p.encode(gzip=True), "service_name=jit")
    cov = srv.json("/api/v1/coverage?type=cpu&from=now-1h&limit=0")
    named = cov["named"]
    check(named["total"] == 22 * PERIOD and named["leaf_named"] == 6 * PERIOD and
          named["all_named"] == 6 * PERIOD and abs(named["leaf_named_pct"] - 600 / 22) < 1e-3,
          named)
    mods = {m["file"] or m["build_id"]: m for m in cov["modules"]}
    lib = mods["/opt/none/libnodebug.so"]
    check(lib["build_id"] == "ab" * 20 and not lib["jit"] and lib["reason"] ==
          "unknown_build_id" and lib["unnamed"] == 12 * PERIOD and lib["leaf"] == 12 * PERIOD
          and lib["leaf_named_pct"] == 0 and lib["all_named_pct"] == 0, lib)
    check(abs(lib["unnamed_pct"] - 1200 / 22) < 1e-3, lib)
    perf = mods["/tmp/perf-4242.map"]
    check(perf["jit"] and perf["build_id"] == "" and perf["unnamed"] == 2 * PERIOD, perf)
    check(list(mods)[0] == "/opt/none/libnodebug.so", "most unnamed first: %r" % list(mods))
    # without a type: the stored records alone, as before
    cov = srv.json("/api/v1/coverage?from=now-1h")
    check("modules" not in cov and cov["build_ids"], cov)


if __name__ == "__main__":
    run_case("test_unsym__", globals())
