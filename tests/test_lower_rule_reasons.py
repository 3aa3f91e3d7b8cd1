"""`lower` records the rule that excludes each statement, terminator and block parameter
from each target (`lower.excluded`, one registered code per rule), and `placement
explain` says it in the program's terms. One small body per rule."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
import yaml

from placement_cli.core.codes import CODES
from placement_cli.core.rule_codes import RULE_WORDS
from placement_cli.formats.lower_rules import LowerRules
from placement_cli.frontends.lower.stage import lower_to_plan
from placement_cli.frontends.mir_text import parse_mir
from tests.conftest import ROOT, run_cli

P, E = "postgres", "embedding"
ENV = {
    "tuple": [
        "string",
        "closure",
        {"list": "int"},
        {"tuple": ["int"]},
        {"union": [{"opaque": "X"}, "int"]},
    ]
}


def body(
    stmts: list[dict[str, Any]],
    locals_: dict[str, Any],
    term: dict[str, Any] | None = None,
    profile: Any = "hashql",
    more: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "version": 1,
        "profile": profile,
        "bodies": [
            {
                "name": "f",
                "env": "env",
                "vertex": "vertex",
                "locals": {"env": ENV, "vertex": {"opaque": "Entity"}, **locals_},
                "blocks": [
                    {
                        "id": "bb0",
                        "statements": stmts,
                        "terminator": term or {"kind": "return", "operand": {"const": True}},
                    }
                ],
            },
            *(more or []),
        ],
    }


G = {
    "name": "g",
    "locals": {"r": "int"},
    "blocks": [
        {
            "id": "bb0",
            "statements": [{"assign": "r", "load": {"const": 1}}],
            "terminator": {"kind": "return", "operand": "r"},
        }
    ],
}


def custom(**rules: Any) -> dict[str, Any]:
    """A two-target profile: an interpreter and `t`, whose rules are given."""
    every = {
        k: 1 for k in ("load", "unary", "binary", "aggregate", "apply", "input", "storage", "nop")
    }
    terms = {k: 1 for k in ("goto", "switch", "return", "unreachable", "graph_read")}
    return {
        "name": "custom",
        "fallback": "i",
        "targets": [
            {
                "name": "i",
                "statements": every,
                "terminators": terms,
                "closures": True,
                "calls": True,
                "effects": True,
            },
            {"name": "t", "statements": every, "terminators": terms, "calls": True, **rules},
        ],
    }


# rule -> (body file, statement index in bb0, target)
CASES: dict[str, tuple[dict[str, Any], int, str]] = {
    "no-calls": (
        body([{"assign": "a", "apply": {"func": {"fn": "g"}, "args": []}}], {"a": "int"}, more=[G]),
        0,
        P,
    ),
    "no-closures": (
        body(
            [{"assign": "a", "aggregate": {"kind": "closure", "operands": [{"fn": "g"}, "env.3"]}}],
            {"a": "closure"},
            profile=custom(),
            more=[G],
        ),
        0,
        "t",
    ),
    "no-constants": (body([{"assign": "a", "load": {"const": 1}}], {"a": "int"}), 0, E),
    "no-function-pointers": (
        body([{"assign": "a", "load": {"fn": "g"}}], {"a": "closure"}, more=[G]),
        0,
        P,
    ),
    "equality-unsafe": (
        body(
            [
                {"assign": "a", "load": "env.2"},
                {"assign": "b", "load": "env.3"},
                {"assign": "c", "binary": {"op": "==", "left": "a", "right": "b"}},
            ],
            {"a": {"list": "int"}, "b": {"tuple": ["int"]}, "c": "bool"},
        ),
        2,
        P,
    ),
    "serialization-unsafe": (
        body([{"assign": "u", "load": "env.4"}], {"u": {"union": [{"opaque": "X"}, "int"]}}),
        0,
        P,
    ),
    "unrepresentable-env-field": (body([{"assign": "k", "load": "env.1"}], {"k": "closure"}), 0, P),
    "no-env-fields": (body([{"assign": "s", "load": "env.0"}], {"s": "string"}), 0, E),
    "whole-argument": (body([{"assign": "w", "load": "env"}], {"w": ENV}), 0, P),
    "unreadable-argument": (
        body([{"assign": "s", "load": "env.0"}], {"s": "string"}, profile=custom(arguments="none")),
        0,
        "t",
    ),
    "unresolvable-path": (
        body([{"assign": "m", "load": "vertex.metadata"}], {"m": "unknown"}),
        0,
        P,
    ),
    "path-not-stored": (
        body([{"assign": "v", "load": "vertex.encodings.vectors"}], {"v": "unknown"}),
        0,
        P,
    ),
    "unsupported-kind": (
        body(
            [
                {"assign": "a", "load": "vertex.encodings.vectors"},
                {"assign": "b", "unary": {"op": "-", "operand": "a"}},
            ],
            {"a": "unknown", "b": "unknown"},
        ),
        1,
        E,
    ),
    "excluded-operand": (
        body(
            [
                {"assign": "a", "apply": {"func": {"fn": "g"}, "args": []}},
                {"assign": "b", "unary": {"op": "-", "operand": "a"}},
            ],
            {"a": "int", "b": "int"},
            more=[G],
        ),
        1,
        P,
    ),
    "no-return": (
        body(
            [{"assign": "s", "load": "env.0"}, {"assign": "t", "load": "s"}],
            {"s": "string", "t": "string"},
            term={"kind": "unreachable"},
        ),
        1,
        P,
    ),
}


def lowered(doc: dict[str, Any]) -> dict[str, Any]:
    plan, sec, _ = lower_to_plan(copy.deepcopy(doc), "t.body.yaml")
    return plan


@pytest.mark.parametrize("rule", sorted(CASES))
def test_lower_records_the_rule(rule: str) -> None:
    doc, j, target = CASES[rule]
    plan = lowered(doc)
    rec = plan["lower"]["excluded"]["bb0"]["statements"][str(j)][target]
    assert rec["code"] == rule
    assert rule in CODES and rule in RULE_WORDS
    LowerRules.model_validate(plan["lower"])


def test_a_propagated_exclusion_names_the_local_and_its_definition() -> None:
    rec = lowered(CASES["excluded-operand"][0])["lower"]["excluded"]["bb0"]["statements"]["1"][P]
    assert rec == {"code": "excluded-operand", "via": "a", "at": ["bb0", 0]}


def test_effectful_and_block_parameters() -> None:
    """A graph read is an effect; the parameter it fills is excluded with the edge."""
    doc = yaml.safe_load((ROOT / "examples" / "loop_read.body.yaml").read_text())
    ex = lowered(doc)["lower"]["excluded"]
    assert ex["bb2"]["terminator"][P] == {"code": "effectful"}
    assert ex["bb3"]["params"]["links"][P] == {"code": "effectful", "edge": "bb2"}


def test_only_excluded_targets_are_recorded() -> None:
    plan = lowered(body([{"assign": "s", "load": "env.0"}], {"s": "string"}))
    assert set(plan["lower"]["excluded"]["bb0"]["statements"]["0"]) == {E}
    assert plan["lower"]["target_rules"] == {P: ["not-enterable", "loop-banned"]}


def test_the_record_matches_the_support_on_every_example() -> None:
    """A recorded exclusion exactly where the support says no, and never the fallback
    (an `excluded-operand` without its local): on the examples and on generated bodies."""
    from benchmarks.bench_lower import generate

    docs = [yaml.safe_load(f.read_text()) for f in sorted((ROOT / "examples").glob("*.body.yaml"))]
    docs += [generate(200, seed) for seed in range(6)]
    for f, doc in enumerate(docs):
        plan = lowered(doc)
        sec = plan["lower"]
        for blk in sec["excluded"].values():
            for rows in (*blk.get("statements", {}).values(), blk.get("terminator", {})):
                for rec in rows.values():
                    assert rec["code"] != "excluded-operand" or "via" in rec, (f, rec)
        LowerRules.model_validate(sec)
        for bid, sup in sec["statements"].items():
            got = sec["excluded"].get(bid, {}).get("statements", {})
            for j, targets in enumerate(sup):
                missing = {t for t in plan["targets"] if t not in targets}
                assert set(got.get(str(j), {})) == missing, (f, bid, j)


MIR = """fn {graph::read::filter@5}(%0: (Integer,), %1: ::graph::types::knowledge::entity::Entity) -> Boolean {
    let %2: Integer
    let %3: Boolean

    bb0(): {
        %2 = %0.0
        %3 = %1.encodings.vectors == %2

        return %3
    }
}
"""


def test_mir_input_is_quoted_in_mir_terms(tmp_path) -> None:
    plan, _, _ = lower_to_plan(parse_mir(MIR, "q.mir"), "q.mir")
    ex = plan["lower"]["excluded"]["bb0"]
    assert ex["text"]["1"] == "%3 = %1.encodings.vectors == %2"
    assert ex["statements"]["1"][P] == {"code": "path-not-stored"}
    assert ex["statements"]["1"][E] == {"code": "unsupported-kind", "kind": "binary"}
    assert ex["terminator"][E] == {"code": "excluded-operand", "via": "%3", "at": ["bb0", 1]}
    f = tmp_path / "q.mir"
    f.write_text(MIR)
    r = run_cli("explain", str(f), "bb0.1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (
        "postgres cannot run `%3 = %1.encodings.vectors == %2`: postgres does not store this vertex path"
        in r.stdout.decode()
    )


def test_explain_says_the_rule_for_a_call_and_follows_it(tmp_path) -> None:
    f = tmp_path / "b.body.yaml"
    f.write_text(yaml.safe_dump(CASES["excluded-operand"][0]))
    r = run_cli("explain", str(f), "bb0", "--format", "json", "--quiet")
    assert r.returncode == 0, r.stderr
    rows = {t["target"]: t for t in orjson.loads(r.stdout)["targets"]}
    msgs = {x.get("rule"): x["message"] for x in rows[P]["reasons"]}
    assert msgs["no-calls"] == "postgres cannot run `a = apply fn g()`: postgres runs no calls"
    assert msgs["excluded-operand"] == (
        "postgres cannot run `b = -a`: it reads `a`, which postgres cannot compute: "
        "`a = apply fn g()` (bb0, statement 0): postgres runs no calls"
    )


def test_explain_names_loop_banned_and_not_enterable(tmp_path) -> None:
    r = run_cli("explain", "examples/loop_read.body.yaml", "bb1", "--format", "json", "--quiet")
    assert r.returncode == 0, r.stderr
    pg = next(t for t in orjson.loads(r.stdout)["targets"] if t["target"] == P)
    assert [x.get("rule") for x in pg["reasons"]] == ["loop-banned"]
    assert "postgres runs no loops" in pg["reasons"][0]["message"]
    doc = body(
        [{"assign": "a", "apply": {"func": {"fn": "g"}, "args": []}}],
        {"a": "int", "s": "string"},
        term={"kind": "goto", "successors": [{"block": "bb1"}]},
        more=[G],
    )
    doc["bodies"][0]["blocks"].append(
        {
            "id": "bb1",
            "statements": [{"assign": "s", "load": "env.0"}],
            "terminator": {"kind": "return", "operand": "s"},
        }
    )
    f = tmp_path / "e.body.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = run_cli("explain", str(f), "bb1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "postgres cannot be entered from another target, and bb0" in r.stdout.decode()
    r = run_cli("explain", str(f), "bb1", "--format", "json", "--quiet")
    pg = next(t for t in orjson.loads(r.stdout)["targets"] if t["target"] == P)
    assert [x.get("rule") for x in pg["reasons"]] == ["not-enterable"]
