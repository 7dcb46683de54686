#!/usr/bin/env python3
"""End-to-end tests of ember-agent on CPython, with real BPF in this kernel
and real interpreters: Debian's python3.11, its debug build python3.11d,
and any other CPython 3.11 build on the machine.

    test_agent_python.py AGENT EMBER FIXTURES_DIR CASE   (CASE: test_agent_python__*)

Each case runs a Python program beside the agent (--pid: only its own
processes are sampled, whatever else runs) and decodes the profiles the
agent wrote with protobuf (Debian's python3-protobuf, pprof's own
profile.proto): a Python frame is a location of the mapping "[python]"
whose line names its function (qualified name, file) and line.  A case
that cannot run here exits 77 with the reason: no BPF, no root, no
python3.11, no protoc.
"""
import gzip
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember_test  # noqa: E402
import packages  # noqa: E402
import test_agent as ta  # noqa: E402  (its Agent, require_bpf, TMP, CHILDREN)
from ember_test import check, skip, wait_for  # noqa: E402

PYTHON = "/usr/bin/python3.11"
PYTHON_DEBUG = "/usr/bin/python3.11d"
PPROF_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"

# ---- reading the agent's profiles ---------------------------------------------


def profile_pb2():
    if not packages.which("protoc"):
        skip(packages.missing("protoc", "the agent's profiles are decoded with protobuf"))
    out = os.path.join(ta.TMP, "pb")
    if not os.path.isdir(out):
        os.mkdir(out)
        subprocess.run(["protoc", "--proto_path=" + os.path.dirname(PPROF_PROTO),
                        "--python_out=" + out, PPROF_PROTO], check=True)
        sys.path.insert(0, out)
    import profile_pb2
    return profile_pb2


class Frame:
    """A frame of a sample: Python (its function, file, line) or native."""

    def __init__(self, python, name="", file="", line=0, mapping=""):
        self.python, self.name, self.file, self.line = python, name, file, line
        self.mapping = mapping

    def __repr__(self):
        if self.python:
            return "%s (%s:%d)" % (self.name, os.path.basename(self.file), self.line)
        return "[%s]" % os.path.basename(self.mapping)


def samples(agent, pid, sample_type="samples", why=""):
    """[(labels, value, [Frame] leaf first)] of process pid in every profile
    the agent wrote, user frames only (the kernel's dropped); why: said
    when there is none."""
    pb = profile_pb2()
    got = []
    for path in agent.profiles():
        p = pb.Profile()
        with gzip.open(path) as f:
            p.ParseFromString(f.read())
        s = p.string_table
        types = [s[t.type] for t in p.sample_type]
        if sample_type not in types:
            continue
        k = types.index(sample_type)
        maps = {m.id: s[m.filename] for m in p.mapping}
        fns = {f.id: f for f in p.function}
        locs = {}
        for lc in p.location:
            mp = maps.get(lc.mapping_id, "")
            if mp == "[python]":
                fn = fns[lc.line[0].function_id]
                locs[lc.id] = Frame(True, s[fn.name], s[fn.filename], lc.line[0].line)
            elif mp != "[kernel.kallsyms]":
                locs[lc.id] = Frame(False, mapping=mp)
        for smp in p.sample:
            labels = {s[lb.key]: s[lb.str] for lb in smp.label}
            if labels.get("@pid") != str(pid) or not smp.value[k]:
                continue
            got.append((labels, smp.value[k],
                        [locs[i] for i in smp.location_id if i in locs]))
    check(got, "no %s sample of pid %d in the agent's %d profiles%s"
          % (sample_type, pid, len(agent.profiles()), why))
    return got


def python_names(frames):
    return [f.name for f in frames if f.python]


def share(got, pred):
    total = sum(v for _, v, _ in got)
    return sum(v for _, v, f in got if pred(f)) / total, total


def report(got, n=5):
    top = sorted(got, key=lambda s: -s[1])[:n]
    return "; ".join("%d x %s" % (v, " <- ".join(map(repr, f[:10]))) for _, v, f in top)


def has_run(names, run):
    n = len(run)
    return any(names[i:i + n] == run for i in range(len(names) - n + 1))


def start(python, script, *args):
    if not os.access(python, os.X_OK):
        skip(packages.missing(python, "the CPython this case profiles"))
    path = os.path.join(ta.TMP, "work_%d.py" % len(ta.CHILDREN))
    with open(path, "w") as f:
        f.write(script)
    p = subprocess.Popen([python, path] + [str(a) for a in args], stdout=subprocess.PIPE,
                         text=True)
    ta.CHILDREN.append(p)
    check(p.stdout.readline().strip() == "ready", "%s did not start" % python)
    return p, path


def profile(python, script, seconds=5, agent_args=()):
    """Run script under python for about seconds, sampled by the agent:
    the agent (stopped), the process' pid, the script's path and the
    agent's metrics before it stopped."""
    ta.require_bpf()
    profile_pb2()
    p, path = start(python, script, seconds + 30)
    agent = ta.Agent(["--pid", str(p.pid)] + list(agent_args))
    time.sleep(seconds)
    metrics = agent.metrics()
    agent.stop()
    p.kill()
    p.wait()
    return agent, p.pid, path, metrics


def metric(text, name):
    m = re.search(r"^%s ([0-9.e+]+)$" % re.escape(name), text, re.M)
    check(m, "no metric " + name)
    return float(m.group(1))


def line_of(path, text):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError("no %r in %s" % (text, path))


# ---- a worker: a method, a function, the module ----------------------------

WORKER = '''import sys, time
class Worker:
    def hash_loop(self, n):
        h = 0
        for i in range(n):
            h = (h * 31 + i) & 0xffffffff  # the hot line
        return h

    def run(self, until):
        while time.time() < until:
            self.hash_loop(20000)  # run's call


def outer(until):
    Worker().run(until)  # outer's call


print("ready", flush=True)
outer(time.time() + float(sys.argv[1]))  # the module's call
'''


def check_worker(python):
    agent, pid, path, metrics = profile(python, WORKER)
    got = samples(agent, pid)
    run = ["Worker.hash_loop", "Worker.run", "outer", "<module>"]
    frac, total = share(got, lambda f: has_run(python_names(f), run))
    check(total >= 100, "only %d samples of the worker" % total)
    check(frac >= 0.85, "only %.1f%% of %d samples show %s: %s"
          % (100 * frac, total, " <- ".join(run), report(got)))
    # a caller's line is that of its call to the frame above it
    calls = {("Worker.hash_loop", "Worker.run"): line_of(path, "# run's call"),
             ("Worker.run", "outer"): line_of(path, "# outer's call"),
             ("outer", "<module>"): line_of(path, "# the module's call")}
    loop = range(line_of(path, "for i in range(n)"), line_of(path, "return h") + 1)
    hot = 0
    for _, v, frames in got:
        py = [f for f in frames if f.python]
        for f in py:
            check(f.file == path, "%r: file %r, not %r" % (f, f.file, path))
        for callee, caller in zip(py, py[1:]):
            want = calls.get((callee.name, caller.name))
            check(want is None or caller.line == want,
                  "%r called %r from line %d, not %s" % (caller, callee, caller.line, want))
        if py and py[0].name == "Worker.hash_loop" and py[0].line in loop:
            hot += v
    # the eval function's native frame is replaced, the native frames
    # below the module's (PyEval_EvalCode, ..., main) stay
    below = share(got, lambda f: bool(f) and f[-1].python is False and any(x.python for x in f))
    check(below[0] >= 0.85, "the native frames below <module> are missing: " + report(got))
    check(hot / total >= 0.8, "Worker.hash_loop's lines: %d of %d samples in its loop (%s)"
          % (hot, total, report(got)))
    check(metric(metrics, "ember_agent_python_processes_total") >= 1,
          "no Python process counted")
    print("%s: %.1f%% of %d samples show %s; top: %s"
          % (python, 100 * frac, total, " <- ".join(run), report(got, 3)))


def test_agent_python__names_files_and_lines():
    """Debian's python3.11: a method, a function and the module, each with
    its file and the line it is at, in the order Python called them, with
    the interpreter's native frames (main, Py_RunMain, ...) below."""
    check_worker(PYTHON)


def test_agent_python__debug_build():
    """The same program under python3.11d, a second build of CPython 3.11
    (the debug one: other code, other addresses, the same layout)."""
    check_worker(PYTHON_DEBUG)


def other_builds():
    """CPython 3.11 interpreters on the machine other than Debian's two
    (pyenv's, /usr/local's), by the file they resolve to."""
    seen = {os.path.realpath(PYTHON), os.path.realpath(PYTHON_DEBUG)}
    found = []
    cands = [shutil.which("python3"), shutil.which("python3.11"), "/usr/local/bin/python3.11"]
    root = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(root):
        cands += [os.path.join(root, v, "bin", "python3.11") for v in sorted(os.listdir(root))]
    for c in cands:
        if not c or not os.access(c, os.X_OK) or os.path.realpath(c) in seen:
            continue
        r = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] == (3, 11))"],
                           capture_output=True, text=True)
        if r.stdout.strip() == "True":
            seen.add(os.path.realpath(c))
            found.append(c)
    return found


def test_agent_python__other_builds():
    """Every other build of CPython 3.11 found here (pyenv's links
    libpython3.11.so: the interpreter in a shared library)."""
    builds = other_builds()
    if not builds:
        skip("no CPython 3.11 here besides Debian's python3.11 and python3.11d")
    for b in builds:
        check_worker(b)


def test_agent_python__process_gone_before_the_profile():
    """A Python process that exits long before the interval's profile is
    built (10 s): its code objects were read as its samples arrived, so
    its frames are named all the same."""
    ta.require_bpf()
    profile_pb2()
    agent = ta.Agent(["--interval", "10"])
    p, _ = start(PYTHON, WORKER, 3)
    p.wait(timeout=60)
    wait_for(lambda: agent.profiles(), "the interval's profile", 30)
    agent.stop()
    got = samples(agent, p.pid)
    named, total = share(got, lambda f: "Worker.hash_loop" in python_names(f))
    unnamed = share(got, lambda f: "[python]" in python_names(f))[0]
    check(named >= 0.8 and unnamed <= 0.05,
          "%.1f%% of %d samples named, %.1f%% [python]: %s"
          % (100 * named, total, 100 * unnamed, report(got)))
    print("exited after 3 s, profile at 10 s: %.1f%% of %d samples show Worker.hash_loop"
          % (100 * named, total))


# ---- Python, native, Python -----------------------------------------------

CALLBACK = '''import ctypes, sys, time
libc = ctypes.CDLL("libc.so.6")
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def py_compare(a, b):
    x = 0
    for i in range(300):
        x += i
    return a[0] - b[0]


cmp = CMP(py_compare)


def sort_round():
    arr = (ctypes.c_int * 200)(*range(200, 0, -1))
    libc.qsort(arr, 200, ctypes.sizeof(ctypes.c_int), cmp)


def main(until):
    while time.time() < until:
        sort_round()


print("ready", flush=True)
main(time.time() + float(sys.argv[1]))
'''


def test_agent_python__callback_through_c():
    """Python calls C (libc's qsort through ctypes and libffi), which calls
    back into Python: the stack shows py_compare, then native frames, then
    sort_round <- main <- <module>, in that order."""
    agent, pid, _, _ = profile(PYTHON, CALLBACK)
    got = samples(agent, pid)

    def interleaved(frames):
        names = [f.name if f.python else None for f in frames]
        if "py_compare" not in names or "sort_round" not in names:
            return False
        i, j = names.index("py_compare"), names.index("sort_round")
        between = frames[i + 1:j]
        return (i < j and between and all(not f.python for f in between)
                and python_names(frames[j:]) == ["sort_round", "main", "<module>"])

    cb = [s for s in got if "py_compare" in python_names(s[2])]
    frac, total = share(cb, interleaved)
    check(total >= 50, "only %d samples in py_compare: %s" % (total, report(got)))
    check(frac >= 0.85, "only %.1f%% of %d samples in py_compare show Python, native, "
          "Python: %s" % (100 * frac, total, report(cb)))
    libc = share(cb, lambda f: any("libc.so" in x.mapping for x in f if not x.python))[0]
    check(libc >= 0.85, "qsort's libc frames are missing: " + report(cb))
    print("%.1f%% of %d samples in py_compare: %s" % (100 * frac, total, report(cb, 2)))


# ---- a thread that runs without the GIL -------------------------------------

THREADS = '''import hashlib, sys, threading, time
DATA = bytes(8 << 20)  # ~20 ms a hash, so the hasher spends most of its time in it
sys.setswitchinterval(0.001)  # and waits little for the GIL between two hashes


def hasher(until):
    while time.time() < until:
        hashlib.sha256(DATA).digest()  # releases the GIL while it hashes


def spinner(until):
    x = 0
    while time.time() < until:
        x += 1


until = time.time() + float(sys.argv[1])
t = threading.Thread(target=hasher, args=(until,))
t.start()
print("ready", flush=True)
spinner(until)
'''


def test_agent_python__thread_without_the_gil():
    """Two threads: one hashes in OpenSSL with the GIL released, the other
    spins in Python holding it.  The hashing thread's samples show hasher
    (its thread state found in the interpreter's list, not the GIL
    holder's), the spinner's show spinner: never the other's frames."""
    agent, pid, _, _ = profile(PYTHON, THREADS)
    got = samples(agent, pid)
    in_crypto = [s for s in got if s[2] and not s[2][0].python and "crypto" in s[2][0].mapping]
    frac, total = share(in_crypto, lambda f: "hasher" in python_names(f)
                        and "spinner" not in python_names(f))
    # On a loaded 2-core CI machine the hasher may get little CPU; 30
    # samples still tell a 90% attribution from a wrong one.
    check(total >= 30, "only %d samples in libcrypto: %s" % (total, report(got)))
    check(frac >= 0.9, "only %.1f%% of %d samples in libcrypto show hasher alone: %s"
          % (100 * frac, total, report(in_crypto)))
    spin = [s for s in got if "spinner" in python_names(s[2])]
    check(spin and all("hasher" not in python_names(f) for _, _, f in spin),
          "the spinner's samples: " + report(spin))
    print("%.1f%% of %d samples in libcrypto show hasher; %d samples show spinner"
          % (100 * frac, total, sum(v for _, v, _ in spin)))


# ---- off-CPU ---------------------------------------------------------------------

SLEEPER = '''import sys, time


def wait_for_io():
    time.sleep(0.05)


def serve(until):
    while time.time() < until:
        wait_for_io()
        x = 0
        for i in range(20000):
            x += i


print("ready", flush=True)
serve(time.time() + float(sys.argv[1]))
'''


def test_agent_python__off_cpu_names_the_waiting_function():
    """--off-cpu on a Python service that waits in time.sleep: its blocked
    time is under wait_for_io <- serve <- <module>."""
    agent, pid, _, metrics = profile(PYTHON, SLEEPER, agent_args=["--off-cpu"])
    said = "\n".join(re.findall(r"^ember_agent_offcpu.*$", metrics, re.M))
    log = "\n".join(l for l in agent.text().splitlines() if "table" not in l)
    got = samples(agent, pid, "off_cpu", ":\n%s\n%s\n%s" % (said, metrics[-3000:], log[-3000:]))
    frac, total = share(got, lambda f: has_run(python_names(f), ["wait_for_io", "serve",
                                                                  "<module>"]))
    check(total >= 1e9, "only %.2f s of off-CPU time in 5 s" % (total / 1e9))
    # the rest: blocks whose walk stopped in libc (its unwind table not
    # yet compiled when they began, longer on a loaded host: 10.5% of
    # them once in the sanitizer pass of make test, against 90% asked)
    check(frac >= 0.85, "only %.1f%% of %.2f s off-CPU under wait_for_io: %s"
          % (100 * frac, total / 1e9, report(got)))
    print("%.1f%% of %.2f s off-CPU under wait_for_io <- serve <- <module>"
          % (100 * frac, total / 1e9))


# ---- a version the agent does not read --------------------------------------


def elf_symbol_offset(path, name):
    """File offset of dynamic symbol name's value in the ELF at path."""
    r = subprocess.run(["readelf", "-W", "--dyn-syms", path], capture_output=True, text=True,
                       check=True)
    m = re.search(r"^\s*\d+: ([0-9a-f]+)\s+\d+\s+OBJECT\s+\S+\s+\S+\s+\S+\s+%s$"
                  % re.escape(name), r.stdout, re.M)
    check(m, "no %s in %s" % (name, path))
    vaddr = int(m.group(1), 16)
    r = subprocess.run(["readelf", "-W", "-l", path], capture_output=True, text=True, check=True)
    for lm in re.finditer(r"^\s*LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ "
                          r"0x([0-9a-f]+)", r.stdout, re.M):
        off, va, filesz = (int(g, 16) for g in lm.groups())
        if va <= vaddr < va + filesz:
            return off + vaddr - va
    raise AssertionError("%s is in no segment of %s" % (name, path))


def test_agent_python__unknown_version_native_only():
    """A CPython whose Py_Version says 3.12 (python3.11 with that constant
    patched): the agent reads no Python frame of it, says so once in its
    log, counts it in its metrics, and keeps its native frames."""
    if not packages.which("readelf"):
        skip(packages.missing("readelf", "finds Py_Version in the interpreter"))
    fake = os.path.join(ta.TMP, "python3.12-fake")
    shutil.copy(PYTHON, fake)
    off = elf_symbol_offset(fake, "Py_Version")
    with open(fake, "r+b") as f:
        f.seek(off)
        check(struct.unpack("<I", f.read(4))[0] >> 16 == 0x030b, "Py_Version is not 3.11's")
        f.seek(off)
        f.write(struct.pack("<I", 0x030c00f0))
    ta.require_bpf()
    profile_pb2()
    p, _ = start(fake, WORKER, 60)
    agent = ta.Agent(["--pid", str(p.pid)])
    time.sleep(4)
    unsupported = agent.metric("ember_agent_python_unsupported_total")
    text = agent.stop()
    p.kill()
    got = samples(agent, p.pid)
    check(all(not f.python for _, _, fr in got for f in fr),
          "Python frames read from a 3.12: " + report(got))
    said = re.findall(r"runs CPython 3\.12 .*native frames only", text)
    check(len(said) == 1, "the log says it %d times:\n%s" % (len(said), text[-3000:]))
    check(unsupported >= 1, "ember_agent_python_unsupported_total is %g" % unsupported)
    print("3.12: %d samples, native frames only; the log: %s" % (len(got), said[0]))


def main():
    ember_test.run_case(ta.CASE, "test_agent_python__", globals(), ta.TMP, ta.CHILDREN)


if __name__ == "__main__":
    main()
