#!/usr/bin/env python3
"""OTLP's native and typed frames end to end (issue 24): each location's
profile.frame.type kept through the store to the JSON tree, the top table
and the pprof output; native frames of a position-independent binary whose
text segment's file offset differs from its address named alike from an
OTLP request in the eBPF profiler's convention (mapping bounds and
addresses in the file's virtual address space) and from a pprof push with
process addresses at a random load base.

    test_otlp_frames.py EMBER FIXTURES_DIR CASE"""
import json
import os
import random
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiles_test import (FIX, NOW_S, SEC, TMP, OtlpRequest, Server, check,  # noqa: E402
                           nm_address, otlp_post, otlp_stubs, q, run_case)
import ember_test  # noqa: E402
import packages  # noqa: E402
from ember_test import Profile  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour


def query(srv, service, fmt):
    """The query answer for service's one profile type, in format fmt."""
    sel = '{service_name="%s"}' % service
    types = [t["id"] for t in srv.json("/api/v1/profile-types?from=0&query=" + q(sel))["types"]]
    check(len(types) == 1, "types of %s: %r" % (service, types))
    body, _ = srv.get("/api/v1/query?type=%s&from=0&format=%s&query=%s" % (q(types[0]), fmt,
                                                                           q(sel)))
    return body


def tree_nodes(srv, service):
    """name -> the JSON tree's node (the first of that name, depth first)."""
    nodes, todo = {}, [json.loads(query(srv, service, "json"))["tree"]]
    while todo:
        n = todo.pop()
        nodes.setdefault(n["name"], n)
        todo.extend(reversed(n.get("children", [])))
    return nodes


def upload(srv, exe, bid):
    with open(exe, "rb") as f:
        st, body, _ = srv.request("PUT", "/api/v1/artifacts/%s/executable" % bid, f.read(),
                                  {"Authorization": "Bearer " + srv.token})
    check(st in (200, 201), "upload: %d %r" % (st, body))


# ---- profile.frame.type ---------------------------------------------------------------


def test_otlp_frames__frame_type_kept_per_frame():
    """Native frames (symbolized at ingest) keep "native", a named kernel
    frame "kernel", a frame without the attribute has none; the JSON tree,
    the top table and the pprof output (which go tool pprof reads, and
    which Ember reads back with the types) show them."""
    go = ember_test.need("go")
    svc, _ = otlp_stubs()
    exe = os.path.join(FIX, "c_O2_pie")
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    srv = Server()
    upload(srv, exe, bid)
    r = OtlpRequest(svc)
    base = 0x555555554000
    m = r.mapping(base, base + 0x100000, "/usr/bin/c_O2_pie", bid)
    main = r.native(m, base + nm_address(exe, "main") + 1, "native")
    helper = r.native(m, base + nm_address(exe, "helper_digest_points") + 1, "native")
    kernel = r.named("do_syscall_64", "kernel")
    plain = r.named("untyped_leaf")
    hot, other = r.stack([kernel, helper, main]), r.stack([plain, main])
    p = r.profile("frames", T0)
    p.samples.add(stack_index=hot, timestamps_unix_nano=[T0 + i for i in range(5)])
    p.samples.add(stack_index=other, timestamps_unix_nano=[T0 + 9, T0 + 10])
    st, body, _ = otlp_post(srv, r.encode())
    check(st == 200, "export: HTTP %d %r" % (st, body[:300]))
    want = {"main": "native", "helper_digest_points": "native", "do_syscall_64": "kernel",
            "untyped_leaf": None}
    nodes = tree_nodes(srv, "frames")
    got = {name: nodes.get(name, {}).get("frame_type") for name in want}
    check(got == want, "JSON tree's frame types: %r\n%r" % (got, nodes))
    check(nodes["helper_digest_points"].get("file", "").endswith(".c"), "not symbolized")
    rows = {row["name"]: row for row in json.loads(query(srv, "frames", "top"))["rows"]}
    got = {name: rows[name].get("frame_type") for name in want}
    check(got == want, "top table's frame types: %r" % got)
    pprof = query(srv, "frames", "pprof")
    path = os.path.join(TMP, "frames.pb.gz")
    with open(path, "wb") as f:
        f.write(pprof)
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"),
               PPROF_TMPDIR=os.path.join(TMP, "pprof"))
    g = subprocess.run([go, "tool", "pprof", "-top", "-symbolize=none", path],
                       capture_output=True, text=True, env=env, timeout=180)
    check(g.returncode == 0 and re.search(r"\b5\s+71\.43%.*do_syscall_64", g.stdout),
          "go tool pprof -top: %s %s" % (g.stdout, g.stderr[-2000:]))
    srv.push_ok(pprof, "service_name=again")  # the pprof output carries the types
    nodes = tree_nodes(srv, "again")
    got = {name: nodes.get(name, {}).get("frame_type") for name in want}
    check(got == want, "frame types of the pprof output pushed back: %r" % got)


# ---- native addresses in the file's or the process's address space ---------------------------

SHIFTED_C = r"""
__attribute__((noinline)) int frames_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int frames_mid(int x)
{
	return frames_leaf(x) + 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	return frames_mid(argc);
}
"""


def text_segment(exe):
    """(p_offset, p_vaddr, p_filesz) of exe's executable PT_LOAD (readelf -l)."""
    out = subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            return int(f[1], 16), int(f[2], 16), int(f[4], 16)
    check(False, "no executable PT_LOAD in %s:\n%s" % (exe, out))
    return None


def shifted_pie():
    """A stripped PIE (and its debug file beside it, by .gnu_debuglink)
    whose text segment's file offset is not its address: the linker puts
    the first segment at 0x10000 (-Ttext-segment), every address past its
    offset by that much.  The unstripped copy answers nm."""
    gcc = ember_test.need("gcc")
    ember_test.need("objcopy")
    d = os.path.join(TMP, "shifted")
    os.makedirs(d)
    src, full, exe = (os.path.join(d, n) for n in ("frames.c", "frames.full", "frames"))
    with open(src, "w") as f:
        f.write(SHIFTED_C)
    subprocess.run([gcc, "-g", "-O1", "-fPIE", "-pie", "-Wl,--build-id",
                    "-Wl,-Ttext-segment=0x10000", "-o", full, src], check=True)
    subprocess.run(["objcopy", "--only-keep-debug", full, exe + ".debug"], check=True)
    subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + exe + ".debug", full,
                    exe], check=True, cwd=d)
    off, vaddr, size = text_segment(exe)
    check(off != vaddr, "text segment at offset 0x%x, address 0x%x: not shifted" % (off, vaddr))
    return full, exe, (off, vaddr, size)


def test_otlp_frames__native_frames_of_a_shifted_pie_in_both_conventions():
    """The same functions and lines from an OTLP request whose mapping and
    addresses are the file's virtual addresses (the eBPF profiler's
    libpf/trace.go: FrameMappingData Start/End, Frame.AddressOrLineno) and
    from a pprof push with process addresses at a random load base, the
    stripped binary's debug file uploaded by `ember upload`."""
    svc, _ = otlp_stubs()
    full, exe, (off, vaddr, size) = shifted_pie()
    bid = packages.build_id(exe)
    check(bid, "no build ID in " + exe)
    srv = Server()
    up = subprocess.run([srv.ember, "upload", "--server", srv.url, "--token", srv.token, exe],
                        capture_output=True, text=True, timeout=60)
    check(up.returncode == 0, "ember upload: %s %s" % (up.stdout, up.stderr))
    page = 0x1000
    map_off = off & ~(page - 1)  # as /proc/PID/maps gives it
    map_va = vaddr - (off - map_off)
    length = (off + size - map_off + page - 1) & ~(page - 1)
    leaf, mid = nm_address(full, "frames_leaf"), nm_address(full, "frames_mid")
    main = nm_address(full, "main")
    # the profiler's convention: the file's virtual addresses
    r = OtlpRequest(svc)
    m = r.mapping(map_va, map_va + length, "/opt/frames", bid, file_offset=map_off)
    st = r.stack([r.native(m, leaf + 1, "native"), r.native(m, mid + 5, "native"),
                  r.native(m, main + 5, "native")])
    r.profile("file_va", T0).samples.add(stack_index=st, timestamps_unix_nano=[T0, T0 + 1])
    status, body, _ = otlp_post(srv, r.encode())
    check(status == 200, "export: HTTP %d %r" % (status, body[:300]))
    # a process's addresses: loaded at a random page-aligned bias
    bias = random.randrange(0x5500_0000_0000, 0x5600_0000_0000, page)
    p = Profile(types=[("samples", "count")], time_ns=T0, duration_ns=10 * SEC)
    pm = p.mapping(bias + map_va, bias + map_va + length, map_off, "/opt/frames", build_id=bid)
    p.sample([(pm, bias + main + 5), (pm, bias + mid + 5), (pm, bias + leaf + 1)],
             [2])
    a = srv.push_ok(p.encode(gzip=True), "service_name=process_va")
    check(a["resolved_samples"] == 2 and a["unresolved"] == [], "pprof push: %r" % a)
    stack = ["main", "frames_mid", "frames_leaf"]
    for service in ("file_va", "process_va"):
        nodes = tree_nodes(srv, service)
        got = [(n, nodes.get(n, {}).get("file", ""), nodes.get(n, {}).get("line"))
               for n in stack]
        check(all(f.endswith("frames.c") and ln for _, f, ln in got),
              "%s: not named by function, file and line: %r" % (service, sorted(nodes)))
        check(json.loads(query(srv, service, "json"))["total"] == 2, service + ": total")
        if service == "file_va":
            want = got
        check(got == want, "%s names other lines than file_va: %r vs %r" % (service, got, want))


if __name__ == "__main__":
    run_case("test_otlp_frames__", globals())
