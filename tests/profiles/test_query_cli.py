#!/usr/bin/env python3
"""`ember query` and `ember diff` as a new user first runs them (issue 28's
paper cuts): the top table in human units, the server from $EMBER_SERVER,
and a selector naming a label no series has answered with that reason.

    test_query_cli.py EMBER FIXTURES_DIR CASE      (CASE: test_query_cli__*)

Each case starts its own real `ember serve` on a free loopback port
(tests/profiles/profiles_test.py) and runs the real `ember` client.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import Profile, check, cpu_profile  # noqa: E402
from profiles_test import EMBER, NOW_S, SEC, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour


def query(*args, env=None):
    e = dict(os.environ)
    e.pop("EMBER_SERVER", None)
    e.update(env or {})
    return subprocess.run([EMBER, "query"] + list(args), capture_output=True, text=True,
                          env=e, timeout=60)


def rows(text):
    """{name: (self, total)} of a top-text table: the cells as printed."""
    out = {}
    for line in text.splitlines()[3:]:
        m = re.fullmatch(r"\s*(.+?)\s+[\d.]+%\s+[\d.]+%\s+(.+?)\s+[\d.]+%\s+(\S+)", line)
        check(m, "not a row: %r in\n%s" % (line, text))
        out[m.group(3)] = (m.group(1), m.group(2))
    return out


def test_query_cli__top_text_in_human_units():
    """Nanoseconds as the UI writes them (25.63 s, 300.00 ms), bytes in
    KiB/MiB/GiB, counts with thousands separators; the exact total in the
    header."""
    srv = Server()
    srv.push_ok(cpu_profile({"main;work;hot": 2563, "main;idle": 30}, T0).encode(gzip=True),
                "service_name=units")
    r = query("--server", srv.url, "--type", "cpu", '{service_name="units"}')
    check(r.returncode == 0, r.stderr)
    got = rows(r.stdout)
    check(got["hot"] == ("25.63 s", "25.63 s") and got["idle"] == ("300.00 ms", "300.00 ms") and
          got["main"] == ("0 ns", "25.93 s"), "%r\n%s" % (got, r.stdout))
    check("total 25.93 s (25930000000 nanoseconds)" in r.stdout.splitlines()[1], r.stdout)
    r = query("--server", srv.url, "--type", "samples", '{service_name="units"}')
    check(rows(r.stdout)["hot"] == ("2,563", "2,563"), r.stdout)
    mem = Profile(types=(("alloc_objects", "count"), ("alloc_space", "bytes")),
                  period=("space", "bytes", 524288), time_ns=T0)
    mem.sample(["main", "grow"], [3, 1288490189])  # 1.2 GiB
    mem.sample(["main", "small"], [1, 2048])
    srv.push_ok(mem.encode(gzip=True), "service_name=units")
    r = query("--server", srv.url, "--type", "alloc_space", '{service_name="units"}')
    check(r.returncode == 0, r.stderr)
    got = rows(r.stdout)
    check(got["grow"] == ("1.20 GiB", "1.20 GiB") and got["small"] == ("2.00 KiB", "2.00 KiB"),
          "%r\n%s" % (got, r.stdout))


def test_query_cli__server_from_environment():
    """--server, else $EMBER_SERVER, else ember upload's default; for
    `ember diff` too."""
    srv = Server()
    srv.push_ok(cpu_profile({"main;hot": 5}, T0).encode(gzip=True), "service_name=env")
    r = query("--type", "cpu", '{service_name="env"}', env={"EMBER_SERVER": srv.url})
    check(r.returncode == 0 and rows(r.stdout)["hot"][0] == "50.00 ms", r.stdout + r.stderr)
    e = dict(os.environ, EMBER_SERVER=srv.url)
    r = subprocess.run([EMBER, "diff", "--type", "cpu", "--base", '{service_name="env"}',
                        "--new", '{service_name="env"}'], capture_output=True, text=True,
                       env=e, timeout=60)
    check(r.returncode == 0 and r.stdout.startswith("Type: ") and "hot" in r.stdout,
          r.stdout + r.stderr)
    # neither: ember upload's default server is asked (whatever answers there, if
    # anything), not a usage error
    r = query("--type", "cpu")
    check(r.returncode != 2 and "no server" not in r.stderr, r.stderr)
    r = query("--help")
    check("$EMBER_SERVER or" in r.stdout and "http://127.0.0.1:8002" in r.stdout, r.stdout)


def test_query_cli__unknown_label_named():
    """{Comm="shop"} where the series have comm: the reason, not 0 of 0."""
    srv = Server()
    srv.push_ok(cpu_profile({"main;hot": 5}, T0).encode(gzip=True), "comm=shop&pid=42")
    r = query("--server", srv.url, "--type", "cpu", '{Comm="shop"}')
    check(r.returncode == 0 and "0 of 0" not in r.stdout and
          "no series in this range has the label 'Comm' (did you mean 'comm'?)" in r.stdout,
          r.stdout + r.stderr)
    r = query("--server", srv.url, "--type", "cpu", '{nosuch=~"x.*"}')
    check("the label 'nosuch' (GET /api/v1/labels" in r.stdout, r.stdout)
    # the JSON tree and the header say it too; a label that exists: no hint
    body, hdr = srv.get("/api/v1/query?type=cpu&query=" + q('{Comm="shop"}'))
    check("did you mean 'comm'" in hdr.get("x-ember-hint", "") and
          b'"hint":"no series in this range has the label' in body, (hdr, body[:300]))
    body, hdr = srv.get("/api/v1/query?type=cpu&format=top-text&query=" + q('{comm="cart"}'))
    check("x-ember-hint" not in hdr and b"Showing 0 of 0" in body, (hdr, body))


if __name__ == "__main__":
    run_case("test_query_cli__", globals())
