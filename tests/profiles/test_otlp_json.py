#!/usr/bin/env python3
"""OTLP/HTTP with JSON bodies (POST /v1development/profiles, Content-Type
application/json): the OTLP JSON encoding as python3-protobuf's
json_format writes it (lowerCamel names, 64-bit integers as strings,
bytes base64) with trace and span IDs rewritten as hex as OTLP requires;
answers in JSON.  Cases test_otlp_json__*, each a CTest test."""
import base64
import gzip
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiles_test import (FIX, NOW_S, SEC, OtlpRequest, Server, ember_test,  # noqa: E402
                           otlp_folded, otlp_post, otlp_sample_request, otlp_stubs, packages,
                           run_case, check, upload_executable)

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
STACK = "main;helper_digest_points;do_syscall_64"
TRACE, SPAN = bytes(range(1, 17)), bytes(range(0xa0, 0xa8))


def to_json(msg, snake=False):
    """msg in OTLP's JSON encoding: json_format's proto3 mapping, with the
    link table's trace and span IDs as hex, not base64."""
    from google.protobuf import json_format
    doc = json.loads(json_format.MessageToJson(msg, preserving_proto_field_name=snake))
    d = doc.get("dictionary", {})
    for link in d.get("link_table" if snake else "linkTable", []):
        for k in ("trace_id", "span_id") if snake else ("traceId", "spanId"):
            if k in link:
                link[k] = base64.b64decode(link[k]).hex().upper()
    return doc


def int64_as_numbers(v):
    """v with every string of decimal digits as a JSON number (json_format
    writes 64-bit integers as strings; OTLP's receivers take both)."""
    if isinstance(v, dict):
        return {k: int64_as_numbers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [int64_as_numbers(x) for x in v]
    return int(v) if isinstance(v, str) and v.isdigit() else v


def json_post(srv, doc, headers=None, **kw):
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return otlp_post(srv, body, headers=h, **kw)


def linked_request(svc, exe, bid, time_ns, services):
    """otlp_sample_request with its samples linked to a trace and span."""
    r = otlp_sample_request(svc, exe, bid, time_ns, services)
    r.dict.link_table.add(trace_id=TRACE, span_id=SPAN)
    for rp in r.msg.resource_profiles:
        for s in rp.scope_profiles[0].profiles[0].samples:
            s.link_index = len(r.dict.link_table) - 1
    return r


def uploaded_server():
    exe = os.path.join(FIX, "c_O2_pie")
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    srv = Server()
    upload_executable(srv, exe, bid)
    return srv, exe, bid


def check_ok(st, body, hdr, what):
    check(st == 200 and hdr.get("content-type") == "application/json",
          "%s: HTTP %d %r %r" % (what, st, hdr, body[:300]))
    return json.loads(body)


# ---- cases ---------------------------------------------------------------------------


def test_otlp_json__same_folded_and_totals_as_protobuf():
    """One request's content sent as protobuf and as JSON: the same folded
    output and totals per sample shape, native frames symbolized; the JSON
    answer {} when all was stored, a JSON partial success when not."""
    svc, _ = otlp_stubs()
    srv, exe, bid = uploaded_server()
    pb = linked_request(svc, exe, bid, T0, ("p_ts", "p_values", "p_both"))
    st, body, _ = otlp_post(srv, pb.encode())
    check(st == 200 and body == b"", "protobuf: HTTP %d %r" % (st, body[:300]))
    js = linked_request(svc, exe, bid, T0, ("j_ts", "j_values", "j_both"))
    doc = to_json(js.msg)
    check(doc["dictionary"]["linkTable"][1]["traceId"] == TRACE.hex().upper(), doc)
    check(check_ok(*json_post(srv, doc), "json") == {}, "not {}")
    for shape, total in (("ts", 5), ("values", 7), ("both", 7)):
        p, j = otlp_folded(srv, "p_" + shape), otlp_folded(srv, "j_" + shape)
        check(p == j == {STACK: total}, "%s: protobuf %r, json %r" % (shape, p, j))
    old = js.profile("j_old", T0 - 3 * 3600 * SEC)  # outside the window: refused alone
    old.samples.add(stack_index=1, values=[1])
    ans = check_ok(*json_post(srv, to_json(js.msg)), "partial")
    ps = ans.get("partialSuccess", {})
    check(ps.get("rejectedProfiles") == "1" and ps.get("errorMessage", "").startswith(
        "profile 3: "), "partial success: %r" % ans)
    check(srv.metric("ember_profiles_ingested_total", '{route="otlp"}') == 9, "metric")


def test_otlp_json__int64_numbers_snake_case_gzip_charset():
    """64-bit integers as JSON numbers, the proto's own snake_case names,
    Content-Encoding gzip and a charset parameter all read the same."""
    svc, _ = otlp_stubs()
    srv, exe, bid = uploaded_server()
    numbers = int64_as_numbers(to_json(linked_request(svc, exe, bid, T0, ("n",) * 3).msg))
    check(isinstance(numbers["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]
                     ["timeUnixNano"], int), "no numbers")
    check_ok(*json_post(srv, numbers), "numbers")
    snake = to_json(linked_request(svc, exe, bid, T0, ("s",) * 3).msg, snake=True)
    check("resource_profiles" in snake, "not snake_case")
    check_ok(*json_post(srv, snake, {"Content-Type": "application/json; charset=utf-8"}),
             "snake_case")
    gz = gzip.compress(json.dumps(to_json(linked_request(svc, exe, bid, T0, ("g",) * 3)
                                          .msg)).encode())
    check_ok(*json_post(srv, gz, {"Content-Encoding": "gzip"}), "gzip")
    for service in ("n", "s", "g"):
        check(otlp_folded(srv, service) == {STACK: 19}, "%s: %r" % (service,
                                                                   otlp_folded(srv, service)))


def test_otlp_json__refusals_are_json_status_bodies():
    """Malformed JSON, a value of the wrong type, a trace ID of the wrong
    length (base64, as the plain protobuf mapping would give it), a key
    given twice: 400 with a JSON google.rpc.Status naming the problem;
    unknown fields ignored; a refusal before the body (401) in JSON too."""
    svc, _ = otlp_stubs()
    srv = Server()
    good = OtlpRequest(svc)
    good.profile("a", T0).samples.add(stack_index=good.stack([good.named("f")]), values=[1])
    good_doc = to_json(good.msg)

    def refused(st_want, code, texts, doc, **kw):
        st, body, hdr = json_post(srv, doc, **kw)
        check(st == st_want, "HTTP %d, not %d: %r" % (st, st_want, body[:300]))
        check(hdr.get("content-type") == "application/json", hdr)
        s = json.loads(body)
        check(s.get("code") == code and all(t in s.get("message", "") for t in texts),
              "status %r" % s)

    refused(400, 3, ["not JSON", "byte"], b'{"resourceProfiles": [')
    refused(400, 3, ["not JSON"], b'{"resourceProfiles": [}')
    refused(400, 3, ["not a JSON object"], b'[1, 2]')
    bad = json.loads(json.dumps(good_doc))
    bad["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]["samples"][0]["values"] = \
        ["x"]
    refused(400, 3, ["resourceProfiles[0].scopeProfiles[0].profiles[0].samples[0].values[0]",
                     "not an integer"], bad)
    bad = json.loads(json.dumps(good_doc))
    bad["dictionary"]["stringTable"] = "f"
    refused(400, 3, ["dictionary.stringTable", "not an array"], bad)
    bad = json.loads(json.dumps(good_doc))
    bad["dictionary"]["linkTable"] = [{}, {"traceId": base64.b64encode(TRACE).decode(),
                                           "spanId": SPAN.hex()}]
    refused(400, 3, ["dictionary.linkTable[1].traceId", "hex"], bad)
    bad["dictionary"]["linkTable"][1] = {"traceId": TRACE.hex(), "spanId": "zz" * 8}
    refused(400, 3, ["linkTable[1].spanId", "not hex"], bad)
    text = json.dumps(good_doc)
    refused(400, 3, ["dictionary", "given twice"],
            text.replace('"dictionary":', '"dictionary": {}, "dictionary":', 1).encode())
    refused(401, 16, ["Authorization"], good_doc, token=False)
    ok = json.loads(json.dumps(good_doc))  # unknown fields, at any depth: ignored
    ok["someFutureField"] = {"a": [1, {"b": None}], "c": "d"}
    ok["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]["samples"][0]["newOne"] = 5
    check(check_ok(*json_post(srv, ok), "unknown fields") == {}, "not {}")
    check(otlp_folded(srv, "a") == {"f": 1}, otlp_folded(srv, "a"))


def test_otlp_json__bombs_refused_cheaply():
    """A deep nesting (in a known field or an unknown one) and an array of
    millions of entries: refused at the first level or entry past the
    limits, in little time and memory; a 16 MiB request that is read
    costs a bounded multiple of its size (docs/security.md)."""
    svc, _ = otlp_stubs()
    srv = Server()
    pid = srv.proc.pid

    def timed(doc, st_want, text):
        t = time.time()
        st, body, hdr = json_post(srv, doc)
        took = time.time() - t
        check(st == st_want and text in json.loads(body).get("message", ""),
              "HTTP %d %r" % (st, body[:300]))
        return took

    # a request that is read: 16 MiB of timestamps-only samples, 700 each
    r = OtlpRequest(svc)
    st_ = r.stack([r.named("f")])
    r.profile("big", T0)
    n = 16 << 20
    sample = '{"stackIndex":%d,"timestampsUnixNano":[%s]}' % (st_, ",".join(['"%d"' % T0] * 700))
    doc = to_json(r.msg)
    doc["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]["samples"] = []
    head = json.dumps(doc).encode()
    k = head.index(b'"samples": []') + len(b'"samples": [')
    count = (n - len(head)) // (len(sample) + 1)
    body = head[:k] + ",".join([sample] * count).encode() + head[k:]
    count *= 700
    check(len(body) <= 16 << 20, "body of %d bytes" % len(body))
    before = ember_test.vm_status(pid, "VmHWM")
    t = time.time()
    ans = check_ok(*json_post(srv, body), "16 MiB")
    check(ans == {}, "16 MiB: %r" % ans)
    grown = ember_test.vm_status(pid, "VmHWM") - before
    print("16 MiB request: %d timestamps, %.2f s, peak grew %d MiB%s" % (
        count, time.time() - t, grown >> 20,
        " (ASan)" if ember_test.sanitized(pid) else ""))
    check(otlp_folded(srv, "big") == {"f": count}, "totals")
    deep = 4 << 20
    took = timed(b'{"x":' + b"[" * deep + b"]" * deep + b"}", 413, "nested deeper")
    check(took < 5, "an unknown field's nesting took %.1f s" % took)
    took = timed(b'{"resourceProfiles":[{"resource":{"attributes":[{"value":' +
                 b'{"arrayValue":{"values":[' * 100000 + b"]}}" * 100000 + b"}]}}]}", 413,
                 "nested deeper")
    check(took < 5, "AnyValue's nesting took %.1f s" % took)
    before = ember_test.vm_status(pid, "VmHWM")
    t = time.time()
    entries = b'{"dictionary":{"stringTable":[' + b'"",' * (5 << 20) + b'""]}}'
    timed(entries, 413, "more than 4194304 entries")
    grown = ember_test.vm_status(pid, "VmHWM") - before
    print("array bomb: %d bytes, %.2f s, peak grew %d MiB" % (len(entries), time.time() - t,
                                                              grown >> 20))


if __name__ == "__main__":
    run_case("test_otlp_json__", globals())
