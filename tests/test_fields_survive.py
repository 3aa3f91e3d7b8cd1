"""Every field of a format reaches what it belongs to: a plan with every optional field
of every plan model set is run through every stage (a real process), and each field
appears in every artifact's plan (`lower`: the artifacts' own `lower`); a tree file with
every optional field set comes back whole in its artifact (`--include-input`); every
field of the plan, body and tree models is in its JSON Schema (`schemas/`). The field lists are
read from the models, so a field added to a model and dropped on the way (a writer that
lists keys by hand) fails here, as does a field the rich plan below does not set."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

import orjson
from pydantic import BaseModel

from placement_cli.formats import body, plan, tree
from placement_cli.pipeline.registry import STAGES

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"

# Written by `placement lower` and read by no stage: carried as the artifacts' `lower`.
CARRIED_AS_SECTION = {(plan.Plan, "lower")}


def _models_in(ann: Any) -> list[type[BaseModel]]:
    """The models an annotation holds (directly, in a list or dict, or in a union)."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    if get_origin(ann) is typing.Annotated:
        return _models_in(get_args(ann)[0])
    out: list[type[BaseModel]] = []
    if get_origin(ann) in (list, dict, typing.Union, types.UnionType):
        for a in get_args(ann):
            out += _models_in(a)
    return out


def _all_fields(root: type[BaseModel]) -> set[tuple[type[BaseModel], str]]:
    seen: set[type[BaseModel]] = set()
    out: set[tuple[type[BaseModel], str]] = set()
    todo = [root]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for name, f in m.model_fields.items():
            out.add((m, name))
            todo += _models_in(f.annotation)
    return out


def _present(model: type[BaseModel], value: Any) -> set[tuple[type[BaseModel], str]]:
    """The (model, field) pairs a document sets (not empty, not null), walking the models."""
    out: set[tuple[type[BaseModel], str]] = set()
    if not isinstance(value, dict):
        return out
    for name, f in model.model_fields.items():
        key = f.alias or name
        v = value.get(key)
        if v in (None, [], {}):
            continue
        out.add((model, name))
        for sub in _models_in(f.annotation):
            for item in _instances(sub, v):
                out |= _present(sub, item)
    return out


def _instances(model: type[BaseModel], v: Any) -> list[Any]:
    """The documents of `model` inside `v`: `v` itself, or the items of a list, or the
    values of a mapping (by name, nested: `linear[src][dst]`, `subtree[engine]`)."""
    keys = {f.alias or n for n, f in model.model_fields.items()}
    if isinstance(v, list):
        return [d for item in v for d in _instances(model, item)]
    if isinstance(v, dict) and v and not (set(v) & keys):
        return [d for item in v.values() for d in _instances(model, item)]
    return [v]


RICH_PLAN: dict[str, Any] = {
    "version": 1,
    "name": "rich",
    "targets": ["a", "b"],
    "entry": "x",
    "transitions": {"a": {"a": 0, "b": 1}, "b": {"a": 1, "b": 0}},
    "matrices": {"slow": {"a": {"a": 0, "b": 3}, "b": {"a": 3, "b": 0}}},
    "paths": {"p": ["a"]},
    "provenance": {"x": {"from": "bb0", "statements": [0, 1]}},
    "lower": {"note": "carried"},
    "blocks": [
        {
            "id": "x",
            "statements": [{"text": "s = 1", "cost": {"a": 1, "b": 2}}],
            "domain": ["a", "b"],
            "paths": ["p"],
            "premium": {"a": 0.5},
            "terminator": {
                "kind": "goto",
                "successors": [{"block": "y", "args": ["v"], "transitions": "slow"}],
                "cost": {"a": 1, "b": 1},
            },
        },
        {
            "id": "y",
            "params": ["v"],
            "cost": {"a": 2, "b": 1},
            "terminator": {
                "kind": "switch",
                "successors": [
                    {"block": "z", "transitions": {"a": {"a": 0, "b": 2}, "b": {"a": 2, "b": 0}}}
                ],
            },
        },
        {"id": "z", "terminator": {"kind": "return"}},
    ],
}


def test_the_rich_plan_sets_every_plan_field():
    missing = _all_fields(plan.Plan) - _present(plan.Plan, RICH_PLAN)
    assert not missing, f"set these in RICH_PLAN: {sorted((m.__name__, f) for m, f in missing)}"
    plan.Plan.model_validate(RICH_PLAN)


def test_every_plan_field_reaches_every_artifact(tmp_path):
    src = tmp_path / "rich.json"
    src.write_bytes(orjson.dumps(RICH_PLAN))
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "placement_cli", "run", str(src), "--out-dir", str(out)],
        check=True,
        capture_output=True,
    )
    want = _all_fields(plan.Plan) - CARRIED_AS_SECTION
    for stage in STAGES:
        art = orjson.loads((out / f"{stage}.json").read_bytes())
        lost = want - _present(plan.Plan, art["plan"])
        assert not lost, (stage, sorted((m.__name__, f) for m, f in lost))
        assert art["lower"] == RICH_PLAN["lower"], stage
        # Carried as they are (the rest is normalised: derived costs, named matrices).
        p = art["plan"]
        assert (p["name"], p["paths"], p["provenance"]) == (
            RICH_PLAN["name"],
            RICH_PLAN["paths"],
            RICH_PLAN["provenance"],
        )
        x, y = p["blocks"][0], p["blocks"][1]
        assert x["statements"][0]["text"] == "s = 1" and y["params"] == ["v"]
        assert x["terminator"]["successors"][0]["args"] == ["v"]


RICH_TREE: dict[str, Any] = {
    "version": 1,
    "name": "rich-tree",
    "engines": ["pg", "duck"],
    "estimated": ["pg"],
    "budget": 1,
    "root": "agg",
    "nodes": [
        {
            "id": "agg",
            "op": "hash_aggregate",
            "children": ["scan"],
            "time": {"pg": 9, "duck": 1},
            "rows": 10,
            "row_width": 8,
            "plan_node": 0,
            "subtree": {"duck": {"median": 3, "min": 2.5, "max": 4, "runs": 3}},
        },
        {
            "id": "scan",
            "op": "seq_scan",
            "time": {"pg": 2},
            "rows": 1000,
            "row_width": 16,
            "no_cut": "it carries t.id (UUID), which crosses to another engine as another type",
            "above": {"duck": {"median": 2, "min": 1.5, "max": 2.5, "runs": 3}},
        },
    ],
    "query": {
        "sql": "SELECT count(*) FROM t",
        "substrait": {"relations": []},
        "native": True,
        "replanned": ["duck"],
        "repeat": 3,
        "warmup": 1,
        "threads": {"duck": 2, "pg": None},
        "forks": 3,
        "caches": "cold",
        "as_written": {"duck": {"median": 3, "min": 2.5, "max": 4, "runs": 3}},
    },
    "transfer": {
        "default": {"fixed": 1, "per_row": 0.5, "per_width": 0.25, "per_byte": 0.125},
        "linear": {"pg": {"duck": {"fixed": 2, "per_row": 0.5, "per_width": 1, "per_byte": 2}}},
        "explicit": [{"child": "scan", "from": "pg", "to": "duck", "cost": 3}],
        "profile": {"name": "profile.json", "sha256": "0" * 64},
    },
}


def test_every_tree_field_reaches_the_tree_artifact(tmp_path):
    missing = _all_fields(tree.TreeFile) - _present(tree.TreeFile, RICH_TREE)
    assert not missing, f"set these in RICH_TREE: {sorted((m.__name__, f) for m, f in missing)}"
    src = tmp_path / "rich.tree.json"
    src.write_bytes(orjson.dumps(RICH_TREE))
    out = subprocess.run(
        [sys.executable, "-m", "placement_cli", "tree", str(src), "--include-input"],
        check=True,
        capture_output=True,
    ).stdout
    echo = orjson.loads(out)["tree"]["input"]
    lost = _all_fields(tree.TreeFile) - _present(tree.TreeFile, echo)
    assert not lost, sorted((m.__name__, f) for m, f in lost)
    assert tree.TreeFile.model_validate(echo) == tree.TreeFile.model_validate(RICH_TREE)


def _schema_models(schema: dict[str, Any], root: type[BaseModel]) -> dict[str, dict[str, Any]]:
    defs = dict(schema.get("$defs", {}))
    defs[root.__name__] = schema
    return defs


def test_every_field_is_in_its_schema():
    for root, name in ((plan.Plan, "plan"), (body.BodyFile, "body"), (tree.TreeFile, "tree")):
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        defs = _schema_models(schema, root)
        for model, field in _all_fields(root):
            f = model.model_fields[field]
            props = defs[model.__name__].get("properties", {})
            assert (f.alias or field) in props, (name, model.__name__, field)
