#!/usr/bin/env python3
"""test_pprof_go.py PPROF_TOOL WORKDIR CASE - wire/pprof.h against Go's pprof.

Profiles written by Go itself (runtime/pprof, through goprof/main.go,
built once into WORKDIR) are decoded and re-encoded by pprof_tool, and
`go tool pprof` must print the same for both; profiles Ember builds or
symbolizes must show, in `go tool pprof`, exactly the functions, lines
and inline frames Ember put in them.

Each test_pprof_go__<case> function is one CTest test.  Exit status: 0
pass, 1 fail, 77 skipped (no Go toolchain).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


class Skip(Exception):
    pass


class Env:
    def __init__(self, tool, workdir, tmp):
        self.tool = tool
        self.workdir = workdir
        self.tmp = tmp
        self.go = shutil.which("go")
        if not self.go:
            raise Skip("'go' not found in PATH (apt-get install golang-go)")
        self.env = dict(os.environ, GOCACHE=os.path.join(workdir, "gocache"),
                        GOPATH=os.path.join(workdir, "gopath"), HOME=tmp,
                        GOPROXY="off", GOTOOLCHAIN="local", GOENV="off",
                        GOFLAGS="", CGO_ENABLED="0", GO111MODULE="on")

    def run(self, *args, check=True):
        p = subprocess.run(list(args), env=self.env, cwd=self.tmp, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if check and p.returncode != 0:
            raise AssertionError("%s exited %d:\n%s%s" % (" ".join(args), p.returncode,
                                                          p.stdout, p.stderr))
        return p

    def goprof(self):
        """Build goprof (once, under WORKDIR) and write cpu and heap profiles."""
        exe = os.path.join(self.workdir, "goprof")
        src = os.path.join(HERE, "goprof", "main.go")
        if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
            os.makedirs(self.workdir, exist_ok=True)
            self.run(self.go, "build", "-o", exe + ".tmp", src)
            os.replace(exe + ".tmp", exe)
        cpu, heap = self.path("cpu.pb.gz"), self.path("heap.pb.gz")
        self.run(exe, "-cpu", cpu, "-heap", heap)
        return cpu, heap

    def path(self, name):
        return os.path.join(self.tmp, name)

    def pprof(self, *args):
        return self.run(self.go, "tool", "pprof", "-symbolize=none", *args).stdout

    def ember(self, *args, check=True):
        return self.run(self.tool, *args, check=check)


def expect_equal(what, want, got):
    if want != got:
        raise AssertionError("%s differs:\n--- Go's\n%s\n--- Ember's\n%s" % (what, want, got))


def raw_locations(text):
    """The Locations section of `pprof -raw`: {id: [lines...]}."""
    locs, cur, section = {}, None, None
    for line in text.splitlines():
        if line in ("Locations", "Mappings") or line.startswith("Samples"):
            section = line
            continue
        if section != "Locations":
            continue
        m = re.match(r"\s*(\d+): (0x[0-9a-f]+) M=\d+\s*(.*)$", line)
        if m:
            cur = int(m.group(1))
            locs[cur] = {"addr": int(m.group(2), 16), "frames": []}
            if m.group(3):
                locs[cur]["frames"].append(m.group(3).strip())
        elif cur is not None and line.strip():
            locs[cur]["frames"].append(line.strip())
    return locs


def reencode_compare(env, src, mode):
    out = env.path("re-" + mode + ".pb")
    env.ember("reencode", src, out, mode)
    with open(out, "rb") as f:
        head = f.read(2)
    if (head == b"\x1f\x8b") != (mode == "gzip"):
        raise AssertionError("'%s' is not %s" % (out, mode))
    for view in (["-raw"], ["-traces"], ["-top", "-nodecount=1000"]):
        expect_equal(" ".join(view), env.pprof(*view, src), env.pprof(*view, out))
    return out


def test_pprof_go__reencode_cpu_raw(env):
    cpu, _ = env.goprof()
    raw = env.pprof("-raw", cpu)
    if "main.emberLeaf" not in raw or not raw_locations(raw):
        raise AssertionError("Go's CPU profile has no emberLeaf samples:\n" + raw)
    reencode_compare(env, cpu, "raw")


def test_pprof_go__reencode_cpu_gzip(env):
    cpu, _ = env.goprof()
    reencode_compare(env, cpu, "gzip")


def test_pprof_go__reencode_heap(env):
    _, heap = env.goprof()
    out = reencode_compare(env, heap, "gzip")
    if "main.emberMiddle" not in env.pprof("-top", "-nodecount=1000", out):
        raise AssertionError("emberMiddle missing from the re-encoded heap profile")


def test_pprof_go__symbolize_sets_lines(env):
    cpu, _ = env.goprof()
    out = env.path("symbolized.pb.gz")
    env.ember("symbolize", cpu, out)
    before = raw_locations(env.pprof("-raw", cpu))
    after = raw_locations(env.pprof("-raw", out))
    if sorted(before) != sorted(after):
        raise AssertionError("location ids changed: %s -> %s" % (sorted(before), sorted(after)))
    for lid, loc in after.items():
        a = loc["addr"]
        want = ["inl_%x /src/ember/inl.h:%d s=1" % (a, (a & 0xfff) + 1),
                "fn_%x /src/ember/fn.c:200 s=100" % a]
        expect_equal("location %d" % lid, want, loc["frames"])
    traces = env.pprof("-traces", out)
    if "main.emberLeaf" in traces or "(inline)" not in traces:
        raise AssertionError("traces still show Go's names or no inline frame:\n" + traces)


BUILT_TRACES = """\
-----------+-------------------------------------------------------
     300ms   app::next_token() (inline)
             app::parse(char const*)
             main
-----------+-------------------------------------------------------
     120ms   ember_emit
             main
-----------+-------------------------------------------------------
"""


def test_pprof_go__built_profile_reads_in_pprof(env):
    out = env.path("built.pb.gz")
    env.ember("build", out)
    traces = env.pprof("-traces", out)
    body = traces[traces.index("-----------+"):]
    expect_equal("-traces of the built profile", BUILT_TRACES, body)
    top = env.pprof("-top", "-nodecount=100", out)
    for name in ("app::next_token()", "ember_emit", "main", "app::parse(char const*)"):
        if name not in top:
            raise AssertionError("'%s' missing from -top:\n%s" % (name, top))
    raw = env.pprof("-raw", out)
    for frag in ("app::next_token() /src/app/lex.h:7 s=5",
                 "app::parse(char const*) /src/app/parse.cc:44 s=40",
                 "0x555555554000/0x555555600000/0x1000 /usr/bin/app 0123456789abcdef [FN]"):
        if frag not in raw:
            raise AssertionError("'%s' missing from -raw:\n%s" % (frag, raw))


def test_pprof_go__rejects_truncated_go_profile(env):
    cpu, _ = env.goprof()
    with open(cpu, "rb") as f:
        data = f.read()
    bad = env.path("truncated.pb.gz")
    with open(bad, "wb") as f:
        f.write(data[:len(data) // 2])
    p = env.ember("check", bad, check=False)
    if p.returncode != 1 or "gzip: truncated stream" not in p.stderr:
        raise AssertionError("truncated profile: exit %d, %s" % (p.returncode, p.stderr))
    p = env.ember("check", cpu, check=False)
    if p.returncode != 0:
        raise AssertionError("Go's own profile rejected: " + p.stderr)


def main():
    if len(sys.argv) != 4:
        print("usage: test_pprof_go.py PPROF_TOOL WORKDIR CASE", file=sys.stderr)
        return 2
    tool, workdir, case = sys.argv[1:]
    fn = globals().get(case)
    if not case.startswith("test_pprof_go__") or not fn:
        print("no case '%s'" % case, file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="ember-wire-go.")
    try:
        fn(Env(os.path.abspath(tool), os.path.abspath(workdir), tmp))
    except Skip as e:
        print("SKIP: %s" % e, file=sys.stderr)
        return SKIP
    except AssertionError as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok %s" % case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
