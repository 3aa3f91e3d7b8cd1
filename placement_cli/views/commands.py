"""The `show`, `explain` and `diff` commands; `register(app)` adds them to the CLI.

Only typer is imported here at module level, so `placement --help` stays fast; the
views load when a command runs.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer


class View(StrEnum):
    cfg = "cfg"
    islands = "islands"
    graph = "graph"


class ShowFormat(StrEnum):
    dot = "dot"
    mermaid = "mermaid"
    text = "text"


class ReportFormat(StrEnum):
    json = "json"
    text = "text"


ArtifactArg = Annotated[
    str, typer.Argument(metavar="ARTIFACT", help="Plan file or artifact (JSON/YAML), or - for stdin; missing stages are run.")
]
OutputOpt = Annotated[str | None, typer.Option("-o", "--output", help="Write here (atomically) instead of stdout.")]
TimeLimitOpt = Annotated[
    float, typer.Option("--time-limit", min=0.0, help="Seconds the solve may spend when the input has no solve section.")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No warnings on stderr.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]


def _options(time_limit: float) -> dict[str, object]:
    from placement_cli.passes.solve import SolveOptions

    return {"solve": SolveOptions(time_limit=time_limit)}


def _warn(lines: list[str], quiet: bool) -> None:
    if not quiet:
        for line in lines:
            sys.stderr.write(f"warning: {line}\n")


def _write(text: str, output: str | None) -> None:
    from placement_cli.io import write_output

    write_output(text.encode(), output)


def show(
    path: ArtifactArg,
    view: Annotated[View, typer.Option("--view", help="cfg: blocks by target, islands as clusters; "
                                       "islands: one node per island; graph: the island dependency graph.")] = View.cfg,
    format: Annotated[ShowFormat, typer.Option("--format", help="dot (Graphviz), mermaid, or text "
                                               "(a table; rich on a terminal).")] = ShowFormat.dot,
    output: OutputOpt = None,
    time_limit: TimeLimitOpt = 5.0,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Draw a placement: the CFG by target, the islands, or the island graph."""
    from placement_cli.console import guarded

    def body() -> int:
        from placement_cli.views.data import prepare
        from placement_cli.views.show import TABLES, render
        from placement_cli.views.text import plain, rich_print

        v = prepare(path, _options(time_limit))
        warnings = []
        if v.status == "infeasible":
            warnings.append("the plan has no feasible placement: blocks are drawn without targets")
        if format == ShowFormat.text:
            table = TABLES[view.value](v)
            if output is None and sys.stdout.isatty():
                rich_print(table)
            else:
                _write(plain(table), output)
        else:
            text, more = render(v, view.value, format.value)
            warnings += more
            _write(text, output)
        _warn(warnings, quiet)
        return 0

    guarded(debug, body)


def explain(
    path: ArtifactArg,
    block: Annotated[str, typer.Argument(metavar="BLOCK", help="The block id to explain.")],
    format: Annotated[ReportFormat, typer.Option("--format", help="json or text.")] = ReportFormat.text,
    output: OutputOpt = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.0, help="Seconds for all the pinned solves together "
                            "(and for the solve itself when the input has none).")
    ] = 10.0,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Why a block can or cannot run on each target, and the proven optimum if pinned there."""
    from placement_cli.console import guarded

    def body() -> int:
        from pathlib import PurePath

        from placement_cli.io import dumps
        from placement_cli.pipeline import load
        from placement_cli.views.data import run_to
        from placement_cli.views.explain import ExplainOptions, to_text
        from placement_cli.views.explain import explain as explain_block

        loaded = load(path)
        run = run_to(loaded, "solve", _options(time_limit))
        ex = explain_block(run, block, ExplainOptions(time_limit=time_limit))
        if format == ReportFormat.json:
            _write(dumps(ex).decode(), output)
        else:
            _write(to_text(ex, run.g.name or PurePath(loaded.source).name), output)
        if any(r["pinned"] and not r["pinned"]["proven"] for r in ex["targets"]):
            _warn(["some pinned optima are not proven within --time-limit; raise it for a proof"], quiet)
        return 0

    guarded(debug, body)


def diff(
    a: Annotated[str, typer.Argument(metavar="A", help="An artifact (JSON/YAML), or - for stdin.")],
    b: Annotated[str, typer.Argument(metavar="B", help="An artifact of the same stage.")],
    format: Annotated[ReportFormat, typer.Option("--format", help="json (for scripts) or text.")] = ReportFormat.text,
    output: OutputOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Compare two artifacts of the same stage. Exit 0 same, 7 different, 3 invalid input."""
    from placement_cli.console import guarded

    def body() -> int:
        from placement_cli.errors import EXIT_DIFFERS, UsageError
        from placement_cli.io import dumps
        from placement_cli.pipeline import load
        from placement_cli.views.diff import diff as diff_artifacts
        from placement_cli.views.diff import to_text

        if a == "-" and b == "-":
            raise UsageError("only one of A and B can be standard input")
        d = diff_artifacts(load(a), load(b))
        _write(dumps(d).decode() if format == ReportFormat.json else to_text(d), output)
        return 0 if d["same"] else EXIT_DIFFERS

    guarded(debug, body)


def register(app: typer.Typer) -> None:
    """Add `show`, `explain` and `diff` to the application."""
    app.command(name="show")(show)
    app.command(name="explain")(explain)
    app.command(name="diff")(diff)
