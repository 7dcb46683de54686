#!/usr/bin/env python3
"""Seeds for fuzz_elfdw (tests/fuzz/corpus/elfdw/): the DWARF sections of
real ELF files, packed as the target reads them: nine little-endian u32
lengths (.debug_info, .debug_abbrev, .debug_str, .debug_line_str,
.debug_str_offsets, .debug_addr, .debug_ranges, .debug_rnglists,
.debug_line), then the sections' bytes in that order.  Compressed
sections (SHF_COMPRESSED zlib, GNU .zdebug) are inflated first.

    tests/fuzz/make_elfdw_seeds.py OUT_DIR NAME=ELF [NAME=ELF...]

The committed seeds, from the repository root after a build:

  seed_gcc_dwarf5         build/fixtures/c_O2_pie (gcc 12 -O2 -g, DWARF 5)
  seed_gcc_dwarf4         build/fixtures/c_dwarf4 (DWARF 4: .debug_ranges)
  seed_gcc_dwarf5_gz      build/fixtures/c_gz (SHF_COMPRESSED, inflated here)
  seed_gcc_dwarf5_64      /tmp/dw64 from: gcc -O2 -g -gdwarf64 -ffreestanding
                          -fno-builtin -nostdlib -static
                          -Wl,-e,helper_collect_stats fixtures/elf/src/helper.c
                          -o /tmp/dw64 (DWARF 64)
  seed_clang_dwarf5, seed_clang_dwarf5_i386, seed_gcc_dwarf4_i386,
  seed_gcc_dwarf2, seed_gcc_lto
                          tests/fuzz/corpus/symbolizer/ of the same names
                          (strx, addrx, rnglistx, 32-bit addresses, block and
                          flag forms, three LTO units; test_symbolizer.c
                          says how they were built)

  tests/fuzz/make_elfdw_seeds.py tests/fuzz/corpus/elfdw \
      seed_gcc_dwarf5=build/fixtures/c_O2_pie ... (one NAME=ELF each)

Only the standard library: no pyelftools.
"""
import struct
import sys
import zlib

NAMES = [".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str",
         ".debug_str_offsets", ".debug_addr", ".debug_ranges",
         ".debug_rnglists", ".debug_line"]
SHF_COMPRESSED = 1 << 11


def sections(data):
    """{name: bytes} of a little-endian ELF32/ELF64 file, inflated."""
    if data[:4] != b"\x7fELF" or data[5] != 1:
        raise ValueError("not a little-endian ELF file")
    is64 = data[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
        fmt, chdr = "<IIQQQQIIQQ", "<IIQQ"
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2e)
        fmt, chdr = "<IIIIIIIIII", "<III"
    heads = [struct.unpack_from(fmt, data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    out = {}
    for h in heads:
        name_off, typ, flags, off, size = h[0], h[1], h[2], h[4], h[5]
        end = data.index(b"\0", strtab[4] + name_off)
        name = data[strtab[4] + name_off:end].decode()
        raw = data[off:off + size] if typ != 8 else b""  # SHT_NOBITS
        if flags & SHF_COMPRESSED:
            raw = zlib.decompress(raw[struct.calcsize(chdr):])
        elif name.startswith(".zdebug") and raw[:4] == b"ZLIB":
            raw = zlib.decompress(raw[12:])
        if name.startswith(".zdebug"):
            name = "." + name[2:]
        out[name] = raw
    return out


def pack(secs, info_limit=None):
    parts = [secs.get(n, b"") for n in NAMES]
    if info_limit is not None:
        parts[0] = parts[0][:info_limit]
    return struct.pack("<9I", *map(len, parts)) + b"".join(parts)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out_dir = argv[1]
    for spec in argv[2:]:
        name, _, path = spec.partition("=")
        limit = None
        if "@" in name:  # NAME@BYTES keeps only the first bytes of .debug_info
            name, limit = name.split("@")
            limit = int(limit)
        with open(path, "rb") as f:
            secs = sections(f.read())
        with open(f"{out_dir}/{name}", "wb") as f:
            f.write(pack(secs, limit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
