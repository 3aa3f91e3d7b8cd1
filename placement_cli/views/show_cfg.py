"""The `cfg` view (every block, coloured by target, islands as clusters) and its two
coarser forms, `islands` (one node per execution island) and the per-target summary
that `show` falls back to when a diagram would exceed Mermaid's limits."""

from __future__ import annotations

from pathlib import PurePath

from placement_cli.views.data import UNASSIGNED, ViewData, fmt_num
from placement_cli.views.diagram import (
    BLOCK,
    CUT,
    DEAD,
    DEAD_EDGE,
    LEGEND,
    LOOP,
    PLAIN,
    Cluster,
    Diagram,
    Edge,
    Node,
)


def plan_title(v: ViewData) -> str:
    """The plan's name, or the input's file name when the plan has none."""
    return v.g.name or PurePath(v.source).name


def cost_note(v: ViewData) -> str:
    if v.status == "infeasible":
        return "infeasible"
    solve = v.sections.get("solve", {})
    proven = (
        "optimal"
        if solve.get("optimal")
        else f"not proven optimal, lower bound {fmt_num(solve.get('lower_bound'))}"
    )
    con = solve.get("constraints") or {}
    n = len(con.get("pins") or {}) + len(con.get("forbids") or ())
    if n:  # optimal only under the pins and forbids the solve was given
        proven += f" under {n} pin{'s' if n > 1 else ''}/forbid{'s' if n > 1 else ''}"
    return f"total {fmt_num(v.total)} ({proven})"


def block_key(v: ViewData, b: int) -> str:
    return f"block:{v.g.block_ids[b]}"


def edge_key(v: ViewData, e: int) -> str:
    g = v.g
    return f"edge:{g.block_ids[g.edge_src[e]]}[{g.edge_pos[e]}]"


def switch_arms(v: ViewData) -> dict[int, str]:
    """Edge -> the name of its switch arm: a two-way switch's arm 0 is `else` and arm 1
    `then` (docs/format.md); a switch of another width names its arms `arm k`."""
    g = v.g
    blocks = g.plan.blocks
    out: dict[int, str] = {}
    for e in range(g.n_edges):
        u = g.edge_src[e]
        term = blocks[u].terminator
        if term.kind != "switch":
            continue
        k, n = g.edge_pos[e], len(term.successors)
        out[e] = ("else", "then")[k] if n == 2 else f"arm {k}"
    return out


def _legend(v: ViewData, used: list[int]) -> list[Node]:
    out = [
        Node(f"legend:{v.g.targets[t]}", (v.g.targets[t],), t, LEGEND)
        for t in sorted(set(used))
        if t >= 0
    ]
    if UNASSIGNED in used:
        out.append(Node("legend:-", ("no target",), UNASSIGNED, LEGEND))
    return out


def cfg_diagram(v: ViewData) -> Diagram:
    """Blocks coloured by target with their cost, islands as clusters, loops with a
    double border, cut edges bold and labelled with their transition cost, switch arms
    labelled (`else`, `then`)."""
    g, a = v.g, v.assignment
    d = Diagram(f"{plan_title(v)}: cfg, {cost_note(v)}")
    for b in range(g.n_blocks):
        t = a[b]
        lines = [g.block_ids[b]]
        if not g.live[b]:
            lines.append("unreachable")
            shape = DEAD
        else:
            lines.append(
                "no target" if t == UNASSIGNED else f"{g.targets[t]} · {fmt_num(g.cost[b][t])}"
            )
            shape = LOOP if v.loop_of[b] is not None else BLOCK
        if v.loop_of[b] is not None:
            lines.append(f"loop {v.loop_of[b]}")
        d.nodes.append(Node(block_key(v, b), tuple(lines), t, shape))
    for isl in v.islands:
        label = (
            f"{isl.id} · {v.g.targets[isl.target]} · cost {fmt_num(isl.cost)}"
            if isl.target >= 0
            else isl.id
        )
        d.clusters.append(
            Cluster(
                f"island:{isl.id}", label, isl.target, tuple(block_key(v, b) for b in isl.members)
            )
        )
    arms = switch_arms(v)
    for e in range(g.n_edges):
        u = g.edge_src[e]
        arm = arms.get(e, "")
        if not g.live[u]:
            style, label = DEAD_EDGE, arm
        elif v.is_cut(e):
            style, label = CUT, " · ".join(x for x in (arm, fmt_num(v.edge_cost(e))) if x)
        else:
            style, label = PLAIN, arm
        d.edges.append(
            Edge(block_key(v, u), block_key(v, g.edge_dst[e]), style, label, edge_key(v, e))
        )
    d.nodes += _legend(v, [a[b] for b in range(g.n_blocks) if g.live[b]])
    return d


def _aggregate(v: ViewData, group_of: list[int]) -> list[tuple[int, int, int, float]]:
    """(from group, to group, edge count, summed transition cost) for every ordered pair
    of different groups joined by a live CFG edge, in order of first occurrence."""
    g = v.g
    seen: dict[tuple[int, int], list[float]] = {}
    for e in range(g.n_edges):
        x, y = group_of[g.edge_src[e]], group_of[g.edge_dst[e]]
        if x < 0 or y < 0 or x == y or not g.live[g.edge_src[e]]:
            continue
        acc = seen.setdefault((x, y), [0, 0.0])
        acc[0] += 1
        acc[1] += v.edge_cost(e) or 0.0
    return [(x, y, int(c), s) for (x, y), (c, s) in seen.items()]


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def islands_diagram(v: ViewData) -> Diagram:
    """One node per execution island (target, size, cost); between islands, the CFG
    edges that cross them, counted and with their summed transition cost."""
    g = v.g
    d = Diagram(f"{plan_title(v)}: islands, {cost_note(v)}")
    for isl in v.islands:
        lines = (
            isl.id,
            g.targets[isl.target] if isl.target >= 0 else "no target",
            f"{_count(len(isl.members), 'block')} · cost {fmt_num(isl.cost)}",
        )
        d.nodes.append(Node(f"island:{isl.id}", lines, isl.target, BLOCK))
    for x, y, n, s in _aggregate(v, list(v.island_of)):
        d.edges.append(
            Edge(
                f"island:{v.islands[x].id}",
                f"island:{v.islands[y].id}",
                CUT,
                f"{_count(n, 'edge')} · {fmt_num(s)}",
            )
        )
    d.nodes += _legend(v, [isl.target for isl in v.islands])
    return d


def targets_diagram(v: ViewData) -> Diagram:
    """The coarsest view: one node per target in use, edges between targets with how
    many CFG edges cross that way and what they cost. At most targets² edges."""
    g, a = v.g, v.assignment
    d = Diagram(f"{plan_title(v)}: targets, {cost_note(v)}")
    group = [a[b] if g.live[b] else UNASSIGNED for b in range(g.n_blocks)]
    for t in range(g.n_targets):
        blocks = [b for b in range(g.n_blocks) if group[b] == t]
        if blocks:
            cost = sum(g.cost[b][t] for b in blocks)
            d.nodes.append(
                Node(
                    f"target:{g.targets[t]}",
                    (g.targets[t], f"{_count(len(blocks), 'block')} · cost {fmt_num(cost)}"),
                    t,
                )
            )
    for x, y, n, s in _aggregate(v, group):
        d.edges.append(
            Edge(
                f"target:{g.targets[x]}",
                f"target:{g.targets[y]}",
                CUT,
                f"{_count(n, 'edge')} · {fmt_num(s)}",
            )
        )
    return d
