"""AC-3 against a naive fixpoint reference, and its reporting rules."""

from __future__ import annotations

from hypothesis import given, settings

from placement_cli.algorithms.prune import prune
from placement_cli.formats.plan import Plan
from placement_cli.ir.graph import build_graph
from tests.budget import examples
from tests.reference import arc_consistent_domains, live_blocks
from tests.strategies import plans


def _graph(plan):
    return build_graph(Plan.model_validate(plan))


@settings(max_examples=examples(400))
@given(plans(max_blocks=6, max_targets=4))
def test_ac3_matches_naive_fixpoint(plan):
    g = _graph(plan)
    res = prune(g)
    got = {g.block_ids[b]: set(g.target_list(m)) for b, m in enumerate(res.domains)}
    want = arc_consistent_domains(plan)
    live = live_blocks(plan)
    wiped = any(not want[b] for b in live)
    if wiped:
        # Once a live domain is empty the plan is infeasible; both must say so.
        assert any(not got[b] for b in live)
        assert res.status == "infeasible"
        return
    assert res.status == "ok"
    # Live blocks: AC-3's fixpoint is unique, so the domains must be identical.
    for b in live:
        assert got[b] == want[b], b
    # `removed` lists exactly what went, once each, and only that.
    removed = {(r[0], r[1]) for r in res.removed}
    assert len(removed) == len(res.removed)
    for b in range(g.n_blocks):
        lost = g.domain[b] & ~res.domains[b]
        assert {t for (bb, t) in removed if bb == b} == {
            t for t in range(g.n_targets) if lost >> t & 1
        }


@settings(max_examples=examples(200))
@given(plans(max_blocks=5, max_targets=3))
def test_removed_edge_touches_the_block(plan):
    g = _graph(plan)
    for b, _t, e in prune(g).removed:
        assert b in (g.edge_src[e], g.edge_dst[e])


def _plan(blocks, transitions=None, targets=("a", "b")):
    p = {"version": 1, "targets": list(targets), "blocks": blocks}
    if transitions is not None:
        p["transitions"] = transitions
    return p


def test_self_loop_is_a_unary_constraint():
    # b0 -> b0 allows only b->b on the diagonal: target a must go, with the loop as culprit.
    g = _graph(
        _plan(
            [
                {
                    "id": "b0",
                    "terminator": {
                        "kind": "switch",
                        "successors": [
                            {"block": "b0", "transitions": {"a": {"b": 1}, "b": {"b": 0, "a": 1}}},
                            {"block": "b1"},
                        ],
                    },
                },
                {"id": "b1", "terminator": {"kind": "return"}},
            ],
            transitions={"a": {"a": 0, "b": 1}, "b": {"b": 0, "a": 1}},
        )
    )
    res = prune(g)
    assert g.target_list(res.domains[0]) == ["b"]
    assert res.removed == ((0, 0, 0),)


def test_parallel_edges_must_all_allow_a_pair():
    # Two arms to the same block: one allows only a->a, the other only a->b.
    # Each alone supports a, together nothing does.
    g = _graph(
        _plan(
            [
                {
                    "id": "b0",
                    "domain": ["a"],
                    "terminator": {
                        "kind": "switch",
                        "successors": [
                            {"block": "b1", "transitions": {"a": {"a": 0}}},
                            {"block": "b1", "transitions": {"a": {"b": 1}}},
                        ],
                    },
                },
                {"id": "b1", "terminator": {"kind": "return"}},
            ]
        )
    )
    res = prune(g)
    assert res.status == "infeasible"
    assert any(d.code == "domain-wipeout" and d.blocks == ("b0",) for d in res.diagnostics)


def test_unreachable_empty_domain_is_a_warning():
    g = _graph(
        _plan(
            [
                {"id": "b0", "terminator": {"kind": "return"}},
                {
                    "id": "dead",
                    "statements": [{"cost": {}}],
                    "terminator": {"kind": "goto", "successors": [{"block": "b0"}]},
                },
            ]
        )
    )
    res = prune(g)
    assert res.status == "ok"
    assert [d.severity for d in res.diagnostics] == ["warning"]
    assert g.target_list(res.domains[0]) == ["a", "b"]  # a dead neighbour never narrows live code


def test_wipeout_names_the_block_and_edge():
    g = _graph(
        _plan(
            [
                {
                    "id": "b0",
                    "domain": ["a"],
                    "terminator": {"kind": "goto", "successors": [{"block": "b1"}]},
                },
                {"id": "b1", "domain": ["b"], "terminator": {"kind": "return"}},
            ]
        )
    )
    res = prune(g)
    assert res.status == "infeasible"
    d = [d for d in res.diagnostics if d.severity == "error"][0]
    assert d.blocks in (("b0",), ("b1",))
    assert "b0[0] -> b1" in d.message


def _same_as_reference(g):
    from tests.prune_reference import reference_prune

    got, want = prune(g), reference_prune(g)
    assert got.domains == want.domains
    assert got.removed == want.removed  # including which edge each removal blames
    assert got.diagnostics == want.diagnostics


@settings(max_examples=examples(400))
@given(plans(max_blocks=8, max_targets=4))
def test_matches_the_literal_ac3_exactly(plan):
    _same_as_reference(_graph(plan))


@settings(max_examples=examples(100))
@given(plans(max_blocks=6, max_targets=3))
def test_matches_the_literal_ac3_with_many_targets(plan):
    # More targets than the lookup tables cover: the loop over targets answers.
    plan = {**plan, "targets": plan["targets"] + [f"x{i}" for i in range(9)]}
    g = _graph(plan)
    assert g.n_targets > 8
    _same_as_reference(g)
