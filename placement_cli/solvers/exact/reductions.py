"""The PBQP reductions R0, R1, R2 (exact under min-sum algebra) and their
back-substitution."""

from __future__ import annotations

from operator import add as _add

from placement_cli.solvers.exact.model import INF, Factor, _Model

Reduction = tuple[int, int, int, list[float], list[float] | None, list[float] | None]


def _reduce(model: _Model, n: int) -> tuple[float, list[Reduction], list[Factor], list[int]]:
    """PBQP reductions R0, R1, R2 on the pairwise model until every block left has three
    or more neighbours: exact under min-sum algebra, and far cheaper than the generic
    elimination for the bulk of a structured plan (trees and series-parallel parts).

    Returns the constant, the reduction log, the factors over the blocks left (the core)
    and the counts (R0, R1, R2).
    """
    ks = model.ks
    unary = model.unary
    nbr: list[dict[int, list[float]] | None] = [None] * n
    for b in ks:
        nbr[b] = {}
    for (a, b), tab in model.pairs.items():
        nbr[a][b] = tab  # type: ignore[index]
        nbr[b][a] = tab  # type: ignore[index]
    counts = [0, 0, 0]
    const, log = _reduce_core(ks, unary, nbr, list(ks), n, model.constant, counts)
    rest = [b for b in ks if nbr[b] is not None]
    factors: list[Factor] = []
    for a in rest:
        for b, tab in nbr[a].items():  # type: ignore[union-attr]
            if a < b:
                factors.append(((a, b), tab))
    for a in rest:
        factors.append(((a,), unary[a]))  # type: ignore[arg-type]
    return const, log, factors, counts


def _reduce_core(
    ks: dict[int, int] | list[int],
    unary: list[list[float] | None],
    nbr: list[dict[int, list[float]] | None],
    cand: list[int],
    n: int,
    const: float,
    counts: list[int],
) -> tuple[float, list[Reduction]]:
    """R0/R1/R2 in place on per-block unaries and neighbour tables (a pair's table has
    the lower block's values as rows and is shared by both ends); eliminated blocks get
    None. Degrees never grow under these three rules, so a block enters the queue once.
    The log keeps the eliminated block's unary and tables rather than argmin tables:
    back-substitution recomputes the one argmin it needs, with the same sums in the same
    order, so the forward pass only takes minima. Stops early at an infinite constant.
    """
    queued = bytearray(n)
    queue = [b for b in cand if len(nbr[b]) <= 2]  # type: ignore[arg-type]
    for b in queue:
        queued[b] = 1
    log: list[Reduction] = []
    add = _add
    for x in queue:
        nx = nbr[x]
        ux = unary[x]
        kx = len(ux)  # type: ignore[arg-type]
        d = len(nx)  # type: ignore[arg-type]
        nbr[x] = None
        unary[x] = None
        if d == 0:
            m = min(ux)  # type: ignore[arg-type]
            const += m
            log.append((x, -1, -1, ux, None, None))  # type: ignore[arg-type]
            counts[0] += 1
            if m == INF:
                break
            continue
        if d == 1:
            ((y, t),) = nx.items()  # type: ignore[union-attr]
            ky = ks[y]
            uy = unary[y]
            if x < y:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j::ky]))  # type: ignore[index, arg-type]
            else:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j * kx : j * kx + kx]))  # type: ignore[index, arg-type]
            ny = nbr[y]
            del ny[x]  # type: ignore[union-attr]
            log.append((x, y, -1, ux, t, None))  # type: ignore[arg-type]
            counts[1] += 1
            if len(ny) <= 2 and not queued[y]:  # type: ignore[arg-type]
                queued[y] = 1
                queue.append(y)
            continue
        (y, ty), (z, tz) = sorted(nx.items())  # type: ignore[union-attr]
        ky, kz = ks[y], ks[z]
        if x < y:
            a_rows = [list(map(add, ux, ty[j::ky])) for j in range(ky)]  # type: ignore[arg-type]
        else:
            a_rows = [list(map(add, ux, ty[j * kx : j * kx + kx])) for j in range(ky)]  # type: ignore[arg-type]
        if x < z:
            cols = [tz[c::kz] for c in range(kz)]
        else:
            cols = [tz[c * kx : c * kx + kx] for c in range(kz)]
        tab = [min(map(add, a, c)) for a in a_rows for c in cols]
        ny, nz = nbr[y], nbr[z]
        del ny[x]  # type: ignore[union-attr]
        del nz[x]  # type: ignore[union-attr]
        old = ny.get(z)  # type: ignore[union-attr]
        if old is not None:
            tab = list(map(add, old, tab))
        ny[z] = tab  # type: ignore[index]
        nz[y] = tab  # type: ignore[index]
        log.append((x, y, z, ux, ty, tz))  # type: ignore[arg-type]
        counts[2] += 1
        if len(ny) <= 2 and not queued[y]:  # type: ignore[arg-type]
            queued[y] = 1
            queue.append(y)
        if len(nz) <= 2 and not queued[z]:  # type: ignore[arg-type]
            queued[z] = 1
            queue.append(z)
    return const, log


def _undo_reductions(log: list[Reduction], ks: dict[int, int] | list[int], val: dict[int, int]) -> None:
    """Back-substitute the reductions in reverse, each block taking the lowest value
    that reaches the minimum given its (already decided) neighbours."""
    add = _add
    for x, y, z, ux, ty, tz in reversed(log):
        kx = len(ux)
        if y < 0:
            s = ux
        else:
            j = val[y]
            col = ty[j :: ks[y]] if x < y else ty[j * kx : j * kx + kx]  # type: ignore[index]
            s = list(map(add, ux, col))
            if z >= 0:
                c = val[z]
                col = tz[c :: ks[z]] if x < z else tz[c * kx : c * kx + kx]  # type: ignore[index]
                s = list(map(add, s, col))
        val[x] = s.index(min(s))
