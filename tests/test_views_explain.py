"""`placement explain`: every target's verdict, and the pinned optimum checked against a
brute-force solve of the plan with the block's domain narrowed to that target."""

from __future__ import annotations

import copy
import math

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement_cli.pipeline.run import Loaded, Run, parse_plan
from placement_cli.views.explain import explain
from tests.budget import examples
from tests.reference import block_domain_and_cost, brute_force, live_blocks
from tests.strategies import plans
from tests.views_goldens import invoke


def _pinned_reference(plan, bid, t):
    """The brute-force optimum with block `bid` pinned to `t` (inf: no placement)."""
    b = next(x for x in plan["blocks"] if x["id"] == bid)
    if t not in block_domain_and_cost(plan, b):
        return math.inf
    pinned = copy.deepcopy(plan)
    next(x for x in pinned["blocks"] if x["id"] == bid)["domain"] = [t]
    return brute_force(pinned)[0]


@settings(max_examples=examples(80))
@given(plans(max_blocks=5, max_targets=3), st.integers(0, 4))
def test_pinned_optimum_matches_brute_force(plan, k):
    bid = plan["blocks"][k % len(plan["blocks"])]["id"]
    run = Run(Loaded("<test>", parse_plan(plan)))
    ex = explain(run, bid)
    live = bid in live_blocks(plan)
    best = brute_force(plan)[0]
    assert [r["target"] for r in ex["targets"]] == plan["targets"]
    for r in ex["targets"]:
        ref = _pinned_reference(plan, bid, r["target"])
        if not live:
            assert not r["possible"] and r["pinned"] is None
            assert r["reasons"][0]["code"] == "unreachable"
            continue
        if r["pinned"] is None:
            # impossible for a stated reason, and truly so
            assert r["reasons"] and not r["possible"]
            assert ref == math.inf, (r, ref)
            continue
        p = r["pinned"]
        assert p["proven"], p  # tiny plans: always proven within the limit
        if p["status"] == "infeasible":
            assert ref == math.inf
        else:
            assert p["status"] == "optimal"
            assert p["total"] == pytest.approx(ref), (r, ref)
            assert p["total"] >= best - 1e-9
            if ex["total"] is not None:
                assert r["difference"] == pytest.approx(p["total"] - ex["total"])
    if live and best < math.inf:
        # the chosen target's pinned optimum is the plan's optimum
        chosen = [r for r in ex["targets"] if r["chosen"]]
        assert len(chosen) == 1 and chosen[0]["pinned"]["total"] == pytest.approx(best)
        assert min(
            r["pinned"]["total"]
            for r in ex["targets"]
            if r["pinned"] and r["pinned"]["total"] is not None
        ) == pytest.approx(best)


def test_explain_three_targets_text():
    code, out, err = invoke(["explain", "examples/three_targets.yaml", "bb4"])
    assert code == 0, err
    text = out.decode()
    assert "chosen interpreter (cost 8); plan total 102, proven optimal" in text
    assert "postgres: removed by prune: edge bb2[0] -> bb4" in text
    lines = {line.split()[0]: line.split() for line in text.splitlines()[3:6]}
    assert lines["embedding"][:5] == ["embedding", "yes", "4", "114", "(proven)"]
    assert lines["embedding"][5] == "+12"
    assert "bb0[0] -> bb4  postgres -> interpreter  10 (cut)" in text


def test_explain_json_names_the_reasons():
    code, out, _ = invoke(["explain", "examples/three_targets.yaml", "bb3", "--format", "json"])
    assert code == 0
    ex = orjson.loads(out)
    pg = next(r for r in ex["targets"] if r["target"] == "postgres")
    assert {x["code"] for x in pg["reasons"]} == {"unsupported-statement"}
    assert pg["pinned"] is None and pg["cost"] is None
    interp = next(r for r in ex["targets"] if r["target"] == "interpreter")
    assert interp["pinned"]["status"] == "optimal" and interp["difference"] == 40


def test_explain_declared_domain_and_not_proven(tmp_path):
    plan = {
        "version": 1,
        "targets": ["a", "b"],
        "blocks": [
            {"id": "x", "domain": ["a"], "cost": {"a": 1, "b": 0}, "terminator": {"kind": "return"}}
        ],
    }
    run = Run(Loaded("<test>", parse_plan(plan)))
    ex = explain(run, "x")
    b = ex["targets"][1]
    assert [x["code"] for x in b["reasons"]] == ["not-in-domain"]


def test_explain_unknown_block_is_a_usage_error():
    code, _, err = invoke(["explain", "examples/three_targets.yaml", "nope"])
    assert code == 2
    assert b"unknown block 'nope'" in err


def test_explain_infeasible_plan():
    code, out, _ = invoke(["explain", "examples/no_target.yaml", "bb1"])
    assert code == 0
    assert b"the plan has no feasible placement" in out


def test_explain_says_not_proven_when_the_limit_stops_the_proof():
    import random

    from placement_cli.algorithms.solve.driver import SolveOptions
    from placement_cli.views.explain import ExplainOptions, to_text

    # A dense random CFG (high treewidth): no proof in zero seconds.
    rng = random.Random(1)
    targets = ["t0", "t1", "t2", "t3", "t4"]
    n = 120
    blocks = []
    for i in range(n):
        succ = [{"block": f"b{rng.randrange(n)}"} for _ in range(3)] + (
            [{"block": f"b{i + 1}"}] if i + 1 < n else []
        )
        blocks.append(
            {
                "id": f"b{i}",
                "cost": {t: rng.randrange(20) for t in targets},
                "terminator": {"kind": "switch", "successors": succ},
            }
        )
    matrix = {s: {d: 0 if s == d else rng.randrange(1, 9) for d in targets} for s in targets}
    plan = {"version": 1, "targets": targets, "transitions": matrix, "blocks": blocks}
    run = Run(
        Loaded("<test>", parse_plan(plan)),
        {"solve": SolveOptions(method="heuristic", time_limit=1.0)},
    )
    ex = explain(run, "b5", ExplainOptions(time_limit=0.0))
    for r in ex["targets"]:
        p = r["pinned"]
        assert p["status"] == "not proven" and p["proven"] is False
        # the moved chosen placement is always a feasible start here (complete matrices)
        assert p["total"] is not None and p["lower_bound"] <= p["total"]
    assert "not proven: best found" in to_text(ex, "dense")
    assert "(proven)" not in to_text(ex, "dense")


def _tie_plan() -> dict:
    return {
        "version": 1,
        "targets": ["a", "b"],
        "transitions": {"a": {"a": 0, "b": 4}, "b": {"b": 0, "a": 4}},
        "blocks": [
            {
                "id": "x",
                "statements": [{"cost": {"a": 2, "b": 1}}, {"cost": {"a": 1, "b": 1}}],
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": "y"}],
                    "cost": {"a": 1, "b": 2},
                },
                "premium": {"b": 0.5},
            },
            {"id": "y", "cost": {"a": 3, "b": 1}, "terminator": {"kind": "return"}},
        ],
    }


def test_parts_add_up_ties_are_named_and_moves_are_listed():
    from placement_cli.pipeline.run import Loaded, Run, parse_plan
    from placement_cli.views.explain import explain as explain_block
    from placement_cli.views.explain import to_text

    g = parse_plan(_tie_plan())
    ex = explain_block(Run(Loaded("<doc>", g)), "x")
    for row in ex["targets"]:
        assert sum(row["parts"].values()) == row["cost"], row
    by = {r["target"]: r for r in ex["targets"]}
    assert by["a"]["parts"] == {"statements": 3, "terminator": 1, "premium": 0}
    assert by["b"]["parts"] == {"statements": 2, "terminator": 2, "premium": 0.5}
    # x on a: 4 + y on a: 3 = 7; x on b: 4.5 + y on b: 1 = 5.5, the optimum
    assert ex["chosen"] == "b" and ex["total"] == 5.5
    assert by["a"]["pinned"]["total"] == 7 and by["a"]["pinned"]["moves"] == [
        {"block": "y", "from": "b", "to": "a"}
    ]
    assert not any(r["tie"] for r in ex["targets"])
    ey = explain_block(Run(Loaded("<doc>", g)), "y")
    assert {r["target"]: r["parts"] for r in ey["targets"]}["a"] == {"given": 3, "premium": 0}
    text = to_text(ex, "t")
    assert "b: statements 2 + terminator 2 + premium 0.5" in text
    assert "on a: y b -> a" in text


def test_a_tie_is_said():
    from placement_cli.pipeline.run import Loaded, Run, parse_plan
    from placement_cli.views.explain import explain as explain_block
    from placement_cli.views.explain import to_text

    plan = _tie_plan()
    plan["blocks"][1]["cost"] = {"a": 1.5, "b": 1}  # x and y on a: 4 + 1.5 = 5.5 too
    ex = explain_block(Run(Loaded("<doc>", parse_plan(plan))), "x")
    ties = [r["target"] for r in ex["targets"] if r["tie"]]
    assert ex["total"] == 5.5 and len(ties) == 1 and {*ties, ex["chosen"]} == {"a", "b"}
    assert f"tie: {ties[0]} give the same proven optimum as {ex['chosen']}" in to_text(ex, "t")


def test_a_target_banned_by_a_loop_names_the_loop():
    from tests.conftest import EXAMPLES, run_cli

    r = run_cli("explain", str(EXAMPLES / "loop_read.body.yaml"), "bb3", "--format", "json")
    ex = orjson.loads(r.stdout)
    (pg,) = [row for row in ex["targets"] if row["target"] == "postgres"]
    (pruned,) = [x for x in pg["reasons"] if x["code"] == "pruned"]
    assert pruned["loop"] == ["bb1", "bb2", "bb3"]
    assert "inside the loop {bb1, bb2, bb3}" in pruned["message"]
    # an edge leaving the loop bans nothing by being in it: no loop named
    ex1 = orjson.loads(
        run_cli("explain", str(EXAMPLES / "loop_read.body.yaml"), "bb1", "--format", "json").stdout
    )
    reasons = [x for row in ex1["targets"] for x in row["reasons"] if x["code"] == "pruned"]
    assert reasons and all("loop" not in x for x in reasons)
