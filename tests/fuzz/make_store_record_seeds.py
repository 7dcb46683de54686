#!/usr/bin/env python3
"""Seeds for fuzz_store_record.c: artifact records in the layout of
docs/store-format.md (version u8 = 1, kinds u8, dwarf_version u8, pad u8,
flags u32, size u64, mtime i64, name_len u16, pad[6], then the name), as
debuginfo-store/record.c writes them, plus damaged ones.

Usage: make_store_record_seeds.py OUT_DIR
"""
import os
import struct
import sys


def record(kinds, dwarf, flags, size, mtime, name, version=1):
    name = name.encode()
    return struct.pack("<BBBBIQqH6x", version, kinds, dwarf, 0, flags, size, mtime,
                       len(name)) + name


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "debuginfo": record(1, 5, 0x83, 36104, 1795980295, "c_O2_pie.debug"),
        "executable": record(2, 0, 0x86, 17000, 1795980296, "c_O2_pie"),
        "both_kinds": record(3, 4, 0xa7, 1 << 40, -1, "x" * 255),
        "empty_name": record(1, 0, 0, 0, 0, ""),
        "future_version": record(1, 5, 1, 1, 1, "v2", version=2),
        "name_too_long": record(1, 5, 1, 1, 1, "y" * 300),
    }
    seeds["truncated"] = seeds["debuginfo"][:40]
    seeds["length_past_name"] = seeds["executable"] + b"\0"
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
