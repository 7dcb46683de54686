#!/usr/bin/env python3
"""test_readelf.py - `ember unwind dump` must print exactly the rows GNU
readelf gives after the documented normalizations (readelf_rows.py).

  test_readelf.py EMBER [--sections eh|debug|all] [--round-trip] BINARY
  test_readelf.py EMBER --find NAME         a system library by soname
  test_readelf.py EMBER --manifest DIR      every ELF fixture in DIR/MANIFEST

Each binary is dumped straight from the ELF file (`ember unwind dump
FILE`); with --round-trip it is also compiled to a table file with `ember
unwind compile -o`, whose dump must be the same.  A binary without CFI
must be refused by ember with "no .eh_frame or .debug_frame" and give
readelf no rows.  Exits 77 when readelf or the binary is missing.
"""
import argparse
import difflib
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readelf_rows  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import packages  # noqa: E402

FLAGS = {"eh": ["--eh-frame-only"], "debug": ["--debug-frame-only"], "all": []}
LIB_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
            "/usr/lib64", "/usr/lib"]


def ember_rows(ember, binary, sections, tmp, round_trip):
    """(rows from the ELF, rows from a compiled table file, stderr)"""
    flags = FLAGS[sections]
    direct = subprocess.run([ember, "unwind", "dump"] + flags + [binary],
                            capture_output=True, text=True)
    if direct.returncode != 0:
        return None, None, direct.stderr
    if not round_trip:
        return direct.stdout.splitlines(), direct.stdout.splitlines(), ""

    table = os.path.join(tmp, "table")
    c = subprocess.run([ember, "unwind", "compile"] + flags + [binary, "-o", table],
                       capture_output=True, text=True)
    if c.returncode != 0:
        return direct.stdout.splitlines(), None, c.stderr
    via = subprocess.run([ember, "unwind", "dump", table], capture_output=True, text=True)
    return direct.stdout.splitlines(), via.stdout.splitlines(), via.stderr


def check(ember, binary, sections, round_trip=False):
    want = ["# pc_start cfa_reg cfa_off ra_rule rbp_rule"]
    want += ["%016x %s" % r for r in readelf_rows.normalize(binary, sections)]
    with tempfile.TemporaryDirectory() as tmp:
        direct, via, err = ember_rows(ember, binary, sections, tmp, round_trip)
    name = "%s (%s)" % (binary, sections)
    if direct is None:
        if len(want) == 1 and "no .eh_frame or .debug_frame" in err:
            print("ok   %s: no CFI, refused as expected" % name)
            return True
        print("FAIL %s: ember failed: %s" % (name, err.strip()))
        return False
    for label, got in (("dump of the ELF", direct), ("dump of the table file", via)):
        if got != want:
            print("FAIL %s: %s differs from readelf (%d vs %d lines):" %
                  (name, label, len(got or []), len(want)))
            for line in list(difflib.unified_diff(want, got or [], "readelf", "ember",
                                                  lineterm="", n=1))[:40]:
                print("  " + line)
            return False
    print("ok   %s: %d rows identical" % (name, len(want) - 1))
    return True


def find_lib(name):
    for d in LIB_DIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


def manifest_binaries(d):
    out = []
    with open(os.path.join(d, "MANIFEST")) as f:
        for line in f:
            rel = line.split("\t")[0].strip()
            if rel:
                out.append(os.path.join(d, rel))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ember")
    ap.add_argument("--sections", choices=["eh", "debug", "all"], default="all")
    ap.add_argument("--find")
    ap.add_argument("--manifest")
    ap.add_argument("--round-trip", action="store_true")
    ap.add_argument("binary", nargs="?")
    a = ap.parse_intermixed_args()
    if not packages.which("readelf"):
        print("SKIP: " + packages.missing("readelf"))
        return 77
    if a.manifest:
        binaries = manifest_binaries(a.manifest)
    elif a.find:
        lib = find_lib(a.find)
        if not lib:
            print("SKIP: " + packages.missing("lib:" + a.find, "%s not found" % a.find))
            return 77
        binaries = [lib]
    else:
        if not os.path.exists(a.binary):
            print("SKIP: %s not found" % a.binary)
            return 77
        binaries = [a.binary]
    ok = all([check(a.ember, b, a.sections, a.round_trip) for b in binaries])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
