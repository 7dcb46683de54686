#!/usr/bin/env python3
"""expect_exit.py CODE CMD... - run CMD; pass (exit 0) if it exits with
CODE, fail (exit 1) otherwise, showing its output.  For the tests that a
driver refuses what it must refuse (an unknown case name exits 2)."""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    want, cmd = int(sys.argv[1]), sys.argv[2:]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    out = (p.stdout + p.stderr).strip()
    if p.returncode != want:
        print("FAIL: %s exited %d, not %d:\n%s" % (" ".join(cmd), p.returncode, want, out))
        return 1
    print("ok: exited %d: %s" % (want, out.splitlines()[-1] if out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
