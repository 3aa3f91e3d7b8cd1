"""The exact method's per-plan fixed work, rewritten for speed (2026-11-27), held to the
literal forms it replaced: the same floats bit for bit (sums in the same order, the
first minimum kept), the same logs, factors, counts and decoded values."""

from __future__ import annotations

import math
import random
import struct
from operator import add as _add
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.elimination import adjacency
from placement_cli.algorithms.solve.exact.model import INF, Model, build_model
from placement_cli.algorithms.solve.exact.reductions import (
    reduce_core,
    reduce_model,
    undo_reductions,
)
from placement_cli.ir.graph import bits
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.exact_helpers import plans


def _bits(x: Any) -> Any:
    """A structure with every float replaced by its bit pattern (so -0.0 != 0.0)."""
    if isinstance(x, float):
        return struct.pack("<d", x)
    if isinstance(x, list):
        return [_bits(v) for v in x]
    if isinstance(x, tuple):  # a plain tuple for a `Reduction` too: they compare equal
        return tuple(_bits(v) for v in x)
    if isinstance(x, dict):
        return {k: _bits(v) for k, v in x.items()}
    return x


def _reference_reduce_core(
    ks: Any, unary: Any, nbr: Any, cand: list[int], n: int, const: float, counts: list[int]
) -> tuple[float, list[Any]]:
    """`reduce_core` as it was before that rewrite (generic maps and slices per cell)."""
    queued = bytearray(n)
    queue = [b for b in cand if len(nbr[b]) <= 2]
    for b in queue:
        queued[b] = 1
    log: list[Any] = []
    add = _add
    for x in queue:
        nx = nbr[x]
        ux = unary[x]
        kx = len(ux)
        d = len(nx)
        nbr[x] = None
        unary[x] = None
        if d == 0:
            m = min(ux)
            const += m
            log.append((x, -1, -1, ux, None, None))
            counts[0] += 1
            if m == INF:
                break
            continue
        if d == 1:
            ((y, t),) = nx.items()
            ky = ks[y]
            uy = unary[y]
            if x < y:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j::ky]))
            else:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j * kx : j * kx + kx]))
            ny = nbr[y]
            del ny[x]
            log.append((x, y, -1, ux, t, None))
            counts[1] += 1
            if len(ny) <= 2 and not queued[y]:
                queued[y] = 1
                queue.append(y)
            continue
        (y, ty), (z, tz) = sorted(nx.items())
        ky, kz = ks[y], ks[z]
        if x < y:
            a_rows = [list(map(add, ux, ty[j::ky])) for j in range(ky)]
        else:
            a_rows = [list(map(add, ux, ty[j * kx : j * kx + kx])) for j in range(ky)]
        if x < z:
            cols = [tz[c::kz] for c in range(kz)]
        else:
            cols = [tz[c * kx : c * kx + kx] for c in range(kz)]
        tab = [min(map(add, a, c)) for a in a_rows for c in cols]
        ny, nz = nbr[y], nbr[z]
        del ny[x]
        del nz[x]
        old = ny.get(z)
        if old is not None:
            tab = list(map(add, old, tab))
        ny[z] = tab
        nz[y] = tab
        log.append((x, y, z, ux, ty, tz))
        counts[2] += 1
        if len(ny) <= 2 and not queued[y]:
            queued[y] = 1
            queue.append(y)
        if len(nz) <= 2 and not queued[z]:
            queued[z] = 1
            queue.append(z)
    return const, log


def _reference_build(g: Any, domains: tuple[int, ...]) -> Any:
    """`build_model` as it was before that rewrite (one loop over the edges, unaries summed by `map`)."""
    n = g.n_blocks
    live = g.live
    values: list[list[int]] = [[] for _ in range(n)]
    unary: list[list[float] | None] = [None] * n
    single = [-1] * n  # the target of a live single-target block
    ks: dict[int, int] = {}
    fixed: dict[int, int] = {}
    constant = 0.0
    cost = g.cost
    dom_memo: dict[int, list[int]] = {}
    for b in range(n):
        if not live[b]:
            continue
        dom = domains[b]
        if dom & (dom - 1) == 0:
            if dom == 0:
                return None
            t = dom.bit_length() - 1
            values[b] = [t]
            single[b] = t
            fixed[b] = 0
            unary[b] = [cost[b][t]]
        else:
            vs = dom_memo.get(dom)
            if vs is None:
                vs = dom_memo[dom] = bits(dom)
            values[b] = vs
            ks[b] = len(vs)
            row = cost[b]
            unary[b] = [row[t] for t in vs]

    # Tables depend only on (matrix, source domain, destination domain, orientation), and
    # matrices are interned by the graph, so most edges hit this memo. Single-target
    # blocks are conditioned away at once: their edges become unary terms of the other
    # side (or constants), in edge order so that the sums are reproducible.
    memo: dict[tuple[int, int, int, int], list[float]] = {}
    pairs: dict[tuple[int, int], list[float]] = {}
    edge_src, edge_dst, edge_mat = g.edge_src, g.edge_dst, g.edge_mat
    for e in range(g.n_edges):
        u = edge_src[e]
        if not live[u]:
            continue
        v = edge_dst[e]
        m = edge_mat[e]
        su, sv = single[u], single[v]
        if u == v:
            un = unary[u]
            for i, t in enumerate(values[u]):
                c = m.cost[t * m.n + t]
                un[i] = INF if c is None else un[i] + c  # type: ignore[index]
            continue
        if su >= 0 and sv >= 0:
            c = m.cost[su * m.n + sv]
            if c is None:
                return None
            constant += c
            continue
        # mode: 0 pair u-rows, 1 pair v-rows, 2 unary on v (u fixed), 3 unary on u (v fixed)
        mode = 2 if su >= 0 else 3 if sv >= 0 else (1 if u > v else 0)
        key = (id(m), domains[u], domains[v], mode)
        tab = memo.get(key)
        if tab is None:
            nm = m.n
            mc = m.cost
            if mode == 0:
                raw = [mc[s * nm + d] for s in values[u] for d in values[v]]
            elif mode == 1:
                raw = [mc[s * nm + d] for d in values[v] for s in values[u]]
            elif mode == 2:
                raw = [mc[su * nm + d] for d in values[v]]
            else:
                raw = [mc[s * nm + sv] for s in values[u]]
            tab = memo[key] = [INF if c is None else c for c in raw]
        if mode >= 2:
            w = v if mode == 2 else u
            unary[w] = list(map(_add, unary[w], tab))  # type: ignore[arg-type]
            continue
        pk = (v, u) if mode == 1 else (u, v)
        old = pairs.get(pk)
        pairs[pk] = tab if old is None else list(map(_add, old, tab))
    for b in fixed:
        constant += unary[b][0]  # type: ignore[index]
        unary[b] = None
    n_terms = len(ks) + len(pairs) + len(fixed)
    return Model(values, ks, unary, pairs, constant, fixed, n_terms)


@settings(max_examples=examples(300), deadline=None)
@given(plans(frac=True) | plans(), st.booleans())
def test_build_equals_reference(plan: dict[str, Any], pruned: bool) -> None:
    """The same model, float for float, with the plan's own or the pruned domains."""
    g = parse_plan(plan)
    domains = prune(g).domains if pruned else g.domain
    got = build_model(g, domains)
    want = _reference_build(g, domains)
    if want is None:
        assert got is None
        return
    assert got is not None
    for f in ("values", "ks", "unary", "pairs", "constant", "fixed", "n_terms"):
        assert _bits(getattr(got, f)) == _bits(getattr(want, f)), f
    assert list(got.pairs) == list(want.pairs) and list(got.ks) == list(want.ks)
    # The neighbour tables `build_model` hands to `reduce_model`: what `reduce_model` derived from the
    # pairs before, entry order included (it orders the core's factors).
    nbr: list[Any] = [None] * g.n_blocks
    for v in want.ks:
        nbr[v] = {}
    for (x, y), tab in want.pairs.items():
        nbr[x][y] = tab
        nbr[y][x] = tab
    assert got.nbr is not None
    assert _bits(got.nbr) == _bits(nbr)
    assert [list(d) if d is not None else None for d in got.nbr] == [
        list(d) if d is not None else None for d in nbr
    ]
    for (x, y), tab in got.pairs.items():
        assert got.nbr[x][y] is tab and got.nbr[y][x] is tab  # type: ignore[index]


def _reference_undo(log: list[Any], ks: Any, val: dict[int, int]) -> None:
    """`undo_reductions` as it was before that rewrite."""
    add = _add
    for x, y, z, ux, ty, tz in reversed(log):
        kx = len(ux)
        if y < 0:
            s = ux
        else:
            j = val[y]
            col = ty[j :: ks[y]] if x < y else ty[j * kx : j * kx + kx]
            s = list(map(add, ux, col))
            if z >= 0:
                c = val[z]
                col = tz[c :: ks[z]] if x < z else tz[c * kx : c * kx + kx]
                s = list(map(add, s, col))
        val[x] = s.index(min(s))


def _random_pairwise(rnd: random.Random) -> tuple[list[int], list[Any], list[Any]]:
    """A random pairwise model: domain sizes 1 to 4 (the specialised 2 and 3 and the
    generic paths), costs with one decimal (inexact in floats, often tied), some `inf`,
    signed zeros."""
    n = rnd.randrange(2, 14)
    ks = [rnd.choice((2, 2, 3, 3, 1, 4)) for _ in range(n)]

    def cost() -> float:
        r = rnd.random()
        if r < 0.4:  # few distinct values: ties everywhere
            return rnd.choice((0.0, 0.1, 0.2, 0.3, 1.0))
        return INF if r < 0.48 else -0.0 if r < 0.52 else rnd.randrange(-20, 90) / 10

    unary: list[Any] = [[cost() for _ in range(k)] for k in ks]
    nbr: list[Any] = [{} for _ in range(n)]
    for _ in range(rnd.randrange(n, 2 * n + 2)):
        a, b = sorted(rnd.sample(range(n), 2))
        tab = [cost() for _ in range(ks[a] * ks[b])]
        nbr[a][b] = tab
        nbr[b][a] = tab
    return ks, unary, nbr


@pytest.mark.parametrize("seed", range(300))
def test_reduce_core_equals_reference(seed: int) -> None:
    rnd = random.Random(seed)
    ks, unary, nbr = _random_pairwise(rnd)
    n = len(ks)
    copy = [(list(u), {k: v for k, v in d.items()}) for u, d in zip(unary, nbr, strict=True)]
    u2 = [c[0] for c in copy]
    n2 = [c[1] for c in copy]
    ca: list[int] = [0, 0, 0]
    cb: list[int] = [0, 0, 0]
    got = reduce_core(Core(ks, unary, nbr), list(range(n)), n, 0.5, ca)
    want = _reference_reduce_core(ks, u2, n2, list(range(n)), n, 0.5, cb)
    assert _bits(got) == _bits(want)
    assert ca == cb
    assert _bits(unary) == _bits(u2) and _bits(nbr) == _bits(n2)
    if got[0] < INF:
        # Back-substitution from any values of the blocks left.
        val = {b: rnd.randrange(ks[b]) for b in range(n) if nbr[b] is not None}
        val2 = dict(val)
        undo_reductions(got[1], ks, val)
        _reference_undo(want[1], ks, val2)
        assert val == val2 and sorted(val) == list(range(n))


@settings(max_examples=examples(200), deadline=None)
@given(plans(frac=True) | plans())
def test_reduce_on_plans_equals_reference(plan: dict[str, Any]) -> None:
    g = parse_plan(plan)
    domains = prune(g).domains
    a = build_model(g, domains)
    b = build_model(g, domains)
    assume(a is not None)
    assert a is not None and b is not None
    n = g.n_blocks
    adj: dict[int, set[int]] = {}
    const, log, factors, counts = reduce_model(a, n, adj)
    assert adj == adjacency(factors)
    nbr: list[Any] = [None] * n
    for v in b.ks:
        nbr[v] = {}
    for (x, y), tab in b.pairs.items():
        nbr[x][y] = tab
        nbr[y][x] = tab
    cb = [0, 0, 0]
    c2, log2 = _reference_reduce_core(b.ks, b.unary, nbr, list(b.ks), n, b.constant, cb)
    assert _bits((const, log, counts)) == _bits((c2, log2, cb))
    assert math.isinf(const) or _bits(sorted(factors)) == _bits(
        sorted(
            [((x, y), t) for x in b.ks if nbr[x] is not None for y, t in nbr[x].items() if x < y]
            + [((x,), b.unary[x]) for x in b.ks if nbr[x] is not None]
        )
    )


@given(st.integers(0, 10**6))
def test_signed_zero_minimum_keeps_the_first(seed: int) -> None:
    """`p if p <= q else q` keeps p on ties, as `min` does: with -0.0 and 0.0 the
    specialised R1 adds the same zero the reference adds."""
    rnd = random.Random(seed)
    ks = [2, 2]
    z = [0.0, -0.0]
    unary: list[Any] = [[rnd.choice(z), rnd.choice(z)], [rnd.choice(z), -0.0]]
    t = [rnd.choice(z) for _ in range(4)]
    nbr: list[Any] = [{1: t}, {0: t}]
    u2 = [list(u) for u in unary]
    n2: list[Any] = [{1: t}, {0: t}]
    got = reduce_core(Core(ks, unary, nbr), [0], 2, 0.0, [0, 0, 0])
    want = _reference_reduce_core(ks, u2, n2, [0], 2, 0.0, [0, 0, 0])
    assert _bits(got) == _bits(want)


@pytest.mark.parametrize("seed", range(60))
def test_recorded_scopes_are_the_combined_scopes(seed: int) -> None:
    """The scopes `elim_cost` records are the ones `combine` derives from the bucket's
    factors: the elimination with them builds the same tables, constant and log."""
    from placement_cli.algorithms.solve.exact.elimination import (
        OrderedEliminator,
        adjacency,
        elim_cost,
    )
    from tests.exact_helpers import random_factors

    rnd = random.Random(seed)
    n = rnd.randrange(2, 12)
    ks = [rnd.randrange(2, 4) for _ in range(n)]
    factors = random_factors(rnd, n, ks)
    order: list[int] = []
    scopes: list[tuple[int, ...]] = []
    assert elim_cost(ks, adjacency(factors), 1 << 16, 1 << 20, order, scopes=scopes) >= 0
    assert len(scopes) == len(order)
    a = OrderedEliminator(ks, factors, 0.5, order)
    b = OrderedEliminator(ks, factors, 0.5, order, scopes)
    a.run(None)
    b.run(None)
    assert _bits(a.constant) == _bits(b.constant)
    assert _bits(a.log) == _bits(b.log)
    assert (a.width, a.cells, a.counts) == (b.width, b.cells, b.counts)
    if a.constant < INF:
        from placement_cli.algorithms.solve.exact.elimination import combine

        # (each step's scope, recomputed from its bucket)
        for (x, facs), sc in zip(a.log, scopes, strict=True):
            if facs and len(facs[0]) == 2:
                assert combine(x, [tuple(f) for f in facs], ks)[0] == sc


def _reference_decode(log: list[Any], ks: Any, val: dict[int, int]) -> None:
    """`decode` as it was before that rewrite (strides for every scope)."""
    for x, facs in reversed(log):
        kx = ks[x]
        s: Any = None
        for sc, tab in facs:
            base = 0
            step = 0
            stride = 1
            for v in reversed(sc):
                if v == x:
                    step = stride
                else:
                    base += val[v] * stride
                stride *= ks[v]
            col = tab[base : base + step * kx : step] if step else [tab[base]] * kx
            s = col if s is None else list(map(_add, s, col))
        val[x] = s.index(min(s))


@pytest.mark.parametrize("seed", range(80))
def test_decode_equals_reference(seed: int) -> None:
    from placement_cli.algorithms.solve.exact.elimination import (
        OrderedEliminator,
        adjacency,
        decode,
        elim_cost,
    )
    from tests.exact_helpers import random_factors

    rnd = random.Random(seed)
    n = rnd.randrange(2, 12)
    ks = [rnd.randrange(2, 4) for _ in range(n)]
    factors = [
        (sc, [rnd.choice((0.0, 0.5, 1.0, INF)) if rnd.random() < 0.5 else c for c in tab])
        for sc, tab in random_factors(rnd, n, ks)
    ]
    order: list[int] = []
    assert elim_cost(ks, adjacency(factors), 1 << 16, 1 << 20, order) >= 0
    el = OrderedEliminator(ks, factors, 0.0, order)
    el.run(None)
    assume_finite = el.constant < INF
    if assume_finite:
        va: dict[int, int] = {}
        vb: dict[int, int] = {}
        decode(el.log, ks, va)
        _reference_decode(el.log, ks, vb)
        assert va == vb
