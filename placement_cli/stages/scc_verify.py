"""Verifying a read scc section in linear time, instead of recomputing the components.

A partition of the blocks into components, listed in an order in which every plan edge
goes forward (or stays inside its component), where each component is strongly
connected, IS the set of strongly connected components: a cycle crossing two components
would need an edge going backward. What is left to prove is that the order is the one
`passes.scc.scc` picks among the topological orders (Kahn's algorithm taking the
component with the smallest first block first), which replaying that algorithm on the
given order checks, and that every other field is what the plan says (entries, exits,
header, self-loops, reachability, the condensation edges): those are derived by the
same function `scc` derives them with (`passes.scc.condensation`, one pass over the
edges), and compared.

The stage (`placement_cli.stages.scc`) runs its specific checks first, which give the
messages; `strongly_connected` and `condense` here then replace the recomputation. When
they cannot prove the section right, the stage falls back to recomputing and comparing,
so a rejected section's message is the same as before.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from placement_cli.passes.scc import Component, SccResult, condensation


def strongly_connected(g: Any, comp_of: Sequence[int], c: int, blocks: Sequence[int]) -> bool:
    """Whether `blocks` (component `c` of `comp_of`) all reach each other through edges
    inside the component: every block is reached from the first one forward and backward.

    >>> from placement_cli.pipeline import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "switch", "successors": [{"block": "a"}, {"block": "c"}]}},
    ...     {"id": "c", "terminator": {"kind": "return"}}]})
    >>> strongly_connected(g, [0, 0, 0], 0, [0, 1, 2]), strongly_connected(g, [0, 0, 1], 0, [0, 1])
    (False, True)
    """
    if len(blocks) == 1:
        return True
    size = len(blocks)
    for adj, ends in ((g.succ, g.edge_dst), (g.pred, g.edge_src)):
        start = blocks[0]
        seen = {start}
        stack = [start]
        while stack:
            u = stack.pop()
            for e in adj[u]:
                w = ends[e]
                if comp_of[w] == c and w not in seen:
                    seen.add(w)
                    stack.append(w)
        if len(seen) != size:
            return False
    return True


def condense(g: Any, comp_of: list[int], members: list[list[int]], sec: dict[str, Any] | None = None) -> SccResult | None:
    """The `SccResult` `scc(g)` returns, built from components already known to be the
    strongly connected ones with every edge going forward (`members[c]`: component c's
    blocks, `comp_of`: block -> c); None when the blocks of a component are not in input
    order or the order is not the one `scc` picks. Given the read section `sec` (whose
    component c lists `members[c]`), None too unless the section is exactly the one the
    result writes (`stages.scc.section`), checked while building.

    >>> from placement_cli.pipeline import parse_plan
    >>> from placement_cli.passes.scc import scc
    >>> from placement_cli.stages.scc import section
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "switch", "successors": [{"block": "c"}, {"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "return"}},
    ...     {"id": "c", "terminator": {"kind": "return"}}]})
    >>> condense(g, [0, 1, 2], [[0], [1], [2]]) == scc(g), condense(g, [0, 2, 1], [[0], [2], [1]])
    (True, None)
    >>> sec = section(scc(g), g)
    >>> condense(g, [0, 1, 2], [[0], [1], [2]], sec) == scc(g)
    True
    >>> sec["components"][2]["exits"] = ["c"]
    >>> condense(g, [0, 1, 2], [[0], [1], [2]], sec) is None
    True
    """
    k = len(members)
    firsts = []
    increasing = True
    prev = -1
    for m in members:
        last = -1
        for b in m:
            if b <= last:
                return None
            last = b
        first = m[0]
        if first < prev:
            increasing = False
        firsts.append(first)
        prev = first
    res = condensation(g, comp_of, members)
    # `scc` orders the components by Kahn's algorithm, taking the available component
    # with the smallest first block. Every edge going forward, an order whose first
    # blocks increase is that one (each component is available when its turn comes, and
    # smallest among the rest); otherwise replay the algorithm: it must pop 0, 1, 2, ...
    if not increasing:
        indeg = [0] * k
        out_adj: list[list[int]] = [[] for _ in range(k)]
        for a, b in res.edges:
            indeg[b] += 1
            out_adj[a].append(b)
        heap = [(firsts[c], c) for c in range(k) if indeg[c] == 0]
        heapq.heapify(heap)
        i = 0
        while heap:
            _, c = heapq.heappop(heap)
            if c != i:
                return None
            i += 1
            for d in out_adj[c]:
                indeg[d] -= 1
                if indeg[d] == 0:
                    heapq.heappush(heap, (firsts[d], d))
        if i != k:
            return None
    if sec is not None and not written_as(sec, res.components, res.edges, g.block_ids):
        return None
    return res


def written_as(sec: dict[str, Any], comps: Sequence[Component], edges: Sequence[tuple[int, int]], ids: Any) -> bool:
    """Whether `sec` is what `SccResult.to_json(boundary=False)` writes for these
    components and edges, given that component c of `sec` lists `comps[c].blocks`.

    Each component's fields are read in one pass and compared as tuples (the list
    comparison runs in C): on large plans the read section's objects lie all over
    memory, and touching each once is what costs. Types are already checked, so `==` on
    booleans is `is`; each component has seven fields, the six every component has and
    `header` (cyclic) or `self_loop` (trivial). `stages.scc.matches` adds the block
    lists to it.

    >>> from placement_cli.pipeline import parse_plan
    >>> from placement_cli.passes.scc import scc
    >>> from placement_cli.stages.scc import section
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [{"id": "a", "terminator": {"kind": "return"}}]})
    >>> res = scc(g); sec = section(res, g)
    >>> written_as(sec, res.components, res.edges, g.block_ids)
    True
    >>> sec["components"][0]["reachable"] = False
    >>> written_as(sec, res.components, res.edges, g.block_ids)
    False
    """
    given = sec["components"]
    k = len(comps)
    if len(given) != k or len(sec["edges"]) != len(edges):
        return False
    names = [f"c{c}" for c in range(k)]
    got = [
        (len(d), d["id"], d["reachable"], d["kind"], d.get("self_loop"), d.get("header", 0), d["entries"], d["exits"])
        for d in given
    ]
    want = [
        (
            7,
            names[c],
            comp.live,
            "cyclic" if comp.cyclic else "trivial",
            None if comp.cyclic else comp.self_loop,
            (ids[comp.header] if comp.header is not None else None) if comp.cyclic else 0,
            [ids[b] for b in comp.entries],
            [ids[b] for b in comp.exits],
        )
        for c, comp in enumerate(comps)
    ]
    if got != want:
        return False
    return [(e["from"], e["to"]) for e in sec["edges"]] == [(names[a], names[b]) for a, b in edges]
