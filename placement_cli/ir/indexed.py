"""The compact indexed form every pass runs on (`Graph`, `Matrix`), and `assemble`, which
derives its redundant fields; `placement_cli.ir.graph.build_graph` checks a plan and builds it.

Blocks are indices in input order, targets are bit positions in target order, domains
are int bitsets, and each CFG edge is a position in one flat edge list (source block
order, then successor position), so no algorithm ever iterates a hash-ordered container.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from placement_cli.core.io import num
from placement_cli.formats.structs import Plan as PlanStruct

INF = math.inf


# Not `frozen` (a frozen dataclass, as it was, set each field through
# `object.__setattr__`: 0.12 s of 0.15 for the 117k matrices of a foreign 100k-block
# plan). Treat it as immutable all the same (compared by identity).
class Matrix(msgspec.Struct, eq=False):
    """A TransMatrix over target indices: `cost[s * n + d]` is None when s->d is forbidden."""

    n: int
    cost: tuple[float | None, ...]
    out: tuple[int, ...]  # out[s]: bitset of destinations allowed from s
    inc: tuple[int, ...]  # inc[d]: bitset of sources allowed into d
    # The largest allowed cost (0 when none is positive): what the matrix can add to an
    # objective (`limits.objective_problems`), worked out once where the matrix is made.
    top: float

    def get(self, s: int, d: int) -> float | None:
        return self.cost[s * self.n + d]

    def to_json(self, targets: tuple[str, ...]) -> dict[str, dict[str, float | int]]:
        n = self.n
        rows: dict[str, dict[str, float | int]] = {}
        for s in range(n):
            row = {targets[d]: num(c) for d in range(n) if (c := self.cost[s * n + d]) is not None}
            if row:
                rows[targets[s]] = row
        return rows


def make_matrix(n: int, cost: tuple[float | None, ...]) -> Matrix:
    out = [0] * n
    inc = [0] * n
    for s in range(n):
        for d in range(n):
            if cost[s * n + d] is not None:
                out[s] |= 1 << d
                inc[d] |= 1 << s
    top = max([c for c in cost if c is not None], default=0.0)
    return Matrix(n, cost, tuple(out), tuple(inc), top if top > 0.0 else 0.0)


def identity_matrix(n: int) -> Matrix:
    return make_matrix(n, tuple(0.0 if s == d else None for s in range(n) for d in range(n)))


class Graph(msgspec.Struct, frozen=True, eq=False):
    """A checked plan in indexed form. Immutable: passes return new results."""

    name: str | None
    targets: tuple[str, ...]
    block_ids: tuple[str, ...]
    index: dict[str, int]
    entry: int
    domain: tuple[int, ...]  # initial TargetBitSet per block
    cost: tuple[tuple[float, ...], ...]  # cost[b][t], INF outside the domain
    edge_src: tuple[int, ...]
    edge_dst: tuple[int, ...]
    edge_pos: tuple[int, ...]  # successor position inside the source's terminator
    edge_mat: tuple[Matrix, ...]
    succ: tuple[tuple[int, ...], ...]  # edge ids leaving each block, in successor order
    pred: tuple[tuple[int, ...], ...]  # edge ids entering each block, in edge-id order
    live: tuple[bool, ...]  # reachable from the entry
    block_paths: tuple[tuple[int, ...], ...]  # path indices each block reads
    path_names: tuple[str, ...]
    path_origin: tuple[int, ...]  # bitset of origin targets per path
    plan: PlanStruct  # the checked plan (or a fused one, read alike), kept for `ir.normalize.normalize`
    default_matrix: Matrix
    _memo: dict[str, Any]  # lazily built views (the normalised plan dict: `normalize`)

    @property
    def n_blocks(self) -> int:
        return len(self.block_ids)

    @property
    def n_targets(self) -> int:
        return len(self.targets)

    @property
    def n_edges(self) -> int:
        return len(self.edge_src)

    def edge_json(self, e: int) -> dict[str, Any]:
        return {
            "from": self.block_ids[self.edge_src[e]],
            "index": self.edge_pos[e],
            "to": self.block_ids[self.edge_dst[e]],
        }

    def target_list(self, mask: int) -> list[str]:
        return [t for i, t in enumerate(self.targets) if mask >> i & 1]

    def mask_of(self, names: list[str]) -> int:
        m = 0
        for name in names:
            m |= 1 << self.targets.index(name)
        return m


def bits(mask: int) -> list[int]:
    """Set bit positions in ascending (target) order."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def popcount(mask: int) -> int:
    return mask.bit_count()


def assemble(
    *,
    plan: Any,  # a `structs.Plan`, or a fused plan read alike (`algorithms.fuse.FusedPlan`)
    block_ids: tuple[str, ...],
    entry: int,
    domain: list[int],
    cost: list[tuple[float, ...]],
    bases: list[list[float]],
    index: dict[str, int] | None = None,
    edge_src: list[int],
    edge_dst: list[int],
    edge_pos: list[int],
    edge_mat: list[Matrix],
    succ: list[tuple[int, ...]],
    block_paths: list[tuple[int, ...]],
    path_names: tuple[str, ...],
    path_origin: tuple[int, ...],
    default_matrix: Matrix,
) -> Graph:
    """A Graph from already-checked per-block and per-edge lists: derives the id index,
    the predecessor lists and reachability. `build_graph` and passes that derive a new
    plan from a checked one (fusion) share it, so the derived fields have one definition."""
    n = len(block_ids)
    pred_lists: list[list[int]] = [[] for _ in range(n)]
    for eid, d in enumerate(edge_dst):
        pred_lists[d].append(eid)

    live = [False] * n
    live[entry] = True
    stack = [entry]
    while stack:
        u = stack.pop()
        for eid in succ[u]:
            v = edge_dst[eid]
            if not live[v]:
                live[v] = True
                stack.append(v)

    return Graph(
        name=plan.name,
        targets=tuple(plan.targets),
        block_ids=block_ids,
        index={b: i for i, b in enumerate(block_ids)} if index is None else index,
        entry=entry,
        domain=tuple(domain),
        cost=tuple(cost),
        edge_src=tuple(edge_src),
        edge_dst=tuple(edge_dst),
        edge_pos=tuple(edge_pos),
        edge_mat=tuple(edge_mat),
        succ=tuple(succ),
        pred=tuple(map(tuple, pred_lists)),
        live=tuple(live),
        block_paths=tuple(block_paths),
        path_names=path_names,
        path_origin=path_origin,
        plan=plan,
        default_matrix=default_matrix,
        _memo={"base": bases},
    )
