#!/usr/bin/env python3
"""POST /ingest?format=jfr end to end (wire/jfr.h, api/pyroscope_ingest.c):
recordings made here by Debian's OpenJDK 17 (`java -XX:StartFlightRecording`
with the profile settings) of tests/profiles/java/Busy.java, a program with
a known hot chain (Busy.main -> Busy.outer -> Busy.hot) that also
allocates, contends on a monitor and parks, pushed as Pyroscope's Java
agent sends them (the body, or a multipart form of the jfr field and a
labels field), and hostile recordings refused with a reason."""
import gzip
import os
import struct
import subprocess
import sys
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiles_test import CASE, TMP, Server, check, folded, q, run_case, skip  # noqa: E402,F401
import packages  # noqa: E402
from ember_test import pb_fields, read_varint  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EVENTS = ("jdk.ObjectAllocationInNewTLAB#enabled=true,"
          "+jdk.ObjectAllocationOutsideTLAB#enabled=true")


def record(ms=3000):
    """A recording of Busy running ms milliseconds (the profile settings,
    with the TLAB allocation events on too)."""
    java, javac = packages.which("java"), packages.which("javac")
    if not java or not javac:
        skip(packages.missing("javac" if java else "java"))
    classes = os.path.join(TMP, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "java", "Busy.java")],
                   check=True)
    out = os.path.join(TMP, "busy.jfr")
    r = subprocess.run([java, "-cp", classes,
                        "-XX:StartFlightRecording=settings=profile,+%s,filename=%s" % (EVENTS, out),
                        "Busy", str(ms)], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and os.path.exists(out), "java: %r" % r.stderr[-2000:])
    with open(out, "rb") as f:
        return f.read()


def ingest(srv, data, name="busy", headers=None, params="&sampleRate=100&spyName=javaspy"):
    h = {"Content-Type": "application/octet-stream"}
    h.update(headers or {})
    return srv.push(data, path="/ingest?format=jfr&name=%s%s" % (q(name), params), headers=h)


def types_of(srv, selector):
    return sorted(t["id"] for t in
                  srv.json("/api/v1/profile-types?from=0&query=" + q(selector))["types"])


def cpu_type(srv, selector):
    cpu = [t for t in types_of(srv, selector) if t.startswith("process_cpu:")]
    check(len(cpu) == 1, "CPU types: %r" % types_of(srv, selector))
    return cpu[0]


def node_at(tree, chain):
    """The node at the end of chain (root first) in a JSON tree."""
    node = tree
    for name in chain:
        kids = [c for c in node.get("children", []) if c["name"] == name]
        check(kids, "no %s under %s: %r" % (name, node.get("name"),
                                              [c["name"] for c in node.get("children", [])]))
        node = kids[0]
    return node


def leaf_lines(pprof, name):
    """The lines of the frames of function name that are a sample's leaf
    in a pprof (profile.proto: sample 2 (location_id 1), location 4 (id 1,
    line 4: function_id 1, line 2), function 5 (id 1, name 2), strings 6)."""
    strings, funcs, locs, leaves = [], {}, {}, set()
    for f, v in pb_fields(pprof):
        if f == 6:
            strings.append(v.decode())
        elif f == 5:
            d = dict(pb_fields(v))
            funcs[d.get(1, 0)] = d.get(2, 0)
        elif f == 4:
            d = dict((k, w) for k, w in pb_fields(v) if k == 1)
            lines = [dict(pb_fields(w)) for k, w in pb_fields(v) if k == 4]
            locs[d.get(1, 0)] = [(ln.get(1, 0), ln.get(2, 0)) for ln in lines]
        elif f == 2:
            ids = [w for k, w in pb_fields(v) if k == 1]
            if ids and isinstance(ids[0], bytes):  # packed
                ids, pos, raw = [], 0, ids[0]
                while pos < len(raw):
                    i, pos = read_varint(raw, pos)
                    ids.append(i)
            if ids:
                leaves.add(ids[0])
    return {line for lid in leaves for fid, line in locs.get(lid, [])
            if strings[funcs.get(fid, 0)] == name}


# ---- the recording pushed as is ------------------------------------------------------


def test_jfr__cpu_profile_shows_the_hot_chain_with_lines():
    data = record()
    srv = Server()
    st, body, _ = ingest(srv, data, "busy{env=test}")
    check(st == 200, "ingest: HTTP %d %r" % (st, body[:400]))
    sel = '{service_name="busy",env="test"}'
    stacks = folded(srv, sel, q(cpu_type(srv, sel)))
    # the main thread's own samples: its hot chain leads them. Across
    # threads no order holds: the three workers' allocation loops may take
    # more of two loaded cores than the main thread does
    main = {k: v for k, v in stacks.items() if k.startswith("Busy.main")}
    check(main, "no sample of the main thread: %r" % stacks)
    top = max(main, key=main.get)
    check(top == "Busy.main;Busy.outer;Busy.hot", "top stack %r of %r" % (top, stacks))
    # 100 Hz: each sample counts 10 ms of CPU
    check(all(v % 10_000_000 == 0 for v in stacks.values()), stacks)
    check(stacks[top] >= 200_000_000, "20 samples of the main thread at least: %d" % stacks[top])
    # line numbers come from the recording: Busy.outer's call of hot (the
    # JSON tree gives a node's line when all its frames share it), and
    # Busy.hot's body in the stored pprof (its frames are at several lines)
    src = open(os.path.join(HERE, "java", "Busy.java")).read().splitlines()
    at = [i + 1 for i, s_ in enumerate(src) if "sink += hot(n)" in s_]
    t = srv.json("/api/v1/query?type=%s&from=0&format=json&query=%s" %
                 (q(cpu_type(srv, sel)), q(sel)))
    outer = node_at(t.get("tree", t), ["Busy.main", "Busy.outer"])
    check(outer.get("line") == at[0], "Busy.outer at line %r, not %r" % (outer.get("line"), at))
    body, _ = srv.get("/api/v1/query?type=%s&from=0&format=pprof&query=%s" %
                      (q(cpu_type(srv, sel)), q(sel)))
    first = [i + 1 for i, s_ in enumerate(src) if "static long hot(" in s_][0]
    body_lines = set(range(first + 1, first + 6))  # its body, to "return x;"
    check(src[first + 4].strip() == "return x;", src[first:first + 5])
    lines = leaf_lines(gzip.decompress(body), "Busy.hot")
    check(lines and lines <= body_lines, "Busy.hot at lines %r, its body is lines %r" %
          (lines, sorted(body_lines)))


def test_jfr__allocation_lock_and_park_types():
    data = record()
    srv = Server()
    st, body, _ = ingest(srv, data)
    check(st == 200, "ingest: HTTP %d %r" % (st, body[:400]))
    sel = '{service_name="busy"}'
    types = types_of(srv, sel)
    for want in ("memory:alloc_in_new_tlab_objects:count:space:bytes",
                 "memory:alloc_in_new_tlab_bytes:bytes:space:bytes",
                 "memory:alloc_outside_tlab_bytes:bytes:space:bytes",
                 "memory:alloc_sample_objects:count:space:bytes",
                 "memory:alloc_sample_bytes:bytes:space:bytes",
                 "mutex:contentions:count:mutex:count", "mutex:delay:nanoseconds:mutex:count",
                 "block:contentions:count:block:count", "block:delay:nanoseconds:block:count"):
        check(want in types, "%s not in %r" % (want, types))
    alloc = folded(srv, sel, q("memory:alloc_sample_objects:count:space:bytes"))
    check(any(s_.endswith("Busy.allocate") for s_ in alloc), "allocations: %r" % alloc)
    delay = folded(srv, sel, q("mutex:delay:nanoseconds:mutex:count"))
    waits = sum(v for s_, v in delay.items() if s_.endswith("Busy.contend"))
    # each wait is past JFR's 10 ms threshold: delays are in ns, not ticks
    count = sum(v for s_, v in folded(srv, sel, q("mutex:contentions:count:mutex:count")).items()
                if s_.endswith("Busy.contend"))
    check(count and waits >= count * 10_000_000, "monitor waits %d ns in %d" % (waits, count))
    park = folded(srv, sel, q("block:contentions:count:block:count"))
    check(any("Busy.park;" in s_ for s_ in park), "parks: %r" % park)


# ---- as Pyroscope's Java agent sends it: a form ---------------------------------------


def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    return varint(num << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)


def labels_snapshot(contexts, strings):
    """A LabelsSnapshot: contexts {id: {key id: value id}}, strings {id: text}."""
    out = b""
    for cid, pairs in contexts.items():
        ctx = b"".join(field(1, 2, field(1, 0, varint(k)) + field(2, 0, varint(v)))
                       for k, v in pairs.items())
        out += field(1, 2, field(1, 0, varint(cid)) + field(2, 2, ctx))
    for sid, text in strings.items():
        out += field(2, 2, field(1, 0, varint(sid)) + field(2, 2, text.encode()))
    return out


def form(fields):
    boundary = uuid.uuid4().hex
    body = b""
    for name, data in fields:
        body += (b"--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                 b"Content-Type: application/octet-stream\r\n\r\n" %
                 (boundary.encode(), name.encode(), name.encode())) + data + b"\r\n"
    body += b"--%s--\r\n" % boundary.encode()
    return body, {"Content-Type": "multipart/form-data; boundary=" + boundary}


def test_jfr__multipart_form_with_labels():
    data = record(2000)
    srv = Server()
    labels = labels_snapshot({1: {1: 2}}, {1: "span_name", 2: "checkout"})
    body, h = form([("jfr", gzip.compress(data)), ("labels", gzip.compress(labels))])
    st, resp, _ = ingest(srv, body, "agent{region=eu}", headers=h)
    check(st == 200, "form: HTTP %d %r" % (st, resp[:400]))
    check(b'"name":"process_cpu"' in resp and b'"name":"block"' in resp, resp)
    sel = '{service_name="agent",region="eu",pyroscope_spy="javaspy"}'
    stacks = folded(srv, sel, q(cpu_type(srv, sel)))
    check(max(stacks, key=stacks.get) == "Busy.main;Busy.outer;Busy.hot", stacks)
    # the form without its jfr field, and labels that name no string
    body, h = form([("labels", labels)])
    st, resp, _ = ingest(srv, body, "agent", headers=h)
    check(st == 400 and b"no jfr field" in resp, "no jfr: %d %r" % (st, resp[:300]))
    body, h = form([("jfr", data), ("labels", labels_snapshot({1: {1: 9}}, {1: "k"}))])
    st, resp, _ = ingest(srv, body, "agent", headers=h)
    check(st == 400 and b"string 9" in resp, "bad labels: %d %r" % (st, resp[:300]))


# ---- hostile recordings ------------------------------------------------------------------


def test_jfr__hostile_recordings_refused_with_a_reason():
    data = record(1000)
    srv = Server()
    size, cpool, meta = struct.unpack(">QQQ", data[8:32])

    def patched(off, fmt, v):
        return data[:off] + struct.pack(fmt, v) + data[off + struct.calcsize(fmt):]

    cases = [
        (data[:size // 2], b"truncated"),
        (data[:40], b"not a JFR recording"),
        (b"PK\x03\x04" + data[4:], b"not a JFR recording"),
        (patched(4, ">H", 1), b"version 1."),
        (patched(8, ">Q", 1 << 62), b"truncated or unfinished"),
        (patched(24, ">Q", size + 100), b"outside the chunk"),
        (patched(24, ">Q", 68), b"not the metadata"),
        (crafted_event_size(data, meta), b"past the chunk's end"),
        (data + b"FLR\x00" + data[4:68], b"truncated or unfinished"),
    ]
    for body, reason in cases:
        st, resp, _ = ingest(srv, body)
        check(st == 400 and reason in resp, "%r: HTTP %d %r" % (reason, st, resp[:300]))
    st, resp, _ = ingest(srv, data)  # the server still takes the real one
    check(st == 200, "after: HTTP %d %r" % (st, resp[:300]))


def crafted_event_size(data, meta):
    """The metadata event's size made as large as its bytes can say (the
    same number of bytes, so nothing else moves): past the chunk's end."""
    _, end = read_varint(data, meta)
    return data[:meta] + b"\xff" * (end - meta - 1) + b"\x7f" + data[end:]


if __name__ == "__main__":
    run_case("test_jfr__", globals())
