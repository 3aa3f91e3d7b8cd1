"""`placement tree`'s options: the one declaration of its command-line options
(`core/option_field.py`). Apart from the tree's indexed forms (`model`) because the
command line is built from it: importing numpy there would cost every command typer
runs ~100 ms."""

from __future__ import annotations

from dataclasses import dataclass

from placement_cli.core.option_field import Flag, check, option


@dataclass(frozen=True, slots=True)
class TreeOptions:
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

    budget: int | None = option(
        None,
        Flag(("--budget", "-k"), "Cut budget K (default: the file's budget).", minimum=0),
    )
    expand_dag: bool = option(
        False, Flag(("--expand-dag",), "Duplicate shared sub-plans instead of rejecting a DAG.")
    )
    include_input: bool = option(
        False,
        Flag(
            ("--include-input",),
            "Write the tree file back into the artifact (default: its name and sha256 only).",
        ),
    )
    time_limit: float = option(
        60.0,
        Flag(
            ("--time-limit",),
            "Seconds for the DP; when they run out the artifact says `unsolved` (exit 5).",
            minimum=0.001,
        ),
    )

    def __post_init__(self) -> None:
        check(self, "tree")
