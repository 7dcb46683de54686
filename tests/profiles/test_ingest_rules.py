#!/usr/bin/env python3
"""Ingest rules (issue 27, docs/cli.md "Ingest rules"): `ember serve --rules
FILE` relabels each tenant's profiles as they arrive, with Prometheus'
semantics: a request ID in a label is dropped at the gateway (one series,
not one a request, the other tenant's unchanged), a label is made from
another (replace), a profile is dropped (keep/drop: answered 200, nothing
stored); a file that does not parse fails the start naming its line, and
SIGHUP reads it again (a bad file keeps the rules before).  A sampling
rule keeps a part of the series whole and the rest as totals: the series
totals exact, the flame graph of the kept ones only, a second server
deciding alike.
Usage: test_ingest_rules.py EMBER FIXTURES_DIR CASE."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import check, cpu_profile  # noqa: E402
from profiles_test import EMBER, NOW_S, SEC, TMP, Server, config_file, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
SEL = '{service_name="shop"}'
ONE = 5 * 10_000_000  # a profile's CPU time: {"main;alpha": 5} at 10 ms


def hdr(tenant):
    return {"X-Scope-OrgID": tenant} if tenant else {}


def rules_file(text):
    return config_file("rules", text)


def push(srv, tenant, labels, stacks=None, want=200):
    st, body, _ = srv.push(cpu_profile(stacks or {"main;alpha": 5}, T0).encode(), labels,
                           headers=hdr(tenant))
    check(st == want, "%s push: HTTP %d %r" % (tenant, st, body[:300]))
    return json.loads(body) if st == 200 else body


def getj(srv, tenant, path):
    st, body, _ = srv.request("GET", path, headers=hdr(tenant))
    check(st == 200, "%s GET %s: HTTP %d %r" % (tenant, path, st, body[:300]))
    return json.loads(body)


def total(srv, tenant, sel=SEL):
    series = getj(srv, tenant, "/api/v1/series?type=cpu&from=%d&query=%s"
                  % (T0 // SEC - 60, q(sel)))["series"]
    return sum(v for s in series for v in s["values"])


def test_ingest_rules__request_id_dropped_one_series():
    rf = rules_file("# a request ID in a label multiplies series: dropped at ingest\n"
                    "a relabel action=labeldrop regex='request_id|trace_.*'\n")
    srv = Server(["--multitenancy", "--rules", rf])
    for i in range(5):
        for tenant in ("a", "b"):
            push(srv, tenant, "service_name=shop&request_id=r%d&trace_id=t%d" % (i, i))
    ua = getj(srv, "a", "/api/v1/tenants/a/usage")
    ub = getj(srv, "b", "/api/v1/tenants/b/usage")
    check(ua["series"] == 1 and ua["profiles"] == 5, ua)
    check(ub["series"] == 5, ub)  # b has no rules: its labels as sent
    names = getj(srv, "a", "/api/v1/labels?from=0")["names"]
    check("request_id" not in names and "trace_id" not in names and "service_name" in names,
          names)
    check("request_id" in getj(srv, "b", "/api/v1/labels?from=0")["names"], "b's labels")
    check(total(srv, "a") == total(srv, "b") == 5 * ONE, "totals")


def test_ingest_rules__replace_keep_drop():
    rf = rules_file("default relabel source_labels=pod regex='(.+)-[a-z0-9]+' "
                    "target_label=app\n"
                    "default relabel action=drop source_labels=env regex=dev\n")
    srv = Server(["--rules", rf])
    push(srv, None, "service_name=shop&pod=checkout-7f9c&env=prod")
    answer = push(srv, None, "service_name=shop&pod=checkout-1234&env=dev")
    check(answer["profiles"] == 0, answer)  # dropped: accepted, nothing stored
    apps = getj(srv, None, "/api/v1/labels/app/values?from=0")["values"]
    check(apps == ["checkout"], apps)
    envs = getj(srv, None, "/api/v1/labels/env/values?from=0")["values"]
    check(envs == ["prod"], envs)
    check(total(srv, None) == ONE, "only the kept profile stored")
    # counted: one stored relabelled (app made), one dropped; a profile the
    # rules leave as it was is not relabelled
    push(srv, None, "service_name=shop&env=prod")
    u = getj(srv, None, "/api/v1/tenants/anonymous/usage")
    check(u["relabelled"] == 1 and u["dropped_by_rules"] == 1 and u["kept_by_rules"] == 0, u)
    for outcome, want in (("relabelled", 1), ("dropped", 1)):
        got = srv.metric("ember_profile_rules_total",
                         '{tenant="anonymous",outcome="%s"}' % outcome)
        check(got == want, "%s: %r, want %d" % (outcome, got, want))


def test_ingest_rules__file_checked_and_reloaded():
    rf = rules_file("default relabel action=labeldrop regex=x\n"
                    "default relabel action=labeldrop regex='(unclosed'\n")
    r = subprocess.run([EMBER, "serve", "--listen", "127.0.0.1:0", "--data",
                        os.path.join(TMP, "data.rules"), "--rules", rf],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "line 2: regex=(unclosed: missing )" in r.stderr,
          "%d %r" % (r.returncode, r.stderr[-300:]))
    rules_file("default relabel action=labeldrop regex=request_id\n")
    srv = Server(["--rules", rf])
    push(srv, None, "service_name=shop&request_id=r1")
    # SIGHUP with a bad file: the rules before are kept, the log says why
    rules_file("default relabel action=replace\n")
    srv.reloaded("the rules before are kept")
    check("line 1: action=replace needs target_label" in srv.stderr(), srv.stderr()[-500:])
    push(srv, None, "service_name=shop&request_id=r2")
    check("request_id" not in getj(srv, None, "/api/v1/labels?from=0")["names"], "kept")
    # SIGHUP with a good file: request IDs are kept from now on
    rules_file("# none\n")
    srv.reloaded("rules file '%s' read again" % rf)
    push(srv, None, "service_name=shop&request_id=r3")
    vals = getj(srv, None, "/api/v1/labels/request_id/values?from=0")["values"]
    check(vals == ["r3"], vals)


def folded(srv, sel):
    st, body, _ = srv.request("GET", "/api/v1/query?type=cpu&from=0&format=folded&query=" + q(sel))
    check(st == 200, "query: HTTP %d %r" % (st, body[:300]))
    return dict((line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]))
                for line in body.decode().splitlines())


def test_ingest_rules__sampling_keeps_totals_exact():
    rf = rules_file("default sample selector='{service_name=\"shop\"}' keep=0.3\n")
    srv = Server(["--rules", rf])
    n = 40
    for i in range(n):  # 40 series, one profile each: about 12 kept whole
        push(srv, None, "service_name=shop&pod=p%d" % i)
    push(srv, None, "service_name=other&pod=p0")  # not matched: kept whole
    u = getj(srv, None, "/api/v1/tenants/anonymous/usage")
    sampled = u["sampled_out"]
    check(0 < sampled < n and u["ingested_profiles"]["profiles"] == n + 1, u)
    check(u["kept_by_rules"] == n - sampled and u["relabelled"] == 0, u)
    # and in /metrics, by tenant and outcome
    for outcome, want in (("sampled", sampled), ("kept", n - sampled), ("dropped", 0),
                          ("relabelled", 0)):
        got = srv.metric("ember_profile_rules_total",
                         '{tenant="anonymous",outcome="%s"}' % outcome)
        check(got == want, "%s: %r, want %d" % (outcome, got, want))
    # totals exact whatever was sampled: the series line sums every profile
    check(total(srv, None) == n * ONE, "total %d" % total(srv, None))
    check(total(srv, None, '{service_name="other"}') == ONE, "other")
    # the profiles kept whole: those outside __sampled__, the rest totals only
    kept = folded(srv, '{service_name="shop",__sampled__!="true"}')
    check(kept == {"main;alpha": (n - sampled) * ONE}, kept)
    only = getj(srv, None, "/api/v1/query?type=cpu&from=0&format=json&query="
                + q('{service_name="shop",__sampled__="true"}'))
    # a flame graph leaves the stack-less samples out: only stacks are drawn
    check(only["total"] == 0 and only["profiles"] == sampled and only["stacks"] == 0, only)
    both = getj(srv, None, "/api/v1/query?type=cpu&from=0&format=json&query=" + q(SEL))
    check(both["total"] == (n - sampled) * ONE, both["tree"])
    # the series without them: the profiles kept whole only
    check(total(srv, None, '{service_name="shop",__sampled__!="true"}') == (n - sampled) * ONE,
          "series without the sampled")
    # replicas and restarts agree: the same series in the same window, the same decision
    srv2 = Server(["--rules", rf])
    for i in range(n):
        push(srv2, None, "service_name=shop&pod=p%d" % i)
    check(getj(srv2, None, "/api/v1/tenants/anonymous/usage")["sampled_out"] == sampled,
          "another server decided otherwise")


if __name__ == "__main__":
    run_case("test_ingest_rules__", globals())
