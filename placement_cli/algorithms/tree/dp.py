"""The critical-path DP of the seed (appendix A1) over the whole tree.

`dp[v][e][k]` is the least latency of v's subtree with v on engine e and at most k
cuts inside it. The literal pseudocode lives with the tests (`tests/tree_reference.py`);
this computes the same numbers, faster:

* `dp[v]` is an `E x L` array with `L = min(K, edges below v) + 1`: the sequence is
  constant from there on, so budgets past a subtree's edge count never cost work.
* Lifting a child (seed lines 10-19) is one vectorised min-plus step over all engine
  pairs and budgets (`minmax.lift`). The tables are kept, 8 bytes per entry, for the
  rebuild (`rebuild`); what they hold is bounded by `TreeLimits.memory_bytes`.
* The fold `A'[k] = min_i max(A[i], B[k-i])` of non-increasing sequences is a sort
  of their entries, for every engine at once (`minmax.fold`), not O(K^2).
* Nodes go level by level (height above the deepest leaf). A level with many nodes
  (a bushy plan) is one batch: one min-plus step for all its edges, one sort for all
  its two-child folds. Runs of one-child nodes (a chain) go through one array with
  no allocation per node.

Every value is formed by the same float operations as the pseudocode's, so the
results are equal, not close.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from placement_cli.algorithms.tree.minmax import fold, lift
from placement_cli.ir.tree.model import Tree, TreeLimits, children_first

_LIMITS = TreeLimits()
_CHECK_EVERY = 64  # nodes between two looks at the clock and the memory bound


@dataclass(slots=True)
class DPState:
    """What the DP keeps for the rebuild: every node's table and the lifted sequences
    of children that share a parent (the rebuild replays their fold). `stopped` names
    the limit that ended it early, if any."""

    size: int
    dp: list[np.ndarray | None]
    lifted: list[np.ndarray | None]
    mats: np.ndarray | None = None  # `Tree.matrices()`, when small enough to hold
    stopped: str = ""
    done: int = 0  # nodes computed
    held: int = 0  # bytes held when it ended


class _Home:
    """Where each node's table lives: row `at_r[v]` of `arrays[at_a[v]]`, an array of
    tables padded to one width with each one's constant tail (a batch, a run, or one
    node), so a level can gather its children's tables one array at a time."""

    __slots__ = ("arrays", "at_a", "at_r")

    def __init__(self, n: int) -> None:
        self.arrays: list[np.ndarray] = []
        self.at_a = [0] * n
        self.at_r = [0] * n

    def add(self, rows: np.ndarray, nodes: list[int]) -> None:
        a = len(self.arrays)
        self.arrays.append(rows)
        at_a, at_r = self.at_a, self.at_r
        for r, v in enumerate(nodes):
            at_a[v] = a
            at_r[v] = r

    def gather(self, nodes: list[int], width: int, out: np.ndarray) -> None:
        """`out[i]` = the table of `nodes[i]`, cut or padded to `width` columns."""
        at_a = self.at_a
        where = np.array([at_a[u] for u in nodes], dtype=np.int64)
        row = np.array(list(map(self.at_r.__getitem__, nodes)), dtype=np.int64)
        order = np.argsort(where, kind="stable")
        sw = where[order]
        starts = np.flatnonzero(np.r_[True, sw[1:] != sw[:-1]]).tolist()
        for s0, s1 in zip(starts, [*starts[1:], len(nodes)], strict=True):
            pos = order[s0:s1]
            src = self.arrays[int(sw[s0])][row[pos]]
            w = src.shape[2]
            if w >= width:
                out[pos] = src[:, :, :width]
            else:
                out[pos, :, :w] = src
                out[pos, :, w:] = src[:, :, -1:]


def fast_dp(
    tree: Tree, budget: int, deadline: float | None = None, limits: TreeLimits = _LIMITS
) -> DPState:
    """Run the DP over the tree, children first; `deadline` is a `time.monotonic()`
    instant. `dp[v][e, k]` is the seed's value at k <
    min(budget, edges below v) + 1, constant after.

    Nodes go level by level (a node's level is its height above its deepest leaf, so
    its children are done before it). A level of at least `limits.batch_level` nodes
    is one batch of array operations (`_batch`); a thin one, as in a long chain, goes
    node by node (below about 8 nodes the batch's set-up costs more than it saves).

    >>> from placement_cli.ir.tree.build import tree_from_spec
    >>> t = tree_from_spec(["a", "b"], [
    ...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
    ...     {"id": "x", "time": {"a": 9, "b": 2}}, {"id": "y", "time": {"a": 3, "b": 9}}],
    ...     {"default": {"fixed": 1}})
    >>> fast_dp(t, 2).dp[t.root].tolist()
    [[10.0, 4.0, 4.0], [10.0, 5.0, 5.0]]
    """
    n_e = len(tree.engines)
    size = min(budget, max(tree.n - 1, 0)) + 1
    st = DPState(size, [None] * tree.n, [None] * tree.n)
    times = np.array(tree.time, dtype=np.float64).reshape(tree.n, n_e, 1)
    mats = st.mats = tree.matrices()
    levels, height, parent = _levels(tree)
    home = _Home(tree.n)
    kids = tree.children
    dp = st.dp
    count = 0
    check = _CHECK_EVERY  # the node count at which to look at the clock and the memory next
    for level in levels:
        if len(level) >= limits.batch_level:
            if count and _stop(st, deadline, limits, count):
                return st
            st.held += _batch(tree, st, home, level, times, mats)
            count += len(level)
            check = count + _CHECK_EVERY
            continue
        for v in level:
            if dp[v] is not None:  # done with its run
                continue
            if count >= check:
                if _stop(st, deadline, limits, count):
                    return st
                check = count + _CHECK_EVERY
            ch = kids[v]
            if len(ch) == 1 and size > 1 and dp[ch[0]].shape[1] == size:  # type: ignore[union-attr]
                run = [v]
                w = parent[v]
                while w >= 0 and len(kids[w]) == 1 and len(levels[height[w]]) < limits.batch_level:
                    run.append(w)
                    w = parent[w]
                done = _run(tree, st, home, run, times, mats, deadline, limits, count)
                count += done
                if st.stopped:
                    return st
                check = count + _CHECK_EVERY
                continue
            st.held += _one(tree, st, v, times[v], mats)
            home.add(dp[v][None], [v])  # type: ignore[index]
            count += 1
    st.done = tree.n
    return st


_CHUNK = 1 << 21  # entries of one batched lift's temporary (16 MB)


def _levels(tree: Tree) -> tuple[list[list[int]], list[int], list[int]]:
    """Nodes by height (leaves first), each level in children-first order; with each
    node's height and parent (-1 at the root)."""
    height = [0] * tree.n
    parent = [-1] * tree.n
    levels: list[list[int]] = [[]]
    kids = tree.children
    for v in children_first(tree):
        ch = kids[v]
        if ch:
            h = 1 + max(map(height.__getitem__, ch))
            for u in ch:
                parent[u] = v
        else:
            h = 0
        height[v] = h
        if h == len(levels):
            levels.append([])
        levels[h].append(v)
    return levels, height, parent


def _run(
    tree: Tree,
    st: DPState,
    home: _Home,
    run: list[int],
    times: np.ndarray,
    mats: np.ndarray | None,
    deadline: float | None,
    limits: TreeLimits,
    count: int,
) -> int:
    """A run of one-child nodes, each the parent of the one before, whose first child's
    table is already full length (as in a long chain): `lift` and the self-time per
    node with no allocation, into one array for the whole run. Returns the nodes done
    (fewer when a limit stopped it: then `st.stopped` says which)."""
    dp = st.dp
    size = st.size
    n_e = len(tree.engines)
    origin = tree.origin
    prev = dp[tree.children[run[0]][0]]
    assert prev is not None
    m = len(run)
    rows = np.empty((m, n_e, size))
    home.add(rows, run)
    tv = times[run]  # [node, engine, 1]
    # Budget 0 (no cut below) is the child's plus the self-time, summed node after node
    # as the node-by-node DP does: a running sum along the run.
    acc = np.add.accumulate(np.concatenate((prev[None, :, :1], tv)), axis=0)
    rows[:, :, :1] = acc[1:]
    buf = np.empty((n_e, n_e, size - 1))
    t4 = mats[:, :, :, None] if mats is not None else None
    u = tree.children[run[0]][0]
    held = 0
    for i, v in enumerate(run):
        if i and i % _CHECK_EVERY == 0:
            st.held += held
            held = 0
            if _stop(st, deadline, limits, count + i):
                return i
        t = t4[origin[u]] if t4 is not None else tree.matrix(u)[:, :, None]
        np.add(prev[:, None, :-1], t, out=buf)  # [src, dst, k - 1]
        row = rows[i]
        tail = row[:, 1:]
        np.minimum.reduce(buf, axis=0, out=tail)
        np.minimum(tail, prev[:, 1:], out=tail)
        tail += tv[i]
        dp[v] = row
        held += row.nbytes
        prev = row
        u = v
    st.held += held
    return m


def _stop(st: DPState, deadline: float | None, limits: TreeLimits, count: int) -> bool:
    if deadline is not None and time.monotonic() > deadline:
        st.stopped = "time-limit"
    elif st.held > limits.memory_bytes:
        st.stopped = "memory-limit"
    if st.stopped:
        st.done = count
    return bool(st.stopped)


def _one(tree: Tree, st: DPState, v: int, tv: np.ndarray, mats: np.ndarray | None) -> int:
    """One node's table; returns the bytes it keeps."""
    dp = st.dp
    size = st.size
    origin = tree.origin
    ch = tree.children[v]
    held = 0
    if not ch:
        row = tv.copy()
    elif len(ch) == 1:
        u = ch[0]
        du = dp[u]
        assert du is not None
        row = lift(du, tree.matrix(u) if mats is None else mats[origin[u]], size)
        row += tv
    else:
        bs = []
        for u in ch:
            du = dp[u]
            assert du is not None
            b = lift(du, tree.matrix(u) if mats is None else mats[origin[u]], size)
            st.lifted[u] = b
            held += b.nbytes
            bs.append(b)
        row = fold(bs, size)
        row += tv
    dp[v] = row
    return held + row.nbytes


def _lift_many(
    tree: Tree, home: _Home, edges: list[int], w: int, mats: np.ndarray | None
) -> np.ndarray:
    """`lift` for many edges at once, each child's table padded to w columns with its
    constant tail (so the result is each lifted table padded the same way)."""
    n_e = len(tree.engines)
    m = len(edges)
    d = np.empty((m, n_e, w))
    home.gather(edges, w, d)
    if mats is not None:
        t = mats[[tree.origin[u] for u in edges]]
    else:
        t = np.stack([tree.matrix(u) for u in edges])
    b = np.empty_like(d)
    b[:, :, 0] = d[:, :, 0]
    if w > 1:
        step = max(1, _CHUNK // (n_e * n_e * w))
        for a in range(0, m, step):
            z = a + step
            best = np.minimum.reduce(
                d[a:z, :, None, :-1] + t[a:z, :, :, None], axis=1
            )  # [edge, src, dst, k-1] -> [edge, dst, k-1]
            np.minimum(d[a:z, :, 1:], best, out=b[a:z, :, 1:])
    return b


def _batch(
    tree: Tree,
    st: DPState,
    home: _Home,
    level: list[int],
    times: np.ndarray,
    mats: np.ndarray | None,
) -> int:
    """Every node of one level at once; returns the bytes it keeps.

    The children's tables are padded with their last column (each is constant past
    its end, so padding changes no value `lift` or `fold` reads): `lift` then runs as
    one min-plus step per group of edges of about the same length, and the fold of
    all two-child nodes as one sort. Each node keeps a view of its true length, so the
    tables read exactly as the node-by-node ones."""
    dp = st.dp
    size = st.size
    kids = tree.children
    n_e = len(tree.engines)
    if not kids[level[0]]:  # the leaves (a level is all leaves or none)
        rows = times[level]
        home.add(rows, level)
        for i, v in enumerate(level):
            dp[v] = rows[i]
        return rows.nbytes
    edges = [u for v in level for u in kids[v]]
    lens = [dp[u].shape[1] for u in edges]  # type: ignore[union-attr]
    out = [min(n + 1, size) for n in lens]  # each lifted table's true length
    m = len(edges)
    # Edges go in groups of about their own length (padding a one-column leaf to 65
    # columns would cost 65 times its work); each group's result is padded to w.
    groups: dict[int, list[int]] = {}
    for i, o in enumerate(out):
        groups.setdefault(min(size, 1 << (o - 1).bit_length()), []).append(i)
    w = max(groups)
    b = np.empty((m, n_e, w))
    for wg, idx in sorted(groups.items()):
        bg = _lift_many(tree, home, [edges[i] for i in idx], wg, mats)
        if len(idx) == m:
            b = bg
            break
        b[idx, :, :wg] = bg
        if wg < w:
            b[idx, :, wg:] = bg[:, :, -1:]
    held = 0
    one: list[int] = []
    two: list[int] = []
    first = [0] * len(level)  # index of each node's first edge
    j = 0
    for i, v in enumerate(level):
        first[i] = j
        k = len(kids[v])
        if k == 1:
            one.append(i)
        elif k == 2:
            two.append(i)
        j += k
    if one:
        idx = [first[i] for i in one]
        rows = b[idx] + times[[level[i] for i in one]]
        home.add(rows, [level[i] for i in one])
        held += rows.nbytes
        for r, i in enumerate(one):
            dp[level[i]] = rows[r, :, : out[first[i]]]
    if two:
        i1 = [first[i] for i in two]
        i2 = [first[i] + 1 for i in two]
        b1 = b[i1]
        b2 = b[i2]
        cat = np.concatenate((b1, b2), axis=2)
        cat.sort(axis=2)
        length = min(size, 2 * w - 1)
        rows = np.maximum(cat[:, :, : -length - 1 : -1], np.maximum(b1[:, :, -1:], b2[:, :, -1:]))
        del cat, b1, b2
        rows += times[[level[i] for i in two]]
        home.add(rows, [level[i] for i in two])
        held += rows.nbytes
        for r, i in enumerate(two):
            x, y = first[i], first[i] + 1
            dp[level[i]] = rows[r, :, : min(size, out[x] + out[y] - 1)]
            st.lifted[edges[x]] = b[x, :, : out[x]]
            st.lifted[edges[y]] = b[y, :, : out[y]]
    for i, v in enumerate(level):
        ch = kids[v]
        if len(ch) > 2:
            bs = [b[first[i] + c, :, : out[first[i] + c]] for c in range(len(ch))]
            for u, lu in zip(ch, bs, strict=True):
                st.lifted[u] = lu
            row = fold(bs, size)
            row += times[v]
            held += row.nbytes
            dp[v] = row
            home.add(row[None], [v])
    if two or len(edges) > len(one) + 2 * len(two):
        held += b.nbytes  # the lifted tables the rebuild reads are views of it
    return held
