#!/usr/bin/env python3
"""make_gopclntab_seeds.py OUTDIR: small ELF files with a Go .gopclntab, as
seeds for fuzz_symbolizer (corpus/symbolizer/seed_gopclntab_*).

Each file holds two functions in .text at 0x400100: main.f1 (0x20 bytes,
lines 10-11) and main.f2 (0x20 bytes) into which main.g is inlined at
[0x400128, 0x400138) with body line 5 and call site prog.go:20 (parentPc
4).  One file per pclntab layout Ember reads (docs/symbol-index.md): Go
1.16 (0xfffffffa), 1.18 (0xfffffff0) and 1.20 (0xfffffff1), with the
moduledata that 1.18+ funcdata offsets need in .noptrdata.  The bytes
follow the runtime's definitions; they are seeds for the fuzzer, not
evidence that a real toolchain writes the same (the unit tests check
real Go 1.19 binaries).
"""
import struct
import sys

BASE = 0x400000
TEXT, PCLN, RODATA, NOPTR = 0x100, 0x200, 0x600, 0x700


def zig(delta):
    return (delta << 1) if delta >= 0 else ((-delta - 1) << 1) | 1


def pcvalue(pairs):
    """pairs: (value, length); the runtime's step() encoding."""
    out, val = bytearray(), -1
    for v, n in pairs:
        out += bytes([zig(v - val), n])  # all small: one byte each
        val = v
    return bytes(out) + b"\0"


def pclntab(ver):
    ptr = 8
    names = b"main.f1\0main.f2\0main.g\0"
    cutab = struct.pack("<I", 0)
    files = b"prog.go\0"
    pct = bytearray(b"\0")  # offset 0 means "no table"
    offs = {}
    for key, pairs in (("file", [(0, 0x20)]),
                       ("ln1", [(10, 0x10), (11, 0x10)]),
                       ("ln2", [(20, 8), (5, 0x10), (21, 8)]),
                       ("inl", [(-1, 8), (0, 0x10), (-1, 8)])):
        offs[key] = len(pct)
        pct += pcvalue(pairs)
    hdr_words = 7 if ver == 116 else 8
    hdr = 8 + hdr_words * ptr
    o_names = hdr
    o_cu = o_names + len(names)
    o_files = o_cu + len(cutab)
    o_pct = o_files + len(files)
    o_funcs = (o_pct + len(pct) + 7) & ~7
    funcs_addr = BASE + PCLN + o_funcs
    fsz = 4 if ver != 116 else ptr
    ftab_len = (2 * 2 + 1) * fsz
    rec1 = (ftab_len + 7) & ~7

    def record(entry_off, nameoff, pcln, npcdata, nfuncdata, pcdata, funcdata,
               at):
        e = (struct.pack("<Q", BASE + TEXT + entry_off) if ver == 116
             else struct.pack("<I", entry_off))
        body = struct.pack("<8I", nameoff, 0, 0, 0, offs["file"], pcln,
                           npcdata, 0)
        if ver == 120:
            body += struct.pack("<i", 0)  # startLine
        body += bytes([0, 0, 0, nfuncdata])
        r = e + body + b"".join(struct.pack("<I", p) for p in pcdata)
        if ver == 116:
            if (funcs_addr + at + len(r)) & 4:
                r += b"\0" * 4
            r += b"".join(struct.pack("<Q", f) for f in funcdata)
        else:
            r += b"".join(struct.pack("<I", f) for f in funcdata)
        return r + b"\0" * (-len(r) % 8)

    r1 = record(0, 0, offs["ln1"], 0, 0, [], [], rec1)
    rec2 = rec1 + len(r1)
    tree = BASE + RODATA
    fd = ([0, 0, 0, tree] if ver == 116
          else [0xffffffff, 0xffffffff, 0xffffffff, 0])
    r2 = record(0x20, 8, offs["ln2"], 3, 4, [0, 0, offs["inl"]], fd, rec2)
    if ver == 116:
        ftab = struct.pack("<5Q", BASE + TEXT, rec1, BASE + TEXT + 0x20, rec2,
                           BASE + TEXT + 0x40)
    else:
        ftab = struct.pack("<5I", 0, rec1, 0x20, rec2, 0x40)
    funcs = ftab + b"\0" * (rec1 - len(ftab)) + r1 + r2
    magic = {116: 0xfffffffa, 118: 0xfffffff0, 120: 0xfffffff1}[ver]
    words = [2, 1] + ([] if ver == 116 else [BASE + TEXT])
    words += [o_names, o_cu, o_files, o_pct, o_funcs]
    head = struct.pack("<IBBBB", magic, 0, 0, 1, ptr)
    head += b"".join(struct.pack("<Q", w) for w in words)
    body = head + names + cutab + files + pct
    body += b"\0" * (o_funcs - len(body)) + funcs
    addrs = {"names": BASE + PCLN + o_names, "cu": BASE + PCLN + o_cu,
             "files": BASE + PCLN + o_files, "pct": BASE + PCLN + o_pct,
             "funcs": funcs_addr}
    return body, addrs


def inline_tree(ver):
    if ver == 120:  # funcID, pad, nameOff, parentPc, startLine
        return struct.pack("<B3xiii", 0, 16, 4, 4)
    # parent, funcID, pad, file, line, func_, parentPc
    return struct.pack("<hBxiiii", -1, 0, 0, 20, 16, 4)


def moduledata(ver, a, noptr_size):
    w = [0] * 41
    w[0] = BASE + PCLN
    w[1], w[4], w[7], w[10], w[13], w[16] = (a["names"], a["cu"], a["files"],
                                            a["pct"], a["funcs"], a["funcs"])
    w[17] = w[18] = 3
    w[22] = BASE + TEXT
    w[24], w[25] = BASE + NOPTR, BASE + NOPTR + noptr_size
    ro, gf = (39, 40) if ver == 120 else (37, 38)
    w[ro] = w[gf] = BASE + RODATA
    return b"".join(struct.pack("<Q", x) for x in w)


def elf(ver):
    pcln, addrs = pclntab(ver)
    assert PCLN + len(pcln) <= RODATA
    noptr_size = 41 * 8
    secs = [(".text", 1, 6, TEXT, b"\x90" * 0x40),
            (".gopclntab", 1, 2, PCLN, pcln),
            (".rodata", 1, 2, RODATA, inline_tree(ver)),
            (".noptrdata", 1, 3, NOPTR, moduledata(ver, addrs, noptr_size))]
    shstr = b"\0" + b"".join(s[0].encode() + b"\0" for s in secs) + b".shstrtab\0"
    img = bytearray(NOPTR + noptr_size)
    for _, _, _, off, data in secs:
        img[off:off + len(data)] = data
    shstr_off = len(img)
    img += shstr
    img += b"\0" * (-len(img) % 8)
    shoff = len(img)
    sh = bytes(64)
    name = 1
    for n, typ, flags, off, data in secs:
        sh += struct.pack("<IIQQQQIIQQ", name, typ, flags, BASE + off, off,
                          len(data), 0, 0, 8, 0)
        name += len(n) + 1
    sh += struct.pack("<IIQQQQIIQQ", name, 3, 0, 0, shstr_off, len(shstr),
                      0, 0, 1, 0)
    img += sh
    eh = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9),
                     2, 62, 1, BASE + TEXT, 64, shoff, 0, 64, 56, 1, 64,
                     len(secs) + 2, len(secs) + 1)
    ph = struct.pack("<IIQQQQQQ", 1, 7, 0, BASE, BASE, len(img), len(img),
                     0x1000)
    img[0:64 + 56] = eh + ph
    return bytes(img)


if __name__ == "__main__":
    for v in (116, 118, 120):
        with open(f"{sys.argv[1]}/seed_gopclntab_{v}", "wb") as f:
            f.write(elf(v))
