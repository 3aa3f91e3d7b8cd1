"""The normalised plan written from memoised pieces (`normalize.rendered`, what artifacts
carry, and what `normalize` reads back) gives exactly the bytes of the plan rendered
record by record (`tests/normalize_reference.py`), the reference:
on every example, on plans that use every optional field (with numbers and ids that
need care), on random plans, on generated benchmark plans, and on fused plans (blocks
that are objects rather than dicts)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generate import generate_plan
from placement_cli.formats.artifact import fragment, render
from placement_cli.ir.graph import Graph
from placement_cli.ir.normalize import normalize, plan_fragment, rendered
from placement_cli.pipeline.run import load, parse_plan
from tests.budget import examples
from tests.conftest import EXAMPLES
from tests.normalize_reference import normalize_reference
from tests.strategies import plans


def _reference(g: Graph) -> bytes:
    return render({"plan": normalize_reference(g)})


def _fast(g: Graph) -> bytes:
    return render({"plan": fragment(rendered(g))})


def _same(g: Graph) -> None:
    ref = _reference(g)
    assert _fast(g) == ref
    assert render({"plan": plan_fragment(g)}) == ref  # what `Run.artifact` writes
    assert render({"plan": normalize(g)}) == ref


@pytest.mark.parametrize(
    "path",
    sorted(p for p in EXAMPLES.glob("*.yaml") if p.name != "operator_tree.yaml"),
    ids=lambda p: p.name,
)
def test_every_example(path: Any) -> None:
    _same(load(str(path)).graph)


def _rich_plan() -> dict[str, Any]:
    """Every optional field, numbers that normalise (1.0, 2.5, 1e300, 2**60, True-like),
    ids and texts that JSON escapes, statement lists that repeat with different number
    types and key orders (memoised by their JSON: these must not share an entry)."""
    weird = 'b"\\,\n\u00e9'
    return {
        "version": 1,
        "name": "rich",
        "targets": ["t1", "a", "zz"],
        "transitions": {
            "t1": {"a": 2.0, "t1": 0},
            "a": {"a": 0, "t1": 1.5},
            "zz": {"zz": 0, "a": 3},
        },
        "paths": {"p1": ["t1"], "p0": ["a", "zz"]},
        "entry": "start",
        "blocks": [
            {
                "id": "start",
                "params": ["x", "y"],
                "paths": ["p1", "p0"],
                "premium": {"a": 1.0, "t1": 0.25},
                "statements": [
                    {"cost": {"t1": 1, "a": 2.0}},
                    {"text": "let x = 1", "cost": {"a": 2**60, "t1": 1e300}},
                ],
                "terminator": {
                    "kind": "switch",
                    "cost": {"zz": 3.0, "a": 1},
                    "successors": [
                        {"block": weird, "args": ["x"]},
                        {"block": "end", "transitions": {"a": {"a": 0, "zz": 4}}},
                        {"block": "end", "args": [], "transitions": {"a": {"a": 0, "zz": 4}}},
                    ],
                },
            },
            {
                "id": weird,
                "params": ["p"],
                "paths": [],
                "premium": {},
                "statements": [{"cost": {"a": 2.0, "t1": 1}}, {"cost": {"a": 2, "t1": 1.0}}],
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": "end", "transitions": {"t1": {"t1": 0}}}],
                },
            },
            {
                "id": "end",
                "params": [],
                "statements": [{"cost": {"t1": 1, "a": 2.0}}],
                "domain": ["a", "t1"],
                "terminator": {"kind": "return", "cost": {}},
            },
            {"id": "dead", "statements": [], "terminator": {"kind": "unreachable"}},
            {"id": "dead2", "terminator": {"kind": "goto", "successors": [{"block": "dead2"}]}},
        ],
    }


def test_every_optional_field_and_awkward_numbers_and_ids() -> None:
    g = parse_plan(_rich_plan())
    _same(g)
    assert b'"params"' in _fast(g) and b'"premium"' in _fast(g)


@settings(max_examples=examples(100), deadline=None)
@given(plans(max_blocks=8))
def test_random_plans(plan: dict[str, Any]) -> None:
    _same(parse_plan(plan))


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(1, 200), st.integers(1, 5), st.integers(0, 10**6))
def test_generated_benchmark_plans(n: int, k: int, seed: int) -> None:
    _same(parse_plan(generate_plan(n, k, seed=seed)))


def test_a_fused_plan_made_of_block_objects() -> None:
    from placement_cli.pipeline.run import Run

    run = Run(load(str(EXAMPLES / "three_targets.yaml")))
    fg = run.fused().graph
    assert fg is not None and fg.n_blocks < run.g.n_blocks  # something was fused
    assert any(type(b).__name__ == "FusedBlock" for b in fg.plan.blocks)
    _same(fg)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.text(max_size=8).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
        max_size=6,
    )
)
def test_block_ids_are_written_as_orjson_writes_them(ids: list[str]) -> None:
    import orjson

    from placement_cli.ir.normalize import _json_strings

    assert _json_strings(tuple(ids)) == [orjson.dumps(s) for s in ids]
    assert _json_strings(
        tuple(i for i in ids if '"' not in i and "\\" not in i and i.isprintable())
    ) == [orjson.dumps(s) for s in ids if '"' not in s and "\\" not in s and s.isprintable()]
