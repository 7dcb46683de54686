#!/usr/bin/env python3
"""Seeds of fuzz_otlp_grpc (tests/fuzz/corpus/otlp_grpc/): what a gRPC
client sends over cleartext HTTP/2 (RFC 9113), written frame by frame.
The first byte of each file is the target's piece size, not sent.

    make_otlp_grpc_seeds.py DIR
"""
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ember_test import H2_PREFACE as PREFACE, h2_frame as frame, hpack_literals as hpack  # noqa: E402

PATH = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
END_STREAM, END_HEADERS = 0x1, 0x4


def head(path=PATH, token="t", extra=()):
    h = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "x"),
         ("content-type", "application/grpc"), ("te", "trailers")]
    if token:
        h.append(("authorization", "Bearer " + token))
    return hpack(h + list(extra))


def message(data, flag=0):
    return bytes([flag]) + struct.pack(">I", len(data)) + data


def call(sid=1, body=message(b"\x0a\x00"), **kw):
    return frame(1, END_HEADERS, sid, head(**kw)) + frame(0, END_STREAM, sid, body)


START = PREFACE + frame(4, 0, 0)
SEEDS = {
    "export_identity": START + call(),
    "export_gzip_odd": START + call(body=message(b"\x1f\x8b\x08", 1),
                                    extra=[("grpc-encoding", "gzip"), ("grpc-timeout", "5S")]),
    "no_token": START + call(token=None),
    "unknown_method": START + call(path="/x.Y/Z"),
    "bad_encoding": START + call(extra=[("grpc-encoding", "snappy")]),
    "trailers_after_data": START + frame(1, END_HEADERS, 1, head()) +
    frame(0, 0, 1, message(b"ab")) + frame(1, END_HEADERS | END_STREAM, 1, hpack([("x", "y")])),
    "split_message_two_streams": START + frame(1, END_HEADERS, 1, head()) +
    frame(0, 0, 1, message(b"abcd")[:3]) + call(sid=3) + frame(0, END_STREAM, 1, message(b"abcd")[3:]),
    "too_large_and_two_messages": START + frame(1, END_HEADERS, 1, head()) +
    frame(0, 0, 1, b"\x00\xff\xff\xff\xff") + call(sid=3, body=message(b"a") + message(b"b")),
    "continuation": START + frame(1, 0, 1, head()[:40]) + frame(9, END_HEADERS, 1, head()[40:]) +
    frame(0, END_STREAM, 1, message(b"")),
    "ping_window_rst_goaway": START + frame(6, 0, 0, b"12345678") +
    frame(8, 0, 0, struct.pack(">I", 1000)) + frame(1, END_HEADERS, 1, head()) +
    frame(3, 0, 1, struct.pack(">I", 8)) + frame(7, 0, 0, struct.pack(">II", 0, 0)),
    "no_end_stream": START + frame(1, END_HEADERS, 1, head(extra=[("grpc-timeout", "1m")])) +
    frame(0, 0, 1, message(b"ab")),
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, (name, data) in enumerate(sorted(SEEDS.items())):
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([(i * 13) % 97]) + data)
