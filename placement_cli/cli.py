"""The command line: parse arguments, read, call a pass, write. Nothing else lives here.

Heavy modules (pydantic, yaml, the passes) are imported inside the commands so that
`placement --help` starts fast.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, NoReturn

import typer

from placement_cli import __version__
from placement_cli.errors import (
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    InputError,
    PlacementError,
)

HELP = """\
Decide where each block of a compiled query program runs.

Stages (each reads a plan file or any earlier stage's artifact, runs what is missing,
and writes its JSON artifact to stdout or -o FILE):

  validate  check a plan and print a one-line summary
  prune     AC-3 arc consistency over the transition matrices
  scc       strongly connected components and the condensation
  solve     the cheapest feasible assignment (exact where proven, heuristic otherwise)
  fuse      merge same-target goto chains
  islands   execution islands, their dependency graph and schedule
  run       every stage at once, one artifact per stage into --out-dir
  tree      operator-tree placement under a cut budget (critical-path DP)
  schema    write the JSON Schemas into schemas/

Example pipeline:

  placement prune plan.yaml | placement scc - | placement solve - | placement fuse - | placement islands -

Exit codes: 0 ok, 1 internal error, 2 usage error, 3 invalid input,
4 no feasible placement (artifact still written), 130 interrupted.
"""

app = typer.Typer(
    help=HELP,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(StrEnum):
    json = "json"
    yaml = "yaml"


class Method(StrEnum):
    auto = "auto"
    exact = "exact"
    heuristic = "heuristic"


InputArg = Annotated[str, typer.Argument(metavar="INPUT", help="Plan file or artifact (JSON/YAML), or - for stdin.")]
OutputOpt = Annotated[str | None, typer.Option("-o", "--output", help="Write the artifact here (atomically) instead of stdout.")]
FormatOpt = Annotated[Format, typer.Option("--format", help="Artifact format.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No summary or warnings on stderr.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")]


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"placement {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


def _stderr_is_terminal() -> bool:
    return sys.stderr is not None and sys.stderr.isatty()


def _say(message: str, quiet: bool, always: bool = False) -> None:
    """Human text goes to stderr, through rich, and only when someone is looking."""
    if quiet or not (always or _stderr_is_terminal()):
        return
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(message, markup=False)


def _warn_diagnostics(art: dict[str, Any], quiet: bool) -> None:
    if quiet:
        return
    for d in art.get("diagnostics", []):
        if d.get("severity") in ("error", "warning"):
            sys.stderr.write(f"{d['severity']}: {d['code']}: {d['message']}\n")


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(message.rstrip("\n") + "\n")
    raise typer.Exit(code)


def guarded(debug: bool, body: Callable[[], int]) -> None:
    """The one place where exceptions become exit codes."""
    # One short-lived process over millions of acyclic objects: the cyclic collector's
    # repeated full scans cost more than the algorithms themselves (measured 2-4x).
    gc.disable()
    try:
        code = body()
    except InputError as exc:
        _fail(str(exc), exc.exit_code)
    except PlacementError as exc:
        _fail(f"placement: {exc}", exc.exit_code)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours, and no traceback.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        raise typer.Exit(EXIT_OK) from None
    except KeyboardInterrupt:
        _fail("placement: interrupted", EXIT_INTERRUPTED)
    except typer.Exit:
        raise
    except Exception as exc:  # a bug: one line unless asked for more
        if debug:
            import traceback

            traceback.print_exc()
        _fail(f"placement: internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", EXIT_INTERNAL)
    raise typer.Exit(code)


def _emit(art: dict[str, Any], output: str | None, fmt: Format) -> None:
    from placement_cli.io import dumps, write_output

    write_output(dumps(art, fmt.value), output)


def _stage(stage: str, path: str, output: str | None, fmt: Format, quiet: bool, options: dict[str, Any]) -> int:
    from placement_cli.pipeline import Run, load
    from placement_cli.summary import summarize

    run = Run(load(path), options)
    run.run(stage)
    art = run.artifact(stage)
    _emit(art, output, fmt)
    _warn_diagnostics(art, quiet)
    _say(summarize(run, stage), quiet)
    return EXIT_INFEASIBLE if art["status"] == "infeasible" else EXIT_OK


@app.command()
def validate(path: InputArg, quiet: QuietOpt = False, debug: DebugOpt = False) -> None:
    """Check a plan (or an artifact's plan); exit 3 listing every problem."""

    def body() -> int:
        from placement_cli.pipeline import load

        loaded = load(path)
        g = loaded.graph
        _say(
            f"{loaded.source}: ok: {g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets",
            quiet,
            always=True,
        )
        return EXIT_OK

    guarded(debug, body)


MethodOpt = Annotated[
    Method,
    typer.Option(
        "--method",
        help="heuristic: the seed algorithm; exact: proven optimum (or best bound within the limit); "
        "auto: exact first, and the heuristic too when the optimum is not proven in time.",
    ),
]
TimeLimitOpt = Annotated[
    float,
    typer.Option("--time-limit", min=0.0, help="Seconds the exact method (and so the optimality proof) may spend."),
]

def _register_stage(stage: str, summary: str, solves: bool) -> None:
    """One command per pipeline stage; all share the same options. The stages from
    `solve` on also take the solver's options, since they run it when it is missing."""
    if solves:

        def command(
            path: InputArg,
            output: OutputOpt = None,
            format: FormatOpt = Format.json,
            method: MethodOpt = Method.auto,
            time_limit: TimeLimitOpt = 5.0,
            quiet: QuietOpt = False,
            debug: DebugOpt = False,
        ) -> None:
            guarded(debug, lambda: _stage(stage, path, output, format, quiet, _solve_options(method, time_limit)))

    else:

        def command(  # type: ignore[misc]
            path: InputArg,
            output: OutputOpt = None,
            format: FormatOpt = Format.json,
            quiet: QuietOpt = False,
            debug: DebugOpt = False,
        ) -> None:
            guarded(debug, lambda: _stage(stage, path, output, format, quiet, {}))

    command.__doc__ = summary
    app.command(name=stage)(command)


def _solve_options(method: Method, time_limit: float) -> dict[str, Any]:
    from placement_cli.passes.solve import SolveOptions

    return {"solve": SolveOptions(method=method.value, time_limit=time_limit)}


_register_stage("prune", "AC-3 arc consistency: the domains left and why each target went.", solves=False)
_register_stage("scc", "Strongly connected components in topological order, with boundary edges.", solves=False)
_register_stage("solve", "The cheapest feasible assignment of a target to every block.", solves=True)
_register_stage("fuse", "Merge same-target blocks joined by argument-free gotos.", solves=True)
_register_stage("islands", "Execution islands, their dependency graph and a schedule.", solves=True)


@app.command()
def run(
    path: InputArg,
    out_dir: Annotated[str, typer.Option("--out-dir", help="Directory for prune/scc/solve/fuse/islands artifacts.")] = "out",
    format: FormatOpt = Format.json,
    method: MethodOpt = Method.auto,
    time_limit: TimeLimitOpt = 5.0,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Every stage; one artifact per stage in --out-dir, and a summary."""

    def body() -> int:
        from pathlib import Path

        from placement_cli.pipeline import STAGES, Run, load
        from placement_cli.summary import summarize_run

        pipeline = Run(load(path), _solve_options(method, time_limit))
        status = "ok"
        for stage in STAGES:
            pipeline.run(stage)
            art = pipeline.artifact(stage)
            status = art["status"]
            _emit(art, str(Path(out_dir) / f"{stage}.{format.value}"), format)
        _warn_diagnostics(art, quiet)
        _say(summarize_run(pipeline, out_dir), quiet, always=True)
        return EXIT_INFEASIBLE if status == "infeasible" else EXIT_OK

    guarded(debug, body)


@app.command()
def tree(
    path: InputArg,
    budget: Annotated[int | None, typer.Option("--budget", "-k", min=0, help="Cut budget K (default: the file's budget).")] = None,
    expand_dag: Annotated[bool, typer.Option("--expand-dag", help="Duplicate shared sub-plans instead of rejecting a DAG.")] = False,
    include_input: Annotated[bool, typer.Option("--include-input", help="Write the tree file back into the artifact (default: its name and sha256 only).")] = False,
    time_limit: Annotated[float, typer.Option("--time-limit", min=0.001, help="Seconds for the DP; when they run out the artifact says `unsolved` (exit 5).")] = 60.0,
    output: OutputOpt = None,
    format: FormatOpt = Format.json,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Place the operators of a query-plan tree on engines under a cut budget."""

    def body() -> int:
        from placement_cli.errors import EXIT_UNSOLVED
        from placement_cli.passes.tree import TreeOptions, load_tree, tree_artifact

        problem = load_tree(path)
        options = TreeOptions(budget=budget, expand_dag=expand_dag, include_input=include_input, time_limit=time_limit)
        art, summary = tree_artifact(problem, options)
        _emit(art, output, format)
        _warn_diagnostics(art, quiet)
        _say(summary, quiet)
        status = art["status"]
        return EXIT_INFEASIBLE if status == "infeasible" else EXIT_UNSOLVED if status == "unsolved" else EXIT_OK

    guarded(debug, body)


@app.command()
def schema(
    out_dir: Annotated[str, typer.Option("--out-dir", help="Where to write the schema files.")] = "schemas",
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write the JSON Schemas of the plan file, the tree file and each artifact."""

    def body() -> int:
        from pathlib import Path

        from placement_cli.io import write_output
        from placement_cli.schemas import all_schemas, schema_bytes

        for name, sch in all_schemas().items():
            write_output(schema_bytes(sch), str(Path(out_dir) / name))
        _say(f"wrote {len(all_schemas())} schemas to {out_dir}/", quiet)
        return EXIT_OK

    guarded(debug, body)


def main() -> None:
    app(prog_name="placement")


if __name__ == "__main__":
    main()
