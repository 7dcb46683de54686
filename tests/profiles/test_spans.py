#!/usr/bin/env python3
"""Span links end to end (issue 24, "Span links"): samples that carry a
trace and a span (pprof's span_id/trace_id labels, as Pyroscope's SDKs and
OpenTelemetry wrappers set them, on /api/v1/profiles and /ingest; OTLP's
link table) keep them per sample, never as series or label values, and
GET /api/v1/query?span_id=&trace_id= (and ember query --span-id/--trace-id)
answer exactly the samples linked to them, from the head, from blocks,
after a merge and after a restart.  OTLP sample attributes (thread names)
make no series either.  Usage: test_spans.py EMBER FIXTURES_DIR CASE."""
import glob
import json
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import Profile, check, wait_for  # noqa: E402
from profiles_test import (EMBER, NOW_S, SEC, OtlpRequest, Server, folded,  # noqa: E402
                           otlp_post, otlp_stubs, q, run_case)

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
PERIOD = 10_000_000
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_SLOW = "00f067aa0ba902b7"   # all its samples in checkout;charge_card
SPAN_FAST = "53995c3f42cd8ad8"   # all its samples in checkout;render
OTHER_TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN_OTHER = "b7ad6b7169203331"  # OTHER_TRACE's, in main;idle_loop


def linked_profile(time_ns, spans=None):
    """A CPU profile whose samples are linked to spans: SPAN_SLOW's 9
    samples all in charge_card, SPAN_FAST's 4 in render (both of TRACE),
    SPAN_OTHER's 2 in idle_loop (OTHER_TRACE), and 20 unlinked samples in
    main;work.  spans: more (span hex -> count), each in spin."""
    p = Profile(time_ns=time_ns, duration_ns=10 * SEC)

    def add(stack, n, labels=None):
        p.sample(stack.split(";"), [n, n * PERIOD], labels)
    add("main;checkout;charge_card", 9, {"span_id": SPAN_SLOW, "trace_id": TRACE})
    add("main;checkout;render", 4, {"span_id": SPAN_FAST, "trace_id": TRACE})
    add("main;idle_loop", 2, {"span_id": SPAN_OTHER, "trace_id": OTHER_TRACE})
    add("main;work", 20)
    for span, n in (spans or {}).items():
        add("main;spin", n, {"span_id": span, "trace_id": TRACE})
    return p.encode(gzip=True)


def by_links(srv, params, selector="{}", fmt="folded"):
    """The query's answer for link parameters (a list of (name, value))."""
    extra = "".join("&%s=%s" % (k, q(v)) for k, v in params)
    return srv.request("GET", "/api/v1/query?type=cpu&from=0&format=%s&query=%s%s" %
                       (fmt, q(selector), extra))


def folded_links(srv, params, selector="{}"):
    st, body, hdr = by_links(srv, params, selector)
    check(st == 200, "query %r: HTTP %d %r" % (params, st, body[:300]))
    return dict((line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]))
                for line in body.decode().splitlines())


def check_spans(srv, selector="{}", times=1):
    """Each span and trace answers exactly its samples."""
    ms = PERIOD * times
    got = folded_links(srv, [("span_id", SPAN_SLOW)], selector)
    check(got == {"main;checkout;charge_card": 9 * ms}, "span slow: %r" % got)
    got = folded_links(srv, [("span_id", SPAN_FAST.upper())], selector)
    check(got == {"main;checkout;render": 4 * ms}, "span fast (upper case): %r" % got)
    both = {"main;checkout;charge_card": 9 * ms, "main;checkout;render": 4 * ms}
    got = folded_links(srv, [("trace_id", TRACE)], selector)
    check(got == both, "trace: %r" % got)
    got = folded_links(srv, [("span_id", SPAN_SLOW + "," + SPAN_FAST)], selector)
    check(got == both, "two spans, comma-separated: %r" % got)
    got = folded_links(srv, [("span_id", SPAN_SLOW), ("span_id", SPAN_FAST)], selector)
    check(got == both, "two spans, repeated: %r" % got)
    got = folded_links(srv, [("span_id", SPAN_SLOW), ("trace_id", OTHER_TRACE)], selector)
    check(got == {"main;checkout;charge_card": 9 * ms, "main;idle_loop": 2 * ms},
          "a span or a trace: %r" % got)
    got = folded_links(srv, [("span_id", "ffffffffffffffff")], selector)
    check(got == {}, "a span nobody sent: %r" % got)
    everything = folded(srv, selector)
    check(everything.get("main;work") == 20 * ms and
          everything.get("main;checkout;charge_card") == 9 * ms, everything)


def series_and_labels(srv):
    names = srv.json("/api/v1/labels?from=0")["names"]
    check("span_id" not in names and "trace_id" not in names, "link labels: %r" % names)
    for n in ("span_id", "trace_id", "thread.name", "thread_name"):
        v = srv.json("/api/v1/labels/%s/values?from=0" % n)["values"]
        check(v == [], "values of %s: %r" % (n, v))
    return srv.metric("ember_profile_store_series"), names


LINKS = 14  # the LINKS section's kind (docs/profile-store-format.md)


def block_files(srv):
    """The store's block files: {name: (version, whether it has a LINKS
    section)} (its rollups, under rollups/, are not blocks)."""
    out = {}
    for path in glob.glob(os.path.join(srv.data, "**", "blocks", "*.pblk"), recursive=True):
        with open(path, "rb") as f:
            head = f.read(64 + 64 * 40)
        n = int.from_bytes(head[12:16], "little")
        kinds = {int.from_bytes(head[64 + 40 * i:68 + 40 * i], "little") for i in range(n)}
        out[os.path.basename(path)] = (int.from_bytes(head[8:12], "little"), LINKS in kinds)
    return out


# ---- pprof: /api/v1/profiles and /ingest -----------------------------------------------


def test_spans__pprof_span_labels_query_by_span_every_format():
    srv = Server()
    srv.push_ok(linked_profile(T0), "service_name=checkout")
    # Pyroscope's /ingest: the same labels, the same links
    st, body, _ = srv.push(linked_profile(T0 + SEC), path="/ingest",
                           labels="name=checkout&format=pprof&from=%d" % (T0 // SEC + 1))
    check(st == 200, "/ingest: %d %r" % (st, body))
    nseries, _ = series_and_labels(srv)
    check(nseries == 1, "series of two pushes of service_name=checkout: %r" % nseries)
    check_spans(srv, times=2)
    # every format answers the span's samples alone
    total = 2 * 9 * PERIOD
    for fmt in ("json", "top", "top-text", "pprof", "svg", "folded"):
        st, body, hdr = by_links(srv, [("span_id", SPAN_SLOW)], fmt=fmt)
        check(st == 200 and hdr["x-ember-total"] == str(total), "%s: %d %r" % (fmt, st, hdr))
        check(hdr["x-ember-profiles"] == "2", "%s: profiles %r" % (fmt, hdr))
    tree = json.loads(by_links(srv, [("span_id", SPAN_SLOW)], fmt="json")[1])
    check(tree["total"] == total, tree)
    # ember query --span-id / --trace-id
    out = subprocess.run([EMBER, "query", "--server", srv.url, "--type", "cpu", "--from", "0",
                          "--format", "folded", "--span-id", SPAN_FAST, "--trace-id",
                          OTHER_TRACE, '{service_name="checkout"}'],
                         capture_output=True, text=True)
    check(out.returncode == 0, "ember query: %r" % out.stderr)
    check(out.stdout == "main;checkout;render %d\nmain;idle_loop %d\n" %
          (2 * 4 * PERIOD, 2 * 2 * PERIOD), "ember query: %r" % out.stdout)
    # refusals name the parameter
    for params, why in (([("span_id", "xyz")], "span_id"),
                        ([("trace_id", SPAN_SLOW)], "trace_id"),
                        ([("span_id", ",".join("%016x" % i for i in range(65)))],
                         "more than 64")):
        st, body, _ = by_links(srv, params)
        check(st == 400 and why.encode() in body, "%r: %d %r" % (params, st, body))


# ---- OTLP: the link table; sample attributes ---------------------------------------------


def otlp_linked_request(svc, time_ns, threads=50):
    """One OTLP profile: the slow span's samples in charge_card, the fast
    one's in render (links 1 and 2 of the link table), unlinked samples in
    work; every sample with its own thread.name and thread.id attributes."""
    r = OtlpRequest(svc)
    d = r.dict
    link = [d.link_table.add(trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(s))
            for s in (SPAN_SLOW, SPAN_FAST)]
    check(len(link) == 2 and len(d.link_table) == 3, "link table")
    main, checkout = r.named("main"), r.named("checkout")
    charge, render, work = r.named("charge_card"), r.named("render"), r.named("work")
    st_charge = r.stack([charge, checkout, main])
    st_render = r.stack([render, checkout, main])
    st_work = r.stack([work, main])
    p = r.profile("otel-checkout", time_ns)
    for i in range(threads):
        a = d.attribute_table.add(key_strindex=r.s("thread.name"))
        a.value.string_value = "worker-%d" % i
        b = d.attribute_table.add(key_strindex=r.s("thread.id"))
        b.value.int_value = 1000 + i
        attrs = [len(d.attribute_table) - 2, len(d.attribute_table) - 1]
        stack, li, n = ((st_charge, 1, 3) if i % 3 == 0 else (st_render, 2, 1) if i % 3 == 1
                        else (st_work, 0, 2))
        p.samples.add(stack_index=stack, link_index=li, attribute_indices=attrs, values=[n])
    return r


def test_spans__otlp_links_query_by_span_thread_names_make_no_series():
    svc, _ = otlp_stubs()
    srv = Server()
    r = otlp_linked_request(svc, T0, threads=50)
    st, body, _ = otlp_post(srv, r.encode())
    check(st == 200, "OTLP: %d %r" % (st, body[:300]))
    nseries, names = series_and_labels(srv)
    check(nseries == 1, "series of one resource with 50 thread names: %r" % nseries)
    check(not [n for n in names if n.startswith("thread")], names)
    typ = [t["id"] for t in srv.json("/api/v1/profile-types?from=0")["types"]]
    check(len(typ) == 1, typ)
    sel = '{service_name="otel-checkout"}'
    # 17 samples of 3 in charge_card (i % 3 == 0), 17 of 1 in render
    st, body, hdr = srv.request("GET", "/api/v1/query?type=%s&from=0&format=folded&span_id=%s"
                                "&query=%s" % (q(typ[0]), SPAN_SLOW, q(sel)))
    check(st == 200 and body.decode() == "main;checkout;charge_card 51\n", (st, body))
    st, body, _ = srv.request("GET", "/api/v1/query?type=%s&from=0&format=folded&trace_id=%s"
                              "&query=%s" % (q(typ[0]), TRACE, q(sel)))
    check(body.decode() == "main;checkout;charge_card 51\nmain;checkout;render 17\n", body)
    st, body, _ = srv.request("GET", "/api/v1/query?type=%s&from=0&format=folded&query=%s" %
                              (q(typ[0]), q(sel)))
    check("main;work 32\n" in body.decode(), body)


def test_spans__thousand_spans_add_no_series():
    srv = Server()
    spans = {"%016x" % (0x1000 + i): 1 + i % 3 for i in range(1000)}
    srv.push_ok(linked_profile(T0, spans), "service_name=busy")
    nseries, _ = series_and_labels(srv)
    check(nseries == 1, "a thousand spans made %r series" % nseries)
    check(srv.metric("ember_profile_unbounded_labels", default=0) == 0,
          "a span reported as an unbounded label")
    one = "%016x" % (0x1000 + 500)
    got = folded_links(srv, [("span_id", one)])
    check(got == {"main;spin": spans[one] * PERIOD}, "span %s: %r" % (one, got))
    got = folded_links(srv, [("trace_id", TRACE)])
    check(got["main;spin"] == sum(spans.values()) * PERIOD, got)


# ---- restart, blocks, merge --------------------------------------------------------------


def test_spans__links_survive_restart_blocks_and_merge():
    """Links read back from the log after a restart, then from a block
    (version 3 with its LINKS section; a block without links has none),
    then from the merge of two blocks of a closed partition, and after a
    restart again."""
    old = (NOW_S - 3 * 3600) * SEC  # a closed partition: its blocks merge
    args = ["--max-profile-age", "0", "--profile-head-age", "600s"]
    srv = Server(args)
    srv.push_ok(linked_profile(old), "service_name=checkout")
    srv.stop(signal.SIGKILL)
    srv.start()  # from the log
    check(block_files(srv) == {}, "a block before the head's age: %r" % block_files(srv))
    check_spans(srv, '{service_name="checkout"}')
    srv.stop()
    srv = Server(["--max-profile-age", "0", "--profile-head-age", "1s"], data=srv.data)
    wait_for(lambda: srv.metric("ember_profile_store_blocks") == 1, "a block", 60)
    first = block_files(srv)
    check(list(first.values()) == [(3, True)], "the linked block: %r" % first)
    check_spans(srv, '{service_name="checkout"}')
    # a profile without links: its block has no LINKS ...
    p = Profile(time_ns=old + SEC, duration_ns=10 * SEC)
    p.sample(["main", "work"], [5, 5 * PERIOD])
    srv.push_ok(p.encode(gzip=True), "service_name=plain")
    # ... and merged with the linked one into one block with LINKS
    wait_for(lambda: len(block_files(srv)) == 1 and not set(first) & set(block_files(srv)) and
             folded(srv, '{service_name="plain"}'), "the two blocks merged", 90)
    check(list(block_files(srv).values()) == [(3, True)], "merged: %r" % block_files(srv))
    check_spans(srv, '{service_name="checkout"}')
    check(folded_links(srv, [("span_id", SPAN_SLOW)], '{service_name="plain"}') == {},
          "a profile without links answered a span")
    srv.stop()
    srv.start()
    check_spans(srv, '{service_name="checkout"}')
    check(folded(srv, '{service_name="plain"}') == {"main;work": 5 * PERIOD}, "plain lost")


if __name__ == "__main__":
    run_case("test_spans__", globals())
