"""The section checks as they were before the linear-time verifiers (2026-11-26): prune's and
solve's linear passes, and scc's and fuse's recompute-and-compare. Kept verbatim as the
reference the stages' checks are tested against (`tests/test_sections_verify.py`): the
same sections accepted, the same message for every rejected one, the same value and
section passed on. The islands check did not change (it still recomputes and compares),
so it has no copy here.
"""
# ruff: noqa: E501

from __future__ import annotations

import math
from typing import Any

from placement_cli.algorithms.fuse import fuse
from placement_cli.algorithms.scc import SccResult, scc
from placement_cli.algorithms.solve.objective import UNASSIGNED, evaluate
from placement_cli.pipeline.checks import Problems, compare, dump
from placement_cli.pipeline.stage import Output
from placement_cli.pipeline.stages.scc import section as scc_section


def check_scc(run: Any, sec: dict[str, Any]) -> Output:
    g = run.g
    res = scc(g, run.options.get("scc"))
    pr = Problems("scc")
    comp_of = [-1] * g.n_blocks
    components = sec["components"]
    for c, comp in enumerate(components):
        for j, bid in enumerate(comp["blocks"]):
            b = g.index.get(bid)
            if b is None:
                pr.add(f"components[{c}].blocks[{j}]", f"unknown block '{bid}'")
            elif comp_of[b] != -1:
                pr.add(
                    f"components[{c}].blocks[{j}]",
                    f"block '{bid}' is already in components[{comp_of[b]}]: not a partition",
                )
            else:
                comp_of[b] = c
    missing = [g.block_ids[b] for b in range(g.n_blocks) if comp_of[b] == -1]
    if missing and not pr.items:
        pr.add(
            "components",
            f"not a partition of the blocks: '{missing[0]}' is in no component"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
        )
    pr.raise_if_any()
    for e in range(g.n_edges):
        a, b = comp_of[g.edge_src[e]], comp_of[g.edge_dst[e]]
        if a > b:
            u, v = g.block_ids[g.edge_src[e]], g.block_ids[g.edge_dst[e]]
            pr.add(
                f"components[{b}]",
                f"not in topological order: edge {u} -> {v} goes from components[{a}] back to components[{b}]",
            )
            break
    pr.raise_if_any()
    for c, comp in enumerate(components):
        blocks = comp["blocks"]
        real = res.comp_of[g.index[blocks[0]]] if blocks else -1
        if not blocks or any(res.comp_of[g.index[b]] != real for b in blocks):
            pr.add(
                f"components[{c}].blocks",
                "not strongly connected: these blocks do not all reach each other",
            )
        elif len(blocks) != len(res.components[real].blocks):
            pr.add(
                f"components[{c}].blocks",
                "not a whole component: it leaves out blocks on a cycle with these",
            )
    pr.raise_if_any()
    if scc_matches(sec, res, g):
        return Output(res, sec)
    compare(pr, sec, expected := scc_section(res, g))
    pr.raise_if_any()
    return Output(res, expected)


def scc_matches(sec: dict[str, Any], res: SccResult, g: Any) -> bool:
    ids = g.block_ids
    comps = sec["components"]
    if len(comps) != len(res.components):
        return False
    for c, (d, comp) in enumerate(zip(comps, res.components, strict=True)):
        # The six fields every component has, and `header` (cyclic) or `self_loop`.
        if len(d) != 7 or d["id"] != f"c{c}" or d["reachable"] is not comp.live:
            return False
        if comp.cyclic:
            if d["kind"] != "cyclic" or "header" not in d:
                return False
            if d["header"] != (ids[comp.header] if comp.header is not None else None):
                return False
        elif d["kind"] != "trivial" or d.get("self_loop") is not comp.self_loop:
            return False
        if (
            d["blocks"] != [ids[b] for b in comp.blocks]
            or d["entries"] != [ids[b] for b in comp.entries]
            or d["exits"] != [ids[b] for b in comp.exits]
        ):
            return False
    edges = sec["edges"]
    if len(edges) != len(res.edges):
        return False
    return all(
        e["from"] == f"c{a}" and e["to"] == f"c{b}"
        for e, (a, b) in zip(edges, res.edges, strict=True)
    )


def check_fuse(run: Any, sec: dict[str, Any]) -> Output:
    g = run.g
    a = run.value("solve")
    res = fuse(g, a, run.options.get("fuse"))  # type: ignore[arg-type]
    pr = Problems("fuse")
    seen: dict[int, int] = {}
    fused_blocks = sec["blocks"]
    for f, fb in enumerate(fused_blocks):
        members, fb_target = fb["members"], fb["target"]
        for j, bid in enumerate(members):
            b = g.index.get(bid)
            where = f"blocks[{f}].members[{j}]"
            if b is None:
                pr.add(where, f"unknown block '{bid}'")
            elif b in seen:
                pr.add(where, f"block '{bid}' is already a member of blocks[{seen[b]}]")
            elif a is None or not g.live[b]:
                pr.add(where, f"block '{bid}' has no target, so it cannot be fused")
            else:
                seen[b] = f
                if g.targets[a[b]] != fb_target:
                    pr.add(
                        where,
                        f"block '{bid}' runs on '{g.targets[a[b]]}', not on the fused block's target '{fb_target}': fusion never crosses targets",
                    )
        if members and fb["id"] != members[0]:
            pr.add(f"blocks[{f}].id", f"a fused block keeps its first member's id '{members[0]}'")
    pr.raise_if_any()
    if a is not None:
        left = [g.block_ids[b] for b in range(g.n_blocks) if g.live[b] and b not in seen]
        if left:
            pr.add(
                "blocks",
                f"live block '{left[0]}' is in no fused block"
                + (f" (and {len(left) - 1} more)" if len(left) > 1 else ""),
            )
    merged = sec["merged"]
    if merged != sum(len(fb["members"]) - 1 for fb in fused_blocks if fb["members"]):
        pr.add("merged", f"{merged} does not match the fused blocks' members")
    pr.raise_if_any()
    compare(pr, sec, expected := res.to_json(g))
    pr.raise_if_any()
    return Output(res, expected)


def check_prune(run: Any, sec: dict[str, Any]) -> Output:
    g = run.g
    pr = Problems("prune")
    tindex = {t: i for i, t in enumerate(g.targets)}
    domains = list(g.domain)
    seen = [False] * g.n_blocks
    for bid, ts in sec["domains"].items():
        b = g.index.get(bid)
        if b is None:
            pr.add(f"domains.{bid}", f"unknown block '{bid}'")
            continue
        seen[b] = True
        m = 0
        last = -1
        for j, t in enumerate(ts):
            ti = tindex.get(t)
            if ti is None:
                pr.add(f"domains.{bid}[{j}]", f"unknown target '{t}'")
            elif ti <= last:
                pr.add(f"domains.{bid}[{j}]", f"target '{t}' out of target order or repeated")
            elif not g.domain[b] >> ti & 1:
                pr.add(
                    f"domains.{bid}",
                    f"not a subset of the block's domain in the plan: '{t}' cannot run it",
                )
            else:
                m |= 1 << ti
                last = ti
        domains[b] = m
    for b, ok in enumerate(seen):
        if not ok:
            pr.add(f"domains.{g.block_ids[b]}", "missing: every block is listed")
    pr.raise_if_any()
    gone: set[tuple[int, int]] = set()
    for j, r in enumerate(sec["removed"]):
        r_block, r_target, edge = r["block"], r["target"], r["edge"]
        rb = g.index.get(r_block)
        rt = tindex.get(r_target)
        if rb is None:
            pr.add(f"removed[{j}].block", f"unknown block '{r_block}'")
            continue
        if rt is None:
            pr.add(f"removed[{j}].target", f"unknown target '{r_target}'")
            continue
        if not g.domain[rb] >> rt & 1 or domains[rb] >> rt & 1:
            pr.add(
                f"removed[{j}]",
                f"'{r_target}' on '{r_block}' was not removed: not in the plan domain, or still in prune.domains",
            )
        elif (rb, rt) in gone:
            pr.add(f"removed[{j}]", f"'{r_target}' on '{r_block}' listed twice")
        gone.add((rb, rt))
        e_from, e_index, e_to = edge["from"], edge["index"], edge["to"]
        u, v = g.index.get(e_from), g.index.get(e_to)
        if (
            u is None
            or v is None
            or e_index >= len(g.succ[u])
            or g.edge_dst[g.succ[u][e_index]] != v
        ):
            pr.add(f"removed[{j}].edge", f"no edge {e_from}[{e_index}] -> {e_to} in the plan")
        elif rb not in (u, v):
            pr.add(
                f"removed[{j}].edge",
                f"edge {e_from}[{e_index}] -> {e_to} does not touch '{r_block}'",
            )
    for b in range(g.n_blocks):
        lost = g.domain[b] & ~domains[b]
        for lt in range(g.n_targets):
            if lost >> lt & 1 and (b, lt) not in gone:
                pr.add(
                    "removed",
                    f"'{g.targets[lt]}' on '{g.block_ids[b]}' is missing from prune.domains but not listed as removed",
                )
    pr.raise_if_any()
    # The status a read section implies: a live block with nothing left cannot be placed.
    status = "infeasible" if any(g.live[b] and not domains[b] for b in range(g.n_blocks)) else "ok"
    return Output(tuple(domains), dump(sec), (), status)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check_solve(run: Any, sec: dict[str, Any]) -> Output:
    g = run.g
    domains = run.value("prune")
    pr = Problems("solve")
    tindex = {t: i for i, t in enumerate(g.targets)}
    status = sec["status"]
    ok = status == "ok"
    assignment = sec["assignment"]
    a = [UNASSIGNED] * g.n_blocks
    for bid, t in assignment.items():
        b = g.index.get(bid)
        ti = tindex.get(t)
        if b is None:
            pr.add(f"assignment.{bid}", f"unknown block '{bid}'")
        elif not g.live[b]:
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
    dead = [g.block_ids[b] for b in range(g.n_blocks) if not g.live[b]]
    if sec["unreachable"] != dead:
        pr.add(
            "unreachable", "does not list exactly the blocks the entry cannot reach, in input order"
        )
    pr.raise_if_any()
    if ok:
        for b in range(g.n_blocks):
            if g.live[b] and a[b] == UNASSIGNED:
                pr.add(
                    f"assignment.{g.block_ids[b]}", "missing: every reachable block needs a target"
                )
        pr.raise_if_any()
        for e in range(g.n_edges):
            u, v = g.edge_src[e], g.edge_dst[e]
            if g.live[u] and g.edge_mat[e].get(a[u], a[v]) is None:
                pr.add(
                    f"assignment.{g.block_ids[u]}",
                    f"edge {g.block_ids[u]}[{g.edge_pos[e]}] -> {g.block_ids[v]} "
                    f"does not allow {g.targets[a[u]]} -> {g.targets[a[v]]}",
                )
        pr.raise_if_any()
        cost = evaluate(g, a)
        assert cost is not None  # feasible: checked just above
        said_cost, lower_bound, optimal = sec["cost"], sec["lower_bound"], sec["optimal"]
        if said_cost is None:
            pr.add("cost", "status is 'ok' but there is no cost")
        else:
            for part in ("total", "blocks", "edges"):
                said, real = said_cost[part], getattr(cost, part)
                if not _close(said, real):
                    pr.add(f"cost.{part}", f"is {said:g}, but the assignment costs {real:g}")
            if lower_bound is not None and lower_bound > cost.total + 1e-9 * max(
                1.0, abs(cost.total)
            ):
                pr.add(
                    "lower_bound",
                    f"{lower_bound:g} is above the assignment's cost {cost.total:g}: not a lower bound",
                )
            if optimal and (lower_bound is None or not _close(lower_bound, cost.total)):
                pr.add("optimal", "true, but lower_bound does not equal cost.total")
    else:
        if sec["cost"] is not None:
            pr.add("cost", f"status is '{status}', so cost is null")
        if sec["optimal"] and status == "unsolved":
            pr.add("optimal", "status is 'unsolved', so nothing is proven optimal")
    pr.raise_if_any()
    return Output(tuple(a) if ok else None, dump(sec), (), status)
