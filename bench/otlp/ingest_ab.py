#!/usr/bin/env python3
"""ingest_ab.py - OTLP ingest against pprof ingest of the same content, on
one real `ember serve`, symbolization included: the server's CPU time a
profile for each way in, interleaved A/B in one run.

    ingest_ab.py EMBER BINARY PROFILES_DIR [N] [ROUNDS]

PROFILES_DIR holds the raw-address CPU profiles `pstore-ingest-bench -w`
writes (10-second Go-style profiles, 1,500 samples over 400 stacks of
BINARY's functions, one mapping with BINARY's build ID).  Each is kept
with one sample type (cpu/nanoseconds: an OTLP profile has one) and
written both ways, gzip'd as senders send them:
  pprof      POST /api/v1/profiles (the profile with that one column)
  otlp       POST /v1development/profiles, protobuf: an
             ExportProfilesServiceRequest with the same mapping, locations,
             stacks and values, the labels as resource attributes
  otlp_json  the same request in OTLP's JSON encoding, when the server
             takes it (not 415)
  otlp_grpc  the same request through ProfilesService/Export, when the
             server has --otlp-grpc-listen and python3-grpcio is there
BINARY is uploaded first and one body of each way ingested before the
clock starts.  Each round pushes N bodies (default 200) of each way in
turn, the order rotated a round, over one connection, and reads the
server's CPU time (utime + stime of /proc/PID/stat) around each: profiles
a second per core = N / CPU seconds.  Prints "name value" lines and, at
the end, each way's median and its ratio to pprof's median.
Needs Debian's python3-protobuf (run it with /usr/bin/python3) and protoc.
"""
import gzip
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EMBER, BINARY, PDIR = sys.argv[1:4]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 200
ROUNDS = int(sys.argv[5]) if len(sys.argv) > 5 else 5
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TMP = tempfile.mkdtemp(prefix="ember-otlp-bench.")
PPROF_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
GRPC_PATH = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"


def stubs():
    out = os.path.join(TMP, "py")
    os.makedirs(out)
    src = os.path.join(ROOT, "wire", "otlp")
    protos = sorted(f for f in os.listdir(src) if f.endswith(".proto"))
    subprocess.run(["protoc", "--proto_path=" + src, "--python_out=" + out] + protos, check=True)
    subprocess.run(["protoc", "--proto_path=" + os.path.dirname(PPROF_PROTO),
                    "--python_out=" + out, PPROF_PROTO], check=True)
    sys.path.insert(0, out)
    import otlp_profiles_service_pb2
    import profile_pb2
    return otlp_profiles_service_pb2, profile_pb2


def one_column(p, col):
    """p with sample type col only."""
    st = p.sample_type[col]
    del p.sample_type[:]
    p.sample_type.add(type=st.type, unit=st.unit)
    for s in p.sample:
        v = s.value[col]
        del s.value[:]
        s.value.append(v)
    return p


def to_otlp(svc, p, pod):
    """The pprof profile p as an OTLP request of one profile."""
    r = svc.ExportProfilesServiceRequest()
    d = r.dictionary
    strings = {"": 0}
    d.string_table.append("")

    def s(text):
        if text not in strings:
            strings[text] = len(d.string_table)
            d.string_table.append(text)
        return strings[text]

    for t in (d.mapping_table, d.location_table, d.function_table, d.attribute_table,
              d.stack_table, d.link_table):
        t.add()
    mapping_ix, function_ix, location_ix = {}, {}, {}
    for m in p.mapping:
        a = d.attribute_table.add(key_strindex=s("process.executable.build_id.gnu"))
        a.value.string_value = p.string_table[m.build_id]
        d.mapping_table.add(memory_start=m.memory_start, memory_limit=m.memory_limit,
                            file_offset=m.file_offset,
                            filename_strindex=s(p.string_table[m.filename]),
                            attribute_indices=[len(d.attribute_table) - 1])
        mapping_ix[m.id] = len(d.mapping_table) - 1
    for f in p.function:
        d.function_table.add(name_strindex=s(p.string_table[f.name]),
                             filename_strindex=s(p.string_table[f.filename]))
        function_ix[f.id] = len(d.function_table) - 1
    for loc in p.location:
        o = d.location_table.add(mapping_index=mapping_ix.get(loc.mapping_id, 0),
                                 address=loc.address)
        for ln in loc.line:
            o.lines.add(function_index=function_ix[ln.function_id], line=ln.line)
        location_ix[loc.id] = len(d.location_table) - 1
    rp = r.resource_profiles.add()
    for k, v in (("service.name", "bench"), ("host.name", pod)):
        kv = rp.resource.attributes.add(key=k)
        kv.value.string_value = v
    op = rp.scope_profiles.add().profiles.add()
    op.sample_type.type_strindex = s(p.string_table[p.sample_type[0].type])
    op.sample_type.unit_strindex = s(p.string_table[p.sample_type[0].unit])
    op.period_type.type_strindex = s(p.string_table[p.period_type.type])
    op.period_type.unit_strindex = s(p.string_table[p.period_type.unit])
    op.period = p.period
    op.time_unix_nano = p.time_nanos
    op.duration_nano = p.duration_nanos
    stacks = {}
    for smp in p.sample:
        key = tuple(location_ix[i] for i in smp.location_id)
        if key not in stacks:
            d.stack_table.add(location_indices=list(key))
            stacks[key] = len(d.stack_table) - 1
        op.samples.add(stack_index=stacks[key], values=list(smp.value))
    return r


def to_json(msg):
    from google.protobuf import json_format
    return json_format.MessageToJson(msg, indent=None).encode()


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def start_server(grpc_port):
    args = [EMBER, "serve", "--listen", "127.0.0.1:0", "--data", os.path.join(TMP, "data"),
            "--log-level", "warn"]
    if grpc_port:
        args += ["--otlp-grpc-listen", "127.0.0.1:%d" % grpc_port]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE)
    port = None
    while port is None:
        line = proc.stdout.readline().decode()
        if not line and proc.poll() is not None:
            sys.exit("ember serve exited")
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        port = int(m.group(1)) if m else None
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return proc, port
        except OSError:
            pass
        time.sleep(0.05)


def main():
    svc, pprof = stubs()
    files = sorted(f for f in os.listdir(PDIR) if f.endswith(".pb.gz"))
    bodies = {"pprof": [], "otlp": [], "otlp_json": []}
    msgs = []
    for i, f in enumerate(files):
        p = pprof.Profile()
        p.ParseFromString(gzip.decompress(open(os.path.join(PDIR, f), "rb").read()))
        one_column(p, len(p.sample_type) - 1)
        pod = "p%02d" % (i % 20)
        bodies["pprof"].append((pod, gzip.compress(p.SerializeToString(), 1)))
        m = to_otlp(svc, p, pod)
        msgs.append(m)
        bodies["otlp"].append((pod, gzip.compress(m.SerializeToString(), 1)))
        bodies["otlp_json"].append((pod, gzip.compress(to_json(m), 1)))
    help_text = subprocess.run([EMBER, "serve", "--help"], capture_output=True, text=True)
    grpc_port = None
    try:
        import grpc
        if "--otlp-grpc-listen" in help_text.stdout + help_text.stderr:
            grpc_port = free_port()
    except ImportError:
        grpc = None
    proc, port = start_server(grpc_port)
    try:
        token = open(os.path.join(TMP, "data", "token")).read().strip()
        bid = subprocess.run(["readelf", "-n", BINARY], capture_output=True,
                             text=True).stdout.split("Build ID: ")[1].split()[0]
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        c.request("PUT", "/api/v1/artifacts/%s/executable" % bid, open(BINARY, "rb").read(),
                  {"Authorization": "Bearer " + token})
        c.getresponse().read()

        def post(path, body, ctype, labels=""):
            h = {"Authorization": "Bearer " + token, "Content-Encoding": "gzip"}
            if ctype:
                h["Content-Type"] = ctype
            c.request("POST", path + labels, body, h)
            r = c.getresponse()
            return r.status, r.read()

        ways = {
            "pprof": lambda pod, b: post("/api/v1/profiles", b, None,
                                         "?service_name=bench&host_name=" + pod),
            "otlp": lambda pod, b: post("/v1development/profiles", b, "application/x-protobuf"),
            "otlp_json": lambda pod, b: post("/v1development/profiles", b, "application/json"),
        }
        if grpc_port:
            ch = grpc.insecure_channel("127.0.0.1:%d" % grpc_port)
            export = ch.unary_unary(GRPC_PATH,
                                    request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=lambda b: b)

            def grpc_way(i, _b):
                export(msgs[i], metadata=(("authorization", "Bearer " + token),),
                       compression=grpc.Compression.Gzip, timeout=60)
                return 200, b""
            ways["otlp_grpc"] = grpc_way
            bodies["otlp_grpc"] = [(i, None) for i in range(len(msgs))]
        for name in list(ways):
            st, body = ways[name](*bodies[name][0])
            if st != 200:
                print("# %s: not measured (HTTP %d %r)" % (name, st, body[:120]))
                del ways[name]
        # every frame of what was stored is named: symbolization was measured
        c.request("GET", "/api/v1/coverage?from=0")
        cov = c.getresponse().read().decode()
        assert '"build_ids":[]' in cov and '"resolved_pct":100.0' in cov, cov[:300]
        names = list(ways)
        per = {n: [] for n in names}
        k = 1
        for rnd in range(ROUNDS):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for name in order:
                c0 = cpu_s(proc.pid)
                for _ in range(N):
                    st, body = ways[name](*bodies[name][k % len(bodies[name])])
                    assert st == 200, (name, st, body[:200])
                    k += 1
                rate = N / max(cpu_s(proc.pid) - c0, 1e-9)
                per[name].append(rate)
                print("%s_profiles_per_core_s %.1f" % (name, rate))
        base = statistics.median(per["pprof"])
        print("# medians over %d rounds of %d profiles (load %s)" %
              (ROUNDS, N, open("/proc/loadavg").read().split()[0]))
        for name in names:
            med = statistics.median(per[name])
            print("%s median %.1f profiles/s per core (min %.1f, max %.1f), %.2fx pprof" %
                  (name, med, min(per[name]), max(per[name]), med / base))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
