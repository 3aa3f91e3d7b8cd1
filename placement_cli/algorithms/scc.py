"""`scc`: strongly connected components and the condensation DAG (seed Phase 2)."""

from __future__ import annotations

import heapq
from typing import Any

import msgspec

from placement_cli.ir.cfg import tarjan
from placement_cli.ir.graph import Graph


class SccOptions(msgspec.Struct, frozen=True):
    """Options of `scc` (none yet): a frozen Struct, so unknown ones are refused.
    Not a slotted dataclass: building that class cost ~0.2 ms of every process that
    imports the stage (measured), for a class with no fields."""


# A Struct, not a frozen dataclass: that sets each field through `object.__setattr__`,
# which made building 100k components a quarter of the pass. Hashable by value.
class Component(msgspec.Struct, frozen=True):
    blocks: tuple[int, ...]  # input order
    cyclic: bool
    self_loop: bool
    live: bool
    entries: tuple[int, ...]  # blocks entered from outside (or the plan entry)
    exits: tuple[int, ...]  # blocks with an edge leaving the component
    boundary: tuple[int, ...]  # edge ids crossing the component border, in edge order
    internal: tuple[int, ...]  # edge ids inside (self-loops included)
    header: int | None  # the single entry block of a cyclic component, if there is one


class SccResult(msgspec.Struct, frozen=True):
    components: tuple[Component, ...]  # topological order of the condensation
    comp_of: tuple[int, ...]  # block -> component position
    edges: tuple[tuple[int, int], ...]  # condensation edges (from, to), sorted

    def to_json(self, g: Graph, boundary: bool = True) -> dict[str, Any]:
        """The section's data; `boundary=False` leaves each component's `boundary` out
        (the stage does not write it: the plan and the component lists give it)."""
        ids = g.block_ids
        names = [f"c{c}" for c in range(len(self.components))]
        comps = self._components_json(ids, names)
        if boundary:
            src, dst, pos, comp_of = g.edge_src, g.edge_dst, g.edge_pos, self.comp_of
            for c, (comp, d) in enumerate(zip(self.components, comps, strict=True)):
                rows = []
                for e in comp.boundary:
                    u, v = src[e], dst[e]
                    incoming = comp_of[v] == c
                    rows.append(
                        {
                            "block": ids[v if incoming else u],
                            "source": ids[u],
                            "target": ids[v],
                            "index": pos[e],
                            "direction": "incoming" if incoming else "outgoing",
                        }
                    )
                d["boundary"] = rows
        return {
            "components": comps,
            "edges": [{"from": names[a], "to": names[b]} for a, b in self.edges],
        }

    def _components_json(self, ids: tuple[str, ...], names: list[str]) -> list[dict[str, Any]]:
        """The components of `to_json`, without `boundary`: each record built in one
        literal (a one-block component, most of them, is never cyclic: `self_loop`)."""
        comps: list[dict[str, Any]] = []
        push = comps.append
        for c, comp in enumerate(self.components):
            blocks = comp.blocks
            if len(blocks) == 1:
                one = ids[blocks[0]]
                push(
                    {
                        "id": names[c],
                        "blocks": [one],
                        "kind": "trivial",
                        "entries": [one] if comp.entries else [],
                        "exits": [one] if comp.exits else [],
                        "reachable": comp.live,
                        "self_loop": comp.self_loop,
                    }
                )
                continue
            d: dict[str, Any] = {
                "id": names[c],
                "blocks": [ids[b] for b in blocks],
                "kind": "cyclic" if comp.cyclic else "trivial",
                "entries": [ids[b] for b in comp.entries],
                "exits": [ids[b] for b in comp.exits],
                "reachable": comp.live,
            }
            if not comp.cyclic:
                d["self_loop"] = comp.self_loop
            else:
                d["header"] = ids[comp.header] if comp.header is not None else None
            push(d)
        return comps


def scc(g: Graph, options: SccOptions | None = None) -> SccResult:
    """Condense the CFG into its strongly connected components, in topological order.

    Ties between components that could come first are broken by their first block's
    input position, so the order never depends on hashing.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "switch", "successors": [{"block": "a"}, {"block": "c"}]}},
    ...     {"id": "c", "terminator": {"kind": "return"}}]}))
    >>> [(c.blocks, c.cyclic) for c in scc(g).components]
    [((0, 1), True), ((2,), False)]
    """
    n = g.n_blocks
    src, dst = g.edge_src, g.edge_dst
    succ = [[dst[e] for e in out] for out in g.succ]
    raw = tarjan(n, succ)
    comp_raw = [0] * n
    for c, members in enumerate(raw):
        for b in members:
            comp_raw[b] = c
    k = len(raw)
    firsts = [min(m) for m in raw]
    # Kahn's algorithm on the condensation, taking the available component with the
    # smallest first block. Repeated condensation edges need no removing: a component
    # becomes available when its last in-edge is taken, whatever their number, and the
    # heap's order depends on its keys only.
    indeg = [0] * k
    out_adj: list[list[int]] = [[] for _ in range(k)]
    for u, v in zip(src, dst, strict=True):
        a, b = comp_raw[u], comp_raw[v]
        if a != b:
            indeg[b] += 1
            out_adj[a].append(b)
    heap = [(firsts[c], c) for c in range(k) if indeg[c] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, c = heapq.heappop(heap)
        order.append(c)
        for d in out_adj[c]:
            indeg[d] -= 1
            if indeg[d] == 0:
                heapq.heappush(heap, (firsts[d], d))
    pos = [0] * k
    for i, c in enumerate(order):
        pos[c] = i
    comp_of = [pos[c] for c in comp_raw]
    return condensation(
        g, comp_of, [m if len(m) == 1 else sorted(m) for m in (raw[c] for c in order)]
    )


def condensation(g: Graph, comp_of: list[int], members: list[list[int]]) -> SccResult:
    """The `SccResult` of components already known, in their final order: `members[c]`
    lists component c's blocks in input order, `comp_of` maps a block to its component,
    and every edge goes forward or stays inside. The one pass over the edges that derives
    the rest (entries, exits, header, self-loops, each component's edge lists, the
    condensation edges), shared by `scc` and the check of a read section
    (`stages.scc_verify.condense`).

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "return"}}]})
    >>> condensation(g, [0, 1], [[0], [1]]) == scc(g)
    True
    """
    k = len(members)
    n = g.n_blocks
    src, dst = g.edge_src, g.edge_dst
    # One pass over the edges in id order fills every component's edge lists already
    # sorted, and marks the blocks entered from or left to another component.
    # Most components are one block without a self-loop: their internal edge list and
    # condensation successors are made only when there is one (None until then), rather
    # than two empty lists per component.
    internal: list[list[int] | None] = [None] * k
    boundary: list[list[int]] = [[] for _ in range(k)]
    self_loop = [False] * k
    is_entry = [False] * n
    is_exit = [False] * n
    is_entry[g.entry] = True
    cedges: set[int] = set()  # a * k + b
    out_adj: list[list[int] | None] = [None] * k
    for e, (u, v) in enumerate(zip(src, dst, strict=True)):
        cu, cv = comp_of[u], comp_of[v]
        if cu == cv:
            lst = internal[cu]
            if lst is None:
                internal[cu] = [e]
            else:
                lst.append(e)
            if u == v:
                self_loop[cu] = True
        else:
            boundary[cu].append(e)
            boundary[cv].append(e)
            is_exit[u] = True
            is_entry[v] = True
            key = cu * k + cv
            if key not in cedges:
                cedges.add(key)
                outs = out_adj[cu]
                if outs is None:
                    out_adj[cu] = [cv]
                else:
                    outs.append(cv)

    live = g.live
    comps: list[Component] = []
    push = comps.append
    none: tuple[int, ...] = ()
    for c, listed in enumerate(members):
        inside = internal[c]
        if len(listed) == 1:
            b = listed[0]
            blocks: tuple[int, ...] = (b,)
            # Positional: blocks, cyclic, self_loop, live, entries, exits, boundary, internal, header.
            push(
                Component(
                    blocks,
                    False,
                    self_loop[c],
                    live[b],
                    blocks if is_entry[b] else none,
                    blocks if is_exit[b] else none,
                    tuple(boundary[c]),
                    none if inside is None else tuple(inside),
                    None,
                )
            )
        else:
            blocks = tuple(listed)
            entries = tuple([b for b in blocks if is_entry[b]])
            push(
                Component(
                    blocks,
                    True,
                    self_loop[c],
                    live[blocks[0]],
                    entries,
                    tuple([b for b in blocks if is_exit[b]]),
                    tuple(boundary[c]),
                    none if inside is None else tuple(inside),
                    entries[0] if len(entries) == 1 else None,
                )
            )
    # Condensation edges sorted: by source (the topological order), then by target.
    edges: list[tuple[int, int]] = []
    for c, outs in enumerate(out_adj):
        if outs is None:
            continue
        if len(outs) == 1:
            edges.append((c, outs[0]))
        else:
            edges += [(c, d) for d in sorted(outs)]
    return SccResult(tuple(comps), tuple(comp_of), tuple(edges))
