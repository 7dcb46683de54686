#!/usr/bin/env python3
"""check_status_words.py CASE SOURCE_DIR - no HTTP status is chosen from
an error message's wording.

api/ answers a component's error with the status of its kind (common.h's
enum ember_errkind, api/status.c's one table); searching an error message
for words ("bytes, larger than") to choose 413 or 400 is what it replaced.
The HTTP layer's only strstr calls are on what the client sent: an
If-None-Match list against an ETag, and a URL's "://".  Cases:

  api       api/*.c holds no other strstr (the project's stop hook greps
            the same: `grep -n strstr api/*.c | grep -vE 'inm|"://"|etag'`).
  selftest  api fails on a copy of api/ with a status chosen by strstr on
            a message added.

Exit 0 pass, 1 fail.
"""
import glob
import os
import re
import shutil
import sys
import tempfile

ALLOWED = re.compile(r'inm|"://"|etag')


def offending(src):
    found = []
    for path in sorted(glob.glob(os.path.join(src, "api", "*.c"))):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if "strstr" in line and not ALLOWED.search(line):
                    found.append("%s:%d: %s" % (os.path.relpath(path, src), n, line.strip()))
    return found


def case_api(src):
    found = offending(src)
    for f in found:
        print("status chosen from wording? " + f)
    return 1 if found else 0


def case_selftest(src):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(src, "api"), os.path.join(tmp, "api"))
        with open(os.path.join(tmp, "api", "profile_routes.c"), "a", encoding="utf-8") as f:
            f.write('\nstatic unsigned bad(const char *why)\n{\n'
                    '\treturn strstr(why, "larger than") ? 413 : 400;\n}\n')
        if not offending(tmp):
            print("selftest: a strstr on a message was not found")
            return 1
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("api", "selftest"):
        print(__doc__, file=sys.stderr)
        return 2
    return {"api": case_api, "selftest": case_selftest}[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
