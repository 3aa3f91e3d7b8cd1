"""The generated fast checks are the models' (`placement_cli.formats.codegen`): the
committed modules are what the generator writes from the models today, and what they
accept the models accept."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from placement_cli.formats import codegen


def test_generated_modules_are_current():
    for path, text in (
        (codegen.SECTION_OUT, codegen.generate_sections()),
        (codegen.TREE_OUT, codegen.generate_tree()),
    ):
        assert path.read_text() == text, f"{path.name} is stale: run `make schemas`"


def test_what_cannot_be_generated_is_refused():
    class Validated(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
        x: str

        @field_validator("x")
        @classmethod
        def _x(cls, v: str) -> str:
            return v

    class Loose(BaseModel):
        x: str

    class Pattern(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
        x: str = Field(pattern="a+")

    for model in (Validated, Loose):
        with pytest.raises(TypeError):
            codegen._check_model(model)
    with pytest.raises(TypeError):
        codegen.field_t(Pattern, "x")


def test_section_validators_must_be_known():
    """A section model's own validator is generated only when `codegen.VALIDATORS` says
    what it means; extra fields are allowed only when checked writable."""

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow", strict=True)
        x: str

    class Checked(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        x: str

        @field_validator("x")
        @classmethod
        def _x(cls, v: str) -> str:
            return v

    class Plain(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        x: str
        n: int = Field(ge=0)
        c: float | None = None

    for model in (Open, Checked):
        with pytest.raises(TypeError):
            codegen.Columns({}).model(model)
    cols = codegen.Columns({})
    cols.model(Plain)
    assert "nonneg_int" in cols.defs[Plain] and "opt(float_)" in cols.defs[Plain]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)
    from_: str = Field(alias="from")
    kind: Literal["x", "y"]
    level: int = Field(ge=0)
    flag: bool | None = None
    label: str = Field(default="l", min_length=1)
    weight: float = Field(default=1.0, ge=0)
    shift: float | None = None


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    rows: list[_Row]
    names: dict[str, list[str]]
    total: float | None = Field(ge=0, allow_inf_nan=False)
    version: Literal[2]


def test_generated_columns_accept_only_what_the_model_accepts():
    """The section generator's tables on a synthetic model: whatever they accept, the
    model accepts with equal values."""
    import random

    from placement_cli.formats import columns
    from placement_cli.formats.checking import Reject

    cols = codegen.Columns({})
    top = cols.model(_Section)
    scope = vars(columns).copy()
    for m, e in cols.defs.items():
        scope[cols.name(m)] = eval(e, scope)
    check = scope[top]
    r = random.Random(9)
    values = [None, True, 0, 2, -1, 1.5, -2.5, float("inf"), float("nan"), 2**53 + 1, 1e300]
    values += ["", "x", "z", [], ["a"], [1], {}, {"a": ["b"]}]

    def valid() -> dict[str, Any]:
        rows = [{"from": "a", "kind": "x", "level": 1}, {"from": "b", "kind": "y", "level": 0}]
        return {"rows": rows, "names": {"n": ["a"]}, "total": 2.5, "version": 2}

    accepted = refused = 0
    for _ in range(3000):
        doc = valid()
        places = [doc, *doc["rows"]]
        for _ in range(r.randint(0, 2)):
            target = r.choice(places)
            key = r.choice([*target, "flag", "from_", "other", "label", "weight", "shift"])
            if r.random() < 0.2:
                target.pop(key, None)
            else:
                target[key] = r.choice(values)
        try:
            check(doc)
        except Reject:
            refused += 1
            continue
        accepted += 1
        model = _Section.model_validate(doc)
        assert model.model_dump(by_alias=True, exclude_unset=True) == doc, doc
    assert accepted > 100 and refused > 100, (accepted, refused)


def test_tree_explicit_columns_accept_only_what_the_model_accepts():
    """The tree loader's column check of explicit transfers (generated from
    `ExplicitTransfer`): what it accepts the model accepts, with the same values, and
    it hands over each field's column."""
    import random

    from placement_cli.formats.checking import Reject
    from placement_cli.formats.generated.tree_check import EXPLICIT
    from placement_cli.formats.tree import ExplicitTransfer

    r = random.Random(11)
    values = [None, True, 0, 3, -1, 0.5, -0.0, float("nan"), float("inf"), 2**53, 2**53 + 1]
    values += [1e300, "", "a", "pg", [], {}]
    accepted = refused = 0
    for _ in range(3000):
        items = [
            {"child": f"n{i}", "from": "pg", "to": "duck", "cost": r.choice([1, 2.5, 0])}
            for i in range(r.randint(1, 4))
        ]
        for _ in range(r.randint(0, 2)):
            item = r.choice(items)
            key = r.choice(["child", "from", "to", "cost", "from_", "other"])
            if r.random() < 0.2:
                item.pop(key, None)
            else:
                item[key] = r.choice(values)
        try:
            cols = EXPLICIT.columns(items)
        except Reject:
            refused += 1
            continue
        accepted += 1
        models = [ExplicitTransfer.model_validate(x) for x in items]
        assert cols["child"] == [m.child for m in models]
        assert cols["from"] == [m.from_ for m in models] and cols["to"] == [m.to for m in models]
        assert [float(c) for c in cols["cost"]] == [m.cost for m in models]
    assert accepted > 100 and refused > 100, (accepted, refused)
