#!/usr/bin/env python3
"""check_packages.py CASE SOURCE_DIR - the Debian packages the tests need
are the ones the Makefile installs.

tests/packages.txt maps every tool and file the tests and the fixture build
use to its Debian package.  Cases:

  listed    every package of tests/packages.txt is in the Makefile's
            BUILD_PKGS/TEST_PKGS, or part of every Debian system (priority
            "required", or a dependency of one); and every tool the test
            drivers call is in tests/packages.txt.  The drivers are scanned
            for the usual shapes: which("x") / need("x") / run(["x", ...]) /
            cmd = ["x", ...] in Python, system("x ...") / popen / snprintf(cmd,
            ..., "x ...") in C (each command of a pipeline), `command -v x`
            and `for t in x y; do command -v "$t"` in shell, find_program()
            in CMake.  A tool called in another shape escapes the scan.
  provided  with the packages installed, each entry exists and belongs
            (dpkg -S) to its package or to a package it depends on: the map
            is right.  Tools are looked up in Debian's own PATH
            (/usr/sbin:/usr/bin:/sbin:/bin), where the packages put them;
            a different one earlier in the caller's PATH is noted.
            Exits 77 (after checking the rest) if a package is not
            installed, naming it.
  selftest  listed fails on a copy of the tree with libc6-dbg taken out of
            the Makefile and drivers calling unlisted tools.

Exit 0 pass, 1 fail, 77 skip.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import packages  # noqa: E402

DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def makefile_packages(src):
    """The words of BUILD_PKGS and TEST_PKGS in the Makefile (with its
    backslash continuations)."""
    text = open(os.path.join(src, "Makefile")).read().replace("\\\n", " ")
    pkgs = set()
    for var in ("BUILD_PKGS", "TEST_PKGS"):
        m = re.search(r"^%s\s*:?=(.*)$" % var, text, re.M)
        assert m, "Makefile: no %s" % var
        pkgs.update(m.group(1).split())
    return pkgs


def dpkg_status():
    """{package: (priority, [dependency names], installed)} and
    {virtual name: [providers]} from dpkg's status."""
    fmt = "${Package}\\t${Priority}\\t${db:Status-Abbrev}\\t${Provides}\\t${Pre-Depends}, ${Depends}\\n"
    out = subprocess.run(["dpkg-query", "-W", "-f=" + fmt], capture_output=True,
                         text=True, check=True).stdout
    pkgs, provides = {}, {}
    for line in out.splitlines():
        name, prio, status, prov, deps = (line.split("\t") + [""] * 5)[:5]
        names = [re.split(r"[\s:(]", d.strip())[0] for d in re.split(r"[,|]", deps)]
        pkgs[name] = (prio, [n for n in names if n], status.startswith("ii"))
        for p in prov.split(","):
            if p.strip():
                provides.setdefault(re.split(r"[\s:(]", p.strip())[0], []).append(name)
    return pkgs, provides


def closure(roots, pkgs, provides):
    """roots and every installed package they depend on, transitively."""
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for d in pkgs.get(p, ("", [], False))[1]:
            todo.extend([d] if d in pkgs else provides.get(d, []))
    return seen


# ---- what the drivers call ---------------------------------------------------

PY_SHAPES = [
    r'\b(?:which|need)\(\s*"([A-Za-z][\w.+-]*)"',
    r'\b(?:run|Popen|check_output|check_call|call)\(\s*\[\s*"([A-Za-z][\w.+-]*)"',
    r'\bcmd\w*\s*=\s*\[\s*"([A-Za-z][\w.+-]*)"',
]
SH_SHAPES = [
    r'\bcommand -v "?([A-Za-z][\w.+-]*)"?',
    r'\bfor (\w+) in ([^;\n]+); do\s*\n?\s*command -v "?\$\{?\1\b',
]
CMAKE_SHAPES = [r'\bfind_program\(\s*\w+\s+(?:NAMES\s+)?([A-Za-z][\w.+-]*)']


def shell_commands(cmdline):
    """The programs of a shell command line: the first word of each command
    of its pipelines, after `env` and VAR=value assignments."""
    out = []
    for part in re.split(r"\|\||&&|[|;]", cmdline):
        words = part.split()
        while words and (words[0] == "env" or re.match(r"^[A-Z_][A-Z0-9_]*=", words[0])):
            words.pop(0)
        if words and re.match(r"^[a-z][\w.+-]*$", words[0]):
            out.append(words[0])
    return out


def c_commands(text):
    """Programs run from C: string literals (adjacent ones joined) given
    to system(), popen() or snprintf(cmd, ...)."""
    text = re.sub(r'"\s+"', "", text)
    out = []
    for m in re.finditer(r'(?:system|popen)\(\s*"((?:[^"\\]|\\.)*)"'
                         r'|snprintf\(\s*cmd\w*\s*,[^,]+,\s*"((?:[^"\\]|\\.)*)"', text):
        lit = (m.group(1) or m.group(2) or "")
        lit = re.sub(r"'[^']*'", "''", lit.replace('\\"', "'"))
        out += shell_commands(lit)
    return out


def tools_called(src):
    """{tool: [files calling it]} over the test drivers, tests' CMake and
    the fixture scripts."""
    found = {}

    def add(tool, path):
        found.setdefault(tool, set()).add(os.path.relpath(path, src))

    files = [f for f in glob.glob(os.path.join(src, "tests", "**", "*"), recursive=True)
             if "/fuzz/corpus/" not in f and os.path.isfile(f)]
    files += glob.glob(os.path.join(src, "fixtures", "elf", "*.sh"))
    files += glob.glob(os.path.join(src, "fixtures", "elf", "CMakeLists.txt"))
    for path in files:
        name = os.path.basename(path)
        if name in ("check_packages.py", "packages.py"):
            continue
        try:
            text = open(path).read()
        except UnicodeDecodeError:
            continue
        if name.endswith(".py"):
            for shape in PY_SHAPES:
                for m in re.finditer(shape, text):
                    add(m.group(1), path)
        elif name.endswith(".sh"):
            for m in re.finditer(SH_SHAPES[0], text):
                if not m.group(1).startswith("$"):
                    add(m.group(1), path)
            for m in re.finditer(SH_SHAPES[1], text):
                for t in m.group(2).split():
                    add(t, path)
        elif name.endswith(".c"):
            for t in c_commands(text):
                add(t, path)
        elif name == "CMakeLists.txt":
            for shape in CMAKE_SHAPES:
                for m in re.finditer(shape, text):
                    add(m.group(1), path)
    return found


def case_listed(src, min_tools=10):
    reg = packages.entries()
    listed = makefile_packages(src)
    pkgs, provides = dpkg_status()
    base = closure([p for p, v in pkgs.items() if v[0] == "required"], pkgs, provides)
    bad = 0
    for entry, pkg in sorted(reg.items()):
        if pkg not in listed and pkg not in base:
            print("FAIL: '%s' needs Debian package %s, which the Makefile does not install "
                  "(add it to TEST_PKGS) and which is not part of every Debian" % (entry, pkg))
            bad += 1
    tools = tools_called(src)
    for tool, where in sorted(tools.items()):
        if tool not in reg:
            print("FAIL: '%s' (run by %s) is not in tests/packages.txt: add it with its "
                  "Debian package" % (tool, ", ".join(sorted(where))))
            bad += 1
    print("%d entries of tests/packages.txt, %d Makefile packages, %d tools called by "
          "the drivers (%s)" % (len(reg), len(listed), len(tools), " ".join(sorted(tools))))
    if len(tools) < min_tools:
        print("FAIL: the scan found almost nothing: %r" % tools)
        return 1
    return 1 if bad else 0


def locate(entry):
    """The file behind a packages.txt entry on this machine, or None."""
    if entry.startswith("/"):
        return entry if os.path.exists(entry) else None
    if entry.startswith("lib:"):
        return packages.library(entry[4:])
    if entry.startswith("debug:"):
        return packages.debug_file(entry[6:])
    return shutil.which(entry, path=DEBIAN_PATH)


def owner(path):
    """The package dpkg says installed path (as found, or resolved), or None."""
    for p in (path, os.path.realpath(path)):
        for cand in {p, re.sub(r"^/usr(/(?:s?bin|lib\w*)/)", r"\1", p),
                     re.sub(r"^/((?:s?bin|lib\w*)/)", r"/usr/\1", p)}:
            r = subprocess.run(["dpkg-query", "-S", cand], capture_output=True, text=True)
            if r.returncode == 0:
                return r.stdout.split(":")[0].split(",")[0].strip()
    return None


def case_provided(src):
    pkgs, provides = dpkg_status()
    bad, absent = 0, set()
    for entry, pkg in sorted(packages.entries().items()):
        if pkg not in pkgs or not pkgs[pkg][2]:
            absent.add(pkg)
            continue
        path = locate(entry)
        if not path:
            print("FAIL: %s is installed but '%s' is not found: tests/packages.txt is wrong"
                  % (pkg, entry))
            bad += 1
            continue
        own = owner(path)
        deps = closure([pkg], pkgs, provides)
        if own not in deps:
            print("FAIL: '%s' is %s, from package %s, which is neither %s nor one of its "
                  "dependencies" % (entry, path, own, pkg))
            bad += 1
            continue
        print("ok   %-24s %s (%s%s)" % (entry, path, own, "" if own == pkg else ", via " + pkg))
        first = shutil.which(entry) if "/" not in entry and ":" not in entry else None
        if first and os.path.realpath(first) != os.path.realpath(path):
            print("note: '%s' in this PATH is %s, not Debian's %s" % (entry, first, path))
    if bad:
        return 1
    if absent:
        print("SKIP: not installed: %s (run `make deps`)" % " ".join(sorted(absent)))
        return 77
    return 0


def case_selftest(src):
    """listed fails on a Makefile without libc6-dbg and on a driver that
    calls a tool the list lacks, naming both."""
    import contextlib
    import io
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        text = open(os.path.join(src, "Makefile")).read()
        assert " libc6-dbg " in text, "the Makefile lists no libc6-dbg to take out"
        with open(os.path.join(tmp, "Makefile"), "w") as f:
            f.write(text.replace(" libc6-dbg ", " "))
        os.makedirs(os.path.join(tmp, "tests", "x"))
        with open(os.path.join(tmp, "tests", "x", "test_x.py"), "w") as f:
            f.write('import shutil\n' + 'X = shutil.which("frobnicate")\n' * 11)
        with open(os.path.join(tmp, "tests", "x", "test_y.c"), "w") as f:
            f.write('int main(void) { return system("gdb -batch | " "quux -x"); }\n')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = case_listed(tmp, min_tools=0)
    text = out.getvalue()
    want = ["'debug:libc.so.6' needs Debian package libc6-dbg", "'frobnicate' (run by tests/x/test_x.py)",
            "'quux' (run by tests/x/test_y.c)"]
    missing = [w for w in want if w not in text]
    if rc != 1 or missing or "'gdb'" in text:
        print("FAIL: listed on a broken tree: rc %d, output lacks %r:\n%s" % (rc, missing, text))
        return 1
    print("ok: listed refuses a Makefile without libc6-dbg and unlisted tools")
    return 0


def main():
    cases = {"listed": case_listed, "provided": case_provided, "selftest": case_selftest}
    if len(sys.argv) != 3 or sys.argv[1] not in cases:
        print(__doc__)
        return 2
    if not shutil.which("dpkg-query"):
        print("SKIP: no dpkg-query: not a Debian system")
        return 77
    return cases[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
