"""The exact method against brute force (tests/reference.py) on thousands of tiny plans,
plus its bounds, budgets, time limits and determinism."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.budget import (
    Budget,
    CellBudget,
    DiffusionSettings,
    DominanceSettings,
    SearchSettings,
)
from placement_cli.algorithms.solve.exact import (
    ExactBudget,
    lower_bound,
    mini_bucket_bound,
    solve_exact,
)
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.model import build_model
from placement_cli.algorithms.solve.objective import UNASSIGNED, evaluate, feasible_for
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.exact_helpers import TARGETS, check, plans, random_factors
from tests.reference import brute_force

# No table budget and no reductions: the whole plan is the core, solved by the search.
SEARCH_ONLY = ExactBudget(cells=CellBudget(table=1), reductions=False)


@settings(max_examples=examples(2500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_exact_equals_brute_force(plan: dict[str, Any]) -> None:
    g = parse_plan(plan)
    domains = prune(g).domains
    out = solve_exact(g, domains, scc(g), Budget.within(30.0))
    best = check(plan, out, g, domains)
    assert out.optimal
    assert out.infeasible == (best == math.inf)
    # Pruning is exact: the unpruned domains give the same optimum.
    raw = solve_exact(g, g.domain, scc(g), Budget.within(30.0))
    check(plan, raw, g, g.domain)
    assert raw.optimal and raw.infeasible == out.infeasible
    if not out.infeasible:
        assert raw.lower_bound == out.lower_bound


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(frac=True), st.booleans())
def test_decimal_costs(plan: dict[str, Any], search: bool) -> None:
    """Costs floats cannot represent exactly, through the elimination or the search."""
    g = parse_plan(plan)
    domains = prune(g).domains
    out = solve_exact(
        g, domains, scc(g), Budget.within(30.0), budget=SEARCH_ONLY if search else ExactBudget()
    )
    best = check(plan, out, g, domains)
    assert out.optimal and out.infeasible == (best == math.inf)


@settings(max_examples=examples(800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.integers(0, 2), st.booleans(), st.booleans(), st.booleans())
def test_search_path_equals_brute_force(
    plan: dict[str, Any], cap: int, dense: bool, primal: bool, fixing: bool
) -> None:
    """With no table budget the whole problem is the core: the branch-and-eliminate
    search and the mini-bucket bound must still prove the optimum, with the diffusion
    on lists or (`dense`) on numpy arrays at every node, with and without the primal
    heuristic (rounding the reparametrisation at the root and every node) and the
    reduced-cost fixing (values whose fixed bound cannot beat the incumbent go)."""
    g = parse_plan(plan)
    domains = prune(g).domains
    budget = ExactBudget(
        cells=CellBudget(table=1, leaf_dp=(1, 4, 16)[cap], mini_bucket=4),
        diffusion=DiffusionSettings(dense_min_blocks=0 if dense else 1 << 30),
        search=SearchSettings(primal=primal, fixing=fixing),
        reductions=False,
    )
    out = solve_exact(g, domains, scc(g), Budget.within(30.0), budget=budget)
    best = check(plan, out, g, domains)
    assert out.optimal
    assert out.infeasible == (best == math.inf)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.randoms(use_true_random=False))
def test_incumbent_and_zero_time(plan: dict[str, Any], rnd: random.Random) -> None:
    """Out of time the answer is the incumbent (or better) with a true lower bound."""
    g = parse_plan(plan)
    domains = prune(g).domains
    best, best_assign = brute_force(plan)
    inc = None
    if best_assign is not None:
        # A random feasible assignment, found by sampling; else the optimum itself.
        live = [b for b in range(g.n_blocks) if g.live[b]]
        for _ in range(20):
            cand = [UNASSIGNED] * g.n_blocks
            for b in live:
                opts = [t for t in range(g.n_targets) if domains[b] >> t & 1]
                cand[b] = rnd.choice(opts) if opts else 0
            if feasible_for(g, domains, cand):
                inc = tuple(cand)
                break
        if inc is None:
            inc = tuple(
                g.targets.index(best_assign[bid]) if g.live[b] else UNASSIGNED
                for b, bid in enumerate(g.block_ids)
            )
    for limit in (0.0, 30.0):
        # A core, so that the time limit matters.
        out = solve_exact(
            g, domains, scc(g), Budget.within(limit), incumbent=inc, budget=SEARCH_ONLY
        )
        check(plan, out, g, domains)
        if inc is not None:
            c_inc = evaluate(g, inc)
            assert c_inc is not None and out.assignment is not None
            assert (evaluate(g, out.assignment) or c_inc).total <= c_inc.total
        if limit > 0:
            assert out.optimal


@settings(max_examples=examples(300), deadline=None)
@given(plans(), st.integers(1, 64))
def test_mini_bucket_is_a_lower_bound(plan: dict[str, Any], cap: int) -> None:
    g = parse_plan(plan)
    domains = prune(g).domains
    model = build_model(g, domains)
    best, _ = brute_force(plan)
    if model is None:
        assert best == math.inf
        return
    lb = mini_bucket_bound(model.ks, model.factors(), model.constant, cap)
    assert lb <= best
    # With room for every bucket it is the optimum itself.
    assert mini_bucket_bound(model.ks, model.factors(), model.constant, 1 << 20) == best


@settings(max_examples=examples(400), deadline=None)
@given(plans(), st.booleans())
def test_lower_bound_alone(plan: dict[str, Any], wide: bool) -> None:
    """The search-free bound (for a heuristic answer's gap) never exceeds the optimum,
    and is the optimum when the dynamic programming fits."""
    g = parse_plan(plan)
    domains = prune(g).domains
    best, _ = brute_force(plan)
    lb = lower_bound(g, domains, Budget.within(10.0), budget=SEARCH_ONLY if wide else ExactBudget())
    assert lb <= best
    if not wide:
        assert lb == best


@settings(max_examples=examples(300), deadline=None)
@given(
    plans(), st.integers(1, 12), st.randoms(use_true_random=False), st.sampled_from([1.0, 1.4, 1.9])
)
def test_dense_diffusion_preserves_costs(
    plan: dict[str, Any], sweeps: int, rnd: random.Random, relax: float
) -> None:
    """The numpy sweeps, plain or over-relaxed (`relax`, 1.9 included: it oscillates),
    are a reparametrisation: every assignment keeps its cost, no entry becomes NaN, the
    bound read off never exceeds the optimum, and the list form written back says so too."""
    from placement_cli.algorithms.solve.exact.bounds import bound_of
    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    g = parse_plan(plan)
    model = build_model(g, prune(g).domains)
    best, _ = brute_force(plan)
    assume(model is not None and model.ks)
    assert model is not None
    xs = sorted(model.ks)
    K = [model.ks.get(v, 0) for v in range(g.n_blocks)]
    un: list[Any] = [None] * g.n_blocks
    nb: list[Any] = [None] * g.n_blocks
    for v in xs:
        un[v] = list(model.unary[v])  # type: ignore[arg-type]
        nb[v] = {}
    for (a, b), tab in model.pairs.items():
        nb[a][b] = nb[b][a] = list(tab)

    def cost(val: dict[int, int], un: list[Any], nb: list[Any]) -> float:
        c = sum(un[v][val[v]] for v in xs)
        return c + sum(nb[a][b][val[a] * K[b] + val[b]] for a in xs for b in nb[a] if a < b)

    samples = [{v: rnd.randrange(K[v]) for v in xs} for _ in range(8)]
    before = [cost(val, un, nb) for val in samples]
    np = numpy_or_none()
    dense = DenseCore(np, Core(K, un, nb), xs, relax)
    for _ in range(sweeps):
        dense.sweep()
        assert not np.isnan(dense.U).any() and not np.isnan(dense.M).any()
    lb = dense.bound(model.constant)
    dense.write_back(Core(K, un, nb))
    assert lb <= best + 1e-9 * max(1.0, abs(best))
    assert bound_of(Core(K, un, nb), xs, model.constant) <= best + 1e-9 * max(1.0, abs(best))
    for val, c0 in zip(samples, before, strict=True):
        c1 = cost(val, un, nb)
        assert c0 == c1 == math.inf or math.isclose(c0, c1, rel_tol=1e-9, abs_tol=1e-9)


@given(plans(), st.integers(1, 6))
def test_dense_sweep_equals_list_sweep_in_class_order(plan: dict[str, Any], sweeps: int) -> None:
    """The arrays, laid out class by class, do the list form's sweep (`bounds._diffuse`,
    an independent per-block implementation) in the colour classes' order: the blocks of
    a class share no table, so that order is the one the arrays' sweep follows. The
    unaries, tables, bound and margins agree, each by block (not by row of the arrays)."""
    from placement_cli.algorithms.solve.exact.bounds import bound_of, diffuse
    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    g = parse_plan(plan)
    model = build_model(g, prune(g).domains)
    assume(model is not None and model.ks)
    assert model is not None
    xs = sorted(model.ks)
    K = [model.ks.get(v, 0) for v in range(g.n_blocks)]

    def lists() -> tuple[list[Any], list[Any]]:
        un: list[Any] = [None] * g.n_blocks
        nb: list[Any] = [None] * g.n_blocks
        for v in xs:
            un[v] = list(model.unary[v])  # type: ignore[arg-type, union-attr]
            nb[v] = {}
        for (a, b), tab in model.pairs.items():  # type: ignore[union-attr]
            nb[a][b] = nb[b][a] = list(tab)
        return un, nb

    def close(p: float, q: float) -> bool:
        return p == q or math.isclose(p, q, rel_tol=1e-9, abs_tol=1e-9)

    un1, nb1 = lists()
    un2, nb2 = lists()
    dense = DenseCore(numpy_or_none(), Core(K, un1, nb1), xs)
    assert sorted(dense.ixs) == xs
    for _ in range(sweeps):
        dense.sweep()
        diffuse(Core(K, un2, nb2), dense.ixs)
    hs: dict[int, list[float]] = {}
    lb2 = bound_of(Core(K, un2, nb2), xs, model.constant, hs)
    assert close(dense.bound(model.constant), lb2)
    got = dense.margins()
    assert all(close(p, q) for x in hs for p, q in zip(got[x], hs[x], strict=True))
    dense.write_back(Core(K, un1, nb1))
    for x in xs:
        assert all(close(p, q) for p, q in zip(un1[x], un2[x], strict=True)), x
        for y in nb2[x]:
            assert all(close(p, q) for p, q in zip(nb1[x][y], nb2[x][y], strict=True)), (x, y)


@settings(max_examples=examples(300), deadline=None)
@given(plans(), st.integers(0, 12))
def test_reduced_cost_fixing_keeps_every_optimum(plan: dict[str, Any], sweeps: int) -> None:
    """Reduced-cost fixing on the arrays, with an incumbent one above the optimum, drops
    no value any optimal assignment uses (every assignment enumerated on the original
    tables), and never the block's least term."""
    import itertools

    from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none

    g = parse_plan(plan)
    model = build_model(g, prune(g).domains)
    assume(model is not None and model.ks)
    assert model is not None
    xs = sorted(model.ks)
    K = [model.ks.get(v, 0) for v in range(g.n_blocks)]
    assume(math.prod(K[v] for v in xs) <= 4096)
    un: list[Any] = [None] * g.n_blocks
    nb: list[Any] = [None] * g.n_blocks
    for v in xs:
        un[v] = list(model.unary[v])  # type: ignore[arg-type]
        nb[v] = {}
    for (a, b), tab in model.pairs.items():
        nb[a][b] = nb[b][a] = list(tab)
    costs = {}
    for vals in itertools.product(*(range(K[v]) for v in xs)):
        val = dict(zip(xs, vals, strict=True))
        c = sum(un[v][val[v]] for v in xs)
        c += sum(nb[a][b][val[a] * K[b] + val[b]] for a in xs for b in nb[a] if a < b)
        costs[vals] = c
    opt = min(costs.values())
    assume(opt < math.inf)
    dense = DenseCore(numpy_or_none(), Core(K, un, nb), xs)
    for _ in range(sweeps):
        dense.sweep()
    lb = dense.bound(0.0)
    assert lb <= opt + 1e-9
    dense.fix(lb, opt + 1, True)
    for vals, c in costs.items():
        if c == opt:
            for i, a in enumerate(vals):
                assert dense.unaries()[i, a] < math.inf, (vals, i)
    assert (dense.U < math.inf).any(axis=1).all()


def _chain_plan(n: int, k: int, seed: int, extra: int, window: int | None = None) -> dict[str, Any]:
    """A chain with random chords (within `window` blocks when given): cycles, and a
    treewidth that grows with `extra` and `window`."""
    rng = random.Random(seed)
    targets = TARGETS[:k]
    blocks = []
    for i in range(n):
        succ = [i + 1] if i + 1 < n else []
        for _ in range(extra):
            if rng.random() < 0.5:
                lo, hi = (0, n) if window is None else (max(0, i - window), min(n, i + window))
                succ.append(rng.randrange(lo, hi))
        blocks.append(
            {
                "id": f"b{i}",
                "cost": {t: rng.randrange(10) for t in targets},
                "terminator": {
                    "kind": "switch" if succ else "return",
                    "successors": [
                        {
                            "block": f"b{s}",
                            "transitions": {
                                a: {
                                    b: (0 if a == b else rng.randrange(1, 6))
                                    for b in targets
                                    if rng.random() < 0.8 or a == b
                                }
                                for a in targets
                            },
                        }
                        for s in succ
                    ],
                },
            }
        )
    return {"version": 1, "targets": targets, "blocks": blocks}


@pytest.mark.parametrize("seed", range(6))
def test_medium_plans_agree_across_methods(seed: int) -> None:
    """On 9-block plans (still brute-forceable) with many chords, the elimination, the
    search-only path and the mini-bucket bound agree with brute force."""
    plan = _chain_plan(9, 3, seed, 2)
    g = parse_plan(plan)
    domains = prune(g).domains
    best, _ = brute_force(plan)
    out = solve_exact(g, domains, scc(g), Budget.within(30.0))
    check(plan, out, g, domains)
    assert out.optimal
    out2 = solve_exact(g, domains, scc(g), Budget.within(30.0), budget=SEARCH_ONLY)
    check(plan, out2, g, domains)
    assert out2.optimal


def test_deterministic() -> None:
    """Same input, same outcome, counters included: through the dynamic programming
    (a chain with local chords) and through the search (a random graph)."""
    from benchmarks.families import random_cyclic

    for plan in (_chain_plan(300, 4, 7, 2, window=6), random_cyclic(60, 0)):
        g = parse_plan(plan)
        domains = prune(g).domains
        a = solve_exact(g, domains, scc(g), Budget.within(30.0))
        b = solve_exact(g, domains, scc(g), Budget.within(30.0))
        assert a == b
        assert a.optimal
    # The primal heuristic closes this core at the root; without it the search runs.
    assert "search_nodes" in a.stats
    no_primal = ExactBudget(search=SearchSettings(primal=False))
    c = solve_exact(g, domains, scc(g), Budget.within(30.0), budget=no_primal)
    assert c == solve_exact(g, domains, scc(g), Budget.within(30.0), budget=no_primal)
    assert c.stats.get("search_nodes", 0) > 0
    assert c.lower_bound == a.lower_bound and c.optimal


def test_float_costs_bound_below_cost() -> None:
    """Non-integer costs: a cut-short bound still sits at or below the cost."""
    plan = _chain_plan(60, 3, 3, 2, window=6)
    for b in plan["blocks"]:
        b["cost"] = {t: c + 0.1 for t, c in b["cost"].items()}
    g = parse_plan(plan)
    domains = prune(g).domains
    full = solve_exact(g, domains, scc(g), Budget.within(30.0))
    assert full.optimal and full.assignment is not None
    cut = solve_exact(g, domains, scc(g), Budget.within(0.0), incumbent=full.assignment)
    assert cut.lower_bound <= (evaluate(g, full.assignment) or evaluate(g, full.assignment)).total


@pytest.mark.parametrize(
    "family,n,seed",
    [("random", 40, s) for s in range(4)] + [("dense_loop", 150, 0), ("structured", 400, 1)],
)
def test_dp_and_search_agree_on_generated_plans(family: str, n: int, seed: int) -> None:
    """Beyond brute-force sizes: the elimination alone, the search alone (with its
    diffusion bounds) and the default mix prove the same optimum."""
    from benchmarks.families import FAMILIES

    g = parse_plan(FAMILIES[family](n, seed))
    domains = prune(g).domains
    comps = scc(g)
    default = solve_exact(g, domains, comps, Budget.within(60.0))
    dp = solve_exact(
        g,
        domains,
        comps,
        Budget.within(60.0),
        budget=ExactBudget(cells=CellBudget(table=1 << 22, dp=1 << 24)),
    )
    search = solve_exact(g, domains, comps, Budget.within(60.0), budget=SEARCH_ONLY)
    lists = solve_exact(
        g,
        domains,
        comps,
        Budget.within(60.0),
        budget=ExactBudget(
            cells=CellBudget(table=1),
            diffusion=DiffusionSettings(dense_min_blocks=1 << 30),
            reductions=False,
        ),
    )
    # Dead-end elimination before the search (off by default) proves the same optimum.
    dee = solve_exact(
        g,
        domains,
        comps,
        Budget.within(60.0),
        budget=ExactBudget(dominance=DominanceSettings(search_cores=True)),
    )
    assert default.optimal and dp.optimal and search.optimal and lists.optimal and dee.optimal
    assert (
        default.lower_bound
        == dp.lower_bound
        == search.lower_bound
        == lists.lower_bound
        == dee.lower_bound
    )
    for out in (default, dp, search, lists, dee):
        if out.assignment is not None:
            c = evaluate(g, out.assignment)
            assert c is not None and c.total == out.lower_bound


def _forbidding(plan: dict[str, Any], p: float, seed: int) -> dict[str, Any]:
    """The plan with each transition between two different targets forbidden with
    probability `p` (seeded): dense forbidden pairs, as in HashQL's loop rules."""
    rng = random.Random(seed)
    for b in plan["blocks"]:
        for e in b["terminator"].get("successors", []):
            rows = e["transitions"]
            for a in list(rows):
                for c in list(rows[a]):
                    if a != c and rng.random() < p:
                        del rows[a][c]
    return plan


@pytest.mark.parametrize("seed,p", [(0, 0.6), (0, 0.5), (1, 0.5)])
def test_search_nodes_left_without_values(seed: int, p: float) -> None:
    """Dense forbidden pairs leave a search node where the reductions
    fold infinite costs onto every value of a block the masking did not look at. The
    diffusion bound crashed there (`min() arg is an empty sequence`, seeds (0, 0.6) and
    (0, 0.5)) and a leaf proved infeasible by its elimination crashed rounding `inf`
    (seed (1, 0.5)). Such a node is infeasible; the default mix (with the plain and the
    over-relaxed diffusion), the elimination alone and the search alone must prove the
    same optimum."""
    from benchmarks.families import random_cyclic

    g = parse_plan(_forbidding(random_cyclic(60, seed, 6), p, seed))
    domains = prune(g).domains
    outs = [
        solve_exact(g, domains, scc(g), Budget.within(60.0), budget=b)
        for b in (
            ExactBudget(diffusion=DiffusionSettings(relax=1.0, root_relax=1.0)),
            ExactBudget(),
            ExactBudget(cells=CellBudget(table=1 << 22, dp=1 << 24)),
            SEARCH_ONLY,
        )
    ]
    # The plain diffusion does reach the search (the over-relaxed one may close the root).
    assert outs[0].stats.get("search_nodes", 0) > 0
    for out in outs:
        assert out.optimal and not out.infeasible and out.assignment is not None
        assert feasible_for(g, domains, out.assignment)
        c = evaluate(g, out.assignment)
        assert c is not None and c.total == out.lower_bound
    assert len({out.lower_bound for out in outs}) == 1


def test_doctests() -> None:
    import doctest

    from benchmarks import families
    from placement_cli.algorithms.solve import budget
    from placement_cli.algorithms.solve.exact import bounds, entry

    for mod in (bounds, budget, entry, families):
        r = doctest.testmod(mod)
        assert r.attempted > 0 and r.failed == 0, (mod.__name__, r)


def _icm_full_passes(
    order: list[int], unary: list[list[float]], arcs: list[list[Any]], passes: int = 8
) -> dict[int, int]:
    """The literal primal heuristic: sequential rounding, then full passes of iterated
    conditional modes over every block (the reference for the worklist version)."""
    val: dict[int, int] = {}
    for x in order:
        s = list(unary[x])
        for y, t, st_, rows in arcs[x]:
            if y in val:
                j = val[y]
                s = [a + (t[i * st_ + j] if rows else t[j * st_ + i]) for i, a in enumerate(s)]
        val[x] = s.index(min(s))
    for _ in range(passes):
        changed = False
        for x in order:
            s = list(unary[x])
            for y, t, st_, rows in arcs[x]:
                j = val[y]
                s = [a + (t[i * st_ + j] if rows else t[j * st_ + i]) for i, a in enumerate(s)]
            m = min(s)
            if m < s[val[x]]:
                val[x] = s.index(m)
                changed = True
        if not changed:
            break
    return val


@pytest.mark.parametrize("seed", range(200))
def test_primal_worklist_equals_full_passes(seed: int) -> None:
    """`round_and_polish` looks at a block again only after a neighbour moved: the same
    assignment as full passes (random graphs, small integer costs so that ties occur,
    some infinite entries), for every pass limit."""
    from placement_cli.algorithms.solve.exact.primal import round_and_polish

    rnd = random.Random(seed)
    n = rnd.randint(1, 12)
    ks = [rnd.randint(1, 4) for _ in range(n)]
    unary = [[float(rnd.choice([0, 1, 2, 3, math.inf])) for _ in range(k)] for k in ks]
    arcs: list[list[Any]] = [[] for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            if rnd.random() < 0.4:
                t = [float(rnd.choice([0, 0, 1, 2, 5, math.inf])) for _ in range(ks[a] * ks[b])]
                arcs[a].append((b, t, ks[b], True))
                arcs[b].append((a, t, ks[b], False))
    order = list(range(n))
    rnd.shuffle(order)
    for passes in (0, 1, 2, 8):
        assert round_and_polish(order, unary, arcs, passes) == _icm_full_passes(
            order, unary, arcs, passes
        )


def _integral_reference(g: Any) -> bool:
    """The literal check: every finite block and transition cost is an integer."""
    costs = [c for row in g.cost for c in row] + [c for mat in g.edge_mat for c in mat.cost]
    return all(c is None or c == math.inf or c == int(c) for c in costs)


@settings(max_examples=examples(300), deadline=None)
@given(plans(frac=True) | plans())
def test_integral_equals_literal_check(plan: dict[str, Any]) -> None:
    """`plan_integral` (distinct values first) says what the literal check says, on plans
    with integer costs and with one-decimal costs (often integers by chance)."""
    from placement_cli.algorithms.solve.exact.model import plan_integral

    g = parse_plan(plan)
    assert plan_integral(g) == _integral_reference(g)


@pytest.mark.parametrize("seed", range(20))
def test_adjacency_equals_literal(seed: int) -> None:
    """`adjacency` (a fast path for pairs) is the literal interaction graph, keys in
    order of first appearance, on factors of arity one to three."""
    from placement_cli.algorithms.solve.exact.elimination import adjacency

    rnd = random.Random(seed)
    factors: list[Any] = []
    for _ in range(rnd.randrange(0, 40)):
        sc = tuple(rnd.sample(range(12), rnd.randrange(1, 4)))
        factors.append((sc, [0.0]))
    want: dict[int, set[int]] = {}
    for sc, _ in factors:
        for v in sc:
            want.setdefault(v, set())
            want[v] |= {w for w in sc if w != v}
    got = adjacency(factors)
    assert got == want and list(got) == list(want)


@pytest.mark.parametrize("seed", range(40))
def test_combine_equals_literal_joint_table(seed: int) -> None:
    """`combine` (C-level gathers and minima) is the literal min over x of the sum of
    the factors, cell by cell, summed in the factors' order: the same floats."""
    import itertools

    from placement_cli.algorithms.solve.exact.elimination import combine

    rnd = random.Random(seed)
    n = rnd.randrange(2, 6)
    ks = [rnd.randrange(2, 5) for _ in range(n)]
    x = rnd.randrange(n)
    facs = [f for f in random_factors(rnd, n, ks) if x in f[0]]
    scope, mins = combine(x, facs, ks)
    assert scope == tuple(sorted({v for sc, _ in facs for v in sc} - {x}))
    want = []
    for cell in itertools.product(*[range(ks[v]) for v in scope]):
        val = dict(zip(scope, cell, strict=True))
        best = math.inf
        first = True
        for a in range(ks[x]):
            val[x] = a
            s = 0.0
            for i, (sc, tab) in enumerate(facs):
                idx = 0
                for v in sc:
                    idx = idx * ks[v] + val[v]
                s = tab[idx] if i == 0 else s + tab[idx]
            if first or s < best:
                best, first = s, False
        want.append(best)
    assert mins == want


class _HeapElimination:
    """The reference: the heap-driven bucket elimination `OrderedEliminator` replaced,
    as it was (`Eliminator.run` before 2026-11-27). It picks the block with the cheapest
    joint table next (ties by block), keeping the interaction graph as it goes."""

    def __init__(self, ks: dict[int, int], factors: list[Any], constant: float) -> None:
        from placement_cli.algorithms.solve.exact.elimination import Eliminator

        self.el = Eliminator(ks, factors, constant)
        self.ks = ks
        self.log: list[Any] = []
        self.width = self.cells = 0
        self.counts = [0, 0, 0, 0]

    def key(self, x: int, cap: int) -> int:
        c = self.ks[x]
        for y in self.el.adj[x]:
            c *= self.ks[y]
            if c > cap:
                return cap + 1 + len(self.el.adj[x])
        return c

    def eliminate(self, x: int) -> None:
        from placement_cli.algorithms.solve.exact.elimination import combine

        el = self.el
        facs = el.take_factors(x)
        if not facs:
            self.log.append((x, [((x,), [0.0] * self.ks[x])]))
            el.adj.pop(x)
            return
        scope, mins = combine(x, facs, self.ks)
        self.cells += len(mins) * self.ks[x]
        self.width = max(self.width, len(scope))
        self.counts[min(len(scope), 3)] += 1
        self.log.append((x, facs))
        for y in el.adj.pop(x):
            el.adj[y].discard(x)
        el.add(scope, mins)

    def run(self, table_cap: int, total_cap: int) -> None:
        from heapq import heappop, heappush

        cur = {v: self.key(v, table_cap) for v in sorted(self.el.var_facs)}
        heap = sorted((k, v) for v, k in cur.items())
        while heap:
            k, x = heappop(heap)
            if cur.get(x) != k:
                continue
            if k > table_cap or self.cells + k > total_cap:
                break
            nb = sorted(self.el.adj[x])
            del cur[x]
            self.eliminate(x)
            if self.el.constant == math.inf:
                return
            for y in nb:
                ky = self.key(y, table_cap)
                if cur[y] != ky:
                    cur[y] = ky
                    heappush(heap, (ky, y))


@pytest.mark.parametrize("seed", range(60))
def test_ordered_elimination_equals_heap_elimination(seed: int) -> None:
    """`OrderedEliminator` in the order `elim_cost` records builds what
    the heap-driven elimination (`_HeapElimination`) builds: the same constant (bit for
    bit), width, cells, counts and decoded assignment."""
    from placement_cli.algorithms.solve.exact.elimination import (
        OrderedEliminator,
        adjacency,
        decode,
        elim_cost,
    )

    rnd = random.Random(seed)
    n = rnd.randrange(2, 12)
    ks = [rnd.randrange(2, 4) for _ in range(n)]
    factors = random_factors(rnd, n, ks)
    order: list[int] = []
    cost = elim_cost(ks, adjacency(factors), 1 << 16, 1 << 20, order)
    assert cost >= 0 and sorted(order) == list(range(n))
    heap = _HeapElimination(dict(enumerate(ks)), factors, 0.5)
    heap.run(1 << 16, 1 << 20)
    ordered = OrderedEliminator(ks, factors, 0.5, order)
    ordered.run(None)
    assert (
        ordered.constant == heap.el.constant
        or math.isinf(heap.el.constant)
        and math.isinf(ordered.constant)
    )
    if heap.el.constant < math.inf:
        assert [x for x, _ in ordered.log] == [x for x, _ in heap.log] == order
        assert (ordered.width, ordered.cells, ordered.counts) == (
            heap.width,
            heap.cells,
            heap.counts,
        )
        assert ordered.cells == cost
        va: dict[int, int] = {}
        vb: dict[int, int] = {}
        decode(heap.log, ks, va)
        decode(ordered.log, ks, vb)
        assert va == vb


@settings(max_examples=examples(300), deadline=None)
@given(plans(frac=True) | plans(), st.booleans())
def test_core_integral_follows_plan_integral(plan: dict[str, Any], reduce: bool) -> None:
    """An integral plan has an integral core (whatever the reductions folded in), and a
    core called integral has only integer entries and constant (the literal check)."""
    from placement_cli.algorithms.solve.exact.model import core_integral, plan_integral
    from placement_cli.algorithms.solve.exact.reductions import reduce_model

    g = parse_plan(plan)
    model = build_model(g, prune(g).domains)
    assume(model is not None)
    assert model is not None
    if reduce:
        const, _, factors, _ = reduce_model(model, g.n_blocks)
    else:
        const, factors = model.constant, model.factors()
    assume(const < math.inf)
    got = core_integral(factors, const)
    if plan_integral(g):
        assert got
    literal = const == int(const) and all(
        c == math.inf or c == int(c) for _, t in factors for c in t
    )
    assert got == literal
