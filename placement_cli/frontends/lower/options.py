"""The options of `lower` (and of every command that lowers a body first): a frozen
`Struct` checked on construction, and the one declaration of their command-line
options (`core/option_field.py`). Apart from `stage`, which needs pydantic: the
command line reads these on every pipeline command."""

# No `from __future__ import annotations`: the fields' flags are built once, with the
# class, rather than compiled from their text wherever the fields are read.
from typing import Annotated, Any, Literal

import msgspec

from placement_cli.core.option_field import Flag, check

# How lower splits a block (`split.split`). Declared here, with the option that chooses
# it, so that a command's start-up reads the choices without importing the splitter.
SplitMode = Literal["runs", "intersection", "per-statement"]


class LowerOptions(msgspec.Struct, frozen=True):
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
    body: Annotated[
        str | None,
        Flag(
            ("--body",),
            "The body to place (default: the file's `place`, else its one graph-read filter, "
            "else the first). MIR text with several filters and no --body: each is placed "
            "(DIR/NAME/BODY/ with --out-dir; `run` and `validate` always), or, writing one "
            "output, a usage error naming them.",
            key="body_name",
        ),
    ] = None
    # the target profile, as a mapping or a built-in's name; the command line names a
    # profile file, which its handler reads into this
    profile: Annotated[
        str | dict[str, Any] | None,
        Flag(
            ("--targets",),
            "Target profile file for a body (default: the body file's profile, else hashql).",
            key="targets",
            kind="str",
            settable=True,
            path=True,
        ),
    ] = None
    split: Annotated[
        SplitMode | None,
        Flag(
            ("--split",),
            "How a body's blocks are split: runs (default): cut where support changes; "
            "intersection: never cut; per-statement: one block per statement.",
            settable=True,
        ),
    ] = None
    size_cap: Annotated[
        float | None,
        Flag(
            ("--size-cap",),
            "Information units an unbounded size counts as in a body (default: the file's "
            "size_cap, else unpriceable).",
            minimum=0.0,
            settable=True,
        ),
    ] = None

    def __post_init__(self) -> None:
        check(self, "lower")
