"""The exact method's array forms held to their literal references: the leaf cost read by
one gather (`PairSearch._cost`), the padded tables `DenseCore` builds by shape, and the
hand-over to the list search with and without dead-end elimination."""

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
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.exact_helpers import array_budget, check, plans, reduced_core

INF = math.inf


def _factors(
    n: int, k: int, seed: int, holes: int
) -> tuple[float, dict[int, int], list[Any], dict[int, int]]:
    """A random plan's reduced core as the search takes it (factors over block ids), with
    `holes` table entries made infinite, none of them used by the feasible assignment
    returned (the root's rounding), so that it and its near neighbours are mostly
    finite."""
    from placement_cli.algorithms.solve.exact.search import PairSearch

    const, K, un, nb = reduced_core(n, k, seed)
    ks = dict(enumerate(K))
    factors: list[Any] = [((x,), list(u)) for x, u in enumerate(un)]
    factors += [((x, y), list(t)) for x, row in enumerate(nb) for y, t in row.items() if x < y]
    ps = PairSearch(
        ks,
        factors,
        const,
        INF,
        {},
        math.inf,
        ExactBudget(diffusion=DiffusionSettings(root_sweeps=8)),
        False,
    )
    base = ps.best_val
    assert base is not None and ps.best < INF
    used = {
        (sc, base[sc[0]] if len(sc) == 1 else base[sc[0]] * K[sc[1]] + base[sc[1]])
        for sc, _ in factors
    }
    rnd = random.Random(seed)
    for _ in range(holes):
        sc, tab = factors[rnd.randrange(len(factors))]
        i = rnd.randrange(len(tab))
        if (sc, i) not in used:
            tab[i] = INF
    return const, ks, factors, base


def _literal_cost(
    const: float, ks: dict[int, int], factors: list[Any], val: dict[int, int]
) -> float:
    terms = [const]
    for sc, tab in factors:
        terms.append(tab[val[sc[0]]] if len(sc) == 1 else tab[val[sc[0]] * ks[sc[1]] + val[sc[1]]])
    return INF if INF in terms else math.fsum(terms)


@pytest.mark.parametrize("n,k,seed,holes", [(60, 5, 0, 0), (80, 7, 3, 40), (200, 5, 1, 200)])
def test_leaf_cost_gather_equals_literal_sum(n: int, k: int, seed: int, holes: int) -> None:
    """The gather prices every assignment exactly as the literal sum over the core's
    original tables does (bit for bit, `inf` when a term is), on cores with and without
    numpy's form, whatever the reparametrisation did meanwhile."""
    from placement_cli.algorithms.solve.exact.search import PairSearch

    const, ks, factors, base = _factors(n, k, seed, holes)
    budget = ExactBudget(diffusion=DiffusionSettings(root_sweeps=8))
    ps = PairSearch(ks, factors, const, INF, {}, math.inf, budget, False)
    assert ps._flat is not None  # the core is large enough for the numpy form
    lists = PairSearch(
        ks,
        factors,
        const,
        INF,
        {},
        math.inf,
        ExactBudget(diffusion=DiffusionSettings(root_sweeps=8, dense_min_blocks=10**9)),
        False,
    )
    assert lists._flat is None
    rnd = random.Random(seed)
    finite = infinite = 0
    for _ in range(300):
        # The base assignment with a few blocks moved, or (one time in four) any.
        if rnd.random() < 0.25:
            val = {x: rnd.randrange(ks[v]) for x, v in enumerate(ps.vars)}
        else:
            val = {x: base[v] for x, v in enumerate(ps.vars)}
            for _ in range(rnd.randrange(4)):
                x = rnd.randrange(len(val))
                val[x] = rnd.randrange(ks[ps.vars[x]])
        want = _literal_cost(const, ks, factors, {ps.vars[x]: a for x, a in val.items()})
        assert ps._cost(val) == want
        assert lists._cost(val) == want
        finite += want < INF
        infinite += want == INF
    assert finite  # the check saw finite sums, not only infeasible ones
    assert infinite or not holes


def _padded_reference(d: Any, K: list[int], nb: list[Any]) -> Any:
    """The padded tables as first written: row by row, `inf` beyond each domain."""
    np = d.np
    kmax = d.kmax
    out = []
    for a, b in d.edges:
        t = nb[a][b]
        rows = [t[i * K[b] : (i + 1) * K[b]] + [INF] * (kmax - K[b]) for i in range(K[a])]
        rows += [[INF] * kmax] * (kmax - K[a])
        out.append(rows)
    return np.array(out, dtype=float).reshape(len(d.edges), kmax, kmax)


@pytest.mark.parametrize("n,k,seed", [(60, 5, 0), (80, 7, 3), (200, 6, 2)])
def test_dense_tables_by_shape_equal_padded_rows(n: int, k: int, seed: int) -> None:
    """Tables written into `T0` shape by shape are the row-by-row padded tables, and each
    edge's ends and arcs are where the sweep and the bound look for them."""
    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    _, K, un, nb = reduced_core(n, k, seed)
    assert len(set(K)) > 1  # mixed domain sizes: padding is exercised
    d = DenseCore(numpy_or_none(), Core(K, un, nb), list(range(len(K))), 1.4)
    np = d.np
    assert np.array_equal(d.T0, _padded_reference(d, K, nb))
    assert sorted(d.edges) == sorted((x, y) for x in range(len(K)) for y in nb[x] if x < y)
    for e, (a, b) in enumerate(d.edges):
        assert (d.ixs[d.ea[e]], d.ixs[d.eb[e]]) == (a, b)
    # Every arc is in the class of its owner, right after the arcs of earlier blocks.
    arcs = sorted(int(r) for r in np.concatenate([d.fa, d.fb]))
    assert arcs == list(range(2 * len(d.edges)))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.sampled_from([1, 16]), st.booleans(), st.booleans())
def test_hand_over_with_or_without_dominance_equals_brute_force(
    plan: dict[str, Any], leaf: int, primal: bool, dominance: bool
) -> None:
    """The node the list search takes from the arrays proves the optimum whether it
    masks dominated values in every block the fixing cut or only conditions the blocks
    left with one value."""

    g = parse_plan(plan)
    domains = prune(g).domains
    base = array_budget(leaf, primal, True)
    budget = msgspec.structs.replace(
        base,
        search=msgspec.structs.replace(
            base.search, array_handoff=0.75, handoff_dominance=dominance
        ),
    )
    out = solve_exact(g, domains, scc(g), Budget.within(30.0), budget=budget)
    best = check(plan, out, g, domains)
    assert out.optimal
    assert out.infeasible == (best == math.inf)


@pytest.mark.parametrize("n,k,seed", [(200, 5, 0), (500, 5, 1)])
def test_hand_over_without_dominance_proves_the_same_optimum(n: int, k: int, seed: int) -> None:
    """On random cores that reach the hand-over, both settings prove the same optimum."""
    from benchmarks.families import random_cyclic

    g = parse_plan(random_cyclic(n, seed, k))
    domains = prune(g).domains
    outs = [
        solve_exact(
            g,
            domains,
            scc(g),
            Budget.within(60.0),
            budget=ExactBudget(search=SearchSettings(handoff_dominance=flag)),
        )
        for flag in (False, True)
    ]
    assert all(o.optimal for o in outs)
    assert outs[0].lower_bound == outs[1].lower_bound
    assert outs[0].stats["search_nodes"] > 0
