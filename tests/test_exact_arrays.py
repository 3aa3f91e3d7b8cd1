"""The search's upper levels on the root's arrays (`algorithms/solve/exact/arraysearch.py`) against
brute force, against the list search, and its hand-over test (`peel`) against a literal
reduction of the interaction graph."""

from __future__ import annotations

import math
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.budget import Budget, DiffusionSettings, SearchSettings
from placement_cli.algorithms.solve.exact import ExactBudget, solve_exact
from placement_cli.algorithms.solve.exact.arraysearch import ArrayNodes, peel
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.objective import evaluate
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.exact_helpers import array_budget, check, plans, reduced_core


@settings(max_examples=examples(800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.sampled_from([1, 4, 16]), st.booleans(), st.booleans(), st.booleans())
def test_array_search_equals_brute_force(
    plan: dict[str, Any], leaf: int, primal: bool, fixing: bool, backoff: bool
) -> None:
    """Conditioning by infinite unaries on the parent's reparametrisation, reduced-cost
    fixing on the arrays and the hand-over to the list search still prove the optimum
    (or infeasibility)."""
    g = parse_plan(plan)
    domains = prune(g).domains
    out = solve_exact(
        g, domains, scc(g), Budget.within(30.0), budget=array_budget(leaf, primal, fixing, backoff)
    )
    best = check(plan, out, g, domains)
    assert out.optimal
    assert out.infeasible == (best == math.inf)


def _count_array_nodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = ArrayNodes.array_node

    def counted(self: Any, *args: Any, **kw: Any) -> None:
        calls[0] += 1
        real(self, *args, **kw)

    monkeypatch.setattr(ArrayNodes, "array_node", counted)
    return calls


@pytest.mark.parametrize("n,k,seed", [(60, 5, 0), (60, 6, 1), (80, 5, 2), (80, 7, 3)])
def test_array_search_agrees_with_list_search(
    n: int, k: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond brute-force sizes: the array search (forced to branch on its own, no
    rounding to close the root) and the list search prove the same optimum, and the
    array search does run nodes."""
    from benchmarks.families import random_cyclic

    g = parse_plan(random_cyclic(n, seed, k))
    domains = prune(g).domains
    comps = scc(g)
    lists = solve_exact(
        g,
        domains,
        comps,
        Budget.within(60.0),
        budget=ExactBudget(search=SearchSettings(array_search=False, primal=False)),
    )
    calls = _count_array_nodes(monkeypatch)
    arrays = solve_exact(
        g,
        domains,
        comps,
        Budget.within(60.0),
        budget=ExactBudget(
            diffusion=DiffusionSettings(dense_min_blocks=0),
            search=SearchSettings(array_handoff=0.0, primal=False),
        ),
    )
    default = solve_exact(g, domains, comps, Budget.within(60.0))
    assert lists.optimal and arrays.optimal and default.optimal
    assert lists.lower_bound == arrays.lower_bound == default.lower_bound
    if arrays.stats.get("core_blocks", 0) and arrays.stats.get("search_nodes", 0):
        assert calls[0] > 0
    for out in (lists, arrays, default):
        if out.assignment is not None:
            c = evaluate(g, out.assignment)
            assert c is not None and c.total == out.lower_bound


def test_array_search_runs_on_a_random_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default budget sends a 200-block random core's search to the arrays."""
    from benchmarks.families import random_cyclic

    g = parse_plan(random_cyclic(200, 0, 5))
    domains = prune(g).domains
    calls = _count_array_nodes(monkeypatch)
    out = solve_exact(g, domains, scc(g), Budget.within(60.0))
    assert out.optimal and out.stats["search_nodes"] > 0
    assert calls[0] > 0


def _peel_reference(adj: dict[int, set[int]]) -> dict[int, set[int]]:
    """Literal R0/R1/R2 on the graph: while some vertex has degree at most two, remove
    the lowest such vertex, joining its two neighbours when it has two."""
    adj = {x: set(ns) for x, ns in adj.items()}
    while True:
        low = [x for x in sorted(adj) if len(adj[x]) <= 2]
        if not low:
            return adj
        x = low[0]
        ns = adj.pop(x)
        for y in ns:
            adj[y].discard(x)
        if len(ns) == 2:
            a, b = ns
            adj[a].add(b)
            adj[b].add(a)


@pytest.mark.parametrize("seed", range(40))
def test_peel_equals_literal_reduction(seed: int) -> None:
    """The blocks left after the reductions do not depend on their order (the remaining
    graph is the 3-core of series-parallel reductions), so the worklist and the
    literal lowest-first loop leave the same graph."""
    rng = random.Random(seed)
    n = rng.randrange(1, 30)
    p = rng.choice([0.05, 0.1, 0.2, 0.4])
    adj: dict[int, set[int]] = {x: set() for x in range(n)}
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < p:
                adj[a].add(b)
                adj[b].add(a)
    want = _peel_reference(adj)
    peel(adj)
    assert adj == want


def _bound_reference(d: Any, const: float) -> tuple[float, Any]:
    """`DenseCore.bound` as first written (masking by `np.where`, `np.add.at`, row minima
    along the short axis): the rank-by-rank sums must match it bit for bit."""
    np = d.np
    U, M = d.U, d.M
    live = U < math.inf
    if not live.any(axis=1).all():
        return math.inf, None
    with np.errstate(invalid="ignore"):
        masked = np.where(
            live.take(d.eb, axis=0).T[:, :, None],
            d.T0T - M.take(d.fb, axis=0).T[:, :, None],
            math.inf,
        )
        rmin = masked.min(axis=0) - M.take(d.fa, axis=0)
    h = U.copy()
    np.add.at(h, d.ea, rmin)
    return const + math.fsum(h.min(axis=1).tolist()), h


@pytest.mark.parametrize("n,k,seed", [(60, 5, 0), (80, 7, 3), (200, 5, 1)])
def test_dense_bound_equals_reference_bit_for_bit(n: int, k: int, seed: int) -> None:
    """The bound and its margins, after sweeps and values made infinite (as the search
    and reduced-cost fixing do), are exactly the reference's: same sums, same order."""
    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    np = numpy_or_none()
    const, K, un, nb = reduced_core(n, k, seed)
    assert len(K) >= 24
    d = DenseCore(np, Core(K, un, nb), list(range(len(K))), 1.4)
    rnd = random.Random(seed)
    live_seen = dead_seen = 0
    for _ in range(40):
        for _ in range(rnd.randrange(3)):
            d.sweep()
        if rnd.random() < 0.4:
            d.U[rnd.randrange(d.U.shape[0]), rnd.randrange(d.U.shape[1])] = math.inf
        want, h = _bound_reference(d, const)
        got = d.bound(const)
        assert got == want
        if h is None:
            dead_seen += 1
        else:
            live_seen += 1
            assert np.array_equal(h, d.h)
    assert live_seen


@pytest.mark.parametrize("seed", range(30))
def test_dsatur_is_a_proper_colouring(seed: int) -> None:
    """Blocks of one class share no table (the sweep's vectorised class update relies on
    it), every block gets a colour below its degree plus one, and the colouring depends
    on the graph only."""
    from placement_cli.algorithms.solve.exact.dense import dsatur_colouring

    rnd = random.Random(seed)
    m = rnd.randrange(1, 60)
    adj: list[list[int]] = [[] for _ in range(m)]
    for _ in range(rnd.randrange(0, 3 * m)):
        a, b = rnd.randrange(m), rnd.randrange(m)
        if a != b and b not in adj[a]:
            adj[a].append(b)
            adj[b].append(a)
    colour = dsatur_colouring(adj)
    assert len(colour) == m and min(colour) >= 0
    for a in range(m):
        assert colour[a] <= len(adj[a])
        assert all(colour[a] != colour[b] for b in adj[a])
    assert dsatur_colouring([list(ns) for ns in adj]) == colour


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.sampled_from([1, 16]), st.booleans())
def test_array_search_with_greedy_classes_equals_brute_force(
    plan: dict[str, Any], leaf: int, primal: bool
) -> None:
    """The greedy colouring in block order (cores above `dsatur_max_blocks`) proves the
    same optimum as brute force."""

    g = parse_plan(plan)
    domains = prune(g).domains
    base = array_budget(leaf, primal, True)
    budget = msgspec.structs.replace(
        base, diffusion=msgspec.structs.replace(base.diffusion, dsatur_max_blocks=0)
    )
    out = solve_exact(g, domains, scc(g), Budget.within(30.0), budget=budget)
    best = check(plan, out, g, domains)
    assert out.optimal
    assert out.infeasible == (best == math.inf)


@pytest.mark.parametrize("dsatur", [True, False])
def test_dense_classes_share_no_table(dsatur: bool) -> None:
    """Each colour class of the sweep (either colouring) is an independent set of the
    core's interaction graph, and every block with a neighbour is in exactly one."""
    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    _, K, un, nb = reduced_core(200, k=6, seed=3)
    d = DenseCore(numpy_or_none(), Core(K, un, nb), list(range(len(K))), 1.4, dsatur)
    seen: list[int] = []
    for lo, hi, *_ in d.classes:
        members = {d.ixs[r] for r in range(lo, hi)}
        assert all(y not in members for x in members for y in nb[x])
        seen += members
    assert sorted(seen) == [x for x in range(len(K)) if nb[x]]
    if dsatur:
        assert len(d.classes) <= 4
