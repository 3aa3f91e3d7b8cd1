"""`fuse`: same-target goto chains collapse, nothing else does, and the cost stays put."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings

from placement_cli.algorithms.fuse import fuse
from placement_cli.algorithms.solve.objective import evaluate
from placement_cli.formats.plan import Plan
from placement_cli.formats.sections import FuseSection
from placement_cli.ir.graph import build_graph
from placement_cli.ir.normalize import normalize
from tests.budget import examples
from tests.conftest import EXAMPLES
from tests.fuse_helpers import (
    as_assignment,
    blk,
    fused_members,
    graph,
    needs_solve,
    place,
    placed_plans,
    plan,
)

# ---------------------------------------------------------------- the cases


def test_three_block_chain_becomes_one():
    g = graph(plan(blk("x", "y"), blk("y", "z"), blk("z")))
    r = fuse(g, place(g, "a a a"))
    assert r.status == "ok"
    assert fused_members(g, r) == [["x", "y", "z"]]
    assert r.merged == 2
    fb = normalize(r.graph)["blocks"]
    assert [b["id"] for b in fb] == ["x"]
    assert [s["text"] for s in fb[0]["statements"]] == ["stmt of x", "stmt of y", "stmt of z"]
    assert fb[0]["terminator"]["kind"] == "return"  # the tail's terminator
    assert fb[0]["cost"] == {"a": 3, "b": 6, "c": 9}
    js = r.to_json(g)
    assert js["blocks"] == [{"id": "x", "target": "a", "members": ["x", "y", "z"]}]
    assert js["cost_preserved"] is True
    assert js["cost_before"] == js["cost_after"] == {"total": 3, "blocks": 3, "edges": 0}


def test_different_targets_are_not_fused():
    g = graph(plan(blk("x", "y"), blk("y", "z"), blk("z")))
    r = fuse(g, place(g, "a b b"))
    assert fused_members(g, r) == [["x"], ["y", "z"]]
    assert r.to_json(g)["blocks"][1] == {"id": "y", "target": "b", "members": ["y", "z"]}


def test_join_with_two_predecessors_is_not_fused():
    g = graph(plan(blk("x", "l", "r"), blk("l", "j"), blk("r", "j"), blk("j")))
    r = fuse(g, place(g, "a a a a"))
    # l and r each have x as their only predecessor, but x ends in a switch
    assert fused_members(g, r) == [["x"], ["l"], ["r"], ["j"]]


def test_goto_with_arguments_is_not_fused():
    g = graph(plan(blk("x", "y", args={"y": ["%1"]}), blk("y", params=["%p"])))
    r = fuse(g, place(g, "a a"))
    assert fused_members(g, r) == [["x"], ["y"]]


def test_block_with_parameters_is_not_fused_but_a_head_with_parameters_is_kept():
    # y takes a parameter (fed through the back edge from z): never absorbed
    g = graph(
        plan(
            blk("x", "y", args={"y": ["%0"]}),
            blk("y", "z", params=["%p"]),
            blk("z", "y", "w", args={"y": ["%1"]}),
            blk("w"),
        )
    )
    r = fuse(g, place(g, "a a a a"))
    assert fused_members(g, r) == [["x"], ["y", "z"], ["w"]]
    fy = normalize(r.graph)["blocks"][1]
    assert fy["id"] == "y" and fy["params"] == ["%p"]  # the head's parameters survive
    assert [s["block"] for s in fy["terminator"]["successors"]] == ["y", "w"]
    assert fy["terminator"]["successors"][0]["args"] == ["%1"]


def test_only_plain_goto_fuses_not_graph_read_or_one_armed_switch():
    g = graph(plan(blk("x", "y", kind="graph_read"), blk("y", "z", kind="switch"), blk("z")))
    r = fuse(g, place(g, "a a a"))
    assert fused_members(g, r) == [["x"], ["y"], ["z"]]


def test_entry_is_never_absorbed():
    # e's only predecessor is t, via an argument-free goto on the same target, but e is the entry
    g = graph(plan(blk("e", "t"), blk("t", "e")))
    r = fuse(g, place(g, "a a"))
    assert fused_members(g, r) == [["e", "t"]]
    fb = normalize(r.graph)["blocks"]
    assert [s["block"] for s in fb[0]["terminator"]["successors"]] == ["e"]  # now a self-loop
    assert r.cost_preserved


def test_chain_head_later_in_input_order_than_what_it_absorbs():
    g = graph(plan(blk("x", "h"), blk("m1", "m2"), blk("m2"), blk("h", "m1")))
    r = fuse(g, place(g, "b a a a"))
    assert fused_members(g, r) == [["x"], ["h", "m1", "m2"]]
    fb = normalize(r.graph)["blocks"]
    assert [b["id"] for b in fb] == ["x", "h"]
    assert [s["text"] for s in fb[1]["statements"]] == ["stmt of h", "stmt of m1", "stmt of m2"]
    assert fb[1]["terminator"]["kind"] == "return"
    assert r.to_json(g)["blocks"][1]["members"] == ["h", "m1", "m2"]


def test_branch_targets_are_rewritten_to_surviving_blocks():
    g = graph(
        plan(
            blk("s", "p", "q"),
            blk("p", "p2"),
            blk("p2", "j"),
            blk("q", "q2"),
            blk("q2", "j"),
            blk("j", "j2"),
            blk("j2"),
            blk("dead", "p2"),  # unreachable, points at a block that gets absorbed
        )
    )
    r = fuse(g, place(g, "a b b c c a a -"))
    assert fused_members(g, r) == [["s"], ["p", "p2"], ["q", "q2"], ["j", "j2"]]
    fb = {b["id"]: b for b in normalize(r.graph)["blocks"]}
    assert list(fb) == ["s", "p", "q", "j"]
    assert [x["block"] for x in fb["s"]["terminator"]["successors"]] == ["p", "q"]
    assert [x["block"] for x in fb["p"]["terminator"]["successors"]] == ["j"]
    assert [x["block"] for x in fb["q"]["terminator"]["successors"]] == ["j"]
    # The fused plan is a valid plan on its own: every reference resolves.
    g2 = graph(normalize(r.graph))
    assert g2.block_ids == ("s", "p", "q", "j")
    assert [(g2.edge_src[e], g2.edge_dst[e]) for e in range(g2.n_edges)] == [
        (0, 1),
        (0, 2),
        (1, 3),
        (2, 3),
    ]
    assert r.to_json(g)["dropped"] == ["dead"]
    assert [d.code for d in r.diagnostics] == ["unreachable-dropped"]
    assert r.diagnostics[0].blocks == ("dead",)


def test_dead_predecessor_does_not_block_fusion():
    g = graph(plan(blk("x", "y"), blk("y"), blk("dead", "y")))
    r = fuse(g, place(g, "a a -"))
    assert fused_members(g, r) == [["x", "y"]]


def test_fused_costs_domain_paths_and_premium():
    p = plan(
        {
            "id": "x",
            "domain": ["a", "b"],
            "paths": ["p1", "p2"],
            "premium": {"a": 1.5},
            "statements": [{"cost": {"a": 1, "b": 2, "c": 3}}],
            "terminator": {"kind": "goto", "successors": [{"block": "y"}]},
        },
        {
            "id": "y",
            "paths": ["p2", "p0"],
            "premium": {"a": 2, "b": 4},
            "cost": {"a": 10, "b": 20, "c": 30},
            "terminator": {"kind": "return", "cost": {"a": 1, "b": 1}},
        },
        paths={"p0": ["a"], "p1": ["b"], "p2": ["c"]},
    )
    g = graph(p)
    r = fuse(g, place(g, "a a"))
    (fb,) = normalize(r.graph)["blocks"]
    assert fb["domain"] == ["a", "b"]
    assert fb["cost"] == {"a": 11, "b": 22}
    assert fb["premium"] == {"a": 3.5, "b": 4}
    assert fb["paths"] == ["p1", "p2", "p0"]
    assert r.graph.cost[0][0] == g.cost[0][0] + g.cost[1][0]
    assert r.graph.block_paths == ((1, 2, 0),)
    assert r.cost_before.total == r.cost_after.total == g.cost[0][0] + g.cost[1][0]


def test_missing_assignment_gives_an_infeasible_result_not_a_traceback():
    g = graph(plan(blk("x", "y"), blk("y")))
    for bad in (None, (), place(g, "a -"), (0, 7)):
        r = fuse(g, bad)  # type: ignore[arg-type]
        assert r.status == "infeasible"
        assert [d.severity for d in r.diagnostics] == ["error"]
        js = r.to_json(g)
        assert js["blocks"] == [] and r.plan_json(g) is None and js["cost_preserved"] is False
        FuseSection.model_validate(js)


def test_assignment_outside_the_domain_is_reported():
    g = graph(plan({"id": "x", "domain": ["b"], "terminator": {"kind": "return"}}))
    r = fuse(g, place(g, "a"))
    assert r.status == "infeasible"
    assert r.diagnostics[0].code == "assignment-infeasible"


def test_pure_the_input_graph_is_not_changed():
    p = plan(blk("x", "y"), blk("y", "z"), blk("z"))
    g = graph(p)
    before = normalize(g)
    snapshot = (g.block_ids, g.succ, g.pred, g.cost, repr(before))
    fuse(g, place(g, "a a a"))
    assert (g.block_ids, g.succ, g.pred, g.cost, repr(normalize(g))) == snapshot


# ---------------------------------------------------------------- random plans


def naive_fusion(p: dict[str, Any], assign: dict[str, str]) -> list[list[str]]:
    """Merge one eligible pair at a time until none is left, on plain dicts."""
    from tests.reference import live_blocks

    live = live_blocks(p)
    entry = p.get("entry", p["blocks"][0]["id"])
    blocks = {
        b["id"]: {"members": [b["id"]], "params": b.get("params", []), "term": b["terminator"]}
        for b in p["blocks"]
        if b["id"] in live
    }
    changed = True
    while changed:
        changed = False
        for bid, b in blocks.items():
            if bid == entry or b["params"]:
                continue
            preds = [
                (a, s)
                for a, x in blocks.items()
                for s in x["term"].get("successors", [])
                if s["block"] == bid
            ]
            if len(preds) != 1:
                continue
            a, s = preds[0]
            x = blocks[a]
            if a == bid or x["term"]["kind"] != "goto" or s.get("args") or assign[a] != assign[bid]:
                continue
            x["members"] += b["members"]
            x["term"] = b["term"]
            del blocks[bid]
            changed = True
            break
    order = [b["id"] for b in p["blocks"]]
    return sorted((b["members"] for b in blocks.values()), key=lambda ms: order.index(ms[0]))


@settings(deadline=None, max_examples=examples(300))
@given(placed_plans())
def test_fusion_matches_a_naive_pairwise_merge(case):
    p, names = case
    g = graph(p)
    a = as_assignment(g, names)
    r = fuse(g, a)
    if evaluate(g, a) is None:
        assert r.status == "infeasible"
        return
    assert r.status == "ok"
    assign = {bid: names[i] for i, bid in enumerate(g.block_ids)}
    assert fused_members(g, r) == naive_fusion(p, assign)


@settings(deadline=None, max_examples=examples(300))
@given(placed_plans())
def test_fusion_preserves_cost_and_yields_a_valid_plan(case):
    p, names = case
    g = graph(p)
    a = as_assignment(g, names)
    before = evaluate(g, a)
    r = fuse(g, a)
    if before is None:
        return
    # The fused plan, re-read from its own JSON through the checker, is the same graph.
    fp = r.plan_json(g)
    Plan.model_validate(fp)
    g2 = graph(fp)
    for f in (
        "block_ids",
        "entry",
        "domain",
        "edge_src",
        "edge_dst",
        "edge_pos",
        "succ",
        "pred",
        "live",
        "block_paths",
        "path_origin",
    ):
        assert getattr(g2, f) == getattr(r.graph, f), f
    for c1, c2 in zip(g2.cost, r.graph.cost, strict=True):
        assert all(x == y or math.isclose(x, y) for x, y in zip(c1, c2, strict=True))
    assert normalize(g2) == fp
    assert normalize(r.graph) == fp  # assembled from the original == normalised afresh
    # Cost preserved, computed independently on the re-read plan.
    after = evaluate(g2, r.assignment)
    assert after is not None and math.isclose(after.total, before.total)
    assert r.cost_preserved
    # Members partition the live blocks; statements are the members' in execution order.
    flat = sorted(b for ms in r.members for b in ms)
    assert flat == [b for b in range(g.n_blocks) if g.live[b]]
    for f, ms in enumerate(r.members):
        texts = [s.get("text") for m in ms for s in normalize(g)["blocks"][m]["statements"]]
        assert [s.get("text") for s in fp["blocks"][f]["statements"]] == texts
        assert {a[m] for m in ms} == {r.assignment[f]}
    # Maximal: fusing again changes nothing.
    assert fuse(r.graph, r.assignment).merged == 0
    FuseSection.model_validate(r.to_json(g))


# ---------------------------------------------------------------- through the command line


@needs_solve
def test_cli_fuse_on_the_example(cli):
    import orjson

    r = cli("fuse", str(EXAMPLES / "loop_alternating.yaml"))
    assert r.returncode == 0, r.stderr
    art = orjson.loads(r.stdout)
    assert art["kind"] == "fuse"
    assert art["fuse"]["cost_preserved"] is True
    assert art["fuse"]["cost_after"]["total"] == art["solve"]["cost"]["total"]
    assert {"id": "bb2", "target": "embedding", "members": ["bb2", "bb3"]} in art["fuse"]["blocks"]


def test_fused_plan_blocks_are_built_on_first_read() -> None:
    # `fuse` and `islands` only need the fused graph's indices; the fused plan's blocks
    # are built when first read, and then are the merged blocks.
    g = build_graph(
        Plan.model_validate(
            {
                "version": 1,
                "targets": ["a", "b"],
                "transitions": {"a": {"a": 0, "b": 1}, "b": {"b": 0}},
                "blocks": [
                    {
                        "id": "x",
                        "statements": [{"text": "s1", "cost": {"a": 1, "b": 1}}],
                        "terminator": {"kind": "goto", "successors": [{"block": "y"}]},
                    },
                    {
                        "id": "y",
                        "statements": [{"text": "s2", "cost": {"a": 2, "b": 2}}],
                        "terminator": {"kind": "goto", "successors": [{"block": "z"}]},
                    },
                    {"id": "z", "terminator": {"kind": "return"}},
                ],
            }
        )
    )
    r = fuse(g, (0, 0, 1))
    assert r.graph is not None
    plan = r.graph.plan
    assert "blocks" not in vars(plan)
    assert r.graph.domain == (3, 3) and r.members == ((0, 1), (2,))
    blocks = plan.blocks
    assert "blocks" in vars(plan)
    assert [b.id for b in blocks] == ["x", "z"]
    assert [s.text for s in blocks[0].statements] == ["s1", "s2"]
    assert r.plan_json(g)["blocks"][0]["terminator"]["successors"][0]["block"] == "z"
