"""`show` of a tree artifact: the operator tree drawn (engines, cuts, the critical path)
as a diagram or a table, and its title; the tree file is found and checked by
`views/tree.py`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from placement_cli.algorithms.tree.measure import evaluate
from placement_cli.ir.tree.model import Tree
from placement_cli.views.data import fmt_num
from placement_cli.views.diagram import CRITICAL, CRITICAL_CUT, CUT, LEGEND, Diagram, Edge, Node
from placement_cli.views.text import TextTable
from placement_cli.views.tree_sniff import TreeArtifact


def fmt_time(x: float | None, unit: str = "") -> str:
    """A time as a picture shows it: three significant digits (no more decimals than
    that, none dropped from a whole number), and its unit when the tree has one.

    >>> fmt_time(21.547705458872247, "ms"), fmt_time(0.545743), fmt_time(1234.7), fmt_time(0)
    ('21.5 ms', '0.546', '1235', '0')
    """
    if x is None:
        return "-"
    v = float(x)
    if v == 0 or not math.isfinite(v):
        text = fmt_num(v)
    else:
        digits = max(0, 2 - math.floor(math.log10(abs(v))))
        text = fmt_num(round(v, digits))
    return f"{text} {unit}" if unit else text


def _unit(art: TreeArtifact) -> str:
    """`ms` for a tree whose times were measured (`import sql --probe` records its
    query; `import` of an ANALYZE profile records milliseconds too), else none: a
    hand-written tree's times are in any unit."""
    inp = art.section.get("input")
    probed = isinstance(inp, dict) and "query" in inp
    return "ms" if probed or art.section.get("transfer_ref") else ""


def _critical(sec: dict[str, Any]) -> tuple[set[str], set[tuple[str, str]]]:
    """The critical path's operators, and its edges as (parent, child)."""
    nodes = [s["node"] for s in sec.get("critical_path") or () if s.get("kind") == "node"]
    return set(nodes), set(zip(nodes, nodes[1:], strict=False))


def tree_diagram(art: TreeArtifact, tree: Tree, ops: list[str]) -> Diagram:
    """The operator tree, root at the top: each operator in its engine's colour with its
    time there, every cut bold and labelled with its transfer cost, the critical path
    in red, a legend of the engines in their order."""
    sec = art.section
    engines = sec.get("engines") or {}
    eidx = {e: i for i, e in enumerate(tree.engines)}
    on_path, path_edges = _critical(sec)
    cuts = {(c["parent"], c["child"]): c for c in sec.get("cuts") or ()}
    unit = _unit(art)
    title = tree_title(art, unit)
    d = Diagram(title, legend="engines")
    for v in range(tree.n):
        vid = tree.ids[v]
        e = engines.get(vid)
        t = eidx.get(e, -1) if isinstance(e, str) else -1
        lines = [vid]
        if ops[v]:
            lines.append(ops[v])
        lines.append(f"{e} {fmt_time(tree.time[v][t], unit)}" if t >= 0 else "no engine")
        if vid in on_path:
            lines[-1] += " (critical)"
        d.nodes.append(Node(f"op:{vid}", tuple(lines), t))
    for v in range(tree.n):
        for u in tree.children[v]:
            p, c = tree.ids[v], tree.ids[u]
            cut = cuts.get((p, c))
            crit = (p, c) in path_edges
            style = CUT if cut else (CRITICAL if crit else "plain")
            # Read along the arrow (parent -> child): the rows go the other way.
            label = (
                f"cut {cut['to_engine']} <- {cut['from_engine']}: {fmt_time(cut['cost'], unit)}"
                if cut
                else ""
            )
            if cut and crit:
                style = CRITICAL_CUT
            d.edges.append(Edge(f"op:{p}", f"op:{c}", style, label, f"edge:{p}->{c}"))
    for i, e in enumerate(tree.engines):
        d.nodes.append(Node(f"legend:{e}", (e,), i, LEGEND))
    return d


def tree_table(art: TreeArtifact, tree: Tree, ops: list[str]) -> TextTable:
    """Per operator, indented under its parent: op, engine, time, subtree latency, and
    whether its edge to the parent is a cut or it is on the critical path."""
    sec = art.section
    engines = sec.get("engines") or {}
    eidx = {e: i for i, e in enumerate(tree.engines)}
    a = [eidx.get(str(engines.get(v)), -1) for v in tree.ids]
    lat: list[float | None] = [None] * tree.n
    if all(x >= 0 for x in a):
        lat = list(evaluate(tree, a))
    on_path, _ = _critical(sec)
    cuts = {c["child"]: c for c in sec.get("cuts") or ()}
    t = TextTable(
        tree_title(art),
        ("operator", "op", "engine", "time", "subtree", "notes"),
    )
    stack = [(tree.root, 0)]
    while stack:
        v, depth = stack.pop()
        vid = tree.ids[v]
        notes = []
        if vid in cuts:
            c = cuts[vid]
            notes.append(
                f"cut to parent {c['from_engine']} -> {c['to_engine']} {fmt_num(c['cost'])}"
            )
        if vid in on_path:
            notes.append("critical path")
        e = a[v]
        t.rows.append(
            (
                "  " * depth + vid,
                ops[v],
                tree.engines[e] if e >= 0 else "-",
                fmt_num(tree.time[v][e]) if e >= 0 else "-",
                fmt_num(lat[v]),
                "; ".join(notes),
            )
        )
        stack += [(u, depth + 1) for u in reversed(tree.children[v])]
    path = sec.get("critical_path") or ()
    if path:
        t.notes.append("critical path: " + " <- ".join(path_step(s) for s in path))
    return t


def path_step(s: dict[str, Any]) -> str:
    """One step of a critical path in words: a node on its engine, or a transfer."""
    if s.get("kind") == "node":
        return f"{s.get('node')} [{s.get('engine')} {fmt_num(s.get('time'))}]"
    return f"transfer {s.get('from_engine')} -> {s.get('to_engine')} {fmt_num(s.get('cost'))}"


def tree_title(art: TreeArtifact, unit: str | None = None) -> str:
    """The picture's title: name, latency (rounded, `fmt_time`), cuts used of the budget."""
    sec = art.section
    name = sec.get("name") or Path(art.source).name
    if art.doc.get("status") != "ok":
        return f"{name}: {art.doc.get('status')}"
    unit = _unit(art) if unit is None else unit
    title = (
        f"{name}: latency {fmt_time(sec.get('latency'), unit)}, "
        f"{sec.get('cuts_used')} of {sec.get('budget')} cuts"
    )
    chosen = (
        (sec.get("decision") or {}).get("chosen") if isinstance(sec.get("decision"), dict) else None
    )
    if isinstance(chosen, dict) and chosen.get("kind") == "single":
        rule = sec["decision"].get("rule")
        title += f"; {rule}: all on {chosen.get('engine')}, {chosen.get('sql')}"
    elif isinstance(chosen, dict) and chosen.get("kind") == "split":
        title += f"; {sec['decision'].get('rule')}: the split"
    return title
