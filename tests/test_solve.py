"""`solve`: the seed heuristic, the complete fallback and the dispatch, checked against
brute force (`tests/reference.py`) and on hand-built plans for each mechanism."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate_plan
from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve import driver as solve_mod
from placement_cli.algorithms.solve.complete import build_instance
from placement_cli.algorithms.solve.driver import SolveOptions, from_json, solve
from placement_cli.algorithms.solve.heuristic import solve_heuristic
from placement_cli.core.errors import InputError, PlacementError
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.reference import _matrix, block_domain_and_cost, brute_force, live_blocks
from tests.strategies import plans

# ----------------------------------------------------------------- helpers


def run(plan: dict[str, Any], **opts: Any) -> tuple[Any, Any, dict[str, Any]]:
    g = parse_plan(plan)
    res = solve(g, prune(g).domains, scc(g), SolveOptions(**opts))
    return g, res, res.to_json(g)


def seed_only(plan: dict[str, Any], **kw: Any) -> Any:
    g = parse_plan(plan)
    return solve_heuristic(build_instance(g, prune(g).domains), scc(g), **kw)


def recompute(plan: dict[str, Any], assignment: dict[str, str]) -> tuple[float, float]:
    """(block part, edge part) of the objective, straight from the plan dict."""
    live = live_blocks(plan)
    blocks = edges = 0.0
    for b in plan["blocks"]:
        if b["id"] not in live:
            continue
        t = assignment[b["id"]]
        blocks += block_domain_and_cost(plan, b)[t]
        for s in b["terminator"].get("successors", []):
            edges += _matrix(plan, s)[t][assignment[s["block"]]]
    return blocks, edges


def total_of(plan: dict[str, Any], assignment: dict[str, str]) -> float:
    b, e = recompute(plan, assignment)
    return b + e


def total_or_inf(plan: dict[str, Any], assignment: dict[str, str]) -> float:
    try:
        return total_of(plan, assignment)
    except KeyError:  # a target outside the domain or a forbidden transition
        return math.inf


def assert_fixpoint(
    plan: dict[str, Any], g: Any, assignment: dict[str, str], loops: bool = True
) -> None:
    """What the sweeps promise when they stop: no single block and no whole loop can be
    moved to strictly lower the objective, all else fixed (enumerated on the plan).
    Loops only when their CSP is exhaustive (no node limit in the way)."""
    total = total_of(plan, assignment)
    for comp in scc(g).components:
        if not comp.live or (comp.cyclic and not loops):
            continue
        members = [g.block_ids[b] for b in comp.blocks]
        for combo in itertools.product(plan["targets"], repeat=len(members)):
            trial = dict(assignment, **dict(zip(members, combo, strict=True)))
            assert total_or_inf(plan, trial) >= total, (members, combo)


def edge(block: str, m: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    return {"block": block} if m is None else {"block": block, "transitions": m}


FULL = {"p": {"p": 0, "q": 0}, "q": {"p": 0, "q": 0}}  # anything goes, for free
SAME = {"p": {"p": 0}, "q": {"q": 0}}
DIFF = {"p": {"q": 0}, "q": {"p": 0}}


# ------------------------------------------------------ against brute force


def check_against_brute_force(plan: dict[str, Any], method: str, **opts: Any) -> None:
    optimum, _ = brute_force(plan)
    g, res, sec = run(plan, method=method, **opts)
    event(
        f"status {res.status}"
        + (f" (proved by {res.proved_by})" if res.status == "infeasible" else "")
    )
    live = [b["id"] for b in plan["blocks"] if b["id"] in live_blocks(plan)]
    assert sec["unreachable"] == [b["id"] for b in plan["blocks"] if b["id"] not in live]
    if optimum == math.inf:
        assert res.status == "infeasible" and sec["status"] == "infeasible"
        assert sec["assignment"] == {} and sec["cost"] is None and sec["optimal"] is True
        (diag,) = res.diagnostics
        assert diag.severity == "error" and diag.code == "infeasible" and diag.blocks
        assert set(diag.blocks) <= set(live)
        return
    assert res.status == "ok", res.diagnostics
    a = sec["assignment"]
    assert list(a) == live  # live blocks only, in input order
    blocks, edges = recompute(plan, a)  # also fails (KeyError) on an infeasible assignment
    assert sec["cost"] == {"total": blocks + edges, "blocks": blocks, "edges": edges}
    total = blocks + edges
    assert total >= optimum
    assert sec["lower_bound"] <= optimum
    # Tiny plans are within the exhaustive proof's reach: the bound is the optimum.
    assert sec["lower_bound"] == optimum
    assert sec["optimal"] == (total == optimum)
    assert sec["gap"] == (0 if total == optimum else (total - optimum) / total)
    for bid, detail in sec["blocks"].items():
        dom = {
            t: c
            for t, c in block_domain_and_cost(
                plan, next(b for b in plan["blocks"] if b["id"] == bid)
            ).items()
        }
        assert set(detail["costs"]) <= set(dom)
        assert (
            detail["target"] == a[bid] and detail["cost"] == dom[a[bid]] == detail["costs"][a[bid]]
        )
    st_ = sec["stats"]
    if "fallback_used" in st_:  # the heuristic ran (auto skips it when exact proves the optimum)
        event(
            f"fallback {st_['fallback_used']}, backtracks {min(st_['backtracks'], 2)}, loops {st_['csp_solves'] > 0}"
        )
        if not st_["fallback_used"]:
            # Refinement only ever takes strict improvements of the true objective.
            assert total <= st_["forward_cost"]
    else:
        assert method != "heuristic" and sec["proved_by"] == "exact"
    if method == "auto":
        assert total == optimum
    assert_fixpoint(plan, g, a, loops=opts.get("csp_node_limit", 2) > 1)
    assert from_json(sec, g) == res.assignment


@st.composite
def tight_plans(draw: st.DrawFn) -> dict[str, Any]:
    """Plans whose edges allow few partners per target (or demand different targets, as
    in graph colouring): arc consistent often, satisfiable much less often, so
    infeasibility has to be found by search."""
    targets = ["p", "q", "r"][: draw(st.integers(2, 3))]
    n = draw(st.integers(3, 6))
    ids = [f"b{i}" for i in range(n)]
    ring = draw(st.booleans())
    blocks = []
    for i in range(n):
        succ = [(i + 1) % n] if ring or i + 1 < n else []
        succ += [j for j in draw(st.lists(st.integers(0, n - 1), max_size=2)) if j != i]
        edges = []
        for j in succ:
            m = {}
            colouring = draw(st.integers(0, 3)) > 0  # "targets differ": AC-3 is blind to colouring
            for src in targets:
                if colouring:
                    dests = [d for d in targets if d != src]
                else:
                    dests = draw(
                        st.lists(st.sampled_from(targets), min_size=1, max_size=2, unique=True)
                    )
                m[src] = {d: 0 if d == src else draw(st.integers(0, 5)) for d in dests}
            edges.append({"block": ids[j], "transitions": m})
        blocks.append(
            {
                "id": ids[i],
                "cost": {t: draw(st.integers(0, 9)) for t in targets},
                "terminator": {"kind": "switch" if edges else "return", "successors": edges},
            }
        )
    return {"version": 1, "targets": targets, "blocks": blocks}


@settings(max_examples=examples(600), deadline=None)
@given(tight_plans())
def test_tight_plans_against_brute_force(plan: dict[str, Any]) -> None:
    check_against_brute_force(plan, "heuristic")


@settings(max_examples=examples(1500), deadline=None)
@given(plans(max_blocks=6, max_targets=4))
def test_heuristic_against_brute_force(plan: dict[str, Any]) -> None:
    check_against_brute_force(plan, "heuristic")


@settings(max_examples=examples(500), deadline=None)
@given(plans(max_blocks=6, max_targets=3))
def test_complete_fallback_against_brute_force(plan: dict[str, Any]) -> None:
    # No backtracking budget and a one-node CSP: the seed gives up at its first
    # failure, so the complete search decides feasibility on most of these plans.
    check_against_brute_force(plan, "heuristic", max_backtracks=0, csp_node_limit=1)


@settings(max_examples=examples(500), deadline=None)
@given(plans(max_blocks=6, max_targets=3))
def test_auto_against_brute_force(plan: dict[str, Any]) -> None:
    check_against_brute_force(plan, "auto")


@settings(max_examples=examples(300), deadline=None)
@given(plans(max_blocks=6, max_targets=3), st.integers(0, 3))
def test_seed_alone_is_feasible_and_never_worse_than_its_forward_pass(
    plan: dict[str, Any], rounds: int
) -> None:
    optimum, _ = brute_force(plan)
    g = parse_plan(plan)
    domains = prune(g).domains
    inst = build_instance(g, domains)
    if inst.empty:
        assert optimum == math.inf
        return
    h = solve_heuristic(inst, scc(g), max_rounds=rounds)
    if h.assignment is None:  # the seed may give up; it may never invent an answer
        assert h.failed
        return
    named = {g.block_ids[b]: g.targets[t] for b, t in enumerate(h.assignment) if g.live[b]}
    fwd = {g.block_ids[b]: g.targets[t] for b, t in enumerate(h.forward) if g.live[b]}
    assert optimum <= total_of(plan, named) <= total_of(plan, fwd)


# --------------------------------------------------------------- mechanisms


def test_backtracking_at_a_join_whose_predecessors_disagree() -> None:
    # p1 and q are decided first (smaller domains). p1=p leaves the join j {p, r};
    # q=p leaves p2 {q, r}; no pair of those is allowed on p2 -> j, so j has no target
    # and the forward pass must go back to q (the last decision) and take q=q.
    plan = {
        "version": 1,
        "targets": ["p", "q", "r"],
        "blocks": [
            {
                "id": "a",
                "domain": ["p"],
                "terminator": {
                    "kind": "switch",
                    "successors": [
                        edge("p1", {"p": {"p": 0, "q": 0}}),
                        edge("q", {"p": {"p": 0, "q": 0}}),
                    ],
                },
            },
            {
                "id": "p1",
                "domain": ["p", "q"],
                "cost": {"p": 0, "q": 5},
                "terminator": {
                    "kind": "goto",
                    "successors": [edge("j", {"p": {"p": 0, "r": 0}, "q": {"q": 0}})],
                },
            },
            {
                "id": "q",
                "domain": ["p", "q"],
                "cost": {"p": 0, "q": 1},
                "terminator": {
                    "kind": "goto",
                    "successors": [edge("p2", {"p": {"q": 0, "r": 0}, "q": {"p": 0}})],
                },
            },
            {"id": "j", "terminator": {"kind": "return"}},
            {
                "id": "p2",
                "terminator": {
                    "kind": "goto",
                    "successors": [
                        edge("j", {"p": {"p": 0, "r": 0}, "q": {"q": 0}, "r": {"q": 0}})
                    ],
                },
            },
        ],
    }
    h = seed_only(plan)
    assert h.stats["backtracks"] == 1 and h.stats["scc_retries"] == 0
    _, res, sec = run(plan, method="heuristic")
    assert sec["assignment"]["p1"] == "p" and sec["assignment"]["q"] == "q"
    assert sec["cost"]["total"] == brute_force(plan)[0] == 1
    assert sec["stats"]["backtracks"] == 1 and not sec["stats"]["fallback_used"]


def test_scc_whose_first_solution_makes_a_later_block_infeasible() -> None:
    # The loop l1 <-> l2 is cheapest on (p, p), but x after it needs l1 != l2. The
    # forward check empties x, the loop is backtracked into, and least-delta
    # perturbation moves l1 (delta 1) rather than l2 (delta 2).
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {
                "id": "l1",
                "cost": {"p": 0, "q": 1},
                "terminator": {"kind": "switch", "successors": [edge("l2", FULL), edge("x", SAME)]},
            },
            {
                "id": "l2",
                "cost": {"p": 0, "q": 2},
                "terminator": {"kind": "switch", "successors": [edge("l1", FULL), edge("x", DIFF)]},
            },
            {"id": "x", "terminator": {"kind": "return"}},
        ],
    }
    h = seed_only(plan)
    assert h.assignment is not None
    assert h.stats["backtracks"] == 1 and h.stats["scc_retries"] == 1
    _, _, sec = run(plan, method="heuristic")
    assert sec["assignment"] == {"l1": "q", "l2": "p", "x": "q"}
    assert sec["cost"]["total"] == brute_force(plan)[0] == 1


def test_loop_csp_charges_boundary_edges_and_caches_by_context() -> None:
    # Inside, the loop is cheapest on p; the edge from s (fixed on q) makes p cost 10
    # more. The boundary context carries s's target into the CSP, which must choose q.
    # The backward sweep meets the same context again and takes it from the cache.
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {
                "id": "s",
                "domain": ["q"],
                "terminator": {
                    "kind": "goto",
                    "successors": [edge("l1", {"q": {"p": 10, "q": 0}})],
                },
            },
            {
                "id": "l1",
                "cost": {"p": 0, "q": 1},
                "terminator": {"kind": "goto", "successors": [edge("l2", SAME)]},
            },
            {
                "id": "l2",
                "cost": {"p": 0, "q": 1},
                "terminator": {
                    "kind": "switch",
                    "successors": [edge("l1", SAME), edge("x", {"p": {"p": 0}, "q": {"p": 1}})],
                },
            },
            {"id": "x", "domain": ["p"], "terminator": {"kind": "return"}},
        ],
    }
    h = seed_only(plan)
    assert h.forward == h.assignment == (1, 1, 1, 0)
    assert h.stats["csp_solves"] == 1 and h.stats["cache_hits"] >= 1
    _, _, sec = run(plan, method="heuristic")
    assert sec["cost"]["total"] == brute_force(plan)[0] == 3 and sec["optimal"] is True


def test_backward_pass_improves_on_the_forward_pass() -> None:
    # c is fixed on q and d is cheaper on q, but the forward pass decides b before d
    # and its one-step lookahead prefers b=p. The backward pass sees d=q and moves b.
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {
                "id": "c",
                "domain": ["q"],
                "terminator": {
                    "kind": "switch",
                    "successors": [
                        edge("b", {"q": {"p": 0, "q": 0}}),
                        edge("d", {"q": {"p": 10, "q": 0}}),
                    ],
                },
            },
            {
                "id": "b",
                "cost": {"p": 0, "q": 2},
                "terminator": {
                    "kind": "goto",
                    "successors": [edge("d", {"p": {"p": 0, "q": 10}, "q": {"q": 0, "p": 10}})],
                },
            },
            {"id": "d", "cost": {"p": 1, "q": 0}, "terminator": {"kind": "return"}},
        ],
    }
    h = seed_only(plan)
    assert h.forward is not None and h.assignment is not None
    fwd = seed_only(plan, max_rounds=0)
    assert fwd.assignment == h.forward
    _, _, sec = run(plan, method="heuristic")
    assert sec["stats"]["forward_cost"] == 10
    assert sec["cost"]["total"] == brute_force(plan)[0] == 2
    assert sec["assignment"] == {"c": "q", "b": "q", "d": "q"}


def test_fixpoint_needs_more_than_one_round() -> None:
    # Found by random search, kept literally. Forward pass: (q, p, q, p) = 11. Round 1's
    # backward sweep (b3, b2, b1, b0) moves b1 to q (10) after b3 was already visited;
    # only round 2's forward sweep can then move b3 to q (9, the optimum).
    plan = json.loads(
        '{"version": 1, "targets": ["p", "q"], "blocks": ['
        '{"id": "b0", "cost": {"p": 4, "q": 0}, "terminator": {"kind": "switch", "successors": ['
        '{"block": "b1", "transitions": {"p": {"p": 0, "q": 0}, "q": {"p": 0, "q": 0}}},'
        '{"block": "b2", "transitions": {"p": {"p": 0, "q": 6}, "q": {"p": 5, "q": 0}}}]}},'
        '{"id": "b1", "cost": {"p": 1, "q": 2}, "terminator": {"kind": "switch", "successors": ['
        '{"block": "b2", "transitions": {"p": {"p": 0, "q": 3}, "q": {"p": 2, "q": 0}}},'
        '{"block": "b3", "transitions": {"p": {"p": 0, "q": 3}, "q": {"p": 1, "q": 0}}}]}},'
        '{"id": "b2", "cost": {"p": 3, "q": 4}, "terminator": {"kind": "return"}},'
        '{"id": "b3", "cost": {"p": 3, "q": 3}, "terminator": {"kind": "return"}}]}'
    )
    costs = []
    for rounds in (0, 1, 2):
        _, _, sec = run(plan, method="heuristic", max_rounds=rounds)
        costs.append(sec["cost"]["total"])
    assert costs == [11, 10, 9]
    _, _, sec = run(plan, method="heuristic")
    assert sec["cost"]["total"] == 9 == brute_force(plan)[0]
    assert sec["stats"]["rounds"] >= 2


# The loop a -> b -> c -> a is free inside; x, y, z, w after it need a != b, b == c,
# a != c and not (a=q, b=p): only (p, q, q) works. The CSP's first answer (p, p, p)
# empties x; least-delta perturbation then forces a=q (its delta 1 is the smallest),
# which no later perturbation undoes, so the seed exhausts its heaps and gives up.
SEED_GIVES_UP = {
    "version": 1,
    "targets": ["p", "q"],
    "blocks": [
        {
            "id": "a",
            "cost": {"p": 0, "q": 1},
            "terminator": {
                "kind": "switch",
                "successors": [edge("b", FULL), edge("x", SAME), edge("z", SAME), edge("w", SAME)],
            },
        },
        {
            "id": "b",
            "cost": {"p": 0, "q": 5},
            "terminator": {
                "kind": "switch",
                "successors": [
                    edge("c", FULL),
                    edge("x", DIFF),
                    edge("y", SAME),
                    edge("w", {"p": {"p": 0}, "q": {"p": 0, "q": 0}}),
                ],
            },
        },
        {
            "id": "c",
            "cost": {"p": 0, "q": 5},
            "terminator": {
                "kind": "switch",
                "successors": [edge("a", FULL), edge("y", SAME), edge("z", DIFF)],
            },
        },
        {"id": "x", "terminator": {"kind": "return"}},
        {"id": "y", "terminator": {"kind": "return"}},
        {"id": "z", "terminator": {"kind": "return"}},
        {"id": "w", "terminator": {"kind": "return"}},
    ],
}


def test_seed_gives_up_but_the_complete_search_finds_the_assignment() -> None:
    h = seed_only(SEED_GIVES_UP)
    assert h.assignment is None and h.stats["scc_retries"] >= 2
    optimum, best = brute_force(SEED_GIVES_UP)
    assert optimum == 10
    _, res, sec = run(SEED_GIVES_UP, method="heuristic")
    assert res.status == "ok" and sec["stats"]["fallback_used"] is True
    assert sec["method_used"] == "complete"
    assert {k: sec["assignment"][k] for k in "abc"} == {"a": "p", "b": "q", "c": "q"}
    assert sec["cost"]["total"] == total_of(SEED_GIVES_UP, sec["assignment"]) == optimum


ODD_CYCLE = {
    "version": 1,
    "targets": ["p", "q"],
    "transitions": DIFF,
    "blocks": [
        # Two-colouring a triangle: every edge is arc consistent, no assignment exists.
        {"id": "u", "terminator": {"kind": "goto", "successors": [edge("v")]}},
        {"id": "v", "terminator": {"kind": "goto", "successors": [edge("w")]}},
        {
            "id": "w",
            "terminator": {"kind": "switch", "successors": [edge("u"), edge("done", FULL)]},
        },
        {"id": "done", "terminator": {"kind": "return"}},
    ],
}


def test_infeasible_after_search_names_the_cycle() -> None:
    assert brute_force(ODD_CYCLE)[0] == math.inf
    assert all(prune(parse_plan(ODD_CYCLE)).domains)  # pruning cannot see it
    for method in ("heuristic", "auto"):
        _, res, sec = run(ODD_CYCLE, method=method)
        assert res.status == "infeasible"
        (d,) = res.diagnostics
        assert d.code == "infeasible" and set(d.blocks) <= {"u", "v", "w"} and d.blocks
        assert sec["cost"] is None and sec["lower_bound"] is None and sec["optimal"] is True


def test_infeasible_when_prune_emptied_a_live_domain() -> None:
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {
                "id": "s",
                "domain": ["p"],
                "terminator": {"kind": "goto", "successors": [edge("t", {"p": {"p": 0}})]},
            },
            {"id": "t", "domain": ["q"], "terminator": {"kind": "return"}},
        ],
    }
    _, res, _ = run(plan)
    assert res.status == "infeasible"
    (d,) = res.diagnostics
    assert (
        d.code == "infeasible"
        and d.blocks
        and set(d.blocks) <= {"s", "t"}
        and "pruning" in d.message
    )


def test_cli_infeasible_exit_code_and_artifact(tmp_path: Any, cli: Any) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(ODD_CYCLE))
    r = cli("solve", str(path))
    assert r.returncode == 4, r.stderr
    art = json.loads(r.stdout)
    assert art["status"] == "infeasible" and art["solve"]["status"] == "infeasible"
    assert [d["code"] for d in art["diagnostics"]] == ["infeasible"]
    assert b"infeasible" in r.stderr


def test_cli_artifacts_are_byte_identical_across_runs(tmp_path: Any, cli: Any) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(generate_plan(400, 3, seed=7, loop_size=12)))
    outs = [cli("solve", str(path), "--method", "heuristic").stdout for _ in range(2)]
    assert outs[0] == outs[1] and b'"time' not in outs[0]
    sec = json.loads(outs[0])["solve"]
    assert sec["method"] == "heuristic" and sec["status"] == "ok"


# ------------------------------------------------------------ dispatch, I/O


def test_heuristic_method_reports_exactly_the_seed_answer() -> None:
    plan = generate_plan(600, 3, seed=11, loop_size=8)
    g = parse_plan(plan)
    domains = prune(g).domains
    h = solve_heuristic(build_instance(g, domains), scc(g))
    res = solve(g, domains, scc(g), SolveOptions(method="heuristic"))
    assert res.assignment == h.assignment and res.method_used == "heuristic"
    assert res.lower_bound <= res.cost.total  # type: ignore[union-attr]


def test_auto_is_never_worse_than_heuristic() -> None:
    for seed in range(3):
        plan = generate_plan(300, 3, seed=seed)
        _, _, h = run(plan, method="heuristic")
        _, _, a = run(plan, method="auto")
        assert a["cost"]["total"] <= h["cost"]["total"]
        assert a["lower_bound"] >= h["lower_bound"] or a["optimal"]
        assert a["cost"]["total"] == total_of(plan, a["assignment"])


def test_large_loops() -> None:
    plan = generate_plan(400, 3, seed=5, loop_size=60)
    g = parse_plan(plan)
    assert max(len(c.blocks) for c in scc(g).components) >= 50
    _, res, sec = run(plan, method="heuristic")
    assert res.status == "ok"
    assert sec["cost"]["total"] == total_of(plan, sec["assignment"]) <= sec["stats"]["forward_cost"]
    assert sec["lower_bound"] <= sec["cost"]["total"] and sec["stats"]["csp_solves"] > 0


def test_without_the_exact_module(monkeypatch: Any) -> None:
    monkeypatch.setattr(solve_mod, "_exact_module", lambda: None)
    plan = generate_plan(30, 3, seed=2)
    with pytest.raises(PlacementError, match="exact"):
        run(plan, method="exact")
    _, res, sec = run(plan, method="auto")
    assert res.status == "ok" and "exact" not in sec["stats"]
    # 30 blocks are within the proof's reach: auto takes the proven optimum.
    assert sec["optimal"] is True and sec["proved_by"] in ("complete", "bound")


def test_unreachable_blocks_take_no_target() -> None:
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "blocks": [
            {"id": "s", "cost": {"p": 1, "q": 2}, "terminator": {"kind": "return"}},
            {"id": "dead", "domain": [], "terminator": {"kind": "goto", "successors": [edge("s")]}},
        ],
    }
    g, res, sec = run(plan)
    assert res.status == "ok" and sec["assignment"] == {"s": "p"} and sec["unreachable"] == ["dead"]
    assert "dead" not in sec["blocks"] and res.assignment == (0, -1)


def test_from_json_rejects_bad_assignments() -> None:
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "transitions": SAME,
        "blocks": [
            {"id": "bb0", "terminator": {"kind": "goto", "successors": [edge("bb3")]}},
            {"id": "bb3", "domain": ["p"], "terminator": {"kind": "return"}},
        ],
    }
    g = parse_plan(plan)
    assert from_json({"assignment": {"bb0": "p", "bb3": "p"}}, g) == (0, 0)
    cases = [
        ({"bb0": "p", "bb3": "q"}, "solve.assignment.bb3"),  # not in its domain
        ({"bb0": "p", "bb3": "zz"}, "solve.assignment.bb3"),  # unknown target
        ({"bb0": "p"}, "solve.assignment.bb3"),  # missing
        ({"bb0": "q", "bb3": "p"}, "solve.assignment.bb0"),  # edge forbids q -> p
        ({"bb0": "p", "bb3": "p", "bb9": "p"}, "solve.assignment.bb9"),  # unknown block
    ]
    for amap, where in cases:
        with pytest.raises(InputError) as exc:
            from_json({"assignment": amap}, g)
        assert [p.path for p in exc.value.problems] == [where]
    with pytest.raises(InputError):
        from_json({"assignment": ["p"]}, g)
    assert from_json({"status": "infeasible", "assignment": {}}, g) == (-1, -1)


def test_float_costs_are_reported_as_the_plan_sums_them() -> None:
    plan = {
        "version": 1,
        "targets": ["p", "q"],
        "transitions": {"p": {"p": 0, "q": 0.1}, "q": {"q": 0}},
        "blocks": [
            {
                "id": "a",
                "cost": {"p": 0.1, "q": 0.7},
                "terminator": {"kind": "goto", "successors": [edge("b")]},
            },
            {"id": "b", "cost": {"p": 0.5, "q": 0.1}, "terminator": {"kind": "return"}},
        ],
    }
    _, res, sec = run(plan)
    assert sec["assignment"] == {"a": "p", "b": "q"}
    assert sec["cost"]["total"] == pytest.approx(brute_force(plan)[0])
    assert res.cost.total == res.cost.blocks + res.cost.edges  # type: ignore[union-attr]
