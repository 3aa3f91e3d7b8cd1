"""Independent references for property tests: brute force over every assignment,
written as plainly as possible and sharing no code with the solvers."""

from __future__ import annotations

import itertools
import math
from typing import Any


def live_blocks(plan: dict[str, Any]) -> set[str]:
    succ = {
        b["id"]: [s["block"] for s in b["terminator"].get("successors", [])] for b in plan["blocks"]
    }
    entry = plan.get("entry", plan["blocks"][0]["id"])
    seen = {entry}
    todo = [entry]
    while todo:
        for v in succ[todo.pop()]:
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def _matrix(plan: dict[str, Any], edge: dict[str, Any]) -> dict[str, dict[str, float]]:
    if edge.get("transitions") is not None:
        return edge["transitions"]
    if plan.get("transitions") is not None:
        return plan["transitions"]
    return {t: {t: 0} for t in plan["targets"]}


def block_domain_and_cost(plan: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    """target -> cost for every target the block may run on (its domain)."""
    out = {}
    for t in plan["targets"]:
        ok = all(st["cost"].get(t) is not None for st in b.get("statements", []))
        tc = b["terminator"].get("cost")
        if tc is not None and tc.get(t) is None:
            ok = False
        if b.get("domain") is not None and t not in b["domain"]:
            ok = False
        if not ok:
            continue
        if b.get("cost") is not None:
            c = b["cost"].get(t, 0)
        else:
            c = sum(st["cost"][t] for st in b.get("statements", []))
            if tc is not None:
                c += tc[t]
        c += (b.get("premium") or {}).get(t, 0)
        out[t] = c
    return out


def brute_force(plan: dict[str, Any]) -> tuple[float, dict[str, str] | None]:
    """(optimum, one optimal assignment) over the live blocks; (inf, None) if infeasible."""
    live = live_blocks(plan)
    blocks = [b for b in plan["blocks"] if b["id"] in live]
    doms = {b["id"]: block_domain_and_cost(plan, b) for b in blocks}
    best = math.inf
    best_assign = None
    ids = [b["id"] for b in blocks]
    for combo in itertools.product(*(list(doms[i]) for i in ids)):
        a = dict(zip(ids, combo, strict=True))
        total = sum(doms[i][a[i]] for i in ids)
        ok = True
        for b in blocks:
            for s in b["terminator"].get("successors", []):
                c = _matrix(plan, s).get(a[b["id"]], {}).get(a[s["block"]])
                if c is None:
                    ok = False
                    break
                total += c
            if not ok:
                break
        if ok and total < best:
            best, best_assign = total, a
    return best, best_assign


def arc_consistent_domains(plan: dict[str, Any]) -> dict[str, set[str]]:
    """The largest arc-consistent domains, by repeated naive revision until nothing
    changes (no queue), with live blocks never revised against dead ones."""
    live = live_blocks(plan)
    doms = {b["id"]: set(block_domain_and_cost(plan, b)) for b in plan["blocks"]}
    edges = [
        (b["id"], s["block"], _matrix(plan, s))
        for b in plan["blocks"]
        for s in b["terminator"].get("successors", [])
    ]
    for u, v, m in edges:
        if u == v:
            doms[u] = {t for t in doms[u] if t in m.get(t, {})}
    changed = True
    while changed:
        changed = False
        for x in doms:
            for y in doms:
                if x == y or not doms[x] or not doms[y] or (x in live and y not in live):
                    continue
                between = [(u, v, m) for u, v, m in edges if {u, v} == {x, y}]
                if not between:
                    continue
                keep = set()
                for tx in doms[x]:
                    for ty in doms[y]:
                        if all(
                            (m.get(tx, {}).get(ty) is not None)
                            if u == x
                            else (m.get(ty, {}).get(tx) is not None)
                            for u, v, m in between
                        ):
                            keep.add(tx)
                            break
                if keep != doms[x]:
                    doms[x] = keep
                    changed = True
    return doms
