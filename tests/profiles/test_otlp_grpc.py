#!/usr/bin/env python3
"""OTLP/gRPC end to end: `ember serve --otlp-grpc-listen` driven by Debian's
python3-grpcio with the project's OTLP messages (protoc at test time), and
by a raw HTTP/2 client for what grpcio never sends (a stream trickled or
left open, idle connections).

    test_otlp_grpc.py EMBER FIXTURES_DIR CASE      (CASE: test_otlp_grpc__*)
"""
import os
import socket
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import H2_PREFACE, check, h2_frame, hpack_literals, wait_for  # noqa: E402
from profiles_test import (FIX, NOW_S, OTLP_GRPC_PATH, SEC, GrpcServer,  # noqa: E402
                           OtlpRequest, grpc_module, otlp_folded, otlp_post,
                           otlp_sample_request, otlp_stubs, run_case, upload_executable)

T0 = (NOW_S - 600) * SEC
STACK = "main;helper_digest_points;do_syscall_64"


def upload_fixture(srv):
    exe = os.path.join(FIX, "c_O2_pie")
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    upload_executable(srv, exe, bid)
    return exe, bid


# ---- a raw HTTP/2 client (prior knowledge) ------------------------------------------


class RawH2:
    """A connection that sends what grpcio would not: frames one by one."""

    def __init__(self, port, preface=True):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        if preface:
            self.s.sendall(H2_PREFACE + h2_frame(4, 0, 0))

    def open_call(self, token, sid=1, timeout=None, extra=()):
        h = [(":method", "POST"), (":scheme", "http"), (":path", OTLP_GRPC_PATH),
             (":authority", "localhost"), ("content-type", "application/grpc"),
             ("te", "trailers"), ("authorization", "Bearer " + token)] + list(extra)
        if timeout:
            h.append(("grpc-timeout", timeout))
        self.s.sendall(h2_frame(1, 0x4, sid, hpack_literals(h)))  # END_HEADERS

    def data(self, payload, sid=1, end=False):
        self.s.sendall(h2_frame(0, 0x1 if end else 0, sid, payload))

    def frames_until(self, want, timeout):
        """Frames (type, flags, stream) read until want(frame) or EOF:
        (the frame wanted or None, seconds taken)."""
        t, buf = time.time(), b""
        self.s.settimeout(timeout)
        while True:
            while len(buf) >= 9:
                n = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + n:
                    break
                f = (buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff)
                buf = buf[9 + n:]
                if want(f):
                    return f, time.time() - t
            try:
                chunk = self.s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                return None, time.time() - t
            if not chunk:
                return None, time.time() - t
            buf += chunk

    def closed_within(self, timeout):
        """Seconds until the server closed the connection (None: it did not)."""
        t = time.time()
        self.s.settimeout(timeout)
        try:
            while self.s.recv(65536):
                pass
        except socket.timeout:
            return None
        except ConnectionResetError:
            pass
        return time.time() - t


def grpc_message(data, flag=0):
    return bytes([flag]) + struct.pack(">I", len(data)) + data


# ---- cases ------------------------------------------------------------------------------


def test_otlp_grpc__export_stores_what_http_stores():
    svc, _ = otlp_stubs()
    srv = GrpcServer()
    exe, bid = upload_fixture(srv)
    # the same content through both transports, a service each; one
    # profile too old: refused alone, a partial success
    for via, names in (("http", ("h_ts", "h_values", "h_both")),
                       ("grpc", ("g_ts", "g_values", "g_both"))):
        r = otlp_sample_request(svc, exe, bid, T0, names)
        r.profile(via + "_old", T0 - 3 * 3600 * SEC).samples.add(stack_index=1, values=[1])
        if via == "http":
            st, body, _ = otlp_post(srv, r.encode())
            check(st == 200, "HTTP %d %r" % (st, body[:300]))
            ps = svc.ExportProfilesServiceResponse.FromString(body).partial_success
        else:
            ps = srv.export(r.msg).partial_success
        check(ps.rejected_profiles == 1 and "profile 3" in ps.error_message
              and "out of bounds" in ps.error_message, "%s partial_success: %r" % (via, ps))
    for shape, total in (("ts", 5), ("values", 7), ("both", 7)):
        h, g = otlp_folded(srv, "h_" + shape), otlp_folded(srv, "g_" + shape)
        check(g == h == {STACK: total}, "%s: gRPC %r, HTTP %r" % (shape, g, h))
    # gzip message compression: all accepted, an empty response
    grpc = grpc_module()
    r = otlp_sample_request(svc, exe, bid, T0 + SEC, ("gz",) * 3)
    resp = srv.export(r.msg, compression=grpc.Compression.Gzip)
    check(not resp.HasField("partial_success"), "gzip: %r" % resp)
    check(otlp_folded(srv, "gz") == {STACK: 19}, otlp_folded(srv, "gz"))
    check(srv.metric("ember_profiles_ingested_total", '{route="otlp"}') == 9, "metric")


def test_otlp_grpc__refusals_are_status_codes():
    svc, _ = otlp_stubs()
    grpc = grpc_module()
    srv = GrpcServer(["--max-profile-mb", "1", "--max-series", "1"])
    good = OtlpRequest(svc)
    good.profile("first", T0).samples.add(stack_index=good.stack([good.named("f")]), values=[1])
    C = grpc.StatusCode
    srv.refused(C.UNAUTHENTICATED, "token", good.msg, token=False)
    srv.refused(C.UNAUTHENTICATED, "token", good.msg, token="wrong")
    srv.refused(C.INVALID_ARGUMENT, "not an OTLP", b"\xff\xff\xff\xff", raw=True)
    srv.refused(C.RESOURCE_EXHAUSTED, "larger than", b"\0" * (2 << 20), raw=True)
    srv.refused(C.UNIMPLEMENTED, "unknown method", good.msg,
                path="/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Other")
    empty = OtlpRequest(svc)  # samples with neither values nor timestamps
    empty.profile("a", T0).samples.add(stack_index=empty.stack([empty.named("f")]))
    srv.refused(C.INVALID_ARGUMENT, "1.10", empty.msg)
    check(not srv.export(good.msg).HasField("partial_success"), "a good request")
    # the series limit: retryable, RESOURCE_EXHAUSTED with RetryInfo
    again = OtlpRequest(svc)
    again.profile("second", T0).samples.add(stack_index=again.stack([again.named("f")]),
                                             values=[1])
    e = srv.refused(C.RESOURCE_EXHAUSTED, "", again.msg)
    md = dict(e.trailing_metadata())
    check(b"google.rpc.RetryInfo" in md.get("grpc-status-details-bin", b""), md)
    # every answer counted by its code in /metrics
    got = {c: srv.metric("ember_otlp_grpc_calls_total", '{code="%s"}' % c, 0)
           for c in ("OK", "UNAUTHENTICATED", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED",
                     "UNIMPLEMENTED", "UNAVAILABLE")}
    check(got == {"OK": 1, "UNAUTHENTICATED": 2, "INVALID_ARGUMENT": 2,
                  "RESOURCE_EXHAUSTED": 2, "UNIMPLEMENTED": 1, "UNAVAILABLE": 0},
          "ember_otlp_grpc_calls_total: %r" % got)


def test_otlp_grpc__deadline_and_trickled_stream():
    svc, _ = otlp_stubs()
    srv = GrpcServer(["--request-timeout", "3"])
    raw = RawH2(srv.grpc_port)
    raw.open_call(srv.token, sid=1, timeout="1S")
    raw.data(grpc_message(b"\0" * 100)[:20])  # the rest never comes
    f, took = raw.frames_until(lambda f: f[2] == 1 and f[0] == 1 and f[1] & 1, 10)
    check(f and 0.8 <= took < 2.5, "grpc-timeout 1S: answered %r after %.1f s" % (f, took))
    # without grpc-timeout: --request-timeout (3 s), a byte at a time
    raw.open_call(srv.token, sid=3)
    raw.data(grpc_message(b"\0" * 100)[:5], sid=3)  # a message of 100 bytes
    t, got = time.time(), {}

    def trickle():
        try:
            for _ in range(90):
                raw.data(b"\0", sid=3)
                time.sleep(0.2)
        except OSError:
            pass
    threading.Thread(target=trickle, daemon=True).start()
    # meanwhile another client's call is answered at once
    r = OtlpRequest(svc)
    r.profile("other", T0).samples.add(stack_index=r.stack([r.named("f")]), values=[1])
    t1 = time.time()
    srv.export(r.msg)
    got["other"] = time.time() - t1
    check(got["other"] < 2, "another client waited %.1f s" % got["other"])
    f, _ = raw.frames_until(lambda f: f[2] == 3 and f[0] in (1, 3), 10)
    took = time.time() - t
    check(f and 2.5 <= took < 5, "trickled stream: %r after %.1f s" % (f, took))
    # headers past SETTINGS_MAX_HEADER_LIST_SIZE (16 KiB): the stream reset
    raw.open_call(srv.token, sid=5, extra=[("x-pad-%d" % i, "v" * 100) for i in range(120)])
    f, _ = raw.frames_until(lambda f: f[2] == 5, 10)
    check(f and f[0] == 3, "headers past the cap: %r, not RST_STREAM" % (f,))


def test_otlp_grpc__calls_abandoned_while_at_work():
    """Calls whose stream is reset, or whose connection closes, once their
    message is whole (a worker has them): freed when the worker is done,
    the server answering on (ASan in the test build sees a use after
    free or a leak at its exit)."""
    svc, _ = otlp_stubs()
    srv = GrpcServer()
    r = OtlpRequest(svc)
    r.profile("gone", T0).samples.add(stack_index=r.stack([r.named("f")]), values=[1])
    msg = grpc_message(r.msg.SerializeToString())
    for i in range(20):
        raw = RawH2(srv.grpc_port)
        raw.open_call(srv.token, sid=1)
        raw.data(msg, sid=1, end=True)
        if i % 2:
            raw.s.sendall(h2_frame(3, 0, 1, struct.pack(">I", 8)))  # RST_STREAM CANCEL
        raw.s.close()
    ok = OtlpRequest(svc)
    ok.profile("after", T0).samples.add(stack_index=ok.stack([ok.named("f")]), values=[1])
    check(not srv.export(ok.msg).HasField("partial_success"), "a call after")
    srv.stop()
    check(srv.proc.returncode == 0, "server exit %r:\n%s" % (srv.proc.returncode,
                                                             srv.stderr()[-3000:]))


def test_otlp_grpc__idle_and_capped_connections():
    svc, _ = otlp_stubs()
    grpc = grpc_module()
    srv = GrpcServer(["--otlp-grpc-max-connections", "8", "--header-timeout", "2"])
    held = [RawH2(srv.grpc_port) for _ in range(8)]
    wait_for(lambda: all(h.frames_until(lambda f: f[0] == 4, 5)[0] for h in held),
             "the server's SETTINGS on every connection", 10)
    extra = RawH2(srv.grpc_port)
    took = extra.closed_within(5)
    check(took is not None and took < 1, "a connection past the cap was kept (%r)" % took)
    r = OtlpRequest(svc)
    r.profile("a", T0).samples.add(stack_index=r.stack([r.named("f")]), values=[1])
    try:
        srv.export(r.msg, timeout=3)
        raise AssertionError("a call past the connection cap was answered")
    except grpc.RpcError as e:
        check(e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED),
              e.code())
    # idle connections are closed after --header-timeout (2 s), GOAWAY
    # first; one that pings all along too: only a call keeps a connection
    def ping():
        try:
            for _ in range(40):
                held[0].s.sendall(h2_frame(6, 0, 0, b"12345678"))
                time.sleep(0.25)
        except OSError:
            pass
    threading.Thread(target=ping, daemon=True).start()
    for h in held:
        took = h.closed_within(6)
        check(took is not None, "an idle connection was kept")
    check(not srv.export(r.msg).HasField("partial_success"), "a call once they are gone")


def test_otlp_grpc__many_idle_connections_cost():
    """1,000 idle connections and a trickled stream: what they cost the
    server (CPU, resident memory), and a call still answered."""
    svc, _ = otlp_stubs()
    srv = GrpcServer(["--otlp-grpc-max-connections", "1010", "--header-timeout", "60"])
    pid = srv.proc.pid
    rss0, cpu0 = ember_test.vm_status(pid, "VmRSS"), ember_test.cpu_seconds(pid)
    held = [RawH2(srv.grpc_port) for _ in range(1000)]
    raw = held[0]
    raw.open_call(srv.token)
    raw.data(grpc_message(b"\0" * 1000)[:10])
    t = time.time()
    time.sleep(5)
    r = OtlpRequest(svc)
    r.profile("a", T0).samples.add(stack_index=r.stack([r.named("f")]), values=[1])
    t1 = time.time()
    srv.export(r.msg)
    call_s = time.time() - t1
    rss1, cpu1 = ember_test.vm_status(pid, "VmRSS"), ember_test.cpu_seconds(pid)
    print("1000 idle connections, %.1f s: server CPU %.2f s, RSS +%.1f MiB "
          "(%.1f KiB a connection%s); a call meanwhile %.3f s"
          % (time.time() - t, cpu1 - cpu0, (rss1 - rss0) / 2**20, (rss1 - rss0) / 1024 / 1000,
             ", ASan" if ember_test.sanitized(pid) else "", call_s))
    check(call_s < 2, "a call took %.1f s beside idle connections" % call_s)
    check(cpu1 - cpu0 < 3, "idle connections cost %.2f s of CPU" % (cpu1 - cpu0))
    for h in held:
        h.s.close()


if __name__ == "__main__":
    run_case("test_otlp_grpc__", globals())
