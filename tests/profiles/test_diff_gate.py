#!/usr/bin/env python3
"""The regression gate as a release pipeline runs it (issue 28, docs/cli.md
"A regression gate in CI"): two versions of a program (diff_gate_fixture.c,
version 2's checksum() four times slower) built and run, each run
profiling itself with real CPU-time samples (SIGPROF) into pushed pprof
profiles, then `ember diff --fail-on-regression` against a real
`ember serve`: exit 3 on version 2 against version 1, naming checksum in
its Markdown comment and JUnit report; exit 0 on a second run of version 1
against the first.  Usage: test_diff_gate.py EMBER FIXTURES_DIR CASE."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ember_test  # noqa: E402
from ember_test import check, cpu_profile  # noqa: E402
from profiles_test import EMBER, NOW_S, SEC, TMP, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 900) * SEC  # inside the hour the gate reads
PROFILES = 3  # per run: the per-profile noise of real runs
SAMPLES = 150  # per profile (ITIMER_PROF, one CPU-time tick each)
REGRESSION = 3  # the gate's exit code (docs/cli.md)


def build(version):
    """The fixture at version 1 or 2: its executable."""
    cc = ember_test.need("cc")
    exe = os.path.join(TMP, "shop-v%d" % version)
    work = ["-DCHECKSUM_WORK=10000000"] if version == 2 else []
    subprocess.run([cc, "-O1", "-o", exe, os.path.join(HERE, "diff_gate_fixture.c")] + work,
                   check=True)
    return exe


def profile_run(srv, exe, version, run, slot):
    """Run exe PROFILES times, pushing each run's samples as one CPU
    profile labelled version and run, 10 s apart from slot on."""
    for k in range(PROFILES):
        out = subprocess.run([exe, str(SAMPLES)], capture_output=True, text=True, timeout=120,
                             check=True).stdout
        stacks = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1])
                  for line in out.splitlines()}
        check(sum(stacks.values()) >= SAMPLES, "%s: %r" % (exe, out))
        t = T0 + (slot * PROFILES + k) * 10 * SEC
        srv.push_ok(cpu_profile(stacks, t, period=1_000_000).encode(gzip=True),
                    "service_name=shop&version=%d&run=%s" % (version, run))


def gate(srv, base, new, *args):
    """`ember diff --fail-on-regression` of base against new (selectors)."""
    cmd = [EMBER, "diff", "--server", srv.url, "--type", "cpu", "--from", "now-1h",
           "--base", base, "--new", new, "--fail-on-regression"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def report(path):
    with open(path) as f:
        return f.read()


def junit_failures(path):
    """{testcase name: failure message or None} and the suites' failures."""
    root = ET.parse(path).getroot()
    check(root.tag == "testsuites", root.tag)
    cases = {c.get("name"): (c.find("failure").get("message") if c.find("failure") is not None
                             else None) for c in root.iter("testcase")}
    return cases, int(root.get("failures"))


def test_diff_gate__fails_on_the_slowed_version_passes_on_a_rerun():
    srv = Server()
    v1, v2 = build(1), build(2)
    profile_run(srv, v1, 1, "a", 0)
    profile_run(srv, v1, 1, "b", 1)  # the same version again: only noise differs
    profile_run(srv, v2, 2, "a", 2)
    first = '{service_name="shop",version="1",run="a"}'
    rerun = '{service_name="shop",version="1",run="b"}'
    slowed = '{service_name="shop",version="2"}'
    md, xml = os.path.join(TMP, "gate.md"), os.path.join(TMP, "gate.xml")

    # the slowed version: the gate stops the pipeline and says why
    r = gate(srv, first, slowed)
    check(r.returncode == REGRESSION and "'checksum'" in r.stderr,
          "v1 -> v2: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    check(r.stdout.splitlines()[3].endswith("! checksum"), "the table:\n" + r.stdout)
    r = gate(srv, first, slowed, "--format", "markdown", "-o", md)
    text = report(md)
    check(r.returncode == REGRESSION and "**FAIL**" in text and
          "| **regressed** | `checksum` |" in text and 'run="a"' in text and
          'version="2"' in text, "markdown: exit %d %s\n%s" % (r.returncode, r.stderr, text))
    r = gate(srv, first, slowed, "--format", "junit", "-o", xml)
    cases, failures = junit_failures(xml)
    check(r.returncode == REGRESSION and failures == 1 and cases.get("checksum") and
          len([n for n, f in cases.items() if f is None]) == 1,
          "junit: exit %d %s\n%s" % (r.returncode, r.stderr, report(xml)))

    # a second run of the same version: noise, and the pipeline goes on
    for fmt, out in (("table-text", None), ("markdown", md), ("junit", xml)):
        r = gate(srv, first, rerun, "--format", fmt, *(["-o", out] if out else []))
        check(r.returncode == 0 and r.stderr == "", "v1 -> v1 (%s): exit %d\n%s%s%s" %
              (fmt, r.returncode, r.stdout, r.stderr, report(out) if out else ""))
    check("**PASS**" in report(md) and "regressed" not in report(md), report(md))
    cases, failures = junit_failures(xml)
    check(failures == 0 and all(f is None for f in cases.values()), report(xml))

    # the same verdict offline, on the two versions' profiles as files
    paths = []
    for sel, name in ((first, "v1.pb.gz"), (slowed, "v2.pb.gz")):
        body, _ = srv.get("/api/v1/query?type=cpu&from=now-1h&format=pprof&query=" +
                          q(sel))
        paths.append(os.path.join(TMP, name))
        with open(paths[-1], "wb") as f:
            f.write(body)
    r = subprocess.run([EMBER, "diff", paths[0], paths[1], "--fail-on-regression", "--format",
                        "markdown"], capture_output=True, text=True, timeout=60)
    check(r.returncode == REGRESSION and "| **regressed** | `checksum` |" in r.stdout,
          "offline: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))


def test_diff_gate__a_gate_that_cannot_judge_exits_1_not_0():
    """A gate that cannot judge must not let the pipeline through: a
    threshold the server refuses exits 1, never 0."""
    srv = Server()
    srv.push_ok(cpu_profile({"main;a": 10}, T0).encode(gzip=True), "service_name=shop")
    r = gate(srv, "{}", "{}", "--min-z", "-1")
    check(r.returncode == 1 and "min_z" in r.stderr, "exit %d %r" % (r.returncode, r.stderr))


def test_diff_gate__names_escaped_in_markdown_and_junit():
    """A C++ name with <, &, quotes, a '|' and a backtick regressed
    (offline, two files): the JUnit report parses and names it exactly,
    the Markdown row stays one table row with its code span intact."""
    name = "ns::op<a&b>|\"q\"'`x`"
    base = {"main;work": 300, "main;" + name: 10}
    new = {"main;work": 300, "main;" + name: 120}
    paths = [os.path.join(TMP, n) for n in ("b.pb.gz", "n.pb.gz")]
    for path, stacks in zip(paths, (base, new)):
        with open(path, "wb") as f:
            f.write(cpu_profile(stacks).encode(gzip=True))
    xml = os.path.join(TMP, "gate.xml")
    r = subprocess.run([EMBER, "diff", paths[0], paths[1], "--fail-on-regression", "--format",
                        "junit", "-o", xml], capture_output=True, text=True, timeout=60)
    cases, failures = junit_failures(xml)
    check(r.returncode == REGRESSION and failures == 1 and cases.get(name),
          "junit: exit %d %s\n%s" % (r.returncode, r.stderr, report(xml)))
    r = subprocess.run([EMBER, "diff", paths[0], paths[1], "--format", "markdown"],
                       capture_output=True, text=True, timeout=60)
    row = [line for line in r.stdout.splitlines() if "regressed" in line]
    check(r.returncode == 0 and row and
          row[0].startswith("| **regressed** | `` ns::op<a&b>\\|\"q\"'`x` `` | ") and
          row[0].replace("\\|", "").count("|") == 8, "markdown:\n" + r.stdout)


if __name__ == "__main__":
    run_case("test_diff_gate__", globals())
