"""Transition matrices per edge, in the reference's order (§2.4 a-e).

For an edge u -> v with domains D(u), D(v) and transfer T (what is live across the edge
times the per-unit cost):
  a. same target free: M[t,t] = 0 for t in D(u) & D(v);
  b. the fallback target F: if F in D(v), M[s,F] = T for every s in D(u);
  c. goto/switch: M[s,t] = T for every s in D(u), t in D(v); graph_read: clear, then
     M[t,t] = 0 for the effect-running targets in both domains (the reference: I -> I);
  d. nothing enters a non-enterable target from another one; on an edge inside a loop
     (source in a non-trivial SCC, or a self-loop) a loop-banned target loses every entry;
  e. the fixed switch overhead is added where an entry exists (never on the diagonal).
"""

from __future__ import annotations

import math

from placement_cli.frontends.lower.profile import Compiled

UNPRICEABLE = 4294967294.0  # the reference's Cost::MAX: a transfer no finite number bounds


def estimate(lo: float, hi: float, how: str, cap: float | None) -> float | None:
    """A size range as one number; None when it is unbounded and no cap is set.

    >>> estimate(2, 6, "midpoint", None), estimate(0, math.inf, "midpoint", 10), estimate(0, math.inf, "lower", None)
    (4.0, 5.0, None)
    """
    if hi == math.inf:
        if cap is None:
            return None
        hi = max(lo, cap)
    if how == "lower":
        return float(lo)
    if how == "upper":
        return float(hi)
    return (lo + hi) / 2


def sccs_in_loop(n: int, succ: list[list[int]]) -> list[bool]:
    """in_loop[u]: u's strongly connected component has more than one block
    (iterative Tarjan; self-loops are decided per edge by the caller)."""
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    stack: list[int] = []
    comp_big = [False] * n
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on[root] = True
        while work:
            u, k = work[-1]
            if k < len(succ[u]):
                work[-1] = (u, k + 1)
                v = succ[u][k]
                if index[v] < 0:
                    index[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    on[v] = True
                    work.append((v, 0))
                elif on[v]:
                    low[u] = min(low[u], index[v])
            else:
                work.pop()
                if work:
                    p = work[-1][0]
                    low[p] = min(low[p], low[u])
                if low[u] == index[u]:
                    members = []
                    while True:
                        w = stack.pop()
                        on[w] = False
                        members.append(w)
                        if w == u:
                            break
                    if len(members) > 1:
                        for w in members:
                            comp_big[w] = True
    return comp_big


def matrix(
    prof: Compiled, kind: str, du: int, dv: int, transfer: float, in_loop: bool
) -> tuple[float | None, ...]:
    """One edge's matrix, flat `[s * n + d]`, None where forbidden.

    >>> from placement_cli.frontends.lower.profile import load_profile
    >>> p = load_profile("hashql")
    >>> m = matrix(p, "goto", 0b011, 0b111, 2.0, False)   # {I,P} -> {I,P,E}, 2 units live
    >>> [m[s * 3 + d] for s in range(2) for d in range(3)]
    [0.0, None, 6.0, 10.0, 0.0, 14.0]
    """
    n = prof.n
    cost: list[float | None] = [None] * (n * n)
    both = du & dv
    for t in range(n):  # a
        if both >> t & 1:
            cost[t * n + t] = 0.0
    fb = prof.fallback
    if fb >= 0 and dv >> fb & 1:  # b
        for s in range(n):
            if du >> s & 1:
                cost[s * n + fb] = 0.0 if s == fb else transfer
    if kind in ("goto", "switch"):  # c
        for s in range(n):
            if du >> s & 1:
                for d in range(n):
                    if dv >> d & 1:
                        cost[s * n + d] = 0.0 if s == d else transfer
    elif kind == "graph_read":
        cost = [None] * (n * n)
        for t in range(n):
            if both >> t & 1 and prof.rules[t].effects:
                cost[t * n + t] = 0.0
    for t, r in enumerate(prof.rules):  # d
        if not r.enterable:
            for s in range(n):
                if s != t:
                    cost[s * n + t] = None
        if in_loop and not r.loops:
            for x in range(n):
                cost[x * n + t] = None
                cost[t * n + x] = None
    over = prof.overhead  # e
    for s in range(n):
        for d in range(n):
            c = cost[s * n + d]
            if c is not None and s != d:
                cost[s * n + d] = min(UNPRICEABLE, c + over[s * n + d])
    return tuple(cost)
