#!/usr/bin/env python3
"""Seeds of fuzz_agent.c's CPython case (selector 9): a memory image with a
code object, its str objects (ASCII, UCS-2) and its location table (bytes),
laid out with CPython 3.11's offsets (agent/python_elf.c).  The location
table is a real one: co_linetable of a function compiled by this python.

    tests/fuzz/make_agent_python_seeds.py tests/fuzz/corpus/agent
"""
import os
import struct
import sys

BASE = 0x100000
CODE, UNICODE, BYTES = 0xC0DE0, 0x57770, 0xB7E50


def put(buf, off, fmt, *v):
    need = off + struct.calcsize(fmt)
    if len(buf) < need:
        buf.extend(b"\0" * (need - len(buf)))
    struct.pack_into(fmt, buf, off, *v)


def text(buf, off, s):
    """A compact str at image offset off: ASCII (kind 1) or UCS-2 (kind 2)."""
    ascii = all(ord(c) < 128 for c in s)
    kind = 1 if ascii else 2
    state = kind << 2 | 1 << 5 | (1 << 6 if ascii else 0) | 1 << 7
    put(buf, off + 8, "<Q", UNICODE)
    put(buf, off + 16, "<Q", len(s))
    put(buf, off + 32, "<I", state)
    data = s.encode("ascii") if ascii else s.encode("utf-16-le")
    start = off + (48 if ascii else 72)
    put(buf, start, "%ds" % len(data), data)


def image(qualname, filename, fn):
    code = fn.__code__
    table = code.co_linetable
    buf = bytearray()
    put(buf, 0, "<QQQ", CODE, UNICODE, BYTES)   # the types: the first 24 bytes
    c = 24                                      # the code object (aligned)
    strs, fname, tab = 512, 1024, 1536
    put(buf, c + 8, "<Q", CODE)
    put(buf, c + 72, "<i", code.co_firstlineno)
    put(buf, c + 112, "<Q", BASE + fname - 0)
    put(buf, c + 120, "<Q", BASE + strs)
    put(buf, c + 128, "<Q", BASE + strs)
    put(buf, c + 136, "<Q", BASE + tab)
    text(buf, strs, qualname)
    text(buf, fname, filename)
    put(buf, tab + 8, "<Q", BYTES)
    put(buf, tab + 16, "<Q", len(table))
    put(buf, tab + 32, "%ds" % len(table), table)
    return b"\x09" + bytes(buf)


def sample(a):
    x = 0
    for i in range(a):
        if i % 3:
            x += i
        else:
            x -= (i *
                  2)
    return x


def main():
    out = sys.argv[1]
    seeds = {
        "python-ascii": image("Worker.run", "/srv/app/worker.py", sample),
        "python-ucs2": image("Магазин.оплата", "/srv/приложение.py", sample),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
