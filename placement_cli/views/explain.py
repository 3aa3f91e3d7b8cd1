"""`explain BLOCK`: why each target is or is not possible for a block, and what pinning
the block there would cost, with a proof or an honest "not proven".

For every target of the plan, in target order:

* why it is impossible, if it is: not in the block's declared `domain`; a statement or
  the terminator has no cost there (so that target cannot run it, exactly as
  `graph.build_graph` derives the domain); removed by prune, naming the edge from
  `prune.removed`; or the block is unreachable and takes no target at all;
* the block's cost there (base cost plus premium);
* the optimal total if the block were pinned there: the pruned domains with the block's
  domain narrowed to that one target, solved by `algorithms.solve.exact.solve_exact` within a
  share of the time limit. Only a finished proof is called "optimal"; otherwise the
  best total found and the proven lower bound are reported as "not proven";
* the difference to the chosen placement's total.

And the block's edges (in and out) with their transition cost under the chosen assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from placement_cli.algorithms.solve.budget import Budget
from placement_cli.algorithms.solve.objective import UNASSIGNED, evaluate, feasible_for
from placement_cli.core.errors import UsageError
from placement_cli.core.io import num
from placement_cli.ir.graph import INF, Graph
from placement_cli.pipeline.run import Run
from placement_cli.views.explain_rules import name_rules, rules_of


@dataclass(frozen=True)
class ExplainOptions:
    """`time_limit`: seconds for all the pinned solves together, shared equally."""

    time_limit: float = 10.0


def _n(x: float | None) -> float | int | None:
    return None if x is None or x == INF else num(float(x))


def impossible_reasons(
    g: Graph, b: int, t: int, domains: tuple[int, ...], removed: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Why block `b` cannot run on target `t` (empty: it can), most basic reason first."""
    block = g.plan.blocks[b]
    name = g.targets[t]
    out: list[dict[str, Any]] = []
    if not g.live[b]:
        out.append(
            {
                "code": "unreachable",
                "message": "the block is unreachable from the entry and takes no target",
            }
        )
    if block.domain is not None and name not in block.domain:
        out.append(
            {
                "code": "not-in-domain",
                "message": f"'{name}' is not in the block's declared domain {list(block.domain)}",
            }
        )
    for j, st in enumerate(block.statements):
        if st.cost.get(name) is None:
            what = f"statements[{j}]" + (f" ({st.text})" if st.text else "")
            out.append(
                {
                    "code": "unsupported-statement",
                    "message": f"{what} has no cost on '{name}': it cannot run there",
                    "statement": j,
                }
            )
    term = block.terminator
    if term.cost is not None and term.cost.get(name) is None:
        out.append(
            {
                "code": "unsupported-terminator",
                "message": f"the '{term.kind}' terminator has no cost on '{name}': it cannot run there",
            }
        )
    if g.domain[b] >> t & 1 and not domains[b] >> t & 1:
        bid = g.block_ids[b]
        edges = [
            r.get("edge") for r in removed if r.get("block") == bid and r.get("target") == name
        ]
        if edges and isinstance(edges[0], dict):
            e = edges[0]
            out.append(
                {
                    "code": "pruned",
                    "message": f"removed by prune: edge {e.get('from')}[{e.get('index')}] -> {e.get('to')} allows '{name}' "
                    "with none of the targets left at its other end",
                    "edge": e,
                }
            )
        else:
            out.append(
                {
                    "code": "pruned",
                    "message": "removed from the block's domain by the prune section given",
                    "edge": None,
                }
            )
    return out


def cost_parts(g: Graph, b: int, t: int) -> dict[str, Any]:
    """Block `b`'s cost on target `t`, part by part, as the plan format adds it up: the
    statements and the terminator (or the cost the block gives whole), plus the path
    premium. The parts sum to the block's cost there."""
    block = g.plan.blocks[b]
    name = g.targets[t]
    parts: dict[str, Any] = {}
    if block.cost is not None:
        parts["given"] = _n(block.cost.get(name, 0))
    else:
        parts["statements"] = _n(sum(st.cost.get(name) or 0 for st in block.statements))
        term = block.terminator.cost
        parts["terminator"] = _n((term or {}).get(name) or 0)
    parts["premium"] = _n((block.premium or {}).get(name, 0))
    return parts


def constrained_domains(g: Graph, domains: tuple[int, ...], con: dict[str, Any]) -> tuple[int, ...]:
    """The pruned domains narrowed by the pins and forbids a solve section records
    (`solve.constraints`): the placement explained was optimal only under them.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["a", "b"], "blocks": [
    ...     {"id": "x", "terminator": {"kind": "return"}}]})
    >>> forbid = {"forbids": [{"block": "x", "target": "b"}]}
    >>> constrained_domains(g, (3,), {"pins": {"x": "b"}}), constrained_domains(g, (3,), forbid)
    ((2,), (1,))
    """
    doms = list(domains)
    tindex = {t: i for i, t in enumerate(g.targets)}
    for bid, t in (con.get("pins") or {}).items():
        if bid in g.index and t in tindex:
            doms[g.index[bid]] &= 1 << tindex[t]
    for f in con.get("forbids") or ():
        bid, t = f["block"], f["target"]
        if bid in g.index and t in tindex:
            doms[g.index[bid]] &= ~(1 << tindex[t])
    return tuple(doms)


def _name_loops(g: Graph, sccr: Any, reasons: list[dict[str, Any]]) -> None:
    """A target pruned across an edge inside a loop is banned by that loop (a target
    that cannot stay inside it, or cannot be entered again): say which loop."""
    for r in reasons:
        e = r.get("edge") if r.get("code") == "pruned" else None
        if not isinstance(e, dict):
            continue
        u, v = g.index.get(str(e.get("from"))), g.index.get(str(e.get("to")))
        if u is None or v is None or sccr.comp_of[u] != sccr.comp_of[v]:
            continue
        comp = sccr.components[sccr.comp_of[u]]
        if comp.cyclic:
            blocks = [g.block_ids[x] for x in comp.blocks]
            r["loop"] = blocks
            r["message"] += (
                f"; the edge is inside the loop {{{', '.join(blocks)}}}, which bans it there"
            )


def _constraint_reasons(g: Graph, b: int, t: int, con: dict[str, Any]) -> list[dict[str, Any]]:
    """Why the recorded pins or forbids keep block `b` off target `t`."""
    bid, name = g.block_ids[b], g.targets[t]
    pinned_to = (con.get("pins") or {}).get(bid)
    out = []
    if pinned_to is not None and pinned_to != name:
        out.append(
            {
                "code": "pinned",
                "message": f"the solve pinned the block to '{pinned_to}' (--pin {bid}={pinned_to})",
            }
        )
    if {"block": bid, "target": name} in (con.get("forbids") or []):
        out.append(
            {"code": "forbidden", "message": f"the solve forbade it (--forbid {bid}={name})"}
        )
    return out


def _pinned(
    run: Run,
    b: int,
    t: int,
    limits: Budget,
    incumbent: tuple[int, ...] | None,
    chosen: tuple[int, ...] | None = None,
    domains: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    # Lazy: the exact method (~10 ms, measured), only when a block is explained.
    from placement_cli.algorithms.solve.exact import (
        solve_exact,
    )

    g = run.g
    doms = list(run.domains() if domains is None else domains)
    doms[b] = 1 << t
    pinned = tuple(doms)
    if incumbent is not None and not feasible_for(g, pinned, incumbent):
        incumbent = None
    out = solve_exact(g, pinned, run.scc(), limits, incumbent)
    if out.infeasible:
        return {
            "status": "infeasible",
            "proven": True,
            "total": None,
            "lower_bound": None,
            "moves": [],
        }
    total = None
    if out.assignment is not None:
        cost = evaluate(g, out.assignment)
        total = None if cost is None else cost.total
    moves = _moves(g, b, chosen, out.assignment)
    if out.optimal and total is not None:
        return {
            "status": "optimal",
            "proven": True,
            "total": _n(total),
            "lower_bound": _n(total),
            "moves": moves,
        }
    return {
        "status": "not proven",
        "proven": False,
        "total": _n(total),
        "lower_bound": _n(out.lower_bound),
        "moves": moves,
    }


def _moves(
    g: Graph, b: int, chosen: tuple[int, ...] | None, pinned: tuple[int, ...] | None
) -> list[dict[str, Any]]:
    """The other blocks whose target differs between the chosen placement and the one
    found with block `b` pinned, in input order."""
    if chosen is None or pinned is None:
        return []
    return [
        {"block": g.block_ids[x], "from": g.targets[chosen[x]], "to": g.targets[pinned[x]]}
        for x in range(g.n_blocks)
        if x != b and g.live[x] and chosen[x] != UNASSIGNED and pinned[x] != chosen[x]
    ]


def explain(run: Run, block: str, options: ExplainOptions | None = None) -> dict[str, Any]:
    """The explanation of `block` as a JSON-ready dict (see the module docstring).

    >>> from placement_cli.pipeline.run import Loaded, parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]})
    >>> ex = explain(Run(Loaded("<doc>", g)), "x")
    >>> [(r["target"], r["cost"], r["pinned"]["total"], r["difference"]) for r in ex["targets"]]
    [('a', 1, 5, 0), ('b', 5, 6, 1)]
    """
    opts = options or ExplainOptions()
    g = run.g
    b = g.index.get(block)
    if b is None:
        shown = ", ".join(g.block_ids[:10]) + (", ..." if g.n_blocks > 10 else "")
        raise UsageError(f"unknown block '{block}' (the plan's blocks: {shown})")
    domains = run.domains()
    found = run.assignment()
    solve = run.sections.get("solve", {})
    removed = run.sections.get("prune", {}).get("removed", [])
    feasible = run.status == "ok" and found is not None
    # Without a placement every block counts as unassigned.
    assignment: tuple[int, ...] = (
        tuple(found) if feasible and found is not None else (UNASSIGNED,) * g.n_blocks
    )
    chosen = assignment[b] if feasible and g.live[b] else UNASSIGNED
    chosen_cost = evaluate(g, assignment) if feasible else None
    total = None if chosen_cost is None else chosen_cost.total
    con = solve.get("constraints") or {}
    domains = constrained_domains(g, domains, con)  # optimal was under these: so is each pin
    possible = [t for t in range(g.n_targets) if g.live[b] and domains[b] >> t & 1]
    budget = Budget.within(opts.time_limit)
    rows = []
    lower = (run.loaded.extra or {}).get("lower") or getattr(g.plan, "lower", None)
    rules = rules_of(lower, g.plan)  # the rule behind each exclusion, when `lower` recorded it
    kind = g.plan.blocks[b].terminator.kind
    for t in range(g.n_targets):
        reasons = impossible_reasons(g, b, t, run.domains(), removed) + _constraint_reasons(
            g, b, t, con
        )
        _name_loops(g, run.scc(), reasons)
        name_rules(rules, block, kind, g.targets[t], reasons)
        row: dict[str, Any] = {
            "target": g.targets[t],
            "chosen": t == chosen,
            "possible": not reasons,
            "reasons": reasons,
            "cost": _n(g.cost[b][t]) if g.domain[b] >> t & 1 else None,
            "parts": cost_parts(g, b, t) if g.domain[b] >> t & 1 else None,
            "pinned": None,
            "difference": None,
            "tie": False,
        }
        if t in possible:
            left = possible[possible.index(t) :]
            share = budget.share(1 / len(left))
            # A first incumbent: the chosen placement with only this block moved, when
            # that is feasible (a search stopped early still has an answer to give).
            start = None if chosen == UNASSIGNED else assignment[:b] + (t,) + assignment[b + 1 :]
            pinned = _pinned(run, b, t, share, start, assignment if feasible else None, domains)
            row["pinned"] = pinned
            if pinned["total"] is not None and total is not None:
                row["difference"] = _n(pinned["total"] - total)
                # Another target as cheap as the chosen one, proven: a tie the solver
                # broke (by target order), not a reason.
                row["tie"] = (
                    t != chosen
                    and pinned["proven"]
                    and abs(pinned["total"] - total) <= 1e-9 * (1 + abs(total))
                )
        rows.append(row)
    edges = []
    seen: set[int] = set()
    for e in (*g.pred[b], *g.succ[b]):
        if e in seen:
            continue
        seen.add(e)
        u, v = g.edge_src[e], g.edge_dst[e]
        tu, tv = (
            assignment[u] if feasible else UNASSIGNED,
            assignment[v] if feasible else UNASSIGNED,
        )
        cost = g.edge_mat[e].get(tu, tv) if tu != UNASSIGNED and tv != UNASSIGNED else None
        edges.append(
            {
                "edge": g.edge_json(e),
                "direction": "self" if u == v else ("in" if v == b else "out"),
                "from_target": None if tu == UNASSIGNED else g.targets[tu],
                "to_target": None if tv == UNASSIGNED else g.targets[tv],
                "cost": _n(cost),
                "cut": tu != UNASSIGNED and tv != UNASSIGNED and tu != tv,
                "counted": g.live[u],
            }
        )
    return {
        "block": block,
        "reachable": g.live[b],
        "chosen": None if chosen == UNASSIGNED else g.targets[chosen],
        "chosen_cost": _n(g.cost[b][chosen]) if chosen != UNASSIGNED else None,
        "total": _n(total),
        "optimal": bool(solve.get("optimal")) and feasible,
        "constraints": con or None,
        "origin": (getattr(g.plan, "provenance", None) or {}).get(block),
        "status": run.status,
        "targets": rows,
        "edges": edges,
    }


def _signed(x: Any) -> str:
    if x is None:
        return "-"
    return f"+{x}" if x >= 0 else str(x)


def to_text(ex: dict[str, Any], title: str) -> str:
    """The explanation for people: one line per target, the reasons under it, the edges."""
    origin = ex.get("origin")
    where = ""
    if isinstance(origin, dict) and origin.get("block") is not None:
        first, end = (origin.get("statements") or [0, 0])[:2]
        part = f"statements {first}..{end - 1}" if end > first else "no statements"
        if origin.get("terminator"):
            part += " and the terminator"
        where = f" (lowered from {origin['block']}: {part})"
    head = f"block {ex['block']}{where} in {title}: "
    if not ex["reachable"]:
        head += "unreachable from the entry, so it runs nowhere and costs nothing"
    elif ex["status"] == "infeasible":
        head += "the plan has no feasible placement"
    else:
        proof = "proven optimal" if ex["optimal"] else "not proven optimal"
        con = ex.get("constraints") or {}
        under = [f"--pin {b}={t}" for b, t in (con.get("pins") or {}).items()]
        under += [f"--forbid {f['block']}={f['target']}" for f in con.get("forbids") or ()]
        if under:
            proof += " under " + " ".join(under)
        head += (
            f"chosen {ex['chosen']} (cost {ex['chosen_cost']}); plan total {ex['total']}, {proof}"
        )
    lines = [head, ""]
    rows = [("target", "possible", "cost", "optimum if pinned here", "vs chosen")]
    for r in ex["targets"]:
        p = r["pinned"]
        if p is None:
            pin = "-"
        elif p["status"] == "optimal":
            pin = f"{p['total']} (proven)"
        elif p["status"] == "infeasible":
            pin = "infeasible (proven)"
        else:
            found = "nothing found" if p["total"] is None else f"best found {p['total']}"
            pin = f"not proven: {found}, lower bound {p['lower_bound']}"
        possible = "chosen" if r["chosen"] else ("yes" if r["possible"] else "no")
        rows.append(
            (
                r["target"],
                possible,
                "-" if r["cost"] is None else str(r["cost"]),
                pin,
                _signed(r["difference"]),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    parts = [(r["target"], r["parts"]) for r in ex["targets"] if r.get("parts")]
    if parts:
        lines += ["", "cost on each target, part by part:"]
        lines += [
            f"  {tgt}: " + " + ".join(f"{k} {v}" for k, v in part.items()) for tgt, part in parts
        ]
    ties = [r["target"] for r in ex["targets"] if r.get("tie")]
    if ties:
        lines += [
            "",
            f"tie: {', '.join(ties)} give the same proven optimum as {ex['chosen']}; "
            "the solver kept the first in target order",
        ]
    moves = [
        (r["target"], r["pinned"]["moves"])
        for r in ex["targets"]
        if r["pinned"] and r["pinned"].get("moves") and not r["chosen"]
    ]
    if moves:
        lines += ["", "pinned elsewhere, other blocks move with it:"]
        for tgt, ms in moves:
            shown = ", ".join(f"{m['block']} {m['from']} -> {m['to']}" for m in ms[:12])
            more = f" and {len(ms) - 12} more" if len(ms) > 12 else ""
            lines.append(f"  on {tgt}: {shown}{more}")
    why = [(r["target"], x["message"]) for r in ex["targets"] for x in r["reasons"]]
    if why:
        lines += ["", "why not:"]
        lines += [f"  {t}: {m}" for t, m in why]
    if ex["edges"]:
        lines += [
            "",
            "edges under the chosen assignment:"
            if ex["status"] == "ok"
            else "edges (no assignment, so no costs):",
        ]
        for e in ex["edges"]:
            ed = e["edge"]
            move = f"{e['from_target'] or '-'} -> {e['to_target'] or '-'}"
            note = " (cut)" if e["cut"] else ""
            if not e["counted"]:
                note += " (not counted: unreachable source)"
            lines.append(
                f"  {ed['from']}[{ed['index']}] -> {ed['to']}  {move}  {'-' if e['cost'] is None else e['cost']}{note}"
            )
    return "\n".join(lines) + "\n"
