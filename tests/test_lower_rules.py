"""One test per rule of the reference (§2.1 eligibility, §2.2 costs, §2.3 splitting,
§2.4 matrices) under the built-in `hashql` profile."""

from __future__ import annotations

import pytest

from placement_cli.frontends.lower.matrices import UNPRICEABLE, matrix
from placement_cli.frontends.lower.profile import load_profile
from placement_cli.frontends.lower.split import runs
from tests.lower_helpers import E, I, P, body_doc, lower, one_block, supports

C1 = {"const": 1}


def assign(lhs, **rv):
    return {"assign": lhs, **rv}


# -- §2.1 Postgres rules --------------------------------------------------------------


def test_postgres_load_and_unary_follow_their_operand():
    doc = one_block(
        [
            assign("a", load="env.0"),
            assign("b", unary={"op": "-", "operand": "a"}),
            assign("c", apply={"func": "env.1", "args": []}),
            assign("d", unary={"op": "-", "operand": "c"}),
        ],
        {"a": "int", "b": "int", "c": "int", "d": "int"},
        env={"tuple": ["int", "closure"]},
        term={"kind": "return", "operand": "b"},
    )
    s = supports(doc)
    assert P in s[0] and P in s[1]
    assert P not in s[2] and P not in s[3]  # apply never; its result poisons the unary


def test_postgres_binary_needs_both_operands():
    doc = one_block(
        [
            assign("a", load="env.0"),
            assign("c", apply={"func": "env.1", "args": []}),
            assign("x", binary={"op": "+", "left": "a", "right": C1}),
            assign("y", binary={"op": "+", "left": "a", "right": "c"}),
        ],
        {"a": "int", "c": "int", "x": "int", "y": "int"},
        env={"tuple": ["int", "closure"]},
    )
    s = supports(doc)
    assert P in s[2] and P not in s[3]


OPTION_X = {
    "union": [
        {"opaque": {"name": "::core::option::Some", "of": {"struct": {"k": {"list": "int"}}}}},
        {"opaque": {"name": "::core::option::None", "of": "unit"}},
    ]
}
EQ_CASES = [
    ({"struct": {"k": "int"}}, {"dict": ["string", "int"]}, False),  # dict vs struct
    ({"list": "int"}, {"tuple": ["int"]}, False),  # list vs tuple
    ({"opaque": "A"}, "int", False),  # opaque vs non-opaque
    ({"opaque": "A"}, {"opaque": "B"}, False),  # different opaque names
    ({"opaque": "A"}, {"opaque": "A"}, True),
    ("unknown", "int", False),  # unknown types
    (
        {"union": ["int", {"dict": ["string", "int"]}]},
        {"struct": {"k": "int"}},
        False,
    ),  # union variant-wise
    ({"union": ["int", "string"]}, "int", True),
    ({"struct": {"k": {"list": "int"}}}, {"struct": {"k": {"tuple": ["int"]}}}, False),  # nested
    ("int", "string", True),
    # the compiler's shortcuts: identical types are safe at once
    ("unknown", "unknown", True),  # `? == ?`
    (OPTION_X, OPTION_X, True),  # Option<X> == Option<X>: a union of opaques, on both sides
    # tuples of different lengths and structs with different field names never compare equal
    ({"tuple": [{"list": "int"}]}, {"tuple": [{"tuple": ["int"]}, "int"]}, True),
    (
        {"struct": {"a": {"list": "int"}, "b": "int"}},
        {"struct": {"a": {"tuple": ["int"]}, "c": "int"}},
        True,
    ),
    (
        {"struct": {"a": {"list": "int"}}},
        {"struct": {"a": {"tuple": ["int"]}}},
        False,
    ),  # same names
    # opaque types compare their inner types, not only their names
    (
        {"opaque": {"name": "A", "of": {"list": "int"}}},
        {"opaque": {"name": "A", "of": {"tuple": ["int"]}}},
        False,
    ),
    ({"opaque": {"name": "A", "of": "string"}}, {"opaque": {"name": "A", "of": "string"}}, True),
]


@pytest.mark.parametrize("ta,tb,safe", EQ_CASES)
@pytest.mark.parametrize("op", ["==", "!="])
def test_postgres_equality_safety(ta, tb, safe, op):
    # the operands straight from the environment: serialization safety of a loaded local
    # (a union of opaques is not serialization-safe) does not get in the way
    doc = one_block(
        [assign("r", binary={"op": op, "left": "env.0", "right": "env.1"})],
        {"r": "bool"},
        env={"tuple": [ta, tb]},
        term={"kind": "return", "operand": "r"},
    )
    s = supports(doc)
    assert (P in s[0]) is safe
    assert I in s[0]


def test_equality_safety_only_for_eq_and_ne():
    doc = one_block(
        [
            assign("a", load="env.0"),
            assign("b", load="env.1"),
            assign("r", binary={"op": "<", "left": "a", "right": "b"}),
        ],
        {"a": {"list": "int"}, "b": {"tuple": ["int"]}, "r": "bool"},
        env={"tuple": [{"list": "int"}, {"tuple": ["int"]}]},
    )
    assert P in supports(doc)[2]


def test_equality_safety_recursive_types_terminate():
    types = {
        "L": {"union": ["unit", {"tuple": ["int", "L"]}]},
        "Bad": {"union": ["unit", {"tuple": [{"list": "int"}, "Bad2"]}]},
        "Bad2": {"union": ["unit", {"tuple": [{"tuple": ["int"]}, "Bad"]}]},
    }
    ok = one_block(
        [assign("a", load="env.0"), assign("r", binary={"op": "==", "left": "a", "right": "a"})],
        {"a": "L", "r": "bool"},
        env={"tuple": ["L"]},
        types=types,
    )
    bad = one_block(
        [
            assign("a", load="env.0"),
            assign("b", load="env.1"),
            assign("r", binary={"op": "==", "left": "a", "right": "b"}),
        ],
        {"a": "Bad", "b": "Bad2", "r": "bool"},
        env={"tuple": ["Bad", "Bad2"]},
        types=types,
    )
    assert P in supports(ok)[1]
    assert P not in supports(bad)[2]


def test_equality_with_a_constant_is_always_safe():
    doc = one_block(
        [assign("a", load="env.0"), assign("r", binary={"op": "==", "left": "a", "right": C1})],
        {"a": "unknown", "r": "bool"},
        env={"tuple": ["unknown"]},
    )
    assert P in supports(doc)[1]


# a callee taking no argument
G = {
    "name": "g",
    "args": [],
    "locals": {"r": "int"},
    "blocks": [
        {
            "id": "bb0",
            "statements": [{"assign": "r", "load": {"const": 1}}],
            "terminator": {"kind": "return", "operand": "r"},
        }
    ],
}


def test_postgres_aggregates_except_closures_input_always_apply_never():
    doc = one_block(
        [
            assign("a", aggregate={"kind": "tuple", "operands": [C1, C1]}),
            assign("b", aggregate={"kind": "closure", "operands": [C1]}),
            assign("c", input="limit"),
            assign("d", apply={"func": {"fn": "g"}, "args": []}),
        ],
        {"a": {"tuple": ["int", "int"]}, "b": "closure", "c": "int", "d": "int"},
    )
    doc["bodies"].append(G)
    s = supports(doc)
    assert P in s[0] and P not in s[1] and P in s[2] and P not in s[3]
    assert all(I in x for x in s)


def test_postgres_constants_primitive_yes_function_pointer_no():
    doc = one_block(
        [assign("a", load=C1), assign("b", load={"fn": "g"}), assign("c", load={"const": None})],
        {"a": "int", "b": "closure", "c": "unit"},
    )
    s = supports(doc)
    assert P in s[0] and P not in s[1] and P in s[2]


def test_env_is_checked_per_field():
    env = {
        "tuple": [
            "int",
            "closure",
            {"dict": ["string", "int"]},
            {"dict": ["int", "int"]},
            {"list": "closure"},
        ]
    }
    doc = one_block(
        [assign(f"x{i}", load=f"env.{i}") for i in range(5)] + [assign("w", load="env")],
        {
            "x0": "int",
            "x1": "closure",
            "x2": {"dict": ["string", "int"]},
            "x3": {"dict": ["int", "int"]},
            "x4": {"list": "closure"},
            "w": env,
        },
        env=env,
    )
    s = supports(doc)
    assert [P in x for x in s[:6]] == [
        True,
        False,
        True,
        False,
        False,
        False,
    ]  # the whole env: never


def test_env_field_is_judged_by_field_n_not_by_the_projected_type():
    """`env.N.x` reads field N: it is representable only when the whole field N is (no
    closure, no dict with a non-string key); a key that is an opaque over a string counts
    as a string key (the compiler strips opaques from dict keys)."""
    env = {
        "tuple": [
            {"struct": {"n": "int", "f": "closure"}},
            {"tuple": ["int", {"dict": ["int", "int"]}]},
            {"tuple": ["int", {"dict": [{"opaque": {"name": "K", "of": "string"}}, "int"]}]},
            {"dict": [{"opaque": {"name": "K", "of": "string"}}, "int"]},
            {"dict": [{"opaque": "K2"}, "int"]},  # representation unknown: not a string key
        ]
    }
    doc = one_block(
        [
            assign("a", load="env.0.n"),
            assign("b", load="env.1.0"),
            assign("c", load="env.2.0"),
            assign("d", load="env.3"),
            assign("e", load="env.4"),
        ],
        {
            "a": "int",
            "b": "int",
            "c": "int",
            "d": {"dict": [{"opaque": {"name": "K", "of": "string"}}, "int"]},
            "e": {"dict": [{"opaque": "K2"}, "int"]},
        },
        env=env,
    )
    s = supports(doc)
    assert [P in x for x in s[:5]] == [False, False, True, True, False]


def test_vertex_paths_by_origin():
    doc = one_block(
        [
            assign("a", load="vertex.properties.name"),
            assign("b", load="vertex.encodings.vectors"),
            assign("c", load="vertex.metadata.archived"),
            assign("d", load="vertex"),
            assign("e", load="vertex.metadata"),  # a composite without storage of its own
        ],
        {
            "a": "string",
            "b": {"list": "float"},
            "c": "bool",
            "d": {"opaque": "Entity"},
            "e": "unknown",
        },
    )
    s = supports(doc)
    assert [P in x for x in s[:5]] == [True, False, True, False, False]
    assert [E in x for x in s[:5]] == [False, True, False, False, False]
    assert all(I in x for x in s[:5])


def test_embedding_only_loads_of_supported_operands_and_no_constants():
    doc = one_block(
        [
            assign("v", load="vertex.encodings.vectors"),
            assign("w", load="v"),
            assign("n", unary={"op": "-", "operand": "v"}),
            assign("k", load=C1),
            assign("t", aggregate={"kind": "tuple", "operands": ["v"]}),
        ],
        {
            "v": {"list": "float"},
            "w": {"list": "float"},
            "n": {"list": "float"},
            "k": "int",
            "t": {"tuple": [{"list": "float"}]},
        },
        term={"kind": "return", "operand": "w"},
    )
    s = supports(doc)
    assert [E in x for x in s] == [True, True, False, False, False, True]


def test_postgres_serialization_safety_of_defined_values():
    for ty in (
        {"union": ["int", {"opaque": "X"}]},
        {"union": [{"struct": {"a": "int"}}, {"dict": ["string", "int"]}]},
        {"union": [{"tuple": ["int"]}, {"list": "int"}]},
    ):
        doc = one_block([assign("a", load="env.0")], {"a": ty}, env={"tuple": [ty]})
        assert P not in supports(doc)[0], ty
    doc = one_block(
        [assign("a", load="env.0")],
        {"a": {"union": ["int", "string"]}},
        env={"tuple": [{"union": ["int", "string"]}]},
    )
    assert P in supports(doc)[0]


def test_graph_read_parameters_are_never_supported():
    blocks = [
        {"id": "bb0", "terminator": {"kind": "graph_read", "successors": [{"block": "bb1"}]}},
        {
            "id": "bb1",
            "params": ["r"],
            "statements": [assign("x", unary={"op": "!", "operand": "r"})],
            "terminator": {"kind": "return", "operand": "x"},
        },
    ]
    _, sec, _ = lower(body_doc(blocks, {"r": "bool", "x": "bool"}))
    assert sec["statements"]["bb1"] == [[I]]
    assert sec["terminators"]["bb0"] == [I]  # graph_read: only the effect-running target
    assert "r" in sec["ineligible"][P]


def test_block_params_join_is_intersection():
    blocks = [
        {
            "id": "bb0",
            "statements": [
                assign("a", load="env.0"),
                assign("c", apply={"func": "env.1", "args": []}),
            ],
            "terminator": {
                "kind": "switch",
                "operand": "a",
                "successors": [{"block": "bb1", "args": ["a"]}, {"block": "bb1", "args": ["c"]}],
            },
        },
        {
            "id": "bb1",
            "params": ["p"],
            "statements": [assign("y", unary={"op": "-", "operand": "p"})],
            "terminator": {"kind": "return", "operand": "y"},
        },
    ]
    _, sec, _ = lower(
        body_doc(
            blocks,
            {"a": "int", "c": "int", "p": "int", "y": "int"},
            env={"tuple": ["int", "closure"]},
        )
    )
    assert P not in sec["statements"]["bb1"][0]
    # with both arguments supported the param is supported
    blocks[0]["terminator"]["successors"][1]["args"] = ["a"]
    _, sec, _ = lower(
        body_doc(
            blocks,
            {"a": "int", "c": "int", "p": "int", "y": "int"},
            env={"tuple": ["int", "closure"]},
        )
    )
    assert P in sec["statements"]["bb1"][0]


def test_no_return_block_means_nothing_is_dispatchable():
    stmts = [assign("a", load=C1), assign("b", unary={"op": "-", "operand": "a"})]
    with_ret = supports(one_block(stmts, {"a": "int", "b": "int"}))
    without = supports(one_block(stmts, {"a": "int", "b": "int"}, term={"kind": "unreachable"}))
    assert P in with_ret[1] and P not in without[1]
    assert P in without[0]  # a constant needs no dispatchable local
    assert I in without[1]  # the interpreter needs no analysis


def test_interpreter_runs_everything_at_cost_8_and_postgres_embedding_4():
    plan, _, _ = lower(
        one_block(
            [assign("a", load="vertex.encodings.vectors"), {"storage_dead": "a"}],
            {"a": {"list": "float"}},
            term={"kind": "return", "operand": "a"},
        ),
        split="intersection",
    )
    st = plan["blocks"][0]["statements"]
    assert st[0]["cost"] == {I: 8, E: 4}
    assert st[1]["cost"] == {I: 0, P: 0, E: 0}
    assert plan["blocks"][0]["terminator"]["cost"] == {I: 8, E: 4}


# -- §2.3 splitting -----------------------------------------------------------------------


def test_split_starts_a_region_on_any_support_change():
    assert runs([3, 3, 7, 3], 3) == [(0, 2, False, 3), (2, 3, False, 7), (3, 4, True, 3)]


def test_terminator_region_when_not_a_superset_including_incomparable():
    assert runs([3], 1)[-1] == (1, 1, True, 1)  # subset
    assert runs([3], 5)[-1] == (1, 1, True, 5)  # incomparable
    assert runs([3], 7) == [(0, 1, True, 3)]  # superset: the last run keeps it


def test_split_body_rewrites_references_and_inserts_argument_free_gotos():
    blocks = [
        {
            "id": "bb0",
            "statements": [
                assign("a", load="env.0"),
                assign("c", apply={"func": "env.1", "args": ["a"]}),
            ],
            "terminator": {"kind": "goto", "successors": [{"block": "bb1", "args": ["c"]}]},
        },
        {
            "id": "bb1",
            "params": ["p"],
            "statements": [assign("q", load="p")],
            "terminator": {"kind": "return", "operand": "q"},
        },
    ]
    plan, _, _ = lower(
        body_doc(
            blocks,
            {"a": "int", "c": "int", "p": "int", "q": "int"},
            env={"tuple": ["int", "closure"]},
        )
    )
    ids = [b["id"] for b in plan["blocks"]]
    assert ids == ["bb0", "bb0.1", "bb1"]
    g0 = plan["blocks"][0]["terminator"]
    assert (
        g0["kind"] == "goto"
        and g0["successors"][0]["block"] == "bb0.1"
        and g0["successors"][0]["args"] == []
    )
    assert "cost" not in g0  # a synthesized goto costs 0 everywhere
    assert plan["blocks"][1]["terminator"]["successors"][0] == {
        **plan["blocks"][1]["terminator"]["successors"][0],
        "block": "bb1",
        "args": ["c"],
    }
    assert plan["provenance"]["bb0.1"] == {"block": "bb0", "statements": [1, 2], "terminator": True}


# -- §2.4 matrices ---------------------------------------------------------------------------

PROF = load_profile("hashql")
ALL = 0b111


def cells(m):
    return {(s, d): c for s in range(3) for d in range(3) if (c := m[s * 3 + d]) is not None}


def test_matrix_a_same_target_free():
    m = cells(
        matrix(PROF, "return", 0b101, 0b101, 5.0, False)
    )  # no successor-kind step: only a and b
    assert m[(0, 0)] == 0 and m[(2, 2)] == 0


def test_matrix_b_fallback_reachable_from_everywhere():
    m = cells(matrix(PROF, "unreachable", 0b110, 0b001, 5.0, False))
    assert m == {(1, 0): 5 + 8, (2, 0): 5 + 4}


def test_matrix_c_goto_and_switch_all_pairs():
    for kind in ("goto", "switch"):
        m = cells(matrix(PROF, kind, 0b101, 0b101, 3.0, False))
        assert m == {(0, 0): 0, (0, 2): 3 + 4, (2, 0): 3 + 4, (2, 2): 0}


def test_matrix_c_graph_read_only_fallback_to_fallback():
    assert cells(matrix(PROF, "graph_read", ALL, ALL, 3.0, False)) == {(0, 0): 0}
    assert cells(matrix(PROF, "graph_read", 0b110, ALL, 3.0, False)) == {}


def test_matrix_d_nothing_enters_postgres():
    m = cells(matrix(PROF, "goto", ALL, ALL, 1.0, False))
    assert (0, 1) not in m and (2, 1) not in m and m[(1, 1)] == 0


def test_matrix_d_postgres_removed_in_loops():
    m = cells(matrix(PROF, "goto", ALL, ALL, 1.0, True))
    assert all(1 not in k for k in m)
    assert m[(0, 0)] == 0 and m[(2, 2)] == 0


def test_matrix_e_switch_overheads():
    m = cells(matrix(PROF, "goto", ALL, ALL, 2.0, False))
    assert m == {(0, 0): 0, (0, 2): 6, (1, 0): 10, (1, 1): 0, (1, 2): 14, (2, 0): 6, (2, 2): 0}


def test_self_loop_is_in_a_loop_and_bans_postgres():
    blocks = [
        {
            "id": "bb0",
            "statements": [assign("a", load=C1)],
            "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]},
        },
        {
            "id": "bb1",
            "statements": [assign("b", load=C1)],
            "terminator": {
                "kind": "switch",
                "operand": "b",
                "successors": [{"block": "bb1"}, {"block": "bb2"}],
            },
        },
        {"id": "bb2", "terminator": {"kind": "return"}},
    ]
    plan, sec, _ = lower(body_doc(blocks, {"a": "int", "b": "int"}))
    loops = {(e["from"], e["to"]): e["in_loop"] for e in sec["edges"]}
    assert loops == {("bb0", "bb1"): False, ("bb1", "bb1"): True, ("bb1", "bb2"): False}
    self_edge = plan["blocks"][1]["terminator"]["successors"][0]["transitions"]
    assert P not in self_edge and all(P not in row for row in self_edge.values())
    out_edge = plan["blocks"][1]["terminator"]["successors"][1]["transitions"]
    assert out_edge[P][P] == 0


def test_edge_inside_a_cycle_is_in_a_loop():
    blocks = [
        {"id": "bb0", "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]}},
        {"id": "bb1", "terminator": {"kind": "goto", "successors": [{"block": "bb2"}]}},
        {
            "id": "bb2",
            "statements": [assign("b", load=C1)],
            "terminator": {
                "kind": "switch",
                "operand": "b",
                "successors": [{"block": "bb1"}, {"block": "bb3"}],
            },
        },
        {"id": "bb3", "terminator": {"kind": "return"}},
    ]
    _, sec, _ = lower(body_doc(blocks, {"b": "int"}))
    loops = [e["in_loop"] for e in sec["edges"]]
    # the reference decides by the *source* block's SCC: the exit edge bb2 -> bb3 counts too
    assert loops == [False, True, True, True]


# -- transfer sizes, unbounded sizes, premium ------------------------------------------------


def test_transfer_is_live_in_plus_params_times_unit_cost():
    blocks = [
        {
            "id": "bb0",
            "statements": [
                assign("a", aggregate={"kind": "tuple", "operands": [C1, C1, C1]}),
                assign("b", load=C1),
            ],
            "terminator": {"kind": "goto", "successors": [{"block": "bb1", "args": ["b"]}]},
        },
        {
            "id": "bb1",
            "params": ["p"],
            "statements": [assign("c", aggregate={"kind": "tuple", "operands": ["a", "p"]})],
            "terminator": {"kind": "return", "operand": "c"},
        },
    ]
    doc = body_doc(
        blocks,
        {
            "a": {"tuple": ["int", "int", "int"]},
            "b": "int",
            "p": "int",
            "c": {"tuple": ["unknown", "int"]},
        },
    )
    plan, sec, _ = lower(doc)
    e = sec["edges"][0]
    assert e["live"] == ["a", "p"] and e["transfer"] == 4
    assert plan["blocks"][0]["terminator"]["successors"][0]["transitions"][P][I] == 4 + 8


def test_unbounded_size_is_unpriceable_without_a_cap_and_capped_with_one():
    blocks = [
        {
            "id": "bb0",
            "statements": [assign("a", load="env.0")],
            "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]},
        },
        {
            "id": "bb1",
            "statements": [assign("b", unary={"op": "-", "operand": "a"})],
            "terminator": {"kind": "return", "operand": "b"},
        },
    ]
    doc = body_doc(blocks, {"a": {"list": "int"}, "b": "int"}, env={"tuple": [{"list": "int"}]})
    plan, sec, diags = lower(doc)
    assert sec["edges"][0]["transfer"] is None
    assert plan["blocks"][0]["terminator"]["successors"][0]["transitions"][P][I] == UNPRICEABLE
    assert [d["code"] for d in diags] == ["unpriceable-transfer"]
    plan, sec, diags = lower(doc, size_cap=10)
    assert sec["edges"][0]["transfer"] == 5 and diags == []


def test_path_premium_composite_swallows_children_and_unresolved_reads_all():
    doc = one_block(
        [
            assign("a", load="vertex.metadata.record_id"),
            assign("b", load="vertex.metadata.record_id.entity_id"),
            assign("c", load="vertex.encodings.vectors"),
        ],
        {"a": "unknown", "b": "unknown", "c": "unknown"},
    )
    plan, _, _ = lower(doc, split="intersection")
    b = plan["blocks"][0]
    assert b["paths"] == ["vertex.metadata.record_id", "vertex.encodings.vectors"]
    assert b["premium"] == {I: 4 + 3072}
    doc = one_block([assign("a", load="vertex")], {"a": "unknown"})
    plan, _, diags = lower(doc)
    prof = load_profile("hashql")
    names = [n for n, o in zip(prof.path_names, prof.path_origin, strict=True) if o]  # stored
    tops = [f"vertex.{n}" for n in names if not any(n.startswith(q + ".") for q in names)]
    assert plan["blocks"][0]["paths"] == tops
    assert [d["code"] for d in diags] == ["unpriceable-premium"]


def test_call_size_is_the_callee_return_size_at_the_arguments():
    doc = {
        "version": 1,
        "bodies": [
            {
                "name": "f",
                "env": "env",
                "vertex": "vertex",
                "locals": {
                    "env": {"tuple": []},
                    "vertex": {"opaque": "Entity"},
                    "a": {"tuple": ["int", "int"]},
                    "r": "unknown",
                    "z": "int",
                },
                "blocks": [
                    {
                        "id": "bb0",
                        "statements": [
                            assign("a", aggregate={"kind": "tuple", "operands": [C1, C1]}),
                            assign("r", apply={"func": {"fn": "g"}, "args": ["a"]}),
                        ],
                        "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]},
                    },
                    {
                        "id": "bb1",
                        "statements": [assign("z", aggregate={"kind": "tuple", "operands": ["r"]})],
                        "terminator": {"kind": "return", "operand": "z"},
                    },
                ],
            },
            {
                "name": "g",
                "args": ["x"],
                "locals": {"x": "unknown", "y": "unknown"},
                "blocks": [
                    {
                        "id": "bb0",
                        "statements": [
                            assign("y", aggregate={"kind": "tuple", "operands": ["x", "x", C1]})
                        ],
                        "terminator": {"kind": "return", "operand": "y"},
                    }
                ],
            },
        ],
    }
    _, sec, _ = lower(doc)
    assert sec["sizes"]["r"]["units"] == [5, 5]  # 2 * |x| + 1 at |x| = 2


def test_premium_caps_each_unbounded_path_on_its_own():
    """Reading one more unbounded path never lowers the premium: each unbounded size
    counts as `size_cap` by itself (the cap is not applied to the summed range)."""

    def prem(paths):
        doc = one_block(
            [assign(f"x{i}", load=p) for i, p in enumerate(paths)],
            {f"x{i}": "unknown" for i in range(len(paths))},
            size_cap=64,
        )
        plan, _, _ = lower(doc, split="intersection")
        return plan["blocks"][0]["premium"][I]

    one = prem(["vertex.properties"])  # [0, inf) -> [0, 64]
    two = prem(["vertex.properties", "vertex.metadata.entity_type_ids"])  # + [1, inf) -> [1, 128]
    assert one == 32
    assert two == 64.5 and two > one


def test_a_path_passed_only_to_a_successor_counts_for_the_block():
    """The terminator's operands (goto/switch arguments, the discriminant) are uses of the
    block: their paths go into its paths and premium."""
    blocks = [
        {
            "id": "bb0",
            "terminator": {
                "kind": "goto",
                "successors": [{"block": "bb1", "args": ["vertex.metadata.archived"]}],
            },
        },
        {"id": "bb1", "params": ["p"], "terminator": {"kind": "return", "operand": "p"}},
    ]
    plan, _, _ = lower(body_doc(blocks, {"p": "bool"}), split="intersection")
    b0 = plan["blocks"][0]
    assert b0["paths"] == ["vertex.metadata.archived"]
    assert b0["premium"] == {I: 1}  # postgres reads it natively; embedding cannot run the goto
    assert "vertex.metadata.archived" in plan["paths"]


# -- the hashql profile's vertex paths are the compiler's entity paths ---------------------

WEB_ID = {"opaque": "::graph::types::principal::actor_group::web::WebId"}
ENTITY_UUID = {"opaque": "::graph::types::knowledge::entity::EntityUuid"}
EDITION_ID = {"opaque": "::graph::types::knowledge::entity::EntityEditionId"}
DRAFT_ID = {"opaque": "::graph::types::knowledge::entity::DraftId"}
TYPE_IDS = {"list": {"opaque": "::graph::types::ontology::VersionedUrl"}}
OPTION_DRAFT_ID = {
    "union": [
        {"opaque": {"name": "::core::option::Some", "of": DRAFT_ID}},
        {"opaque": "::core::option::None"},
    ]
}
ID = "vertex.metadata.record_id.entity_id."


def test_identifier_paths_are_the_compilers_nominal_types():
    """An id compared with a value of its own nominal type is equality-safe (postgres) and
    its size is known (1 unit: the transfer is priceable without a cap)."""
    cases = [
        (ID + "web_id", WEB_ID),
        (ID + "entity_uuid", ENTITY_UUID),
        (ID + "draft_id", OPTION_DRAFT_ID),
        ("vertex.metadata.record_id.edition_id", EDITION_ID),
        ("vertex.metadata.entity_type_ids", TYPE_IDS),
    ]
    for path, ty in cases:
        doc = one_block(
            [
                assign("r", binary={"op": "==", "left": path, "right": "env.0"}),
                assign("s", binary={"op": "!=", "left": path, "right": "env.0"}),
            ],
            {"r": "bool", "s": "bool"},
            env={"tuple": [ty]},
            term={"kind": "return", "operand": "r"},
        )
        s = supports(doc)
        assert P in s[0] and P in s[1], path
        # a string is not an opaque id (opaque vs non-opaque); unknown is never safe
        for other in ("unknown",) if "list" in ty else ("string", "unknown"):
            doc["bodies"][0]["locals"]["env"] = {"tuple": [other]}
            assert P not in supports(doc)[0], (path, other)
    # an id loaded into a local of its type and carried over an edge is 1 unit
    blocks = [
        {
            "id": "bb0",
            "statements": [assign("w", load=ID + "web_id")],
            "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]},
        },
        {
            "id": "bb1",
            "statements": [assign("r", binary={"op": "==", "left": "w", "right": "env.0"})],
            "terminator": {"kind": "return", "operand": "r"},
        },
    ]
    plan, sec, diags = lower(body_doc(blocks, {"w": WEB_ID, "r": "bool"}, env={"tuple": [WEB_ID]}))
    assert sec["edges"][0]["transfer"] == 1 and diags == []
    assert P in sec["statements"]["bb1"][0]


def test_property_metadata_link_data_and_jsonb_sub_paths_follow_the_compiler():
    def block(load):
        doc = one_block([assign("a", load=load)], {"a": "unknown"}, size_cap=64)
        plan, sec, _ = lower(doc, split="intersection")
        return plan["blocks"][0], set(sec["statements"]["bb0"][0])

    # property metadata is `metadata.properties` (JSONB: any sub-path), not every path
    b, s = block("vertex.metadata.properties.age")
    assert b["paths"] == ["vertex.metadata.properties"] and P in s
    assert b["premium"][I] == 32  # [0, unbounded) at cap 64
    # link data: one path per stored field, each at its own size
    b, s = block("vertex.link_data.left_entity_id.web_id")
    assert b["paths"] == ["vertex.link_data.left_entity_id.web_id"] and P in s
    assert b["premium"] == {I: 1}
    b, s = block("vertex.link_data.right_entity_confidence")
    assert b["paths"] == ["vertex.link_data.right_entity_confidence"] and P in s
    b, s = block("vertex.link_data.left_entity_provenance.sources")  # JSONB sub-path
    assert b["paths"] == ["vertex.link_data.left_entity_provenance"] and P in s
    assert b["premium"] == {I: 5}  # [0, 10]
    # a synthesized field (always none) has no storage: no target reads it natively,
    # and there is nothing to fetch
    b, s = block("vertex.link_data.left_entity_id.draft_id")
    assert P not in s and E not in s and "paths" not in b and b.get("premium", {}).get(I, 0) == 0
    # only JSONB paths take sub-paths: below another path the access is unresolvable
    b, s = block("vertex.encodings.vectors.0")
    assert E not in s and P not in s
    assert len(b["paths"]) > 1  # it reads every path
    b, s = block("vertex.encodings.vectors")
    assert E in s and b["paths"] == ["vertex.encodings.vectors"]


# -- bodies that are not SSA (the compiler's MIR assigns a local in several blocks) -------


def test_a_local_assigned_in_two_blocks_follows_the_literal_must_analysis():
    """x = env.0 on one branch (postgres can), x = a closure call on the other (it
    cannot): after the merge x is not dispatchable (intersection), so r = x + 1 is not
    either; each assignment is judged on its own right-hand side (the compiler's cost
    visitor is flow-insensitive). A reassignment later in one block wins."""
    blocks = [
        {
            "id": "bb0",
            "statements": [assign("c", load="env.0")],
            "terminator": {
                "kind": "switch",
                "operand": "c",
                "successors": [{"block": "bb1"}, {"block": "bb2"}],
            },
        },
        {
            "id": "bb1",
            "statements": [assign("x", load="env.0")],
            "terminator": {"kind": "goto", "successors": [{"block": "bb3"}]},
        },
        {
            "id": "bb2",
            "statements": [assign("x", apply={"func": "env.1", "args": []})],
            "terminator": {"kind": "goto", "successors": [{"block": "bb3"}]},
        },
        {
            "id": "bb3",
            "statements": [
                assign("r", binary={"op": "+", "left": "x", "right": C1}),
                assign("y", apply={"func": "env.1", "args": []}),
                assign("y", load="env.0"),
            ],
            "terminator": {"kind": "return", "operand": "y"},
        },
    ]
    doc = body_doc(
        blocks,
        {"c": "int", "x": "int", "r": "int", "y": "int"},
        env={"tuple": ["int", "closure"]},
    )
    _, sec, _ = lower(doc)
    st = {b: [set(x) for x in v] for b, v in sec["statements"].items()}
    assert st["bb1"] == [{I, P}] and st["bb2"] == [{I}]
    assert st["bb3"] == [{I}, {I}, {I, P}]
    assert set(sec["terminators"]["bb3"]) == {I, P}  # y is supported at the return
    assert set(sec["ineligible"][P]) >= {"x", "r"} and "y" not in sec["ineligible"][P]
