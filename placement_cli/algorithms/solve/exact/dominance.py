"""Dead-end elimination (Desmet et al. 1992, in Goldstein's 1994 form): a value goes
when another value of the same block matches or beats it in every context,
ua - ub + sum over neighbours of min over the neighbour's live values of
(t_a - t_b) >= 0 (the soft neighbourhood substitutability of weighted CSPs). Each
removal keeps an optimal assignment. `remove_dominated` does it on a whole core before
the dynamic programming, `mask_dominated` in place around a search node's conditioned
block.

References:

* J. Desmet, M. De Maeyer, B. Hazes, I. Lasters. The dead-end elimination theorem and
  its use in protein side-chain positioning. Nature 356, 1992.
* R. F. Goldstein. Efficient rotamer elimination applied to protein side-chains and
  related spin glasses. Biophysical Journal 66, 1994.
"""

from __future__ import annotations

import time
from operator import add as _add

from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.model import INF, Factor, Model


def _dominated(ua: float, ub: float, rows: list[tuple[list[float], list[float]]]) -> bool:
    """Value a can go: value b costs no more in every context of the neighbours (and is
    feasible wherever a is). rows: per neighbour, a's and b's costs over its live values."""
    if ua == INF:
        return True
    if ub == INF:
        return False
    total = ua - ub
    for ra, rb in rows:
        m = INF
        for x, y in zip(ra, rb, strict=True):
            if x == INF:
                continue  # a is infeasible there: nothing to compare
            if y == INF:
                return False  # b is infeasible where a is not
            if x - y < m:
                m = x - y
        if m == INF:
            return True  # a is infeasible with every value of this neighbour
        total += m
    return total >= 0


def remove_dominated(
    ks: dict[int, int], factors: list[Factor], n: int, deadline: float = INF, rounds: int = 4
) -> tuple[Model, dict[int, list[int]], list[int], int] | None:
    """Dead-end elimination on a pairwise core: drop every value that another value of
    the same block matches or beats in every context (soft neighbourhood substitution).
    Each removal keeps at least one optimal assignment, so the optimum is unchanged; of
    two interchangeable values the higher target goes. Blocks left with one value are
    conditioned into their neighbours.

    Returns the new model (constant: what the single-value blocks contribute), the kept
    old values per block, the blocks fixed to their only value, and how many values went;
    None when nothing can go.
    """
    unary: dict[int, list[float]] = {}
    pair: list[tuple[int, int, list[float]]] = []
    ks = {v: ks[v] for v in sorted({v for sc, _ in factors for v in sc})}
    nb: dict[int, list[tuple[int, list[float], bool]]] = {v: [] for v in ks}
    for sc, tab in factors:
        if len(sc) == 1:
            unary[sc[0]] = tab
        else:
            a, b = sc
            pair.append((a, b, tab))
            nb[a].append((b, tab, True))
            nb[b].append((a, tab, False))
    alive = {v: list(range(k)) for v, k in ks.items()}
    removed = 0
    for _ in range(rounds):
        if time.monotonic() > deadline:
            break
        changed = False
        for x in ks:
            ax = alive[x]
            if len(ax) < 2:
                continue
            kx = ks[x]
            ux = unary[x]

            def row(i: int, x: int = x, kx: int = kx) -> list[list[float]]:
                out = []
                for y, tab, x_rows in nb[x]:
                    ky = ks[y]
                    if x_rows:
                        out.append([tab[i * ky + j] for j in alive[y]])
                    else:
                        out.append([tab[j * kx + i] for j in alive[y]])
                return out

            rows = {i: row(i) for i in ax}
            for a in reversed(list(ax)):
                for b in ax:
                    if b != a and _dominated(
                        ux[a], ux[b], list(zip(rows[a], rows[b], strict=True))
                    ):
                        ax.remove(a)
                        removed += 1
                        changed = True
                        break
        if not changed:
            break
    if not removed:
        return None
    new_ks: dict[int, int] = {}
    new_unary: list[list[float] | None] = [None] * n
    kept_unary: dict[int, list[float]] = {}  # (the same lists, by block)
    fixed: list[int] = []
    constant = 0.0
    for v in ks:
        av = alive[v]
        u = unary[v]
        if len(av) == 1:
            fixed.append(v)
        else:
            new_ks[v] = len(av)
        new_unary[v] = kept_unary[v] = [u[i] for i in av]
    pairs: dict[tuple[int, int], list[float]] = {}
    for a, b, tab in pair:
        kb = ks[b]
        t = [tab[i * kb + j] for i in alive[a] for j in alive[b]]
        if a in new_ks and b in new_ks:
            pairs[(a, b)] = t
        elif a in new_ks:  # b has one value: a column
            new_unary[a] = kept_unary[a] = list(map(_add, kept_unary[a], t))
        elif b in new_ks:
            new_unary[b] = kept_unary[b] = list(map(_add, kept_unary[b], t))
        else:
            constant += t[0]
    for v in fixed:
        constant += kept_unary[v][0]
        new_unary[v] = None
    model = Model([], new_ks, new_unary, pairs, constant, {}, 0)
    return model, alive, fixed, removed


def mask_dominated(core: Core, xs: list[int]) -> list[tuple[int, int]] | None:
    """Dead-end elimination in place (a dominated value's unary becomes infinite) for the
    blocks `xs`; returns the blocks left with one live value, or None if one has none."""
    sizes, un = core.sizes, core.un
    forced = []
    for x in xs:
        ux = un[x]
        if ux is None:
            continue
        kx = sizes[x]
        vals = [i for i in range(kx) if ux[i] < INF]
        if not vals:
            return None
        if len(vals) > 1:
            ctx = []
            for y, t in core.tables(x).items():
                ky = sizes[y]
                uy = un[y]
                assert uy is not None
                live_y = [j for j in range(ky) if uy[j] < INF]
                ctx.append((t, ky, live_y, x < y))
            rows = {}
            for i in vals:
                r = []
                for t, ky, live_y, x_rows in ctx:
                    if x_rows:
                        r.append([t[i * ky + j] for j in live_y])
                    else:
                        r.append([t[j * kx + i] for j in live_y])
                rows[i] = r
            for a in reversed(list(vals)):
                for b in vals:
                    if b != a and _dominated(
                        ux[a], ux[b], list(zip(rows[a], rows[b], strict=True))
                    ):
                        ux[a] = INF
                        vals.remove(a)
                        break
        if len(vals) == 1:
            forced.append((x, vals[0]))
    return forced
