"""The seed's per-node operations of the critical-path DP (appendix A1), on arrays:
lifting a child's table across its edge (`lift`, seed lines 10-19) and folding the
children's lifted tables (`fold`, lines 21-33); the two-pointer walk that the rebuild
replays for one engine (`merge_minmax`, `split_minmax`).

Every value is formed by the same float operations as the pseudocode's (or selected
among them), so the results are equal, not close.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def at(seq: Sequence[float], k: int) -> float:
    """Value of a stored non-increasing sequence at budget k (its tail is implicit).

    >>> at([5.0, 3.0], 7)
    3.0
    """
    return seq[k] if k < len(seq) else seq[-1]


def trim(seq: list[float]) -> list[float]:
    """A non-increasing sequence without its constant tail (`at` reads it back).

    >>> trim([5.0, 3.0, 3.0, 3.0])
    [5.0, 3.0]
    """
    i = len(seq) - 1
    last = seq[i]
    while i > 0 and seq[i - 1] == last:
        i -= 1
    return seq if i == len(seq) - 1 else seq[: i + 1]


def merge_minmax(a: list[float], b: list[float], size: int) -> list[float]:
    """`c[k] = min over i+j=k of max(a[i], b[j])` for non-increasing a and b (read past
    their ends as constant), k < size, returned without its constant tail.

    Only the side that holds the max can lower it, so each step moves that side; when
    that side is at its end, nothing lowers the max any more. Ties move `a` first, and
    `split_minmax` replays the same walk.

    >>> merge_minmax([9, 5, 1], [7, 6, 2], 10)
    [9, 7, 6, 5, 2]
    """
    la = len(a)
    lb = len(b)
    n = la + lb - 1
    if n > size:
        n = size
    i = j = 0
    x = a[0]
    y = b[0]
    out = [x if x >= y else y]
    for _ in range(n - 1):
        if x >= y:
            i += 1
            if i == la:
                break
            x = a[i]
        else:
            j += 1
            if j == lb:
                break
            y = b[j]
        out.append(x if x >= y else y)
    return trim(out)


def split_minmax(a: list[float], b: list[float], k: int) -> tuple[int, int]:
    """The (i, j) with i + j <= k that `merge_minmax` used for `c[k]`.

    >>> split_minmax([9, 5, 1], [7, 6, 2], 3)
    (1, 2)
    """
    la = len(a)
    lb = len(b)
    i = j = 0
    x = a[0]
    y = b[0]
    for _ in range(k):
        if x >= y:
            if i + 1 == la:
                break
            i += 1
            x = a[i]
        else:
            if j + 1 == lb:
                break
            j += 1
            y = b[j]
    return i, j


def fold(bs: list[np.ndarray], size: int) -> np.ndarray:
    """Seed lines 21-33 for every engine at once: the fold of the children's lifted
    tables `bs` (each `E x L_u`, constant past its end), `merge_minmax` of all of them
    row by row, as an `E x min(size, sum L_u - len(bs) + 1)` array.

    No walk is needed for the values: `c[k] <= t` exactly when the children together
    have at most k entries above t, and each can only go as low as its last entry.
    So `c[k]` is the k-th largest entry of all the sequences, raised to the largest
    last entry (the same floats, selected, so equal to the walk's, not close).

    >>> fold([np.array([[9.0, 5.0, 1.0]]), np.array([[7.0, 6.0, 2.0]])], 10).tolist()
    [[9.0, 7.0, 6.0, 5.0, 2.0]]
    >>> fold([np.array([[9.0, 1.0, 0.0]]), np.array([[5.0]])], 10).tolist()
    [[9.0, 5.0, 5.0]]
    """
    length = min(size, sum(b.shape[1] for b in bs) - len(bs) + 1)
    cat = np.concatenate(bs, axis=1)
    cat.sort(axis=1)
    floor = bs[0][:, -1]
    for b in bs[1:]:
        floor = np.maximum(floor, b[:, -1])
    return np.maximum(cat[:, : -length - 1 : -1], floor[:, None])


def lift(du: np.ndarray, t: np.ndarray, size: int) -> np.ndarray:
    """Seed lines 10-19 for one child u and every parent engine e at once:
    `B[e, k] = min(du[e, k], min over e' != e of du[e', k-1] + T[e', e])`, k < size,
    with `du` the child's table (constant past its end) and `T[src, dst]` its transfer
    matrix.

    The diagonal (T = 0) adds `du[e, k-1] >= du[e, k]`, so it never wins and needs no
    exclusion; a missing transfer is +inf.

    >>> lift(np.array([[5.0, 4.0], [1.0, 1.0]]), np.array([[0.0, 2.0], [1.0, 0.0]]), 10).tolist()
    [[5.0, 2.0, 2.0], [1.0, 1.0, 1.0]]
    """
    n_e, length = du.shape
    n = length + 1 if length < size else size
    b = np.empty((n_e, n))
    b[:, 0] = du[:, 0]
    if n > 1:
        best = np.minimum.reduce(
            du[:, None, : n - 1] + t[:, :, None]
        )  # [src, dst, k - 1] -> [dst, k - 1]
        if n <= length:
            np.minimum(du[:, 1:n], best, out=b[:, 1:])
        else:  # the last budget reads du's constant tail
            np.minimum(du[:, 1:], best[:, :-1], out=b[:, 1:-1])
            np.minimum(du[:, -1], best[:, -1], out=b[:, -1])
    return b
