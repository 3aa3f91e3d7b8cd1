"""Verifying a read scc section in linear time, instead of recomputing the components.

A partition of the blocks into components, listed in an order in which every plan edge
goes forward (or stays inside its component), where each component is strongly
connected, IS the set of strongly connected components: a cycle crossing two components
would need an edge going backward. What is left to prove is that the order is the one
`algorithms.scc.scc` picks among the topological orders (Kahn's algorithm taking the
component with the smallest first block first), which replaying that algorithm on the
given order checks, and that every other field is what the plan says (entries, exits,
header, self-loops, reachability, the condensation edges): those are derived by the
same function `scc` derives them with (`algorithms.scc.condensation`, one pass over the
edges), and compared.

The stage (`placement_cli.pipeline.stages.scc`) runs its specific checks first, which give the
messages; `strongly_connected` and `condense` here then replace the recomputation. When
they cannot prove the section right, the stage falls back to recomputing and comparing,
so a rejected section's message is the same as before.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, eq, floordiv, ge, getitem, gt, itemgetter, mod, mul, ne
from typing import Any

from placement_cli.algorithms.scc import Component, SccResult, condensation


def strongly_connected(g: Any, comp_of: Sequence[int], c: int, blocks: Sequence[int]) -> bool:
    """Whether `blocks` (component `c` of `comp_of`) all reach each other through edges
    inside the component: every block is reached from the first one forward and backward.

    >>> from placement_cli.pipeline.run import parse_plan
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


def condense(
    g: Any, comp_of: list[int], members: list[list[int]], sec: dict[str, Any] | None = None
) -> SccResult | None:
    """The `SccResult` `scc(g)` returns, built from components already known to be the
    strongly connected ones with every edge going forward (`members[c]`: component c's
    blocks, `comp_of`: block -> c); None when the blocks of a component are not in input
    order or the order is not the one `scc` picks. Given the read section `sec` (whose
    component c lists `members[c]`), None too unless the section is exactly the one the
    result writes (`stages.scc.section`), checked while building.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> from placement_cli.algorithms.scc import scc
    >>> from placement_cli.pipeline.stages.scc import section
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
    if not increasing and not _kahn_order(k, firsts, res.edges):
        return None
    if sec is not None and not written_as(sec, res.components, res.edges, g.block_ids):
        return None
    return res


def written_as(
    sec: dict[str, Any], comps: Sequence[Component], edges: Sequence[tuple[int, int]], ids: Any
) -> bool:
    """Whether `sec` is what `SccResult.to_json(boundary=False)` writes for these
    components and edges, given that component c of `sec` lists `comps[c].blocks`.

    Each component's fields are read in one pass and compared as tuples (the list
    comparison runs in C): on large plans the read section's objects lie all over
    memory, and touching each once is what costs. Types are already checked, so `==` on
    booleans is `is`; each component has seven fields, the six every component has and
    `header` (cyclic) or `self_loop` (trivial). `stages.scc.matches` adds the block
    lists to it.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> from placement_cli.algorithms.scc import scc
    >>> from placement_cli.pipeline.stages.scc import section
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
        (
            len(d),
            d["id"],
            d["reachable"],
            d["kind"],
            d.get("self_loop"),
            d.get("header", 0),
            d["entries"],
            d["exits"],
        )
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


def proved(g: Any, sec: dict[str, Any]) -> tuple[list[int], Callable[[], SccResult]] | None:
    """When the read section `sec` is exactly the one `scc(g)` writes: the component
    of each block, and a function building the `SccResult` (built only when a later
    stage reads it: `fuse` and `islands` never do). None when anything is off, in which
    case the stage runs its specific checks, which name the problem.

    The same proof as `stages.scc.check` followed by `condense`, done column by column
    over index lists, mostly inside C loops (`map`, `compress`, list equality), with no
    per-component objects: a partition of the blocks (read once, ids to indices), every
    edge forward, each component of two or more blocks strongly connected and listed in
    input order, the order Kahn's, and every field equal to what `condensation` derives.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> from placement_cli.algorithms.scc import scc
    >>> from placement_cli.pipeline.stages.scc import section
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "switch", "successors": [{"block": "a"}, {"block": "c"}]}},
    ...     {"id": "c", "terminator": {"kind": "goto", "successors": [{"block": "c"}]}}]})
    >>> sec = section(scc(g), g)
    >>> comp_of, build = proved(g, sec)
    >>> comp_of, build() == scc(g)
    ([0, 0, 1], True)
    >>> sec["components"][1]["self_loop"] = False
    >>> proved(g, sec) is None
    True
    """
    n = g.n_blocks
    comps = sec["components"]
    k = len(comps)
    if not k or set(map(len, comps)) != {7}:
        return None
    blists = list(map(_BLOCKS, comps))
    flat = list(chain.from_iterable(blists))
    if len(flat) != n:
        return None
    idx = list(map(g.index.get, flat))
    if None in idx:
        return None
    sizes = list(map(len, blists))
    if 0 in sizes:
        return None
    comp_of = [-1] * n
    for b, c in zip(idx, chain.from_iterable(map(repeat, range(k), sizes)), strict=True):
        comp_of[b] = c
    if -1 in comp_of:  # n listed, all known: none missing means none repeated
        return None
    src, dst = g.edge_src, g.edge_dst
    at = comp_of.__getitem__
    cs = list(map(at, src))
    cd = list(map(at, dst))
    if any(map(gt, cs, cd)):
        return None
    # Components of two or more blocks (few): in input order, strongly connected.
    starts = list(accumulate(sizes, initial=0))
    firsts = list(map(idx.__getitem__, starts[:-1]))
    cyclic = [c for c in compress(range(k), map((1).__lt__, sizes))]
    members: dict[int, list[int]] = {}
    for c in cyclic:
        m = idx[starts[c] : starts[c + 1]]
        if any(map(ge, m, islice(m, 1, None))):
            return None
        members[c] = m
    if not _all_strongly_connected(g, comp_of, members):
        return None
    # The blocks entered from or left to another component, and the condensation edges.
    cross = list(map(ne, cs, cd))
    is_entry = bytearray(n)
    is_exit = bytearray(n)
    deque(map(is_entry.__setitem__, compress(dst, cross), repeat(1)), maxlen=0)
    deque(map(is_exit.__setitem__, compress(src, cross), repeat(1)), maxlen=0)
    is_entry[g.entry] = 1
    # The condensation edges, as from * k + to, sorted (in edge order they nearly are
    # already) and each kept once, then compared with the given ones as strings.
    keys = sorted(map(add, map(mul, compress(cs, cross), repeat(k)), compress(cd, cross)))
    if keys:
        keys = [*compress(keys, map(ne, keys, islice(keys, 1, None))), keys[-1]]
    names = [f"c{c}" for c in range(k)]
    given_edges = sec["edges"]
    if len(given_edges) != len(keys):
        return None
    froms = list(map(floordiv, keys, repeat(k)))
    tos = list(map(mod, keys, repeat(k)))
    if list(map(_FROM, given_edges)) != list(map(names.__getitem__, froms)):
        return None
    if list(map(_TO, given_edges)) != list(map(names.__getitem__, tos)):
        return None
    if firsts != sorted(firsts) and not _kahn_order(k, firsts, list(zip(froms, tos, strict=True))):
        return None
    loops = set(map(at, compress(src, map(eq, src, dst))))
    # Field by field, each a column compared with one list comparison.
    if list(map(_ID, comps)) != names or list(map(_REACHABLE, comps)) != list(
        map(g.live.__getitem__, firsts)
    ):
        return None
    kinds = ["trivial"] * k
    # `self_loop` and `header` as `written_as` reads them: a trivial component has the
    # first (whether its block has an edge to itself) and not the second, a cyclic one
    # the second (its single entry block, or null) and not the first.
    self_loops: list[bool | None] = list(map(loops.__contains__, range(k)))
    headers: list[Any] = [0] * k
    ids = g.block_ids
    for c, m in members.items():
        kinds[c] = "cyclic"
        self_loops[c] = None
        ins = [b for b in m if is_entry[b]]
        headers[c] = ids[ins[0]] if len(ins) == 1 else None
    if (
        list(map(_KIND, comps)) != kinds
        or list(map(dict.get, comps, repeat("self_loop"))) != self_loops
    ):
        return None
    if list(map(dict.get, comps, repeat("header"), repeat(0))) != headers:
        return None
    for field, flags in ((_ENTRIES, is_entry), (_EXITS, is_exit)):
        # A trivial component lists its block or nothing: the read block list itself or
        # an empty one, picked by the block's flag (inside C); a cyclic one its flagged
        # blocks in order.
        want: list[list[str]] = list(
            map(getitem, zip(repeat([]), blists), map(flags.__getitem__, firsts))
        )
        for c, m in members.items():
            want[c] = [ids[b] for b in m if flags[b]]
        if list(map(field, comps)) != want:
            return None

    def build() -> SccResult:
        listed = [members[c] if c in members else [b] for c, b in enumerate(firsts)]
        return condensation(g, comp_of, listed)

    return comp_of, build


def _all_strongly_connected(g: Any, comp_of: list[int], members: dict[int, list[int]]) -> bool:
    """Whether each component `c` of `members` (its blocks, `comp_of`: block -> component)
    is strongly connected: its first block reaches all of it forward and backward through
    edges inside it. One mark array per direction serves every component (they are
    disjoint), instead of a set per search.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "switch", "successors": [{"block": "a"}, {"block": "c"}]}},
    ...     {"id": "c", "terminator": {"kind": "return"}}]})
    >>> _all_strongly_connected(g, [0, 0, 0], {0: [0, 1, 2]}), _all_strongly_connected(g, [0, 0, 1], {0: [0, 1]})
    (False, True)
    """
    for adj, ends in ((g.succ, g.edge_dst), (g.pred, g.edge_src)):
        seen = bytearray(len(comp_of))
        for c, m in members.items():
            start = m[0]
            seen[start] = 1
            stack = [start]
            count = 1
            while stack:
                for e in adj[stack.pop()]:
                    w = ends[e]
                    if not seen[w] and comp_of[w] == c:
                        seen[w] = 1
                        count += 1
                        stack.append(w)
            if count != len(m):
                return False
    return True


def _kahn_order(k: int, firsts: list[int], edges: Sequence[tuple[int, int]]) -> bool:
    """Whether Kahn's algorithm, taking the available component with the smallest first
    block, pops the components 0, 1, 2, ... (`algorithms.scc.scc`'s order).

    >>> _kahn_order(3, [0, 2, 1], [(0, 1), (0, 2)]), _kahn_order(3, [0, 2, 1], [(0, 1), (1, 2)])
    (False, True)
    """
    indeg = [0] * k
    out_adj: list[list[int]] = [[] for _ in range(k)]
    for a, b in edges:
        indeg[b] += 1
        out_adj[a].append(b)
    heap = [(firsts[c], c) for c in range(k) if indeg[c] == 0]
    heapq.heapify(heap)
    i = 0
    while heap:
        _, c = heapq.heappop(heap)
        if c != i:
            return False
        i += 1
        for d in out_adj[c]:
            indeg[d] -= 1
            if indeg[d] == 0:
                heapq.heappush(heap, (firsts[d], d))
    return i == k


_BLOCKS = itemgetter("blocks")
_ID = itemgetter("id")
_REACHABLE = itemgetter("reachable")
_KIND = itemgetter("kind")
_ENTRIES = itemgetter("entries")
_EXITS = itemgetter("exits")
_FROM = itemgetter("from")
_TO = itemgetter("to")
