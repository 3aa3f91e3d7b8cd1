"""The indexed forms of an operator tree: the checked input (`TreeInput`, from
`read`/`check`), the tree the DP runs on (`Tree`, from `build`), and the limits a run is
given (its options are in `options`, which imports no numpy). The DP and its answer are
in `placement_cli.algorithms.tree`.

Transfers are kept as coefficient matrices plus compact arrays of explicit overrides
(no Python object per explicit entry); `Tree.matrix(u)` builds one edge's E x E matrix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from placement_cli.formats.tree_structs import TreeFile

INF = math.inf


@dataclass(frozen=True, slots=True)
class TreeLimits:
    """Bounds on the work of one run, passed in (tests shrink them).

    `max_expanded_nodes` bounds `--expand-dag`; `memory_bytes` bounds what the DP holds
    (its decision tables and the sequences it keeps for the rebuild). `batch_level` is
    the number of nodes of one height from which the DP does them as one batch (tests
    set 1 to batch everything, or a huge number to go node by node).

    >>> TreeLimits().max_expanded_nodes
    1000000
    """

    max_expanded_nodes: int = 1_000_000
    memory_bytes: int = 2 * 1024**3
    batch_level: int = 8


@dataclass(frozen=True, slots=True, eq=False)
class Explicit:
    """Explicit transfers as parallel arrays in input order (`child` is an input node
    index, `src`/`dst` engine indices), with `order`/`start` grouping them by child:
    the entries of child x are `order[start[x]:start[x + 1]]`."""

    child: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    cost: np.ndarray
    order: np.ndarray
    start: np.ndarray

    @staticmethod
    def empty(n_nodes: int) -> Explicit:
        z = np.zeros(0, dtype=np.int64)
        return Explicit(z, z, z, np.zeros(0), z, np.zeros(n_nodes + 1, dtype=np.int64))

    @staticmethod
    def of(
        child: np.ndarray, src: np.ndarray, dst: np.ndarray, cost: np.ndarray, n_nodes: int
    ) -> Explicit:
        order = np.argsort(child, kind="stable")
        start = np.searchsorted(child[order], np.arange(n_nodes + 1), side="left")
        return Explicit(child, src, dst, cost, order, start)

    def __len__(self) -> int:
        return len(self.cost)


@dataclass(frozen=True, slots=True, eq=False)
class TreeInput:
    """A checked tree file: every id, engine and child resolved, one root, no cycle.
    Whether it is a tree or a DAG is decided by `build_tree` (it depends on options)."""

    source: str
    file: TreeFile  # its `transfer.explicit` may be empty: see `explicit`
    prefix: str  # field-path prefix of the file inside the document ("" or "tree.input.")
    engines: tuple[str, ...]
    ids: tuple[str, ...]
    kids: tuple[tuple[int, ...], ...]  # input indices of each node's children
    time: tuple[tuple[float, ...], ...]  # time[x][e], INF where e cannot run x
    root: int
    explicit: Explicit
    ref: dict[str, str]  # {"name", "sha256"} of the tree file's bytes


@dataclass(frozen=True, slots=True, eq=False)
class Tree:
    """The indexed tree the DP runs on. Node order: the input's nodes under the root in
    input order, then (`--expand-dag`) the copies of shared sub-plans in DFS order.

    A transfer is `fixed + per_row*R + per_width*W + per_byte*R*W` (R rows, W row width
    of the child), summed in that order; a term whose coefficient is 0 everywhere is
    left out (so an unused huge R*W never meets a 0 coefficient)."""

    engines: tuple[str, ...]
    ids: tuple[str, ...]
    origin: tuple[int, ...]  # tree node -> input node
    children: tuple[tuple[int, ...], ...]
    root: int
    time: tuple[tuple[float, ...], ...]  # per tree node, INF where the engine cannot run it
    rows: tuple[
        float, ...
    ]  # per input node (0 where unknown, which the checks allow only when unused)
    width: tuple[float, ...]  # row width per input node (0 where unknown)
    nbytes: tuple[float, ...]  # rows * row_width per input node
    terms: tuple[
        tuple[str, np.ndarray], ...
    ]  # ("fixed" | "rows" | "width" | "bytes", E x E coefficients)
    explicit: Explicit
    # Input nodes whose output cannot cross to another engine (`no_cut`): every
    # transfer from them is INF, whatever the models and explicit entries say.
    no_cut: frozenset[int] = frozenset()

    @property
    def n(self) -> int:
        return len(self.ids)

    def matrix(self, u: int) -> np.ndarray:
        """`T[src, dst]` for the edge from u to its parent: 0 on the diagonal, INF where
        no transfer is defined. A fresh array the caller may keep."""
        o = self.origin[u]
        t: np.ndarray | None = None
        for kind, c in self.terms:
            if kind == "fixed":
                t = c.copy()
            else:
                x = (
                    self.rows[o]
                    if kind == "rows"
                    else self.width[o]
                    if kind == "width"
                    else self.nbytes[o]
                )
                t = t + c * x  # type: ignore[operator]
        assert t is not None
        ex = self.explicit
        a, b = ex.start[o], ex.start[o + 1]
        if b > a:
            idx = ex.order[a:b]
            t[ex.src[idx], ex.dst[idx]] = ex.cost[idx]
        if o in self.no_cut:
            t = np.where(np.eye(len(self.engines), dtype=bool), t, INF)
        return t

    def matrices(self, limit: int = 1 << 24) -> np.ndarray | None:
        """Every input node's matrix at once, `[input node, src, dst]` (None above `limit`
        entries: then `matrix` per edge). Same sums in the same order as `matrix`; a
        node that is nobody's child may hold nan from an unused 0 * inf, never read."""
        n_in = len(self.rows)
        n_e = len(self.engines)
        if n_in * n_e * n_e > limit:
            return None
        sizes = {"rows": self.rows, "width": self.width, "bytes": self.nbytes}
        with np.errstate(all="ignore"):
            t = np.empty((n_in, n_e, n_e))
            for kind, c in self.terms:
                if kind == "fixed":
                    t[:] = c
                else:
                    t += c[None] * np.array(sizes[kind], dtype=np.float64)[:, None, None]
        ex = self.explicit
        if len(ex):
            t[ex.child, ex.src, ex.dst] = ex.cost
        if self.no_cut:
            off = ~np.eye(n_e, dtype=bool)
            for o in sorted(self.no_cut):
                t[o][off] = INF
        return t

    def transfer(self, u: int) -> list[float]:
        """Flat `T[src * E + dst]` for the edge from u to its parent (see `matrix`)."""
        return [float(x) for x in self.matrix(u).ravel()]


@contextmanager
def small_pages() -> Iterator[None]:
    """Ask numpy not to advise huge pages for its large arrays while the block runs.

    numpy marks every large array MADV_HUGEPAGE; where the kernel then compacts memory
    on the page fault (transparent huge pages with `defrag` on `madvise`, a common
    default), filling the tables costs more system time than it saves: on the 100k
    chain 1.4-1.7 s of system time against 0.45 with ordinary pages, for 0.2 s of user
    time. A numpy without the switch is left as it is.

    >>> with small_pages():
    ...     pass
    """
    try:
        # Lazy: nothing (numpy is loaded already: 0 ms, measured); the try tells numpy 2 from 1.
        from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - numpy 1.x
        try:
            # Lazy: nothing (0 ms, measured): numpy 1.x's name for the switch.
            from numpy.core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined,no-redef]
        except ImportError:
            yield
            return
    was = _set_madvise_hugepage(False)
    try:
        yield
    finally:
        _set_madvise_hugepage(was)


def children_first(tree: Tree) -> list[int]:
    """Every node after all of its descendants (reversed preorder; no recursion)."""
    out = []
    stack = [tree.root]
    while stack:
        v = stack.pop()
        out.append(v)
        stack.extend(tree.children[v])
    out.reverse()
    return out
