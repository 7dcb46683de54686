#!/usr/bin/env python3
"""bench/ab/build-id-copies.py ELF N OUTDIR: N copies of ELF, each with its
own GNU build ID (the note rewritten in place), for A/Bs that need the
server to build N distinct indexes (bench/ab/server-memory.sh).  Prints
the build IDs, space-separated."""
import hashlib
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("symcache", os.path.join(here, "..", "symcache", "run.py"))
symcache = importlib.util.module_from_spec(spec)
spec.loader.exec_module(symcache)

elf, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(elf, "rb").read()
at, size = symcache.build_id_note(bytearray(data))
os.makedirs(out, exist_ok=True)
ids = []
for i in range(n):
    d = bytearray(data)
    d[at:at + size] = hashlib.sha1(b"ember-ab-%d" % i).digest()[:size]
    open(os.path.join(out, "%s.%d" % (os.path.basename(elf), i)), "wb").write(d)
    ids.append(d[at:at + size].hex())
print(" ".join(ids))
