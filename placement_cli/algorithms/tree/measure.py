"""A placement's numbers, from scratch: every subtree's latency under an assignment
(`evaluate`), the chain of steps that makes the root's latency (`critical_path`) and
the edges it cuts (`cut_edges`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placement_cli.core.io import num
from placement_cli.ir.tree.model import Tree, children_first


def evaluate(tree: Tree, assignment: Sequence[int]) -> list[float]:
    """Latency of every subtree under a full assignment, from scratch: self-time plus
    the slowest child, a child on another engine adding its transfer.

    >>> from placement_cli.ir.tree.build import tree_from_spec
    >>> t = tree_from_spec(["a", "b"], [{"id": "r", "children": ["x"], "time": {"a": 1}},
    ...                                 {"id": "x", "time": {"b": 2}}], {"default": {"fixed": 3}})
    >>> evaluate(t, [0, 1])
    [6.0, 2.0]
    """
    lat = [0.0] * tree.n
    for v in children_first(tree):
        e = assignment[v]
        worst = 0.0
        for u in tree.children[v]:
            s = assignment[u]
            x = lat[u] if s == e else lat[u] + float(tree.matrix(u)[s, e])
            if x > worst:
                worst = x
        lat[v] = tree.time[v][e] + worst
    return lat


def critical_path(
    tree: Tree, assignment: Sequence[int], lat: Sequence[float]
) -> list[dict[str, Any]]:
    """Root-to-leaf chain of node and transfer steps whose times sum to the latency;
    among equally slow children the first one is followed."""
    steps: list[dict[str, Any]] = []
    v = tree.root
    while True:
        e = assignment[v]
        steps.append(
            {
                "kind": "node",
                "node": tree.ids[v],
                "engine": tree.engines[e],
                "time": num(tree.time[v][e]),
            }
        )
        best_u, best_x, best_c = -1, -1.0, 0.0
        for u in tree.children[v]:
            s = assignment[u]
            c = 0.0 if s == e else float(tree.matrix(u)[s, e])
            x = lat[u] if s == e else lat[u] + c
            if x > best_x:
                best_u, best_x, best_c = u, x, c
        if best_u < 0:
            return steps
        s = assignment[best_u]
        if s != e:
            steps.append(
                {
                    "kind": "transfer",
                    "child": tree.ids[best_u],
                    "parent": tree.ids[v],
                    "from_engine": tree.engines[s],
                    "to_engine": tree.engines[e],
                    "cost": num(best_c),
                }
            )
        v = best_u


def cut_edges(tree: Tree, assignment: Sequence[int]) -> list[dict[str, Any]]:
    """Every edge whose ends run on different engines, in the child's node order."""
    parent = [-1] * tree.n
    for v in range(tree.n):
        for u in tree.children[v]:
            parent[u] = v
    out = []
    for u in range(tree.n):
        p = parent[u]
        if p >= 0 and assignment[u] != assignment[p]:
            s, d = assignment[u], assignment[p]
            out.append(
                {
                    "child": tree.ids[u],
                    "parent": tree.ids[p],
                    "from_engine": tree.engines[s],
                    "to_engine": tree.engines[d],
                    "cost": num(float(tree.matrix(u)[s, d])),
                }
            )
    return out
