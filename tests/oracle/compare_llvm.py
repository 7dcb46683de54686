#!/usr/bin/env python3
"""Compare `ember symbolize` with llvm-symbolizer, the oracle.

Usage: compare_llvm.py EMBER_BIN ELF [--count N] [--seed S] [--min-agree PCT]
                      [--flags "EXTRA FLAGS"] [--symbols-from FILE]
                      [--symbols-matching REGEX] [--min-same-depth PCT]

--flags are passed to both tools (e.g. --debug-file-directory=DIR);
--symbols-from picks function addresses from another file's symbol table
(the .debug file of a stripped binary); --symbols-matching draws every
address from the function symbols whose raw name matches REGEX (e.g. "ZZ":
C++ lambdas, local classes and the templates they are passed to).

Draws N addresses from ELF (two thirds at random offsets inside function
symbols, one third uniformly over the executable sections, so padding and
gaps are covered too), runs both tools with `--inlines --output-style=JSON
--no-demangle` on stdin, and compares every frame: function linkage name,
file, line and column.  The normalizations are the legitimate differences
listed in docs/symbolizer-correctness.md:

  clone   GCC clone suffixes (.part.N, .isra.N, .constprop.N, .cold, ...)
          on the outermost frame's name;
  line0   frames at line 0 are compared by line only (LLVM prints the CU
          name as the file there);
  noname  "" and "??" are the same unknown name;
  dbgsym  where llvm-symbolizer has nothing and Ember answers from the
          .symtab of a separate debug file (llvm-symbolizer reads only the
          binary's own tables), the address is counted apart, not as a
          disagreement.

The report also gives the share of addresses answered with as many frames
as llvm-symbolizer gives ("same depth": inlined chains complete).

Exits 0 when at least --min-agree percent of frames agree (default 99.5)
and at least --min-same-depth percent of addresses have the same depth
(default 0), 1 otherwise, 77 when llvm-symbolizer is missing.  Every remaining
difference is printed with its category.
"""
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import packages  # noqa: E402

CLONE_RE = re.compile(r"(\.(part|isra|constprop|cold|lto_priv|llvm)(\.\d+)?)+$")


def exec_ranges(elf):
    out = subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True,
                         check=True).stdout
    ranges = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if m and "X" in m.group(5) and "A" in m.group(5):
            lo = int(m.group(3), 16)
            size = int(m.group(4), 16)
            if size:
                ranges.append((lo, lo + size))
    return ranges


def func_symbols(elf, matching=None):
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True,
                         check=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
            value, size = int(f[1], 16), int(f[2], 0) if f[2].startswith("0x") else int(f[2])
            if value and size and (not matching or re.search(matching, f[7])):
                syms.add((value, size))
    return sorted(syms)


def pick_addresses(elf, count, seed, symfile, matching=None):
    rng = random.Random(seed)
    ranges = exec_ranges(elf)
    syms = func_symbols(symfile or elf, matching)
    if matching and not syms:
        sys.exit("no function symbol of %s matches %r" % (symfile or elf, matching))
    addrs = []
    for i in range(count):
        if syms and (matching or i % 3 != 2):
            value, size = rng.choice(syms)
            addrs.append(value + rng.randrange(size))
        elif ranges:
            lo, hi = rng.choices(ranges, weights=[h - l for l, h in ranges])[0]
            addrs.append(rng.randrange(lo, hi))
    return addrs


def run(cmd, addrs):
    data = "".join("0x%x\n" % a for a in addrs)
    res = subprocess.run(cmd, input=data, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("%s failed (%d): %s" % (cmd[0], res.returncode, res.stderr[-2000:]))
    answers = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    if len(answers) != len(addrs):
        sys.exit("%s: %d answers for %d addresses" % (cmd[0], len(answers), len(addrs)))
    return answers


def frames(answer):
    out = []
    for s in answer.get("Symbol", []):
        name = s.get("FunctionName") or "??"
        out.append((name, s.get("FileName") or "", s.get("Line", 0), s.get("Column", 0)))
    if all(f == ("??", "", 0, 0) for f in out):
        return []
    return out


def normalize(fr, outermost):
    name, file, line, col = fr
    if outermost:
        name = CLONE_RE.sub("", name)
    if line == 0:
        file, col = "", 0
    return (name, file, line, col)


def classify(e, l):
    if e and not l:
        return "ember-only"
    if l and not e:
        return "llvm-only"
    if len(e) != len(l):
        return "depth"
    for a, b in zip(e, l):
        if a[0] != b[0]:
            return "name"
        if a[1:] != b[1:]:
            return "location"
    return "other"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    ember, elf = args[0], args[1]
    opts = {"--count": 3000, "--seed": 20261129, "--min-agree": 99.5,
            "--flags": "", "--symbols-from": "", "--symbols-matching": "",
            "--min-same-depth": 0.0}
    i = 2
    while i < len(args):
        opts[args[i]] = type(opts[args[i]])(args[i + 1])
        i += 2
    llvm = packages.which("llvm-symbolizer", "llvm-symbolizer-14")
    if not llvm:
        print("SKIP: " + packages.missing("llvm-symbolizer"))
        sys.exit(77)
    addrs = pick_addresses(elf, opts["--count"], opts["--seed"], opts["--symbols-from"],
                           opts["--symbols-matching"])
    flags = ["--inlines", "--output-style=JSON", "--no-demangle", "--obj=" + elf]
    flags += opts["--flags"].split()
    ours = run(ember.split() + flags, addrs)
    theirs = run([llvm] + flags, addrs)

    total = agree = dbgsym = depth_same = compared = 0
    diffs = []
    for addr, a, b in zip(addrs, ours, theirs):
        fa, fb = frames(a), frames(b)
        if fa and not fb and all(s.get("Source") == "symtab" for s in a["Symbol"]):
            dbgsym += 1
            continue
        na = [normalize(f, k == len(fa) - 1) for k, f in enumerate(fa)]
        nb = [normalize(f, k == len(fb) - 1) for k, f in enumerate(fb)]
        compared += 1
        depth_same += len(na) == len(nb)
        n = max(len(na), len(nb), 1)
        same = sum(1 for x, y in zip(na, nb) if x == y)
        if not na and not nb:
            same = 1
        total += n
        agree += same
        if same != n:
            diffs.append((addr, classify(na, nb), fa, fb))
    pct = 100.0 * agree / total
    depth_pct = 100.0 * depth_same / max(compared, 1)
    kinds = Counter(d[1] for d in diffs)
    print("%s: %d addresses, %d frames, %.3f%% agree, %.3f%% of addresses at the same depth;"
          " differing addresses by kind: %s;"
          " answered from the debug file's .symtab only by Ember: %d"
          % (elf, len(addrs), total, pct, depth_pct, dict(kinds) or "none", dbgsym))
    for addr, kind, fa, fb in diffs[:40]:
        print("  0x%x [%s]\n    ember: %s\n    llvm:  %s" % (addr, kind, fa, fb))
    if len(diffs) > 40:
        print("  ... %d more" % (len(diffs) - 40))
    if pct < opts["--min-agree"]:
        print("FAIL: agreement %.3f%% below %.1f%%" % (pct, opts["--min-agree"]))
        sys.exit(1)
    if depth_pct < opts["--min-same-depth"]:
        print("FAIL: same depth for %.3f%% of addresses, below %.1f%%"
              % (depth_pct, opts["--min-same-depth"]))
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
