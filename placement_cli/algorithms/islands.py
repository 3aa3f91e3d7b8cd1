"""`islands`: execution islands, their dependency graph and a schedule (seed "Fusion and islands").

An island is a maximal group of same-target blocks connected through CFG edges whose
two ends share the target; the orchestrator dispatches each island to its backend as
one unit. Islands run on the fused layout (see `fuse`), and every id in the output
is ordered by input position, never by hash or string order.

Dependency graph (nodes: execution islands `i0, i1, ...` numbered by their first
block's input position, then synthetic data islands `d0, d1, ...` in creation order):

* `control_flow`: one edge per ordered pair of islands joined by a cross-target CFG edge.
* `inherits`: from an island's nearest strict dominator with the same target
  (dominators over the island control-flow graph, rooted at the entry's island).
* `data_flow`: from the provider of each required path to the island that needs it,
  one edge per (provider, consumer) pair naming all its paths.

Provider rules, for a path p that island I reads:

1. p's origins include I's target: I provides p itself (p goes in I's `provides`,
   not in its `requires`).
2. Otherwise p is required. If I inherits from D and p is available on D (D required
   it, or inherited it in turn), I reuses D's fetch: the provider is the one D's chain
   used, and p is listed in I's `inherited`.
3. Otherwise the nearest strict dominator of I whose target is an origin of p.
4. Otherwise a data island: an existing one on an origin target of p (the earliest
   target in target order), else a new one on p's first origin target.

Islands are resolved in reverse postorder of the island control-flow graph, so a
dominator is always resolved before the islands it dominates. Every required path
ends with exactly one provider, and the provider gets p in its `provides`.

Schedule: loops can make the dependency graph cyclic (interpreter and embedding
alternating inside a loop). Strongly connected groups are scheduled as one unit:
every node appears in exactly one level, a group's nodes share a level, and
`groups` lists them; `cyclic` says whether there was any.
"""

from __future__ import annotations

from typing import Any

import msgspec

from placement_cli.algorithms.fuse import FuseResult
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.io import gc_paused
from placement_cli.ir.cfg import dominators, reverse_postorder, tarjan
from placement_cli.ir.graph import Graph, bits

EDGE_KINDS = ("control_flow", "inherits", "data_flow")
CONTROL_FLOW, INHERITS, DATA_FLOW = 0, 1, 2


class IslandsOptions(msgspec.Struct, frozen=True):
    """Options of `islands` (none yet): a frozen Struct, so unknown ones are refused.
    Not a slotted dataclass: building that class cost ~0.2 ms of every process that
    imports the stage (measured), for a class with no fields."""


class Island(msgspec.Struct, frozen=True):
    target: int
    blocks: tuple[int, ...]  # fused blocks, input order
    members: tuple[int, ...]  # original blocks, input order
    requires: tuple[int, ...]  # path indices, plan order
    provides: tuple[int, ...]  # path indices, plan order
    inherited: tuple[int, ...]  # required paths reused from the `inherits` dominator


class DataIsland(msgspec.Struct, frozen=True):
    target: int
    provides: tuple[int, ...]


class DepEdge(msgspec.Struct, frozen=True):
    kind: int  # CONTROL_FLOW, INHERITS or DATA_FLOW
    src: int  # node: islands first, then data islands
    dst: int
    paths: tuple[int, ...] = ()  # data_flow only


class Schedule(msgspec.Struct, frozen=True):
    levels: tuple[tuple[int, ...], ...]  # nodes per level, node order inside a level
    groups: tuple[tuple[int, ...], ...]  # strongly connected groups (2+ nodes), by first node
    group_level: tuple[int, ...]

    @property
    def cyclic(self) -> bool:
        return bool(self.groups)


class IslandsResult(msgspec.Struct, frozen=True):
    islands: tuple[Island, ...]
    data: tuple[DataIsland, ...]
    entry: int  # the entry's island, -1 without a placement
    edges: tuple[DepEdge, ...]  # sorted: kind, then from, then to
    schedule: Schedule
    fused: Graph | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def status(self) -> str:
        return "infeasible" if any(d.severity == "error" for d in self.diagnostics) else "ok"

    def node_id(self, v: int) -> str:
        k = len(self.islands)
        return f"i{v}" if v < k else f"d{v - k}"

    def to_json(self, g: Graph) -> dict[str, Any]:
        fg = self.fused
        paths = g.path_names
        targets = g.targets
        nid = self.node_id
        isl = []
        for i, island in enumerate(self.islands):
            assert fg is not None
            isl.append(
                {
                    "id": f"i{i}",
                    "target": targets[island.target],
                    "blocks": [fg.block_ids[b] for b in island.blocks],
                    "members": [g.block_ids[b] for b in island.members],
                    "requires": [paths[p] for p in island.requires],
                    "provides": [paths[p] for p in island.provides],
                    "inherited": [paths[p] for p in island.inherited],
                }
            )
        nodes: list[dict[str, Any]] = [
            {"id": f"i{i}", "kind": "exec", "target": targets[island.target]}
            for i, island in enumerate(self.islands)
        ]
        k = len(self.islands)
        for j, d in enumerate(self.data):
            nodes.append(
                {
                    "id": f"d{j}",
                    "kind": "data",
                    "target": targets[d.target],
                    "provides": [paths[p] for p in d.provides],
                }
            )
        edges = []
        for e in self.edges:
            ej: dict[str, Any] = {"from": nid(e.src), "to": nid(e.dst), "kind": EDGE_KINDS[e.kind]}
            if e.kind == DATA_FLOW:
                ej["paths"] = [paths[p] for p in e.paths]
            edges.append(ej)
        sch = self.schedule
        return {
            "islands": isl,
            "graph": {
                "entry": nid(self.entry) if 0 <= self.entry < k else None,
                "nodes": nodes,
                "edges": edges,
            },
            "schedule": {
                "levels": [[nid(v) for v in level] for level in sch.levels],
                "groups": [
                    {"id": f"g{j}", "nodes": [nid(v) for v in grp], "level": sch.group_level[j]}
                    for j, grp in enumerate(sch.groups)
                ],
                "cyclic": sch.cyclic,
            },
        }


def _empty(code: str, message: str, blocks: tuple[str, ...] = ()) -> IslandsResult:
    return IslandsResult(
        (), (), -1, (), Schedule((), (), ()), None, (Diagnostic("error", code, message, blocks),)
    )


def islands(
    g: Graph, assignment: tuple[int, ...], fused: FuseResult, options: IslandsOptions | None = None
) -> IslandsResult:
    """Group the fused, placed blocks into islands and connect them by dependencies.

    `g` and `assignment` are the unfused plan and placement (for the members' ids);
    the islands are built on `fused.graph`.

    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.algorithms.fuse import fuse
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["pg", "interp"],
    ...     "transitions": {"pg": {"pg": 0, "interp": 1}, "interp": {"interp": 0}},
    ...     "paths": {"name": ["pg"]},
    ...     "blocks": [{"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...                {"id": "b", "paths": ["name"], "terminator": {"kind": "return"}}]}))
    >>> r = islands(g, (0, 1), fuse(g, (0, 1)))
    >>> [(i.target, i.blocks, i.requires, i.provides) for i in r.islands]
    [(0, (0,), (), (0,)), (1, (1,), (0,), ())]
    >>> [(e.kind, e.src, e.dst, e.paths) for e in r.edges]
    [(0, 0, 1, ()), (2, 0, 1, (0,))]
    """
    if fused.graph is None or fused.status == "infeasible":
        return _empty(
            "no-assignment", "no placement to build islands from: an earlier stage found none"
        )
    with gc_paused():
        return _islands(g, fused)


def _islands(g: Graph, fused: FuseResult) -> IslandsResult:
    fg = fused.graph
    assert fg is not None
    place = fused.assignment
    n = fg.n_blocks

    # Union-find over same-target CFG edges, with `find` written out in the loops (a
    # call per edge end was most of this part). The smaller root wins, so a root is
    # always its island's first block; only the partition and the roots matter, not the
    # shape of the trees, so halving paths as we go is enough.
    parent = list(range(n))
    src, dst = fg.edge_src, fg.edge_dst
    for u, v in zip(src, dst, strict=True):
        if place[u] != place[v]:
            continue
        while parent[u] != u:
            parent[u] = u = parent[parent[u]]
        while parent[v] != v:
            parent[v] = v = parent[parent[v]]
        if u < v:
            parent[v] = u
        elif v < u:
            parent[u] = v

    island_of = [-1] * n
    blocks_of: list[list[int]] = []
    for b in range(n):
        r = parent[b]
        if r == b:
            island_of[b] = len(blocks_of)
            blocks_of.append([b])
            continue
        # A parent is never larger than its child (roots win by size, halving only
        # skips up), so r < b was visited already: b's island is r's.
        i = island_of[r]
        island_of[b] = i
        blocks_of[i].append(b)
    k = len(blocks_of)
    target = [place[bl[0]] for bl in blocks_of]

    # Island control-flow graph: one edge per ordered pair, successors in island order.
    cf_pairs: set[tuple[int, int]] = set()
    for u, v in zip(src, dst, strict=True):
        a, b = island_of[u], island_of[v]
        if a != b:
            cf_pairs.add((a, b))
    cf_sorted = sorted(cf_pairs)
    succ: list[list[int]] = [[] for _ in range(k)]
    pred: list[list[int]] = [[] for _ in range(k)]
    for a, b in cf_sorted:
        succ[a].append(b)
        pred[b].append(a)

    entry = island_of[fg.entry]
    rpo = reverse_postorder(entry, succ)
    idom = dominators(entry, rpo, pred, k)

    # For every island, the nearest strict dominator on each target, found by one walk
    # over the dominator tree with a stack per target (no per-query chain walks).
    origin = g.path_origin
    reads: list[list[int]] = []
    for bl in blocks_of:
        seen: set[int] = set()
        for b in bl:
            seen.update(fg.block_paths[b])
        reads.append(sorted(seen))
    requires = [[p for p in reads[i] if not origin[p] >> target[i] & 1] for i in range(k)]
    selfprov = [[p for p in reads[i] if origin[p] >> target[i] & 1] for i in range(k)]

    depth = [0] * k
    inherit_from = [-1] * k
    nearest: dict[tuple[int, int], int] = {}  # (island, path) -> nearest origin dominator
    kids: list[list[int]] = [[] for _ in range(k)]
    for v in rpo:
        if v != entry and idom[v] >= 0:
            kids[idom[v]].append(v)
    on_path: list[list[int]] = [[] for _ in range(g.n_targets)]
    if rpo:
        stack: list[tuple[int, bool]] = [(entry, True)]
        while stack:
            v, enter = stack.pop()
            t = target[v]
            if not enter:
                on_path[t].pop()
                continue
            same = on_path[t]
            if same:
                inherit_from[v] = same[-1]
            for p in requires[v]:
                best = -1
                for ot in bits(origin[p]):
                    st = on_path[ot]
                    if st and (best == -1 or depth[st[-1]] > depth[best]):
                        best = st[-1]
                if best != -1:
                    nearest[(v, p)] = best
            same.append(v)
            stack.append((v, False))
            for c in reversed(kids[v]):
                depth[c] = depth[v] + 1
                stack.append((c, True))

    # Resolution in reverse postorder: a dominator (and so an `inherits` source) is
    # always resolved before the islands it dominates.
    avail: list[dict[int, int] | None] = [None] * k  # path -> provider node, per island
    provides: list[set[int]] = [set(selfprov[i]) for i in range(k)]
    inherited: list[list[int]] = [[] for _ in range(k)]
    data_target: list[int] = []
    data_provides: list[set[int]] = []
    data_on: dict[int, int] = {}  # target -> data island
    flow: dict[tuple[int, int], list[int]] = {}
    for v in rpo:
        d = inherit_from[v]
        base = avail[d] if d != -1 else None
        mine: dict[int, int] | None = None
        for p in requires[v]:
            if base is not None and p in base:
                prov = base[p]
                inherited[v].append(p)
            elif (v, p) in nearest:
                prov = nearest[(v, p)]
            else:
                prov = -1
                for ot in bits(origin[p]):
                    if ot in data_on:
                        prov = k + data_on[ot]
                        break
                if prov == -1:
                    ot = bits(origin[p])[0]
                    data_on[ot] = len(data_target)
                    prov = k + len(data_target)
                    data_target.append(ot)
                    data_provides.append(set())
            if prov < k:
                provides[prov].add(p)
            else:
                data_provides[prov - k].add(p)
            flow.setdefault((prov, v), []).append(p)
            if mine is None:
                mine = dict(base) if base is not None else {}
            mine[p] = prov
        avail[v] = mine if mine is not None else base

    m = len(data_target)
    edges = [DepEdge(CONTROL_FLOW, a, b) for a, b in cf_sorted]
    edges += sorted(
        (DepEdge(INHERITS, inherit_from[v], v) for v in range(k) if inherit_from[v] != -1),
        key=lambda e: (e.src, e.dst),
    )
    edges += [DepEdge(DATA_FLOW, a, b, tuple(sorted(ps))) for (a, b), ps in sorted(flow.items())]

    schedule = _schedule(k + m, edges)

    isl = tuple(
        Island(
            target=target[i],
            blocks=tuple(blocks_of[i]),
            members=tuple(sorted(mb for b in blocks_of[i] for mb in fused.members[b])),
            requires=tuple(requires[i]),
            provides=tuple(sorted(provides[i])),
            inherited=tuple(inherited[i]),
        )
        for i in range(k)
    )
    data = tuple(DataIsland(data_target[j], tuple(sorted(data_provides[j]))) for j in range(m))
    diags: list[Diagnostic] = []
    if schedule.cyclic:

        def name(v: int) -> str:
            return f"i{v}" if v < k else f"d{v - k}"

        listed = "; ".join(
            f"g{j} = {', '.join(name(v) for v in grp)}" for j, grp in enumerate(schedule.groups)
        )
        diags.append(
            Diagnostic(
                "info",
                "cyclic-islands",
                # Not only loops: an island split around another one (i1 -> i2 -> i1 in an
                # acyclic CFG whose branch and join share a target) forms a cycle too.
                f"the island graph is cyclic (a loop crosses targets, or an island runs both "
                f"before and after another); {len(schedule.groups)} strongly connected group(s) "
                f"are scheduled as single units: {listed}",
                tuple(
                    fg.block_ids[b]
                    for grp in schedule.groups
                    for v in grp
                    if v < k
                    for b in blocks_of[v]
                ),
            )
        )
    return IslandsResult(isl, data, entry, tuple(edges), schedule, fg, tuple(diags))


def _schedule(nodes: int, edges: list[DepEdge]) -> Schedule:
    """Levels by longest path over the condensation; a cyclic group is one unit."""
    adj: list[list[int]] = [[] for _ in range(nodes)]
    for e in edges:
        adj[e.src].append(e.dst)
    comps = tarjan(nodes, adj)
    comp_of = [0] * nodes
    for c, members in enumerate(comps):
        for v in members:
            comp_of[v] = c
    # Tarjan emits components in reverse topological order: walk them backwards.
    level_of_comp = [0] * len(comps)
    for c in range(len(comps) - 1, -1, -1):
        lv = level_of_comp[c]
        for v in comps[c]:
            for w in adj[v]:
                d = comp_of[w]
                if d != c and level_of_comp[d] < lv + 1:
                    level_of_comp[d] = lv + 1
    level = [level_of_comp[comp_of[v]] for v in range(nodes)]
    depth = max(level, default=-1) + 1
    levels: list[list[int]] = [[] for _ in range(depth)]
    for v in range(nodes):
        levels[level[v]].append(v)
    groups = sorted(tuple(sorted(c)) for c in comps if len(c) > 1)
    return Schedule(
        tuple(tuple(lv) for lv in levels), tuple(groups), tuple(level[grp[0]] for grp in groups)
    )
