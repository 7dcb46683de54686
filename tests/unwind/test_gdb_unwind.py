#!/usr/bin/env python3
"""test_gdb_unwind.py UNWIND_WALK FIXTURE - unwind a real stack with the
compiled tables alone and compare with gdb.

gdb runs FIXTURE (tests/unwind/deep_frames.c, built with -fomit-frame-pointer) to
ember_stop_here(), reports its physical frames (inline and tail-call frames
are gdb's reconstructions, not stack frames, and are left out), and dumps
rip, rsp, rbp, the mappings and the stack.  unwind_walk then walks that
stack using only `ember unwind`-compiled tables of the fixture and
libc.so.6.  The pcs must be exactly gdb's, down to the outermost frame
(_start, whose RA is undefined).  gdb names libc's frames (__restore_rt
among them) from libc's debug symbols, Debian package libc6-dbg.  Exits 77,
naming the package, when gdb or libc's debug symbols are missing, or when
gdb may not trace.
"""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import packages  # noqa: E402

GDB_SCRIPT = r'''
import gdb
gdb.execute("set pagination off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
gdb.execute("set debuginfod enabled off")
gdb.execute("handle SIGUSR1 nostop noprint pass")
gdb.execute("break ember_stop_here")
gdb.execute("run")
out = open(OUT, "w")
f = gdb.newest_frame()
while f is not None:
    if f.type() in (gdb.NORMAL_FRAME, gdb.SIGTRAMP_FRAME):
        out.write("FRAME %x %s\n" % (f.pc(), f.name()))
    f = f.older()
regs = {}
for r in ("rip", "rsp", "rbp"):
    regs[r] = int(gdb.parse_and_eval("$" + r)) & (2**64 - 1)
    out.write("REG %s %x\n" % (r, regs[r]))
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    t = line.split()
    if len(t) < 5 or not t[0].startswith("0x"):
        continue
    start, end, off = int(t[0], 16), int(t[1], 16), int(t[3], 16)
    path = t[-1]
    if start <= regs["rsp"] < end:
        mem = gdb.selected_inferior().read_memory(regs["rsp"], end - regs["rsp"])
        open(STACK, "wb").write(bytes(mem))
        out.write("STACK %x %s\n" % (regs["rsp"], STACK))
    if path.startswith("/"):
        out.write("MAP %x %x %x %s\n" % (start, end, off, path))
out.close()
gdb.execute("kill")
'''


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    walker, fixture = sys.argv[1:]
    if not packages.which("gdb"):
        print("SKIP: " + packages.missing("gdb"))
        return 77
    if not packages.debug_file("libc.so.6"):
        print("SKIP: " + packages.missing("debug:libc.so.6",
                                          "libc.so.6 has no debug file in /usr/lib/debug"))
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        state, stack = os.path.join(tmp, "state"), os.path.join(tmp, "stack")
        script = os.path.join(tmp, "capture.py")
        with open(script, "w") as f:
            f.write("OUT = %r\nSTACK = %r\n" % (state, stack) + GDB_SCRIPT)
        g = subprocess.run(["gdb", "-q", "-batch", "-nx", "-x", script, fixture],
                           capture_output=True, text=True, timeout=120)
        if "Operation not permitted" in g.stdout + g.stderr:
            print("SKIP: ptrace not permitted here")
            return 77
        if not os.path.exists(state):
            print("gdb did not stop the fixture:\n" + g.stdout + g.stderr)
            return 1
        lines = open(state).read().splitlines()
        frames = [l.split()[1:] for l in lines if l.startswith("FRAME")]
        want = ["0x" + f[0] for f in frames]
        w = subprocess.run([walker, state], capture_output=True, text=True, timeout=120)
        got = [l for l in w.stdout.splitlines() if l.startswith("0x")]
        last = w.stdout.splitlines()[-1] if w.stdout else w.stderr
    names = [f[1] if len(f) > 1 else "?" for f in frames]
    print("%d frames from gdb: %s" % (len(want), " <- ".join(names)))
    if got != want or w.returncode != 0 or last != "end: outermost frame":
        print("MISMATCH (walker rc %d, last line '%s')" % (w.returncode, last))
        for i in range(max(len(want), len(got))):
            a = want[i] if i < len(want) else "-"
            b = got[i] if i < len(got) else "-"
            n = names[i] if i < len(names) else ""
            print("%s %-18s %-18s %s" % ("  " if a == b else "!!", a, b, n))
        return 1
    for name in ("ember_stop_here", "on_signal", "__restore_rt", "by_value",
                 "with_vla", "big_frame", "main", "_start"):
        if name not in names:
            print("the chain lacks %s: the fixture did not stop where expected" % name)
            return 1
    print("walker recovered all %d frames" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
