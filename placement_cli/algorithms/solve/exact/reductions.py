"""The PBQP reductions R0, R1, R2 (exact under min-sum algebra) and their
back-substitution.

R0 decides a block without neighbours on its own, R1 folds a block with one neighbour
into that neighbour's costs, R2 turns a block with two neighbours into one table between
them (the rules of the PBQP solver of Scholz & Eckstein 2002, made exact: the heuristic
rule RN that PBQP applies to blocks of degree three or more is the search's branching
instead, see `search.py`). R1 and R2 are the elimination of one variable of degree one or
two in bucket elimination (Dechter 1999): the same minima, done on the neighbour tables
in place instead of on factor lists. The 2- and 3-value kernels are written out (they
predate the decision to add no more hand-unrolled code; measured 5 to 14 times faster
than the generic maps on these table sizes). They stay: with the generic forms alone
(`_r2_any`, the `map` R1, the generic back-substitution) the structured benchmark's 30
plans took 156 to 176 ms of CPU against 122 to 133 ms (+28 to 32%), same results.

References:

* B. Scholz, E. Eckstein. Register allocation for irregular architectures. LCTES 2002.
* L. Hames, B. Scholz. Nearly optimal register allocation with PBQP. JMLC 2006.
* R. Dechter. Bucket elimination: a unifying framework for reasoning. Artificial
  Intelligence 113, 1999.
"""

from __future__ import annotations

from operator import add as _add
from typing import NamedTuple

from placement_cli.algorithms.solve.exact.core import Core, Sizes, Tables
from placement_cli.algorithms.solve.exact.model import INF, Factor, Model


class Reduction(NamedTuple):
    """One reduction, as `undo_reductions` replays it: `block` left the core with its
    unary costs `unary` and its tables to the neighbours it had then (R0: none; R1:
    `first`; R2: `first` < `second`, whose table `reduce_model` summed into theirs)."""

    block: int
    first: int  # its neighbour's block, or -1 (R0)
    second: int  # its second neighbour's block, or -1 (R0, R1)
    unary: list[float]
    first_table: list[float] | None  # the pair table with `first` (None: R0)
    second_table: list[float] | None  # the pair table with `second` (None: R0, R1)


def reduce_model(
    model: Model,
    n: int,
    adj: dict[int, set[int]] | None = None,
) -> tuple[float, list[Reduction], list[Factor], list[int]]:
    """PBQP reductions R0, R1, R2 on the pairwise model until every block left has three
    or more neighbours: exact under min-sum algebra, and far cheaper than the generic
    elimination for the bulk of a structured plan (trees and series-parallel parts).

    Returns the constant, the reduction log, the factors over the blocks left (the core)
    and the counts (R0, R1, R2). `adj`, when given, receives the core's interaction
    graph (what `adjacency` would derive from those factors: the neighbour tables
    know it already).
    """
    ks = model.ks
    unary = model.unary
    nbr = model.nbr
    if nbr is not None:
        model.nbr = None  # (the reductions change them in place)
    else:
        nbr = [None] * n
        for b in ks:
            nbr[b] = {}
        for (a, b), tab in model.pairs.items():
            na, nb_ = nbr[a], nbr[b]
            assert na is not None and nb_ is not None
            na[b] = tab
            nb_[a] = tab
    core = Core(ks, unary, nbr)
    counts = [0, 0, 0]
    const, log = reduce_core(core, list(ks), n, model.constant, counts)
    factors: list[Factor] = []
    rest: list[tuple[int, Tables, list[float]]] = []
    for b in ks:
        nx, ux = nbr[b], unary[b]
        if nx is not None and ux is not None:
            rest.append((b, nx, ux))
    for a, na, _ in rest:
        for b, tab in na.items():
            if a < b:
                factors.append(((a, b), tab))
    for a, _, ua in rest:
        factors.append(((a,), ua))
    if adj is not None:
        for a, na, _ in rest:
            adj[a] = set(na)
    return const, log, factors, counts


def reduce_core(
    core: Core,
    cand: list[int],
    n: int,
    const: float,
    counts: list[int],
) -> tuple[float, list[Reduction]]:
    """R0/R1/R2 in place on the core's unaries and neighbour tables, starting from the
    blocks `cand` (`n`: one more than the highest block number); eliminated blocks
    leave the core (None). Degrees never grow under these three rules, so a block
    enters the queue once. The log keeps the eliminated block's unary and tables rather
    than argmin tables: back-substitution recomputes the one argmin it needs, with the
    same sums in the same order, so the forward pass only takes minima. Stops early at
    an infinite constant.
    """
    ks, unary, nbr = core.sizes, core.un, core.nb
    queued = bytearray(n)
    queue = []
    for b in cand:
        nx = nbr[b]
        if nx is not None and len(nx) <= 2:
            queue.append(b)
            queued[b] = 1
    log: list[Reduction] = []
    add = _add
    for x in queue:
        nx = nbr[x]
        ux = unary[x]
        assert nx is not None and ux is not None
        kx = len(ux)
        d = len(nx)
        nbr[x] = None
        unary[x] = None
        if d == 0:
            m = min(ux)
            const += m
            log.append(Reduction(x, -1, -1, ux, None, None))
            counts[0] += 1
            if m == INF:
                break
            continue
        if d == 1:
            ((y, t),) = nx.items()
            ky = ks[y]
            uy = unary[y]
            ny = nbr[y]
            assert uy is not None and ny is not None
            if kx == 2 and ky == 2:
                # (`_r1_two`'s 2 x 2 case inlined: the commonest step)
                a0, a1 = ux
                if x < y:
                    t0, t1, t2, t3 = t
                else:
                    t0, t2, t1, t3 = t
                p = a0 + t0
                q = a1 + t2
                uy[0] += p if p <= q else q
                p = a0 + t1
                q = a1 + t3
                uy[1] += p if p <= q else q
            elif kx == 2:
                _r1_two(ux, t, uy, ky, x < y)
            elif kx == 3:
                _r1_three(ux, t, uy, ky, x < y)
            elif x < y:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j::ky]))
            else:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j * kx : j * kx + kx]))
            del ny[x]
            log.append(Reduction(x, y, -1, ux, t, None))
            counts[1] += 1
            if len(ny) <= 2 and not queued[y]:
                queued[y] = 1
                queue.append(y)
            continue
        (y, ty), (z, tz) = nx.items()
        if y > z:
            y, ty, z, tz = z, tz, y, ty
        ky, kz = ks[y], ks[z]
        if kx == 2:
            tab = _r2_two(ux, ty, tz, ky, kz, x < y, x < z)
        elif kx == 3:
            tab = _r2_three(ux, ty, tz, ky, kz, x < y, x < z)
        else:
            tab = _r2_any(ux, ty, tz, kx, ky, kz, x < y, x < z)
        ny, nz = nbr[y], nbr[z]
        assert ny is not None and nz is not None
        del ny[x]
        del nz[x]
        old = ny.get(z)
        if old is not None:
            tab = list(map(add, old, tab))
        ny[z] = tab
        nz[y] = tab
        log.append(Reduction(x, y, z, ux, ty, tz))
        counts[2] += 1
        if len(ny) <= 2 and not queued[y]:
            queued[y] = 1
            queue.append(y)
        if len(nz) <= 2 and not queued[z]:
            queued[z] = 1
            queue.append(z)
    return const, log


# The steps' sums, specialised by x's domain size (2 and 3: nearly every block of a
# placement plan). Each is the element-by-element form written out: cell (j, c) is the
# minimum over x's values i, in order, of (x's unary[i] + x-y[i, j]) + x-z[i, c], and
# `p if p <= q else q` is `min(p, q)` (it keeps p unless q < p): the same additions and
# the same float. Measured 5 to 14 times faster than the generic C-level maps on tables
# of 2 to 9 cells, where building the maps and slices cost more than the arithmetic.


def _rows(t: list[float], kx: int, k: int, x_rows: bool) -> list[list[float]]:
    """x's rows of a pair table with the other side's k values: x's values as the rows
    (`x_rows`) or as the columns.

    >>> _rows([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 2, 3, True), _rows([0.0, 1.0, 2.0, 3.0], 2, 2, False)
    ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[0.0, 2.0], [1.0, 3.0]])
    """
    if x_rows:
        return [t[i * k : i * k + k] for i in range(kx)]
    return [t[i::kx] for i in range(kx)]


def _r1_two(ux: list[float], t: list[float], uy: list[float], ky: int, x_rows: bool) -> None:
    """R1 for a 2-valued x: uy[j] += min over i of ux[i] + t[i, j], in place.

    >>> uy = [0.0, 10.0]
    >>> _r1_two([1.0, 2.0], [5.0, 0.0, 3.0, 1.0], uy, 2, True); uy
    [5.0, 11.0]
    """
    a0, a1 = ux
    if ky == 2:
        if x_rows:
            t0, t1, t2, t3 = t
        else:
            t0, t2, t1, t3 = t
        p = a0 + t0
        q = a1 + t2
        uy[0] += p if p <= q else q
        p = a0 + t1
        q = a1 + t3
        uy[1] += p if p <= q else q
        return
    r0, r1 = (t[:ky], t[ky:]) if x_rows else (t[0::2], t[1::2])
    for j in range(ky):
        p = a0 + r0[j]
        q = a1 + r1[j]
        uy[j] += p if p <= q else q


def _r1_three(ux: list[float], t: list[float], uy: list[float], ky: int, x_rows: bool) -> None:
    """R1 for a 3-valued x (see `_r1_two`).

    >>> uy = [0.0, 10.0]
    >>> _r1_three([1.0, 2.0, 0.0], [5.0, 0.0, 3.0, 1.0, 9.0, 9.0], uy, 2, True); uy
    [5.0, 11.0]
    """
    a0, a1, a2 = ux
    if ky == 2:
        if x_rows:
            t0, t1, t2, t3, t4, t5 = t
        else:
            t0, t2, t4, t1, t3, t5 = t
        p = a0 + t0
        q = a1 + t2
        r = a2 + t4
        uy[0] += (p if p <= r else r) if p <= q else (q if q <= r else r)
        p = a0 + t1
        q = a1 + t3
        r = a2 + t5
        uy[1] += (p if p <= r else r) if p <= q else (q if q <= r else r)
        return
    r0, r1, r2 = _rows(t, 3, ky, x_rows)
    for j in range(ky):
        p = a0 + r0[j]
        q = a1 + r1[j]
        r = a2 + r2[j]
        uy[j] += (p if p <= r else r) if p <= q else (q if q <= r else r)


def _r2_two(
    ux: list[float],
    ty: list[float],
    tz: list[float],
    ky: int,
    kz: int,
    x_rows_y: bool,
    x_rows_z: bool,
) -> list[float]:
    """R2 for a 2-valued x: the new y-z table, y's values as rows.

    >>> _r2_two([1.0, 2.0], [0.0, 3.0, 1.0, 2.0], [5.0, 1.0, 0.0, 4.0], 2, 2, True, True)
    [3.0, 2.0, 4.0, 5.0]
    """
    a0, a1 = ux
    if ky == 2 and kz == 2:
        if x_rows_y:
            y0, y1, y2, y3 = ty
        else:
            y0, y2, y1, y3 = ty
        if x_rows_z:
            z0, z1, z2, z3 = tz
        else:
            z0, z2, z1, z3 = tz
        p = a0 + y0
        q = a1 + y2
        r = a0 + y1
        w = a1 + y3
        c0 = p + z0
        c1 = q + z2
        c2 = p + z1
        c3 = q + z3
        c4 = r + z0
        c5 = w + z2
        c6 = r + z1
        c7 = w + z3
        return [
            c0 if c0 <= c1 else c1,
            c2 if c2 <= c3 else c3,
            c4 if c4 <= c5 else c5,
            c6 if c6 <= c7 else c7,
        ]
    # (Slices inline: a helper's call cost more than the slicing.)
    ry0, ry1 = (ty[:ky], ty[ky:]) if x_rows_y else (ty[0::2], ty[1::2])
    zs = list(zip(tz[:kz], tz[kz:]) if x_rows_z else zip(tz[0::2], tz[1::2]))  # noqa: B905
    return [
        c if (c := p + z0) <= (d := q + z1) else d
        for p, q in zip([a0 + v for v in ry0], [a1 + v for v in ry1], strict=True)
        for z0, z1 in zs
    ]


def _r2_three(
    ux: list[float],
    ty: list[float],
    tz: list[float],
    ky: int,
    kz: int,
    x_rows_y: bool,
    x_rows_z: bool,
) -> list[float]:
    """R2 for a 3-valued x (see `_r2_two`).

    >>> _r2_three([1.0, 2.0, 0.0], [0.0, 3.0, 1.0, 2.0, 9.0, 0.0], [5.0, 1.0, 0.0, 4.0, 1.0, 1.0], 2, 2, True, True)
    [3.0, 2.0, 1.0, 1.0]
    """
    a0, a1, a2 = ux
    if ky == 2 and kz == 2:
        # x's value i, y's j: y<i><j>; z's c: z<i><c>
        if x_rows_y:
            y00, y01, y10, y11, y20, y21 = ty
        else:
            y00, y10, y20, y01, y11, y21 = ty
        if x_rows_z:
            z00, z01, z10, z11, z20, z21 = tz
        else:
            z00, z10, z20, z01, z11, z21 = tz
        out = []
        for p, q, r in ((a0 + y00, a1 + y10, a2 + y20), (a0 + y01, a1 + y11, a2 + y21)):
            c = p + z00
            d = q + z10
            e = r + z20
            out.append((c if c <= e else e) if c <= d else (d if d <= e else e))
            c = p + z01
            d = q + z11
            e = r + z21
            out.append((c if c <= e else e) if c <= d else (d if d <= e else e))
        return out
    y0, y1, y2 = _rows(ty, 3, ky, x_rows_y)
    zs = list(zip(*_rows(tz, 3, kz, x_rows_z), strict=True))
    tab: list[float] = []
    app = tab.append
    for j in range(ky):
        p = a0 + y0[j]
        q = a1 + y1[j]
        r = a2 + y2[j]
        for z0, z1, z2 in zs:
            c = p + z0
            d = q + z1
            e = r + z2
            app((c if c <= e else e) if c <= d else (d if d <= e else e))
    return tab


def _r2_any(
    ux: list[float],
    ty: list[float],
    tz: list[float],
    kx: int,
    ky: int,
    kz: int,
    x_rows_y: bool,
    x_rows_z: bool,
) -> list[float]:
    """R2 for any x (the generic form, C-level maps per cell).

    >>> _r2_any([1.0, 2.0], [0.0, 3.0, 1.0, 2.0], [5.0, 1.0, 0.0, 4.0], 2, 2, 2, True, True)
    [3.0, 2.0, 4.0, 5.0]
    """
    add = _add
    if x_rows_y:
        a_rows = [list(map(add, ux, ty[j::ky])) for j in range(ky)]
    else:
        a_rows = [list(map(add, ux, ty[j * kx : j * kx + kx])) for j in range(ky)]
    if x_rows_z:
        cols = [tz[c::kz] for c in range(kz)]
    else:
        cols = [tz[c * kx : c * kx + kx] for c in range(kz)]
    return [min(map(add, a, c)) for a in a_rows for c in cols]


def undo_reductions(log: list[Reduction], ks: Sizes, val: dict[int, int]) -> None:
    """Back-substitute the reductions in reverse, each block taking the lowest value
    that reaches the minimum given its (already decided) neighbours. For 2- and 3-valued
    blocks the sums are written out (the same additions, the lowest index on ties, as
    `s.index(min(s))`).

    >>> val = {1: 1}
    >>> r1 = Reduction(0, 1, -1, [1.0, 0.0], [5.0, 3.0, 0.0, 2.0], None)
    >>> undo_reductions([r1], [2, 2], val); val
    {1: 1, 0: 1}
    """
    add = _add
    for x, y, z, ux, ty, tz in reversed(log):
        kx = len(ux)
        if y < 0:
            s = ux
            val[x] = s.index(min(s))
            continue
        assert ty is not None
        if kx == 2:
            j = val[y]
            if x < y:
                ky = ks[y]
                p = ux[0] + ty[j]
                q = ux[1] + ty[ky + j]
            else:
                p = ux[0] + ty[2 * j]
                q = ux[1] + ty[2 * j + 1]
            if tz is not None:
                c = val[z]
                if x < z:
                    kz = ks[z]
                    p = p + tz[c]
                    q = q + tz[kz + c]
                else:
                    p = p + tz[2 * c]
                    q = q + tz[2 * c + 1]
            val[x] = 0 if p <= q else 1
            continue
        elif kx == 3:
            j = val[y]
            if x < y:
                ky = ks[y]
                p = ux[0] + ty[j]
                q = ux[1] + ty[ky + j]
                r = ux[2] + ty[2 * ky + j]
            else:
                p = ux[0] + ty[3 * j]
                q = ux[1] + ty[3 * j + 1]
                r = ux[2] + ty[3 * j + 2]
            if tz is not None:
                c = val[z]
                if x < z:
                    kz = ks[z]
                    p = p + tz[c]
                    q = q + tz[kz + c]
                    r = r + tz[2 * kz + c]
                else:
                    p = p + tz[3 * c]
                    q = q + tz[3 * c + 1]
                    r = r + tz[3 * c + 2]
            val[x] = 0 if p <= q and p <= r else 1 if q <= r else 2
            continue
        else:
            j = val[y]
            col = ty[j :: ks[y]] if x < y else ty[j * kx : j * kx + kx]
            s = list(map(add, ux, col))
            if tz is not None:
                c = val[z]
                col = tz[c :: ks[z]] if x < z else tz[c * kx : c * kx + kx]
                s = list(map(add, s, col))
        val[x] = s.index(min(s))
