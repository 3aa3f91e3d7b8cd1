"""A body file's fast load path (`placement_cli.formats.body_structs`) agrees with the
strict model (`placement_cli.formats.body`): whatever msgspec accepts, from JSON bytes
or a parsed document, the model accepts with the same values; everything else goes to
the model, so its messages are the only ones; and `lower` writes the same plan either
way. Examples, generated bodies, MIR text, and their mutations (the fuzz campaign's
`tests/fuzz/gen.py`)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
import yaml
from pydantic import ValidationError

from benchmarks.bench_lower import generate
from placement_cli.core.errors import InputError
from placement_cli.formats import body_structs
from placement_cli.formats.body import BodyFile as BodyModel
from placement_cli.frontends.lower import stage
from placement_cli.frontends.mir_text import read_body
from tests.fuzz.gen import BODY_EXAMPLES, EXAMPLES, base_body, mutate, serialise

SEED = 20261128
N_MUTANTS = 300
MIR = Path(__file__).resolve().parent / "data" / "mir"


def _valid_bodies() -> list[Any]:
    docs: list[Any] = []
    for name in BODY_EXAMPLES:
        docs.append(yaml.safe_load((EXAMPLES / f"{name}.body.yaml").read_text()))
    docs += [generate(n, seed) for n, seed in ((40, 1), (300, 2))]
    for path in sorted(MIR.glob("*.mir"))[:6]:
        docs.append(read_body(path.read_bytes(), path.name))
    return docs


def _model(validate: Any, value: Any) -> Any:
    try:
        return validate(value)
    except ValidationError:
        return None


def _same(fast: Any, model: Any) -> bool:
    return bool(msgspec.to_builtins(fast) == msgspec.to_builtins(body_structs.from_model(model)))


def test_valid_bodies_take_the_fast_path_with_the_models_values():
    for doc in _valid_bodies():
        fast = body_structs.convert_body(doc)
        assert fast is not None, str(doc)[:300]
        assert _same(fast, BodyModel.model_validate(doc))
        data = orjson.dumps(doc)
        fast = body_structs.decode_body(data)
        assert fast is not None and _same(fast, BodyModel.model_validate_json(data))


def test_mutated_bodies_agree_with_the_models():
    r = random.Random(SEED)
    accepted = refused = 0
    for i in range(N_MUTANTS):
        doc = mutate(base_body(r), r)
        data, _ = serialise(doc, r, "json")
        fast = body_structs.decode_body(data)
        model = _model(BodyModel.model_validate_json, data)
        if fast is not None:
            accepted += 1
            assert model is not None and _same(fast, model), (i, data[:400])
        else:
            refused += 1
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        fast = body_structs.convert_body(parsed)
        if fast is not None:
            model = _model(BodyModel.model_validate, parsed)
            assert model is not None and _same(fast, model), (i, data[:400])
    assert accepted and refused  # both sides were exercised


@pytest.mark.parametrize(
    "operand",
    [{}, {"const": 1, "fn": "f"}, {"fn": ""}, {"const": float("inf")}, {"const": [1]}],
)
def test_an_operand_is_one_constant_or_one_function(operand):
    doc = {
        "version": 1,
        "bodies": [
            {
                "name": "f",
                "locals": {"a": "int"},
                "blocks": [
                    {
                        "id": "bb0",
                        "statements": [{"assign": "a", "load": operand}],
                        "terminator": {"kind": "return", "operand": "a"},
                    }
                ],
            }
        ],
    }
    assert body_structs.convert_body(doc) is None
    assert _model(BodyModel.model_validate, doc) is None


def _lowered(doc: Any) -> Any:
    try:
        plan, section, diags = stage.lower_to_plan(doc, "b.json")
    except InputError as exc:
        return ("error", str(exc))
    return orjson.dumps([plan, section, diags], option=orjson.OPT_SORT_KEYS)


def test_lower_writes_the_same_plan_on_both_paths(monkeypatch):
    r = random.Random(SEED + 1)
    docs = _valid_bodies()[: len(BODY_EXAMPLES) + 2]
    docs += [mutate(base_body(r), r, 1) for _ in range(40)]
    slow_taken = 0
    for doc in docs:
        if not isinstance(doc, dict) or "bodies" not in doc:
            continue
        inputs = [doc]
        try:
            inputs.append(orjson.dumps(doc))
        except TypeError:
            pass
        for value in inputs:
            fast = _lowered(value)
            with monkeypatch.context() as m:
                m.setattr(stage, "decode_body", lambda _: None)
                m.setattr(stage, "convert_body", lambda _: None)
                slow = _lowered(value)
            slow_taken += 1
            assert fast == slow, str(value)[:300]
    assert slow_taken > 40
