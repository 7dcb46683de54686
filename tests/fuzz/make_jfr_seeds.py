#!/usr/bin/env python3
"""Seeds for fuzz_jfr.c and the cases of tests/unit/test_jfr_decode.c: small
JFR recordings in the chunk format 2.1 the JDK writes (docs/formats.md, "JFR
recordings"), written from scratch: a metadata event of the classes the
reader keeps (java.lang.Class, jdk.types.Symbol, Method, StackFrame,
StackTrace, ThreadState, java.lang.String and the six sample events), one
checkpoint of their constants (symbols in the UTF-8, UTF-16 chars and
Latin-1 encodings and one by a String pool reference), and events:

  jdk.ExecutionSample     5 x [main, work, hot] running (context 1),
                          2 x [main, work] running, 3 x [main, work, hot]
                          sleeping (not CPU time)
  jdk.JavaMonitorEnter    1 x [main, work], 2000 ticks (1000 ticks a second: 2 s)
  jdk.ThreadPark          1 x [main, work, hot], 500 ticks; 1 x [main, JVM_Sleep]
                          (a native frame: its class named "", its line -1), 0 ticks
  jdk.ObjectAllocationSample 1 x [main, work], weight 4096
  jdk.ObjectAllocationInNewTLAB 2 x [main, work, hot], 1024 bytes each

Frames: com/example/App.main line 10, .work line 20 (21 in the 2-frame
stack), .hot line 30.  Seeds: that recording, two chunks of it, it with a
labels field (the fuzz target's "LBL" prefix: context 1 is span=checkout),
and damaged copies.  A real JDK recording is some 300 KB (its metadata
alone 96 KB): tests/profiles/test_jfr.py makes and sends real ones.

Usage: make_jfr_seeds.py OUT_DIR
"""
import os
import struct
import sys


def varint(n):
    """JFR's compressed integer (7 bits a byte, low first)."""
    n &= (1 << 64) - 1
    out = b""
    for _ in range(8):
        if n < 0x80:
            return out + bytes([n])
        out += bytes([n & 0x7f | 0x80])
        n >>= 7
    return out + bytes([n & 0xff])


def event(body):
    """An event: its size (4 padded bytes, as the JDK writes it) and body."""
    n = len(body) + 4
    return bytes([n & 0x7f | 0x80, n >> 7 & 0x7f | 0x80, n >> 14 & 0x7f | 0x80,
                  n >> 21 & 0x7f]) + body


def utf8(s):
    b = s.encode()
    return b"\x03" + varint(len(b)) + b


def chars(s):
    return b"\x04" + varint(len(s)) + b"".join(varint(ord(c)) for c in s)


def latin1(s):
    b = s.encode("latin-1")
    return b"\x05" + varint(len(b)) + b


# ---- metadata ----------------------------------------------------------------------

LONG, INT, BOOLEAN, STRING = 10, 11, 12, 13
CLASS, SYMBOL, METHOD, FRAME, STACK, STATE = 20, 21, 22, 23, 24, 25
EXEC, MONITOR, ALLOC, PARK, TLAB = 30, 31, 32, 33, 34

CLASSES = [
    (LONG, "long", []), (INT, "int", []), (BOOLEAN, "boolean", []),
    (STRING, "java.lang.String", []),
    (CLASS, "java.lang.Class", [("name", SYMBOL, True, False)]),
    (SYMBOL, "jdk.types.Symbol", [("string", STRING, False, False)]),
    (METHOD, "jdk.types.Method", [("type", CLASS, True, False), ("name", SYMBOL, True, False)]),
    (FRAME, "jdk.types.StackFrame", [("method", METHOD, True, False),
                                     ("lineNumber", INT, False, False)]),
    (STACK, "jdk.types.StackTrace", [("truncated", BOOLEAN, False, False),
                                     ("frames", FRAME, False, True)]),
    (STATE, "jdk.types.ThreadState", [("name", STRING, False, False)]),
    (EXEC, "jdk.ExecutionSample", [("startTime", LONG, False, False),
                                   ("stackTrace", STACK, True, False),
                                   ("state", STATE, True, False),
                                   ("contextId", LONG, False, False)]),
    (MONITOR, "jdk.JavaMonitorEnter", [("startTime", LONG, False, False),
                                       ("duration", LONG, False, False),
                                       ("stackTrace", STACK, True, False)]),
    (ALLOC, "jdk.ObjectAllocationSample", [("startTime", LONG, False, False),
                                           ("stackTrace", STACK, True, False),
                                           ("weight", LONG, False, False)]),
    (PARK, "jdk.ThreadPark", [("startTime", LONG, False, False),
                              ("duration", LONG, False, False),
                              ("stackTrace", STACK, True, False)]),
    (TLAB, "jdk.ObjectAllocationInNewTLAB", [("startTime", LONG, False, False),
                                             ("stackTrace", STACK, True, False),
                                             ("tlabSize", LONG, False, False)]),
]


class Strings:
    def __init__(self):
        self.v = []

    def __call__(self, s):
        if s not in self.v:
            self.v.append(s)
        return self.v.index(s)


def element(st, name, attrs, children=()):
    out = varint(st(name)) + varint(len(attrs))
    for k, v in attrs:
        out += varint(st(k)) + varint(st(v))
    return out + varint(len(children)) + b"".join(children)


def metadata():
    st = Strings()
    classes = []
    for cid, name, fields in CLASSES:
        fs = []
        for fname, ftype, cpool, array in fields:
            attrs = [("name", fname), ("class", str(ftype))]
            if cpool:
                attrs.append(("constantPool", "true"))
            if array:
                attrs.append(("dimension", "1"))
            fs.append(element(st, "field", attrs))
        classes.append(element(st, "class", [("id", str(cid)), ("name", name)], fs))
    root = element(st, "root", [], [element(st, "metadata", [], classes),
                                    element(st, "region", [("gmtOffset", "0")])])
    body = varint(0) + varint(0) + varint(0) + varint(1)  # type, start, duration, id
    body += varint(len(st.v)) + b"".join(utf8(s) for s in st.v) + root
    return event(body)


# ---- constants and events ----------------------------------------------------------


def pool(cid, entries):
    return varint(cid) + varint(len(entries)) + b"".join(varint(k) + v for k, v in entries)


def checkpoint():
    symbols = [(1, utf8("com/example/App")), (2, utf8("main")), (3, chars("work")),
               (4, latin1("hot")), (5, b"\x02" + varint(7)),  # 5: the String pool's "unused"
               (6, b"\x01"), (8, utf8("JVM_Sleep"))]
    stacks = [(1, b"\x00" + varint(3) + varint(3) + varint(30) + varint(2) + varint(20) +
               varint(1) + varint(10)),
              (2, b"\x00" + varint(2) + varint(2) + varint(21) + varint(1) + varint(10)),
              (3, b"\x00" + varint(2) + varint(4) + varint(0xffffffff) + varint(1) + varint(10))]
    pools = [pool(STRING, [(7, utf8("unused"))]), pool(SYMBOL, symbols),
             pool(CLASS, [(1, varint(1)), (2, varint(6))]),
             pool(METHOD, [(1, varint(1) + varint(2)), (2, varint(1) + varint(3)),
                           (3, varint(1) + varint(4)), (4, varint(2) + varint(8))]),
             pool(STACK, stacks),
             pool(STATE, [(1, utf8("STATE_RUNNABLE")), (2, utf8("STATE_SLEEPING"))])]
    body = varint(1) + varint(0) + varint(0) + varint(0) + varint(1)  # type .. delta, flags
    return event(body + varint(len(pools)) + b"".join(pools))


def events():
    out = b""
    for stack, state, ctx, n in ((1, 1, 1, 5), (2, 1, 0, 2), (1, 2, 0, 3)):
        for _ in range(n):
            out += event(varint(EXEC) + varint(100) + varint(stack) + varint(state) + varint(ctx))
    out += event(varint(MONITOR) + varint(100) + varint(2000) + varint(2))
    out += event(varint(PARK) + varint(100) + varint(500) + varint(1))
    out += event(varint(PARK) + varint(100) + varint(0) + varint(3))
    out += event(varint(ALLOC) + varint(100) + varint(2) + varint(4096))
    for _ in range(2):
        out += event(varint(TLAB) + varint(100) + varint(1) + varint(1024))
    return out


def chunk(start_ns=1_700_000_000_000_000_000):
    meta, cp, evs = metadata(), checkpoint(), events()
    meta_off = 68 + len(evs)
    cp_off = meta_off + len(meta)
    size = cp_off + len(cp)
    header = b"FLR\0" + struct.pack(">HHqqqqqqqi", 2, 1, size, cp_off, meta_off, start_ns,
                                    10_000_000_000, 0, 1000, 0)
    return header + evs + meta + cp


def labels():
    """A LabelsSnapshot: context 1 is span=checkout."""
    def f(num, wire, payload):
        return varint(num << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)
    ctx = f(1, 2, f(1, 0, varint(1)) + f(2, 0, varint(2)))
    return (f(1, 2, f(1, 0, varint(1)) + f(2, 2, ctx)) +
            f(2, 2, f(1, 0, varint(1)) + f(2, 2, b"span")) +
            f(2, 2, f(1, 0, varint(2)) + f(2, 2, b"checkout")))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rec = chunk()
    lbl = labels()
    seeds = {
        "recording": rec,
        "two_chunks": rec + chunk(1_700_000_010_000_000_000),
        "with_labels": b"LBL" + bytes([len(lbl)]) + lbl + rec,
        "truncated": rec[:len(rec) - 7],
        "metadata_offset_past_end": rec[:24] + struct.pack(">q", len(rec) + 1) + rec[32:],
        "version_1": rec[:4] + struct.pack(">H", 1) + rec[6:],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
