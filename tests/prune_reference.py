"""The first AC-3 of `algorithms/prune.py`, kept literally (per-arc loops over targets and
edges, a set of queued arcs) as the reference the table-driven pass must match exactly:
the same domains, the same removals with the same blamed edges, the same diagnostics."""

from __future__ import annotations

from collections import deque

from placement_cli.algorithms.prune import PruneResult, _blame, _emptied, _empty_initial
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.ir.graph import Graph


def _neighbours(g: Graph) -> list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]]:
    """Per block x: (y, edges x->y, edges y->x) for each distinct neighbour y != x,
    ordered by first edge id so that arc processing follows input order."""
    pair_edges: dict[tuple[int, int], list[int]] = {}
    order: list[tuple[int, int]] = []
    for e in range(g.n_edges):
        u, v = g.edge_src[e], g.edge_dst[e]
        if u == v:
            continue
        key = (u, v) if u < v else (v, u)
        lst = pair_edges.get(key)
        if lst is None:
            lst = pair_edges[key] = []
            order.append(key)
        lst.append(e)
    nb: list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = [[] for _ in range(g.n_blocks)]
    for a, b in order:
        es = pair_edges[(a, b)]
        ab = tuple(e for e in es if g.edge_src[e] == a)
        ba = tuple(e for e in es if g.edge_src[e] == b)
        nb[a].append((b, ab, ba))
        nb[b].append((a, ba, ab))
    return nb


def reference_prune(g: Graph) -> PruneResult:
    """Remove every target that has no supporting partner across some CFG edge.

    Each edge is a binary constraint checked in both directions; parallel edges between
    two blocks must all allow a pair; a self-loop keeps only targets whose diagonal is
    allowed. A live block is never narrowed because of a dead (unreachable) neighbour:
    dead code never runs, so it cannot make live code infeasible.

    """
    n = g.n_blocks
    dom = list(g.domain)
    live = g.live
    removed: list[tuple[int, int, int]] = []
    diags: list[Diagnostic] = []
    emptied: list[int] = []

    for b in range(n):
        if dom[b] == 0:
            diags.append(_empty_initial(g, b))

    for e in range(g.n_edges):
        u = g.edge_src[e]
        if u != g.edge_dst[e] or dom[u] == 0:
            continue
        m = g.edge_mat[e]
        keep = 0
        for t in range(g.n_targets):
            if m.out[t] >> t & 1:
                keep |= 1 << t
        lost = dom[u] & ~keep
        if lost:
            for t in range(g.n_targets):
                if lost >> t & 1:
                    removed.append((u, t, e))
            dom[u] &= keep
            if dom[u] == 0:
                emptied.append(u)

    nbrs = _neighbours(g)
    queue: deque[tuple[int, int, int]] = deque()  # (x, neighbour slot in nbrs[x])
    queued: set[tuple[int, int]] = set()
    slot_of: list[dict[int, int]] = [{y: i for i, (y, _, _) in enumerate(nb)} for nb in nbrs]
    for x in range(n):
        for i in range(len(nbrs[x])):
            queue.append((x, i, 0))
            queued.add((x, i))

    while queue:
        x, i, _ = queue.popleft()
        queued.discard((x, i))
        y, fwd, bwd = nbrs[x][i]
        dx, dy = dom[x], dom[y]
        if dx == 0 or dy == 0 or (live[x] and not live[y]):
            continue
        lost = 0
        t = 0
        mask = dx
        while mask:
            if mask & 1:
                ok = dy
                for e in fwd:
                    ok &= g.edge_mat[e].out[t]
                for e in bwd:
                    ok &= g.edge_mat[e].inc[t]
                if not ok:
                    lost |= 1 << t
                    removed.append((x, t, _blame(g, t, dy, fwd, bwd)))
            mask >>= 1
            t += 1
        if lost:
            dom[x] = dx & ~lost
            if dom[x] == 0:
                emptied.append(x)
            for z, _, _ in nbrs[x]:
                if z != y:
                    back = slot_of[z][x]
                    if (z, back) not in queued:
                        queued.add((z, back))
                        queue.append((z, back, 0))

    for b in emptied:
        diags.append(_emptied(g, b, [r for r in removed if r[0] == b]))
    removed.sort()
    return PruneResult(tuple(dom), tuple(removed), tuple(diags))
