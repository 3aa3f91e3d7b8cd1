"""Stage `solve`: the cheapest feasible assignment (`placement_cli.algorithms.solve.driver`).

The assignment is a decision (it may come from a time-limited search), so a read
section is checked rather than recomputed: every live block on a target of its pruned
domain, every edge allowed, the cost recomputed from the plan and equal to what the
section says, `lower_bound` no higher than the cost (equal when `optimal`), and the
fields agreeing with `status`. The per-block cost table is not written: the plan has it.
"""

from __future__ import annotations

import math
from collections import deque
from itertools import compress, repeat
from operator import and_, not_, rshift
from typing import Any

from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.algorithms.solve.objective import UNASSIGNED, Cost, evaluate
from placement_cli.algorithms.solve.options import constraints_json
from placement_cli.pipeline.checks import Problems, dump
from placement_cli.pipeline.stage import Output, Stage, StageRun


def compute(run: StageRun, options: SolveOptions | None) -> Output:
    g = run.g
    res = solve(g, run.value("prune"), run.value("scc"), options)
    js = res.to_json(g, blocks=False)
    constraints = constraints_json(options)
    if constraints is not None:  # `optimal` is then optimal under them: say so
        js["constraints"] = constraints
    return Output(
        res.assignment if res.status == "ok" else None, js, res.diagnostics, res.status, res
    )


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    g = run.g
    domains = run.value("prune")
    pr = Problems("solve")
    fast = _placed(g, domains, sec, run.shared.get("listed"))
    if fast is not None:
        cost = evaluate(g, fast)
        if cost is not None:  # every live edge allowed: the loop naming each is not needed
            _check_cost(pr, sec, cost)
            _check_constraints(pr, g, sec, fast)
            pr.raise_if_any()
            return Output(fast, dump(sec), (), "ok")
    tindex = {t: i for i, t in enumerate(g.targets)}
    status = sec["status"]
    ok = status == "ok"
    assignment = sec["assignment"]
    a = [UNASSIGNED] * g.n_blocks
    index, live = g.index, g.live
    for bid, t in assignment.items():
        b = index.get(bid)
        ti = tindex.get(t)
        if b is None:
            pr.add(f"assignment.{bid}", f"unknown block '{bid}'")
        elif not live[b]:
            pr.add(f"assignment.{bid}", f"block '{bid}' is unreachable and takes no target")
        elif ti is None:
            pr.add(f"assignment.{bid}", f"unknown target '{t}'")
        elif not domains[b] >> ti & 1:
            pr.add(
                f"assignment.{bid}",
                f"target '{t}' is not in the domain of block '{bid}' (after pruning)",
            )
        else:
            a[b] = ti
    if not ok and assignment:
        pr.add("assignment", f"status is '{status}', so there is no assignment")
    dead = [g.block_ids[b] for b in range(g.n_blocks) if not live[b]]
    if sec["unreachable"] != dead:
        pr.add(
            "unreachable", "does not list exactly the blocks the entry cannot reach, in input order"
        )
    pr.raise_if_any()
    if ok:
        for b in range(g.n_blocks):
            if live[b] and a[b] == UNASSIGNED:
                pr.add(
                    f"assignment.{g.block_ids[b]}", "missing: every reachable block needs a target"
                )
        pr.raise_if_any()
        for e, (u, v, mat) in enumerate(zip(g.edge_src, g.edge_dst, g.edge_mat, strict=True)):
            if live[u] and mat.get(a[u], a[v]) is None:
                pr.add(
                    f"assignment.{g.block_ids[u]}",
                    f"edge {g.block_ids[u]}[{g.edge_pos[e]}] -> {g.block_ids[v]} "
                    f"does not allow {g.targets[a[u]]} -> {g.targets[a[v]]}",
                )
        pr.raise_if_any()
        cost = evaluate(g, a)
        assert cost is not None  # feasible: checked just above
        _check_cost(pr, sec, cost)
        _check_constraints(pr, g, sec, tuple(a))
    else:
        if sec["cost"] is not None:
            pr.add("cost", f"status is '{status}', so cost is null")
        if sec["optimal"] and status == "unsolved":
            pr.add("optimal", "status is 'unsolved', so nothing is proven optimal")
    pr.raise_if_any()
    return Output(tuple(a) if ok else None, dump(sec), (), status)


def _check_constraints(
    pr: Problems, g: Any, sec: dict[str, Any], a: tuple[int, ...] | None
) -> None:
    """The recorded pins and forbids name the plan's blocks and targets, and an `ok`
    assignment `a` keeps them (then `optimal` means optimal under them)."""
    con = sec.get("constraints")
    if not isinstance(con, dict):
        return
    tindex = {t: i for i, t in enumerate(g.targets)}
    pairs = [("pins", b, t, True) for b, t in (con.get("pins") or {}).items()]
    pairs += [("forbids", f["block"], f["target"], False) for f in con.get("forbids") or ()]
    for field, bid, t, pinned in pairs:
        b, ti = g.index.get(bid), tindex.get(t)
        if b is None or ti is None:
            what = f"unknown block '{bid}'" if b is None else f"unknown target '{t}'"
            pr.add(f"constraints.{field}", what)
        elif a is not None and g.live[b] and (a[b] == ti) != pinned:
            verb = "pins" if pinned else "forbids"
            pr.add(
                f"constraints.{field}",
                f"the section {verb} {bid}={t}, but its assignment puts {bid} on {g.targets[a[b]]}",
            )


def _check_cost(pr: Problems, sec: dict[str, Any], cost: Cost) -> None:
    """The cost an `ok` section states against the assignment's real `cost`."""
    said_cost, lower_bound, optimal = sec["cost"], sec["lower_bound"], sec["optimal"]
    if said_cost is None:
        pr.add("cost", "status is 'ok' but there is no cost")
        return
    for part in ("total", "blocks", "edges"):
        said, real = said_cost[part], getattr(cost, part)
        if not _close(said, real):
            pr.add(f"cost.{part}", f"is {said:g}, but the assignment costs {real:g}")
    if lower_bound is not None and lower_bound > cost.total + 1e-9 * max(1.0, abs(cost.total)):
        pr.add(
            "lower_bound",
            f"{lower_bound:g} is above the assignment's cost {cost.total:g}: not a lower bound",
        )
    if optimal and (lower_bound is None or not _close(lower_bound, cost.total)):
        pr.add("optimal", "true, but lower_bound does not equal cost.total")


def _placed(
    g: Any,
    domains: tuple[int, ...],
    sec: dict[str, Any],
    listed: tuple[list[str], list[int]] | None = None,
) -> tuple[int, ...] | None:
    """The assignment of an `ok` section whose first checks all hold (every live block,
    and only those, on a target of its pruned domain; `unreachable` exact), read column
    by column; None otherwise (then `check`'s loop names each problem). Whether the
    edges allow it is left to `evaluate`, which returns None when one does not.
    `listed`: ids and their block indices the prune check read (`prune.proved`); the
    writer sorts keys, so the assignment's ids are usually its live ones, in order, and
    need no looking up.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["a", "b"], "blocks": [{"id": "x", "terminator": {"kind": "return"}}]})
    >>> sec = {"status": "ok", "assignment": {"x": "b"}, "unreachable": []}
    >>> _placed(g, (3,), sec), _placed(g, (1,), sec), _placed(g, (3,), {**sec, "status": "unsolved"})
    ((1,), None, None)
    """
    assignment = sec["assignment"]
    if sec["status"] != "ok" or len(assignment) != sum(g.live):
        return None
    blocks: list[Any] | None = None  # block indices, None for unknown ids
    if listed is not None:
        ids, indices = listed
        alive = list(map(g.live.__getitem__, indices))
        if list(assignment) == list(compress(ids, alive)):
            blocks = list(compress(indices, alive))
    if blocks is None:
        blocks = list(map(g.index.get, assignment))
    tindex = {t: i for i, t in enumerate(g.targets)}
    ts = list(map(tindex.get, assignment.values()))
    if None in blocks or None in ts or not all(map(g.live.__getitem__, blocks)):
        return None
    # len(assignment) distinct live blocks, as many as there are: each live block once.
    if 0 in map(and_, map(rshift, map(domains.__getitem__, blocks), ts), repeat(1)):
        return None
    if sec["unreachable"] != list(compress(g.block_ids, map(not_, g.live))):
        return None
    a = [UNASSIGNED] * g.n_blocks
    deque(map(a.__setitem__, blocks, ts), maxlen=0)  # type: ignore[arg-type]  # no None: checked above
    return tuple(a)


def summary(sec: dict[str, Any]) -> str:
    c = sec.get("cost")
    if not c:
        return "no feasible placement"
    return f"cost {c.get('total')} (optimal: {str(sec.get('optimal')).lower()}, lower bound {sec.get('lower_bound')})"


STAGE = Stage(
    name="solve",
    requires=("prune", "scc"),
    options=SolveOptions,
    compute=compute,
    check=check,
    doc=__doc__ or "",
    summary=summary,
)
