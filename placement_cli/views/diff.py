"""`diff A B`: what changed between two artifacts of the same stage.

Compared by meaning, not by bytes: the plan (targets, blocks, edges, in brief), the
pruned domains, the loops, the assignment (blocks that moved target), the cost split
into blocks and edges (and which block and edge costs changed), the proof (optimal,
lower bound, method), the fused blocks, the islands (matched across the two runs by
their first block, since island ids are positions) and their dependency graph, and the
diagnostics. Solver counters (`solve.stats`) are not compared. An artifact compared
with itself has no differences.
"""

from __future__ import annotations

from typing import Any

import orjson

from placement_cli.algorithms.solve.objective import UNASSIGNED
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num
from placement_cli.ir.graph import Graph
from placement_cli.pipeline.run import Loaded, Run
from placement_cli.views.data import latest_stage


def _n(x: Any) -> Any:
    return num(float(x)) if isinstance(x, (int, float)) and not isinstance(x, bool) else x


def _key(x: Any) -> bytes:
    return orjson.dumps(x, option=orjson.OPT_SORT_KEYS)


def _ordered_diff(a: list[Any], b: list[Any]) -> tuple[list[Any], list[Any]]:
    """(in b only, in a only), each in its own list's order; linear, by value.

    >>> _ordered_diff([1, {"x": 2}], [{"x": 2}, 3])
    ([3], [1])
    """
    ka, kb = {_key(x) for x in a}, {_key(x) for x in b}
    return [x for x in b if _key(x) not in ka], [x for x in a if _key(x) not in kb]


def check_kinds(a: Loaded, b: Loaded) -> str:
    """The common stage of two artifacts; exit-3 problems when they have none."""
    ka, kb = latest_stage(a.sections), latest_stage(b.sections)
    for loaded, k in ((a, ka), (b, kb)):
        if k is None:
            raise InputError(
                [
                    Problem(
                        "kind",
                        "a plan file, not an artifact: diff compares two artifacts of the same stage",
                    )
                ],
                loaded.source,
            )
    if ka != kb:
        raise InputError(
            [
                Problem(
                    "kind",
                    f"the {kb} stage's artifact, and {a.source} is the {ka} stage's: "
                    "diff compares two artifacts of the same stage",
                )
            ],
            b.source,
        )
    return str(ka)


# --- plan ------------------------------------------------------------------------

_BLOCK_FIELDS = ("params", "statements", "domain", "cost", "paths", "premium")


def _edges(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every edge by `block[k]`, with its matrix spelled out: the normalised plan leaves
    empty lists out, names shared matrices (`matrices`), and omits the default one, so
    names and absences are resolved before two plans are compared."""
    named = plan.get("matrices") or {}
    default = plan.get("transitions")
    out = {}
    for blk in plan["blocks"]:
        for k, s in enumerate(blk["terminator"].get("successors") or ()):
            t = s.get("transitions", default)
            if isinstance(t, str):
                t = named.get(t, t)
            out[f"{blk['id']}[{k}]"] = {
                "block": s["block"],
                "args": list(s.get("args") or ()),
                "transitions": t,
            }
    return out


def plan_diff(ga: Graph, gb: Graph) -> dict[str, Any]:
    """The plan's changes in brief: targets, blocks, edges, and the top-level fields."""
    if ga.plan == gb.plan:
        return {}  # the common case, without building both normalised plans
    pa, pb = ga.normalized, gb.normalized
    out: dict[str, Any] = {}
    top = [
        k for k in ("name", "targets", "entry", "transitions", "paths") if pa.get(k) != pb.get(k)
    ]
    if top:
        out["fields_changed"] = top
    added, removed = _ordered_diff(list(pa["targets"]), list(pb["targets"]))
    if added:
        out["targets_added"] = added
    if removed:
        out["targets_removed"] = removed
    ba = {blk["id"]: blk for blk in pa["blocks"]}
    bb = {blk["id"]: blk for blk in pb["blocks"]}
    added, removed = _ordered_diff(list(ba), list(bb))
    if added:
        out["blocks_added"] = added
    if removed:
        out["blocks_removed"] = removed
    changed = []
    for bid, blk in bb.items():
        old = ba.get(bid)
        if old is None:
            continue
        fields = [f for f in _BLOCK_FIELDS if (old.get(f) or None) != (blk.get(f) or None)]
        ta, tb = old["terminator"], blk["terminator"]
        if ta.get("kind") != tb.get("kind") or ta.get("cost") != tb.get("cost"):
            fields.append("terminator")
        if fields:
            changed.append({"block": bid, "fields": fields})
    if changed:
        out["blocks_changed"] = changed
    ea, eb = _edges(pa), _edges(pb)
    added, removed = _ordered_diff(list(ea), list(eb))
    if added:
        out["edges_added"] = [{"edge": k, "to": eb[k]["block"]} for k in added]
    if removed:
        out["edges_removed"] = [{"edge": k, "to": ea[k]["block"]} for k in removed]
    echanged = []
    for k, s in eb.items():
        old = ea.get(k)
        if old is not None and old != s:
            echanged.append(
                {
                    "edge": k,
                    "fields": [
                        f for f in ("block", "args", "transitions") if old.get(f) != s.get(f)
                    ],
                }
            )
    if echanged:
        out["edges_changed"] = echanged
    return out


# --- stage sections -------------------------------------------------------------


def _assignment(run: Run) -> tuple[int, ...] | None:
    if run.status != "ok":
        return None
    return run.assignment()


def _edge_costs(g: Graph, a: tuple[int, ...] | None) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for e in range(g.n_edges):
        u, v = g.edge_src[e], g.edge_dst[e]
        key = f"{g.block_ids[u]}[{g.edge_pos[e]}]"
        if a is None or not g.live[u] or a[u] == UNASSIGNED or a[v] == UNASSIGNED:
            out[key] = None
        else:
            out[key] = g.edge_mat[e].get(a[u], a[v])
    return out


def solve_diff(ra: Run, rb: Run) -> dict[str, Any]:
    """Moved blocks, the cost split into blocks and edges, and the proof's changes."""
    sa, sb = ra.sections.get("solve", {}), rb.sections.get("solve", {})
    ga, gb = ra.g, rb.g
    aa, ab = _assignment(ra), _assignment(rb)
    out: dict[str, Any] = {}

    def target(g: Graph, a: tuple[int, ...] | None, bid: str) -> str | None:
        b = g.index.get(bid)
        if a is None or b is None or a[b] == UNASSIGNED:
            return None
        return g.targets[a[b]]

    ids = list(gb.block_ids) + [x for x in ga.block_ids if x not in gb.index]
    moved = [{"block": bid, "from": target(ga, aa, bid), "to": target(gb, ab, bid)} for bid in ids]
    moved = [m for m in moved if m["from"] != m["to"]]
    if moved:
        out["moved"] = moved
    ca, cb = sa.get("cost"), sb.get("cost")
    if ca != cb:
        cost: dict[str, Any] = {"a": ca, "b": cb}
        if isinstance(ca, dict) and isinstance(cb, dict):
            cost["delta"] = {k: _n(cb[k] - ca[k]) for k in ("total", "blocks", "edges")}
        out["cost"] = cost
    blocks = []
    for bid in ids:
        x = (sa.get("blocks") or {}).get(bid, {}).get("cost")
        y = (sb.get("blocks") or {}).get(bid, {}).get("cost")
        if x != y:
            blocks.append({"block": bid, "a": x, "b": y})
    if blocks:
        out["block_costs"] = blocks
    ea, eb = _edge_costs(ga, aa), _edge_costs(gb, ab)
    edges = [
        {"edge": k, "a": _n(ea.get(k)), "b": _n(eb.get(k))}
        for k in [*eb, *(k for k in ea if k not in eb)]
        if ea.get(k) != eb.get(k)
    ]
    if edges:
        out["edge_costs"] = edges
    proof = {
        k: {"a": sa.get(k), "b": sb.get(k)}
        for k in ("status", "optimal", "lower_bound", "gap", "method", "method_used", "proved_by")
        if sa.get(k) != sb.get(k)
    }
    if proof:
        out["proof"] = proof
    unreach = _ordered_diff(list(sa.get("unreachable", [])), list(sb.get("unreachable", [])))
    if unreach[0] or unreach[1]:
        out["unreachable"] = {"added": unreach[0], "removed": unreach[1]}
    return out


def prune_diff(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, Any]:
    da, db = sa.get("domains") or {}, sb.get("domains") or {}
    changed = [
        {"block": k, "a": da.get(k), "b": db.get(k)}
        for k in [*db, *(k for k in da if k not in db)]
        if da.get(k) != db.get(k)
    ]
    return {"domains_changed": changed} if changed else {}


def scc_diff(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, Any]:
    def loops(s: dict[str, Any]) -> list[list[str]]:
        return [
            c.get("blocks")
            for c in s.get("components", [])
            if c.get("kind") == "cyclic" or c.get("self_loop")
        ]

    added, removed = _ordered_diff(loops(sa), loops(sb))
    out = {}
    if added:
        out["loops_added"] = added
    if removed:
        out["loops_removed"] = removed
    return out


def fuse_diff(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, Any]:
    added, removed = _ordered_diff(sa.get("blocks", []), sb.get("blocks", []))
    out = {}
    if added:
        out["fused_added"] = added
    if removed:
        out["fused_removed"] = removed
    return out


_ISLAND_FIELDS = ("target", "members", "blocks", "requires", "provides", "inherited")


def _anchor(isl: dict[str, Any]) -> str:
    members = isl.get("members") or [""]
    return str(members[0])


def _node_keys(s: dict[str, Any]) -> dict[str, str]:
    """Island-graph node id -> an identity that survives renumbering."""
    keys = {isl.get("id"): f"island@{_anchor(isl)}" for isl in s.get("islands", [])}
    for node in s.get("graph", {}).get("nodes", []):
        if node.get("kind") == "data":
            keys[node.get("id")] = f"data@{node.get('target')}:{','.join(node.get('provides', []))}"
    return keys


def islands_diff(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, Any]:
    """Islands added, removed, changed (matched by first block), graph edges, schedule."""
    ia = {_anchor(i): i for i in sa.get("islands", [])}
    ib = {_anchor(i): i for i in sb.get("islands", [])}
    out: dict[str, Any] = {}
    added = [
        {"id": i.get("id"), "target": i.get("target"), "members": i.get("members")}
        for k, i in ib.items()
        if k not in ia
    ]
    removed = [
        {"id": i.get("id"), "target": i.get("target"), "members": i.get("members")}
        for k, i in ia.items()
        if k not in ib
    ]
    changed = []
    for k, i in ib.items():
        old = ia.get(k)
        if old is None:
            continue
        fields = {
            f: {"a": old.get(f), "b": i.get(f)} for f in _ISLAND_FIELDS if old.get(f) != i.get(f)
        }
        if fields:
            changed.append({"a": old.get("id"), "b": i.get("id"), "fields": fields})
    if added:
        out["added"] = added
    if removed:
        out["removed"] = removed
    if changed:
        out["changed"] = changed
    ka, kb = _node_keys(sa), _node_keys(sb)

    def edges(s: dict[str, Any], keys: dict[str, str]) -> list[str]:
        out = []
        for e in s.get("graph", {}).get("edges", []):
            paths = ",".join(e.get("paths", []))
            out.append(
                f"{keys.get(e.get('from'), e.get('from'))} -{e.get('kind')}-> {keys.get(e.get('to'), e.get('to'))}"
                + (f" [{paths}]" if paths else "")
            )
        return out

    gadd, grem = _ordered_diff(edges(sa, ka), edges(sb, kb))
    if gadd:
        out["graph_edges_added"] = gadd
    if grem:
        out["graph_edges_removed"] = grem
    la = [[ka.get(n, n) for n in lv] for lv in sa.get("schedule", {}).get("levels", [])]
    lb = [[kb.get(n, n) for n in lv] for lv in sb.get("schedule", {}).get("levels", [])]
    if la != lb:
        out["schedule"] = {"a": la, "b": lb}
    return out


def _diag_key(d: dict[str, Any]) -> str:
    return f"{d.get('stage')}: {d.get('severity')}: {d.get('code')}: {d.get('message')}"


def diff(a: Loaded, b: Loaded) -> dict[str, Any]:
    """The differences between two artifacts of the same stage (see the module doc).

    >>> from placement_cli.pipeline.run import parse_plan
    >>> doc = {"version": 1, "targets": ["a", "b"], "blocks": [{"id": "x", "cost": {"a": 1, "b": 2},
    ...     "terminator": {"kind": "return"}}]}
    >>> def art(d):
    ...     r = Run(Loaded("<doc>", parse_plan(d)))
    ...     r.run("solve")
    ...     return Loaded("<doc>", r.g, r.sections, r.diagnostics)
    >>> diff(art(doc), art(doc))["same"]
    True
    >>> doc2 = {**doc, "blocks": [{**doc["blocks"][0], "cost": {"a": 3, "b": 2}}]}
    >>> d = diff(art(doc), art(doc2))
    >>> d["solve"]["moved"], d["solve"]["cost"]["delta"]
    ([{'block': 'x', 'from': 'a', 'to': 'b'}], {'total': 1, 'blocks': 1, 'edges': 0})
    """
    kind = check_kinds(a, b)
    ra, rb = Run(a), Run(b)
    parts: dict[str, Any] = {"plan": plan_diff(a.graph, b.graph)}
    if a.status != b.status:
        parts["status"] = {"a": a.status, "b": b.status}
    sa, sb = a.sections, b.sections
    if "prune" in sa or "prune" in sb:
        parts["prune"] = prune_diff(sa.get("prune", {}), sb.get("prune", {}))
    if "scc" in sa or "scc" in sb:
        parts["scc"] = scc_diff(sa.get("scc", {}), sb.get("scc", {}))
    if "solve" in sa:
        # Reads (and checks) each assignment: an invalid one is exit 3 naming its file.
        ra.run("solve")
        rb.run("solve")
        parts["solve"] = solve_diff(ra, rb)
    if "fuse" in sa or "fuse" in sb:
        parts["fuse"] = fuse_diff(sa.get("fuse", {}), sb.get("fuse", {}))
    if "islands" in sa or "islands" in sb:
        parts["islands"] = islands_diff(sa.get("islands", {}), sb.get("islands", {}))
    added, removed = _ordered_diff(
        [_diag_key(d) for d in a.diagnostics], [_diag_key(d) for d in b.diagnostics]
    )
    if added or removed:
        parts["diagnostics"] = {"added": added, "removed": removed}
    parts = {k: v for k, v in parts.items() if v}
    return {"kind": kind, "a": a.source, "b": b.source, "same": not parts, **parts}


def _delta(x: Any) -> str:
    return f"+{x}" if isinstance(x, (int, float)) and x >= 0 else str(x)


def to_text(d: dict[str, Any]) -> str:
    """The differences for people, one topic per line; "no differences" when same."""
    lines = [
        f"{d['a']} -> {d['b']} ({d['kind']} artifacts): "
        + ("no differences" if d["same"] else "differ")
    ]
    if "status" in d:
        lines.append(f"status: {d['status']['a']} -> {d['status']['b']}")
    plan = d.get("plan", {})
    for key, what in (
        ("fields_changed", "plan fields changed"),
        ("targets_added", "targets added"),
        ("targets_removed", "targets removed"),
        ("blocks_added", "blocks added"),
        ("blocks_removed", "blocks removed"),
    ):
        if key in plan:
            lines.append(f"{what}: {' '.join(plan[key])}")
    if "blocks_changed" in plan:
        lines.append(
            "blocks changed: "
            + "; ".join(f"{c['block']} ({', '.join(c['fields'])})" for c in plan["blocks_changed"])
        )
    for key, what in (("edges_added", "edges added"), ("edges_removed", "edges removed")):
        if key in plan:
            lines.append(f"{what}: " + "; ".join(f"{e['edge']} -> {e['to']}" for e in plan[key]))
    if "edges_changed" in plan:
        lines.append(
            "edges changed: "
            + "; ".join(f"{c['edge']} ({', '.join(c['fields'])})" for c in plan["edges_changed"])
        )
    for c in d.get("prune", {}).get("domains_changed", []):
        lines.append(f"domain of {c['block']}: {c['a']} -> {c['b']}")
    scc = d.get("scc", {})
    for key, what in (("loops_added", "loop added"), ("loops_removed", "loop removed")):
        for loop in scc.get(key, []):
            lines.append(f"{what}: {' '.join(loop)}")
    solve = d.get("solve", {})
    if "moved" in solve:
        lines.append(
            "moved: "
            + "; ".join(
                f"{m['block']} {m['from'] or '-'} -> {m['to'] or '-'}" for m in solve["moved"]
            )
        )
    if "cost" in solve:
        ca, cb = solve["cost"]["a"], solve["cost"]["b"]
        if "delta" in solve["cost"]:
            dl = solve["cost"]["delta"]
            lines.append(
                f"cost: total {ca['total']} -> {cb['total']} ({_delta(dl['total'])}); blocks {ca['blocks']} -> "
                f"{cb['blocks']} ({_delta(dl['blocks'])}); edges {ca['edges']} -> {cb['edges']} ({_delta(dl['edges'])})"
            )
        else:
            lines.append(f"cost: {ca} -> {cb}")
    if "block_costs" in solve:
        lines.append(
            "  block costs: "
            + "; ".join(f"{c['block']} {c['a']} -> {c['b']}" for c in solve["block_costs"])
        )
    if "edge_costs" in solve:
        lines.append(
            "  edge costs: "
            + "; ".join(f"{c['edge']} {c['a']} -> {c['b']}" for c in solve["edge_costs"])
        )
    for k, v in solve.get("proof", {}).items():
        lines.append(f"{k}: {v['a']} -> {v['b']}")
    if "unreachable" in solve:
        lines.append(
            f"unreachable: +{solve['unreachable']['added']} -{solve['unreachable']['removed']}"
        )
    fuse = d.get("fuse", {})
    for key, what in (
        ("fused_added", "fused block added"),
        ("fused_removed", "fused block removed"),
    ):
        for f in fuse.get(key, []):
            lines.append(
                f"{what}: {f.get('id')} = {' '.join(f.get('members', []))} on {f.get('target')}"
            )
    isl = d.get("islands", {})
    for key, what in (("added", "island added"), ("removed", "island removed")):
        for i in isl.get(key, []):
            lines.append(f"{what}: {i['id']} on {i['target']}: {' '.join(i['members'] or [])}")
    for c in isl.get("changed", []):
        fields = "; ".join(f"{f} {v['a']} -> {v['b']}" for f, v in c["fields"].items())
        lines.append(f"island changed: {c['a']} -> {c['b']}: {fields}")
    for key, what in (
        ("graph_edges_added", "island graph edge added"),
        ("graph_edges_removed", "island graph edge removed"),
    ):
        for e in isl.get(key, []):
            lines.append(f"{what}: {e}")
    if "schedule" in isl:
        lines.append(f"schedule: {isl['schedule']['a']} -> {isl['schedule']['b']}")
    diags = d.get("diagnostics", {})
    lines += [f"diagnostic added: {x}" for x in diags.get("added", [])]
    lines += [f"diagnostic removed: {x}" for x in diags.get("removed", [])]
    return "\n".join(lines) + "\n"
