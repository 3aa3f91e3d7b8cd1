"""`prune`: AC-3 arc consistency over the CFG's transition constraints (seed Phase 1)."""

from __future__ import annotations

from typing import Any

import msgspec

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.ir.graph import Graph


class PruneOptions(msgspec.Struct, frozen=True):
    """Options of `prune` (none yet): a frozen Struct, so unknown ones are refused.
    Not a slotted dataclass: building that class cost ~0.2 ms of every process that
    imports the stage (measured), for a class with no fields."""


class PruneResult(msgspec.Struct, frozen=True):
    domains: tuple[int, ...]
    removed: tuple[tuple[int, int, int], ...]  # (block, target, edge id), sorted
    diagnostics: tuple[Diagnostic, ...]

    @property
    def status(self) -> str:
        return "infeasible" if any(d.severity == "error" for d in self.diagnostics) else "ok"

    def to_json(self, g: Graph) -> dict[str, Any]:
        names: dict[int, list[str]] = {}  # one list per distinct domain (read-only data)
        for m in set(self.domains):
            names[m] = g.target_list(m)
        ids = g.block_ids
        targets = g.targets
        src, dst, pos = g.edge_src, g.edge_dst, g.edge_pos  # `g.edge_json`, written out
        return {
            "domains": dict(zip(ids, [names[m] for m in self.domains], strict=True)),
            "removed": [
                {
                    "block": ids[b],
                    "target": targets[t],
                    "edge": {"from": ids[src[e]], "index": pos[e], "to": ids[dst[e]]},
                }
                for b, t, e in self.removed
            ],
        }


def edge_pairs(g: Graph) -> dict[int, list[int]]:
    """The edges between each pair of distinct blocks a < b, keyed `a * n_blocks + b`, in
    order of each pair's first edge id (self-loops left out). Built once per graph and
    shared (`prune` and `solve.instance` both group edges so): read-only.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "switch", "successors": [{"block": "b"}, {"block": "a"}]}},
    ...     {"id": "b", "terminator": {"kind": "goto", "successors": [{"block": "a"}]}}]})
    >>> edge_pairs(g)  # a->b (edge 0) and b->a (edge 2); the self-loop (edge 1) is not a pair
    {1: [0, 2]}
    """
    got = g._memo.get("edge_pairs")
    if got is not None:
        return got  # type: ignore[no-any-return]
    n = g.n_blocks
    pair_edges: dict[int, list[int]] = {}  # dicts keep first-use order
    src, dst = g.edge_src, g.edge_dst
    for e, (u, v) in enumerate(zip(src, dst, strict=True)):
        if u == v:
            continue
        key = u * n + v if u < v else v * n + u
        lst = pair_edges.get(key)
        if lst is None:
            pair_edges[key] = [e]
        else:
            lst.append(e)
    g._memo["edge_pairs"] = pair_edges
    return pair_edges


def _pattern(
    memo: dict[tuple[int, ...], tuple[int, ...]],
    full: int,
    K: int,
    fwd: tuple[Any, ...],
    bwd: tuple[Any, ...],
) -> tuple[int, ...]:
    """Per target t of x: the partners in y that every edge between x and y allows
    (matrices `fwd` of the edges x -> y, `bwd` of y -> x), one shared tuple per pattern.

    >>> from placement_cli.ir.indexed import make_matrix
    >>> m = make_matrix(2, (0.0, 1.0, None, 0.0))  # 0 -> 0, 0 -> 1 and 1 -> 1 allowed
    >>> _pattern({}, 3, 2, (m,), ()), _pattern({}, 3, 2, (), (m,))
    ((3, 2), (1, 3))
    """
    acc = [full] * K
    for m in fwd:
        out = m.out
        for t in range(K):
            acc[t] &= out[t]
    for m in bwd:
        inc = m.inc
        for t in range(K):
            acc[t] &= inc[t]
    key = tuple(acc)
    return memo.setdefault(key, key)


# Up to this many targets an arc's revision is one table lookup (2**K entries per
# distinct support pattern); above it, a loop over the block's targets.
_TABLE_TARGETS = 8


def prune(g: Graph, options: PruneOptions | None = None) -> PruneResult:
    """Remove every target that has no supporting partner across some CFG edge.

    Each edge is a binary constraint checked in both directions; parallel edges between
    two blocks must all allow a pair; a self-loop keeps only targets whose diagonal is
    allowed. A live block is never narrowed because of a dead (unreachable) neighbour:
    dead code never runs, so it cannot make live code infeasible.

    Arcs are revised in the order of the classic queue (every arc in block and first-edge
    order, then the arcs into a narrowed block, in neighbour order); an arc's revision
    looks up, for the neighbour's current domain, which targets lose all support.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["pg", "interp"],
    ...     "transitions": {"pg": {"pg": 0, "interp": 1}, "interp": {"interp": 0}},
    ...     "blocks": [{"id": "a", "domain": ["interp"], "terminator": {"kind": "goto",
    ...                 "successors": [{"block": "b"}]}},
    ...                {"id": "b", "terminator": {"kind": "return"}}]}))
    >>> [g.target_list(m) for m in prune(g).domains]
    [['interp'], ['interp']]
    """
    n = g.n_blocks
    K = g.n_targets
    dom = list(g.domain)
    live = g.live
    removed: list[tuple[int, int, int]] = []
    diags: list[Diagnostic] = []
    emptied: list[int] = []

    for b in range(n):
        if dom[b] == 0:
            diags.append(_empty_initial(g, b))

    for e, (u, v) in enumerate(zip(g.edge_src, g.edge_dst, strict=True)):
        if u != v or dom[u] == 0:
            continue
        m = g.edge_mat[e]
        keep = 0
        for t in range(K):
            if m.out[t] >> t & 1:
                keep |= 1 << t
        lost = dom[u] & ~keep
        if lost:
            for t in range(K):
                if lost >> t & 1:
                    removed.append((u, t, e))
            dom[u] &= keep
            if dom[u] == 0:
                emptied.append(u)

    # Arcs numbered in (block, neighbour slot) order: the initial queue order. A block's
    # neighbours are slotted in order of each pair's first edge (`edge_pairs` order), so
    # counting each block's pairs first places every arc at once; `rev[a]` is the
    # arc the other way between the same two blocks.
    pair_edges = edge_pairs(g)
    deg = [0] * (n + 1)
    for key in pair_edges:
        a, b = divmod(key, n)
        deg[a] += 1
        deg[b] += 1
    first = [0] * (n + 1)
    acc_first = 0
    for x in range(n):
        first[x] = acc_first
        acc_first += deg[x]
    first[n] = n_arcs = acc_first
    fill = first[:n]
    arc_x = [0] * n_arcs
    arc_y = [0] * n_arcs
    rev = [0] * n_arcs
    arc_es: list[list[int]] = [[]] * n_arcs  # the edges between the arc's two blocks
    arc_sup: list[tuple[int, ...]] = [()] * n_arcs  # per target: partners allowed by every edge
    sup_memo: dict[tuple[int, ...], tuple[int, ...]] = {}
    # One edge (the usual case): the patterns each way follow from the matrix's allowed
    # entries alone (`out`, `inc`), which matrices of one layout share even where their
    # costs differ (a foreign plan: a distinct matrix on every edge).
    single: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], ...]] = {}
    src = g.edge_src
    mats = g.edge_mat
    full = (1 << K) - 1
    for key, es in pair_edges.items():
        a, b = divmod(key, n)
        ia = fill[a]
        fill[a] = ia + 1
        ib = fill[b]
        fill[b] = ib + 1
        arc_x[ia] = arc_y[ib] = a
        arc_y[ia] = arc_x[ib] = b
        rev[ia] = ib
        rev[ib] = ia
        arc_es[ia] = arc_es[ib] = es
        if len(es) == 1:
            e = es[0]
            m = mats[e]
            allowed = (m.out, m.inc)
            got = single.get(allowed)
            if got is None:
                out_p = _pattern(sup_memo, full, K, (m,), ())
                in_p = _pattern(sup_memo, full, K, (), (m,))
                got = single[allowed] = (out_p, in_p)
            if src[e] == a:
                arc_sup[ia], arc_sup[ib] = got
            else:
                arc_sup[ib], arc_sup[ia] = got
        else:
            ab = tuple(mats[e] for e in es if src[e] == a)
            ba = tuple(mats[e] for e in es if src[e] == b)
            arc_sup[ia] = _pattern(sup_memo, full, K, ab, ba)
            arc_sup[ib] = _pattern(sup_memo, full, K, ba, ab)
    # into[x]: the arcs z -> x for each neighbour z of x, in x's neighbour order: the
    # arcs to revise again when x's domain shrinks.
    into = [rev[first[x] : first[x + 1]] for x in range(n)]

    # For few targets: per support pattern, lost[dy] = targets without a partner in dy.
    tables: dict[tuple[int, ...], list[int]] = {}
    if K <= _TABLE_TARGETS:
        for sup in sup_memo.values():
            tab = [0] * (1 << K)
            for dy in range(1 << K):
                lost = 0
                for t in range(K):
                    if not dy & sup[t]:
                        lost |= 1 << t
                tab[dy] = lost
            tables[sup] = tab
    arc_tab = [tables[sup] for sup in arc_sup] if tables else None

    # The FIFO queue as a list iterated while it grows: a list iterator sees items
    # appended behind it, so this is the same order as a deque without the pops. Each
    # arc is in the queue at most once at a time, and re-queued only when a domain
    # shrinks, so the list stays below (targets + 1) x arcs entries.
    queue = list(range(n_arcs))
    queued = bytearray(b"\x01") * n_arcs
    push = queue.append
    for a in queue:
        queued[a] = 0
        x = arc_x[a]
        y = arc_y[a]
        dx, dy = dom[x], dom[y]
        if dx == 0 or dy == 0 or (live[x] and not live[y]):
            continue
        if arc_tab is not None:
            lost = dx & arc_tab[a][dy]
        else:
            pattern = arc_sup[a]
            lost = 0
            for t in range(K):
                if dx >> t & 1 and not dy & pattern[t]:
                    lost |= 1 << t
        if not lost:
            continue
        es = arc_es[a]
        fwd = tuple(e for e in es if src[e] == x)
        bwd = tuple(e for e in es if src[e] != x)
        t = 0
        mask = lost
        while mask:
            if mask & 1:
                removed.append((x, t, _blame(g, t, dy, fwd, bwd)))
            mask >>= 1
            t += 1
        dom[x] = dx & ~lost
        if dom[x] == 0:
            emptied.append(x)
        skip = rev[a]  # the arc y -> x: y's domain did not change
        for back in into[x]:
            if back != skip and not queued[back]:
                queued[back] = 1
                push(back)

    if emptied:
        # Each emptied block's removals, in removal order (one pass, not one per block).
        why: dict[int, list[tuple[int, int, int]]] = {b: [] for b in emptied}
        for r in removed:
            of_block = why.get(r[0])
            if of_block is not None:
                of_block.append(r)
        for b in emptied:
            diags.append(_emptied(g, b, why[b]))
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
        "warning",
        "empty-domain-unreachable",
        f"no target can run unreachable block '{bid}'",
        (bid,),
    )


def _emptied(g: Graph, b: int, why: list[tuple[int, int, int]]) -> Diagnostic:
    bid = g.block_ids[b]
    detail = ", ".join(
        f"{g.targets[t]} (edge {g.block_ids[g.edge_src[e]]}[{g.edge_pos[e]}] -> {g.block_ids[g.edge_dst[e]]})"
        for _, t, e in why
    )
    if g.live[b]:
        return Diagnostic(
            "error",
            "domain-wipeout",
            f"arc consistency left block '{bid}' with no target: removed {detail}",
            (bid,),
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
            problems.append(
                Problem(f"{where}.domains.{bid}", "not a subset of the block's domain in the plan")
            )
            continue
        out[b] = m
    extra = [k for k in doms if k not in g.index]
    for k in extra:
        problems.append(Problem(f"{where}.domains.{k}", f"unknown block '{k}'"))
    if problems:
        raise InputError(problems)
    return tuple(out)
