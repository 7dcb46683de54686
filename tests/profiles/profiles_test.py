#!/usr/bin/env python3
"""What the end-to-end tests of the profile routes share (tests/profiles/test_*.py):
the command line (EMBER FIXTURES_DIR CASE), a server with push and query
helpers, profiles of a fixture's native frames, the project's OTLP messages
as Python modules (protoc at test time) and a builder of OTLP requests,
and the runner of one case.  Each test_NAME.py holds cases test_NAME__*,
each a CTest test (CMakeLists.txt registers every file's cases)."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import Profile, check, skip  # noqa: E402

EMBER, FIX, CASE = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix="ember-profiles-test.")
CHILDREN = []
NOW_S = int(time.time())
SEC = 1_000_000_000


def q(selector):
    return urllib.parse.quote(selector, safe="")


# ---- the server ----------------------------------------------------------------


class Server(ember_test.Server):
    def __init__(self, args=(), data=None):
        super().__init__(EMBER, TMP, args, data, log="server.%d.log" % len(ember_test.SERVERS))

    def push(self, data, labels="", token=None, headers=None, path="/api/v1/profiles"):
        h = {"Authorization": "Bearer " + (token or self.token)}
        h.update(headers or {})
        return self.request("POST", path + ("?" + labels if labels else ""), data, h)

    def push_ok(self, data, labels="", **kw):
        st, body, _ = self.push(data, labels, **kw)
        check(st == 200, "push: HTTP %d %r" % (st, body[:300]))
        return json.loads(body)

    def get(self, path):
        st, body, hdr = self.request("GET", path)
        check(st == 200, "GET %s: HTTP %d %r" % (path, st, body[:300]))
        return body, hdr

    def json(self, path):
        return json.loads(self.get(path)[0])


def folded(srv, selector="{}", typ="cpu", frm="0"):
    body, _ = srv.get("/api/v1/query?type=%s&from=%s&format=folded&query=%s" % (typ, frm,
                                                                                q(selector)))
    return dict((" ".join(line.split(" ")[:-1]), int(line.split(" ")[-1]))
                for line in body.decode().splitlines())


def ms(s_):
    return "%d" % (s_ * 1000)


# ---- native frames of a fixture ------------------------------------------------


def nm_address(path, name):
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) [tT] %s$" % re.escape(name), out, re.M)
    check(m, "no %s in %s" % (name, path))
    return int(m.group(1), 16)


def upload_executable(srv, path, bid):
    """PUT path to srv as the executable of build ID bid."""
    with open(path, "rb") as f:
        st, body, _ = srv.request("PUT", "/api/v1/artifacts/%s/executable" % bid, f.read(),
                                  {"Authorization": "Bearer " + srv.token})
    check(st in (200, 201), "upload: %d %r" % (st, body))


def raw_profile(path, bid, fn_names, time_ns):
    base = 0x555555554000
    p = Profile(time_ns=time_ns, duration_ns=10 * SEC)
    m = p.mapping(base, base + 0x100000, 0, path, build_id=bid)
    stack = [(m, base + nm_address(path, n) + 1) for n in fn_names]
    p.sample(stack, [7, 70_000_000])
    p.sample(["main_named", "leaf_named"], [3, 30_000_000])
    return p.encode(gzip=True)


# ---- OTLP ---------------------------------------------------------------------------


def otlp_stubs():
    """The project's OTLP messages (wire/otlp/*.proto) as Python modules,
    generated once a run by protoc; Debian's python3-protobuf reads them."""
    if hasattr(otlp_stubs, "cache"):
        return otlp_stubs.cache
    if not shutil.which("protoc"):
        skip(packages.missing("protoc"))
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        skip(packages.missing("/usr/lib/python3/dist-packages/google/protobuf",
                              "no google.protobuf in " + sys.executable))
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "wire", "otlp")
    out = os.path.join(TMP, "otlp_py")
    os.makedirs(out, exist_ok=True)
    protos = sorted(f for f in os.listdir(src) if f.endswith(".proto"))
    subprocess.run(["protoc", "--proto_path=" + src, "--python_out=" + out] + protos, check=True)
    sys.path.insert(0, out)
    import otlp_profiles_service_pb2 as svc
    import otlp_status_pb2 as status
    otlp_stubs.cache = (svc, status)
    return otlp_stubs.cache


class OtlpRequest:
    """An ExportProfilesServiceRequest built by its dictionary's tables:
    entry 0 of each is the zero value."""

    def __init__(self, svc):
        self.msg = svc.ExportProfilesServiceRequest()
        d = self.dict = self.msg.dictionary
        d.string_table.append("")
        for t in (d.mapping_table, d.location_table, d.function_table, d.attribute_table,
                  d.stack_table, d.link_table):
            t.add()

    def s(self, text):
        st = self.dict.string_table
        if text not in st:
            st.append(text)
        return list(st).index(text)

    def mapping(self, start, limit, filename, gnu_build_id=None, htlhash=None, file_offset=0):
        """A mapping naming its file by the build IDs given (htlhash: the
        eBPF profiler's file ID, 32 hex digits, sent as a string)."""
        attrs = []
        for kind, value in (("gnu", gnu_build_id), ("htlhash", htlhash)):
            if value is not None:
                a = self.dict.attribute_table.add(
                    key_strindex=self.s("process.executable.build_id." + kind))
                a.value.string_value = value
                attrs.append(len(self.dict.attribute_table) - 1)
        self.dict.mapping_table.add(memory_start=start, memory_limit=limit,
                                    file_offset=file_offset,
                                    filename_strindex=self.s(filename),
                                    attribute_indices=attrs)
        return len(self.dict.mapping_table) - 1

    def frame_type(self, frame_type):
        """Attribute indices of a location: [profile.frame.type] or []."""
        if frame_type is None:
            return []
        a = self.dict.attribute_table.add(key_strindex=self.s("profile.frame.type"))
        a.value.string_value = frame_type
        return [len(self.dict.attribute_table) - 1]

    def native(self, mapping, address, frame_type=None):
        self.dict.location_table.add(mapping_index=mapping, address=address,
                                     attribute_indices=self.frame_type(frame_type))
        return len(self.dict.location_table) - 1

    def named(self, name, frame_type=None):
        self.dict.function_table.add(name_strindex=self.s(name),
                                     filename_strindex=self.s(name + ".c"))
        loc = self.dict.location_table.add(attribute_indices=self.frame_type(frame_type))
        loc.lines.add(function_index=len(self.dict.function_table) - 1, line=1)
        return len(self.dict.location_table) - 1

    def stack(self, leaf_first):
        self.dict.stack_table.add(location_indices=leaf_first)
        return len(self.dict.stack_table) - 1

    def profile(self, service, time_ns):
        rp = self.msg.resource_profiles.add()
        kv = rp.resource.attributes.add(key="service.name")
        kv.value.string_value = service
        kv = rp.resource.attributes.add(key="process.pid")
        kv.value.int_value = 4242
        p = rp.scope_profiles.add().profiles.add()
        p.sample_type.type_strindex = self.s("samples")
        p.sample_type.unit_strindex = self.s("count")
        p.period_type.type_strindex = self.s("cpu")
        p.period_type.unit_strindex = self.s("nanoseconds")
        p.period = 50_000_000
        p.time_unix_nano = time_ns
        p.duration_nano = 10 * SEC
        return p

    def encode(self, gz=False):
        data = self.msg.SerializeToString()
        return gzip.compress(data) if gz else data


def otlp_post(srv, data, token=None, headers=None):
    h = {"Content-Type": "application/x-protobuf"}
    if token is not False:
        h["Authorization"] = "Bearer " + (token or srv.token)
    h.update(headers or {})
    return srv.request("POST", "/v1development/profiles", data, h)


def otlp_sample_request(svc, exe, bid, time_ns, services=("ts", "values", "both")):
    """Native frames of exe (main -> helper_digest_points) and a named
    kernel frame under them, in the three sample shapes, one profile
    (and service) each: 5 timestamps; values 7; values 3+4 with two
    timestamps."""
    r = OtlpRequest(svc)
    base = 0x555555554000
    m = r.mapping(base, base + 0x100000, "/usr/bin/c_O2_pie", bid)
    main = r.native(m, base + nm_address(exe, "main") + 1)
    helper = r.native(m, base + nm_address(exe, "helper_digest_points") + 1)
    kernel = r.named("do_syscall_64")
    st = r.stack([kernel, helper, main])
    ts, values, both = (r.profile(s, time_ns) for s in services)
    ts.samples.add(stack_index=st, timestamps_unix_nano=[time_ns + i for i in range(5)])
    values.samples.add(stack_index=st, values=[7])
    both.samples.add(stack_index=st, values=[3, 4], timestamps_unix_nano=[time_ns, time_ns + 1])
    return r


def otlp_folded(srv, service):
    sel = '{service_name="%s"}' % service
    types = [t["id"] for t in srv.json("/api/v1/profile-types?from=0&query=" + q(sel))["types"]]
    check(len(types) == 1, "types of %s: %r" % (service, types))
    return folded(srv, sel, q(types[0]))


# ---- OTLP/gRPC ----------------------------------------------------------------------


OTLP_GRPC_PATH = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"


def grpc_module():
    try:
        import grpc
    except ImportError:
        skip(packages.missing("/usr/lib/python3/dist-packages/grpc",
                              "no grpc in " + sys.executable))
    return grpc


class GrpcServer(Server):
    """The server with OTLP/gRPC on a free loopback port (self.grpc_addr)."""

    def __init__(self, args=()):
        super().__init__(["--otlp-grpc-listen", "127.0.0.1:0"] + list(args))
        pat = r"OTLP/gRPC on 127\.0\.0\.1:(\d+)"  # said before the HTTP address
        m = [re.search(pat, line) for line in self.out if re.search(pat, line)]
        m = m[0] if m else self.await_line(pat, "OTLP/gRPC address")
        self.grpc_port = int(m.group(1))
        self.grpc_addr = "127.0.0.1:%d" % self.grpc_port

    def export(self, req, token=None, raw=False, compression=None, timeout=30,
               path=OTLP_GRPC_PATH):
        """Export req (a message, or bytes with raw) on a new channel:
        the ExportProfilesServiceResponse, or grpc.RpcError raised."""
        grpc = grpc_module()
        svc, _ = otlp_stubs()
        md = () if token is False else (("authorization", "Bearer " + (token or self.token)),)
        with grpc.insecure_channel(self.grpc_addr) as ch:
            fn = ch.unary_unary(path, request_serializer=(lambda b: b) if raw else
                                svc.ExportProfilesServiceRequest.SerializeToString,
                                response_deserializer=svc.ExportProfilesServiceResponse.FromString)
            return fn(req, metadata=md, compression=compression, timeout=timeout)

    def refused(self, code, text, req, **kw):
        grpc = grpc_module()
        try:
            self.export(req, **kw)
        except grpc.RpcError as e:
            check(e.code() == code and text in e.details(),
                  "%s %r, not %s %r" % (e.code(), e.details(), code, text))
            return e
        raise AssertionError("not refused: want %s %r" % (code, text))


# ---- the runner --------------------------------------------------------------------


def run_case(prefix, cases):
    """Run CASE (a test_NAME__ function of cases, a module's globals),
    then stop every server and child and remove TMP."""
    ember_test.run_case(CASE, prefix, cases, TMP, CHILDREN)
