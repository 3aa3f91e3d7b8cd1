"""Fitting the transfer model T = a + b*R + c*W + d*R*W to measured hand-offs.

One direction (engine A to engine B) at a time: non-negative least squares on the four
columns 1, R, W, R*W (R rows, W bytes per row, T in ms), then what a user needs to judge
the fit: R², RMSE, the error on points held out of the fit, and which coefficients the
data cannot pin down.

Non-negative least squares with four unknowns is solved exactly by enumeration rather
than an iterative solver (no scipy): the optimum has some support S, and on S it is the
unconstrained least-squares solution of the columns in S (the KKT conditions: zero
gradient on the free coefficients). So the best feasible unconstrained solution over
the 15 non-empty subsets of columns (and the all-zero one) is the optimum.
`tests/test_calibrate_fit.py` checks the KKT conditions on random problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

COEFFICIENTS = ("fixed", "per_row", "per_width", "per_byte")
# Below this many distinct (rows, width) points a direction has no held-out check:
# holding out every 4th of fewer would leave too little to fit.
MIN_POINTS_HELD_OUT = 8
# Groups of the delete-a-group jackknife: enough for an interval, bounded so that a
# file of thousands of points does not mean thousands of refits.
JACKKNIFE_GROUPS = 20
Z95 = 1.959963984540054


def design(rows: np.ndarray, width: np.ndarray) -> np.ndarray:
    """The model's columns: 1, R, W, R*W."""
    r = np.asarray(rows, dtype=np.float64)
    w = np.asarray(width, dtype=np.float64)
    return np.column_stack([np.ones_like(r), r, w, r * w])


def nnls(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """argmin ||x @ c - y||² subject to c >= 0, for a matrix of at most a few columns.

    Each column is scaled to a largest entry of 1 first (R*W reaches 1e9 where 1 is 1), and a
    coefficient the enumeration gives as a tiny negative number from rounding counts
    as 0. Ties between subsets (the same residual within rounding) go to the one
    enumerated first: fewer columns, then column order.

    >>> x = design(np.array([0, 1, 2, 3.0]), np.array([1, 1, 1, 1.0]))
    >>> [round(float(v), 6) for v in nnls(x, np.array([5, 7, 9, 11.0]))]
    [5.0, 2.0, 0.0, 0.0]
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    k = x.shape[1]
    # By the largest entry, not the norm: the square of a tiny entry underflows to 0.
    norms = np.abs(x).max(axis=0)
    norms[norms == 0] = 1.0
    xs = x / norms
    best = np.zeros(k)
    best_res = float(y @ y)
    tol = 1e-12 * max(1.0, float(np.abs(y).max(initial=0.0)))
    # A larger subset must lower the residual by more than rounding does: collinear
    # columns (one width only: 1 and W) then keep the fewer coefficients, never a
    # minimum-norm split between them.
    tie = 1e-10 * float(y @ y)
    for size in range(1, k + 1):
        for cols in combinations(range(k), size):
            sub = xs[:, cols]
            sol, *_ = np.linalg.lstsq(sub, y, rcond=None)
            if (sol < -tol * 1e3).any():
                continue
            sol = np.maximum(sol, 0.0)
            r = sub @ sol - y
            res = float(r @ r)
            if res < best_res - tie:
                best_res = res
                best = np.zeros(k)
                best[list(cols)] = sol
    return best / norms


@dataclass(frozen=True)
class Fit:
    """One direction's fitted model and how good it is."""

    coefficients: dict[str, float]  # COEFFICIENTS -> value (ms, ms/row, ms/byte, ms/byte)
    n: int  # points fitted
    r2: float | None  # None when every T is equal (no variance to explain)
    rmse: float  # ms
    held_out_median_error: float | None  # |pred - T| / T on held-out points; None: too few
    held_out: int  # points held out
    intervals: dict[str, tuple[float, float]]  # jackknife 95% interval per coefficient
    identified: dict[str, str]  # "yes", "at-zero" (pinned by c >= 0), "uncertain"


def fit(rows: np.ndarray, width: np.ndarray, ms: np.ndarray, relative: bool = True) -> Fit:
    """Fit T = a + b*R + c*W + d*R*W to the points (T > 0), in input order.

    `relative`: each point weighs 1/max(T, median T), so above the median time the
    fit minimises the squared relative error and below it the absolute one. Large
    timings scatter in proportion to their size (a 2 s hand-off varies by tens of
    ms); unweighted, the largest points decide every coefficient and the fixed cost
    is lost in their noise: on 72 synthetic points with 5% relative noise the
    weighted fit gets a, b and d within 5% about 98 times in 100, the unweighted one
    about 75 (`tests/test_calibrate_fit.py`). Small ones scatter by a few ms of
    scheduling whatever their size, which pure 1/T weights would magnify: on this
    machine's measurements the floor raised R² from 0.47-0.80 to 0.74-0.94.

    Held out: every 4th distinct (rows, width) point in order of first appearance,
    with all its repeats (a repeat of a training point would flatter the error);
    the model is refitted without them and judged on them. Identifiability: a
    delete-a-group jackknife (point i in group i mod G) gives a 95% interval per
    coefficient; a coefficient at 0 is `at-zero`, one whose interval reaches 0 is
    `uncertain`.

    >>> r = np.array([1e3, 1e4, 1e5] * 3); w = np.repeat([8.0, 64, 256], 3)
    >>> f = fit(r, w, 4 + 1e-4 * r + 1e-6 * r * w)
    >>> round(f.coefficients["fixed"], 6), round(f.r2, 6), f.identified["per_width"]
    (4.0, 1.0, 'at-zero')
    """
    r = np.asarray(rows, dtype=np.float64)
    w = np.asarray(width, dtype=np.float64)
    y = np.asarray(ms, dtype=np.float64)
    x = design(r, w)
    s = 1.0 / np.maximum(y, np.median(y)) if relative else np.ones_like(y)
    x, y = x * s[:, None], y * s
    coef = nnls(x, y)
    # R² and RMSE are of the times themselves (ms), whatever the weights.
    t = y / s
    resid = t - (x / s[:, None]) @ coef
    ss_res = float(resid @ resid)
    ss_tot = float(((t - t.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
    rmse = float(np.sqrt(ss_res / len(t))) if len(t) else 0.0

    held, train = _split(r, w)
    err: float | None = None
    if len(held):
        c_train = nnls(x[train], y[train])
        p = (x[held] / s[held, None]) @ c_train
        err = float(np.median(np.abs(p - t[held]) / t[held]))

    intervals = _jackknife(x, y, coef)
    identified = {}
    for i, name in enumerate(COEFFICIENTS):
        lo, _ = intervals[name]
        if coef[i] == 0.0:
            identified[name] = "at-zero"
        elif lo <= 0.0:
            identified[name] = "uncertain"
        else:
            identified[name] = "yes"
    return Fit(
        coefficients={n: float(v) for n, v in zip(COEFFICIENTS, coef, strict=True)},
        n=len(y),
        r2=r2,
        rmse=rmse,
        held_out_median_error=err,
        held_out=int(len(held)),
        intervals=intervals,
        identified=identified,
    )


def _split(r: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices held out and kept: every 4th distinct (rows, width) in order of first
    appearance, with all its repeats; nothing held out below MIN_POINTS_HELD_OUT
    distinct points."""
    order: dict[tuple[float, float], int] = {}
    key = []
    for a, b in zip(r.tolist(), w.tolist(), strict=True):
        key.append(order.setdefault((a, b), len(order)))
    k = np.array(key, dtype=np.int64)
    if len(order) < MIN_POINTS_HELD_OUT:
        return np.zeros(0, dtype=np.int64), np.arange(len(k))
    out = k % 4 == 3
    return np.flatnonzero(out), np.flatnonzero(~out)


def _jackknife(x: np.ndarray, y: np.ndarray, coef: np.ndarray) -> dict[str, tuple[float, float]]:
    """A 95% interval per coefficient: the fit ± 1.96 jackknife standard errors, from
    G = min(n, 20) refits each without one group (point i in group i mod G). With
    fewer than 3 points there is no spread to measure: the interval is (-inf, inf)."""
    n = len(y)
    g = min(n, JACKKNIFE_GROUPS)
    if g < 3:
        return {name: (-np.inf, np.inf) for name in COEFFICIENTS}
    groups = np.arange(n) % g
    est = np.array([nnls(x[groups != j], y[groups != j]) for j in range(g)])
    se = np.sqrt((g - 1) / g * ((est - est.mean(axis=0)) ** 2).sum(axis=0))
    return {
        name: (float(coef[i] - Z95 * se[i]), float(coef[i] + Z95 * se[i]))
        for i, name in enumerate(COEFFICIENTS)
    }
