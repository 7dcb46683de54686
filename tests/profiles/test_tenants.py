#!/usr/bin/env python3
"""Tenants (issue 27, docs/http-api.md "Tenants"): with `ember serve
--multitenancy` every profile request names its tenant with X-Scope-OrgID
(OTLP/gRPC: x-scope-orgid metadata); two tenants pushing the same series
each see only their own through every read (labels, label values, types,
series, query, coverage, Pyroscope's render and label routes, Connect's
QuerierService) and every write route (/api/v1/profiles, /ingest, OTLP);
a request without the header is refused 401, a bad tenant ID 400, a new
tenant past --max-tenants 429; the tenant anonymous is the data
directory's store of a server without tenants; without --multitenancy
the header is not read.
Usage: test_tenants.py EMBER FIXTURES_DIR CASE."""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import check, cpu_profile  # noqa: E402
from profiles_test import (EMBER, NOW_S, SEC, TMP, GrpcServer, OtlpRequest, Server,  # noqa: E402
                           config_file, otlp_post, otlp_stubs, q, run_case)

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
SEL = '{service_name="shop"}'
STACKS = {"a": {"main;alpha": 5}, "b": {"main;beta": 7}}
LABELS = {"a": "service_name=shop&team=red", "b": "service_name=shop&team=blue"}


def hdr(tenant):
    return {"X-Scope-OrgID": tenant} if tenant else {}


def get(srv, tenant, path, want=200):
    st, body, _ = srv.request("GET", path, headers=hdr(tenant))
    check(st == want, "%s GET %s: HTTP %d %r" % (tenant, path, st, body[:300]))
    return body


def getj(srv, tenant, path):
    return json.loads(get(srv, tenant, path))


def push(srv, tenant, stacks, labels, want=200, token=None):
    st, body, _ = srv.push(cpu_profile(stacks, T0).encode(), labels, headers=hdr(tenant),
                           token=token)
    check(st == want, "%s push: HTTP %d %r" % (tenant, st, body[:300]))
    return body


def folded(srv, tenant, sel=SEL):
    body = get(srv, tenant, "/api/v1/query?type=cpu&from=0&format=folded&query=" + q(sel))
    return dict((line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]))
                for line in body.decode().splitlines())


def connect_json(srv, tenant, method, body):
    h = {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
    h.update(hdr(tenant))
    return srv.request("POST", "/querier.v1.QuerierService/" + method, json.dumps(body), h)


def seen(srv, tenant):
    """What tenant sees of the series both tenants pushed, by every read."""
    out = {"folded": folded(srv, tenant)}
    out["names"] = getj(srv, tenant, "/api/v1/labels?from=0")["names"]
    out["teams"] = getj(srv, tenant, "/api/v1/labels/team/values?from=0")["values"]
    out["types"] = [t["id"] for t in getj(srv, tenant, "/api/v1/profile-types?from=0")["types"]]
    series = getj(srv, tenant, "/api/v1/series?type=cpu&from=%d&group_by=team&query=%s"
                  % (T0 // SEC - 60, q(SEL)))["series"]
    out["series"] = sorted(s["labels"]["team"] for s in series)
    out["coverage"] = getj(srv, tenant, "/api/v1/coverage?from=0")["profiles"]
    fb = getj(srv, tenant, "/pyroscope/render?from=now-1h&until=now&query=" + q(CPU + SEL))
    out["render"] = sorted(fb["flamebearer"]["names"])
    out["pyro_teams"] = json.loads(get(srv, tenant, "/pyroscope/label-values?label=team&query=" + q(CPU + SEL)))
    st, body, _ = connect_json(srv, tenant, "LabelValues",
                               {"name": "team", "start": str((T0 // SEC - 3600) * 1000),
                                "end": str(NOW_S * 1000 + 60000)})
    check(st == 200, "%s LabelValues: HTTP %d %r" % (tenant, st, body[:300]))
    out["connect_teams"] = json.loads(body).get("names", [])
    return out


def test_tenants__two_tenants_see_only_their_own():
    srv = Server(["--multitenancy"])
    for t in ("a", "b"):
        push(srv, t, STACKS[t], LABELS[t])
    a, b, c = seen(srv, "a"), seen(srv, "b"), seen(srv, "c")
    check(a["folded"] == {"main;alpha": 5 * 10_000_000}, a["folded"])
    check(b["folded"] == {"main;beta": 7 * 10_000_000}, b["folded"])
    for t, v, team in (("a", a, "red"), ("b", b, "blue")):
        check(v["teams"] == [team] and v["series"] == [team] and v["pyro_teams"] == [team]
              and v["connect_teams"] == [team], "%s: %r" % (t, v))
        check("team" in v["names"] and v["types"] and v["coverage"] == 1, "%s: %r" % (t, v))
    check("alpha" in a["render"] and "beta" not in a["render"], a["render"])
    check("beta" in b["render"] and "alpha" not in b["render"], b["render"])
    # a tenant that never pushed sees nothing at all
    check(not c["folded"] and not c["teams"] and not c["series"] and not c["types"]
          and c["coverage"] == 0 and not c["pyro_teams"] and not c["connect_teams"], c)
    # each its own store, the tenant's directory under DATA/profiles/tenants
    for t in ("a", "b"):
        check(os.path.isdir(os.path.join(srv.data, "profiles", "tenants", t, "wal")), t)


def test_tenants__every_write_route_takes_the_tenant():
    srv = Server(["--multitenancy"])
    # Pyroscope's /ingest (folded text), OTLP/HTTP
    st, body, _ = srv.push(b"main;pyro 3\n", "name=shop.cpu&format=folded&from=%d"
                           % (T0 // SEC), path="/ingest", headers=hdr("a"))
    check(st == 200, "ingest: HTTP %d %r" % (st, body[:300]))
    svc, _ = otlp_stubs()
    r = OtlpRequest(svc)
    r.profile("shop", T0).samples.add(stack_index=r.stack([r.named("otlp_fn"), r.named("main")]),
                                      values=[4])
    st, body, _ = otlp_post(srv, r.encode(), headers=hdr("a"))
    check(st == 200, "OTLP: HTTP %d %r" % (st, body[:300]))
    names = lambda t: getj(srv, t, "/api/v1/labels/service_name/values?from=0")["values"]
    check(names("a") == ["shop"] and names("b") == [] and names("anonymous") == [],
          (names("a"), names("b"), names("anonymous")))


def test_tenants__ember_query_names_the_tenant():
    srv = Server(["--multitenancy"])
    for t in ("a", "b"):
        push(srv, t, STACKS[t], LABELS[t])

    def query(*extra):
        return subprocess.run([EMBER, "query", "--server", srv.url, "--type", "cpu",
                               "--format", "folded", SEL] + list(extra),
                              capture_output=True, text=True, timeout=60)
    for t in ("a", "b"):
        r = query("--tenant", t)
        check(r.returncode == 0 and r.stdout == "%s %d\n" % (
            list(STACKS[t])[0], list(STACKS[t].values())[0] * 10_000_000), (t, r))
    r = query()
    check(r.returncode == 1 and "X-Scope-OrgID" in r.stderr, r)
    r = subprocess.run([EMBER, "diff", "--server", srv.url, "--tenant", "b", "--type", "cpu",
                        "--base", SEL, "--new", SEL, "--format", "folded"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "beta" in r.stdout and "alpha" not in r.stdout, r)


def test_tenants__otlp_grpc_takes_the_tenant():
    srv = GrpcServer(["--multitenancy"])
    svc, _ = otlp_stubs()
    grpc = sys.modules.get("grpc") or __import__("grpc")
    r = OtlpRequest(svc)
    r.profile("grpcshop", T0).samples.add(stack_index=r.stack([r.named("main")]), values=[2])
    srv.export(r.msg, metadata=(("x-scope-orgid", "a"),))
    srv.refused(grpc.StatusCode.UNAUTHENTICATED, "X-Scope-OrgID", r.msg)
    srv.refused(grpc.StatusCode.INVALID_ARGUMENT, "is not one", r.msg,
                metadata=(("x-scope-orgid", "../a"),))
    names = lambda t: getj(srv, t, "/api/v1/labels/service_name/values?from=0")["values"]
    check(names("a") == ["grpcshop"] and names("b") == [], (names("a"), names("b")))


def test_tenants__refusals():
    srv = Server(["--multitenancy", "--max-tenants", "2"])
    # no header: a write and every kind of read are refused 401, saying why
    body = push(srv, None, STACKS["a"], LABELS["a"], want=401)
    check(b"X-Scope-OrgID" in body, body)
    get(srv, None, "/api/v1/labels?from=0", want=401)
    get(srv, None, "/pyroscope/render?query=" + q(CPU + SEL), want=401)
    st, body, _ = connect_json(srv, None, "LabelNames", {})
    check(st == 401 and json.loads(body)["code"] == "unauthenticated", (st, body))
    st, body, _ = otlp_post(srv, b"")
    check(st == 401, "OTLP: HTTP %d" % st)
    # IDs that are not tenants (a path, too long, "..", a character outside
    # the rule): 400, nothing made outside the tenants' directory
    for bad in ("../x", "a/b", "..", ".", "x" * 151, "a b", "a|b"):
        get(srv, bad, "/api/v1/labels?from=0", want=400)
        push(srv, bad, STACKS["a"], LABELS["a"], want=400)
    tdir = os.path.join(srv.data, "profiles", "tenants")
    check(not os.path.isdir(tdir) or not os.listdir(tdir), "a bad tenant made a directory")
    push(srv, "x" * 150, STACKS["a"], LABELS["a"])  # the longest: one
    push(srv, "a", STACKS["a"], LABELS["a"])
    # a third tenant past --max-tenants 2: 429 saying so; anonymous and
    # those open still served
    body = push(srv, "b", STACKS["b"], LABELS["b"], want=429)
    check(b"--max-tenants" in body, body)
    push(srv, "a", STACKS["a"], LABELS["a"])
    push(srv, "anonymous", STACKS["a"], LABELS["a"])
    check(srv.metric("ember_profiles_rejected_total", '{reason="tenant"}') >= 9, "metric")


def test_tenants__reads_take_no_slot():
    # reads naming tenants never written: answered as empty tenants, no
    # store made, so they cannot fill --max-tenants against a writer
    srv = Server(["--multitenancy", "--max-tenants", "1"])
    for i in range(5):
        ghost = "ghost%d" % i
        check(getj(srv, ghost, "/api/v1/labels?from=0")["names"] == [], ghost)
        check(folded(srv, ghost) == {}, ghost)
        u = usage(srv, ghost)
        check(u["tenant"] == ghost and u["series"] == 0 and u["profiles"] == 0, u)
    tdir = os.path.join(srv.data, "profiles", "tenants")
    check(not os.path.isdir(tdir) or not os.listdir(tdir), "a read made a store")
    push(srv, "a", STACKS["a"], LABELS["a"])
    check(list(folded(srv, "a")) == list(STACKS["a"]), folded(srv, "a"))
    push(srv, "b", STACKS["b"], LABELS["b"], want=429)
    check(folded(srv, "ghost0") == {}, "still empty")


def wait_log(srv, want, count=1):
    deadline = time.time() + 20
    while srv.stderr().count(want) < count:
        check(time.time() < deadline, "no %r: %r" % (want, srv.stderr()[-500:]))
        time.sleep(0.05)


def test_tenants__idle_store_closed():
    # --tenant-idle 1: a's store closed a second after its last request (the
    # log says so), opened again by the next one with its profiles; while
    # closed it gives its place under --max-tenants 1 to a new tenant
    srv = Server(["--multitenancy", "--max-tenants", "1", "--tenant-idle", "1"])
    push(srv, "a", STACKS["a"], LABELS["a"])
    wait_log(srv, "tenant 'a' idle: its store closed")
    check(list(folded(srv, "a")) == list(STACKS["a"]), folded(srv, "a"))
    wait_log(srv, "tenant 'a' idle: its store closed", 2)
    push(srv, "b", STACKS["b"], LABELS["b"])
    check(list(folded(srv, "b")) == list(STACKS["b"]), folded(srv, "b"))


def test_tenants__anonymous_is_the_data_directory():
    # stored without tenants; then, with them, the tenant anonymous sees it
    srv = Server()
    push(srv, "a", STACKS["a"], LABELS["a"])  # the header is not read: anonymous
    check(folded(srv, "b") == {"main;alpha": 5 * 10_000_000}, "header read without tenants")
    check(not os.path.exists(os.path.join(srv.data, "profiles", "tenants")), "tenants dir")
    srv.stop()
    srv2 = Server(["--multitenancy"], data=srv.data)
    check(folded(srv2, "anonymous") == {"main;alpha": 5 * 10_000_000}, "anonymous")
    check(folded(srv2, "a") == {}, "tenant a sees anonymous's profiles")


TOKEN_A = "token-of-tenant-a-0123456789"
TOKEN_B = "token-of-tenant-b-0123456789"


def tokens_file(text, mode=0o600):
    path = os.path.join(TMP, "tokens")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def test_tenants__tokens_bind_a_tenant():
    tf = tokens_file("# tenant tokens\n%s a\n\n  %s b\n" % (TOKEN_A, TOKEN_B))
    srv = GrpcServer(["--multitenancy", "--tokens", tf])
    push(srv, "a", STACKS["a"], LABELS["a"], token=TOKEN_A)
    # another tenant's name with a's token: 403 saying whose it is
    body = push(srv, "b", STACKS["a"], LABELS["a"], token=TOKEN_A, want=403)
    check(b"tenant 'a' only" in body, body)
    # no header: the token's tenant
    push(srv, None, {"main;gamma": 1}, LABELS["a"], token=TOKEN_A)
    push(srv, None, STACKS["b"], LABELS["b"], token=TOKEN_B)
    # the upload token writes any tenant, as the ingest token would
    push(srv, "c", STACKS["b"], LABELS["b"])
    check(folded(srv, "a") == {"main;alpha": 5 * 10_000_000, "main;gamma": 10_000_000},
          folded(srv, "a"))
    check(folded(srv, "b") == {"main;beta": 7 * 10_000_000}, folded(srv, "b"))
    check(folded(srv, "c") == {"main;beta": 7 * 10_000_000}, folded(srv, "c"))
    # a tenant's token writes profiles only, never debug info
    st, _, _ = srv.request("PUT", "/api/v1/artifacts/" + "ab" * 20 + "/executable", b"x",
                           {"Authorization": "Bearer " + TOKEN_A})
    check(st == 401, "upload with a tenant's token: HTTP %d" % st)
    # OTLP/gRPC: the same binding
    grpc = sys.modules.get("grpc") or __import__("grpc")
    svc, _ = otlp_stubs()
    r = OtlpRequest(svc)
    r.profile("grpcshop", T0).samples.add(stack_index=r.stack([r.named("main")]), values=[2])
    srv.refused(grpc.StatusCode.PERMISSION_DENIED, "tenant 'a' only", r.msg, token=TOKEN_A,
                metadata=(("x-scope-orgid", "b"),))
    srv.export(r.msg, token=TOKEN_B)
    names = lambda t: getj(srv, t, "/api/v1/labels/service_name/values?from=0")["values"]
    check(names("b") == ["grpcshop", "shop"] and names("a") == ["shop"],
          (names("a"), names("b")))


def test_tenants__tokens_file_checked_at_start():
    data = os.path.join(TMP, "data.tokens")
    for text, mode, want in (("%s a\n" % TOKEN_A, 0o644, "open to other users"),
                             ("%s\n" % TOKEN_A, 0o600, "want 'TOKEN TENANT'"),
                             ("%s a b\n" % TOKEN_A, 0o600, "want 'TOKEN TENANT'"),
                             ("%s ../a\n" % TOKEN_A, 0o600, "is not a tenant ID"),
                             ("short a\n", 0o600, "too short")):
        tf = tokens_file(text, mode)
        r = subprocess.run([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", data,
                            "--multitenancy", "--tokens", tf],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and want in r.stderr,
              "%r: %d %r" % (text, r.returncode, r.stderr[-300:]))
    tf = tokens_file("%s a\n" % TOKEN_A)
    r = subprocess.run([EMBER, "serve", "--listen", "127.0.0.1:0", "--data", data,
                        "--tokens", tf], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "needs --multitenancy" in r.stderr, r.stderr[-300:])


def test_tenants__tokens_file_read_again_on_sighup():
    """SIGHUP reads --tokens again: a token removed stops writing, one
    added writes its tenant; a file that does not read keeps the tokens
    before, the log saying why."""
    tf = tokens_file("%s a\n" % TOKEN_A)
    srv = Server(["--multitenancy", "--tokens", tf])
    push(srv, None, STACKS["a"], LABELS["a"], token=TOKEN_A)
    push(srv, None, STACKS["b"], LABELS["b"], token=TOKEN_B, want=401)
    tokens_file("%s b\n" % TOKEN_B)
    srv.reloaded("tokens file '%s' read again" % tf)
    push(srv, None, STACKS["a"], LABELS["a"], token=TOKEN_A, want=401)
    push(srv, None, STACKS["b"], LABELS["b"], token=TOKEN_B)
    tokens_file("%s b\n" % TOKEN_A, 0o644)  # open to others: refused
    srv.reloaded("the tokens before are kept")
    check("open to other users" in srv.stderr(), srv.stderr()[-500:])
    push(srv, None, STACKS["b"], LABELS["b"], token=TOKEN_B)
    push(srv, None, STACKS["a"], LABELS["a"], token=TOKEN_A, want=401)
    check(folded(srv, "a") == {"main;alpha": 5 * 10_000_000}, folded(srv, "a"))
    check(folded(srv, "b") == {"main;beta": 2 * 7 * 10_000_000}, folded(srv, "b"))


def limits_file(text):
    return config_file("limits", text)


def test_tenants__limits_rate_and_profile():
    one = cpu_profile({"main;alpha": 5}, T0).encode()
    lf = limits_file("# per-tenant limits\ndefault max_stack_depth=2\n"
                     "a ingest_rate=%d ingest_burst=%d\nb max_stack_depth=0\n"
                     % (len(one) // 10, 3 * len(one)))  # a profile's worth in 10 s
    srv = Server(["--multitenancy", "--limits", lf])
    # a profile past c's stack depth (the default's): 400 naming the limit;
    # b's own entry lifts it
    body = push(srv, "c", {"main;work;deep": 1}, LABELS["a"], want=400)
    check(b"tenant 'c': a stack of locations 3, more than its max_stack_depth of 2" in body,
          body)
    push(srv, "b", {"main;work;deep": 1}, LABELS["b"])
    # a's rate: the burst of three, then 429 with Retry-After, and b unaffected
    for _ in range(3):
        push(srv, "a", STACKS["a"], LABELS["a"])
    st, body, hdrs = srv.push(one, LABELS["a"], headers=hdr("a"))
    check(st == 429 and 1 <= int(hdrs.get("retry-after", "0")) <= 11
          and b"past its ingest rate" in body, "HTTP %d %r %r" % (st, hdrs, body))
    for _ in range(5):
        push(srv, "b", STACKS["b"], LABELS["b"])
    check(srv.metric("ember_profiles_rejected_total", '{reason="rate"}') == 1, "rate metric")
    # SIGHUP with a bad file: the limits before are kept, the log says why
    limits_file("a ingest_rate=fast\n")
    srv.reloaded("the limits before are kept")
    check("ingest_rate=fast: want bytes" in srv.stderr(), srv.stderr()[-500:])
    st, _, _ = srv.push(one, LABELS["a"], headers=hdr("a"))
    check(st == 429, "after a bad reload: HTTP %d" % st)
    # SIGHUP with a good file: a has no rate now, the depth limit is gone
    limits_file("default max_samples=1000\n")
    srv.reloaded("read again")
    for _ in range(10):
        push(srv, "a", STACKS["a"], LABELS["a"])
    push(srv, "c", {"main;work;deep": 1}, LABELS["a"])


def test_tenants__limits_of_reads():
    lf = limits_file("q max_query_range=1h\nm max_query_bytes=2K\n")
    srv = Server(["--multitenancy", "--limits", lf])
    many = {"main;f%03d" % i: 1 for i in range(300)}
    for t in ("q", "m", "other"):
        push(srv, t, many, LABELS["a"])
    path = "/api/v1/query?type=cpu&format=folded&query=%s&from=" % q(SEL)
    for p in (path + "now-2h", "/api/v1/labels?from=0",
              "/pyroscope/render?from=now-2h&until=now&query=" + q(CPU + SEL),
              "/api/v1/diff?type=cpu&base_from=now-3h&base_to=now-1h&from=now-1h"):
        body = get(srv, "q", p, want=400)
        check(b"tenant 'q': a range of" in body and b"max_query_range of 3600 s" in body, body)
    get(srv, "q", path + "now-30m")
    # m's answers past 2 KiB: 413; another tenant's the same answer: 200
    get(srv, "m", path + "now-1h", want=413)
    check(len(get(srv, "other", path + "now-1h").splitlines()) == 300, "other's answer")


def usage(srv, tenant, path_tenant=None, want=200):
    return json.loads(get(srv, tenant, "/api/v1/tenants/%s/usage" % (path_tenant or tenant),
                          want=want))


def test_tenants__usage():
    one = cpu_profile({"main;alpha": 5}, T0).encode()
    lf = limits_file("a ingest_rate=1 ingest_burst=%d\n" % (2 * len(one) + 20))
    srv = Server(["--multitenancy", "--limits", lf])
    for _ in range(2):
        push(srv, "a", {"main;alpha": 5}, LABELS["a"])
    st, _, _ = srv.push(b"not a profile", LABELS["a"], headers=hdr("a"))
    check(st == 400, "bad profile: HTTP %d" % st)
    push(srv, "a", {"main;alpha": 5}, LABELS["a"], want=429)
    push(srv, "b", STACKS["b"], LABELS["b"])
    u = usage(srv, "a")
    check(u["tenant"] == "a" and u["ingested_bytes"] == 2 * len(one) + len(b"not a profile")
          and u["ingested_profiles"]["profiles"] == 2 and u["series"] == 1
          and u["profiles"] == 2 and u["log_bytes"] > 0 and u["stored_bytes"] >= 0
          and u["rejected"]["rate"] == 1 and u["rejected"]["bad_profile"] == 1, u)
    b = usage(srv, "b")
    check(b["ingested_profiles"]["profiles"] == 1 and b["rejected"]["rate"] == 0
          and b["series"] == 1, b)
    # another tenant's usage: 403; no header: 401
    body = get(srv, "b", "/api/v1/tenants/a/usage", want=403)
    check(b"X-Scope-OrgID: a" in body, body)
    get(srv, None, "/api/v1/tenants/a/usage", want=401)
    # without tenants: anonymous only
    srv2 = Server()
    push(srv2, None, STACKS["b"], LABELS["b"])
    check(usage(srv2, None, "anonymous")["ingested_profiles"]["profiles"] == 1, "anonymous")
    get(srv2, None, "/api/v1/tenants/a/usage", want=404)


def test_tenants__limits_file_checked_at_start():
    lf = limits_file("default max_samples=lots\n")
    r = subprocess.run([EMBER, "serve", "--listen", "127.0.0.1:0", "--data",
                        os.path.join(TMP, "data.limits"), "--limits", lf],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "line 1: max_samples=lots: want a number" in r.stderr,
          "%d %r" % (r.returncode, r.stderr[-300:]))


if __name__ == "__main__":
    run_case("test_tenants__", globals())
