"""The compact indexed form every pass runs on.

The public models are parsed and checked once (`build_graph`); afterwards blocks are
indices in input order, targets are bit positions in target order, domains are int
bitsets, and each CFG edge is a position in one flat edge list (source block order,
then successor position), so no algorithm ever iterates a hash-ordered container.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from placement_cli.errors import InputError, Problem
from placement_cli.io import num
from placement_cli.limits import objective_problems
from placement_cli.model import Plan, TransMatrix

INF = math.inf
SUCCESSOR_COUNT = {
    "goto": (1, 1),
    "graph_read": (1, 1),
    "switch": (1, None),
    "return": (0, 0),
    "unreachable": (0, 0),
}


@dataclass(frozen=True, slots=True, eq=False)
class Matrix:
    """A TransMatrix over target indices: `cost[s * n + d]` is None when s->d is forbidden."""

    n: int
    cost: tuple[float | None, ...]
    out: tuple[int, ...]  # out[s]: bitset of destinations allowed from s
    inc: tuple[int, ...]  # inc[d]: bitset of sources allowed into d

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
    return Matrix(n, cost, tuple(out), tuple(inc))


def identity_matrix(n: int) -> Matrix:
    return make_matrix(n, tuple(0.0 if s == d else None for s in range(n) for d in range(n)))


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
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
    plan: Plan  # the validated public model, kept for `normalized`
    default_matrix: Matrix
    _memo: dict[str, Any]  # lazily built views (the normalised plan dict)

    @property
    def normalized(self) -> dict[str, Any]:
        """The normalised plan as written into artifacts, built on first use: a stage
        that only reads a plan to run an algorithm should not pay for it."""
        got = self._memo.get("normalized")
        if got is None:
            got = self._memo["normalized"] = _normalize(self)
        return got  # type: ignore[no-any-return]

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


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))


def _matrix(
    raw: TransMatrix, path: str, tindex: dict[str, int], n: int, chk: _Checker
) -> tuple[float | None, ...]:
    cost: list[float | None] = [None] * (n * n)
    for src, row in raw.items():
        s = tindex.get(src)
        if s is None:
            chk.add(f"{path}.{src}", f"unknown target '{src}'")
            continue
        for dst, c in row.items():
            d = tindex.get(dst)
            if d is None:
                chk.add(f"{path}.{src}.{dst}", f"unknown target '{dst}'")
                continue
            if s == d and c != 0:
                chk.add(f"{path}.{src}.{dst}", f"a same-target transition costs 0, not {c:g}")
                c = 0.0
            cost[s * n + d] = float(c)
    return tuple(cost)


def build_graph(plan: Plan, prefix: str = "") -> Graph:
    """Check every semantic rule of the plan format and build the indexed form.

    All problems are collected and raised together as one `InputError`.

    >>> from placement_cli.model import Plan
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "blocks": [{"id": "b0", "terminator": {"kind": "return"}}]}))
    >>> g.block_ids, g.domain
    (('b0',), (3,))
    """
    chk = _Checker()
    p = prefix
    targets = tuple(plan.targets)
    n = len(targets)
    tindex: dict[str, int] = {}
    for i, t in enumerate(targets):
        if t in tindex:
            chk.add(f"{p}targets[{i}]", f"duplicate target '{t}'")
        else:
            tindex[t] = i
    full = (1 << n) - 1

    index: dict[str, int] = {}
    for i, b in enumerate(plan.blocks):
        if b.id in index:
            chk.add(f"{p}blocks[{i}].id", f"duplicate block id '{b.id}' (first at blocks[{index[b.id]}])")
        else:
            index[b.id] = i
    entry = 0
    if plan.entry is not None:
        if plan.entry in index:
            entry = index[plan.entry]
        else:
            chk.add(f"{p}entry", f"unknown block '{plan.entry}'")

    mat_cache: dict[tuple[float | None, ...], Matrix] = {}

    def intern(cost: tuple[float | None, ...]) -> Matrix:
        m = mat_cache.get(cost)
        if m is None:
            m = mat_cache[cost] = make_matrix(n, cost)
        return m

    if plan.transitions is not None:
        default = intern(_matrix(plan.transitions, f"{p}transitions", tindex, n, chk))
    else:
        default = intern(identity_matrix(n).cost)
    named = {name: intern(_matrix(raw, f"{p}matrices.{name}", tindex, n, chk)) for name, raw in plan.matrices.items()}

    path_index: dict[str, int] = {}
    path_origin: list[int] = []
    # Paths are numbered in name order, not map order: artifacts write maps with sorted
    # keys, so map order would differ between a plan and its own artifact.
    for name, origins in sorted(plan.paths.items()):
        m = 0
        for j, t in enumerate(origins):
            if t not in tindex:
                chk.add(f"{p}paths.{name}[{j}]", f"unknown target '{t}'")
            else:
                m |= 1 << tindex[t]
        if not origins:
            chk.add(f"{p}paths.{name}", "a path needs at least one origin target")
        path_index[name] = len(path_origin)
        path_origin.append(m)

    domain: list[int] = []
    bases: list[list[float]] = []
    costs: list[tuple[float, ...]] = []
    edge_src: list[int] = []
    edge_dst: list[int] = []
    edge_pos: list[int] = []
    edge_mat: list[Matrix] = []
    succ: list[tuple[int, ...]] = []
    block_paths: list[tuple[int, ...]] = []

    for i, b in enumerate(plan.blocks):
        bp = f"{p}blocks[{i}]"
        support = full
        base = [0.0] * n
        for j, st in enumerate(b.statements):
            m = 0
            for t, c in st.cost.items():
                ti = tindex.get(t)
                if ti is None:
                    chk.add(f"{bp}.statements[{j}].cost.{t}", f"unknown target '{t}'")
                elif c is not None:
                    m |= 1 << ti
                    base[ti] += c
            support &= m
        term = b.terminator
        if term.cost is not None:
            m = 0
            for t, c in term.cost.items():
                ti = tindex.get(t)
                if ti is None:
                    chk.add(f"{bp}.terminator.cost.{t}", f"unknown target '{t}'")
                elif c is not None:
                    m |= 1 << ti
                    base[ti] += c
            support &= m
        dom = support
        if b.domain is not None:
            given = 0
            for j, t in enumerate(b.domain):
                ti = tindex.get(t)
                if ti is None:
                    chk.add(f"{bp}.domain[{j}]", f"unknown target '{t}'")
                elif given >> ti & 1:
                    chk.add(f"{bp}.domain[{j}]", f"duplicate target '{t}'")
                else:
                    given |= 1 << ti
            dom &= given
        if b.cost is not None:
            base = [0.0] * n
            for t, c in b.cost.items():
                ti = tindex.get(t)
                if ti is None:
                    chk.add(f"{bp}.cost.{t}", f"unknown target '{t}'")
                else:
                    base[ti] = c
        bases.append(base)
        total = list(base)
        if b.premium is not None:
            for t, c in b.premium.items():
                ti = tindex.get(t)
                if ti is None:
                    chk.add(f"{bp}.premium.{t}", f"unknown target '{t}'")
                else:
                    total[ti] += c
        for ti in range(n):
            if not dom >> ti & 1:
                total[ti] = INF
            elif total[ti] == INF:
                chk.add(f"{bp}.cost", f"cost on '{targets[ti]}' overflows to infinity")
        domain.append(dom)
        costs.append(tuple(total))

        bpaths = []
        for j, name in enumerate(b.paths):
            pi = path_index.get(name)
            if pi is None:
                chk.add(f"{bp}.paths[{j}]", f"unknown path '{name}' (not in the top-level paths)")
            elif pi not in bpaths:
                bpaths.append(pi)
        block_paths.append(tuple(bpaths))

        lo, hi = SUCCESSOR_COUNT[term.kind]
        k = len(term.successors)
        if k < lo or (hi is not None and k > hi):
            want = f"exactly {lo}" if lo == hi else f"at least {lo}"
            chk.add(f"{bp}.terminator.successors", f"a '{term.kind}' terminator has {want} successor(s), got {k}")
        seen_params: set[str] = set()
        for j, prm in enumerate(b.params):
            if prm in seen_params:
                chk.add(f"{bp}.params[{j}]", f"duplicate parameter '{prm}'")
            seen_params.add(prm)
        mine = []
        for k, e in enumerate(term.successors):
            ep = f"{bp}.terminator.successors[{k}]"
            dst = index.get(e.block)
            if dst is None:
                chk.add(f"{ep}.block", f"unknown block '{e.block}'")
                dst = -1
            else:
                want_n = len(plan.blocks[dst].params)
                if len(e.args) != want_n:
                    chk.add(f"{ep}.args", f"block '{e.block}' takes {want_n} argument(s), got {len(e.args)}")
            if e.transitions is None:
                mat = default
            elif isinstance(e.transitions, str):
                got = named.get(e.transitions)
                if got is None:
                    chk.add(f"{ep}.transitions", f"unknown matrix '{e.transitions}' (not in the top-level matrices)")
                    got = default
                mat = got
            else:
                mat = intern(_matrix(e.transitions, f"{ep}.transitions", tindex, n, chk))
            mine.append(len(edge_src))
            edge_src.append(i)
            edge_dst.append(dst)
            edge_pos.append(k)
            edge_mat.append(mat)
        succ.append(tuple(mine))

    chk.problems += objective_problems(costs, edge_mat, p)
    if chk.problems:
        raise InputError(chk.problems)

    return assemble(
        plan=plan,
        block_ids=tuple(b.id for b in plan.blocks),
        entry=entry,
        domain=domain,
        cost=costs,
        bases=bases,
        edge_src=edge_src,
        edge_dst=edge_dst,
        edge_pos=edge_pos,
        edge_mat=edge_mat,
        succ=succ,
        block_paths=block_paths,
        path_names=tuple(path_index),
        path_origin=tuple(path_origin),
        default_matrix=default,
    )


def assemble(
    *,
    plan: Plan,
    block_ids: tuple[str, ...],
    entry: int,
    domain: list[int],
    cost: list[tuple[float, ...]],
    bases: list[list[float]],
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
        index={b: i for i, b in enumerate(block_ids)},
        entry=entry,
        domain=tuple(domain),
        cost=tuple(cost),
        edge_src=tuple(edge_src),
        edge_dst=tuple(edge_dst),
        edge_pos=tuple(edge_pos),
        edge_mat=tuple(edge_mat),
        succ=tuple(succ),
        pred=tuple(tuple(x) for x in pred_lists),
        live=tuple(live),
        block_paths=tuple(block_paths),
        path_names=path_names,
        path_origin=path_origin,
        plan=plan,
        default_matrix=default_matrix,
        _memo={"base": bases},
    )


class _Nums(dict):  # type: ignore[type-arg]
    """Plan number -> written number (`io.num`), memoised: a large plan repeats a few
    hundred distinct costs millions of times, and a dict hit is a C-level lookup where
    `num` is a Python call. (1 == 1.0 == True share a key, and all write as 1.)"""

    def __missing__(self, v: Any) -> Any:
        r = self[v] = None if v is None else num(v)
        return r


def _normalize(g: Graph) -> dict[str, Any]:
    """The compact normalised plan (artifact format 2): derived `domain` and block `cost`
    filled in, `entry` explicit, each distinct non-default transition matrix written once
    under `matrices` (named `m0, m1, ...` in order of first use) and referred to by name;
    an edge on the default matrix carries no `transitions`. Empty lists and maps are left
    out. It is a valid plan file, and normalising it again gives the same bytes.

    Lists that only depend on a domain bitset (`domain`) are shared between blocks:
    the result is read (written, compared), never changed in place."""
    plan = g.plan
    targets = g.targets
    n = len(targets)
    default = g.default_matrix
    names: dict[int, str] = {}
    matrices: dict[str, Any] = {}
    nums = _Nums()
    dom_bits: dict[int, list[int]] = {}
    dom_names: dict[int, list[str]] = {}
    stmt_memo: dict[tuple[tuple[str, float | None], ...], dict[str, Any]] = {}

    out_blocks = []
    bases = g._memo["base"]
    domain, succ, edge_mat = g.domain, g.succ, g.edge_mat
    for i, b in enumerate(plan.blocks):
        dom = domain[i]
        ts = dom_bits.get(dom)
        if ts is None:
            ts = dom_bits[dom] = [t for t in range(n) if dom >> t & 1]
            dom_names[dom] = [targets[t] for t in ts]
        term = b.terminator
        base = bases[i]
        nb: dict[str, Any] = {"id": b.id}
        if b.params:
            nb["params"] = list(b.params)
        sts = []
        for s in b.statements:
            cost = s.cost
            if s.text is None:
                # Statements without text repeat (same costs): one shared record each.
                key = tuple(cost.items())
                rec = stmt_memo.get(key)
                if rec is None:
                    rec = stmt_memo[key] = {"cost": {k: nums[v] for k, v in cost.items()}}
                sts.append(rec)
            else:
                sts.append({"text": s.text, "cost": {k: nums[v] for k, v in cost.items()}})
        nb["statements"] = sts
        nb["domain"] = dom_names[dom]
        nb["cost"] = {targets[t]: nums[base[t]] for t in ts}
        if b.paths:
            nb["paths"] = list(b.paths)
        if b.premium:
            nb["premium"] = {k: nums[v] for k, v in b.premium.items()}
        nt: dict[str, Any] = {"kind": term.kind}
        if term.successors:
            succs = []
            for e, eid in zip(term.successors, succ[i], strict=True):
                se: dict[str, Any] = {"block": e.block}
                if e.args:
                    se["args"] = list(e.args)
                m = edge_mat[eid]
                if m is not default:
                    name = names.get(id(m))
                    if name is None:
                        name = names[id(m)] = f"m{len(names)}"
                        matrices[name] = m.to_json(targets)
                    se["transitions"] = name
                succs.append(se)
            nt["successors"] = succs
        if term.cost is not None:
            nt["cost"] = {k: nums[v] for k, v in term.cost.items()}
        nb["terminator"] = nt
        out_blocks.append(nb)
    normalized: dict[str, Any] = {
        "version": 1,
        "targets": list(targets),
        "entry": g.block_ids[g.entry],
        "transitions": default.to_json(targets),
        "blocks": out_blocks,
    }
    if matrices:
        normalized["matrices"] = matrices
    if plan.paths:
        normalized["paths"] = {k: list(v) for k, v in plan.paths.items()}
    if plan.name is not None:
        normalized["name"] = plan.name
    return normalized
