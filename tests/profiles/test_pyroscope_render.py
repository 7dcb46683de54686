#!/usr/bin/env python3
"""Grafana Pyroscope's legacy HTTP query routes on `ember serve` (issue 25,
docs/http-api.md "Pyroscope's render API"): GET /pyroscope/render's
flamebearer, decoded (x offsets delta-coded per depth), gives exactly the
pushed stacks and totals, maxNodes folds the smallest nodes into "other"
keeping the total, the timeline sums to the total; /pyroscope/labels and
/pyroscope/label-values; Pyroscope's time forms; a bad query is 400 with
its reason.  GET /pyroscope/render-diff's "double" flamebearer (seven
numbers a node, each side's x delta-coded on its own) decodes to the left
and right trees of GET /api/v1/diff, each side's ticks what was pushed,
maxNodes folds into "other" on both sides.
Usage: test_pyroscope_render.py EMBER FIXTURES_DIR CASE."""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from ember_test import check, cpu_profile  # noqa: E402
from profiles_test import NOW_S, SEC, Server, folded, q, run_case  # noqa: E402

T0 = (NOW_S - 600) * SEC  # ten minutes ago: inside the default hour
PERIOD = 10_000_000
CPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
STACKS = {"main;work;hot": 30, "main;work;cold": 10, "main;idle": 5, "main;work": 3,
          "gc;mark": 7}
SEL = '{service_name="render"}'


def pushed(srv, stacks=STACKS, labels="service_name=render&version=2.4", t=T0):
    srv.push_ok(cpu_profile(stacks, t, period=PERIOD).encode(), labels)


def render(srv, query=CPU + SEL, extra="from=now-1h&until=now"):
    return srv.json("/pyroscope/render?query=%s&%s" % (q(query), extra))


def decode(fb):
    """The flamebearer's nodes per level as (x, total, self, name), x
    absolute, after checking each lies inside one node of the level above;
    and the stacks with self > 0 as {"a;b": self} (the root left out)."""
    names, levels = fb["names"], fb["levels"]
    nodes, stacks = [], {}
    for d, level in enumerate(levels):
        check(len(level) % 4 == 0, "level %d: %d numbers" % (d, len(level)))
        row, end = [], 0
        for i in range(0, len(level), 4):
            x = end + level[i]
            row.append((x, level[i + 1], level[i + 2], names[level[i + 3]]))
            end = x + level[i + 1]
        nodes.append(row)
    paths = {0: [""]}
    for d in range(1, len(nodes)):
        paths[d] = []
        for x, total, self_, name in nodes[d]:
            parents = [k for k, p in enumerate(nodes[d - 1]) if p[0] <= x and x + total <= p[0] + p[1]]
            check(len(parents) == 1, "level %d: node %r in %d parents" % (d, name, len(parents)))
            path = (paths[d - 1][parents[0]] + ";" + name).lstrip(";")
            paths[d].append(path)
            if self_:
                stacks[path] = stacks.get(path, 0) + self_
    return nodes, stacks


def test_pyroscope_render__levels_decode_to_the_pushed_stacks():
    srv = Server()
    pushed(srv)
    r = render(srv)
    fb = r["flamebearer"]
    nodes, stacks = decode(fb)
    want = {k: v * PERIOD for k, v in STACKS.items()}
    check(stacks == want, "decoded %r, pushed %r" % (stacks, want))
    check(stacks == folded(srv, SEL), "not Ember's own tree: %r" % folded(srv, SEL))
    total = sum(want.values())
    check(fb["names"][0] == "total" and nodes[0] == [(0, total, 0, "total")], nodes[0])
    check(fb["numTicks"] == total and fb["maxSelf"] == 30 * PERIOD, fb)
    check(len(set(fb["names"])) == len(fb["names"]), "a name twice: %r" % fb["names"])
    # Pyroscope's delta coding: level 2 is work (x 0) then mark (after gc's start)
    check(fb["levels"][1][0] == 0 and fb["levels"][1][4] == 0, fb["levels"][1])
    m = r["metadata"]
    check(m == {"format": "single", "spyName": "", "sampleRate": 1000000000,
                "units": "samples"}, m)


def test_pyroscope_render__max_nodes_folds_into_other():
    srv = Server()
    small = {"main;f%02d" % i: i + 1 for i in range(12)}
    pushed(srv, dict(small, **{"main;big": 100}))
    whole = render(srv)["flamebearer"]
    _, full = decode(whole)
    check("other" not in whole["names"] and len(full) == 13, full)
    fb = render(srv, extra="maxNodes=5")["flamebearer"]
    nodes, stacks = decode(fb)
    check(fb["numTicks"] == whole["numTicks"], (fb["numTicks"], whole["numTicks"]))
    check(sum(stacks.values()) == fb["numTicks"], "self values %d, total %d"
          % (sum(stacks.values()), fb["numTicks"]))
    # kept: main (total), big and the 3 largest f's; the other 9 in one "other"
    kept = {k for k in stacks if k != "main;other"}
    check(kept == {"main;big", "main;f11", "main;f10", "main;f09"}, stacks)
    check(stacks["main;other"] == sum(range(1, 10)) * PERIOD, stacks)
    check([n[3] for n in nodes[2]][-1] == "other", "other is not last: %r" % nodes[2])


def test_pyroscope_render__timeline_sums_to_the_total():
    srv = Server()
    pushed(srv)
    pushed(srv, {"main;idle": 4}, t=T0 - 1200 * SEC)
    r = render(srv, extra="from=now-1h&until=now")
    tl = r["timeline"]
    check(sum(tl["samples"]) == r["flamebearer"]["numTicks"], (tl, r["flamebearer"]["numTicks"]))
    check(len([v for v in tl["samples"] if v]) == 2, tl)
    check(tl["durationDelta"] == 15 and abs(tl["startTime"] - (NOW_S - 3600)) <= 5, tl)
    x = tl["startTime"] + tl["samples"].index(4 * PERIOD) * tl["durationDelta"]
    check(x <= (T0 - 1200 * SEC) // SEC < x + tl["durationDelta"], (x, tl))


def test_pyroscope_render__time_forms():
    srv = Server()
    pushed(srv)
    total = sum(STACKS.values()) * PERIOD
    for extra in ("from=now-1h&until=now", "from=%d&until=%d" % (NOW_S - 3600, NOW_S + 60),
                  "from=%d&until=%d" % ((NOW_S - 3600) * 1000, (NOW_S + 60) * 1000),
                  "from=now-15m", ""):
        got = render(srv, extra=extra)["flamebearer"]["numTicks"]
        check(got == total, "%s: %d, not %d" % (extra, got, total))
    for extra in ("from=now-5m&until=now", "from=%d&until=%d" % (NOW_S - 3600, NOW_S - 1800)):
        got = render(srv, extra=extra)["flamebearer"]["numTicks"]
        check(got == 0, "%s: %d, not 0" % (extra, got))
    # Pyroscope's older APP.TYPE{...} names the service
    pushed(srv, {"other;thing": 1}, "service_name=else")
    legacy = render(srv, query='render.cpu{version="2.4"}')["flamebearer"]
    check(legacy["numTicks"] == total, legacy)
    check(render(srv, query="render.cpu")["flamebearer"]["numTicks"] == total, "render.cpu")


def test_pyroscope_render__labels_and_label_values():
    srv = Server()
    pushed(srv)
    pushed(srv, labels="service_name=render&version=2.5")
    pushed(srv, labels="service_name=else&region=eu")
    names = srv.json("/pyroscope/labels?query=%s&from=now-1h" % q(CPU + SEL))
    check(isinstance(names, list) and "service_name" in names and "version" in names
          and "region" not in names, names)
    vals = srv.json("/pyroscope/label-values?label=version&query=%s" % q(CPU + SEL))
    check(vals == ["2.4", "2.5"], vals)
    vals = srv.json("/pyroscope/label-values?label=service_name&query=%s" % q(CPU + "{}"))
    check(vals == ["else", "render"], vals)


def test_pyroscope_render__bad_query_is_400_with_a_reason():
    srv = Server()
    pushed(srv)
    for path, why in (("/pyroscope/render?query=%s" % q(CPU + '{service_name="x"'), "selector"),
                      ("/pyroscope/render?from=now-1h", "query: required"),
                      ("/pyroscope/render?query=%s&maxNodes=lots" % q(CPU + SEL), "maxNodes"),
                      ("/pyroscope/render?query=%s&format=html" % q(CPU + SEL), "format"),
                      ("/pyroscope/render?query=%s&from=yesterday" % q(CPU + SEL), "from"),
                      ("/pyroscope/render?query=%s" % q("nope" + SEL), "nope"),
                      ("/pyroscope/label-values?query=%s" % q(CPU + SEL), "label: required")):
        st, body, _ = srv.request("GET", path)
        check(st == 400 and why in body.decode(), "%s: HTTP %d %r" % (path, st, body[:300]))


# ---- render-diff ---------------------------------------------------------------------

LEFT = {"main;work;hot": 30, "main;work;cold": 10, "main;gone": 4, "gc;mark": 7}
RIGHT = {"main;work;hot": 12, "main;work;cold": 10, "main;fresh": 9, "main;work": 2}


def render_diff(srv, extra=""):
    left, right = CPU + '{service_name="render",version="2.3"}', CPU + '{service_name="render",version="2.4"}'
    return srv.json("/pyroscope/render-diff?leftQuery=%s&rightQuery=%s&leftFrom=now-1h&"
                    "leftUntil=now&rightFrom=now-1h&rightUntil=now%s" % (q(left), q(right), extra))


def decode_diff(fb):
    """The double flamebearer's nodes as {path: (left total, left self,
    right total, right self)}, each node's parent the one node of the level
    above holding it on both sides (each side's x decoded on its own)."""
    names, levels = fb["names"], fb["levels"]
    rows = []
    for d, level in enumerate(levels):
        check(len(level) % 7 == 0, "level %d: %d numbers" % (d, len(level)))
        row, lend, rend = [], 0, 0
        for i in range(0, len(level), 7):
            lx, rx = lend + level[i], rend + level[i + 3]
            row.append((lx, level[i + 1], level[i + 2], rx, level[i + 4], level[i + 5],
                        names[level[i + 6]]))
            lend, rend = lx + level[i + 1], rx + level[i + 4]
        rows.append(row)
    check(len(rows[0]) == 1 and rows[0][0][6] == "total", rows[0])
    tree, paths = {"": rows[0][0][1:3] + rows[0][0][4:6]}, [[""]]
    for d in range(1, len(rows)):
        paths.append([])
        for n in rows[d]:
            up = [k for k, p in enumerate(rows[d - 1])
                  if p[0] <= n[0] and n[0] + n[1] <= p[0] + p[1] and
                  p[3] <= n[3] and n[3] + n[4] <= p[3] + p[4]]
            check(len(up) == 1, "level %d: %r under %d nodes" % (d, n, len(up)))
            path = (paths[d - 1][up[0]] + ";" + n[6]).lstrip(";")
            paths[d].append(path)
            tree[path] = n[1:3] + n[4:6]
    return tree


def diff_tree(node, prefix="", out=None):
    """GET /api/v1/diff?format=json's tree as decode_diff's dict."""
    out = {} if out is None else out
    path = (prefix + ";" + node["name"]).lstrip(";") if prefix is not None else ""
    out[path] = (node["base_total"], node["base_self"], node["new_total"], node["new_self"])
    for c in node.get("children", []):
        diff_tree(c, path, out)
    return out


def test_pyroscope_render__render_diff_decodes_to_the_diff_tree():
    srv = Server()
    pushed(srv, LEFT, "service_name=render&version=2.3")
    pushed(srv, RIGHT, "service_name=render&version=2.4")
    r = render_diff(srv)
    fb, lt, rt = r["flamebearer"], sum(LEFT.values()) * PERIOD, sum(RIGHT.values()) * PERIOD
    check(r["leftTicks"] == lt and r["rightTicks"] == rt and fb["numTicks"] == lt + rt,
          "ticks %r %r %r, pushed %d %d" % (r["leftTicks"], r["rightTicks"], fb["numTicks"], lt, rt))
    check(r["metadata"]["format"] == "double" and r["metadata"]["units"] == "samples", r["metadata"])
    got = decode_diff(fb)
    d = srv.json("/api/v1/diff?format=json&base_query=%s&new_query=%s" % (
        q(CPU + '{service_name="render",version="2.3"}'),
        q(CPU + '{service_name="render",version="2.4"}')))
    want = diff_tree(d["tree"], None)
    check(got == want, "render-diff %r\n/api/v1/diff %r" % (got, want))
    # each side is what was pushed
    for side, stacks, k in (("left", LEFT, 1), ("right", RIGHT, 3)):
        selfs = {p: v[k] for p, v in got.items() if v[k]}
        check(selfs == {s: n * PERIOD for s, n in stacks.items()}, "%s: %r" % (side, selfs))
    check(got["main;gone"] == (4 * PERIOD, 4 * PERIOD, 0, 0) and
          got["main;fresh"] == (0, 0, 9 * PERIOD, 9 * PERIOD), got)
    check(fb["maxSelf"] == 30 * PERIOD, fb["maxSelf"])


def test_pyroscope_render__render_diff_max_nodes_folds_into_other():
    srv = Server()
    pushed(srv, LEFT, "service_name=render&version=2.3")
    pushed(srv, RIGHT, "service_name=render&version=2.4")
    r = render_diff(srv, "&maxNodes=4")
    got = decode_diff(r["flamebearer"])
    # the 4 largest (by the larger side): main 44/33, work 40/24, hot 30/12, cold 10/10;
    # fresh 0/9 and gone 4/0 fold under main, gc 7/0 (with mark) under the root
    check(set(got) == {"", "main", "main;work", "main;work;hot", "main;work;cold", "other",
                       "main;other"}, sorted(got))
    check(got["other"] == (7 * PERIOD, 7 * PERIOD, 0, 0), got["other"])  # gc;mark
    check(got["main;other"] == (4 * PERIOD, 4 * PERIOD, 9 * PERIOD, 9 * PERIOD), got)
    check(got[""] == (51 * PERIOD, 0, 33 * PERIOD, 0), got[""])


def test_pyroscope_render__render_diff_bad_query_is_400():
    srv = Server()
    pushed(srv)
    for extra, why in (("leftQuery=%s" % q(CPU + SEL), "rightQuery: required"),
                       ("leftQuery=%s&rightQuery=%s" % (q(CPU + SEL), q(CPU + '{x="')),
                        "selector"),
                       ("leftQuery=%s&rightQuery=%s" % (
                           q(CPU + SEL), q("memory:alloc_space:bytes:space:bytes" + SEL)),
                        "different sample types"),
                       ("leftQuery=%s&rightQuery=%s&leftFrom=yesterday" % (q(CPU + SEL), q(CPU + SEL)),
                        "leftFrom")):
        st, body, _ = srv.request("GET", "/pyroscope/render-diff?" + extra)
        check(st == 400 and why in body.decode(), "%s: HTTP %d %r" % (extra, st, body[:300]))


if __name__ == "__main__":
    run_case("test_pyroscope_render__", globals())
