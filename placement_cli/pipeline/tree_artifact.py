"""The `tree` artifact: the placement, its critical path and cuts, or why there is
none (infeasible, or stopped by a limit), built from the checked input
(`placement_cli.ir.tree`) and the DP's answer (`placement_cli.algorithms.tree`)."""

from __future__ import annotations

import time
from typing import Any

from placement_cli import FORMAT_VERSION
from placement_cli.algorithms.tree.decide import decide
from placement_cli.algorithms.tree.infeasible import why_infeasible
from placement_cli.algorithms.tree.latency import latency, model_tree, resolve, solve
from placement_cli.algorithms.tree.measure import critical_path, cut_edges, evaluate
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num
from placement_cli.formats.tree_structs import dump
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import INF, TreeInput, TreeLimits
from placement_cli.ir.tree.options import TreeOptions

_LIMITS = TreeLimits()


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
    doc = _plain(dump(problem.file, exclude_none=True))
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


def decision_line(decision: dict[str, Any]) -> str:
    """The decision in a few words, for the summary line."""
    c = decision["chosen"]
    if c["kind"] == "split":
        return f"chosen: the split ({decision['reason']})"
    return f"chosen: all on {c['engine']}, its SQL {c['sql']} ({decision['reason']})"


def tree_artifact(
    problem: TreeInput, options: TreeOptions, limits: TreeLimits = _LIMITS
) -> tuple[dict[str, Any], str]:
    """The `tree` artifact and a one-line summary. Infeasible trees get status
    `infeasible` and error diagnostics (the CLI exits 4); a DP stopped by the time or
    memory limit gets `unsolved` (exit 5).

    >>> from placement_cli.ir.tree.read import parse_tree
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
    query = problem.file.query
    model, cores = resolve(
        options.latency,
        options.cores,
        query.threads if query else None,
        # A tree probed in-pipeline: `measured` can price it (every node has its subtree).
        any(n.above for n in problem.file.nodes) and all(n.subtree for n in problem.file.nodes),
    )
    dp_tree, dp_model = model_tree(problem, tree, model)
    res = solve(dp_tree, budget, dp_model, cores, start + options.time_limit, limits)
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
    if model != "critical-path":  # the seed's model goes unsaid: its artifacts as they were
        section["latency_model"] = {"model": model, "cores": cores}
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
        why = why_infeasible(dp_tree, budget)
        diagnostics += [d.to_json() for d in why]
        section.update(latency=None, cuts_used=None, engines={}, cuts=[], critical_path=[])
        summary = f"{problem.source}: infeasible: {why[0].message}"
        status = "infeasible"
    else:
        a = res.assignment
        lat = evaluate(tree, a)
        whole = latency(dp_tree, a, dp_model, cores)
        if whole != res.latency:  # pragma: no cover - a bug, never an input problem
            raise AssertionError(f"reconstructed latency {whole} != DP minimum {res.latency}")
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
        decision = decide(problem, dp_tree, a, res.latency, res.cuts_used, dp_model, cores)
        if decision is not None:  # a probed tree: its measured single-engine ways
            section["decision"] = decision
            summary += "; " + decision_line(decision)
        status = "ok"
    art = {
        "format_version": FORMAT_VERSION,
        "kind": "tree",
        "status": status,
        "diagnostics": diagnostics,
        "tree": section,
    }
    return art, summary
