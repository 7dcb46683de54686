#!/usr/bin/env python3
"""The query parameters of the profile read routes over HTTP (issue 28):
an unknown one refused 400 with its name on Ember's routes, tolerated on
Pyroscope's (Grafana sends its own there).

    test_query_params.py EMBER FIXTURES_DIR CASE      (CASE: test_query_params__*)

Each case starts its own real `ember serve` on a free loopback port
(tests/profiles/profiles_test.py).
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import check, cpu_profile  # noqa: E402
from profiles_test import NOW_S, SEC, Server, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour


def refused(srv, path, name):
    st, body, _ = srv.request("GET", path)
    check(st == 400 and body.decode().startswith("%s: unknown parameter; this route takes"
                                                 % name), "%s: HTTP %d %r" % (path, st, body))
    return body.decode()


def test_query_params__unknown_parameter_refused_with_its_name():
    srv = Server()
    srv.push_ok(cpu_profile({"main;hot": 5}, T0).encode(gzip=True), "service_name=a&version=1")
    srv.push_ok(cpu_profile({"main;cold": 5}, T0).encode(gzip=True), "service_name=a&version=2")
    # the case: base= and new= for base_query= and new_query= diffed the
    # whole store against itself
    why = refused(srv, "/api/v1/diff?type=cpu&base=%s&new=%s" % (q('{version="1"}'),
                                                                  q('{version="2"}')), "base")
    check("base_query" in why and "new_query" in why, why)
    for path, name in (("/api/v1/query?type=cpu&qeury=%7B%7D", "qeury"),
                       ("/api/v1/query?type=cpu&format=folded&step=10s", "step"),
                       ("/api/v1/labels?type=cpu&limit=3", "limit"),
                       ("/api/v1/labels/service_name/values?selector=x", "selector"),
                       ("/api/v1/profile-types?tenant=b", "tenant"),
                       ("/api/v1/series?type=cpu&groupBy=version", "groupBy"),
                       ("/api/v1/coverage?type=cpu&max_nodes=3", "max_nodes")):
        refused(srv, path, name)
    # every name each route documents is taken
    for path in ("/api/v1/query?type=cpu&query=%7B%7D&from=now-1h&to=now&format=pprof&limit=5"
                 "&title=t&width=300&icicle=1&max_nodes=10&focus=main",
                 "/api/v1/query?type=cpu&until=now&span_id=0102030405060708",
                 "/api/v1/diff?type=cpu&base_query=%7B%7D&new_query=%7B%7D&base_from=now-1h"
                 "&base_to=now&new_from=now-1h&new_until=now&format=table&limit=3&title=t"
                 "&normalize=1&min_abs_pct=1&min_rel=0.5&min_z=2&base_focus=main&new_focus=main",
                 "/api/v1/diff?type=cpu&leftQuery=%7B%7D&rightQuery=%7B%7D&leftFrom=now-1h"
                 "&leftUntil=now&rightFrom=now-1h&rightUntil=now",
                 "/api/v1/series?type=cpu&group_by=version&step=10s&aggregation=sum&limit=2",
                 "/api/v1/coverage?type=cpu&limit=5",
                 "/api/v1/labels?type=cpu&query=%7B%7D&from=now-1h&to=now",
                 "/api/v1/profile-types?from=now-1h&until=now"):
        st, body, _ = srv.request("GET", path)
        check(st == 200, "%s: HTTP %d %r" % (path, st, body[:300]))
    # Pyroscope's routes take what Grafana and its clients send beside
    body, _ = srv.get("/pyroscope/render?query=%s&from=now-1h&until=now&format=json"
                      "&groupBy=version&aggregation=sum&maxNodes=100&spyName=x"
                      % q('process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="a"}'))
    check(b'"flamebearer"' in body, body[:200])
    body, _ = srv.get("/pyroscope/label-values?label=version&from=now-1h&until=now&extra=1"
                      "&query=" + q('process_cpu:cpu:nanoseconds:cpu:nanoseconds{}'))
    check(b'"1"' in body and b'"2"' in body, body)


if __name__ == "__main__":
    run_case("test_query_params__", globals())
