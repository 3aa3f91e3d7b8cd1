"""Latency models that know where the engines run, and the exact DP for each.

The seed's DP (`dp`) takes the MAX over a node's children: sibling subtrees run at once
on engines that do not share anything, as on separate machines. Engines in one process
on one machine share its cores: two siblings started together only time-slice. So
`tree --latency` offers three models of a placement's latency, on the same times:

- `critical-path`: the seed's. A node's latency is its self-time plus its slowest
  child's (a child on another engine adding its transfer). `dp`, `rebuild`.
- `work`: everything runs one after another on one core: the sum of every node's
  self-time and every cut's transfer.
- `resource`: `max(critical path, work / cores)`: no placement finishes before its
  longest chain, nor before its total work spread over the cores it shares. The model
  of engines on one machine with `cores` cores.
- `measured`: `work` on a probed tree's subtree times as measured, never clamped
  (`measured_tree`): node v on engine e costs its subtree's median there less its
  children's subtrees' medians there, which may be negative (a filter the engine pushes
  into the scan below it). Everything on one engine then costs exactly that engine's
  measured whole; a cut at child c (on f, under a parent on e) trades c's subtree on e
  for c's subtree on f plus the hand-off. Fragments that run one after another, as on
  shared cores they do. A tree probed `--in-pipeline` also holds, per node, the rest of
  the query run with the node's result handed in: then a node's cost is what it adds
  inside the pipeline (the whole less that rest), and a cut's transfer is the child's
  materialisation on its engine, so every one-cut placement costs its two fragments
  as measured (`measured_tree`).

`work` is a sum over the tree, and `resource` is not a function of any one quantity per
subtree, so the DP here keeps, per node v, engine e and number of cuts k below v, the
set of (critical path, work) pairs that no other pair beats on both (the Pareto set);
every placement's pair is dominated by or equal to one kept, so the minimum of any
model that grows with both (all three do) is exact. A node's sets are built from its
children's: a child either on e (no cut) or on another engine f (one cut, its
transfer added to both the path and the work); siblings combine with MAX for the path
and SUM for the work, their cuts adding up; then the node's own time is added to both.
For `critical-path` and `work` each set holds one pair per k (the other coordinate is
not needed), which is the scalar DP of each.

Bounds: the DP looks at the clock every 64 nodes and counts the pairs it holds; past
`deadline` or `limits.memory_bytes` (at 64 bytes a pair) it stops and says which
(nothing is proven then). Ties: among the pairs of least latency, the fewest cuts,
then the first found (children in order, engines in the file's order).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from placement_cli.algorithms.tree.rebuild import Placement, place
from placement_cli.core.errors import InputError, Problem
from placement_cli.ir.tree.check import FLOAT_MAX
from placement_cli.ir.tree.model import INF, Explicit, Tree, TreeLimits, children_first

MODELS = ("critical-path", "work", "resource", "measured")
_PAIR_BYTES = 64
_CHECK_EVERY = 64


def value(cp: float, work: float, model: str, cores: int) -> float:
    """A placement's latency under `model` from its critical path and its work."""
    if model == "critical-path":
        return cp
    if model == "work":
        return work
    return max(cp, work / cores)


def measure(tree: Tree, assignment: Sequence[int]) -> tuple[float, float]:
    """(critical path, work) of a full assignment, from scratch (INF where it cannot
    run or a transfer is undefined)."""
    cp = [0.0] * tree.n
    work = [0.0] * tree.n
    for v in children_first(tree):
        e = assignment[v]
        worst = 0.0
        total = 0.0
        for u in tree.children[v]:
            f = assignment[u]
            t = 0.0 if f == e else float(tree.matrix(u)[f, e])
            worst = max(worst, cp[u] + t)
            total += work[u] + t
        cp[v] = tree.time[v][e] + worst
        work[v] = tree.time[v][e] + total
    return cp[tree.root], work[tree.root]


def latency(tree: Tree, assignment: Sequence[int], model: str, cores: int) -> float:
    """The latency of `assignment` under `model`."""
    cp, work = measure(tree, assignment)
    return value(cp, work, model, cores)


# A pair: (critical path, work, cuts, how: a rebuild record). `how` is
# (node, engine, ((child, child's pair), ...)), enough to rebuild the assignment.
Pair = tuple[float, float, int, Any]


def _prune(pairs: list[Pair], model: str, cores: int) -> list[Pair]:
    """The pairs no other beats on both coordinates, first found kept among equals; for
    the scalar models the one least pair."""
    if not pairs:
        return pairs
    if model != "resource":
        return [min(pairs, key=lambda p: value(p[0], p[1], model, cores))]
    order = sorted(range(len(pairs)), key=lambda i: (pairs[i][0], pairs[i][1], i))
    out: list[Pair] = []
    best_work = INF
    for i in order:
        p = pairs[i]
        if p[1] < best_work:
            out.append(p)
            best_work = p[1]
    return out


def place_model(
    tree: Tree,
    budget: int,
    model: str,
    cores: int,
    deadline: float | None = None,
    limits: TreeLimits | None = None,
) -> Placement:
    """The least latency under `model` with at most k cuts, for every k up to `budget`,
    and a placement that attains it at `budget` (module doc)."""
    limits = limits or TreeLimits()
    n_e = len(tree.engines)
    size = min(budget, max(tree.n - 1, 0)) + 1
    # sets[v][e][k]: pairs with exactly k cuts below v, v on e.
    sets: list[list[list[list[Pair]]] | None] = [None] * tree.n
    held = 0
    for count, v in enumerate(children_first(tree), 1):
        if count % _CHECK_EVERY == 0:
            if deadline is not None and time.monotonic() > deadline:
                return _stopped(budget, "time-limit", count - 1, tree.n, held)
            if held * _PAIR_BYTES > limits.memory_bytes:
                return _stopped(budget, "memory-limit", count - 1, tree.n, held)
        here: list[list[list[Pair]]] = []
        for e in range(n_e):
            t = tree.time[v][e]
            if t == INF:
                here.append([[] for _ in range(size)])
                continue
            # Start: no child yet, no cut.
            acc: list[list[Pair]] = [[] for _ in range(size)]
            acc[0] = [(0.0, 0.0, 0, ())]
            for u in tree.children[v]:
                opts = _child_options(tree, sets[u], u, e, size, model, cores)  # type: ignore[arg-type]
                nxt: list[list[Pair]] = [[] for _ in range(size)]
                for k1 in range(size):
                    for p in acc[k1]:
                        for k2 in range(size - k1):
                            for q in opts[k2]:
                                nxt[k1 + k2].append(
                                    (max(p[0], q[0]), p[1] + q[1], k1 + k2, (*p[3], (u, q)))
                                )
                acc = [_prune(x, model, cores) for x in nxt]
            here.append(
                [[(p[0] + t, p[1] + t, p[2], (v, e, p[3])) for p in acc[k]] for k in range(size)]
            )
        sets[v] = here
        held += sum(len(x) for per_e in here for x in per_e)
        for u in tree.children[v]:  # the children's sets live on in the rebuild records
            sets[u] = None
    root = sets[tree.root]
    assert root is not None
    frontier: list[float] = []
    best: Pair | None = None
    best_val = INF
    for k in range(size):
        for e in range(n_e):
            for p in root[e][k]:
                x = value(p[0], p[1], model, cores)
                if x < best_val:  # strictly: fewer cuts, then earlier engines, win ties
                    best_val, best = x, p
        frontier.append(best_val)
    if best is None:
        return Placement(budget, INF, tuple(frontier), (), 0)
    assignment = [0] * tree.n
    _rebuild(best, assignment)
    return Placement(budget, best_val, tuple(frontier), tuple(assignment), best[2])


def _child_options(
    tree: Tree,
    child: list[list[list[Pair]]],
    u: int,
    e: int,
    size: int,
    model: str,
    cores: int,
) -> list[list[Pair]]:
    """What child `u` offers a parent on engine `e`: per number of cuts, its pairs on e,
    and its pairs on every other engine with the transfer added and one cut more."""
    mat = tree.matrix(u)
    out: list[list[Pair]] = [[] for _ in range(size)]
    for f, per_k in enumerate(child):
        if f == e:
            for k in range(size):
                out[k].extend(per_k[k])
            continue
        tr = float(mat[f, e])
        if tr == INF:
            continue
        for k in range(size - 1):
            out[k + 1].extend((p[0] + tr, p[1] + tr, p[2] + 1, p[3]) for p in per_k[k])
    return [_prune(x, model, cores) for x in out]


def _rebuild(p: Pair, assignment: list[int]) -> None:
    stack = [p[3]]
    while stack:
        v, e, kids = stack.pop()
        assignment[v] = e
        stack.extend(q[3] for _, q in kids)


def _stopped(budget: int, why: str, done: int, n: int, held: int) -> Placement:
    return Placement(
        budget,
        INF,
        (),
        (),
        0,
        stopped=why,
        detail={"nodes_done": done, "nodes": n, "bytes_held": held * _PAIR_BYTES},
    )


def measured_tree(problem: Any, tree: Tree) -> Tree:
    """The tree `measured` runs on (module doc), from a probed tree's measurements (ms):
    `S[v][e]`, node v's subtree's median on engine e (`nodes[].subtree`), and, where the
    probe timed it (`--in-pipeline`), `R[v][e]`, the rest of the query on e with v's
    result handed in (`nodes[].above`).

    A node's cost inside the pipeline, `P[v][e]`, is the root's `S` less `R[v][e]`
    when v has a rest on every engine that ran its subtree, else its subtree as
    materialised, `S[v][e]`. Node v's time on e is `P[v][e]` less its children's `P`
    there (INF where a median is missing: that engine did not run it); a child c with
    a rest crosses from f to e at `S[c][f] - P[c][f]` (its result materialised on f;
    the receiving side is in e's rest, which ran with the result handed in), replacing
    the file's transfers for c. Everything on e then costs `S[root][e]`, and one cut at
    c, c on f under the rest on e, `R[c][e] + S[c][f]`: both as measured. An InputError
    (exit 3) naming the first node without any measured subtree."""
    nodes = problem.file.nodes
    engines = tree.engines
    subtree = []
    for v in range(tree.n):
        got = nodes[tree.origin[v]].subtree
        if not got:
            raise InputError(
                [
                    Problem(
                        f"{problem.prefix}nodes[{tree.origin[v]}].subtree",
                        "required by --latency measured: the subtree times a probe measures "
                        "(`import sql --probe`)",
                    )
                ],
                problem.source,
            )
        subtree.append([got[e].median if e in got else INF for e in engines])
    whole = subtree[tree.root]
    pipe: list[list[float]] = []
    inside: dict[int, tuple[list[float], list[float]]] = {}  # input node -> (S, P), with a rest
    for v in range(tree.n):
        rest = nodes[tree.origin[v]].above
        ran = [i for i, t in enumerate(subtree[v]) if t != INF]
        if v != tree.root and all(engines[i] in rest and whole[i] != INF for i in ran):
            p = [whole[i] - rest[e].median if i in ran else INF for i, e in enumerate(engines)]
            inside[tree.origin[v]] = (subtree[v], p)
            pipe.append(p)
        else:
            pipe.append(subtree[v])
    times = []
    for v in range(tree.n):
        row = []
        for e in range(len(engines)):
            below = [pipe[c][e] for c in tree.children[v]]
            if pipe[v][e] == INF or INF in below:
                row.append(INF)  # a subtree not measured there: no time to derive
            else:
                row.append(pipe[v][e] - sum(below))
        times.append(tuple(row))
    # Each node with a rest crosses from every engine f that ran it at S - P there.
    charges = [
        (o, f, s[f] - p[f])
        for o, (s, p) in inside.items()
        for f in range(len(engines))
        if s[f] != INF
    ]
    # Terms of both signs: every partial sum the DP forms is finite when the sum of their
    # magnitudes is (else inf - inf would be nan, read as "cannot run").
    size = sum(abs(t) for row in times for t in row if t != INF)
    size += sum(abs(c) for _, _, c in charges)
    if not size <= FLOAT_MAX:
        raise InputError(
            [
                Problem(
                    f"{problem.prefix}nodes",
                    "times too large for --latency measured: the self-times and hand-offs "
                    "derived from `subtree` and `above` add up past the largest finite "
                    "number (about 1.8e308); scale them down",
                )
            ],
            problem.source,
        )
    if not inside:
        return dataclasses.replace(tree, time=tuple(times))
    return dataclasses.replace(
        tree, time=tuple(times), explicit=_surcharges(tree, set(inside), charges)
    )


def _surcharges(tree: Tree, nodes: set[int], charges: list[tuple[int, int, float]]) -> Explicit:
    """The tree's explicit transfers with every input node of `nodes` crossing as
    `charges` say, `(node, from engine, cost)` to every other engine, in place of
    whatever the file said for it (`measured_tree`). Input order: the kept entries,
    then the charges in order, each to the other engines in order."""
    ex = tree.explicit
    keep = ~np.isin(ex.child, np.fromiter(nodes, dtype=np.int64, count=len(nodes)))
    child, src, dst, cost = (list(a[keep]) for a in (ex.child, ex.src, ex.dst, ex.cost))
    for o, f, c in charges:
        for e in range(len(tree.engines)):
            if e != f:
                child.append(o)
                src.append(f)
                dst.append(e)
                cost.append(c)
    return Explicit.of(
        np.array(child, dtype=np.int64),
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        np.array(cost, dtype=np.float64),
        len(tree.rows),
    )


def model_tree(problem: Any, tree: Tree, model: str) -> tuple[Tree, str]:
    """The tree and the model the DP runs for `model`: `measured` is `work` on
    `measured_tree`; the others are themselves on the tree as read."""
    if model == "measured":
        return measured_tree(problem, tree), "work"
    return tree, model


def solve(
    tree: Tree,
    budget: int,
    model: str,
    cores: int,
    deadline: float | None = None,
    limits: TreeLimits | None = None,
) -> Placement:
    """The placement under `model`: the seed's DP for `critical-path` (`rebuild.place`),
    the DP of pairs (`place_model`) for the others."""
    if model == "critical-path":
        return place(tree, budget, deadline, limits or TreeLimits())
    return place_model(tree, budget, model, cores, deadline, limits)


def resolve(
    model: str,
    cores: int | None,
    threads: dict[str, int | None] | None,
    in_pipeline: bool = False,
) -> tuple[str, int]:
    """The model `auto` stands for, and the cores: `measured` for a tree probed
    in-pipeline (`in_pipeline`: some node records the rest of the query above it and
    every node its subtree, so every one-cut placement is priced by the probe's own
    runs), else `resource` for a
    tree that records the threads its engines were probed with (they ran on this
    machine's cores), else `critical-path`; cores given, else the most threads an
    engine ran with, else the cores this process may use."""
    ran = [t for t in (threads or {}).values() if t]
    if model == "auto":
        model = "measured" if in_pipeline else "resource" if ran else "critical-path"
    if cores is None:
        cores = max(ran) if ran else _cores()
    return model, cores


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
