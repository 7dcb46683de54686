#!/usr/bin/env python3
"""A query's memory and its client (issue 27, docs/http-api.md "Query",
docs/profile-store.md "Queries"): what a merge holds (its sums, its
result) is taken from the request's share of the server's memory, so
a query whose merged result is past its tenant's max_query_bytes is
refused 413 even when its answer is small (a top-1 table), while a small
query under the same limit answers and the server stays up, and a view's
copy of the merge counts as the merge does; a query
whose client goes away stops merging, counted in
ember_requests_stopped_total, well before the query would have ended.
Usage: test_query_budget.py EMBER FIXTURES_DIR CASE."""
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import check, cpu_profile, wait_for  # noqa: E402
from profiles_test import NOW_S, SEC, Server, config_file, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour


def wide(n, tag, depth=6):
    """n distinct stacks, each of its own depth functions."""
    return {";".join("%s_%d_%d" % (tag, i, d) for d in range(depth)): 1 + i % 7
            for i in range(n)}


def status(srv, path):
    st, body, hdr = srv.request("GET", path, timeout=120)
    return st, body, hdr


def test_query_budget__merge_past_max_query_bytes_is_413():
    lf = config_file("limits", "default max_query_bytes=1M\n")
    srv = Server(["--limits", lf])
    for i in range(4):
        srv.push_ok(cpu_profile(wide(2000, "w%d" % i), T0 + i * SEC).encode(),
                    "service_name=wide")
    srv.push_ok(cpu_profile({"main;small": 3}, T0).encode(), "service_name=small")
    path = "/api/v1/query?type=cpu&from=now-1h&format=top&limit=1&query="
    # the answer, one row, is small; the merge of 8,000 stacks is not
    st, body, _ = status(srv, path + q('{service_name="wide"}'))
    check(st == 413 and b"memory" in body, "wide: HTTP %d %r" % (st, body[:300]))
    st, body, _ = status(srv, path + q('{service_name="small"}'))
    check(st == 200 and b"small" in body, "small: HTTP %d %r" % (st, body[:300]))
    # the server is up, and the same wide query answers without the limit
    srv.stop()
    srv = Server(data=srv.data)
    st, body, _ = status(srv, path + q('{service_name="wide"}'))
    check(st == 200, "wide without a limit: HTTP %d %r" % (st, body[:300]))


def test_query_budget__view_copy_counted_like_the_merge():
    """A view (hide=, through=, sandwich=) is a rewritten copy of the
    merge: its bytes count against the request's share too, so a limit
    the merge of 4,000 stacks fits (about 4.5 MB held) refuses the same
    query with a view that keeps every stack (about twice that), and the
    server stays up."""
    lf = config_file("limits", "default max_query_bytes=7M\n")
    srv = Server(["--limits", lf])
    srv.push_ok(cpu_profile(wide(4000, "v"), T0).encode(), "service_name=wide")
    path = "/api/v1/query?type=cpu&from=now-1h&format=top&limit=1&query=" + q('{service_name="wide"}')
    st, body, _ = status(srv, path)
    check(st == 200 and b"v_" in body, "the merge alone: HTTP %d %r" % (st, body[:300]))
    st, body, _ = status(srv, path + "&hide=" + q("no_such_frame"))
    check(st == 413 and b"memory" in body, "with a view: HTTP %d %r" % (st, body[:300]))
    st, body, _ = status(srv, path)
    check(st == 200, "after: HTTP %d %r" % (st, body[:300]))


def test_query_budget__client_gone_stops_the_merge():
    srv = Server()
    for i in range(24):  # 108,000 distinct stacks of six frames: seconds to merge
        srv.push_ok(cpu_profile(wide(3000, "p%d" % (i % 6)), T0 + i * SEC).encode(),
                    "service_name=big&pod=p%d" % i)
    path = "/api/v1/query?type=cpu&from=now-1h&format=top&limit=1"
    t0 = time.time()
    st, body, _ = status(srv, path)
    full = time.time() - t0
    check(st == 200, "the whole query: HTTP %d %r" % (st, body[:300]))
    metric = 'ember_requests_stopped_total{reason="client_gone"}'
    t1 = time.time()
    c = socket.create_connection(("127.0.0.1", srv.port))
    c.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    time.sleep(min(0.1, full / 4))
    c.close()
    gone = time.time()
    wait_for(lambda: srv.metric(metric) == 1, "the merge of a query whose client went away "
             "stopped", timeout=30)
    stopped = time.time() - gone
    print("query: %.0f ms whole; its client gone after %.0f ms, stopped %.0f ms later"
          % (1e3 * full, 1e3 * (gone - t1), 1e3 * stopped))
    check(stopped < full, "stopped %.0f ms after the client went, the query takes %.0f ms"
          % (1e3 * stopped, 1e3 * full))
    st, _, _ = status(srv, path)
    check(st == 200, "after: HTTP %d" % st)


run_case("test_query_budget__", globals())
