#!/usr/bin/env python3
"""Generate and build a C++ program with about 100 MB of DWARF.

    bench/coldstart/make-big.py OUTDIR [--units N] [--funcs M]

Writes N translation units of M functions each (templates, inlined
helpers, std::map/std::string/std::vector: libstdc++'s types are repeated
in every unit's DWARF, as in real C++ programs without dwz), compiles them
with g++ -O2 -g in parallel and links OUTDIR/big.  Skips the build when
OUTDIR/big exists and is newer than this script.  Prints the DWARF size.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys


def unit(u, funcs):
    out = ["#include <algorithm>", "#include <map>", "#include <string>", "#include <vector>",
           "#include <unordered_map>", "#include <memory>", "#include <functional>",
           "namespace u%d {" % u,
           "template <int K> struct Acc { static inline int step(int x) "
           "{ return x * (K + 3) ^ (x >> (K % 7 + 1)); } };",
           "struct Node { std::string name; std::vector<int> v; std::shared_ptr<Node> next; };"]
    for j in range(funcs):
        out.append("static inline int leaf%d(int x) { return Acc<%d>::step(x) + %d; }" % (j, j, j))
        out.append("static inline int mid%d(int x) { return leaf%d(x) * 3 + leaf%d(x >> 1); }"
                   % (j, j, j))
        out.append(
            "__attribute__((noinline)) int fn%d(const std::vector<int> &v, "
            "std::map<std::string, int> &m, std::unordered_map<int, Node> &h) {\n"
            "  int s = 0;\n"
            "  for (int x : v) s += mid%d(x);\n"
            "  std::sort(h[s %% 7].v.begin(), h[s %% 7].v.end());\n"
            "  std::function<int(int)> f = [&](int y) { return y + s + %d; };\n"
            "  m[std::to_string(s)] += f(s);\n"
            "  return s;\n}" % (j, j, j))
    out.append("int entry(const std::vector<int> &v) {")
    out.append("  std::map<std::string, int> m; std::unordered_map<int, Node> h; int s = 0;")
    for j in range(funcs):
        out.append("  s += fn%d(v, m, h);" % j)
    out.append("  return s + (int)m.size(); }")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--units", type=int, default=240)
    ap.add_argument("--funcs", type=int, default=60)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    big = os.path.join(a.outdir, "big")
    if os.path.exists(big) and os.path.getmtime(big) > os.path.getmtime(__file__):
        print("big: exists", file=sys.stderr)
        return 0
    srcs = []
    for u in range(a.units):
        p = os.path.join(a.outdir, "u%d.cpp" % u)
        open(p, "w").write(unit(u, a.funcs))
        srcs.append(p)
    main_src = os.path.join(a.outdir, "main.cpp")
    with open(main_src, "w") as f:
        f.write("#include <vector>\n")
        for u in range(a.units):
            f.write("namespace u%d { int entry(const std::vector<int> &); }\n" % u)
        f.write("int main(int argc, char **) { std::vector<int> v(argc, 3); int s = 0;\n")
        for u in range(a.units):
            f.write("  s += u%d::entry(v);\n" % u)
        f.write("  return s & 1; }\n")
    srcs.append(main_src)

    def cc(src):
        obj = src[:-4] + ".o"
        subprocess.run(["g++", "-O2", "-g", "-c", src, "-o", obj], check=True)
        return obj

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        objs = list(ex.map(cc, srcs))
    subprocess.run(["g++", "-Wl,--build-id=sha1", "-o", big] + objs, check=True)
    for o in objs:
        os.unlink(o)
    out = subprocess.run(["readelf", "-SW", big], capture_output=True, text=True).stdout
    dwarf = sum(int(l.split("]", 1)[1].split()[4], 16) for l in out.splitlines()
                if "] .debug_" in l)
    print("big: %.1f MB of DWARF" % (dwarf / 1e6), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
