"""The rule behind every exclusion, as `placement lower` records it in the plan's `lower`
section (`excluded`, `target_rules`): strict models of those two fields.

The `lower` section is informative and carried as it is (no stage reads it; `explain`
quotes it), so the plan and artifact models keep it free-form; this model is its
published shape (`schemas/lower-rules.schema.json`) and tests hold `lower`'s output to
it. Every `code` is a registered diagnostic code (`placement codes CODE`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Exclusion(_Strict):
    """Why one target cannot run one statement, terminator or block parameter."""

    code: str = Field(description="the rule: a registered code (`placement codes CODE`)")
    via: str | None = Field(
        default=None,
        description="`excluded-operand`: the local the exclusion comes through (MIR `%N` "
        "for a body read from MIR text)",
    )
    at: list[str | int] | None = Field(
        default=None,
        description="where `via` is defined: [original block, statement index], or "
        "[original block] for a block parameter",
    )
    edge: str | None = Field(
        default=None,
        description="a block parameter's exclusion: the source block of the incoming edge",
    )
    kind: str | None = Field(
        default=None, description="`unsupported-kind`: the statement's or terminator's kind"
    )


class BlockExclusions(_Strict):
    """One original block's exclusions: only the excluded targets are listed."""

    statements: dict[str, dict[str, Exclusion]] = Field(
        default_factory=dict, description="statement index -> target -> exclusion"
    )
    terminator: dict[str, Exclusion] = Field(
        default_factory=dict, description="target -> exclusion"
    )
    params: dict[str, dict[str, Exclusion]] = Field(
        default_factory=dict, description="block parameter -> target -> exclusion"
    )
    text: dict[str, str] = Field(
        default_factory=dict,
        description="statement index -> the statement in MIR terms (bodies read from MIR text)",
    )


class LowerRules(BaseModel):
    """The two fields of the `lower` section (its other fields are not described here)."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)

    excluded: dict[str, BlockExclusions] = Field(
        description="original block id -> what its statements, terminator and parameters "
        "are excluded from, and by which rule"
    )
    target_rules: dict[str, list[str]] = Field(
        description="target -> its block-level rules (`not-enterable`, `loop-banned`), "
        "which the transition matrices enforce"
    )
