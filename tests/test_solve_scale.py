"""Cross-checks at scale: the exact method, the seed heuristic and the complete
search against an independent exhaustive branch and bound, on plans with 6 to 8
targets, 20 to 60 blocks, dense loops, forbidden pairs and infeasible instances.

Every claim is checked: "infeasible" only where the reference finds no assignment,
"optimal" only at the reference optimum, every lower bound at most the optimum, every
assignment feasible and costed as the plan says. The default run is a fast slice; set
PLACEMENT_SCALE_PLANS (e.g. 400) for a long campaign.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import time
from typing import Any

import pytest

from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.complete import (
    Budget,
    branch_and_bound,
    build_instance,
    find_feasible,
)
from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.pipeline.run import parse_plan

N_PLANS = int(os.environ.get("PLACEMENT_SCALE_PLANS", "24"))
# The heuristic's optimality proof (exhaustive B&B) dominates the fast slice's time.
PROVE_NODES = 200_000 if "PLACEMENT_SCALE_PLANS" in os.environ else 10_000
METHODS = ("auto", "exact", "heuristic")


def scale_plan(seed: int) -> dict[str, Any]:
    """A plan with 6-8 targets, 20-60 blocks, small domains (2-3 targets each, so that
    exhaustive search stays possible), dense back edges and forbidden transitions."""
    rng = random.Random(f"scale-{seed}")
    k = rng.randrange(6, 9)
    n = rng.randrange(20, 61)
    targets = [f"t{i}" for i in range(k)]
    density = rng.choice((0.75, 0.85, 0.95))
    blocks = []
    for i in range(n):
        succ = [i + 1] if i + 1 < n else []
        while rng.random() < 0.55 and len(succ) < 4:
            # mostly back edges a few blocks up: dense, nested loops
            r = rng.random()
            succ.append(
                rng.randrange(max(0, i - 8), i)
                if r < 0.85 and i
                else i
                if r < 0.9
                else rng.randrange(n)
            )
        edges = []
        for s in succ:
            rows = {
                a: {
                    b: (0 if a == b else rng.randrange(1, 10))
                    for b in targets
                    if rng.random() < density
                }
                for a in targets
            }
            edges.append({"block": f"b{s}", "transitions": {a: r for a, r in rows.items() if r}})
        dom = rng.sample(targets, rng.choice((2, 2, 3)))
        blocks.append(
            {
                "id": f"b{i}",
                "domain": sorted(dom),
                "cost": {t: rng.randrange(0, 25) for t in dom},
                "terminator": {"kind": "switch", "successors": edges}
                if edges
                else {"kind": "return"},
            }
        )
    return {"version": 1, "name": f"scale-{seed}", "targets": targets, "blocks": blocks}


# --------------------------------------------------- the independent reference


class TooBig(Exception):
    pass


def reference(plan: dict[str, Any], max_table: int = 300_000) -> float:
    """The optimum by variable elimination (bucket elimination, min-degree order) straight
    on the plan dict; inf when infeasible. Shares no code with the solvers: every edge is
    a factor over its two blocks (forbidden pairs cost inf), eliminating a block replaces
    the factors that mention it by their minimum over its targets. Exact on any plan;
    `TooBig` when a table would exceed `max_table` entries."""
    by_id = {b["id"]: b for b in plan["blocks"]}
    entry = plan["blocks"][0]["id"]
    live = {entry}
    todo = [entry]
    while todo:
        for s in by_id[todo.pop()]["terminator"].get("successors", []):
            if s["block"] not in live:
                live.add(s["block"])
                todo.append(s["block"])
    dom = {b: list(by_id[b]["cost"]) for b in live}
    # factor: (scope tuple, {assignment tuple: cost}); inf entries are forbidden
    factors: list[tuple[tuple[str, ...], dict[tuple[str, ...], float]]] = []
    for b in live:
        factors.append(((b,), {(t,): float(c) for t, c in by_id[b]["cost"].items()}))
        for s in by_id[b]["terminator"].get("successors", []):
            m = s["transitions"]
            v = s["block"]
            if v == b:
                factors.append(((b,), {(t,): m.get(t, {}).get(t, math.inf) for t in dom[b]}))
            else:
                factors.append(
                    (
                        (b, v),
                        {(x, y): m.get(x, {}).get(y, math.inf) for x in dom[b] for y in dom[v]},
                    )
                )
    remaining = set(live)
    while remaining:

        def degree(x: str, factors: list[Any] = factors) -> tuple[int, str]:
            nb: set[str] = set()
            for scope, _ in factors:
                if x in scope:
                    nb.update(scope)
            return len(nb), x

        x = min(remaining, key=degree)
        remaining.discard(x)
        mine = [f for f in factors if x in f[0]]
        factors = [f for f in factors if x not in f[0]]
        scope = tuple(sorted({y for sc, _ in mine for y in sc if y != x}))
        size = math.prod(len(dom[y]) for y in scope)
        if size > max_table:
            raise TooBig
        table: dict[tuple[str, ...], float] = {}
        for combo in itertools.product(*(dom[y] for y in scope)):
            env = dict(zip(scope, combo, strict=True))
            best = math.inf
            for t in dom[x]:
                env[x] = t
                c = 0.0
                for sc, tab in mine:
                    c += tab[tuple(env[y] for y in sc)]
                    if c == math.inf:
                        break
                best = min(best, c)
            table[combo] = best
        factors.append((scope, table))
    return sum(tab[()] for _, tab in factors)


def plan_total(plan: dict[str, Any], assignment: dict[str, str]) -> float:
    """The objective of an assignment read off the plan (KeyError when infeasible)."""
    total = 0.0
    for b in plan["blocks"]:
        if b["id"] not in assignment:
            continue
        t = assignment[b["id"]]
        assert t in b["domain"]
        total += b["cost"][t]
        for s in b["terminator"].get("successors", []):
            total += s["transitions"][t][assignment[s["block"]]]
    return total


@pytest.fixture(scope="module")
def cases() -> list[tuple[int, dict[str, Any], float]]:
    out = []
    for seed in range(N_PLANS):
        plan = scale_plan(seed)
        try:
            out.append((seed, plan, reference(plan)))
        except TooBig:
            continue
    # the reference must reach nearly every plan, and the mix must include both kinds
    assert len(out) >= 0.8 * N_PLANS
    assert any(opt == math.inf for _, _, opt in out) and any(opt < math.inf for _, _, opt in out)
    return out


def test_the_reference_itself_on_a_hand_checked_plan() -> None:
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {
                "id": "b0",
                "domain": ["p", "q"],
                "cost": {"p": 1, "q": 4},
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": "b1", "transitions": {"p": {"q": 2}, "q": {"q": 0}}}],
                },
            },
            {
                "id": "b1",
                "domain": ["q"],
                "cost": {"q": 3},
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": "b0", "transitions": {"q": {"p": 5, "q": 0}}}],
                },
            },
        ],
    }
    assert reference(plan) == 7.0  # q,q: 4+3+0+0 = 7; p,q: 1+3+2+5 = 11
    plan["blocks"][1]["terminator"]["successors"][0]["transitions"] = {"q": {"r": 0}}
    assert reference(plan) == math.inf


@pytest.mark.parametrize("method", METHODS)
def test_methods_against_the_reference(
    cases: list[tuple[int, dict[str, Any], float]], method: str
) -> None:
    for seed, plan, opt in cases:
        g = parse_plan(plan)
        res = solve(
            g,
            prune(g).domains,
            scc(g),
            SolveOptions(method=method, time_limit=10.0, prove_node_limit=PROVE_NODES),
        )
        sec = res.to_json(g)
        where = f"seed {seed} ({method})"
        if res.status == "infeasible":
            assert opt == math.inf, where  # a proof must be true
            assert res.optimal
            continue
        if res.status == "unsolved":  # allowed only when the limit stopped it; never a false claim
            assert not res.optimal and (sec["lower_bound"] is None or sec["lower_bound"] <= opt), (
                where
            )
            continue
        assert res.status == "ok" and opt < math.inf, where
        total = plan_total(plan, sec["assignment"])
        assert sec["cost"]["total"] == total, where
        assert total >= opt, where
        assert sec["lower_bound"] <= opt, where
        if res.optimal:
            assert total == opt, where
        if method != "heuristic":
            assert res.optimal, where  # these plans are well within reach of a proof


def test_complete_search_against_the_reference(
    cases: list[tuple[int, dict[str, Any], float]],
) -> None:
    proven = 0
    for seed, plan, opt in cases:
        g = parse_plan(plan)
        inst = build_instance(g, prune(g).domains)
        if inst.empty:
            assert opt == math.inf
            continue
        # Bounded like every search: only what it claims as proven is checked.
        bb = branch_and_bound(inst, node_limit=10_000, budget=Budget(time.monotonic() + 1.0))
        if bb.assignment is not None:
            a = {g.block_ids[b]: g.targets[t] for b, t in enumerate(bb.assignment) if g.live[b]}
            assert plan_total(plan, a) >= opt, seed
            if bb.exhausted:
                assert plan_total(plan, a) == opt, seed
        elif bb.exhausted:
            assert opt == math.inf, seed
        proven += bb.exhausted
        ff = find_feasible(inst, Budget(time.monotonic() + 1.0))
        if ff.assignment is not None:
            a = {g.block_ids[b]: g.targets[t] for b, t in enumerate(ff.assignment) if g.live[b]}
            assert opt < math.inf and plan_total(plan, a) >= opt, seed
        else:
            assert not ff.exhausted or opt == math.inf, seed
    assert proven >= 2  # some plans within its reach: the check above is not vacuous
