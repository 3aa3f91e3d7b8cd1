"""The `graph` view: the island dependency graph of the `islands` stage.

Edge kinds are drawn apart (control flow solid, `inherits` dashed with a hollow arrow,
data flow dotted and labelled with its paths), synthetic data islands are cylinders,
and the schedule's levels are ranks (a `level k` marker heads each)."""

from __future__ import annotations

from typing import Any

from placement_cli.views.data import ViewData, fmt_num
from placement_cli.views.diagram import (
    BLOCK,
    DATA,
    DATA_FLOW,
    INHERITS,
    INVISIBLE,
    LEGEND,
    LEVEL,
    PLAIN,
    Diagram,
    Edge,
    Node,
)
from placement_cli.views.show_cfg import cost_note, plan_title


def _target(v: ViewData, name: Any) -> int:
    return v.g.targets.index(name) if name in v.g.targets else -1


def loop_groups(v: ViewData) -> dict[str, bool]:
    """Each strongly connected group of the schedule -> whether a loop of the program
    makes it one (a loop whose blocks lie in two or more of its islands). A group
    without one is a cycle of the island graph only: an island that runs both before
    and after another in a program without a loop there (`three_targets`); drawing it
    as a cycle would say the program loops.
    """
    by_id = {isl.id: isl for isl in v.islands}
    out = {}
    for grp in v.sections.get("islands", {}).get("schedule", {}).get("groups", []):
        seen: dict[str, set[str]] = {}
        for n in grp.get("nodes", []):
            isl = by_id.get(str(n))
            for b in isl.members if isl is not None else ():
                loop = v.loop_of[b]
                if loop is not None:
                    seen.setdefault(loop, set()).add(isl.id)  # type: ignore[union-attr]
        out[str(grp.get("id"))] = any(len(x) > 1 for x in seen.values())
    return out


def group_note(gid: str, loop: bool) -> str:
    """What a node of a group says: `cycle group gN` only for a loop across islands."""
    return f"cycle group {gid}" if loop else f"group {gid} · no loop"


def graph_diagram(v: ViewData) -> Diagram:
    """The dependency graph with levels as ranks."""
    section = v.sections.get("islands", {})
    graph = section.get("graph", {})
    schedule = section.get("schedule", {})
    d = Diagram(f"{plan_title(v)}: island graph, {cost_note(v)}")
    by_id = {isl.id: isl for isl in v.islands}
    group_of = {
        n: grp.get("id") for grp in schedule.get("groups", []) for n in grp.get("nodes", [])
    }
    entry = graph.get("entry")
    loops = loop_groups(v)
    used = []
    for node in graph.get("nodes", []):
        nid = str(node.get("id"))
        t = _target(v, node.get("target"))
        used.append(t)
        if node.get("kind") == "data":
            lines = [f"{nid} · data", str(node.get("target"))]
            lines += [f"provides {p}" for p in node.get("provides", [])]
            shape = DATA
        else:
            isl = by_id.get(nid)
            lines = [nid + (" · entry" if nid == entry else ""), str(node.get("target"))]
            if isl is not None:
                lines.append(
                    f"{len(isl.members)} block{'' if len(isl.members) == 1 else 's'} · cost {fmt_num(isl.cost)}"
                )
            shape = BLOCK
        if nid in group_of:
            gid = str(group_of[nid])
            lines.append(group_note(gid, loops.get(gid, True)))
        d.nodes.append(Node(f"node:{nid}", tuple(lines), t, shape))
    for edge in graph.get("edges", []):
        kind = edge.get("kind")
        src, dst = f"node:{edge.get('from')}", f"node:{edge.get('to')}"
        if kind == "inherits":
            d.edges.append(Edge(src, dst, INHERITS, "inherits"))
        elif kind == "data_flow":
            d.edges.append(Edge(src, dst, DATA_FLOW, "\n".join(edge.get("paths", []))))
        else:
            d.edges.append(Edge(src, dst, PLAIN))
    levels = schedule.get("levels", [])
    for k, level in enumerate(levels):
        d.nodes.append(Node(f"level:{k}", (f"level {k}",), -1, LEVEL))
        d.ranks.append((f"level:{k}", *(f"node:{n}" for n in level)))
    for k in range(len(levels) - 1):
        d.edges.append(Edge(f"level:{k}", f"level:{k + 1}", INVISIBLE))
    d.nodes += [
        Node(f"legend:{v.g.targets[t]}", (v.g.targets[t],), t, LEGEND)
        for t in sorted(set(used))
        if t >= 0
    ]
    return d
