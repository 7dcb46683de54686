#!/usr/bin/env python3
"""HACKING.md's dependency table against the link graph CMake configured.

The top CMakeLists.txt writes BUILD/ember-link-graph.txt at configure time:
one line a target of a component folder, "TARGET FOLDER DEP,DEP,...", the
Ember targets it links directly.  HACKING.md's table ("| layer | folder |
target | links |") must list the same targets in the same folders with the
same links, and every link must go to a lower layer, so the written order
cannot go stale again.

  check_deps_table.py HACKING.md GRAPH            the check (exit 1 on a difference)
  check_deps_table.py --selftest HACKING.md GRAPH  the check fails on a table
                                                   with an edge or layer changed
  check_deps_table.py --print GRAPH                rows for the graph, each target
                                                   one layer above its highest link
"""
import re
import sys


def read_graph(path):
    graph = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            deps = set(parts[2].split(",")) if len(parts) > 2 else set()
            graph[parts[0]] = (parts[1], deps)
    return graph


def names(cell):
    return set(re.findall(r"`([^`]+)`", cell))


def read_table(path):
    """{target: (layer, folder, deps)} from the table whose header names
    'target' and 'links'."""
    rows, in_table = {}, False
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.lstrip().startswith("|"):
                in_table = False
                continue
            low = [c.lower() for c in cells]
            if "target" in low and any(c.startswith("links") for c in low):
                in_table = True
                continue
            if not in_table or set(line.strip()) <= set("|-: "):
                continue
            layer, folder, target, links = cells[:4]
            (t,) = names(target)
            (fo,) = names(folder)
            rows[t] = (int(layer), fo.rstrip("/"), names(links))
    return rows


def check(table, graph):
    """The list of differences, empty when the table is true."""
    errs = []
    for t in sorted(set(graph) - set(table)):
        errs.append(f"target '{t}' ({graph[t][0]}/) is not in the table")
    for t in sorted(set(table) - set(graph)):
        errs.append(f"target '{t}' of the table is not built")
    layers = [table[t][0] for t in table]
    if layers != sorted(layers) or (layers and layers[0] != 1) or \
            any(b - a > 1 for a, b in zip(layers, layers[1:])):
        errs.append(f"layers must count up from 1 without gaps, in order: {layers}")
    for t in sorted(set(table) & set(graph)):
        layer, folder, deps = table[t]
        gfolder, gdeps = graph[t]
        if folder != gfolder:
            errs.append(f"'{t}' is built in {gfolder}/, the table says {folder}/")
        for d in sorted(gdeps - deps):
            errs.append(f"'{t}' links '{d}': not in the table")
        for d in sorted(deps - gdeps):
            errs.append(f"'{t}' does not link '{d}', the table says it does")
        for d in sorted(deps & set(table)):
            if table[d][0] >= layer:
                errs.append(f"'{t}' (layer {layer}) links '{d}' of layer {table[d][0]}: "
                            "a link goes to a lower layer")
    return errs


def selftest(table, graph):
    """Each crafted change of a true table must be found."""
    if check(table, graph):
        return ["the real table is not true; fix it first"]
    out = []
    some = next(t for t in table if table[t][2])
    dep = sorted(table[some][2])[0]
    layer, folder, deps = table[some]
    cases = {
        "an edge dropped": {**table, some: (layer, folder, deps - {dep})},
        "an edge added": {**table, some: (layer, folder, deps | {"ember_nonesuch"})},
        "a layer inverted": {**table, dep: (layer, table[dep][1], table[dep][2])},
        "a target missing": {t: v for t, v in table.items() if t != some},
    }
    for what, bad in cases.items():
        if not check(bad, graph):
            out.append(f"{what} was not found")
    return out


def print_rows(graph):
    layer = {}

    def depth(t):
        if t not in layer:
            layer[t] = 1 + max((depth(d) for d in graph[t][1]), default=0)
        return layer[t]

    order = list(graph)
    for t in sorted(graph, key=lambda t: (depth(t), order.index(t))):
        links = ", ".join(f"`{d}`" for d in sorted(graph[t][1])) or "-"
        print(f"| {layer[t]} | `{graph[t][0]}/` | `{t}` | {links} |")


def main(argv):
    if len(argv) == 2 and argv[0] == "--print":
        print_rows(read_graph(argv[1]))
        return 0
    mode = "check"
    if argv and argv[0] == "--selftest":
        mode, argv = "selftest", argv[1:]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    table, graph = read_table(argv[0]), read_graph(argv[1])
    if not table:
        print(f"{argv[0]}: no dependency table (| layer | folder | target | links |)")
        return 1
    errs = check(table, graph) if mode == "check" else selftest(table, graph)
    for e in errs:
        print(f"{argv[0]}: {e}")
    if not errs:
        print(f"{mode}: {len(table)} targets, {sum(len(v[2]) for v in table.values())} links: ok")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
