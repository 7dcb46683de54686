#!/usr/bin/env python3
"""Pyroscope's query API (querier.v1.QuerierService) over the Connect
unary protocol on plain HTTP: POST /querier.v1.QuerierService/METHOD with
binary protobuf bodies (the project's wire/querier/*.proto through
protoc's Python stubs), answered from pushed profiles; Connect's error
form for what Ember refuses.  Cases test_querier__*, each a CTest test."""
import gzip
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiles_test import NOW_S, SEC, Server, check, proto_stubs, run_case  # noqa: E402
from ember_test import cpu_profile  # noqa: E402

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
    connect_error(srv, "SelectMergeProfile", b"", 501, "unimplemented")
    connect_error(srv, "NoSuchMethod", b"", 501, "unimplemented")
    connect_error(srv, "LabelNames", b"{}", 501, "unimplemented",
                  headers={"Content-Type": "application/json"})
    connect_error(srv, "LabelNames", b"x", 400, "invalid_argument",
                  headers={"Content-Encoding": "gzip"})


if __name__ == "__main__":
    run_case("test_querier__", globals())
