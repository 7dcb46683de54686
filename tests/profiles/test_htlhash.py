#!/usr/bin/env python3
"""OTLP mappings that name their binary by the OpenTelemetry eBPF profiler's
file ID only (process.executable.build_id.htlhash), end to end: the
debuginfo store's file-ID index turns it into the build ID at ingest, and a
frame that came before its executable is resolved once the executable
arrives.  The file ID is computed here by hashlib from the profiler's own
definition (opentelemetry-ebpf-profiler, libpf/fileid.go), not by Ember."""
import hashlib
import json
import os
import struct
import subprocess
import urllib.request

from profiles_test import (FIX, NOW_S, SEC, OtlpRequest, Server, check, nm_address, otlp_folded,
                           otlp_post, otlp_stubs, run_case)
from ember_test import wait_for

T0 = (NOW_S - 600) * SEC
EXE = os.path.join(FIX, "c_stripped")         # stripped: no names of its own
DEBUG = os.path.join(FIX, "c_stripped.debug")  # found by its .gnu_debuglink
STACK = "main;helper_digest_points;do_syscall_64"


def file_id(path):
    """SHA-256 of the first 4 KiB, the last 4 KiB and the size as 8 bytes
    big-endian; its first 16 bytes in hex."""
    with open(path, "rb") as f:
        data = f.read()
    h = hashlib.sha256(data[:4096] + data[-4096:] + struct.pack(">Q", len(data)))
    return h.hexdigest()[:32]


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return out.split("Build ID:")[1].split()[0]


def upload(srv):
    env = dict(os.environ, EMBER_SERVER=srv.url, EMBER_TOKEN=srv.token)
    r = subprocess.run([srv.ember, "upload", EXE], capture_output=True, text=True, env=env,
                       timeout=120)
    check(r.returncode == 0, "ember upload: %r %r" % (r.stdout, r.stderr))


def request(svc, service, time_ns, fid=None):
    """main -> helper_digest_points of c_stripped under a named kernel
    frame, 5 timestamps; the mapping named by fid (the file ID) only."""
    r = OtlpRequest(svc)
    base = 0x555555554000
    m = r.mapping(base, base + 0x100000, "/usr/bin/c_stripped", htlhash=fid or file_id(EXE))
    main = r.native(m, base + nm_address(DEBUG, "main") + 1)
    helper = r.native(m, base + nm_address(DEBUG, "helper_digest_points") + 1)
    st = r.stack([r.named("do_syscall_64"), helper, main])
    r.profile(service, time_ns).samples.add(
        stack_index=st, timestamps_unix_nano=[time_ns + i for i in range(5)])
    return r.encode()


def post_ok(srv, data):
    st, body, _ = otlp_post(srv, data)
    check(st == 200, "export: HTTP %d %r" % (st, body[:300]))


def test_htlhash__named_by_file_id_only_after_ember_upload():
    svc, _ = otlp_stubs()
    srv = Server()
    upload(srv)
    post_ok(srv, request(svc, "fid", T0))
    check(otlp_folded(srv, "fid") == {STACK: 5}, otlp_folded(srv, "fid"))
    # the upload's answer names the file ID the store computed: the same
    with open(os.path.join(FIX, "c_O2_pie"), "rb") as f:
        st, body, _ = srv.request("PUT", "/api/v1/artifacts/%s/executable" %
                                  build_id(os.path.join(FIX, "c_O2_pie")), f.read(),
                                  {"Authorization": "Bearer " + srv.token})

    a = json.loads(body)
    check(st == 201 and a["file_id"] == file_id(os.path.join(FIX, "c_O2_pie")), a)
    # a debug file has none: the profiler never hashes one
    with open(DEBUG, "rb") as f:
        st, body, _ = srv.request("PUT", "/api/v1/artifacts/%s/debuginfo" % build_id(EXE),
                                  f.read(), {"Authorization": "Bearer " + srv.token})
    check(st in (200, 201) and json.loads(body)["file_id"] is None, body)


def test_htlhash__frames_sent_before_the_executable_resolve_after_it():
    svc, _ = otlp_stubs()
    srv = Server(["--profile-head-age", "1s"])
    post_ok(srv, request(svc, "early", T0))
    names = otlp_folded(srv, "early")
    check(list(names.values()) == [5] and "helper_digest_points" not in list(names)[0],
          "named before the executable came: %r" % names)
    cov = srv.json("/api/v1/coverage")
    tag = "htlhash:" + file_id(EXE)
    check([b["build_id"] for b in cov["build_ids"]] == [tag], cov)
    upload(srv)
    # at query time at once (the resolver looks the file ID up again)
    check(otlp_folded(srv, "early") == {STACK: 5}, otlp_folded(srv, "early"))
    # and in the stored blocks once compacted: the arrival of the build ID
    # is the arrival of its file ID
    wait_for(lambda: srv.json("/api/v1/coverage")["resolved_pct"] == 100,
             "the blocks to be rewritten with the frames resolved", 60)
    # sent now: resolved at ingest
    post_ok(srv, request(svc, "late", T0 + SEC))
    check(otlp_folded(srv, "late") == {STACK: 5}, otlp_folded(srv, "late"))


def test_htlhash__a_tenant_closed_when_the_executable_came_resolves_after():
    """A tenant whose store was closed for being idle when the symbols
    arrived hears of them at its next request: its blocks are rewritten
    with the frames resolved, as an open tenant's are."""
    import json
    svc, _ = otlp_stubs()
    srv = Server(["--multitenancy", "--tenant-idle", "1", "--profile-head-age", "1s"])
    a = {"X-Scope-OrgID": "a"}

    def coverage():
        st, body, _ = srv.request("GET", "/api/v1/coverage", headers=a)
        check(st == 200, "coverage: HTTP %d %r" % (st, body[:300]))
        return json.loads(body)

    st, body, _ = otlp_post(srv, request(svc, "early", T0), headers=a)
    check(st == 200, "export: HTTP %d %r" % (st, body[:300]))
    tag = "htlhash:" + file_id(EXE)
    wait_for(lambda: [b["build_id"] for b in coverage()["build_ids"]] == [tag],
             "a's frames counted unresolved", 30)
    wait_for(lambda: "tenant 'a' idle: its store closed" in srv.stderr(),
             "a's store to close", 30)
    upload(srv)  # a's store is closed: it cannot hear of it now
    wait_for(lambda: coverage()["resolved_pct"] == 100,
             "a's blocks to be rewritten with the frames resolved", 60)


def test_htlhash__the_index_survives_a_restart():
    svc, _ = otlp_stubs()
    srv = Server()
    upload(srv)
    srv.stop()
    srv.start()
    post_ok(srv, request(svc, "restarted", T0))
    check(otlp_folded(srv, "restarted") == {STACK: 5}, otlp_folded(srv, "restarted"))
    # a file ID of no stored executable stays unresolved, named by it
    other = "0123456789abcdef0123456789abcdef"
    post_ok(srv, request(svc, "unknown", T0, other))
    names = otlp_folded(srv, "unknown")
    check(list(names.values()) == [5] and "main" not in list(names)[0], names)


def test_htlhash__an_executable_fetched_from_upstream_is_indexed():
    svc, _ = otlp_stubs()
    up = Server()  # an Ember upstream: the debuginfod protocol
    upload(up)
    srv = Server(["--upstream", up.url])
    bid = build_id(EXE)
    with urllib.request.urlopen("%s/buildid/%s/executable" % (srv.url, bid)) as r:
        check(r.status == 200 and r.read() == open(EXE, "rb").read(), "proxied executable")
    with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (srv.url, bid)) as r:
        check(r.status == 200, "proxied debug file")
    post_ok(srv, request(svc, "fetched", T0))
    check(otlp_folded(srv, "fetched") == {STACK: 5}, otlp_folded(srv, "fetched"))


if __name__ == "__main__":
    run_case("test_htlhash__", globals())
