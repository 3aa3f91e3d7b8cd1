"""Min-sum diffusion on a whole core at once, with numpy: the root of the search.

The root of the search spends dozens to hundreds of diffusion sweeps over the whole core
(measured: 60 to 70% of the exact method's time on random cores of 50 to 130 blocks with 5
to 8 targets), and a sweep in pure Python rebuilds every table twice. Here the core is
padded to K x K tables in one array, and a sweep updates one colour class of a colouring
of the interaction graph (DSatur, or greedy in block order on large cores) at a time:
blocks of a class share no table, so their block-coordinate updates commute and a class
is one vectorised step. It is the same
equivalence-preserving ascent (every assignment keeps its cost), in another block order.
Padded values cost `inf` and never take part. The arrays are laid out class by class, so
a class is read and written through slices. Search nodes of a large enough core convert
their list form to arrays and back (`write_back`).

References: the diffusion is Werner 2007's (see `bounds.py`), run in parallel over the
colour classes of a graph colouring (blocks sharing no table update independently);
the over-relaxed step (`_sweep_relaxed`) moves each block `relax` times the diffusion's
step (successive over-relaxation). The colouring is DSatur:

* D. Brelaz. New methods to color the vertices of a graph. Communications of the ACM
  22(4), 1979.
"""

from __future__ import annotations

import math
from heapq import heapify, heappop, heappush
from typing import Any

from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.model import INF


def numpy_or_none() -> Any:
    """numpy when it can be imported, else None (the pure-Python sweeps are used then)."""
    try:
        # Lazy: numpy (~60 ms, measured), optional, only when a sweep is dense enough.
        import numpy
    except ImportError:  # pragma: no cover - numpy is installed with the bench extras
        return None
    return numpy


def dsatur_colouring(adj: list[list[int]]) -> list[int]:
    """A colouring of the graph `adj` (neighbour lists by position) by DSatur: the next
    block coloured is the one whose neighbours already show the most distinct colours
    (ties: more neighbours, then the lowest position), with the least colour none of
    them has. Deterministic. On the random cores measured (114 to 600 blocks) it needs 3
    classes where the greedy colouring in block order needed 4 or 5, the last ones a
    handful of blocks: a sweep pays a fixed numpy overhead per class.

    >>> dsatur_colouring([[1], [0, 2], [1, 3], [2]])  # a path: two classes
    [1, 0, 1, 0]
    >>> dsatur_colouring([[1, 2], [0, 2], [0, 1], []])  # a triangle and a lone block
    [0, 1, 2, 0]
    """
    m = len(adj)
    colour = [-1] * m
    seen: list[set[int]] = [set() for _ in range(m)]
    heap = [(0, -len(adj[i]), i) for i in range(m)]
    heapify(heap)
    while heap:
        ns, nd, i = heappop(heap)
        if colour[i] >= 0 or -ns != len(seen[i]):
            continue  # coloured already, or a stale entry (its saturation grew since)
        used = seen[i]
        c = 0
        while c in used:
            c += 1
        colour[i] = c
        for j in adj[i]:
            if colour[j] < 0 and c not in seen[j]:
                seen[j].add(c)
                heappush(heap, (-len(seen[j]), -len(adj[j]), j))
    return colour


class DenseCore:
    """A pairwise core as padded arrays, reparametrised through messages.

    `T0[e, i, j]` is edge e = (a, b)'s table as given (a < b, a's values as rows) and
    never changes; arc 2e is a -> b, arc 2e+1 is b -> a, and `M[arc, i]` is what the
    diffusion has moved from the table onto the arc's own block: the current table is
    `T0[e, i, j] - M[2e, i] - M[2e+1, j]`, the current unaries `U`. A sweep therefore
    writes one K-vector per arc instead of a K x K table per edge. `M` takes finite
    values or `-inf` (a row the diffusion made infinite), never `+inf`, so no
    `inf - inf` arises in the tables.

    Two blocks whose cheap values clash (optimum 2; the minima alone say 0):

    >>> un = [[0.0, 2.0], [0.0, 2.0]]
    >>> nb = [{1: [2.0, 0.0, 0.0, 2.0]}, {0: [2.0, 0.0, 0.0, 2.0]}]
    >>> d = DenseCore(numpy_or_none(), Core([2, 2], un, nb), [0, 1])
    >>> d.bound(0.0)
    0.0
    >>> for _ in range(30):
    ...     d.sweep()
    >>> round(d.bound(0.0), 6)
    2.0
    """

    def __init__(
        self,
        np: Any,
        core: Core,
        xs: list[int],
        relax: float = 1.0,
        dsatur: bool = True,
    ) -> None:
        sizes = core.sizes
        # Every block of `xs` is in the core: its unary and neighbour tables, by position.
        nbs = [core.tables(x) for x in xs]
        self.np = np
        self.relax = relax
        self.xs = xs
        self.sizes = sizes
        kmax = max(sizes[x] for x in xs)
        self.kmax = kmax
        m = len(xs)
        pos = {x: i for i, x in enumerate(xs)}
        rows = []
        for x in xs:
            u = core.unary(x)
            rows.append(u if sizes[x] == kmax else u + [INF] * (kmax - sizes[x]))
        U = np.array(rows, dtype=float).reshape(m, kmax)
        # The tables, grouped by their shape (the two blocks' domain sizes): one array
        # per shape, written into the padded `T0` with one slice assignment, instead of
        # padding row by row in Python (on cores of 120 to 300 blocks most blocks have
        # fewer values than the widest: that loop was a quarter of this constructor).
        # Each arc (2e: a -> b, 2e + 1: b -> a) goes to the arcs its block owns, in
        # edge order.
        edges: list[tuple[int, int]] = []
        shapes: dict[tuple[int, int], tuple[list[int], list[float]]] = {}
        owned: list[list[int]] = [[] for _ in range(m)]
        ea_pos: list[int] = []
        eb_pos: list[int] = []
        for i, (x, nx) in enumerate(zip(xs, nbs, strict=True)):
            kx = sizes[x]
            for y, t in nx.items():
                if x < y:
                    e = len(edges)
                    edges.append((x, y))
                    j = pos[y]
                    ea_pos.append(i)
                    eb_pos.append(j)
                    owned[i].append(2 * e)
                    owned[j].append(2 * e + 1)
                    grp = shapes.get((kx, sizes[y]))
                    if grp is None:
                        grp = shapes[(kx, sizes[y])] = ([], [])
                    grp[0].append(e)
                    grp[1].extend(t)
        n_e = len(edges)
        T0 = np.full((n_e, kmax, kmax), INF)
        for (ka, kb), (es, flat) in shapes.items():
            T0[es, :ka, :kb] = np.array(flat, dtype=float).reshape(len(es), ka, kb)
        AT = np.empty((2 * n_e, kmax, kmax))
        AT[0::2] = T0
        AT[1::2] = T0.transpose(0, 2, 1)
        self.T0, self.edges, self.pos = T0, edges, pos
        # The tables with the partner's values first (j, e, i): numpy reduces over a
        # leading axis by elementwise minima of contiguous slices, about 4 times faster
        # than over a short last axis (the same minima, exactly).
        self.T0T = np.ascontiguousarray(T0.transpose(2, 0, 1))
        # Blocks of one class share no table, so their updates commute and a class is
        # one vectorised step. With `dsatur`, a DSatur colouring (`dsatur_colouring`): 3 classes
        # on the random cores measured, where the greedy colouring in block order (each
        # block takes the least colour none of its lower neighbours has) left 4 or 5, so
        # fewer numpy calls per sweep. Blocks without a neighbour have nothing to diffuse.
        if dsatur:
            colour = dsatur_colouring([[pos[y] for y in nx] for nx in nbs])
        else:
            colour = [0] * m
            for i, (x, nx) in enumerate(zip(xs, nbs, strict=True)):
                used = {colour[pos[y]] for y in nx if y < x}
                c = 0
                while c in used:
                    c += 1
                colour[i] = c
        # One pass puts each block in its class (in block order): not one scan per class.
        buckets: list[list[int]] = [[] for _ in range(max(colour) + 1 if colour else 0)]
        for i in range(m):
            if owned[i]:
                buckets[colour[i]].append(i)
        groups = [g for g in buckets if g]
        # The arrays are laid out class by class: a class's blocks are consecutive rows
        # of `U` and the arcs they own consecutive rows of `M`, so a sweep reads and
        # writes each class through slices (views) instead of scattered gathers and
        # scatters. `perm` is the row order (positions in `xs`), blocks without a
        # neighbour last; only the partners' arcs stay a gather. The arithmetic, and so
        # every value, is the same as in `xs` order.
        perm = [i for g in groups for i in g]
        seen = set(perm)
        perm += [i for i in range(m) if i not in seen]
        inv = [0] * m
        for r, i in enumerate(perm):
            inv[i] = r
        self.perm = perm
        self.inv = np.array(inv, dtype=np.intp)
        self.ixs = [xs[i] for i in perm]
        arc_order = [a for g in groups for i in g for a in owned[i]]
        anew = [0] * (2 * n_e)
        for r, a in enumerate(arc_order):
            anew[a] = r
        anew_np = np.array(anew, dtype=np.intp)
        # Arc 2e's and 2e+1's rows in `M` (edge e's two directions).
        self.fa = anew_np[0::2]
        self.fb = anew_np[1::2]
        self.U = U[np.array(perm, dtype=np.intp)] if m else U
        self.M = np.zeros((2 * n_e, kmax))
        self.ea = self.inv[np.array(ea_pos, dtype=np.intp)]
        self.eb = self.inv[np.array(eb_pos, dtype=np.intp)]
        # `bound` adds the row minima of the tables a block is the lower block of to
        # its unary one edge at a time, in edge order (as `np.add.at` did, so the sums
        # are bit for bit the same), but rank by rank: the j-th such edge of every block
        # at once (rows distinct within a rank). Measured: `np.add.at` was a third of
        # the bound on 1,000-block cores.
        ranks: list[tuple[list[int], list[int]]] = []
        seen_r = [0] * m
        for e, r in enumerate(self.ea.tolist()):
            j = seen_r[r]
            seen_r[r] = j + 1
            if j == len(ranks):
                ranks.append(([], []))
            ranks[j][0].append(r)
            ranks[j][1].append(e)
        self.hranks = [
            (np.array(rs, dtype=np.intp), np.array(es, dtype=np.intp)) for rs, es in ranks
        ]
        # The row of each arc's partner block (the other end of its edge), by arc.
        end = [0] * (2 * n_e)
        end[0::2] = self.eb.tolist()
        end[1::2] = self.ea.tolist()
        self.classes = []
        self.partner: list[Any] = []
        lo = alo = 0
        for members in groups:
            arcs: list[int] = []
            own: list[int] = []
            starts: list[int] = []
            for j, i in enumerate(members):
                starts.append(len(arcs))
                arcs += owned[i]
                own += [j] * len(owned[i])
            ai = np.array(arcs, dtype=np.intp)
            # The partner block's row of each arc (the other end of its edge).
            ends = [end[a] for a in arcs]
            self.partner.append(np.array(ends, dtype=np.intp))
            hi, ahi = lo + len(members), alo + len(arcs)
            self.classes.append(
                (
                    lo,
                    hi,
                    alo,
                    ahi,
                    np.array([[len(owned[i]) + 1.0] for i in members]),
                    anew_np[ai ^ 1],
                    # The class's arc rows 0..A-1: `round_icm` reads row `vp[a] * A + a` of
                    # `atT` seen as (K * A) x K rows (arc a's table at the partner's value
                    # vp[a]) and entry `ri[a] * K + vp[a]` of the flat `M`, one `take` each
                    # (two-index fancy indexing there was 40% of a rounding; the same values).
                    np.arange(len(arcs), dtype=np.intp),
                    np.array(own, dtype=np.intp),
                    np.array(starts, dtype=np.intp),
                    np.ascontiguousarray(AT[ai].transpose(2, 0, 1)),
                )
            )
            lo, alo = hi, ahi

    def sweep(self) -> None:
        """One diffusion sweep, class by class (see `bounds._diffuse` for the update): a
        block's unary and its tables' projections onto it all become their average."""
        np, U, M = self.np, self.U, self.M
        least, sub, sums = np.minimum.reduce, np.subtract, np.add.reduceat
        if self.relax != 1.0:
            self._sweep_relaxed(self.relax)
            return
        with np.errstate(invalid="ignore"):
            for lo, hi, alo, ahi, share_n, ri, _ar, own, starts, atT in self.classes:
                mo = M[alo:ahi]
                # The row minima of the current tables without the owner's messages
                # (`tmin - mo` are the tables' projections onto the owning blocks).
                # (`take` gathers the same rows as fancy indexing, measured 2-3 times
                # faster on these small arrays.)
                tmin = least(atT - M.take(ri, axis=0).T[:, :, None], axis=0)
                share = (U[lo:hi] + sums(tmin - mo, starts, axis=0)) / share_n
                # The new message is what leaves the projection equal to the share:
                # mo - (share - (tmin - mo)), written as tmin - share (fewer numpy calls,
                # measured 10-20% off a sweep). A row the table rules out (tmin `inf`)
                # keeps its message: no table changes there (inf - inf never arises).
                sub(tmin, share.take(own, axis=0), out=mo, where=tmin < INF)
                U[lo:hi] = share

    def _sweep_relaxed(self, w: float) -> None:
        """The sweep over-relaxed by `w`: each block moves `w` times the diffusion's step
        (its unary to `u + w (share - u)`, each projection to `ph - w (ph - share)`).
        Still an equivalence-preserving reparametrisation (what leaves a table arrives
        on its block's unary), so every bound read off it stays a bound; it is no longer
        monotone, and the callers keep the best bound seen. Measured on random cores of
        115 to 300 blocks: with `w` 1.4 the bound after 32 sweeps is the plain
        diffusion's after about 100, and its limit no lower.

        >>> un = [[0.0, 2.0], [0.0, 2.0]]
        >>> nb = [{1: [2.0, 0.0, 0.0, 2.0]}, {0: [2.0, 0.0, 0.0, 2.0]}]
        >>> d = DenseCore(numpy_or_none(), Core([2, 2], un, nb), [0, 1], relax=1.4)
        >>> for _ in range(30):
        ...     d.sweep()
        >>> round(d.bound(0.0), 6)
        2.0
        """
        np, U, M = self.np, self.U, self.M
        least, add, sums = np.minimum.reduce, np.add, np.add.reduceat
        with np.errstate(invalid="ignore"):
            for lo, hi, alo, ahi, share_n, ri, _ar, own, starts, atT in self.classes:
                mo = M[alo:ahi]
                u = U[lo:hi]
                ph = least(atT - M.take(ri, axis=0).T[:, :, None], axis=0) - mo
                share = (u + sums(ph, starts, axis=0)) / share_n
                # An infinite projection (the table rules the value out, or the message
                # is already -inf) keeps its message; a finite one facing an infinite
                # share gets -inf, as in the plain sweep. An infinite unary stays.
                add(mo, w * (ph - share.take(own, axis=0)), out=mo, where=ph < INF)
                add(u, w * (share - u), out=u, where=u < INF)

    def unaries(self) -> Any:
        """The current unaries by position in `xs` (m x kmax, padded values `inf`)."""
        return self.U[self.inv]

    def tables(self) -> Any:
        """The current tables, `T0 - M` (E x K x K)."""
        M = self.M
        return self.T0 - M[self.fa][:, :, None] - M[self.fb][:, None, :]

    def bound(self, const: float) -> float:
        """`bounds._bound` on the arrays: the constant plus each block's least unary plus
        the row minima (over the partner's live values) of the tables it is the lower
        block of; `inf` when a block has no live value."""
        np, U, M = self.np, self.U, self.M
        live = U < INF
        with np.errstate(invalid="ignore"):
            # A dead partner value gets a `-inf` message, so its column is `+inf` in
            # `T0T - message` (T0 is never `-inf`): the same minima as masking it.
            mb = np.where(live.take(self.eb, axis=0).T, M.take(self.fb, axis=0).T, -INF)
            rmin = np.minimum.reduce(self.T0T - mb[:, :, None], axis=0) - M.take(self.fa, axis=0)
        h = U.copy()
        for rows, es in self.hranks:
            h[rows] += rmin.take(es, axis=0)
        self.h = h
        # A block without a live value has an all-`inf` row (its unary), and no term is
        # ever `-inf` or NaN: the sum is `inf` then. The minima run over the leading axis
        # of the transposed copy (contiguous slices: several times faster, same minima).
        return const + math.fsum(np.ascontiguousarray(h.T).min(axis=0).tolist())

    def fix(self, lb: float, best: float, integral: bool) -> list[int]:
        """Reduced-cost fixing on the arrays after `bound` returned `lb`: a value whose
        bound with its block fixed to it (lb minus the block's least term plus the
        value's term) cannot beat `best` gets an infinite unary (never a block's least
        term). Returns the blocks (of `xs`) that lost a value."""
        np, h, U = self.np, self.h, self.U
        lo = h.argmin(axis=1)
        with np.errstate(invalid="ignore"):
            v = (lb - h[np.arange(len(lo)), lo])[:, None] + h
            cut = np.ceil(v - 1e-6 - np.abs(v) * 1e-9) >= best if integral else v >= best
        cut &= U < INF
        cut[np.arange(len(lo)), lo] = False
        rows = np.flatnonzero(cut.any(axis=1))
        if not len(rows):
            return []
        U[cut] = INF
        xs = self.ixs
        return [xs[i] for i in sorted(rows.tolist(), key=self.perm.__getitem__)]

    def margins(self) -> dict[int, list[float]]:
        """Each block's terms by value in the last `bound` (see `bounds._bound`'s `hs`)."""
        sizes = self.sizes
        return {x: h[: sizes[x]] for x, h in zip(self.ixs, self.h.tolist(), strict=True)}

    def _flat_tables(self) -> list[list[float]]:
        kmax = self.kmax
        flat: list[list[float]] = self.tables().reshape(len(self.edges), kmax * kmax).tolist()
        return flat

    def arcs(self) -> tuple[list[list[float]], list[list[tuple[int, list[float], int, bool]]]]:
        """The unaries and pair tables by position in `xs`, as the primal heuristic reads
        them (`primal.round_and_polish`): padded values cost `inf` and are never chosen."""
        kmax = self.kmax
        un = self.unaries().tolist()
        flat = self._flat_tables()
        arcs: list[list[tuple[int, list[float], int, bool]]] = [[] for _ in un]
        pos = self.pos
        for e, (a, b) in enumerate(self.edges):
            pa, pb = pos[a], pos[b]
            arcs[pa].append((pb, flat[e], kmax, True))
            arcs[pb].append((pa, flat[e], kmax, False))
        return un, arcs

    def round_icm(self, passes: int = 8) -> list[int]:
        """An assignment (value by position in `xs`) read off the current
        reparametrisation, the arrays' form of `primal.round_and_polish`: class by class
        (the colouring's order), each block takes the value minimising its unary plus
        its tables' entries with the neighbours already decided; then up to `passes`
        rounds of iterated conditional modes, class by class (a class's blocks share no
        table, so their moves are independent), a block moving to a strictly cheaper
        value. Ties go to the lowest value. The caller evaluates the result on the
        original tables: it may be infeasible.

        >>> un = [[0.0, 1.0], [0.0, 1.0]]
        >>> nb = [{1: [7.0, 0.0, 0.0, 7.0]}, {0: [7.0, 0.0, 0.0, 7.0]}]
        >>> DenseCore(numpy_or_none(), Core([2, 2], un, nb), [0, 1]).round_icm()
        [0, 1]
        """
        np, U, M = self.np, self.U, self.M
        kmax = self.kmax
        Mf = M.reshape(-1)
        val = U.argmin(axis=1)
        done = np.zeros(len(val), dtype=bool)
        for rnd in range(passes + 1):
            moved = False
            for (lo, hi, alo, ahi, _, ri, ar, _own, starts, atT), pp in zip(
                self.classes, self.partner, strict=True
            ):
                vp = val[pp]
                # The current tables' columns at the partners' values, rows: this block.
                na = len(ar)
                col = (
                    atT.reshape(kmax * na, kmax).take(vp * na + ar, axis=0)
                    - M[alo:ahi]
                    - Mf.take(ri * kmax + vp)[:, None]
                )
                if rnd == 0:
                    col = np.where(done[pp][:, None], col, 0.0)
                s = U[lo:hi] + np.add.reduceat(col, starts, axis=0)
                new = s.argmin(axis=1)
                if rnd == 0:
                    val[lo:hi] = new
                    done[lo:hi] = True
                    continue
                r = np.arange(len(new))
                cur = val[lo:hi]
                better = s[r, new] < s[r, cur]
                if better.any():
                    cur[better] = new[better]
                    moved = True
            if rnd and not moved:
                break
        out: list[int] = val[self.inv].tolist()
        return out

    def write_back(self, core: Core) -> None:
        """Store the reparametrised unaries and tables back in the list form (`core`'s
        lists: every block of `xs` gets its unary and its neighbour tables)."""
        sizes, un, nb = self.sizes, core.un, core.nb
        kmax = self.kmax
        for x, u in zip(self.ixs, self.U.tolist(), strict=True):
            un[x] = u if sizes[x] == kmax else u[: sizes[x]]
        for (a, b), f in zip(self.edges, self._flat_tables(), strict=True):
            ka, kb = sizes[a], sizes[b]
            if kb == kmax:
                tab = f[: ka * kmax] if ka < kmax else f
            else:
                tab = []
                for i in range(ka):
                    tab += f[i * kmax : i * kmax + kb]
            na, nb_ = nb[a], nb[b]
            assert na is not None and nb_ is not None
            na[b] = tab
            nb_[a] = tab
