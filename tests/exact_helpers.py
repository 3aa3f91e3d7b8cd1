"""Helpers shared by the exact method's tests (tests/test_exact*.py): the tiny-plan
strategy, the invariants every outcome must satisfy, the array-search budget and a
random plan's reduced core. Test modules import these from here, never from each other."""

from __future__ import annotations

import math
import random
from typing import Any

from hypothesis import strategies as st

from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.solve.budget import CellBudget, DiffusionSettings, SearchSettings
from placement_cli.algorithms.solve.exact import ExactBudget, ExactOutcome
from placement_cli.algorithms.solve.objective import UNASSIGNED, evaluate, feasible_for
from placement_cli.pipeline.run import parse_plan
from tests.reference import brute_force

TARGETS = ["t0", "t1", "t2", "t3"]


@st.composite
def plans(
    draw: st.DrawFn, max_blocks: int = 7, max_targets: int = 4, frac: bool = False
) -> dict[str, Any]:
    """Tiny plans: random domains and costs, random allowed/forbidden pairs, self-loops,
    parallel edges, dead blocks, a non-default entry; often infeasible. `frac`: costs
    with one decimal, which floats cannot represent exactly."""
    nt = draw(st.integers(1, max_targets))
    targets = TARGETS[:nt]
    nb = draw(st.integers(1, max_blocks))
    ids = [f"b{i}" for i in range(nb)]
    cost_val = st.integers(0, 90).map(lambda c: c / 10) if frac else st.integers(0, 9)

    def matrix() -> dict[str, dict[str, int]]:
        m: dict[str, dict[str, int]] = {}
        for s in targets:
            row = {}
            for d in targets:
                if draw(st.integers(0, 9)) < 7:
                    row[d] = 0 if s == d else draw(cost_val)
            if row:
                m[s] = row
        return m

    plan: dict[str, Any] = {"version": 1, "targets": targets}
    if draw(st.booleans()):
        plan["transitions"] = matrix()
    blocks = []
    for i in range(nb):
        b: dict[str, Any] = {"id": ids[i]}
        if draw(st.integers(0, 3)) == 0:
            b["domain"] = draw(st.lists(st.sampled_from(targets), unique=True, max_size=nt))
        b["cost"] = {t: draw(cost_val) for t in targets if draw(st.integers(0, 4)) > 0}
        succ = draw(st.lists(st.integers(0, nb - 1), max_size=3))
        edges = []
        for s in succ:
            e: dict[str, Any] = {"block": ids[s]}
            if draw(st.integers(0, 2)) > 0:
                e["transitions"] = matrix()
            edges.append(e)
        if not edges:
            b["terminator"] = {"kind": "return"}
        elif len(edges) == 1 and draw(st.booleans()):
            b["terminator"] = {"kind": "goto", "successors": edges}
        else:
            b["terminator"] = {"kind": "switch", "successors": edges}
        blocks.append(b)
    plan["blocks"] = blocks
    if draw(st.integers(0, 4)) == 0:
        plan["entry"] = ids[draw(st.integers(0, nb - 1))]
    return plan


def same(a: float, b: float) -> bool:
    """Equal, up to the last bits that different summation orders of decimals move."""
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check(plan: dict[str, Any], out: ExactOutcome, g: Any, domains: tuple[int, ...]) -> float:
    """The invariants every outcome must satisfy; returns the brute-force optimum."""
    best, _ = brute_force(plan)
    assert out.lower_bound <= best or same(out.lower_bound, best)
    if out.assignment is not None:
        a = out.assignment
        assert len(a) == g.n_blocks
        assert all((x == UNASSIGNED) == (not g.live[b]) for b, x in enumerate(a))
        assert feasible_for(g, domains, a)
        cost = evaluate(g, a)
        assert cost is not None
        assert out.lower_bound <= cost.total
        if out.optimal:
            assert same(cost.total, best)
            assert out.lower_bound == cost.total
    if out.infeasible:
        assert out.optimal and out.assignment is None and best == math.inf
        assert out.lower_bound == math.inf
    if out.optimal and out.assignment is None:
        assert out.infeasible
    return best


def array_budget(leaf: int, primal: bool, fixing: bool, backoff: bool = True) -> ExactBudget:
    """Every core on the arrays and searched there down to (almost) every leaf: the list
    search takes a node only once the blocks left undecided vanish (`array_handoff` 0)
    or fit a tiny dynamic programming."""
    return ExactBudget(
        cells=CellBudget(table=1, leaf_dp=leaf, mini_bucket=4),
        diffusion=DiffusionSettings(dense_min_blocks=0),
        search=SearchSettings(
            array_handoff=0.0, primal=primal, fixing=fixing, primal_backoff=backoff
        ),
        reductions=False,
    )


def reduced_core(n: int, k: int, seed: int) -> tuple[float, list[int], list[Any], list[Any]]:
    """The reduced core of a random plan as DenseCore takes it: the constant, each
    variable's domain size, its unary table and its neighbours' tables, by position."""
    from benchmarks.families import FAMILIES
    from placement_cli.algorithms.solve.exact.model import build_model
    from placement_cli.algorithms.solve.exact.reductions import reduce_model

    g = parse_plan(FAMILIES["random"](n, seed, k))
    model = build_model(g, prune(g).domains)
    assert model is not None
    const, _, factors, _ = reduce_model(model, g.n_blocks)
    xs = sorted({v for sc, _ in factors for v in sc})
    loc = {v: i for i, v in enumerate(xs)}
    K = [model.ks[v] for v in xs]
    un: list[Any] = [None] * len(xs)
    nb: list[Any] = [{} for _ in xs]
    for sc, tab in factors:
        if len(sc) == 1:
            un[loc[sc[0]]] = list(tab)
        else:
            nb[loc[sc[0]]][loc[sc[1]]] = nb[loc[sc[1]]][loc[sc[0]]] = tab
    return const, K, un, nb


def random_factors(rnd: random.Random, n: int, ks: list[int]) -> list[Any]:
    """Unaries for every variable and random pair and triple factors (some scopes
    repeated), costs with one decimal (not exact in floats) and some `inf`."""

    def cost() -> float:
        return math.inf if rnd.random() < 0.1 else rnd.randrange(0, 90) / 10

    factors: list[Any] = [((v,), [cost() for _ in range(ks[v])]) for v in range(n)]
    for _ in range(rnd.randrange(n, 3 * n)):
        sc = tuple(sorted(rnd.sample(range(n), min(n, rnd.choice((2, 2, 2, 3))))))
        factors.append((sc, [cost() for _ in range(math.prod(ks[v] for v in sc))]))
    return factors
