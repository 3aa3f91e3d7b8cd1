"""The first condensation of `algorithms/scc.py`, kept literally (a set per component,
sorted edge lists) as the reference the single-pass version must match exactly."""

from __future__ import annotations

import heapq

from placement_cli.algorithms.scc import Component, SccResult
from placement_cli.ir.cfg import tarjan
from placement_cli.ir.graph import Graph


def reference_scc(g: Graph) -> SccResult:
    """Condense the CFG into its strongly connected components, in topological order.

    Ties between components that could come first are broken by their first block's
    input position, so the order never depends on hashing.

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
