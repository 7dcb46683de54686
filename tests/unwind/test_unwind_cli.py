#!/usr/bin/env python3
"""test_unwind_cli.py EMBER FIXTURES_DIR CASE - `ember unwind` end to end.

Each test_unwind_cli__* function is one CTest test (registered by scanning
this file).  Corruptions are made with byte offsets that readelf -S gives,
not with the code under test.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import packages  # noqa: E402


def run(*args):
    return subprocess.run(list(args), capture_output=True)


def section(path, name):
    """(file offset, size) of a section, from readelf -SW."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.search(r"\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(1) == name:
            return int(m.group(2), 16), int(m.group(3), 16)
    raise RuntimeError("no section %s in %s" % (name, path))


def patched(src, dst, edits):
    data = bytearray(open(src, "rb").read())
    for off, b in edits:
        data[off:off + len(b)] = b
    open(dst, "wb").write(bytes(data))


def test_unwind_cli__corrupt_eh_frame_gives_error_and_no_table(ember, fx, tmp):
    src = os.path.join(fx, "c_O2_pie")
    off, _ = section(src, ".eh_frame")
    bad = os.path.join(tmp, "bad")
    out = os.path.join(tmp, "out.table")
    patched(src, bad, [(off + 0x18, b"\x00\x00\x00\x7f")])  # an FDE's length
    r = run(ember, "unwind", "compile", bad, "-o", out)
    err = r.stderr.decode()
    assert r.returncode == 1, r.returncode
    assert "truncated or corrupt call frame information" in err, err
    assert "'.eh_frame' +0x18: entry length 0x7f000000 runs past the section end" in err, err
    assert not os.path.exists(out), "a table was written"
    r = run(ember, "unwind", "dump", bad)
    assert r.returncode == 1 and r.stdout == b"", (r.returncode, r.stdout[:80])


def test_unwind_cli__truncated_file_gives_error_and_no_table(ember, fx, tmp):
    src = os.path.join(fx, "c_O2_pie")
    off, size = section(src, ".eh_frame")
    cut = os.path.join(tmp, "cut")
    out = os.path.join(tmp, "out.table")
    open(cut, "wb").write(open(src, "rb").read()[:off + size // 2])
    r = run(ember, "unwind", "compile", cut, "-o", out)
    assert r.returncode == 1, r.returncode
    assert b"malformed or truncated ELF file" in r.stderr, r.stderr
    assert not os.path.exists(out)


def test_unwind_cli__blob_round_trip_and_determinism(ember, fx, tmp):
    src = os.path.join(fx, "cxx_O2")
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    r = run(ember, "unwind", "compile", src, "-o", a, "--stats")
    assert r.returncode == 0, r.stderr
    stats = dict(l.split() for l in r.stderr.decode().splitlines())
    assert int(stats["bytes"]) == os.path.getsize(a), (stats["bytes"], os.path.getsize(a))
    assert int(stats["rows"]) > 100 and int(stats["rows_stored"]) < int(stats["rows"]), stats
    assert run(ember, "unwind", "compile", src, "-o", b).returncode == 0
    assert open(a, "rb").read() == open(b, "rb").read(), "two compiles differ"
    from_elf = run(ember, "unwind", "dump", src).stdout
    from_blob = run(ember, "unwind", "dump", a).stdout
    assert from_elf == from_blob and from_elf.count(b"\n") == int(stats["rows"]) + 1


def test_unwind_cli__corrupt_blob_refused(ember, fx, tmp):
    a = os.path.join(tmp, "a")
    assert run(ember, "unwind", "compile", os.path.join(fx, "c_O2_pie"), "-o", a).returncode == 0
    data = bytearray(open(a, "rb").read())
    data[len(data) // 2] ^= 1
    open(a, "wb").write(bytes(data))
    r = run(ember, "unwind", "dump", a)
    assert r.returncode == 1 and b"unwind table checksum mismatch" in r.stderr, r.stderr


def test_unwind_cli__usage_errors(ember, fx, tmp):
    assert run(ember, "unwind").returncode == 2
    assert run(ember, "unwind", "frobnicate", "x").returncode == 2
    assert run(ember, "unwind", "dump").returncode == 2
    r = run(ember, "unwind", "dump", os.path.join(fx, "MANIFEST"))
    assert r.returncode == 1 and b"not an ELF file" in r.stderr, r.stderr
    r = run(ember, "unwind", "dump", "/nonexistent")
    assert r.returncode == 1 and b"/nonexistent" in r.stderr, r.stderr


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    ember, fx, case = sys.argv[1:]
    fn = globals().get(case) if case.startswith("test_unwind_cli__") else None
    if not fn:
        print("no case %s" % case)
        return 2
    if not packages.which("readelf"):
        print("SKIP: " + packages.missing("readelf"))
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fn(ember, fx, tmp)
        except AssertionError as e:
            print("FAIL %s: %s" % (case, e))
            return 1
    print("ok %s" % case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
