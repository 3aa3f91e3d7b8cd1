"""Building the tree the DP runs on: the subtree under the root, shared sub-plans
rejected or (`--expand-dag`) duplicated, transfers as coefficient matrices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.ir.tree.model import INF, Tree, TreeInput, TreeLimits
from placement_cli.ir.tree.read import parse_tree

_LIMITS = TreeLimits()


def build_tree(
    inp: TreeInput, expand_dag: bool = False, limits: TreeLimits = _LIMITS
) -> tuple[Tree, tuple[Diagnostic, ...]]:
    """The tree under the root. A shared sub-plan (a node with two parents) is an input
    error naming it, unless `expand_dag`: then every further use gets its own copy
    (`scan#2`, ...), reported by an info diagnostic.

    >>> inp = parse_tree({"version": 1, "engines": ["pg"], "nodes": [
    ...     {"id": "join", "children": ["scan", "scan"], "time": {"pg": 1}},
    ...     {"id": "scan", "time": {"pg": 2}}]})
    >>> tree, diags = build_tree(inp, expand_dag=True)
    >>> tree.ids, tree.children, diags[0].code
    (('join', 'scan', 'scan#2'), ((1, 2), (), ()), 'dag-expanded')
    """
    pre = inp.prefix
    n_in = len(inp.ids)
    diags: list[Diagnostic] = []

    reach = [False] * n_in
    reach[inp.root] = True
    todo = [inp.root]
    while todo:
        for c in inp.kids[todo.pop()]:
            if not reach[c]:
                reach[c] = True
                todo.append(c)

    if all(reach) and sum(map(len, inp.kids)) == n_in - 1:
        # Every node under the root and one edge into each but the root: a tree, and the
        # DFS below would number its nodes as the input does.
        return _tree(inp, inp.ids, tuple(range(n_in)), inp.kids, inp.root, inp.time), ()

    parents: list[list[tuple[int, int]]] = [[] for _ in range(n_in)]
    for x in range(n_in):
        if reach[x]:
            for j, c in enumerate(inp.kids[x]):
                parents[c].append((x, j))
    shared = [x for x in range(n_in) if len(parents[x]) > 1]
    if shared and not expand_dag:
        problems = []
        for x in shared:
            (p1, _), (p2, j2) = parents[x][0], parents[x][1]
            where = (
                f"listed twice among the children of '{inp.ids[p1]}'"
                if p1 == p2
                else f"a child of '{inp.ids[p1]}' and of '{inp.ids[p2]}'"
            )
            problems.append(
                Problem(
                    f"{pre}nodes[{p2}].children[{j2}]",
                    f"node '{inp.ids[x]}' is shared: it is {where}; "
                    "an operator tree cannot share a sub-plan (pass --expand-dag to duplicate it)",
                )
            )
        raise InputError(problems, inp.source)

    # Preorder DFS from the root creates one tree node per visit: a tree has one visit
    # per node, a DAG one per path from the root to the node.
    visit_origin: list[int] = []
    visit_kids: list[list[int]] = []
    first_visit = [-1] * n_in
    stack = [(inp.root, -1)]
    while stack:
        x, p = stack.pop()
        t = len(visit_origin)
        if shared and t >= limits.max_expanded_nodes:
            raise InputError(
                [
                    Problem(
                        f"{pre}nodes",
                        f"expanding the shared sub-plans would create more than {limits.max_expanded_nodes} nodes",
                    )
                ],
                inp.source,
            )
        visit_origin.append(x)
        visit_kids.append([])
        if p >= 0:
            visit_kids[p].append(t)
        if first_visit[x] < 0:
            first_visit[x] = t
        for c in reversed(inp.kids[x]):
            stack.append((c, t))

    order = [first_visit[x] for x in range(n_in) if first_visit[x] >= 0]
    copies = [t for t in range(len(visit_origin)) if first_visit[visit_origin[t]] != t]
    order += copies
    new = [0] * len(visit_origin)
    for i, t in enumerate(order):
        new[t] = i

    ids = [inp.ids[visit_origin[t]] for t in order]
    if copies:
        taken = set(inp.ids)
        count = [1] * n_in
        for i in range(len(order) - len(copies), len(order)):
            x = visit_origin[order[i]]
            while True:
                count[x] += 1
                cand = f"{inp.ids[x]}#{count[x]}"
                if cand not in taken:
                    break
            taken.add(cand)
            ids[i] = cand
        names: dict[int, list[str]] = {}
        for i, t in enumerate(order):
            names.setdefault(visit_origin[t], []).append(ids[i])
        for x in shared:
            ps = ", ".join(f"'{inp.ids[p]}'" for p, _ in parents[x])
            cs = names[x]
            diags.append(
                Diagnostic(
                    "info",
                    "dag-expanded",
                    f"node '{inp.ids[x]}' is shared by {len(parents[x])} parents ({ps}); "
                    f"--expand-dag duplicated its sub-plan, so it appears {len(cs)} times: {', '.join(cs)}",
                    tuple(cs),
                )
            )
        diags.append(
            Diagnostic(
                "info",
                "dag-expanded",
                f"the plan DAG of {sum(reach)} nodes was expanded into a tree of {len(order)} nodes",
                (),
            )
        )

    unplaced = [inp.ids[x] for x in range(n_in) if not reach[x]]
    if unplaced:
        shown = ", ".join(f"'{u}'" for u in unplaced[:10]) + (
            f" and {len(unplaced) - 10} more" if len(unplaced) > 10 else ""
        )
        diags.append(
            Diagnostic(
                "warning",
                "unplaced-nodes",
                f"{len(unplaced)} node(s) are not under root '{inp.ids[inp.root]}' and are not placed: {shown}",
                tuple(unplaced),
            )
        )

    origin = tuple(visit_origin[t] for t in order)
    children = tuple(tuple(new[c] for c in visit_kids[t]) for t in order)
    return _tree(
        inp, tuple(ids), origin, children, new[0], tuple(inp.time[x] for x in origin)
    ), tuple(diags)


def _tree(
    inp: TreeInput,
    ids: tuple[str, ...],
    origin: tuple[int, ...],
    children: tuple[tuple[int, ...], ...],
    root: int,
    time: tuple[tuple[float, ...], ...],
) -> Tree:
    """The Tree with the transfer model as coefficient matrices."""
    f = inp.file
    tr = f.transfer
    n_e = len(inp.engines)
    coef = {k: np.zeros((n_e, n_e)) for k in ("fixed", "rows", "width", "bytes")}
    for si, s in enumerate(inp.engines):
        for di, d in enumerate(inp.engines):
            if si == di:
                continue
            m = tr.linear.get(s, {}).get(d, tr.default)
            if m is None:
                coef["fixed"][si, di] = INF
            else:
                coef["fixed"][si, di] = m.fixed
                coef["rows"][si, di] = m.per_row
                coef["width"][si, di] = m.per_width
                coef["bytes"][si, di] = m.per_byte
    terms = tuple((k, c) for k, c in coef.items() if k == "fixed" or bool((c > 0).any()))
    rows = tuple(float(nd.rows) if nd.rows is not None else 0.0 for nd in f.nodes)
    width = tuple(float(nd.row_width) if nd.row_width is not None else 0.0 for nd in f.nodes)
    nbytes = tuple(r * w for r, w in zip(rows, width, strict=True))
    return Tree(
        engines=inp.engines,
        ids=ids,
        origin=origin,
        children=children,
        root=root,
        time=time,
        rows=rows,
        width=width,
        nbytes=nbytes,
        terms=terms,
        explicit=inp.explicit,
        no_cut=frozenset(i for i, nd in enumerate(f.nodes) if nd.no_cut is not None),
    )


def tree_from_spec(
    engines: Sequence[str], nodes: Sequence[dict[str, Any]], transfer: dict[str, Any] | None = None
) -> Tree:
    """A Tree from plain dicts, first node the root (tests, benchmarks, doctests).

    >>> t = tree_from_spec(["a", "b"], [{"id": "r", "children": ["x"], "time": {"a": 1}},
    ...                                 {"id": "x", "time": {"b": 1}}],
    ...                    {"default": {"fixed": 3}})
    >>> t.transfer(1)
    [0.0, 3.0, 3.0, 0.0]
    """
    doc = {"version": 1, "engines": list(engines), "root": nodes[0]["id"], "nodes": list(nodes)}
    if transfer is not None:
        doc["transfer"] = transfer
    return build_tree(parse_tree(doc))[0]
