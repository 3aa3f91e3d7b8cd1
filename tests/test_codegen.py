"""The generated fast checks are the models' (`placement_cli.formats.codegen`): the
committed module is what the generator writes from the models today, and the parts
check every field of every model exactly once."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from placement_cli.formats import codegen
from placement_cli.formats.plan import Block, Edge, Plan, Statement


def test_generated_modules_are_current():
    for path, text in (
        (codegen.OUT, codegen.generate()),
        (codegen.VIEW_OUT, codegen.generate_views()),
        (codegen.SECTION_OUT, codegen.generate_sections()),
    ):
        assert path.read_text() == text, f"{path.name} is stale: run `make schemas`"


def test_parts_cover_every_field_once():
    codegen._coverage(codegen.PLAN_PARTS, Plan)
    # A field left out, or checked twice, is refused at generation time.
    head, *rest = codegen.PLAN_PARTS
    dropped = codegen.Part(head.name, head.doc, Plan, head.fields[1:], keys=True)
    with pytest.raises(TypeError, match="checked by no part"):
        codegen._coverage((dropped, *rest), Plan)
    twice = codegen.Part("again", "", Block, ("paths",))
    with pytest.raises(TypeError, match="checked twice"):
        codegen._coverage((*codegen.PLAN_PARTS, twice), Plan)
    # A list's items left to no part.
    shell = tuple(
        codegen.Part(p.name, p.doc, Block, ("id", "params:shell"), keys=True)
        if p.name == "check_block_head"
        else p
        for p in codegen.PLAN_PARTS
    )
    with pytest.raises(TypeError, match="no part's"):
        codegen._coverage(shell, Plan)
    no_matrix = tuple(p for p in codegen.PLAN_PARTS if p.name != "check_matrix")
    with pytest.raises(TypeError, match="no part's"):
        codegen._coverage(no_matrix, Plan)
    no_edges = tuple(p for p in codegen.PLAN_PARTS if p.model is not Edge)
    with pytest.raises(TypeError):
        codegen._coverage(no_edges, Plan)
    no_statements = tuple(p for p in codegen.PLAN_PARTS if p.ann != list[Statement])
    with pytest.raises(TypeError):
        codegen._coverage(no_statements, Plan)


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
    with pytest.raises(TypeError):
        codegen.to_t(Literal[1, "a"]).kind and codegen.Emitter().check(
            codegen.to_t(Literal[1, "a"]), "v", "x", ""
        )


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
    assert "nonneg_int" in cols.defs[Plain] and "opt(num)" in cols.defs[Plain]
