"""The `tree` artifact: the placement, its critical path and cuts, or why there is
none (infeasible, or stopped by a limit)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from placement_cli import FORMAT_VERSION
from placement_cli.algorithms.tree.build import build_tree
from placement_cli.algorithms.tree.model import (
    INF,
    Tree,
    TreeInput,
    TreeLimits,
    TreeOptions,
    children_first,
)
from placement_cli.algorithms.tree.rebuild import place
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num

_LIMITS = TreeLimits()


def evaluate(tree: Tree, assignment: Sequence[int]) -> list[float]:
    """Latency of every subtree under a full assignment, from scratch: self-time plus
    the slowest child, a child on another engine adding its transfer.

    >>> from placement_cli.algorithms.tree.build import tree_from_spec
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


def _why_infeasible(tree: Tree, budget: int) -> list[Diagnostic]:
    """Name the cause: a node no engine runs; else a child whose engines cannot reach its
    parent's at any budget; else the least number of cuts a placement needs."""
    n_e = len(tree.engines)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for v in range(tree.n):
        o = tree.origin[v]
        if all(t == INF for t in tree.time[v]) and o not in seen:
            seen.add(o)
            out.append(
                Diagnostic(
                    "error",
                    "unsupported-node",
                    f"no engine can run node '{tree.ids[v]}': its time is missing or null for every engine",
                    (tree.ids[v],),
                )
            )
    if out:
        return out
    # cuts[v][e]: the fewest cuts placing v's subtree with v on e (INF: impossible).
    cuts: list[list[float]] = [[] for _ in range(tree.n)]
    origins: list[tuple[int, int]] = []  # (node, child to blame or -1)
    for v in children_first(tree):
        row = [0.0 if t < INF else INF for t in tree.time[v]]
        blame = -1
        for u in tree.children[v]:
            cu = cuts[u]
            tr = tree.transfer(u)
            reach = False
            for e in range(n_e):
                if row[e] == INF:
                    continue
                c = min(
                    [cu[e]] + [cu[s] + 1 for s in range(n_e) if s != e and tr[s * n_e + e] < INF]
                )
                row[e] = row[e] + c
                reach = reach or c < INF
            if not reach and blame < 0 and min(cu) < INF:
                blame = u
        if min(row) == INF and all(min(cuts[u]) < INF for u in tree.children[v]):
            origins.append((v, blame))
        cuts[v] = row
    for v, u in sorted(origins):
        runs = [tree.engines[e] for e in range(n_e) if tree.time[v][e] < INF]
        if u >= 0:
            can = [tree.engines[e] for e in range(n_e) if cuts[u][e] < INF]
            msg = (
                f"no placement at any budget: child '{tree.ids[u]}' can only run on {', '.join(can)} and no transfer "
                f"leads from there to an engine that runs its parent '{tree.ids[v]}' ({', '.join(runs)})"
            )
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[u], tree.ids[v])))
        else:
            msg = f"no placement at any budget: no engine that runs node '{tree.ids[v]}' ({', '.join(runs)}) can receive all of its children"
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[v],)))
    if out:
        return out
    need = int(min(cuts[tree.root]))
    return [
        Diagnostic(
            "error",
            "budget-too-small",
            f"every placement needs at least {need} cut(s) but the budget is {budget} (pass --budget {need})",
            (),
            {"min_budget": need},
        )
    ]


def _plain(obj: Any) -> Any:
    """The echo prints `rows: 12` back as 12, not 12.0 (the model stores floats)."""
    if isinstance(obj, float):
        return num(obj)
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def _big(x: int) -> str:
    """An integer for a message, never formatting more digits than it prints."""
    return str(x) if x < 10**18 else f"about 2^{x.bit_length() - 1}"


def _echo(problem: TreeInput, budget: int) -> dict[str, Any]:
    """The file as read, normalised (explicit transfers from their arrays, in input order)."""
    doc = _plain(problem.file.model_dump(mode="json", by_alias=True, exclude_none=True))
    ex = problem.explicit
    if len(ex):
        ids, engines = problem.ids, problem.engines
        doc.setdefault("transfer", {})["explicit"] = [
            {"child": ids[c], "from": engines[s], "to": engines[d], "cost": num(x)}
            for c, s, d, x in zip(
                ex.child.tolist(), ex.src.tolist(), ex.dst.tolist(), ex.cost.tolist(), strict=True
            )
        ]
    # The echo carries the budget actually used, so the artifact re-reads to this result.
    doc["budget"] = budget
    return doc


def tree_artifact(
    problem: TreeInput, options: TreeOptions, limits: TreeLimits = _LIMITS
) -> tuple[dict[str, Any], str]:
    """The `tree` artifact and a one-line summary. Infeasible trees get status
    `infeasible` and error diagnostics (the CLI exits 4); a DP stopped by the time or
    memory limit gets `unsolved` (exit 5).

    >>> from placement_cli.algorithms.tree.load import parse_tree
    >>> inp = parse_tree({"version": 1, "engines": ["pg", "duck"], "budget": 1,
    ...     "transfer": {"default": {"fixed": 1}}, "nodes": [
    ...     {"id": "agg", "children": ["scan"], "time": {"pg": 9, "duck": 1}},
    ...     {"id": "scan", "time": {"pg": 2, "duck": 5}}]})
    >>> art, summary = tree_artifact(inp, TreeOptions())
    >>> art["tree"]["latency"], art["tree"]["engines"], [f["latency"] for f in art["tree"]["frontier"]]
    (4, {'agg': 'duck', 'scan': 'pg'}, [6, 4])
    """
    start = time.monotonic()
    asked = options.budget if options.budget is not None else problem.file.budget
    if asked is None:
        raise InputError(
            [
                Problem(
                    f"{problem.prefix}budget",
                    "no cut budget: set `budget` in the file or pass --budget K",
                )
            ],
            problem.source,
        )
    tree, diags = build_tree(problem, options.expand_dag, limits)
    diagnostics = [d.to_json() for d in diags]
    edges = tree.n - 1
    # Budgets past the number of edges cannot change anything; any integer is clamped
    # before it reaches arithmetic or the artifact.
    budget = min(asked, edges)
    if asked > edges:
        diagnostics.append(
            Diagnostic(
                "info",
                "budget-clamped",
                f"the budget {_big(asked)} is more than the {edges} edge(s) of the tree; {budget} is used, which allows every cut",
                (),
            ).to_json()
        )
    res = place(tree, budget, start + options.time_limit, limits)
    section: dict[str, Any] = {
        "name": problem.file.name,
        "root": tree.ids[tree.root],
        "budget": budget,
        "nodes": tree.n,
        "frontier": [
            {"budget": k, "latency": None if x == INF else num(x)}
            for k, x in enumerate(res.frontier)
        ],
        "input_ref": dict(problem.ref),
    }
    if options.include_input:
        section["input"] = _echo(problem, budget)
    if res.stopped:
        d = res.detail or {}
        if res.stopped == "time-limit":
            msg = f"the time limit of {options.time_limit:g} s ran out after {d.get('nodes_done')} of {tree.n} nodes; no placement was computed and nothing is proven (raise --time-limit)"
        else:
            msg = f"the DP would hold more than {limits.memory_bytes} bytes after {d.get('nodes_done')} of {tree.n} nodes; no placement was computed and nothing is proven (lower the budget)"
        diagnostics.append(Diagnostic("error", res.stopped, msg, (), dict(d)).to_json())
        section.update(latency=None, cuts_used=None, engines={}, cuts=[], critical_path=[])
        summary = f"{problem.source}: unsolved: {msg}"
        status = "unsolved"
    elif res.latency == INF:
        why = _why_infeasible(tree, budget)
        diagnostics += [d.to_json() for d in why]
        section.update(latency=None, cuts_used=None, engines={}, cuts=[], critical_path=[])
        summary = f"{problem.source}: infeasible: {why[0].message}"
        status = "infeasible"
    else:
        a = res.assignment
        lat = evaluate(tree, a)
        if lat[tree.root] != res.latency:  # pragma: no cover - a bug, never an input problem
            raise AssertionError(
                f"reconstructed latency {lat[tree.root]} != DP minimum {res.latency}"
            )
        section.update(
            latency=num(res.latency),
            cuts_used=res.cuts_used,
            engines={tree.ids[v]: tree.engines[a[v]] for v in range(tree.n)},
            cuts=cut_edges(tree, a),
            critical_path=critical_path(tree, a, lat),
        )
        summary = (
            f"{problem.source}: latency {num(res.latency)} with {res.cuts_used} of at most {budget} cut(s); "
            f"{tree.n} operators on {len(tree.engines)} engines; without cuts: "
            + ("impossible" if res.frontier[0] == INF else str(num(res.frontier[0])))
        )
        status = "ok"
    art = {
        "format_version": FORMAT_VERSION,
        "kind": "tree",
        "status": status,
        "diagnostics": diagnostics,
        "tree": section,
    }
    return art, summary
