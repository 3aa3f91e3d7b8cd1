"""The answer (`Placement`) from the DP's tables: the frontier, and an optimal assignment rebuilt
top-down by argmin (the fold replayed for one engine per node)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from placement_cli.algorithms.tree.dp import DPState, fast_dp
from placement_cli.algorithms.tree.minmax import merge_minmax, split_minmax, trim
from placement_cli.core.io import gc_paused
from placement_cli.ir.tree.model import INF, Tree, TreeLimits, small_pages

_LIMITS = TreeLimits()


@dataclass(frozen=True, slots=True)
class Placement:
    """The answer: `frontier[k]` is the least latency with at most k cuts, for k up to
    min(K, edges); `assignment` (engine index per node, empty if infeasible) attains
    `latency` with `cuts_used`, the fewest cuts any optimal placement needs. `stopped`
    is "" or the limit that stopped the DP ("time-limit", "memory-limit"); then
    nothing else is known."""

    budget: int
    latency: float
    frontier: tuple[float, ...]
    assignment: tuple[int, ...]
    cuts_used: int
    stopped: str = ""
    detail: dict[str, Any] | None = None


def place(
    tree: Tree, budget: int, deadline: float | None = None, limits: TreeLimits = _LIMITS
) -> Placement:
    """Run the DP and rebuild an optimal assignment (argmin, top-down, no recursion).

    Ties: the fewest cuts, then the earliest engine in the file's list at each node.

    >>> from placement_cli.ir.tree.build import tree_from_spec
    >>> t = tree_from_spec(["a", "b"], [
    ...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
    ...     {"id": "x", "time": {"a": 9, "b": 2}}, {"id": "y", "time": {"a": 3, "b": 9}}],
    ...     {"default": {"fixed": 1}})
    >>> p = place(t, 2)
    >>> p.latency, p.frontier, [t.engines[e] for e in p.assignment], p.cuts_used
    (4.0, (10.0, 4.0, 4.0), ['a', 'b', 'a'], 1)
    """
    # The DP allocates many small acyclic objects; the cyclic GC's scans of them cost
    # a fifth of the run time.
    with gc_paused(), small_pages():
        return _place(tree, budget, deadline, limits)


def _place(tree: Tree, budget: int, deadline: float | None, limits: TreeLimits) -> Placement:
    st = fast_dp(tree, budget, deadline, limits)
    if st.stopped:
        return Placement(
            budget,
            INF,
            (),
            (),
            0,
            st.stopped,
            {"nodes_done": st.done, "nodes": tree.n, "bytes_held": st.held},
        )
    top = st.dp[tree.root]
    assert top is not None
    n_e = len(tree.engines)
    frontier = tuple(top.min(axis=0).tolist())
    best = frontier[-1]
    if best == INF:
        return Placement(budget, INF, frontier, (), 0)
    k0 = frontier.index(best)
    e0 = next(e for e in range(n_e) if top[e, k0] == best)
    assignment = _rebuild(tree, st, e0, k0, st.mats)
    cuts = sum(1 for v in range(tree.n) for u in tree.children[v] if assignment[u] != assignment[v])
    return Placement(budget, best, frontier, tuple(assignment), cuts)


def _rebuild(tree: Tree, st: DPState, e0: int, k0: int, mats: np.ndarray | None) -> list[int]:
    assign = [-1] * tree.n
    stack = [(tree.root, e0, k0)]
    while stack:
        v, e, k = stack.pop()
        assign[v] = e
        ch = tree.children[v]
        if not ch:
            continue
        if len(ch) == 1:
            shares = [k]  # one child takes the whole budget
        else:
            # Replay the fold on prefixes up to k: the walk to budget k reads nothing later.
            cut = min(st.size, k + 1)
            bs = [trim(st.lifted[u][e, :cut].tolist()) for u in ch]  # type: ignore[index]
            folds = [bs[0]]
            for b in bs[1:]:
                folds.append(merge_minmax(folds[-1], b, cut))
            shares = [0] * len(ch)
            for i in range(len(ch) - 1, 0, -1):
                k, shares[i] = split_minmax(folds[i - 1], bs[i], k)
            shares[0] = k
        for u, j in zip(ch, shares, strict=True):
            # The child stays on e when that is as good as the best cut, else the first
            # engine whose cut attains it: the same sums as in `lift`, so `==` holds.
            du = st.dp[u]
            assert du is not None
            last = du.shape[1] - 1
            own = float(du[e, min(j, last)])
            if j == 0:
                stack.append((u, e, j))
                continue
            col = tree.matrix(u)[:, e] if mats is None else mats[tree.origin[u], :, e]
            cands = (du[:, min(j - 1, last)] + col).tolist()
            want = min(own, min(cands))
            if own == want:
                stack.append((u, e, j))
                continue
            s = cands.index(want)
            stack.append((u, s, j - 1))
    return assign
