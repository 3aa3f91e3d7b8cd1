"""The hand-written data the generator reads (docs/load.md): what the models' own
validators mean (`VALIDATORS`) and the parts of a plan (`PLAN_PARTS`, `WHOLE`), with how a
part's field specs read (`_split`, `_inner`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from placement_cli.formats.plan import Block, Edge, Plan, Statement, TransMatrix

# What the models' own validators mean for the fast checks: the one hand-written part of
# the formats' definition beside the models (a validator not listed here fails the
# generation). `int64`: an integer within 64 bits, the range every fast check of an
# integer keeps to anyway; `extra`: a model's extra fields (`extra="allow"`) must be
# writable again; `writable`: a free-form value must be writable again (what the
# section checks require of every free-form value, `columns.writable_map`).
VALIDATORS = {
    "_writable_number": "int64",
    "_extras_writable": "extra",
    "_stats_writable": "writable",
    "_lower_writable": "writable",
    "_settings_writable": "writable",
}


# --- the parts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """A generated function. On a model: checks its mapping (`keys`: a dict, no unknown
    field) and the listed fields: `"f"` the whole value, `"f:shell"` only its outer
    type (a list or a dict, with lengths; the contents are another part's),
    `"f{g, h:shell}"` the mapping of model-typed `f` and those of its fields, `"f.g"`
    field `g` of model-typed `f` (whose mapping another part checks). Without a model:
    the whole of type `ann`."""

    name: str
    doc: str
    model: type[BaseModel] | None = None
    fields: tuple[str, ...] = ()
    keys: bool = False
    ann: Any = None


PLAN_PARTS = (
    Part(
        "check_head",
        "Everything of a plan but its blocks' contents (`blocks` a non-empty list).",
        Plan,
        (
            "version",
            "name",
            "targets",
            "entry",
            "transitions",
            "matrices",
            "paths",
            "blocks:shell",
            "provenance",
            "lower",
        ),
        keys=True,
    ),
    Part(
        "check_block_head",
        "A block's mapping, id and parameters (what another block's edge reads of it).",
        Block,
        ("id", "params"),
        keys=True,
    ),
    Part(
        "check_block",
        "The rest of a block but three parts that repeat: its statements' contents\n"
        "(`check_statements`), what else costs (`check_costs`) and its edges\n"
        "(`check_edge`, one by one where they are read).",
        Block,
        ("statements:shell", "paths", "terminator{kind, successors:shell}"),
    ),
    Part(
        "check_edge",
        "One successor edge, but for an explicit matrix's contents (`check_matrix`).",
        Edge,
        ("block", "args", "transitions:shell"),
        keys=True,
    ),
    Part(
        "check_costs",
        "What else of a block costs: its domain, cost, premium and terminator cost.",
        Block,
        ("domain", "cost", "premium", "terminator.cost"),
    ),
    Part("check_statements", "The contents of a block's statement list.", ann=list[Statement]),
    Part("check_matrix", "An edge's explicit transition matrix.", ann=TransMatrix),
)


# Whole models, checked in one function each (not parts: what the parts check, again).
# `check_plan` serves library callers and the artifact check with its plan; the load
# path builds the graph with the parts (`graph.build_graph(doc, check=True)`), and
# `tests/test_plancheck_fuzz.py` holds the two to refusing the same documents.
WHOLE = (
    Part(
        "check_plan",
        "Accept a plan exactly when `plan.Plan` certainly would; raise `Reject` otherwise.",
        ann=Plan,
    ),
)


def _split(spec: str) -> tuple[str, str, str]:
    """`"f{...}"` -> (f, "{", inner); `"f.g"` -> (f, ".", g); `"f:shell"` -> (f, ":", "shell")."""
    if "{" in spec:
        name, inner = spec.split("{", 1)
        return name, "{", inner.rstrip("}")
    if "." in spec:
        name, sub = spec.split(".", 1)
        return name, ".", sub
    if ":" in spec:
        name, mark = spec.split(":", 1)
        return name, ":", mark
    return spec, "", ""


def _inner(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())
