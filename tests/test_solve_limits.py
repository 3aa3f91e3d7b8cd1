"""`solve` under its limits and on hostile numbers: every search stops at the deadline
and says honestly what it proved (the overflow findings of 2026-11-26)."""

from __future__ import annotations

import itertools
import json
import math
import time
from typing import Any

import msgspec
import pytest

from benchmarks.hard import colouring_plan
from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve import driver as solve_mod
from placement_cli.algorithms.solve.complete import Budget, build_instance, find_feasible
from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.algorithms.solve.heuristic import solve_heuristic
from placement_cli.core.errors import EXIT_INTERNAL, InputError, PlacementError
from placement_cli.ir.graph import Graph, make_matrix
from placement_cli.pipeline.run import parse_plan

METHODS = ("auto", "exact", "heuristic")


def solve_graph(g: Graph, **opts: Any) -> Any:
    return solve(g, prune(g).domains, scc(g), SolveOptions(**opts))


def clique_of(plan: dict[str, Any], size: int) -> list[str] | None:
    """A set of `size` blocks pairwise joined by an edge (greedy over orders; independent
    of the solvers). All edges of a colouring plan demand different targets, so a clique
    larger than the number of targets proves the plan infeasible."""
    adj: dict[str, set[str]] = {b["id"]: set() for b in plan["blocks"]}
    for b in plan["blocks"]:
        for s in b["terminator"].get("successors", []):
            if s["block"] != b["id"]:
                adj[b["id"]].add(s["block"])
                adj[s["block"]].add(b["id"])
    for start in sorted(adj, key=lambda x: -len(adj[x])):
        clique = [start]
        for v in sorted(adj[start], key=lambda x: -len(adj[x])):
            if all(v in adj[u] for u in clique):
                clique.append(v)
        if len(clique) >= size:
            return clique[:size]
    return None


# ------------------------------------------------------------------ deadlines


@pytest.mark.parametrize("method", METHODS)
def test_infeasible_colouring_plan_stops_at_the_limit_as_unsolved(method: str) -> None:
    plan = colouring_plan(50, 7, seed=0, degree=45)
    # Independent certificate: 8 blocks that must pairwise differ, 7 targets.
    assert clique_of(plan, 8) is not None
    g = parse_plan(plan)
    limit = 1.0
    t0 = time.monotonic()
    res = solve_graph(g, method=method, time_limit=limit)
    elapsed = time.monotonic() - t0
    assert elapsed < limit + 3.0, elapsed  # a loaded 2-core machine: generous, yet far from minutes
    sec = res.to_json(g)
    # No false claims: not "ok" (there is no assignment), not "infeasible" (not proven).
    assert res.status == "unsolved" and sec["status"] == "unsolved"
    assert sec["assignment"] == {} and sec["cost"] is None and sec["optimal"] is False
    assert [d.code for d in res.diagnostics][-1] == "time-limit"
    assert res.diagnostics[-1].severity == "error"
    assert sec["lower_bound"] is not None and math.isfinite(sec["lower_bound"])


def test_feasible_hard_plan_returns_the_best_found_with_a_proven_bound() -> None:
    plan = colouring_plan(50, 7, seed=0, degree=14)
    g = parse_plan(plan)
    res = solve_graph(g, method="heuristic", time_limit=1.0)
    assert res.status == "ok"
    sec = res.to_json(g)
    assert sec["cost"]["total"] >= sec["lower_bound"]
    if not res.optimal:
        assert "time-limit" in [d.code for d in res.diagnostics]
    # every edge demands different targets: check the assignment independently
    a = sec["assignment"]
    for b in plan["blocks"]:
        for s in b["terminator"]["successors"]:
            assert a[b["id"]] != a[s["block"]]


def test_complete_search_and_seed_stop_on_their_budget() -> None:
    g = parse_plan(colouring_plan(50, 7, seed=1, degree=45))
    inst = build_instance(g, prune(g).domains)
    b = Budget(deadline=time.monotonic() + 0.3)
    t0 = time.monotonic()
    f = find_feasible(inst, b)
    assert time.monotonic() - t0 < 3.0
    assert f.assignment is None and not f.exhausted and b.reason == "time-limit"
    b = Budget(deadline=time.monotonic() + 0.3)
    h = solve_heuristic(inst, scc(g), budget=b)
    assert h.assignment is None and h.stopped == "time-limit"


def test_memory_bound_stops_the_search() -> None:
    g = parse_plan(colouring_plan(50, 7, seed=1, degree=45))
    inst = build_instance(g, prune(g).domains)
    b = Budget(memory_bytes=-1)  # any size is over: the check itself must fire
    f = find_feasible(inst, b)
    assert f.assignment is None and not f.exhausted and b.reason == "memory-limit"


def test_cli_unsolved_is_exit_5_with_the_artifact(tmp_path: Any, cli: Any) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(colouring_plan(50, 7, seed=0, degree=45)))
    out = tmp_path / "out.json"
    r = cli("solve", "--method", "heuristic", "--time-limit", "0.5", str(p), "-o", str(out))
    assert r.returncode == 5, r.stderr
    art = json.loads(out.read_bytes())
    assert art["solve"]["status"] == "unsolved"
    assert [d["code"] for d in art["diagnostics"]] == ["time-limit"]


# ------------------------------------------------------------------ overflow


def huge(
    plan: dict[str, Any],
    block_costs: dict[str, dict[str, float]],
    edge_costs: dict[tuple[str, str], dict[tuple[str, str], float]],
) -> Graph:
    """The plan's graph with costs set directly (bypassing any input check on sizes)."""
    g = parse_plan(plan)
    cost = [list(row) for row in g.cost]
    for bid, cs in block_costs.items():
        for t, c in cs.items():
            cost[g.index[bid]][g.targets.index(t)] = c
    mats = list(g.edge_mat)
    K = g.n_targets
    for e in range(g.n_edges):
        key = (g.block_ids[g.edge_src[e]], g.block_ids[g.edge_dst[e]])
        if key in edge_costs:
            m = list(mats[e].cost)
            for (s, d), c in edge_costs[key].items():
                m[g.targets.index(s) * K + g.targets.index(d)] = c
            mats[e] = make_matrix(K, tuple(m))
    return msgspec.structs.replace(g, cost=tuple(tuple(r) for r in cost), edge_mat=tuple(mats))


def brute(g: Graph) -> tuple[int | None, tuple[int, ...] | None]:
    """Exact optimum in integers (Python ints do not overflow); None when infeasible."""
    live = [b for b in range(g.n_blocks) if g.live[b]]
    best: int | None = None
    best_a = None
    for combo in itertools.product(range(g.n_targets), repeat=len(live)):
        a = [-1] * g.n_blocks
        for b, t in zip(live, combo, strict=True):
            a[b] = t
        if any(not g.domain[b] >> a[b] & 1 for b in live):
            continue
        total = sum(int(g.cost[b][a[b]]) for b in live)
        ok = True
        for e in range(g.n_edges):
            c = g.edge_mat[e].get(a[g.edge_src[e]], a[g.edge_dst[e]])
            if c is None:
                ok = False
                break
            total += int(c)
        if ok and (best is None or total < best):
            best, best_a = total, tuple(a)
    return best, best_a


TWO = {
    "version": 1,
    "targets": ["a", "b"],
    "blocks": [
        {"id": "x", "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
        {"id": "y", "terminator": {"kind": "return"}},
    ],
}

LOOP = {
    "version": 1,
    "targets": ["a", "b"],
    "transitions": {"a": {"a": 0, "b": 1}, "b": {"a": 1, "b": 0}},
    "blocks": [
        {"id": "x", "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
        {"id": "y", "terminator": {"kind": "goto", "successors": [{"block": "z"}]}},
        {
            "id": "z",
            "terminator": {"kind": "switch", "successors": [{"block": "x"}, {"block": "y"}]},
        },
    ],
}


@pytest.mark.parametrize("method", METHODS)
def test_two_blocks_of_1e308_are_an_input_error_not_a_null_total(method: str) -> None:
    g = huge(TWO, {"x": {"a": 1e308, "b": 1e308}, "y": {"a": 1e308, "b": 1e308}}, {})
    assert (
        brute(g)[0] is not None and brute(g)[0] > 2**1024
    )  # feasible, yet no float holds its cost
    with pytest.raises(InputError) as exc:
        solve_graph(g, method=method)
    assert exc.value.exit_code == 3 and "overflows" in str(exc.value)


@pytest.mark.parametrize("method", METHODS)
def test_feasible_loop_with_huge_costs_is_solved_not_called_infeasible(method: str) -> None:
    # Every block is expensive on both targets; most assignments overflow a float, the
    # cheapest does not. Before the fix the search took "sum == inf" for "forbidden".
    g = huge(
        LOOP,
        {
            "x": {"a": 9e307, "b": 4e307},
            "y": {"a": 5e307, "b": 8e307},
            "z": {"a": 3e307, "b": 9e307},
        },
        {("x", "y"): {("a", "b"): 1e308, ("b", "a"): 2e307}, ("y", "z"): {("a", "b"): 1e308}},
    )
    best, best_a = brute(g)
    assert best is not None and best < 1.7e308
    res = solve_graph(g, method=method)
    assert res.status == "ok"
    sec = res.to_json(g)
    assert sec["cost"]["total"] is not None and math.isfinite(sec["cost"]["total"])
    assert res.optimal and res.assignment == best_a
    assert sec["cost"]["total"] == pytest.approx(best, rel=1e-12)
    assert sec["lower_bound"] == sec["cost"]["total"]


@pytest.mark.parametrize("method", METHODS)
def test_loop_whose_every_assignment_overflows_is_not_called_infeasible(method: str) -> None:
    # Feasible (every transition allowed), but no assignment's total fits a float. It
    # used to be reported "infeasible ... (exhaustive search)" with optimal: true.
    g = huge(LOOP, {b: {"a": 1e308, "b": 1e308} for b in "xyz"}, {})
    assert brute(g)[0] is not None
    with pytest.raises(InputError) as exc:
        solve_graph(g, method=method)
    assert "overflows" in str(exc.value)


@pytest.mark.parametrize("seed", range(40))
def test_random_huge_cost_loops_against_integer_brute_force(seed: int) -> None:
    import random

    rng = random.Random(seed)
    big = [0.0, 1e306, 3e307, 6e307, 1e308, 1.7e308]
    bc = {b: {t: rng.choice(big) for t in "ab"} for b in "xyz"}
    ec = {
        k: {(s, d): rng.choice(big) for s in "ab" for d in "ab" if rng.random() < 0.8}
        for k in (("x", "y"), ("y", "z"), ("z", "x"), ("z", "y"))
    }
    g = huge(LOOP, bc, ec)
    best, best_a = brute(g)
    for method in METHODS:
        if best is not None and best >= 2**1024:
            with pytest.raises(InputError):
                solve_graph(g, method=method)
            continue
        res = solve_graph(g, method=method)
        assert res.status == "ok"  # every matrix entry here is allowed: never infeasible
        total = res.cost.total
        assert math.isfinite(total) and total == pytest.approx(best, rel=1e-9)
        assert res.optimal  # three blocks: always within the proof's reach


# -------------------------------------------------- a bound above the cost (item 5)


def test_bound_above_the_cost_is_an_internal_error(monkeypatch: Any) -> None:
    g = parse_plan(TWO)
    monkeypatch.setattr(solve_mod, "root_bound", lambda inst: 1000.0)
    with pytest.raises(PlacementError) as exc:
        solve_graph(g, method="heuristic")
    assert exc.value.exit_code == EXIT_INTERNAL
    assert not isinstance(exc.value, InputError)
    assert "exceeds the cost" in str(exc.value)


def test_bound_within_rounding_of_the_cost_is_a_proof(monkeypatch: Any) -> None:
    g = huge(TWO, {"x": {"a": 0.1, "b": 5}, "y": {"a": 0.2, "b": 5}}, {})
    cost = 0.1 + 0.2  # 0.30000000000000004
    monkeypatch.setattr(solve_mod, "root_bound", lambda inst: 0.3)
    res = solve_graph(g, method="heuristic", prove_node_limit=0)
    assert res.optimal and res.lower_bound == res.cost.total == cost
