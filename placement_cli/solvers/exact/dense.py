"""Min-sum diffusion on a whole core at once, with numpy: the root of the search.

The root of the search spends dozens to hundreds of diffusion sweeps over the whole core
(measured: 60 to 70% of the exact method's time on random cores of 50 to 130 blocks with 5
to 8 targets), and a sweep in pure Python rebuilds every table twice. Here the core is
padded to K x K tables in one array, and a sweep updates one colour class of a greedy
colouring of the interaction graph at a time: blocks of a class share no table, so their
block-coordinate updates commute and a class is one vectorised step. It is the same
equivalence-preserving ascent (every assignment keeps its cost), in another block order.
Padded values cost `inf` and never take part. Search nodes keep the list form (their few
sweeps would not pay for the conversion).
"""

from __future__ import annotations

import math
from typing import Any

from placement_cli.solvers.exact.model import INF


def numpy_or_none() -> Any:
    """numpy when it can be imported, else None (the pure-Python sweeps are used then)."""
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is installed with the bench extras
        return None
    return numpy


class DenseCore:
    """A pairwise core as padded arrays: `U[x, i]` unaries, `T[e, i, j]` the table of
    edge e = (a, b), a < b, with a's values as rows.

    Two blocks whose cheap values clash (optimum 2; the minima alone say 0):

    >>> un = [[0.0, 2.0], [0.0, 2.0]]
    >>> nb = [{1: [2.0, 0.0, 0.0, 2.0]}, {0: [2.0, 0.0, 0.0, 2.0]}]
    >>> d = DenseCore(numpy_or_none(), [2, 2], un, nb, [0, 1])
    >>> d.bound(0.0)
    0.0
    >>> for _ in range(30):
    ...     d.sweep()
    >>> round(d.bound(0.0), 6)
    2.0
    """

    def __init__(self, np: Any, K: list[int], un: list[list[float] | None], nb: list[dict[int, list[float]] | None],
                 xs: list[int]) -> None:
        self.np = np
        self.xs = xs
        self.K = K
        kmax = max(K[x] for x in xs)
        m = len(xs)
        pos = {x: i for i, x in enumerate(xs)}
        U = np.full((m, kmax), INF)
        for i, x in enumerate(xs):
            U[i, : K[x]] = un[x]
        edges = []
        for x in xs:
            for y in nb[x]:  # type: ignore[union-attr]
                if x < y:
                    edges.append((x, y))
        T = np.full((len(edges), kmax, kmax), INF)
        for e, (a, b) in enumerate(edges):
            T[e, : K[a], : K[b]] = np.asarray(nb[a][b], dtype=float).reshape(K[a], K[b])  # type: ignore[index]
        self.U, self.T, self.edges, self.pos = U, T, edges, pos
        self.ea = np.array([pos[a] for a, _ in edges], dtype=np.intp)
        self.eb = np.array([pos[b] for _, b in edges], dtype=np.intp)
        # Greedy colouring in block order: each block takes the least colour none of its
        # lower neighbours has. Deterministic, and few classes on these sparse cores.
        colour = [0] * m
        for i, x in enumerate(xs):
            used = {colour[pos[y]] for y in nb[x] if y < x}  # type: ignore[union-attr]
            c = 0
            while c in used:
                c += 1
            colour[i] = c
        deg = np.array([len(nb[x]) for x in xs], dtype=float)  # type: ignore[arg-type]
        self.classes = []
        for c in range(max(colour) + 1 if colour else 0):
            members = [i for i in range(m) if colour[i] == c]
            loc = {i: j for j, i in enumerate(members)}
            er = [e for e, (a, _) in enumerate(edges) if colour[pos[a]] == c]
            ec = [e for e, (_, b) in enumerate(edges) if colour[pos[b]] == c]
            self.classes.append((
                np.array(members, dtype=np.intp),
                (deg[members] + 1.0)[:, None],
                np.array(er, dtype=np.intp),
                np.array([loc[pos[edges[e][0]]] for e in er], dtype=np.intp),
                np.array(ec, dtype=np.intp),
                np.array([loc[pos[edges[e][1]]] for e in ec], dtype=np.intp),
            ))

    def sweep(self) -> None:
        """One diffusion sweep, class by class (see `bounds._diffuse` for the update)."""
        np, U, T = self.np, self.U, self.T
        with np.errstate(invalid="ignore"):
            for members, share_n, er, pr, ec, pc in self.classes:
                tot = U[members]
                ph_r = T[er].min(axis=2)
                ph_c = T[ec].min(axis=1)
                np.add.at(tot, pr, ph_r)
                np.add.at(tot, pc, ph_c)
                share = tot / share_n
                # inf - inf is nan in the branch `where` discards: no table changes there.
                d_r = np.where(ph_r < INF, share[pr] - ph_r, 0.0)
                d_c = np.where(ph_c < INF, share[pc] - ph_c, 0.0)
                T[er] += d_r[:, :, None]
                T[ec] += d_c[:, None, :]
                U[members] = share

    def bound(self, const: float) -> float:
        """`bounds._bound` on the arrays: the constant plus each block's least unary plus
        the row minima (over the partner's live values) of the tables it is the lower
        block of; `inf` when a block has no live value."""
        np, U, T = self.np, self.U, self.T
        live = U < INF
        if not live.any(axis=1).all():
            return INF
        masked = np.where(live[self.eb][:, None, :], T, INF)
        h = U.copy()
        np.add.at(h, self.ea, masked.min(axis=2))
        return const + math.fsum(h.min(axis=1).tolist())

    def arcs(self) -> tuple[list[list[float]], list[list[tuple[int, list[float], int, bool]]]]:
        """The unaries and pair tables by position in `xs`, as the primal heuristic reads
        them (`primal.round_and_polish`): padded values cost `inf` and are never chosen."""
        kmax = self.U.shape[1]
        un = self.U.tolist()
        flat = self.T.reshape(len(self.edges), kmax * kmax).tolist()
        arcs: list[list[tuple[int, list[float], int, bool]]] = [[] for _ in un]
        pos = self.pos
        for e, (a, b) in enumerate(self.edges):
            pa, pb = pos[a], pos[b]
            arcs[pa].append((pb, flat[e], kmax, True))
            arcs[pb].append((pa, flat[e], kmax, False))
        return un, arcs

    def write_back(self, un: list[list[float] | None], nb: list[dict[int, list[float]] | None]) -> None:
        """Store the reparametrised unaries and tables back in the list form."""
        K = self.K
        for i, x in enumerate(self.xs):
            un[x] = self.U[i, : K[x]].tolist()
        for e, (a, b) in enumerate(self.edges):
            tab = self.T[e, : K[a], : K[b]].ravel().tolist()
            nb[a][b] = tab  # type: ignore[index]
            nb[b][a] = tab  # type: ignore[index]
