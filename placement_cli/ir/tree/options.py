"""`placement tree`'s options: the one declaration of its command-line options
(`core/option_field.py`). Apart from the tree's indexed forms (`model`) because the
command line is built from it: importing numpy there would cost every command typer
runs ~100 ms."""

# No `from __future__ import annotations`: the fields' flags are built once, with the
# class, rather than compiled from their text wherever the fields are read.
from typing import Annotated, Literal

import msgspec

from placement_cli.core.option_field import Flag, check


class TreeOptions(msgspec.Struct, frozen=True):
    """`budget` overrides the file's cut budget; `expand_dag` duplicates shared sub-plans;
    `include_input` writes the input back into the artifact; `time_limit` (seconds) stops
    the DP, which then reports `unsolved`. Checked on construction; the one declaration
    of `tree`'s command-line options (`core/option_field.py`).

    >>> TreeOptions(budget=2**70).budget > 2**64
    True
    >>> TreeOptions(time_limit=0)
    Traceback (most recent call last):
    ...
    ValueError: invalid tree options: time_limit: expected a number >= 0.001, got 0
    """

    budget: Annotated[
        int | None,
        Flag(("--budget", "-k"), "Cut budget K (default: the file's budget).", minimum=0),
    ] = None
    expand_dag: Annotated[
        bool,
        Flag(("--expand-dag",), "Duplicate shared sub-plans instead of rejecting a DAG."),
    ] = False
    include_input: Annotated[
        bool,
        Flag(
            ("--include-input",),
            "Write the tree file back into the artifact (default: its name and sha256 only).",
        ),
    ] = False
    time_limit: Annotated[
        float,
        Flag(
            ("--time-limit",),
            "Seconds for the DP; when they run out the artifact says `unsolved` (exit 5).",
            minimum=0.001,
        ),
    ] = 60.0

    latency: Annotated[
        Literal["auto", "critical-path", "work", "resource", "measured"],
        Flag(
            ("--latency",),
            "The latency a placement is judged by: critical-path (siblings in parallel on "
            "separate machines: the seed's MAX), work (everything one after another), "
            "resource (max of the two with the work spread over --cores: engines sharing "
            "one machine), measured (work on a probed tree's subtree times as measured, "
            "never clamped); auto: measured for a tree probed --in-pipeline, resource for "
            "another tree probed on this machine (it records its engines' threads), else "
            "critical-path.",
        ),
    ] = "auto"
    cores: Annotated[
        int | None,
        Flag(
            ("--cores",),
            "Cores the engines share, for --latency resource (default: the most threads "
            "the probe ran an engine with, else the cores this process may use).",
            minimum=1,
        ),
    ] = None

    def __post_init__(self) -> None:
        check(self, "tree")
