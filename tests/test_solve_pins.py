"""Pins, forbids and warm starts, every method, checked
against brute force over the restricted plan."""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate_plan
from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.algorithms.solve.objective import evaluate, feasible_for
from placement_cli.app.solve_cli import solve_options
from placement_cli.core.errors import InputError, UsageError
from placement_cli.pipeline.run import parse_plan
from tests.budget import examples
from tests.reference import _matrix, block_domain_and_cost, live_blocks
from tests.strategies import plans

METHODS = ("auto", "exact", "heuristic")


def restricted_brute_force(
    plan: dict[str, Any],
    pins: list[tuple[str, str]] = (),  # type: ignore[assignment]
    forbids: list[tuple[str, str]] = (),
) -> float:  # type: ignore[assignment]
    """The optimum over the live blocks with pinned blocks on their target and forbidden
    targets removed (inf when infeasible): itertools over every assignment."""
    live = live_blocks(plan)
    blocks = [b for b in plan["blocks"] if b["id"] in live]
    doms = {b["id"]: block_domain_and_cost(plan, b) for b in blocks}
    pinned = {}
    for b, t in pins:
        pinned.setdefault(b, set()).add(t)
    cand = {}
    for b in blocks:
        i = b["id"]
        ts = [
            t
            for t in doms[i]
            if (i, t) not in set(forbids) and all(t == p for p in pinned.get(i, ()))
        ]
        cand[i] = ts
    best = math.inf
    ids = [b["id"] for b in blocks]
    for combo in itertools.product(*(cand[i] for i in ids)):
        a = dict(zip(ids, combo, strict=True))
        total = sum(doms[i][a[i]] for i in ids)
        for b in blocks:
            for s in b["terminator"].get("successors", []):
                c = _matrix(plan, s).get(a[b["id"]], {}).get(a[s["block"]])
                if c is None:
                    total = math.inf
                    break
                total += c
        best = min(best, total)
    return best


def run(plan: dict[str, Any], **opts: Any) -> tuple[Any, Any]:
    g = parse_plan(plan)
    return g, solve(g, prune(g).domains, scc(g), SolveOptions(**opts))


@st.composite
def pinned_plans(
    draw: st.DrawFn,
) -> tuple[dict[str, Any], list[tuple[str, str]], list[tuple[str, str]]]:
    plan = draw(plans(max_blocks=6, max_targets=3))
    live = sorted(live_blocks(plan))
    targets = plan["targets"]
    pins = draw(st.lists(st.tuples(st.sampled_from(live), st.sampled_from(targets)), max_size=2))
    forbids = draw(st.lists(st.tuples(st.sampled_from(live), st.sampled_from(targets)), max_size=2))
    return plan, pins, forbids


@settings(max_examples=examples(300), deadline=None)
@given(pinned_plans())
def test_pins_and_forbids_against_brute_force(case: Any) -> None:
    plan, pins, forbids = case
    optimum = restricted_brute_force(plan, pins, forbids)
    free = restricted_brute_force(plan)
    for method in METHODS:
        g, res = run(plan, method=method, pins=tuple(pins), forbids=tuple(forbids))
        event(f"{method}: {res.status}")
        if optimum == math.inf:
            assert res.status == "infeasible" and res.optimal
            (diag,) = res.diagnostics
            if free < math.inf:
                # the plan alone is feasible: the diagnostic must blame the pins
                assert diag.code == "pin-infeasible"
                assert any(f"{b}={t}" in diag.message for b, t in pins + forbids)
            continue
        assert res.status == "ok", res.diagnostics
        sec = res.to_json(g)
        a = sec["assignment"]
        for b, t in pins:
            assert a[b] == t
        for b, t in forbids:
            assert a[b] != t
        total = sec["cost"]["total"]
        assert total >= optimum and sec["lower_bound"] <= optimum
        if method != "heuristic":
            assert total == optimum and res.optimal
        assert res.optimal == (total == optimum)


def test_pin_on_unknown_block_target_or_dead_block_is_an_input_error() -> None:
    plan = {
        "version": 1,
        "targets": ["a", "b"],
        "blocks": [
            {"id": "x", "terminator": {"kind": "return"}},
            {"id": "dead", "terminator": {"kind": "return"}},
        ],
    }
    for opts in (
        {"pins": (("nope", "a"),)},
        {"pins": (("x", "c"),)},
        {"forbids": (("dead", "a"),)},
    ):
        with pytest.raises(InputError) as exc:
            run(plan, **opts)
        assert exc.value.exit_code == 3


PLAN = {
    "version": 1,
    "targets": ["a", "b", "c"],
    "transitions": {"a": {"a": 0, "b": 2}, "b": {"b": 0, "a": 1}, "c": {"c": 0}},
    "blocks": [
        {
            "id": "x",
            "domain": ["a", "b"],
            "cost": {"a": 1, "b": 3},
            "terminator": {"kind": "goto", "successors": [{"block": "y"}]},
        },
        {
            "id": "y",
            "cost": {"a": 5, "b": 1, "c": 0},
            "terminator": {"kind": "goto", "successors": [{"block": "x"}]},
        },
    ],
}


def test_impossible_pins_are_exit_4_naming_the_pin(tmp_path: Any, cli: Any) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(PLAN))
    # outside the domain
    r = cli("solve", str(p), "--pin", "x=c")
    assert r.returncode == 4, r.stderr
    assert b"x=c" in r.stderr and json.loads(r.stdout)["status"] == "infeasible"
    # inside the domains, but the neighbours cannot follow (y=c forces x=c)
    r = cli("solve", str(p), "--pin", "y=c", "--method", "heuristic")
    assert r.returncode == 4 and b"y=c" in r.stderr
    art = json.loads(r.stdout)
    assert [d["code"] for d in art["diagnostics"]] == ["pin-infeasible"]
    # forbidding everything
    r = cli("solve", str(p), "--forbid", "x=a", "--forbid", "x=b")
    assert r.returncode == 4 and b"x=a" in r.stderr


def test_cli_pin_flags_and_files(tmp_path: Any, cli: Any) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(PLAN))
    for method in METHODS:
        r = cli("solve", str(p), "--method", method, "--pin", "y=a")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["solve"]["assignment"] == {"x": "a", "y": "a"}
    f = tmp_path / "pins.yaml"
    f.write_text("y: b\n")
    r = cli("solve", str(p), "--pins", str(f))
    assert json.loads(r.stdout)["solve"]["assignment"]["y"] == "b"
    f = tmp_path / "pins.json"
    f.write_text(json.dumps(["x=b", {"block": "y", "target": "b", "forbid": True}]))
    r = cli("solve", str(p), "--pins", str(f))
    a = json.loads(r.stdout)["solve"]["assignment"]
    assert a["x"] == "b" and a["y"] != "b"
    r = cli("solve", str(p), "--pin", "zz=a")
    assert r.returncode == 3 and b"unknown block" in r.stderr
    r = cli("solve", str(p), "--pin", "x=zz")
    assert r.returncode == 3 and b"unknown target" in r.stderr
    r = cli("solve", str(p), "--pin", "x")
    assert r.returncode == 2 and b"BLOCK=TARGET" in r.stderr
    f.write_text(json.dumps([3]))
    r = cli("solve", str(p), "--pins", str(f))
    assert r.returncode == 3 and str(f).encode() in r.stderr


def test_cli_options_parsing() -> None:
    o = solve_options({"method": "exact", "time_limit": 2.0, "pin": ["a=b=c"], "forbid": ["x=y"]})
    assert o.pins == (("a=b", "c"),) and o.forbids == (("x", "y"),) and o.method == "exact"
    assert o.time_limit == 2.0
    with pytest.raises(UsageError):
        solve_options({"pin": ["=t"]})


# --------------------------------------------------------------- warm start


def perturbed(plan: dict[str, Any], frac: float, seed: int) -> dict[str, Any]:
    """The plan with `frac` of its statement costs changed."""
    rng = random.Random(seed)
    out = copy.deepcopy(plan)
    stmts = [s for b in out["blocks"] for s in b.get("statements", [])]
    for s in rng.sample(stmts, max(1, int(len(stmts) * frac))):
        for t in list(s["cost"]):
            if s["cost"][t] is not None:
                s["cost"][t] = rng.choice((1, 2, 3, 5, 8, 13))
    return out


def assignment_of(g: Any, res: Any) -> tuple[tuple[str, str], ...]:
    return tuple(res.to_json(g)["assignment"].items())


@pytest.mark.parametrize("method", METHODS)
def test_warm_start_after_a_small_edit_finds_the_same_optimum(method: str) -> None:
    plan = generate_plan(400, 4, seed=3)
    g0, r0 = run(plan, method="auto")
    assert r0.optimal
    edited = perturbed(plan, 0.02, seed=1)
    g, cold = run(edited, method="auto")
    _, warm = run(edited, method=method, warm_start=assignment_of(g0, r0))
    assert warm.status == "ok" and cold.optimal
    assert warm.stats["warm_matched"] == sum(g.live)
    if method == "heuristic":
        # the sweeps only improve on the old assignment, evaluated on the new plan
        old = tuple(
            g.targets.index(dict(assignment_of(g0, r0))[g.block_ids[b]]) if g.live[b] else -1
            for b in range(g.n_blocks)
        )
        assert warm.cost.total <= evaluate(g, old).total  # type: ignore[union-attr]
        assert warm.cost.total >= cold.cost.total
    else:
        assert warm.optimal and warm.cost.total == cold.cost.total


@pytest.mark.parametrize("method", METHODS)
def test_warm_start_repairs_new_blocks_and_lost_targets(method: str) -> None:
    plan = generate_plan(120, 4, seed=5)
    g0, r0 = run(plan, method="auto")
    old = dict(assignment_of(g0, r0))
    edited = copy.deepcopy(plan)
    # a block whose old target is no longer allowed ...
    victim = next(b for b in edited["blocks"] if old.get(b["id"]) not in (None, "interpreter"))
    victim["domain"] = ["interpreter"]
    # ... and a new block on an edge
    first = edited["blocks"][0]
    nxt = first["terminator"]["successors"][0]
    edited["blocks"].append(
        {
            "id": "fresh",
            "statements": [{"cost": {"interpreter": 2}}],
            "terminator": {"kind": "goto", "successors": [{"block": nxt["block"]}]},
        }
    )
    nxt["block"] = "fresh"
    g, cold = run(edited, method="auto")
    _, warm = run(edited, method=method, warm_start=tuple(old.items()))
    assert warm.status == "ok"
    assert feasible_for(g, prune(g).domains, warm.assignment)
    assert warm.stats["warm_matched"] < sum(g.live)
    if method != "heuristic":
        assert warm.optimal and warm.cost.total == cold.cost.total
    else:
        assert warm.cost.total >= cold.cost.total


@settings(max_examples=examples(150), deadline=None)
@given(plans(max_blocks=6, max_targets=3), st.randoms(use_true_random=False))
def test_any_warm_start_gives_the_cold_answer_or_better_proof(
    plan: dict[str, Any], rnd: Any
) -> None:
    optimum = restricted_brute_force(plan)
    live = sorted(live_blocks(plan))
    warm = tuple((b, rnd.choice(plan["targets"])) for b in live if rnd.random() < 0.8)
    for method in METHODS:
        g, res = run(plan, method=method, warm_start=warm)
        if optimum == math.inf:
            assert res.status == "infeasible"
            continue
        assert res.status == "ok"
        assert res.cost.total >= optimum and res.lower_bound <= optimum
        if method != "heuristic":
            assert res.optimal and res.cost.total == optimum


def test_warm_start_file_must_carry_an_assignment(tmp_path: Any, cli: Any) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(PLAN))
    prev = tmp_path / "prev.json"
    r = cli("prune", str(p), "-o", str(prev))
    assert r.returncode == 0
    r = cli("solve", str(p), "--warm-start", str(prev))
    assert r.returncode == 3 and b"warm start" in r.stderr
    r = cli("solve", str(p), "-o", str(prev))
    r = cli("solve", str(p), "--warm-start", str(prev), "--method", "heuristic")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["solve"]["method_used"] == "warm-start"
