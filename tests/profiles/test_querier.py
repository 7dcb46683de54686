#!/usr/bin/env python3
"""Pyroscope's query API (querier.v1.QuerierService) over the Connect
unary protocol on plain HTTP: POST /querier.v1.QuerierService/METHOD with
binary protobuf bodies (the project's wire/querier/*.proto through
protoc's Python stubs) or JSON ones (the test_querier__json_* cases:
proto3's JSON mapping, python3-protobuf's json_format the reference of
it), answered from pushed profiles; Connect's error form for what Ember
refuses.  Cases test_querier__*, each a CTest test."""
import gzip
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiles_test import (NOW_S, SEC, TMP, Server, check, folded, proto_stubs,  # noqa: E402
                           q, run_case)
from ember_test import Profile, cpu_profile, skip  # noqa: E402
from test_spans import OTHER_TRACE, SPAN_FAST, SPAN_SLOW, TRACE, linked_profile  # noqa: E402
import packages  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
PATH = "/querier.v1.QuerierService/"
PROTO = {"Content-Type": "application/proto", "Connect-Protocol-Version": "1"}


def stubs():
    proto_stubs("querier")
    import querier_pb2
    import querier_types_pb2
    return querier_pb2, querier_types_pb2


def call(srv, method, body, headers=None):
    h = dict(PROTO)
    h.update(headers or {})
    return srv.request("POST", PATH + method, body, h)


def call_ok(srv, method, msg, reply, headers=None, gz=False):
    body = msg.SerializeToString()
    st, out, hdr = call(srv, method, gzip.compress(body) if gz else body, headers)
    check(st == 200 and hdr.get("content-type") == "application/proto",
          "%s: HTTP %d %s %r" % (method, st, hdr.get("content-type"), out[:300]))
    r = reply()
    r.ParseFromString(out)
    return r


def connect_error(srv, method, body, want_status, want_code, headers=None):
    st, out, hdr = call(srv, method, body, headers)
    check(st == want_status and hdr.get("content-type") == "application/json",
          "%s: HTTP %d %s %r" % (method, st, hdr.get("content-type"), out[:300]))
    err = json.loads(out)
    check(err.get("code") == want_code and err.get("message"), err)
    return err


def pushed():
    srv = Server()
    for v in ("2.3", "2.4"):
        srv.push_ok(cpu_profile({"main;work": 3}, T0).encode(),
                    "service_name=checkout&version=%s" % v)
    srv.push_ok(cpu_profile({"a;b": 1}, T0).encode(), "service_name=cart")
    return srv


def test_querier__profile_types():
    qv1, _ = stubs()
    srv = pushed()
    r = call_ok(srv, "ProfileTypes", qv1.ProfileTypesRequest(start=(T0 // SEC - 60) * 1000,
                                                             end=NOW_S * 1000),
                qv1.ProfileTypesResponse)
    check([t.ID for t in r.profile_types] == [t["id"] for t in
                                              srv.json("/api/v1/profile-types")["types"]], r)
    t = r.profile_types[0]
    check((t.ID, t.name, t.sample_type, t.sample_unit, t.period_type, t.period_unit) ==
          ("process_cpu:cpu:nanoseconds:cpu:nanoseconds", "process_cpu", "cpu", "nanoseconds",
           "cpu", "nanoseconds"), t)


def test_querier__label_names_hide_double_underscore():
    _, tv1 = stubs()
    srv = pushed()
    r = call_ok(srv, "LabelNames", tv1.LabelNamesRequest(), tv1.LabelNamesResponse)
    check(list(r.names) == ["service_name", "version"], r.names)
    r = call_ok(srv, "LabelNames", tv1.LabelNamesRequest(matchers=['{service_name="cart"}']),
                tv1.LabelNamesResponse)
    check(list(r.names) == ["service_name"], r.names)


def test_querier__label_values_gzip():
    _, tv1 = stubs()
    srv = pushed()
    req = tv1.LabelValuesRequest(name="version", matchers=['{service_name="checkout"}'],
                                 start=(T0 // SEC - 60) * 1000, end=NOW_S * 1000)
    r = call_ok(srv, "LabelValues", req, tv1.LabelValuesResponse,
                headers={"Content-Encoding": "gzip"}, gz=True)
    check(list(r.names) == ["2.3", "2.4"], r.names)


def label_sets(r):
    return [[(p.name, p.value) for p in s.labels] for s in r.labels_set]


def test_querier__series_label_sets():
    qv1, _ = stubs()
    srv = pushed()
    r = call_ok(srv, "Series", qv1.SeriesRequest(), qv1.SeriesResponse)
    sets = [[p for p in s if not p[0].startswith("__")] for s in label_sets(r)]
    check(sets == [[("service_name", "cart")],
                   [("service_name", "checkout"), ("version", "2.3")],
                   [("service_name", "checkout"), ("version", "2.4")]], label_sets(r))
    req = qv1.SeriesRequest(matchers=['{service_name="checkout"}'], label_names=["version"],
                            start=(T0 // SEC - 60) * 1000, end=NOW_S * 1000)
    r = call_ok(srv, "Series", req, qv1.SeriesResponse)
    check(label_sets(r) == [[("version", "2.3")], [("version", "2.4")]], label_sets(r))


def test_querier__series_label_names_unique():
    qv1, _ = stubs()
    srv = pushed()
    r = call_ok(srv, "Series", qv1.SeriesRequest(label_names=["service_name", "nope"]),
                qv1.SeriesResponse, headers={"Content-Encoding": "gzip"}, gz=True)
    check(label_sets(r) == [[("service_name", "cart")], [("service_name", "checkout")]],
          label_sets(r))
    r = call_ok(srv, "Series", qv1.SeriesRequest(label_names=["nope"]), qv1.SeriesResponse)
    check(label_sets(r) == [], label_sets(r))
    connect_error(srv, "Series", qv1.SeriesRequest(matchers=["{a="]).SerializeToString(),
                  400, "invalid_argument")


def test_querier__errors_in_connect_form():
    _, tv1 = stubs()
    srv = pushed()
    connect_error(srv, "LabelValues", b"\xff\xff\xff", 400, "invalid_argument")
    connect_error(srv, "LabelValues", tv1.LabelValuesRequest().SerializeToString(), 400,
                  "invalid_argument")
    bad = tv1.LabelNamesRequest(matchers=["{service_name="]).SerializeToString()
    connect_error(srv, "LabelNames", bad, 400, "invalid_argument")
    connect_error(srv, "SelectHeatmap", b"", 501, "unimplemented")
    connect_error(srv, "NoSuchMethod", b"", 501, "unimplemented")
    connect_error(srv, "LabelNames", b"{}", 501, "unimplemented",
                  headers={"Content-Type": "text/plain"})
    connect_error(srv, "LabelNames", b"x", 400, "invalid_argument",
                  headers={"Content-Encoding": "gzip"})


def test_querier__head_refusal_after_big_body():
    """A call its headers refuse, with a body of 12 MiB: the Connect error,
    answered once the body is read (before, the connection closed while
    the client still sent it: a broken pipe, no answer)."""
    _, tv1 = stubs()
    srv = pushed()
    big = tv1.LabelNamesRequest(matchers=['{a="%s"}' % ("x" * (12 << 20))])
    big = big.SerializeToString()
    for _ in range(5):
        connect_error(srv, "LabelNames", big, 400, "invalid_argument",
                      headers={"Connect-Protocol-Version": "2"})
        connect_error(srv, "LabelNames", big, 501, "unimplemented",
                      headers={"Content-Encoding": "br"})
        connect_error(srv, "LabelNames", big, 501, "unimplemented",
                      headers={"Content-Type": "text/plain"})


# ---- several matchers: their union ---------------------------------------------------

def several_pushed():
    """checkout 2.3 (region eu), checkout 2.4, cart (zone a), db (tier x)."""
    srv = Server()
    for labels in ("service_name=checkout&version=2.3&region=eu",
                   "service_name=checkout&version=2.4", "service_name=cart&zone=a",
                   "service_name=db&tier=x"):
        srv.push_ok(cpu_profile({"main;work": 1}, T0).encode(), labels)
    return srv


# the union of cart and version 2.3; then two that overlap (checkout's 2.4 twice)
UNION = ['{service_name="cart"}', '{version="2.3"}']
OVERLAP = ['{service_name="checkout"}', '{version="2.4"}']


def test_querier__several_matchers_label_names():
    _, tv1 = stubs()
    srv = several_pushed()
    for matchers, want in ((UNION, ["region", "service_name", "version", "zone"]),
                           (OVERLAP, ["region", "service_name", "version"]),
                           ([], ["region", "service_name", "tier", "version", "zone"])):
        r = call_ok(srv, "LabelNames", tv1.LabelNamesRequest(matchers=matchers),
                    tv1.LabelNamesResponse)
        check(list(r.names) == want, (matchers, r.names))
    bad = tv1.LabelNamesRequest(matchers=UNION + ["{a="]).SerializeToString()
    connect_error(srv, "LabelNames", bad, 400, "invalid_argument")


def test_querier__several_matchers_label_values():
    _, tv1 = stubs()
    srv = several_pushed()
    for name, matchers, want in (("service_name", UNION, ["cart", "checkout"]),
                                 ("version", OVERLAP, ["2.3", "2.4"]),
                                 ("version", UNION, ["2.3"]),
                                 ("zone", OVERLAP, [])):
        r = call_ok(srv, "LabelValues", tv1.LabelValuesRequest(name=name, matchers=matchers),
                    tv1.LabelValuesResponse)
        check(list(r.names) == want, (name, matchers, r.names))


def test_querier__several_matchers_series():
    qv1, _ = stubs()
    srv = several_pushed()
    names = ["service_name", "version"]
    for matchers, want in (
            (UNION, [[("service_name", "cart")],
                     [("service_name", "checkout"), ("version", "2.3")]]),
            (OVERLAP, [[("service_name", "checkout"), ("version", "2.3")],
                       [("service_name", "checkout"), ("version", "2.4")]]),
            (OVERLAP + ['{service_name="cart"}'],
             [[("service_name", "cart")], [("service_name", "checkout"), ("version", "2.3")],
              [("service_name", "checkout"), ("version", "2.4")]])):
        r = call_ok(srv, "Series", qv1.SeriesRequest(matchers=matchers, label_names=names),
                    qv1.SeriesResponse)
        check(label_sets(r) == want, (matchers, label_sets(r)))
    r = call_ok(srv, "Series", qv1.SeriesRequest(matchers=["{tier=\"x\"}", UNION[0]],
                                                 label_names=["service_name"]),
                qv1.SeriesResponse)
    check(label_sets(r) == [[("service_name", "cart")], [("service_name", "db")]],
          label_sets(r))


def test_querier__several_matchers_capped():
    """64 matchers are read (each a query); 65 are refused, naming the cap."""
    qv1, tv1 = stubs()
    srv = several_pushed()
    ok64 = ['{service_name="cart"}'] * 63 + ['{tier="x"}']
    r = call_ok(srv, "LabelValues", tv1.LabelValuesRequest(name="service_name", matchers=ok64),
                tv1.LabelValuesResponse)
    check(list(r.names) == ["cart", "db"], r.names)
    many = ok64 + ['{version="2.3"}']
    for method, req in (("LabelNames", tv1.LabelNamesRequest(matchers=many)),
                        ("LabelValues", tv1.LabelValuesRequest(name="zone", matchers=many)),
                        ("Series", qv1.SeriesRequest(matchers=many))):
        body = connect_error(srv, method, req.SerializeToString(), 400, "invalid_argument")
        check("at most 64 matchers" in body["message"], body)


CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
PERIOD = 10_000_000
PPROF_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"


def range_ms():
    return (T0 // SEC - 60) * 1000, NOW_S * 1000


def flame_stacks(fg):
    """The flame graph's levels decoded: {"a;b": self} of every node with
    self, and the number of nodes (the root counted)."""
    parents = []  # the previous level's nodes: (x, total, path)
    stacks = {}
    nodes = 0
    for level in fg.levels:
        v = list(level.values)
        check(len(v) % 4 == 0, v)
        x, cur = 0, []
        for i in range(0, len(v), 4):
            x += v[i]
            total, self_, name = v[i + 1], v[i + 2], fg.names[v[i + 3]]
            parent = [p for p in parents if p[0] <= x and x + total <= p[0] + p[1]]
            check(len(parent) == 1 or not parents, (x, total, parents))
            path = parent[0][2] + [name] if parents else []
            if self_ and path:
                stacks[";".join(path)] = self_
            cur.append((x, total, path))
            x += total
            nodes += 1
        parents = cur
    return stacks, nodes


def select_stacktraces(srv, selector="{}", max_nodes=0):
    qv1, _ = stubs()
    start, end = range_ms()
    req = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector=selector,
                                            start=start, end=end)
    if max_nodes:
        req.max_nodes = max_nodes
    return call_ok(srv, "SelectMergeStacktraces", req,
                   qv1.SelectMergeStacktracesResponse).flamegraph


def test_querier__select_merge_stacktraces_levels():
    srv = pushed()
    fg = select_stacktraces(srv)
    stacks, _ = flame_stacks(fg)
    check(stacks == {"main;work": 6 * PERIOD, "a;b": PERIOD}, stacks)
    check(stacks == folded(srv), (stacks, folded(srv)))
    check(fg.names[0] == "total" and fg.total == 7 * PERIOD and fg.max_self == 6 * PERIOD, fg)
    check(list(fg.levels[0].values) == [0, 7 * PERIOD, 0, 0], fg.levels[0])
    fg = select_stacktraces(srv, '{service_name="cart"}')
    check(flame_stacks(fg)[0] == {"a;b": PERIOD} and fg.total == PERIOD, fg)


def test_querier__select_merge_stacktraces_max_nodes_folds():
    srv = Server()
    stacks = {"main;f%02d" % i: i + 1 for i in range(20)}
    srv.push_ok(cpu_profile(stacks, T0).encode(), "service_name=many")
    fg = select_stacktraces(srv, max_nodes=5)
    got, nodes = flame_stacks(fg)
    check(fg.total == sum(stacks.values()) * PERIOD, fg.total)
    check(fg.levels[0].values[1] == fg.total, fg.levels[0])
    check(sum(got.values()) == fg.total and "main;other" in got, got)
    kept = dict((k, v) for k, v in got.items() if k != "main;other")
    check(kept == {"main;f%02d" % i: (i + 1) * PERIOD for i in range(16, 20)}, kept)
    check(nodes == 1 + 1 + 4 + 1, nodes)  # total, main, four kept, other
    check(flame_stacks(select_stacktraces(srv))[1] == 22, "default max_nodes folds nothing")


def test_querier__select_merge_stacktraces_errors():
    qv1, _ = stubs()
    srv = pushed()
    start, end = range_ms()
    connect_error(srv, "SelectMergeStacktraces",
                  qv1.SelectMergeStacktracesRequest(label_selector="{}").SerializeToString(),
                  400, "invalid_argument")
    bad = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector="{x=",
                                            start=start, end=end)
    connect_error(srv, "SelectMergeStacktraces", bad.SerializeToString(), 400,
                  "invalid_argument")
    dot = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector="{}",
                                            start=start, end=end, format=3)
    connect_error(srv, "SelectMergeStacktraces", dot.SerializeToString(), 501, "unimplemented")


def pprof_stubs():
    """pprof's own profile.proto (Debian's golang-github-google-pprof-dev)
    as a Python module."""
    if not os.path.exists(PPROF_PROTO):
        skip(packages.missing(PPROF_PROTO, PPROF_PROTO + " not found"))
    proto_stubs("querier")  # checks protoc and google.protobuf
    out = os.path.join(TMP, "pprof_py")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["protoc", "--proto_path=" + os.path.dirname(PPROF_PROTO),
                    "--python_out=" + out, PPROF_PROTO], check=True)
    sys.path.insert(0, out)
    import profile_pb2
    return profile_pb2


def pprof_stacks(p, sample_type):
    """{"root;...;leaf": value of sample_type} of pprof message p, inline
    frames included."""
    s = p.string_table
    k = [s[t.type] for t in p.sample_type].index(sample_type)
    fn = dict((f.id, s[f.name]) for f in p.function)
    loc = dict((lc.id, [fn[ln.function_id] for ln in lc.line]) for lc in p.location)
    out = {}
    for smp in p.sample:
        names = [n for lid in smp.location_id for n in loc[lid]]
        key = ";".join(reversed(names))
        out[key] = out.get(key, 0) + smp.value[k]
    return out


def test_querier__select_merge_profile_pprof():
    qv1, _ = stubs()
    pb = pprof_stubs()
    srv = pushed()
    start, end = range_ms()
    for sel, want in (("{}", 7), ('{service_name="checkout"}', 6)):
        req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector=sel,
                                            start=start, end=end)
        p = call_ok(srv, "SelectMergeProfile", req, pb.Profile)
        got = pprof_stacks(p, "cpu")
        check(got == folded(srv, sel), (got, folded(srv, sel)))
        check(sum(got.values()) == want * PERIOD, got)
    connect_error(srv, "SelectMergeProfile", b"\xff\xff", 400, "invalid_argument")


def test_querier__select_merge_profile_max_nodes():
    """max_nodes 4 of main;a;x 8, main;a;y 1, main;b 4, main;c;d 2, z 1
    (tree totals main 16 - 1 = 15, a 9, x 8, b 4, then 2, 2, 1, 1): the
    frames below b's 4 become one "other" per stack, equal stacks merge,
    the total stays; GET /api/v1/query's max_nodes gives the same pprof;
    absent or 0, the whole profile."""
    qv1, _ = stubs()
    pb = pprof_stubs()
    srv = Server()
    stacks = {"main;a;x": 8, "main;a;y": 1, "main;b": 4, "main;c;d": 2, "z": 1}
    srv.push_ok(cpu_profile(stacks, T0).encode(), "service_name=cut")
    start, end = range_ms()
    want = {"main;a;x": 8, "main;a;other": 1, "main;b": 4, "main;other": 2, "other": 1}
    want = dict((k, v * PERIOD) for k, v in want.items())
    req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector="{}",
                                        start=start, end=end, max_nodes=4)
    p = call_ok(srv, "SelectMergeProfile", req, pb.Profile)
    got = pprof_stacks(p, "cpu")
    check(got == want, got)
    names = sorted(set(p.string_table[f.name] for f in p.function))
    check(names == ["a", "b", "main", "other", "x"], names)
    check(sum(got.values()) == sum(folded(srv).values()) == 16 * PERIOD, got)
    body, _ = srv.get("/api/v1/query?type=cpu&from=0&format=pprof&max_nodes=4&query=%7B%7D")
    route = pb.Profile()
    route.ParseFromString(gzip.decompress(body))
    check(pprof_stacks(route, "cpu") == got, pprof_stacks(route, "cpu"))
    for n in (0, None):
        req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector="{}",
                                            start=start, end=end)
        if n is not None:
            req.max_nodes = n
        whole = pprof_stacks(call_ok(srv, "SelectMergeProfile", req, pb.Profile), "cpu")
        check(whole == folded(srv), (n, whole))
    for bad in ("format=folded&max_nodes=4", "format=pprof&max_nodes=x"):
        st, out, _ = srv.request("GET", "/api/v1/query?type=cpu&from=0&" + bad)
        check(st == 400 and b"max_nodes" in out, (bad, st, out))


# ---- SelectSeries ------------------------------------------------------------------

START_MS = (T0 // SEC - 60) * 1000  # a whole second: the grid's first point
STEP_S = 20


def series_pushed():
    """checkout 2.3: 3 samples at +5 s, 2 at +25 s; checkout 2.4: 4 at
    +15 s; cart: 1 at +25 s (from START_MS)."""
    srv = Server()
    for stacks, at, labels in (({"main;work": 3}, 5, "service_name=checkout&version=2.3"),
                               ({"main;work": 2}, 25, "service_name=checkout&version=2.3"),
                               ({"main;work": 4}, 15, "service_name=checkout&version=2.4"),
                               ({"a;b": 1}, 25, "service_name=cart")):
        srv.push_ok(cpu_profile(stacks, (START_MS + at * 1000) * 1000000).encode(), labels)
    return srv


def select_series(srv, **kw):
    qv1, _ = stubs()
    req = qv1.SelectSeriesRequest(profile_typeID=CPU, label_selector="{}", start=START_MS,
                                  end=START_MS + 120_000, step=STEP_S)
    for k, v in kw.items():
        if k == "group_by":
            req.group_by.extend(v)
        else:
            setattr(req, k, v)
    return call_ok(srv, "SelectSeries", req, qv1.SelectSeriesResponse).series


def series_points(series):
    """[(labels, [(ms, value), ..]), ..] of a SelectSeriesResponse."""
    return [([(p.name, p.value) for p in s.labels], [(p.timestamp, p.value) for p in s.points])
            for s in series]


def test_querier__select_series_sum_equals_series_route():
    srv = series_pushed()
    got = series_points(select_series(srv))
    t0, t1 = START_MS, START_MS + STEP_S * 1000
    check(got == [([], [(t0, 7.0 * PERIOD), (t1, 3.0 * PERIOD)])], got)
    route = srv.json("/api/v1/series?type=cpu&from=%d&to=%d&step=%ds" %
                     (START_MS // 1000, START_MS // 1000 + 120, STEP_S))
    values = route["series"][0]["values"]
    check(route["from_ms"] == START_MS and route["step_ms"] == STEP_S * 1000, route)
    check([(START_MS + i * STEP_S * 1000, float(v)) for i, v in enumerate(values) if v] ==
          got[0][1], (values, got))


def test_querier__select_series_group_by_average_limit():
    srv = series_pushed()
    t0, t1 = START_MS, START_MS + STEP_S * 1000
    got = series_points(select_series(srv, group_by=["service_name"]))
    check(sorted(got) == [([("service_name", "cart")], [(t1, 1.0 * PERIOD)]),
                          ([("service_name", "checkout")],
                           [(t0, 7.0 * PERIOD), (t1, 2.0 * PERIOD)])], got)
    got = series_points(select_series(srv, group_by=["service_name"], aggregation=1))
    check(sorted(got) == [([("service_name", "cart")], [(t1, 1.0 * PERIOD)]),
                          ([("service_name", "checkout")],
                           [(t0, 3.5 * PERIOD), (t1, 2.0 * PERIOD)])], got)
    got = series_points(select_series(srv, group_by=["version"]))
    check(sorted(got) == [([], [(t1, 1.0 * PERIOD)]),  # cart: no version, no pair
                          ([("version", "2.3")], [(t0, 3.0 * PERIOD), (t1, 2.0 * PERIOD)]),
                          ([("version", "2.4")], [(t0, 4.0 * PERIOD)])], got)
    got = series_points(select_series(srv, group_by=["version"], limit=1))
    check(got == [([("version", "2.3")], [(t0, 3.0 * PERIOD), (t1, 2.0 * PERIOD)])], got)
    got = series_points(select_series(srv, group_by=["version"], limit=2))
    check([g[0] for g in got] == [[("version", "2.3")], [("version", "2.4")]], got)
    route = srv.json("/api/v1/series?type=cpu&from=%d&to=%d&step=%ds&group_by=version"
                     "&limit=1&aggregation=average" % (START_MS // 1000,
                                                       START_MS // 1000 + 120, STEP_S))
    check([(s["labels"], s["values"][:2]) for s in route["series"]] ==
          [({"version": "2.3"}, [3.0 * PERIOD, 2.0 * PERIOD])], route)


def test_querier__select_series_errors():
    qv1, _ = stubs()
    srv = series_pushed()
    base = dict(profile_typeID=CPU, label_selector="{}", start=START_MS,
                end=START_MS + 120_000)
    # step=0.001 over two minutes: 120,000 points, past the grid's bound of 11,000
    for bad in (dict(step=0), dict(step=0.0001), dict(step=-1), dict(step=10, aggregation=7),
                dict(step=10, limit=-1), dict(step=0.001)):
        req = qv1.SelectSeriesRequest(**dict(base, **bad))
        connect_error(srv, "SelectSeries", req.SerializeToString(), 400, "invalid_argument")
    st, body, _ = srv.request("GET", "/api/v1/series?type=cpu&aggregation=median")
    check(st == 400, (st, body))


# ---- span links: SelectMergeSpanProfile, span_selector, trace_id_selector ------------

def span_select(srv, method, **kw):
    qv1, _ = stubs()
    start, end = range_ms()
    msg = {"SelectMergeSpanProfile": qv1.SelectMergeSpanProfileRequest,
           "SelectMergeStacktraces": qv1.SelectMergeStacktracesRequest}[method]
    req = msg(profile_typeID=CPU, label_selector="{}", start=start, end=end)
    for k, v in kw.items():
        getattr(req, k).extend(v)
    reply = {"SelectMergeSpanProfile": qv1.SelectMergeSpanProfileResponse,
             "SelectMergeStacktraces": qv1.SelectMergeStacktracesResponse}[method]
    return flame_stacks(call_ok(srv, method, req, reply).flamegraph)[0]


def test_querier__span_profile_and_link_selectors():
    qv1, _ = stubs()
    pb = pprof_stubs()
    srv = Server()
    srv.push_ok(linked_profile(T0), "service_name=shop")
    slow, fast = {"main;checkout;charge_card": 9 * PERIOD}, {"main;checkout;render": 4 * PERIOD}
    got = span_select(srv, "SelectMergeSpanProfile", span_selector=[SPAN_SLOW])
    check(got == slow, got)
    got = span_select(srv, "SelectMergeSpanProfile", span_selector=[SPAN_SLOW, SPAN_FAST])
    check(got == dict(slow, **fast), got)
    got = span_select(srv, "SelectMergeStacktraces", span_selector=[SPAN_FAST])
    check(got == fast, got)
    got = span_select(srv, "SelectMergeStacktraces", trace_id_selector=[OTHER_TRACE])
    check(got == {"main;idle_loop": 2 * PERIOD}, got)
    start, end = range_ms()
    req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector="{}", start=start,
                                        end=end, trace_id_selector=[TRACE])
    got = pprof_stacks(call_ok(srv, "SelectMergeProfile", req, pb.Profile), "cpu")
    check(got == dict(slow, **fast), got)
    for method, req in (
            ("SelectMergeSpanProfile", qv1.SelectMergeSpanProfileRequest(
                profile_typeID=CPU, span_selector=["xyz"])),
            ("SelectMergeSpanProfile", qv1.SelectMergeSpanProfileRequest(profile_typeID=CPU)),
            ("SelectMergeStacktraces", qv1.SelectMergeStacktracesRequest(
                profile_typeID=CPU, span_selector=["00f067aa0ba902bz"])),
            ("SelectMergeProfile", qv1.SelectMergeProfileRequest(
                profile_typeID=CPU, trace_id_selector=[SPAN_SLOW]))):
        connect_error(srv, method, req.SerializeToString(), 400, "invalid_argument")


# ---- stack_trace_selector (Ember's focus=) ----------------------------------------

FOCUS_STACKS = {"main;work;inner": 3, "main;work": 2, "main;idle": 4, "other;main;work": 5}


def focus_pushed():
    """FOCUS_STACKS in one profile, and in another main;work;inner 7 where
    work and inner are one location (inner inlined into work): under
    main;work the trees hold main;work 2 and main;work;inner 10."""
    srv = Server()
    srv.push_ok(cpu_profile(FOCUS_STACKS, T0).encode(), "service_name=checkout")
    p = cpu_profile({}, T0)
    inlined = p.raw.location(0, 0x4000, [(p.raw.function("inner", "inner.c"), 12),
                                         (p.raw.function("work", "work.c"), 30)])
    p.locations["work+inner"] = inlined  # a frame of two lines, innermost first
    p.sample(["main", "work+inner"], [7, 7 * PERIOD])
    srv.push_ok(p.encode(), "service_name=checkout")
    return srv


FOCUS_WORK = {"main;work": 2 * PERIOD, "main;work;inner": 10 * PERIOD}


def call_site(*names):
    _, tv1 = stubs()
    return tv1.StackTraceSelector(call_site=[tv1.Location(name=n) for n in names])


def focus_folded(srv, path, selector="{}"):
    """GET /api/v1/query?focus=path as {stack: value}."""
    body, _ = srv.get("/api/v1/query?type=cpu&from=0&format=folded&query=%s&focus=%s" %
                      (q(selector), q(path)))
    return dict((line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]))
                for line in body.decode().splitlines())


def test_querier__stack_trace_selector_select_merge_stacktraces():
    qv1, tv1 = stubs()
    srv = focus_pushed()
    start, end = range_ms()
    for names, want in ((("main", "work"), FOCUS_WORK),
                        (("main", "work", "inner"), {"main;work;inner": 10 * PERIOD}),
                        (("main",), dict(FOCUS_WORK, **{"main;idle": 4 * PERIOD})),
                        (("work",), {}),  # the path starts at the root
                        (("main", "work", "inner", "deeper"), {})):
        req = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector="{}",
                                                start=start, end=end,
                                                stack_trace_selector=call_site(*names))
        fg = call_ok(srv, "SelectMergeStacktraces", req,
                     qv1.SelectMergeStacktracesResponse).flamegraph
        got, _ = flame_stacks(fg)
        check(got == want and fg.total == sum(want.values()), (names, got, fg.total))
        check(got == focus_folded(srv, ";".join(names)), (names, got))
    # an empty one is no filter
    req = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, start=start,
                                            stack_trace_selector=tv1.StackTraceSelector())
    fg = call_ok(srv, "SelectMergeStacktraces", req,
                 qv1.SelectMergeStacktracesResponse).flamegraph
    check(fg.total == 21 * PERIOD, fg.total)


def test_querier__stack_trace_selector_select_merge_profile():
    qv1, _ = stubs()
    pb = pprof_stubs()
    srv = focus_pushed()
    start, end = range_ms()
    for names, want in ((("main", "work"), FOCUS_WORK), (("nothing",), {})):
        req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector="{}",
                                            start=start, end=end,
                                            stack_trace_selector=call_site(*names))
        got = pprof_stacks(call_ok(srv, "SelectMergeProfile", req, pb.Profile), "cpu")
        got = dict((k, v) for k, v in got.items() if v)
        check(got == want, (names, got))
        check(got == focus_folded(srv, ";".join(names)), (names, got))


def test_querier__stack_trace_selector_diff_sides():
    qv1, _ = stubs()
    srv = focus_pushed()
    start, end = range_ms()

    def side(*names):
        return qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector="{}",
                                                 start=start, end=end,
                                                 stack_trace_selector=call_site(*names))
    fg = call_ok(srv, "Diff", qv1.DiffRequest(left=side("main", "work"), right=side("other")),
                 qv1.DiffResponse).flamegraph
    check(fg.leftTicks == 12 * PERIOD and fg.rightTicks == 5 * PERIOD, fg)
    got = diff_stacks(fg)
    check(got == {"main;work": (2 * PERIOD, 0), "main;work;inner": (10 * PERIOD, 0),
                  "other;main;work": (0, 5 * PERIOD)}, got)


def test_querier__stack_trace_selector_series_unimplemented():
    qv1, _ = stubs()
    srv = focus_pushed()
    start, end = range_ms()
    req = qv1.SelectSeriesRequest(profile_typeID=CPU, label_selector="{}", start=start,
                                  end=end, step=15, stack_trace_selector=call_site("main"))
    err = connect_error(srv, "SelectSeries", req.SerializeToString(), 501, "unimplemented")
    check("stack_trace_selector" in err["message"], err)
    req.ClearField("stack_trace_selector")  # none: the totals
    call_ok(srv, "SelectSeries", req, qv1.SelectSeriesResponse)


def test_querier__focus_param_on_query_render_and_diff():
    srv = focus_pushed()
    check(focus_folded(srv, "main;work") == FOCUS_WORK, focus_folded(srv, "main;work"))
    check(focus_folded(srv, "") == folded(srv), "an empty focus is none")
    tree = srv.json("/api/v1/query?type=cpu&from=0&focus=" + q("main;work;inner"))
    check(tree["total"] == 10 * PERIOD, tree)
    render = srv.json("/pyroscope/render?from=0&query=" + q(CPU + "{}") + "&focus=" +
                      q("main;work"))
    check(render["flamebearer"]["numTicks"] == 12 * PERIOD, render["flamebearer"])
    diff = srv.json("/api/v1/diff?format=json&base_from=0&new_from=0&type=cpu&base_focus=" +
                    q("main;idle") + "&new_focus=" + q("main;work"))
    check(diff["base_total"] == 4 * PERIOD and diff["new_total"] == 12 * PERIOD, diff)
    st, body, _ = srv.request("GET", "/api/v1/query?type=cpu&focus=" + q("main;;work"))
    check(st == 400 and b"focus" in body, (st, body))


# ---- Diff ----------------------------------------------------------------------

def diff_stacks(fg):
    """A FlameGraphDiff's levels decoded: {"a;b": (left self, right self)}
    of every node with a self on either side, the left tree's x offsets
    placing each node under its parent."""
    parents, stacks = [], {}
    for level in fg.levels:
        v = list(level.values)
        check(len(v) % 7 == 0, v)
        lx, rx, cur = 0, 0, []
        for i in range(0, len(v), 7):
            lx += v[i]
            rx += v[i + 3]
            lt, ls, rt, rs, name = v[i + 1], v[i + 2], v[i + 4], v[i + 5], fg.names[v[i + 6]]
            parent = [p for p in parents if p[0] <= lx and lx + lt <= p[0] + p[1] and
                      p[2] <= rx and rx + rt <= p[2] + p[3]]
            check(len(parent) >= 1 or not parents, (lx, rx, parents))
            path = parent[-1][4] + [name] if parents else []
            if (ls or rs) and path:
                stacks[";".join(path)] = (ls, rs)
            cur.append((lx, lt, rx, rt, path))
            lx += lt
            rx += rt
        parents = cur
    return stacks


def test_querier__diff_seven_numbers():
    qv1, _ = stubs()
    srv = pushed()
    start, end = range_ms()

    def side(sel):
        return qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector=sel,
                                                 start=start, end=end)
    req = qv1.DiffRequest(left=side('{version="2.3"}'), right=side("{}"))
    fg = call_ok(srv, "Diff", req, qv1.DiffResponse).flamegraph
    check(fg.names[0] == "total" and fg.leftTicks == 3 * PERIOD and
          fg.rightTicks == 7 * PERIOD and fg.total == 10 * PERIOD, fg)
    check(list(fg.levels[0].values) == [0, 3 * PERIOD, 0, 0, 7 * PERIOD, 0, 0], fg.levels[0])
    got = diff_stacks(fg)
    check(got == {"main;work": (3 * PERIOD, 6 * PERIOD), "a;b": (0, PERIOD)}, got)
    bad = qv1.DiffRequest(left=side("{x="), right=side("{}"))
    connect_error(srv, "Diff", bad.SerializeToString(), 400, "invalid_argument")
    connect_error(srv, "Diff", qv1.DiffRequest(left=side("{}")).SerializeToString(), 400,
                  "invalid_argument")


# ---- GetProfileStats -------------------------------------------------------------

def test_querier__profile_stats():
    _, tv1 = stubs()
    srv = Server()
    r = call_ok(srv, "GetProfileStats", tv1.GetProfileStatsRequest(),
                tv1.GetProfileStatsResponse)
    check((r.data_ingested, r.oldest_profile_time, r.newest_profile_time) == (False, 0, 0), r)
    srv.push_ok(cpu_profile({"main;work": 3}, T0 + 1_500_000).encode(), "service_name=a")
    srv.push_ok(cpu_profile({"main;work": 3}, T0 + 61 * SEC).encode(), "service_name=b")
    r = call_ok(srv, "GetProfileStats", tv1.GetProfileStatsRequest(),
                tv1.GetProfileStatsResponse)
    check((r.data_ingested, r.oldest_profile_time, r.newest_profile_time) ==
          (True, T0 // 1000000 + 1, (T0 + 61 * SEC) // 1000000), r)


# ---- __profile_type__ ------------------------------------------------------------

MEM = "memory:alloc_space:bytes:space:bytes"


def typed_pushed():
    srv = pushed()
    p = Profile(types=(("alloc_space", "bytes"),), period=("space", "bytes", 524288),
                time_ns=T0)
    p.sample(["main", "alloc"], [4096])
    srv.push_ok(p.encode(), "service_name=heap")
    return srv


def test_querier__profile_type_matcher_filters():
    qv1, tv1 = stubs()
    srv = typed_pushed()
    for typ, want in ((MEM, ["heap"]), (CPU, ["cart", "checkout"]), ("no:such:type:x:y", [])):
        r = call_ok(srv, "LabelValues", tv1.LabelValuesRequest(
            name="service_name", matchers=['{__profile_type__="%s"}' % typ]),
            tv1.LabelValuesResponse)
        check(list(r.names) == want, (typ, r.names))
    r = call_ok(srv, "LabelNames", tv1.LabelNamesRequest(
        matchers=['{__profile_type__="%s", service_name="cart"}' % CPU]),
        tv1.LabelNamesResponse)
    check(list(r.names) == ["service_name"], r.names)
    r = call_ok(srv, "Series", qv1.SeriesRequest(
        matchers=['{__profile_type__="%s"}' % MEM], label_names=["service_name"]),
        qv1.SeriesResponse)
    check(label_sets(r) == [[("service_name", "heap")]], label_sets(r))
    # the selector's type on a select, where profile_typeID is its own
    start, end = range_ms()
    req = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, start=start, end=end,
                                            label_selector='{__profile_type__="%s"}' % CPU)
    fg = call_ok(srv, "SelectMergeStacktraces", req, qv1.SelectMergeStacktracesResponse)
    check(fg.flamegraph.total == 7 * PERIOD, fg.flamegraph.total)
    for bad in ('{__profile_type__=~"x.*"}', 'cpu{__profile_type__="%s"}' % MEM):
        connect_error(srv, "LabelNames", tv1.LabelNamesRequest(matchers=[bad])
                      .SerializeToString(), 400, "invalid_argument")


def test_querier__series_answers_profile_type():
    qv1, _ = stubs()
    srv = typed_pushed()
    names = ["__profile_type__", "__name__", "service_name"]
    r = call_ok(srv, "Series", qv1.SeriesRequest(
        matchers=['{service_name=~"cart|heap"}'], label_names=names), qv1.SeriesResponse)
    cpu_samples = "process_cpu:samples:count:cpu:nanoseconds"
    check(label_sets(r) == [
        [("__name__", "memory"), ("__profile_type__", MEM), ("service_name", "heap")],
        [("__name__", "process_cpu"), ("__profile_type__", CPU), ("service_name", "cart")],
        [("__name__", "process_cpu"), ("__profile_type__", cpu_samples),
         ("service_name", "cart")]], label_sets(r))
    r = call_ok(srv, "Series", qv1.SeriesRequest(
        matchers=['{__profile_type__="%s", service_name="cart"}' % CPU], label_names=names),
        qv1.SeriesResponse)
    check(label_sets(r) == [[("__name__", "process_cpu"), ("__profile_type__", CPU),
                             ("service_name", "cart")]], label_sets(r))


JSON = {"Content-Type": "application/json"}


def call_json(srv, method, body, headers=None, gz=False):
    """method called with the JSON body (a message, written by json_format,
    or text); the answer's JSON text, checked to be application/json."""
    from google.protobuf import json_format
    if not isinstance(body, (bytes, str)):
        body = json_format.MessageToJson(body)
    body = body.encode() if isinstance(body, str) else body
    h = dict(JSON)
    h.update(headers or {})
    st, out, hdr = call(srv, method, gzip.compress(body) if gz else body, h)
    check(st == 200 and hdr.get("content-type") == "application/json",
          "%s: HTTP %d %s %r" % (method, st, hdr.get("content-type"), out[:300]))
    return out.decode()


def same_as_binary(srv, method, msg, reply):
    """The JSON answer to msg, read by json_format (strict: a field it
    does not know fails), equals the binary answer; the JSON's dict."""
    from google.protobuf import json_format
    text = call_json(srv, method, msg)
    got = json_format.Parse(text, reply())
    want = call_ok(srv, method, msg, reply)
    check(got == want, (method, text[:500], want))
    return json.loads(text)


def test_querier__json_discovery_equals_binary():
    qv1, tv1 = stubs()
    srv = pushed()
    start, end = range_ms()
    d = same_as_binary(srv, "ProfileTypes", qv1.ProfileTypesRequest(start=start, end=end),
                       qv1.ProfileTypesResponse)
    check(d["profileTypes"][0]["ID"] == CPU and d["profileTypes"][0]["sampleType"] == "cpu", d)
    d = same_as_binary(srv, "LabelNames", tv1.LabelNamesRequest(), tv1.LabelNamesResponse)
    check(d == {"names": ["service_name", "version"]}, d)
    same_as_binary(srv, "LabelValues", tv1.LabelValuesRequest(name="version"),
                   tv1.LabelValuesResponse)
    d = same_as_binary(srv, "Series", qv1.SeriesRequest(label_names=["service_name"]),
                       qv1.SeriesResponse)
    check(d["labelsSet"][0] == {"labels": [{"name": "service_name", "value": "cart"}]}, d)


def test_querier__json_requests_both_names_numbers_unknown_gzip():
    qv1, tv1 = stubs()
    srv = pushed()
    start, end = range_ms()
    want = ["2.3", "2.4"]
    for body in ('{"name":"version","matchers":["{service_name=\\"checkout\\"}"],'
                 '"start":%d,"end":"%d"}' % (start, end),
                 '{"name":"version","start":"%d","end":%d,"matchers":null,'
                 '"nope":{"a":[1,{"b":null}]}}' % (start, end)):
        out = call_json(srv, "LabelValues", body)
        check(json.loads(out) == {"names": want}, (body, out))
    out = call_json(srv, "Series", '{"matchers":["{service_name=\\"checkout\\"}"],'
                    '"label_names":["version"]}',
                    headers={"Content-Encoding": "gzip"}, gz=True)
    check(json.loads(out)["labelsSet"] ==
          [{"labels": [{"name": "version", "value": v}]} for v in want], out)
    req = ('{"profile_typeID":"%s","labelSelector":"{}","start":%d,"end":"%d",'
           '"format":"PROFILE_FORMAT_FLAMEGRAPH","max_nodes":"8192"}' % (CPU, start, end))
    fg = json.loads(call_json(srv, "SelectMergeStacktraces", req))["flamegraph"]
    check(fg["total"] == str(7 * PERIOD), fg)


def test_querier__json_refusals():
    srv = pushed()
    err = connect_error(srv, "LabelNames", b'{"matchers":["a",}', 400, "invalid_argument",
                        headers=JSON)
    check("not JSON" in err["message"], err)
    err = connect_error(srv, "LabelValues", b'{"name":"x","start":"soon"}', 400,
                        "invalid_argument", headers=JSON)
    check("start" in err["message"] and "soon" in err["message"], err)
    err = connect_error(srv, "LabelValues", b'[1]', 400, "invalid_argument", headers=JSON)
    check("not a JSON object" in err["message"], err)
    connect_error(srv, "LabelValues", b'{"name":""}', 400, "invalid_argument", headers=JSON)
    err = connect_error(srv, "Series", b'{"label_names":["a"],"labelNames":["b"]}', 400,
                        "invalid_argument", headers=JSON)
    check("labelNames: given twice" in err["message"], err)
    err = connect_error(srv, "LabelNames", b'{"x":' + b"[" * 70, 429, "resource_exhausted",
                        headers=JSON)
    check("nested deeper than 65" in err["message"], err)
    connect_error(srv, "SelectMergeStacktraces", b'{"labelSelector":"{}"}', 400,
                  "invalid_argument", headers=JSON)


def test_querier__json_select_merge_stacktraces_levels():
    qv1, _ = stubs()
    srv = pushed()
    start, end = range_ms()
    req = qv1.SelectMergeStacktracesRequest(profile_typeID=CPU, label_selector="{}",
                                            start=start, end=end)
    d = same_as_binary(srv, "SelectMergeStacktraces", req, qv1.SelectMergeStacktracesResponse)
    fg = d["flamegraph"]
    want = select_stacktraces(srv)
    check(all(isinstance(v, str) for lv in fg["levels"] for v in lv.get("values", [])), fg)
    check([[int(v) for v in lv.get("values", [])] for lv in fg["levels"]] ==
          [list(lv.values) for lv in want.levels], (fg, want))
    check(fg["names"] == list(want.names) and fg["maxSelf"] == str(want.max_self), fg)


def test_querier__json_select_merge_profile_equals_binary():
    qv1, _ = stubs()
    pb = pprof_stubs()
    srv = pushed()
    start, end = range_ms()
    for sel in ("{}", '{service_name="checkout"}'):
        req = qv1.SelectMergeProfileRequest(profile_typeID=CPU, label_selector=sel,
                                            start=start, end=end)
        d = same_as_binary(srv, "SelectMergeProfile", req, pb.Profile)
        check(isinstance(d["sample"][0]["value"][0], str) and "stringTable" in d, d)
    p = call_ok(srv, "SelectMergeProfile", req, pb.Profile)
    check(pprof_stacks(p, "cpu") == folded(srv, sel), p)


if __name__ == "__main__":
    run_case("test_querier__", globals())
