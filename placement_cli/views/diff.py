"""`diff A B`: what changed between two artifacts of the same stage.

Compared by meaning, not by bytes: the plan (targets, blocks, edges, in brief), the
pruned domains, the loops, the assignment (blocks that moved target), the cost split
into blocks and edges (and which block and edge costs changed), the proof (optimal,
lower bound, method), the fused blocks, the islands (matched across the two runs by
their first block, since island ids are positions) and their dependency graph, and the
diagnostics, and the project configuration each was made under (`config`: its file's
name and its settings). Solver counters (`solve.stats`) are not compared. An artifact
compared with itself has no differences.
"""

from __future__ import annotations

from typing import Any

import orjson

from placement_cli.algorithms.solve.objective import UNASSIGNED
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num
from placement_cli.ir.graph import Graph
from placement_cli.ir.normalize import normalize
from placement_cli.pipeline.run import Loaded, Run
from placement_cli.views.data import latest_stage


def plain_number(x: Any) -> Any:
    """A number as the reports print it (integral floats as integers); else `x`."""
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


def changes(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Every changed leaf of two JSON values, with its path and both values: mappings
    are walked key by key (b's order, then keys only a has; a missing key is None), lists
    of mappings of one length item by item (`name[i]`), anything else is one value.

    >>> changes({"cost": {"x": 4, "y": 1}}, {"cost": {"x": 30, "z": 2}})
    [{'path': ['cost', 'x'], 'a': 4, 'b': 30}, {'path': ['cost', 'z'], 'a': None, 'b': 2}, \
{'path': ['cost', 'y'], 'a': 1, 'b': None}]
    >>> changes({"s": [{"c": 1}, {"c": 2}]}, {"s": [{"c": 1}, {"c": 3}]})
    [{'path': ['s[1]', 'c'], 'a': 2, 'b': 3}]
    """
    if a == b:
        return []
    if isinstance(a, dict | None) and isinstance(b, dict | None):
        a, b = a or {}, b or {}  # an absent mapping is an empty one: its entries changed
        out = []
        for k in [*b, *(k for k in a if k not in b)]:
            out += changes(a.get(k), b.get(k), (*path, str(k)))
        return out
    if (
        isinstance(a, list)
        and isinstance(b, list)
        and path
        and len(a) == len(b)
        and all(isinstance(x, dict) for x in (*a, *b))
    ):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += changes(x, y, (*path[:-1], f"{path[-1]}[{i}]"))
        return out
    return [{"path": list(path), "a": plain_number(a), "b": plain_number(b)}]


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
    pa, pb = normalize(ga), normalize(gb)
    out: dict[str, Any] = {}
    top = [
        k for k in ("name", "targets", "entry", "transitions", "paths") if pa.get(k) != pb.get(k)
    ]
    if top:
        out["fields_changed"] = top
        out["field_changes"] = [c for k in top for c in changes(pa.get(k), pb.get(k), (k,))]
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
        found = [c for f in fields for c in changes(old.get(f) or None, blk.get(f) or None, (f,))]
        ta, tb = old["terminator"], blk["terminator"]
        if ta.get("kind") != tb.get("kind") or ta.get("cost") != tb.get("cost"):
            fields.append("terminator")
            for f in ("kind", "cost"):
                found += changes(ta.get(f), tb.get(f), ("terminator", f))
        if fields:
            changed.append({"block": bid, "fields": fields, "changes": found})
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
            fields = [f for f in ("block", "args", "transitions") if old.get(f) != s.get(f)]
            echanged.append(
                {
                    "edge": k,
                    "fields": fields,
                    "changes": [c for f in fields for c in changes(old.get(f), s.get(f), (f,))],
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
            cost["delta"] = {k: plain_number(cb[k] - ca[k]) for k in ("total", "blocks", "edges")}
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
        {"edge": k, "a": plain_number(ea.get(k)), "b": plain_number(eb.get(k))}
        for k in [*eb, *(k for k in ea if k not in eb)]
        if ea.get(k) != eb.get(k)
    ]
    if edges:
        out["edge_costs"] = edges
    proof = {
        k: {"a": sa.get(k), "b": sb.get(k)}
        for k in (
            "status",
            "optimal",
            "lower_bound",
            "gap",
            "method",
            "method_used",
            "proved_by",
            "constraints",  # the pins, forbids and warm start `optimal` is under
        )
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


def entry_block(isl: dict[str, Any], g: Graph) -> str:
    """An island's name that survives renumbering: its entry block, the first member
    (in member order) that is the plan's entry or has a predecessor outside the island
    (the first member when none has)."""
    members = [str(m) for m in isl.get("members") or ()]
    if not members:
        return str(isl.get("id"))
    inside = {g.index[m] for m in members if m in g.index}
    entered = {
        g.edge_dst[e]
        for e in range(g.n_edges)
        if g.edge_dst[e] in inside and g.edge_src[e] not in inside
    }
    for m in members:
        b = g.index.get(m)
        if b is not None and (b == g.entry or b in entered):
            return m
    return members[0]


def _node_keys(s: dict[str, Any], g: Graph) -> dict[str, str]:
    """Island-graph node id -> a name that survives renumbering: an island's entry
    block, `data@TARGET:PATHS` for a data island."""
    keys = {isl.get("id"): entry_block(isl, g) for isl in s.get("islands", [])}
    for node in s.get("graph", {}).get("nodes", []):
        if node.get("kind") == "data":
            keys[node.get("id")] = f"data@{node.get('target')}:{','.join(node.get('provides', []))}"
    return keys


def islands_diff(sa: dict[str, Any], sb: dict[str, Any], ga: Graph, gb: Graph) -> dict[str, Any]:
    """Islands added, removed, changed (named and matched by their entry block, never by
    position), graph edges, schedule (levels of names)."""
    ka, kb = _node_keys(sa, ga), _node_keys(sb, gb)
    ia = {ka[i.get("id")]: i for i in sa.get("islands", [])}
    ib = {kb[i.get("id")]: i for i in sb.get("islands", [])}
    out: dict[str, Any] = {}

    def brief(k: str, i: dict[str, Any]) -> dict[str, Any]:
        return {
            "island": k,
            "id": i.get("id"),
            "target": i.get("target"),
            "members": i.get("members"),
        }

    added = [brief(k, i) for k, i in ib.items() if k not in ia]
    removed = [brief(k, i) for k, i in ia.items() if k not in ib]
    changed = []
    for k, i in ib.items():
        old = ia.get(k)
        if old is None:
            continue
        fields = {
            f: {"a": old.get(f), "b": i.get(f)} for f in _ISLAND_FIELDS if old.get(f) != i.get(f)
        }
        if fields:
            changed.append({"island": k, "a": old.get("id"), "b": i.get("id"), "fields": fields})
    if added:
        out["added"] = added
    if removed:
        out["removed"] = removed
    if changed:
        out["changed"] = changed

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
    # A level's islands run in parallel: its order is not a difference.
    la = [sorted(ka.get(n, n) for n in lv) for lv in sa.get("schedule", {}).get("levels", [])]
    lb = [sorted(kb.get(n, n) for n in lv) for lv in sb.get("schedule", {}).get("levels", [])]
    if la != lb:
        out["schedule"] = {"a": la, "b": lb}
    return out


def config_diff(ca: dict[str, Any] | None, cb: dict[str, Any] | None) -> dict[str, Any]:
    """The recorded configurations compared: the file each came from (None: none) and
    every setting changed, added or dropped (empty when they agree).

    >>> config_diff({"file": "placement.toml", "settings": {"method": "exact"}}, None)
    {'file': {'a': 'placement.toml', 'b': None}, 'settings': [{'path': ['method'], 'a': 'exact', 'b': None}]}
    """
    ca, cb = ca or {}, cb or {}
    out: dict[str, Any] = {}
    if ca.get("file") != cb.get("file"):
        out["file"] = {"a": ca.get("file"), "b": cb.get("file")}
    settings = changes(ca.get("settings") or {}, cb.get("settings") or {})
    if settings:
        out["settings"] = settings
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
        parts["islands"] = islands_diff(
            sa.get("islands", {}), sb.get("islands", {}), a.graph, b.graph
        )
    added, removed = _ordered_diff(
        [_diag_key(d) for d in a.diagnostics], [_diag_key(d) for d in b.diagnostics]
    )
    if added or removed:
        parts["diagnostics"] = {"added": added, "removed": removed}
    parts["config"] = config_diff(a.config, b.config)
    parts = {k: v for k, v in parts.items() if v}
    return {"kind": kind, "a": a.source, "b": b.source, "same": not parts, **parts}
