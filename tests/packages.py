"""The Debian package behind each tool or file the tests need
(tests/packages.txt), for the Python drivers' skip messages.

    sys.path.insert(0, <tests/>); import packages
    gdb = packages.which("gdb")            # path, or None
    if not gdb: skip(packages.missing("gdb"))

Asking about an entry that tests/packages.txt does not list raises
AssertionError: a driver cannot need a package no list names.
"""
import os
import shutil
import subprocess

REGISTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "packages.txt")


def entries(path=REGISTRY):
    """{entry: package} from tests/packages.txt."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 2:
                out[fields[0]] = fields[1]
    return out


def package(entry):
    """The Debian package that provides entry."""
    pkgs = entries()
    if entry not in pkgs:
        raise AssertionError("'%s' is not listed in tests/packages.txt" % entry)
    return pkgs[entry]


def missing(entry, what=None):
    """A skip reason naming the package: "'gdb' not found in PATH (Debian
    package gdb: run `make deps`, or apt-get install gdb)"."""
    pkg = package(entry)
    if what is None:
        what = "'%s' not found in PATH" % entry
    return "%s (Debian package %s: run `make deps`, or apt-get install %s)" % (what, pkg, pkg)


def which(tool, *alternatives):
    """shutil.which of tool, then of each alternative name; None if none
    is found.  tool must be listed in tests/packages.txt."""
    package(tool)
    for name in (tool,) + alternatives:
        path = shutil.which(name)
        if path:
            return path
    return None


def build_id(elf):
    """The GNU build ID of elf as hex (readelf -n), or None."""
    out = subprocess.run(["readelf", "-n", elf], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split()[-1]
    return None


def library(name):
    """The path of shared library name as the dynamic linker finds it
    (ldconfig -p, this machine's ABI), or None."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    found = [line.split()[-1] for line in out.splitlines()
             if line.split()[:1] == [name] and "=>" in line]
    native = [p for p in found if "/lib32/" not in p and "/libx32/" not in p]
    return (native or found or [None])[0]


def debug_file(lib):
    """The detached debug file of shared library lib (by build ID under
    /usr/lib/debug/.build-id), or None when it is not installed."""
    path = library(lib)
    bid = path and build_id(path)
    if not bid:
        return None
    f = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    return f if os.path.exists(f) else None
