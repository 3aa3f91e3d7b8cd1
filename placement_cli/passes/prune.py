"""`prune`: AC-3 arc consistency over the CFG's transition constraints (seed Phase 1)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from placement_cli.diagnostics import Diagnostic
from placement_cli.errors import InputError, Problem
from placement_cli.graph import Graph


@dataclass(frozen=True, slots=True)
class PruneOptions:
    """Options of `prune` (none yet): a frozen dataclass, so unknown ones are refused."""


@dataclass(frozen=True, slots=True)
class PruneResult:
    domains: tuple[int, ...]
    removed: tuple[tuple[int, int, int], ...]  # (block, target, edge id), sorted
    diagnostics: tuple[Diagnostic, ...]

    @property
    def status(self) -> str:
        return "infeasible" if any(d.severity == "error" for d in self.diagnostics) else "ok"

    def to_json(self, g: Graph) -> dict[str, Any]:
        return {
            "domains": {g.block_ids[b]: g.target_list(m) for b, m in enumerate(self.domains)},
            "removed": [
                {"block": g.block_ids[b], "target": g.targets[t], "edge": g.edge_json(e)}
                for b, t, e in self.removed
            ],
        }


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


def prune(g: Graph, options: PruneOptions | None = None) -> PruneResult:
    """Remove every target that has no supporting partner across some CFG edge.

    Each edge is a binary constraint checked in both directions; parallel edges between
    two blocks must all allow a pair; a self-loop keeps only targets whose diagonal is
    allowed. A live block is never narrowed because of a dead (unreachable) neighbour:
    dead code never runs, so it cannot make live code infeasible.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["pg", "interp"],
    ...     "transitions": {"pg": {"pg": 0, "interp": 1}, "interp": {"interp": 0}},
    ...     "blocks": [{"id": "a", "domain": ["interp"], "terminator": {"kind": "goto",
    ...                 "successors": [{"block": "b"}]}},
    ...                {"id": "b", "terminator": {"kind": "return"}}]}))
    >>> [g.target_list(m) for m in prune(g).domains]
    [['interp'], ['interp']]
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


def _blame(g: Graph, t: int, dy: int, fwd: tuple[int, ...], bwd: tuple[int, ...]) -> int:
    """The edge to report for a removal: the first one that alone has no support,
    else (only the parallel edges together exclude every partner) the first edge."""
    for e in sorted(fwd + bwd):
        m = g.edge_mat[e]
        allowed = m.out[t] if e in fwd else m.inc[t]
        if not dy & allowed:
            return e
    return min(fwd + bwd)


def _empty_initial(g: Graph, b: int) -> Diagnostic:
    bid = g.block_ids[b]
    if g.live[b]:
        return Diagnostic("error", "empty-domain", f"no target can run block '{bid}'", (bid,))
    return Diagnostic(
        "warning", "empty-domain-unreachable", f"no target can run unreachable block '{bid}'", (bid,)
    )


def _emptied(g: Graph, b: int, why: list[tuple[int, int, int]]) -> Diagnostic:
    bid = g.block_ids[b]
    detail = ", ".join(
        f"{g.targets[t]} (edge {g.block_ids[g.edge_src[e]]}[{g.edge_pos[e]}] -> {g.block_ids[g.edge_dst[e]]})"
        for _, t, e in why
    )
    if g.live[b]:
        return Diagnostic(
            "error", "domain-wipeout", f"arc consistency left block '{bid}' with no target: removed {detail}", (bid,)
        )
    return Diagnostic(
        "warning",
        "domain-wipeout-unreachable",
        f"arc consistency left unreachable block '{bid}' with no target: removed {detail}",
        (bid,),
    )


def from_json(data: Any, g: Graph, where: str = "prune") -> tuple[int, ...]:
    """Read the `domains` of a prune section back (a pipe's earlier stage)."""
    problems: list[Problem] = []
    doms = data.get("domains") if isinstance(data, dict) else None
    if not isinstance(doms, dict):
        raise InputError([Problem(f"{where}.domains", "expected a map block -> list of targets")])
    out = list(g.domain)
    for b, bid in enumerate(g.block_ids):
        ts = doms.get(bid)
        if not isinstance(ts, list) or not all(isinstance(t, str) for t in ts):
            problems.append(Problem(f"{where}.domains.{bid}", "expected a list of targets"))
            continue
        unknown = [t for t in ts if t not in g.targets]
        if unknown:
            problems.append(Problem(f"{where}.domains.{bid}", f"unknown target '{unknown[0]}'"))
            continue
        m = g.mask_of(ts)
        if m & ~g.domain[b]:
            problems.append(Problem(f"{where}.domains.{bid}", "not a subset of the block's domain in the plan"))
            continue
        out[b] = m
    extra = [k for k in doms if k not in g.index]
    for k in extra:
        problems.append(Problem(f"{where}.domains.{k}", f"unknown block '{k}'"))
    if problems:
        raise InputError(problems)
    return tuple(out)
