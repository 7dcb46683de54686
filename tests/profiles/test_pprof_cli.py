#!/usr/bin/env python3
"""`go tool pprof` on the query URL exactly as the README gives it (issue 25,
docs/http-api.md "GET /api/v1/query"): with frames the server cannot
symbolize (their build ID has no debug info in the store), the plain
command, without -symbolize=none and without PPROF_BINARY_PATH, exits 0 and
prints them as MODULE+0xOFFSET with the pushed totals, because the pprof
names them itself and marks its mappings symbolized (pprof would otherwise
post their addresses to /symbolz, which Ember does not answer: 404, as any
unknown path).  Usage: test_pprof_cli.py EMBER FIXTURES_DIR CASE."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import packages  # noqa: E402
from ember_test import Profile, check, skip  # noqa: E402
from profiles_test import NOW_S, SEC, TMP, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the hour queried
PERIOD = 10_000_000
BASE = 0x7f0000000000
SEL = '{service_name="raw"}'


def pushed(srv):
    """main;libnodebug.so+0x1139 3 samples, main;work;libnodebug.so+0x2000 5,
    main;<build ID cd..>+0x40 2 (a mapping that names no file): 10 in all."""
    p = Profile(time_ns=T0, duration_ns=10 * SEC, period=("cpu", "nanoseconds", PERIOD))
    lib = p.mapping(BASE, BASE + 0x100000, 0x1000, "/opt/none/libnodebug.so",
                    build_id="ab" * 20)
    anon = p.mapping(BASE + 0x200000, BASE + 0x300000, 0, "", build_id="cd" * 20)
    for stack, n in ((["main", (lib, BASE + 0x139)], 3),
                     (["main", "work", (lib, BASE + 0x1000)], 5),
                     (["main", (anon, BASE + 0x200040)], 2)):
        p.sample(stack, [n, n * PERIOD])
    srv.push_ok(p.encode(gzip=True), "service_name=raw")


def pprof(args, url):
    """`go tool pprof ARGS URL` as a new user runs it: a fresh HOME, no
    PPROF_BINARY_PATH, default symbolization.  (returncode, stdout, stderr)."""
    go = packages.which("go")
    if not go:
        skip(packages.missing("go", "`go tool pprof` reads the query URL"))
    env = dict(os.environ, HOME=os.path.join(TMP, "home"), GOCACHE=os.path.join(TMP, "gocache"),
               PPROF_TMPDIR=os.path.join(TMP, "pprof"))
    env.pop("PPROF_BINARY_PATH", None)
    os.makedirs(env["HOME"], exist_ok=True)
    r = subprocess.run([go, "tool", "pprof"] + args + [url], capture_output=True, text=True,
                       env=env, timeout=180)
    return r.returncode, r.stdout, r.stderr


def top_rows(out):
    """-top's rows: {name: [flat, flat%, sum%, cum, cum%]}."""
    return {f[-1]: f[:5] for f in (line.split() for line in out.splitlines())
            if len(f) == 6 and f[1].endswith("%") and f[4].endswith("%")}


def test_pprof_cli__readme_command_names_unsymbolized_frames():
    srv = Server()
    pushed(srv)
    url = "%s/api/v1/query?type=cpu&from=now-1h&query=%s&format=pprof" % (srv.url, q(SEL))
    rc, out, err = pprof(["-top"], url)
    check(rc == 0, "go tool pprof -top: exit %d\n%s" % (rc, err[-2000:]))
    check("symbolz" not in err and "Local symbolization" not in err,
          "pprof tried to symbolize:\n" + err[-2000:])
    rows = top_rows(out)
    lib, anon = "libnodebug.so+0x1139", "%s+0x40" % ("cd" * 20)
    check(rows.get(lib, [""])[0] == "30ms" and rows.get("libnodebug.so+0x2000", [""])[0] ==
          "50ms" and rows.get(anon, [""])[0] == "20ms" and rows.get("main", ["", "", "", ""])[3]
          == "100ms" and rows.get("work", ["", "", "", ""])[3] == "50ms",
          "go tool pprof -top:\n" + out + err[-1000:])
    check("Showing nodes accounting for 100ms, 100% of 100ms total" in out, out)
    # -raw: the names are functions of the profile, the mappings marked
    rc, out, err = pprof(["-raw"], url)
    check(rc == 0, "go tool pprof -raw: exit %d\n%s" % (rc, err[-2000:]))
    check(" libnodebug.so+0x1139 " in out and " libnodebug.so+0x2000 " in out,
          "go tool pprof -raw:\n" + out[-3000:])
    check("/opt/none/libnodebug.so %s [FN]\n" % ("ab" * 20) in out,
          "the mapping's flags:\n" + out[-3000:])


def test_pprof_cli__unknown_path_is_404():
    srv = Server()
    for method, path in (("GET", "/no/such/path"), ("GET", "/symbolz"), ("POST", "/symbolz"),
                         ("HEAD", "/api/v1/nothing")):
        st, body, _ = srv.request(method, path, b"0x1000" if method == "POST" else None)
        check(st == 404, "%s %s: HTTP %d %r" % (method, path, st, body[:200]))


if __name__ == "__main__":
    run_case("test_pprof_cli__", globals())
