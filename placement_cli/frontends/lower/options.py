"""The options of `lower` (and of every command that lowers a body first): a frozen
dataclass checked on construction, and the one declaration of their command-line
options (`core/option_field.py`). Apart from `stage`, which needs pydantic: the
command line reads these on every pipeline command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from placement_cli.core.option_field import Flag, check, option

# How lower splits a block (`split.split`). Declared here, with the option that chooses
# it, so that a command's start-up reads the choices without importing the splitter.
SplitMode = Literal["runs", "intersection", "per-statement"]


@dataclass(frozen=True, slots=True)
class LowerOptions:
    """Settings of the `lower` stage (frozen; passed in, never global). Each overrides
    the body file's own; None keeps it.

    >>> LowerOptions(split="runs", size_cap=2).size_cap
    2.0
    >>> LowerOptions(split="all")
    Traceback (most recent call last):
    ...
    ValueError: invalid lower options: split: expected one of runs, intersection, per-statement, got 'all'
    """

    # the body to place (default: the file's `place`, else the first)
    body: str | None = option(
        None,
        Flag(
            ("--body",),
            "The body to place (default: the file's `place`, else its one graph-read filter, "
            "else the first). MIR text with several filters and no --body: each is placed "
            "(DIR/NAME/BODY/ with --out-dir; `run` and `validate` always), or, writing one "
            "output, a usage error naming them.",
            key="body_name",
        ),
    )
    # the target profile, as a mapping or a built-in's name; the command line names a
    # profile file, which its handler reads into this
    profile: str | dict[str, Any] | None = option(
        None,
        Flag(
            ("--targets",),
            "Target profile file for a body (default: the body file's profile, else hashql).",
            key="targets",
            kind="str",
            settable=True,
            path=True,
        ),
    )
    split: SplitMode | None = option(
        None,
        Flag(
            ("--split",),
            "How a body's blocks are split: runs (default): cut where support changes; "
            "intersection: never cut; per-statement: one block per statement.",
            settable=True,
        ),
    )
    size_cap: float | None = option(
        None,
        Flag(
            ("--size-cap",),
            "Information units an unbounded size counts as in a body (default: the file's "
            "size_cap, else unpriceable).",
            minimum=0.0,
            settable=True,
        ),
    )

    def __post_init__(self) -> None:
        check(self, "lower")
