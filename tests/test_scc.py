"""SCCs against networkx on random graphs, and the condensation's order and interface."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from placement_cli.algorithms.scc import scc
from placement_cli.formats.plan import Plan
from placement_cli.ir.graph import build_graph
from tests.budget import examples


@st.composite
def cfgs(draw):
    n = draw(st.integers(1, 12))
    blocks = []
    for i in range(n):
        succ = draw(st.lists(st.integers(0, n - 1), max_size=3))
        kind = "return" if not succ else "switch"
        blocks.append(
            {
                "id": f"n{i}",
                "terminator": {"kind": kind, "successors": [{"block": f"n{j}"} for j in succ]},
            }
        )
    return {"version": 1, "targets": ["t"], "blocks": blocks}


@settings(max_examples=examples(300))
@given(cfgs())
def test_components_match_networkx(plan):
    g = build_graph(Plan.model_validate(plan))
    res = scc(g)
    ref = nx.DiGraph()
    ref.add_nodes_from(range(g.n_blocks))
    ref.add_edges_from(zip(g.edge_src, g.edge_dst, strict=True))
    want = {frozenset(c) for c in nx.strongly_connected_components(ref)}
    assert {frozenset(c.blocks) for c in res.components} == want
    # Topological: every CFG edge goes to the same or a later component.
    for u, v in zip(g.edge_src, g.edge_dst, strict=True):
        assert res.comp_of[u] <= res.comp_of[v]
    for c, comp in enumerate(res.components):
        assert list(comp.blocks) == sorted(comp.blocks)
        assert all(res.comp_of[b] == c for b in comp.blocks)
        loops = any(g.edge_dst[e] == b for b in comp.blocks for e in g.succ[b])
        assert comp.cyclic == (len(comp.blocks) > 1)
        if not comp.cyclic:
            assert comp.self_loop == loops
        inside = set(comp.blocks)
        for e in comp.boundary:
            assert (g.edge_src[e] in inside) != (g.edge_dst[e] in inside)
        for e in comp.internal:
            assert g.edge_src[e] in inside and g.edge_dst[e] in inside
        assert len(comp.boundary) + len(comp.internal) == len(
            {e for b in comp.blocks for e in (*g.succ[b], *g.pred[b])}
        )
    cond = nx.condensation(ref)
    want_edges = {
        (frozenset(cond.nodes[a]["members"]), frozenset(cond.nodes[b]["members"]))
        for a, b in cond.edges
    }
    got_edges = {
        (frozenset(res.components[a].blocks), frozenset(res.components[b].blocks))
        for a, b in res.edges
    }
    assert got_edges == want_edges


def test_deep_chain_needs_no_recursion():
    n = 30000
    blocks = [
        {"id": f"b{i}", "terminator": {"kind": "goto", "successors": [{"block": f"b{i + 1}"}]}}
        for i in range(n - 1)
    ]
    blocks.append(
        {"id": f"b{n - 1}", "terminator": {"kind": "goto", "successors": [{"block": "b0"}]}}
    )
    g = build_graph(Plan.model_validate({"version": 1, "targets": ["t"], "blocks": blocks}))
    res = scc(g)
    assert len(res.components) == 1 and res.components[0].cyclic
    assert res.components[0].header == 0


def test_order_ties_follow_input_position():
    # b0 branches to b2 and b1, which are independent: b1 (earlier in input) comes first.
    plan = {
        "version": 1,
        "targets": ["t"],
        "blocks": [
            {
                "id": "b0",
                "terminator": {"kind": "switch", "successors": [{"block": "b2"}, {"block": "b1"}]},
            },
            {"id": "b1", "terminator": {"kind": "return"}},
            {"id": "b2", "terminator": {"kind": "return"}},
        ],
    }
    g = build_graph(Plan.model_validate(plan))
    assert [c.blocks for c in scc(g).components] == [(0,), (1,), (2,)]


@settings(max_examples=examples(300))
@given(cfgs())
def test_matches_the_literal_condensation_exactly(plan):
    from tests.scc_reference import reference_scc

    g = build_graph(Plan.model_validate(plan))
    got, want = scc(g), reference_scc(g)
    assert got == want  # every component field: blocks, entries, exits, boundary, internal, header
    full = got.to_json(g)
    lean = got.to_json(g, boundary=False)
    for c in full["components"]:
        del c["boundary"]
    assert lean == full
