#!/usr/bin/env python3
"""OTLP sample attributes end to end (issue 24, "Mapping to Ember's
model": thread name and ID, CPU stay with the samples and never create
series): the store keeps each sample's attribute set beside its row, never
as a series or in the label index, and the pprof output of
GET /api/v1/query labels each sample with its attributes, so
`go tool pprof -tags` and `-tagfocus thread.name=...` give each thread's
total; from the head, after a restart (the log), from a block and after a
merge.  Usage: test_sample_attrs.py EMBER FIXTURES_DIR CASE."""
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ember_test  # noqa: E402
from ember_test import check, wait_for  # noqa: E402
from profiles_test import (NOW_S, SEC, OtlpRequest, Server, folded, otlp_post,  # noqa: E402
                           otlp_stubs, q, run_case)
from test_spans import block_files  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
SEL = '{service_name="threads"}'
# per thread: samples (each of value 1) in main;compute, in main;shared
THREADS = {"worker-1": (7, 2), "worker-2": (3, 5)}


def two_threads_request(svc, time_ns):
    """One OTLP profile of two threads (thread.name, thread.id, CPU):
    worker-1 mostly in compute, worker-2 mostly in shared, both in both."""
    r = OtlpRequest(svc)
    d = r.dict
    main, compute, shared = r.named("main"), r.named("compute"), r.named("shared")
    st = {"compute": r.stack([compute, main]), "shared": r.stack([shared, main])}
    p = r.profile("threads", time_ns)
    for i, (name, counts) in enumerate(sorted(THREADS.items())):
        attrs = []
        for key, kind, value in (("thread.name", "string_value", name),
                                 ("thread.id", "int_value", 100 + i),
                                 ("cpu.logical_number", "int_value", i)):
            a = d.attribute_table.add(key_strindex=r.s(key))
            setattr(a.value, kind, value)
            attrs.append(len(d.attribute_table) - 1)
        for fn, n in zip(("compute", "shared"), counts):
            for k in range(n):  # one sample each, its own timestamp
                p.samples.add(stack_index=st[fn], attribute_indices=attrs,
                              timestamps_unix_nano=[time_ns + k])
    return r


def typ(srv):
    types = [t["id"] for t in srv.json("/api/v1/profile-types?from=0")["types"]]
    check(len(types) == 1, types)
    return types[0]


def pprof_tags(srv, extra=()):
    """go tool pprof -tags (with extra flags) of the query's pprof output."""
    go = ember_test.need("go")
    st, body, _ = srv.request("GET", "/api/v1/query?type=%s&from=0&format=pprof&query=%s" %
                              (q(typ(srv)), q(SEL)))
    check(st == 200, "pprof: HTTP %d %r" % (st, body[:300]))
    tmp = tempfile.mkdtemp(prefix="attrs-")
    path = os.path.join(tmp, "threads.pb.gz")
    with open(path, "wb") as f:
        f.write(body)
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"),
               PPROF_TMPDIR=os.path.join(tmp, "pprof"))
    g = subprocess.run([go, "tool", "pprof", "-symbolize=none"] + list(extra) + [path],
                       capture_output=True, text=True, env=env, timeout=180)
    check(g.returncode == 0, "go tool pprof %r: %s" % (extra, g.stderr[-2000:]))
    return g.stdout


def tag_totals(out, key):
    """The values of key and their totals in go tool pprof -tags output."""
    got, inside = {}, False
    for line in out.splitlines():
        if re.match(r"^ *%s: Total" % re.escape(key), line):
            inside = True
            continue
        m = re.match(r"^\s+([\d.]+) \(\s*[\d.]+%\): (.+)$", line)
        if inside and m:
            got[m.group(2)] = int(float(m.group(1)))
        elif inside and line.strip() and not m:
            inside = False
    return got


def check_threads(srv, recent=True):
    """One series (the metric counts recent ones), no thread label; folded
    totals as sent; the pprof output's samples labelled per thread, go
    tool pprof agreeing."""
    check(not recent or srv.metric("ember_profile_store_series") == 1,
          "series: %r" % srv.metric("ember_profile_store_series"))
    names = srv.json("/api/v1/labels?from=0")["names"]
    check(not [n for n in names if n.startswith(("thread", "cpu"))], "labels: %r" % names)
    for n in ("thread.name", "thread_name", "@thread.name", "cpu.logical_number"):
        v = srv.json("/api/v1/labels/%s/values?from=0" % q(n))["values"]
        check(v == [], "values of %s: %r" % (n, v))
    got = folded(srv, SEL, q(typ(srv)))
    check(got == {"main;compute": 10, "main;shared": 7}, "folded: %r" % got)
    out = pprof_tags(srv, ["-tags"])
    want = {name: sum(c) for name, c in THREADS.items()}
    check(tag_totals(out, "thread.name") == want, "thread.name: %r\n%s" %
          (tag_totals(out, "thread.name"), out))
    check(tag_totals(out, "thread.id") == {"100": 9, "101": 8}, "thread.id:\n" + out)
    check(tag_totals(out, "cpu.logical_number") == {"0": 9, "1": 8}, "cpu:\n" + out)
    top = pprof_tags(srv, ["-top", "-tagfocus=thread.name=worker-1"])
    check(re.search(r"^\s+7\s+[\d.]+%.*\bcompute$", top, re.M) and
          re.search(r"^\s+2\s+[\d.]+%.*\bshared$", top, re.M),
          "-tagfocus thread.name=worker-1:\n" + top)


def test_sample_attrs__otlp_threads_one_series_pprof_labels_per_sample():
    svc, _ = otlp_stubs()
    srv = Server()
    st, body, _ = otlp_post(srv, two_threads_request(svc, T0).encode())
    check(st == 200, "OTLP: %d %r" % (st, body[:300]))
    check_threads(srv)


def test_sample_attrs__kept_after_restart_in_blocks_and_merge():
    """Attributes read back from the log after a restart, from a block
    (with its LINKS section), from the merge of two blocks, and after a
    restart again."""
    svc, _ = otlp_stubs()
    old = (NOW_S - 3 * 3600) * SEC  # a closed partition: its blocks merge
    srv = Server(["--max-profile-age", "0", "--profile-head-age", "600s"])
    st, body, _ = otlp_post(srv, two_threads_request(svc, old).encode())
    check(st == 200, "OTLP: %d %r" % (st, body[:300]))
    srv.stop(signal.SIGKILL)
    srv.start()  # from the log
    check(block_files(srv) == {}, "a block before the head's age")
    check_threads(srv, recent=False)
    srv.stop()
    srv = Server(["--max-profile-age", "0", "--profile-head-age", "1s"], data=srv.data)
    wait_for(lambda: srv.metric("ember_profile_store_blocks") == 1, "a block", 60)
    first = block_files(srv)
    check(list(first.values()) == [(3, True)], "the block: %r" % first)
    check_threads(srv, recent=False)
    # a second profile of the same threads: its block merges with the first
    st, body, _ = otlp_post(srv, two_threads_request(svc, old + SEC).encode())
    check(st == 200, "OTLP: %d %r" % (st, body[:300]))
    wait_for(lambda: len(block_files(srv)) == 1 and not set(first) & set(block_files(srv)),
             "the two blocks merged", 90)
    srv.stop()
    srv.start()
    got = folded(srv, SEL, q(typ(srv)))
    check(got == {"main;compute": 20, "main;shared": 14}, "merged: %r" % got)
    out = pprof_tags(srv, ["-tags"])
    check(tag_totals(out, "thread.name") == {"worker-1": 18, "worker-2": 16},
          "merged thread.name:\n" + out)


if __name__ == "__main__":
    run_case("test_sample_attrs__", globals())
