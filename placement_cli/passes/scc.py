"""`scc`: strongly connected components and the condensation DAG (seed Phase 2)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from placement_cli.graph import Graph


@dataclass(frozen=True, slots=True)
class SccOptions:
    """Options of `scc` (none yet): a frozen dataclass, so unknown ones are refused."""


@dataclass(frozen=True, slots=True)
class Component:
    blocks: tuple[int, ...]  # input order
    cyclic: bool
    self_loop: bool
    live: bool
    entries: tuple[int, ...]  # blocks entered from outside (or the plan entry)
    exits: tuple[int, ...]  # blocks with an edge leaving the component
    boundary: tuple[int, ...]  # edge ids crossing the component border, in edge order
    internal: tuple[int, ...]  # edge ids inside (self-loops included)
    header: int | None  # the single entry block of a cyclic component, if there is one


@dataclass(frozen=True, slots=True)
class SccResult:
    components: tuple[Component, ...]  # topological order of the condensation
    comp_of: tuple[int, ...]  # block -> component position
    edges: tuple[tuple[int, int], ...]  # condensation edges (from, to), sorted

    def to_json(self, g: Graph) -> dict[str, Any]:
        ids = g.block_ids
        comps = []
        for c, comp in enumerate(self.components):
            inside = set(comp.blocks)
            boundary = []
            for e in comp.boundary:
                u, v = g.edge_src[e], g.edge_dst[e]
                incoming = v in inside
                boundary.append(
                    {
                        "block": ids[v if incoming else u],
                        "source": ids[u],
                        "target": ids[v],
                        "index": g.edge_pos[e],
                        "direction": "incoming" if incoming else "outgoing",
                    }
                )
            d: dict[str, Any] = {
                "id": f"c{c}",
                "blocks": [ids[b] for b in comp.blocks],
                "kind": "cyclic" if comp.cyclic else "trivial",
                "entries": [ids[b] for b in comp.entries],
                "exits": [ids[b] for b in comp.exits],
                "boundary": boundary,
                "reachable": comp.live,
            }
            if not comp.cyclic:
                d["self_loop"] = comp.self_loop
            else:
                d["header"] = ids[comp.header] if comp.header is not None else None
            comps.append(d)
        return {
            "components": comps,
            "edges": [{"from": f"c{a}", "to": f"c{b}"} for a, b in self.edges],
        }


def tarjan(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Iterative Tarjan: components in reverse topological order, no recursion limit."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, i = work[-1]
            nxt = succ[v]
            if i < len(nxt):
                work[-1] = (v, i + 1)
                w = nxt[i]
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work:
                    p = work[-1][0]
                    if low[v] < low[p]:
                        low[p] = low[v]
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp.append(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


def scc(g: Graph, options: SccOptions | None = None) -> SccResult:
    """Condense the CFG into its strongly connected components, in topological order.

    Ties between components that could come first are broken by their first block's
    input position, so the order never depends on hashing.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "switch", "successors": [{"block": "a"}, {"block": "c"}]}},
    ...     {"id": "c", "terminator": {"kind": "return"}}]}))
    >>> [(c.blocks, c.cyclic) for c in scc(g).components]
    [((0, 1), True), ((2,), False)]
    """
    n = g.n_blocks
    succ = [[g.edge_dst[e] for e in g.succ[b]] for b in range(n)]
    raw = tarjan(n, succ)
    comp_raw = [0] * n
    for c, members in enumerate(raw):
        for b in members:
            comp_raw[b] = c
    k = len(raw)
    firsts = [min(m) for m in raw]
    indeg = [0] * k
    cedges: set[tuple[int, int]] = set()
    for e in range(g.n_edges):
        a, b = comp_raw[g.edge_src[e]], comp_raw[g.edge_dst[e]]
        if a != b and (a, b) not in cedges:
            cedges.add((a, b))
            indeg[b] += 1
    out_adj: list[list[int]] = [[] for _ in range(k)]
    for a, b in cedges:
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
    comp_of = tuple(pos[comp_raw[b]] for b in range(n))

    comps = []
    for c in order:
        blocks = tuple(sorted(raw[c]))
        inside = set(blocks)
        internal: list[int] = []
        boundary: list[int] = []
        entries: set[int] = set()
        exits: set[int] = set()
        self_loop = False
        for b in blocks:
            for e in g.succ[b]:
                v = g.edge_dst[e]
                if v in inside:
                    internal.append(e)
                    if v == b:
                        self_loop = True
                else:
                    boundary.append(e)
                    exits.add(b)
            for e in g.pred[b]:
                if g.edge_src[e] not in inside:
                    boundary.append(e)
                    entries.add(b)
        if g.entry in inside:
            entries.add(g.entry)
        cyclic = len(blocks) > 1
        header = None
        if cyclic and len(entries) == 1:
            header = next(iter(entries))
        comps.append(
            Component(
                blocks=blocks,
                cyclic=cyclic,
                self_loop=self_loop,
                live=g.live[blocks[0]],
                entries=tuple(sorted(entries)),
                exits=tuple(sorted(exits)),
                boundary=tuple(sorted(boundary)),
                internal=tuple(sorted(internal)),
                header=header,
            )
        )
    edges = tuple(sorted((pos[a], pos[b]) for a, b in cedges))
    return SccResult(tuple(comps), comp_of, edges)
