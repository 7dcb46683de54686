#!/usr/bin/env python3
"""What the OpenTelemetry eBPF profiler sends, end to end (issue 24): one
request whose dictionary serves several processes, timestamps-only CPU
samples at 20 Hz, native frames of a stripped binary whose debug file came
with `ember upload`, kernel frames already named, a mapping known only by
its file ID (htlhash), sample attributes (thread name and ID, CPU); and the
same content sent four ways (OTLP/HTTP protobuf, OTLP/HTTP JSON, OTLP/gRPC,
pprof) stored alike.

    test_otlp_ebpf.py EMBER FIXTURES_DIR CASE      (CASE: test_otlp_ebpf__*)
"""
import base64
import gzip
import hashlib
import json
import os
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import packages  # noqa: E402
from ember_test import Profile, check  # noqa: E402
from profiles_test import (FIX, NOW_S, SEC, TMP, GrpcServer, OtlpRequest,  # noqa: E402
                           nm_address, otlp_folded, otlp_post, otlp_stubs, q, run_case,
                           upload_executable)

T0 = (NOW_S - 600) * SEC   # ten minutes ago: inside the default hour
PERIOD = SEC // 20         # 20 Hz
STRIPPED = os.path.join(FIX, "c_stripped")         # no names of its own
DEBUG = os.path.join(FIX, "c_stripped.debug")      # its debug file, by .gnu_debuglink
BY_FILE_ID = os.path.join(FIX, "c_O2_pie")         # named by its file ID only
BASE = 0x555555554000                              # each process's load base
KERNEL = ("entry_SYSCALL_64_after_hwframe", "do_syscall_64")  # root first


def file_id(path):
    """The eBPF profiler's file ID: SHA-256 of the first and last 4 KiB and
    the size (8 bytes big-endian), its first 16 bytes in hex."""
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha256(data[:4096] + data[-4096:] + struct.pack(">Q", len(data))).hexdigest()[:32]


def symbols_of(path):
    return path if path != STRIPPED else DEBUG


def text_segment(path):
    """(start, limit, file offset) of path's executable PT_LOAD in the file's
    virtual address space, page-aligned: the bounds the eBPF profiler
    gives a mapping (its libpf/trace.go: file virtual addresses)."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            off, va, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            return va & ~0xfff, va + memsz, off & ~0xfff
    raise AssertionError("no executable segment in " + path)


# The processes of the request: (pid, executable, by file ID only, stacks
# root first of (function names in the executable, kernel frames below
# them or not), each with its number of 50 ms samples).
PROCESSES = (
    (4101, STRIPPED, False, ((("main", "helper_digest_points"), True, 13),
                             (("main",), False, 7))),
    (4202, BY_FILE_ID, True, ((("main", "helper_digest_points"), False, 20),)),
)


def expected_folded():
    """service -> folded stack -> count: what the request must store."""
    want = {}
    for pid, _exe, _by_fid, stacks in PROCESSES:
        f = want.setdefault("svc%d" % pid, {})
        for names, kernel, n in stacks:
            f[";".join(names + (KERNEL if kernel else ()))] = n
    return want


def profiler_request(svc, tag=""):
    """The request, as the eBPF profiler builds it: one dictionary, a
    resource a process (service.name svcPID+tag, process.pid, the
    executable's name), typed frames, timestamps-only samples with
    thread and CPU attributes."""
    r = OtlpRequest(svc)
    kernel = [r.named(name, "kernel") for name in KERNEL]
    for pid, exe, by_fid, stacks in PROCESSES:
        name = "/usr/bin/" + os.path.basename(exe)
        start, limit, offset = text_segment(exe)
        if by_fid:
            m = r.mapping(start, limit, name, htlhash=file_id(exe), file_offset=offset)
        else:
            m = r.mapping(start, limit, name, packages.build_id(exe), file_offset=offset)
        frame = {}  # function -> its location, interned as the profiler does
        for names, _k, _n in stacks:
            for fn in names:
                if fn not in frame:  # an ELF virtual address, 1 byte into fn
                    frame[fn] = r.native(m, nm_address(symbols_of(exe), fn) + 1, "native")
        p = r.profile("svc%d%s" % (pid, tag), T0)
        p.sample_type.type_strindex = r.s("samples")
        p.sample_type.unit_strindex = r.s("count")
        p.period = PERIOD
        rp = r.msg.resource_profiles[-1]
        rp.resource.attributes[1].value.int_value = pid  # process.pid
        kv = rp.resource.attributes.add(key="process.executable.name")
        kv.value.string_value = os.path.basename(exe)
        attrs = []
        for key, value in (("thread.name", "worker-%d" % pid), ("thread.id", pid + 1),
                           ("cpu.logical_number", pid % 2)):
            a = r.dict.attribute_table.add(key_strindex=r.s(key))
            if isinstance(value, str):
                a.value.string_value = value
            else:
                a.value.int_value = value
            attrs.append(len(r.dict.attribute_table) - 1)
        t = T0
        for names, with_kernel, n in stacks:
            frames = [frame[fn] for fn in names]
            leaf_first = (list(reversed(kernel)) if with_kernel else []) + frames[::-1]
            p.samples.add(stack_index=r.stack(leaf_first), attribute_indices=attrs,
                          timestamps_unix_nano=[t + i * PERIOD for i in range(n)])
            t += n * PERIOD
    return r


def pprof_profiles(tag):
    """The same content as pprof pushes: service -> gzip'd profile."""
    out = {}
    for pid, exe, _by_fid, stacks in PROCESSES:
        p = Profile(types=[("samples", "count")], period=("cpu", "nanoseconds", PERIOD),
                    time_ns=T0, duration_ns=10 * SEC)
        m = p.mapping(BASE, BASE + 0x100000, 0, "/usr/bin/" + os.path.basename(exe),
                      build_id=packages.build_id(exe))
        for names, with_kernel, n in stacks:
            frames = [(m, BASE + nm_address(symbols_of(exe), fn) + 1) for fn in names]
            p.sample(frames + (list(KERNEL) if with_kernel else []), [n])
        out["svc%d%s" % (pid, tag)] = p.encode(gzip=True)
    return out


def to_json(msg):
    """msg in OTLP's JSON encoding (json_format's mapping; link IDs as hex)."""
    from google.protobuf import json_format
    doc = json.loads(json_format.MessageToJson(msg))
    for link in doc.get("dictionary", {}).get("linkTable", []):
        for k in ("traceId", "spanId"):
            if k in link:
                link[k] = base64.b64decode(link[k]).hex()
    return json.dumps(doc).encode()


def ready_server():
    """A server with OTLP/gRPC, the stripped binary sent by `ember upload`
    (its debug file found by debuglink), the file-ID binary's executable
    stored."""
    srv = GrpcServer()
    env = dict(os.environ, EMBER_SERVER=srv.url, EMBER_TOKEN=srv.token)
    r = subprocess.run([srv.ember, "upload", STRIPPED], capture_output=True, text=True,
                       env=env, timeout=120)
    check(r.returncode == 0, "ember upload: %r %r" % (r.stdout, r.stderr))
    upload_executable(srv, BY_FILE_ID, packages.build_id(BY_FILE_ID))
    return srv


def post_ok(srv, body, ctype="application/x-protobuf"):
    st, answer, _ = otlp_post(srv, body, headers={"Content-Type": ctype})
    check(st == 200, "export: HTTP %d %r" % (st, answer[:300]))


def pprof_locations(srv, service):
    """(function, file, line) of each location of the stored profile (the
    query's pprof output, read by protoc's stubs of Debian's profile.proto)."""
    proto = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
    out = os.path.join(TMP, "pprof_py")
    if not os.path.isdir(out):
        os.makedirs(out)
        subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto),
                        "--python_out=" + out, proto], check=True)
        sys.path.insert(0, out)
    import profile_pb2
    sel = '{service_name="%s"}' % service
    typ = srv.json("/api/v1/profile-types?from=0&query=" + q(sel))["types"][0]["id"]
    body, _ = srv.get("/api/v1/query?type=%s&from=0&format=pprof&query=%s" % (q(typ), q(sel)))
    p = profile_pb2.Profile()
    p.ParseFromString(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)
    fn = {f.id: f for f in p.function}
    got = set()
    for loc in p.location:
        for ln in loc.line:
            f = fn[ln.function_id]
            got.add((p.string_table[f.name], p.string_table[f.filename], ln.line))
    return got


def addr2line(path, fn):
    """(function, file, line) of the address 1 byte into fn, by binutils."""
    a = nm_address(path, fn) + 1
    r = subprocess.run(["addr2line", "-f", "-e", path, "%#x" % a], capture_output=True,
                       text=True, check=True).stdout.split("\n")
    f, line = r[1].rsplit(":", 1)
    return r[0], f, int(line.split()[0])


def test_otlp_ebpf__profiler_request_named_and_exact():
    svc, _ = otlp_stubs()
    srv = ready_server()
    r = profiler_request(svc)
    print("sent: native frames as the profiler sends them (mapping file, its bounds and "
          "offset, build ID or file ID; the address in the file's address space):")
    d = r.dict
    for loc in d.location_table[1:]:
        if loc.mapping_index:
            m = d.mapping_table[loc.mapping_index]
            a = d.attribute_table[m.attribute_indices[0]]
            print("  %s [%#x, %#x) @%#x  %s=%s  %#x" % (
                d.string_table[m.filename_strindex], m.memory_start, m.memory_limit,
                m.file_offset, d.string_table[a.key_strindex].rsplit(".", 1)[1],
                a.value.string_value, loc.address))
    srv.export(r.msg)
    want = expected_folded()
    for service, stacks in want.items():
        got = otlp_folded(srv, service)
        check(got == stacks, "%s: folded %r, want %r" % (service, got, stacks))
    # native frames by function, file and line (binutils' answer on the debug file)
    print("stored: the same frames, symbolized (function, file, line):")
    for service, exe in (("svc4101", DEBUG), ("svc4202", BY_FILE_ID)):
        locs = pprof_locations(srv, service)
        for fn in ("main", "helper_digest_points"):
            name, path, line = addr2line(exe, fn)
            hit = [x for x in locs if x[0] == name and x[2] == line and
                   os.path.basename(x[1]) == os.path.basename(path)]
            check(hit, "%s: %s at %s:%d not in %r" % (service, name, path, line, sorted(locs)))
            print("  %s  %s  %s:%d" % (service, hit[0][0], hit[0][1], hit[0][2]))
    # the process ID and the sample attributes are not series labels
    names = srv.json("/api/v1/labels?from=0")["names"]
    check("service_name" in names and "process.executable.name" in names, names)
    for name in names:
        check(not any(bad in name for bad in ("pid", "thread", "cpu")), "label %r" % name)
    exes = srv.json("/api/v1/labels/process.executable.name/values?from=0")["values"]
    check(exes == ["c_O2_pie", "c_stripped"], exes)
    cov = srv.json("/api/v1/coverage?from=0")
    check(cov["resolved_pct"] == 100 and cov["build_ids"] == [], cov)


def test_otlp_ebpf__same_content_four_ways_same_folded():
    """OTLP/HTTP protobuf, OTLP/HTTP JSON, OTLP/gRPC and pprof pushes of
    the same content give the same folded output, with exact totals."""
    svc, _ = otlp_stubs()
    srv = ready_server()
    post_ok(srv, profiler_request(svc, "_pb").msg.SerializeToString())
    post_ok(srv, to_json(profiler_request(svc, "_json").msg), "application/json")
    srv.export(profiler_request(svc, "_grpc").msg)
    for service, body in pprof_profiles("_pprof").items():
        srv.push_ok(body, "service_name=" + service)
    for service, stacks in expected_folded().items():
        ways = {tag: otlp_folded(srv, service + tag) for tag in ("_pb", "_json", "_grpc",
                                                                  "_pprof")}
        for tag, got in ways.items():
            check(got == stacks, "%s%s: folded %r, want %r" % (service, tag, got, stacks))


if __name__ == "__main__":
    run_case("test_otlp_ebpf__", globals())
