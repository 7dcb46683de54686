#!/usr/bin/env python3
"""End-to-end tests of `ember symbolize` as an llvm-symbolizer drop-in.

Usage: test_cli.py EMBER_BIN FIXTURES_DIR [CASE]

Each case is a function test_cli__NAME; with CASE only that one runs.
Exit 0 pass, 1 fail, 2 no such CASE, 77 skip (llvm-symbolizer missing, or
the one CASE asked for cannot run here: it raises Skip with the reason).
"""
import json
import os
import random
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import packages  # noqa: E402

EMBER, FIX = sys.argv[1], sys.argv[2]
LLVM = packages.which("llvm-symbolizer", "llvm-symbolizer-14")


class Skip(Exception):
    """A case that cannot run here: the reason names the package."""


def fx(name):
    return os.path.join(FIX, name)


def func_addrs(elf, n=40):
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True).stdout
    addrs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
            v, s = int(f[1], 16), int(f[2], 0)
            addrs += [v, v + s // 2, v + s - 1]
    return sorted(set(addrs))[:n]


def run(cmd, stdin=""):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)


def ember(*args, stdin=""):
    return run([EMBER, "symbolize"] + list(args), stdin)


def same_as_llvm(elf, flags, strip_start=False, named_only=False):
    """Byte-for-byte equal output.  strip_start drops the JSON Start*
    fields (llvm-symbolizer leaves some empty for C++ clones); named_only
    compares only answers where llvm-symbolizer found a name."""
    addrs = "".join("0x%x\n" % a for a in func_addrs(elf))
    ours = ember(*flags, "--obj=" + elf, stdin=addrs)
    theirs = run([LLVM] + flags + ["--obj=" + elf], addrs)
    a, b = ours.stdout, theirs.stdout
    if "--output-style=JSON" in flags:
        # "Source" is Ember's own field; llvm-symbolizer 14 leaves
        # StartFileName empty for inlined frames (it does not follow
        # DW_AT_abstract_origin there, though it does for StartLine).
        a = re.sub(r',"Source":"[a-z]+"', "", a)
        a = re.sub(r',"SymbolOffset":"0x[0-9a-f]+"', "", a)
        a, b = (re.sub(r',"StartFileName":"[^"]*"', "", x) for x in (a, b))
    if strip_start:
        a, b = (re.sub(r',"Start[A-Za-z]+":("[^"]*"|\d+)', "", x) for x in (a, b))
    if named_only:
        pairs = [(x, y) for x, y in zip(a.split("\n\n"), b.split("\n\n"))
                 if not y.startswith("??")]
        assert len(pairs) > 10, pairs
        a, b = ("\n\n".join(p[k] for p in pairs) for k in (0, 1))
    assert ours.returncode == 0, ours.stderr
    if a != b:
        for x, y in zip(a.splitlines(), b.splitlines()):
            if x != y:
                raise AssertionError("flags %s: ember %r != llvm %r" % (flags, x, y))
        raise AssertionError("flags %s: output lengths differ" % flags)


def test_cli__llvm_style_matches(): same_as_llvm(fx("c_O2_pie"), ["--inlines"])
def test_cli__gnu_style_matches(): same_as_llvm(fx("c_O2_pie"), ["--inlines", "--output-style=GNU"])
def test_cli__json_style_matches(): same_as_llvm(fx("c_O2_pie"), ["--inlines", "--output-style=JSON"])
def test_cli__pretty_print_matches(): same_as_llvm(fx("c_O2_pie"), ["-p", "-i", "-a"])
def test_cli__no_inlines_matches(): same_as_llvm(fx("c_O2_pie"), ["--no-inlines", "-a"])
def test_cli__short_names_match():
    # Where DWARF has nothing, llvm-symbolizer's short mode prints ?? while
    # Ember still names the symbol; compare the rest.
    same_as_llvm(fx("c_O2_pie"), ["--functions=short", "--basenames"], named_only=True)
def test_cli__functions_none_matches(): same_as_llvm(fx("c_O2_pie"), ["--functions=none"])
def test_cli__cxx_linkage_names_match():
    same_as_llvm(fx("cxx_O2"), ["--no-demangle", "--output-style=JSON"], strip_start=True)
def test_cli__shared_library_matches(): same_as_llvm(fx("libfixture.so"), ["-i"])


def test_cli__cxx_demangled():
    addrs = "".join("0x%x\n" % a for a in func_addrs(fx("cxx_O2"), 200))
    out = ember("--obj=" + fx("cxx_O2"), "--output-style=JSON", stdin=addrs).stdout
    names = [s["FunctionName"] for l in out.splitlines() for s in json.loads(l)["Symbol"]]
    assert any("ember::fixture::" in n and "(" in n for n in names), names[:20]
    assert not any(n.startswith("_Z") and "ember" in n for n in names), names[:20]


def test_cli__decimal_and_hex_agree():
    a = func_addrs(fx("c_O2_pie"))[5]
    assert ember("--obj=" + fx("c_O2_pie"), str(a)).stdout == \
        ember("--obj=" + fx("c_O2_pie"), "0x%x" % a).stdout


def test_cli__addresses_as_arguments():
    addrs = func_addrs(fx("c_O2_pie"))[:3]
    args = ["0x%x" % a for a in addrs]
    by_args = ember("--obj=" + fx("c_O2_pie"), *args).stdout
    by_stdin = ember("--obj=" + fx("c_O2_pie"), stdin="\n".join(args) + "\n").stdout
    assert by_args == by_stdin and by_args.count("\n\n") == 3


def test_cli__readme_first_example_names_functions():
    """README.md's first `ember symbolize` command, run as written (its
    build-release/ paths made this build's), prints the frames the README
    shows under it: function names and lines, not `??` (issue 28)."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    with open(readme) as f:
        lines = f.read().splitlines()
    first = [i for i, line in enumerate(lines) if line.startswith("build-release/ember symbolize ")]
    assert first, "no `build-release/ember symbolize` command in README.md"
    cmd = shlex.split(lines[first[0]])
    want = []
    for line in lines[first[0] + 1:]:
        if not line.startswith("#   "):
            break
        want.append(line[4:])
    args = [a.replace("build-release/fixtures/", FIX.rstrip("/") + "/") for a in cmd[1:]]
    r = run([EMBER] + args)
    got = r.stdout.strip().splitlines()
    assert r.returncode == 0 and want and got == want, \
        "README's %r printed\n%s%s\nnot\n%s" % (lines[first[0]], r.stdout, r.stderr, "\n".join(want))
    assert got[0] != "??" and re.fullmatch(r"[A-Za-z_]\w*", got[0]), got


def read_answer(proc, timeout=10):
    """Read raw bytes until a blank line ends the answer, failing if it does
    not come while stdin stays open (the reply must be flushed per line)."""
    buf = b""
    while not (buf.endswith(b"\n\n") or buf == b"\n"):
        r, _, _ = select.select([proc.stdout], [], [], timeout)
        assert r, "no answer within %ss: the reply was not flushed" % timeout
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, "ember exited early"
        buf += chunk
    return buf.decode().rstrip("\n").split("\n")


def coprocess(argv0_cmd, flags, request):
    proc = subprocess.Popen(argv0_cmd + flags, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    try:
        answers = []
        for req in request:
            proc.stdin.write((req + "\n").encode())
            answers.append(read_answer(proc))
        return answers
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def test_cli__coprocess_answers_each_line():
    addrs = func_addrs(fx("c_O2_pie"))[:5]
    answers = coprocess([EMBER, "symbolize"], ["--obj=" + fx("c_O2_pie")],
                        ["0x%x" % a for a in addrs])
    expect = run([LLVM, "--obj=" + fx("c_O2_pie")] + ["0x%x" % a for a in addrs]).stdout
    assert "\n\n".join("\n".join(a) for a in answers) + "\n\n" == expect


def test_cli__lookahead_keeps_answers_and_order_on_a_big_index():
    """With --obj on an index of 65,536 segments or more, plain addresses
    are answered up to 16 lines late while their lookups' cache lines are
    prefetched (cmd_symbolize.c, "Lookahead").  libc's debug file (160k
    segments) read from stdin, its addresses mixed with invalid lines and
    lines naming another module, must give the output of the same lines
    each naming libc's debug file as its module: lines that name a module
    take no lookahead."""
    dbg = packages.debug_file("libc.so.6")
    if not dbg:
        raise Skip(packages.missing("debug:libc.so.6", "libc's debug file is not installed"))
    stats = ember("--stats", "--obj=" + dbg, "0x0").stderr
    segs = re.search(r"(\d+) segments", stats)
    assert segs and int(segs.group(1)) >= 65536, \
        "libc's index is too small to take the lookahead: %r" % stats
    addrs = func_addrs(dbg, 10 ** 6)
    random.Random(14).shuffle(addrs)
    other = func_addrs(fx("c_O2_pie"), 5)
    with_obj, per_line, others = [], [], 0
    for i, a in enumerate(addrs[:3000]):
        with_obj.append("0x%x" % a)
        per_line.append("%s 0x%x" % (dbg, a))
        if i % 97 == 5:
            with_obj.append("not-an-address")
            per_line.append("not-an-address")
        if i % 131 == 7:
            line = "%s 0x%x" % (fx("c_O2_pie"), other[i % len(other)])
            with_obj.append(line)
            per_line.append(line)
            others += 1
    ahead = ember("--obj=" + dbg, stdin="\n".join(with_obj) + "\n")
    plain = ember(stdin="\n".join(per_line) + "\n")
    assert ahead.returncode == plain.returncode == 0, (ahead.stderr, plain.stderr)
    assert plain.stdout.count("\n\n") == 3000 + others, "not every address answered"
    assert ahead.stdout == plain.stdout, "the answers differ or are out of order"


def test_cli__pprof_protocol_as_llvm_symbolizer():
    """pprof runs `llvm-symbolizer --inlining -demangle=false` and writes
    `CODE <file> 0x<addr>` lines; Ember answers when invoked by that name."""
    d = tempfile.mkdtemp()
    try:
        link = os.path.join(d, "llvm-symbolizer")
        os.symlink(os.path.abspath(EMBER), link)
        addrs = func_addrs(fx("cxx_O2"))[:5]
        reqs = ["CODE %s 0x%x" % (fx("cxx_O2"), a) for a in addrs]
        ours = coprocess([link], ["--inlining", "-demangle=false"], reqs)
        theirs = coprocess([LLVM], ["--inlining", "-demangle=false"], reqs)
        assert ours == theirs, (ours, theirs)
        assert any(l.startswith("_Z") for a in ours for l in a), ours
    finally:
        shutil.rmtree(d)


def test_cli__many_modules_evicted_and_reopened():
    """More modules than the cache holds (64): answers stay right."""
    d = tempfile.mkdtemp()
    try:
        links = []
        for i in range(70):
            links.append(os.path.join(d, "m%d" % i))
            os.symlink(os.path.abspath(fx("c_O2_pie")), links[-1])
        addr = func_addrs(fx("c_O2_pie"))[4]
        reqs = "".join("CODE %s 0x%x\n" % (l, addr) for l in links + links[:3])
        out = ember(stdin=reqs).stdout.split("\n\n")[:-1]
        one = ember("--obj=" + fx("c_O2_pie"), "0x%x" % addr).stdout.rstrip("\n")
        assert len(out) == 73 and all(o == one for o in out), (len(out), out[:2], one)
    finally:
        shutil.rmtree(d)


def bad_input(path, reason):
    res = ember("--obj=" + path, "0x1000")
    assert res.returncode == 0, res
    assert res.stdout == "??\n??:0:0\n\n", res.stdout
    assert path in res.stderr and reason in res.stderr, res.stderr
    j = ember("--obj=" + path, "--output-style=JSON", "0x1000")
    assert reason in json.loads(j.stdout)["Error"]["Message"], j.stdout


def test_cli__missing_file(): bad_input("/nonexistent/binary", "No such file")


def test_cli__not_elf():
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("hello, not an ELF\n")
        f.flush()
        bad_input(f.name, "not an ELF")


def test_cli__truncated_elf():
    with tempfile.NamedTemporaryFile("wb") as f:
        f.write(open(fx("c_O2_pie"), "rb").read()[:5000])
        f.flush()
        bad_input(f.name, "truncated")


def test_cli__unparsable_line_is_echoed():
    out = ember("--obj=" + fx("c_O2_pie"), stdin="foo\n\n0xzz\n").stdout
    theirs = run([LLVM, "--obj=" + fx("c_O2_pie")], "foo\n\n0xzz\n").stdout
    assert out == theirs == "foo\n\n0xzz\n", (out, theirs)


def test_cli__unparsable_line_in_json_matches():
    line = 'foo\t"x"\x01\n'
    ours = ember("--obj=" + fx("c_O2_pie"), "--output-style=JSON", stdin=line).stdout
    theirs = run([LLVM, "--obj=" + fx("c_O2_pie"), "--output-style=JSON"], line).stdout
    assert ours == theirs, (ours, theirs)


def test_cli__address_outside_everything():
    out = ember("--obj=" + fx("c_O2_pie"), "--output-style=JSON", "0xfffffff0").stdout
    sym = json.loads(out)["Symbol"]
    assert sym[0]["Source"] == "none" and sym[0]["FunctionName"] == "", out


def test_cli__frame_sources_reported():
    main = [a for a in func_addrs(fx("c_nodwarf"), 400)]
    out = ember("--obj=" + fx("c_nodwarf"), "--output-style=JSON", "0x%x" % main[3]).stdout
    frame = json.loads(out)["Symbol"][0]
    assert frame["Source"] == "symtab", out
    assert int(frame["StartAddress"], 16) + int(frame["SymbolOffset"], 16) == main[3], out
    out = ember("--obj=" + fx("c_dynsym_only"), "--output-style=JSON",
                "0x%x" % func_addrs(fx("c_dynsym_only"))[0]).stdout
    assert json.loads(out)["Symbol"][0]["Source"] == "dynsym", out


def test_cli__bad_option_fails():
    res = ember("--no-such-flag", "0x1")
    assert res.returncode == 2 and "--no-such-flag" in res.stderr, res


def test_cli__server_with_obj_is_usage_error():
    res = ember("--server=http://127.0.0.1:9", "--build-id=abcd", "--obj=" + fx("c_O2_pie"),
                "0x1")
    assert res.returncode == 2 and "--obj and --server" in res.stderr and not res.stdout, res
    res = ember("--build-id=abcd", "0x1")
    assert res.returncode == 2 and "--server" in res.stderr, res


def http_client_parts(elf):
    """What of the HTTP client and jansson elf links: DT_NEEDED entries
    naming libcurl or jansson, their API functions among its symbols (a
    static link), and Ember's HTTP client (httpc_do, which loads libcurl
    with dlopen)."""
    needed = run(["readelf", "-dW", elf]).stdout
    names = {f[7].split("@")[0] for f in (line.split() for line in
                                          run(["readelf", "-sW", elf]).stdout.splitlines())
             if len(f) >= 8}
    assert "main" in names, "%s: no symbols to look at" % elf
    api = {"curl_easy_init", "curl_easy_perform", "httpc_do", "json_loads", "json_dumps",
           "json_delete"}
    return [lib for lib in ("curl", "jansson") if lib in needed] + sorted(names & api)


def test_cli__ember_does_not_link_curl():
    """--server runs in ember-client: `ember` itself links no HTTP client or
    JSON library, shared (the ASan build) or static (the Release `ember` is
    a static PIE); ember-client beside it, which does, shows the check sees
    them."""
    client = http_client_parts(os.path.join(os.path.dirname(EMBER), "ember-client"))
    assert "httpc_do" in client and "json_loads" in client, client
    ours = http_client_parts(EMBER)
    assert not ours, ours


def test_cli__log_level_bad_value_fails():
    res = ember("--log-level=loud", "0x1")
    assert res.returncode == 2 and "bad log level 'loud'" in res.stderr, res
    env = dict(os.environ, EMBER_LOG_LEVEL="chatty")
    res = subprocess.run([EMBER, "symbolize", "0x1"], capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "EMBER_LOG_LEVEL" in res.stderr, res


def test_cli__log_level_debug_explains_rejections():
    """The default level prints the rejection; debug adds each failed check
    as it happens, warn and error alike keep quiet about them."""
    with tempfile.NamedTemporaryFile("wb") as f:
        f.write(open(fx("c_O2_pie"), "rb").read()[:3000])
        f.flush()
        cmd = [EMBER, "unwind", "compile", f.name, "-o", os.devnull]
        quiet = run(cmd)
        loud = run(cmd[:2] + ["--log-level", "debug"] + cmd[2:])
        env = dict(os.environ, EMBER_LOG_LEVEL="debug")
        by_env = subprocess.run(cmd, capture_output=True, text=True, env=env)
        opt_wins = subprocess.run(cmd[:2] + ["--log-level=warn"] + cmd[2:],
                                  capture_output=True, text=True, env=env)
    assert quiet.returncode == loud.returncode == 1, (quiet, loud)
    assert "debug:" not in quiet.stderr and "malformed" in quiet.stderr, quiet.stderr
    assert "debug: unwind-compiler: " in loud.stderr, loud.stderr
    assert "debug: unwind-compiler: " in by_env.stderr, by_env.stderr
    assert "debug:" not in opt_wins.stderr and "malformed" in opt_wins.stderr, opt_wins


def main():
    cases = {k: v for k, v in globals().items() if k.startswith("test_cli__")}
    only = sys.argv[3] if len(sys.argv) > 3 else None
    if only and only not in cases:
        print("no case '%s' in %s" % (only, os.path.basename(__file__)))
        return 2
    if not LLVM:
        print("SKIP: " + packages.missing("llvm-symbolizer"))
        return 77
    failed = skipped = 0
    for name, fn in cases.items():
        if only and name != only:
            continue
        try:
            fn()
            print("ok   " + name)
        except Skip as e:
            skipped += 1
            print("SKIP %s: %s" % (name, e))
        except AssertionError as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
    if failed:
        return 1
    return 77 if only and skipped else 0


if __name__ == "__main__":
    sys.exit(main())
