#!/usr/bin/env python3
"""No two C source files or headers of the tree share a name.

  check_unique_names.py ROOT

Walks ROOT (skipping build directories, which hold a CMakeCache.txt, and
node_modules) and prints every .c or .h basename found in more than one
folder; exits 1 if there is one.  A file's name then says one thing: a
stack trace, a log line's file:line or a grep names one file.
"""
import os
import sys


def sources(root):
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if not s.startswith(".") and s != "node_modules"
                      and not os.path.exists(os.path.join(d, s, "CMakeCache.txt"))]
        for f in files:
            if f.endswith((".c", ".h")):
                yield f, os.path.relpath(os.path.join(d, f), root)


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    seen = {}
    for name, path in sources(argv[0]):
        seen.setdefault(name, []).append(path)
    dups = {n: sorted(p) for n, p in seen.items() if len(p) > 1}
    for n in sorted(dups):
        print(f"'{n}' names {len(dups[n])} files: {', '.join(dups[n])}")
    print(f"{len(seen)} names, {len(dups)} shared")
    return 1 if dups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
