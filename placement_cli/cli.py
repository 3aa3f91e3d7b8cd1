"""The command line: parse arguments, read, call a pass, write. Nothing else lives here.

Heavy modules (pydantic, yaml, the passes) are imported inside the commands so that
`placement --help` starts fast.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from placement_cli import __version__
from placement_cli.console import (
    exit_for,
    guarded,
    say,
    warn_diagnostics,
)
from placement_cli.errors import EXIT_OK
from placement_cli.stages import REGISTRY

# `\b` keeps click from reflowing the paragraph after it (one stage per line).
HELP = """\
Decide where each block of a compiled query program runs.

Stages (each reads a plan file or any earlier stage's artifact, checks the artifact's
sections, runs what is missing, and writes its JSON artifact to stdout or -o FILE):

\b
  validate  check a plan, or an artifact and every section in it
  lower     derive a plan from a MIR body file (eligibility, splitting, matrices)
  prune     AC-3 arc consistency over the transition matrices
  scc       strongly connected components and the condensation
  solve     the cheapest feasible assignment (exact where proven, heuristic otherwise)
  fuse      merge same-target goto chains
  islands   execution islands, their dependency graph and schedule
  run       every stage at once, one artifact per stage into --out-dir
  tree      operator-tree placement under a cut budget (critical-path DP)
  schema    write the JSON Schemas into schemas/

Example pipeline:

\b
  placement prune plan.yaml | placement scc - | placement solve - | placement fuse - | placement islands -

\b
Exit codes: 0 ok, 1 internal error, 2 usage error, 3 invalid input,
4 no feasible placement, 5 stopped by the time or memory limit unsolved
(artifact still written for 4 and 5), 6 file-system error, 7 diff found
differences, 130 interrupted.
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
TimingsOpt = Annotated[bool, typer.Option("--timings", help="Print each phase's wall time on stderr.")]
TreeArg = Annotated[str, typer.Argument(metavar="INPUT", help="Tree file (JSON/YAML), or - for stdin.")]


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


@app.command()
def validate(path: InputArg, quiet: QuietOpt = False, debug: DebugOpt = False, timings: TimingsOpt = False) -> None:
    """Check a plan, or an artifact and every section in it; exit 3 listing every problem."""
    from placement_cli import stagecmd

    guarded(debug, lambda: stagecmd.validate(path, quiet, timings))


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
    """One command per registered stage; all share the same options. The stages that
    may run `solve` (it or a later one) also take the solver's options."""
    if solves:

        def command(
            path: InputArg,
            output: OutputOpt = None,
            format: FormatOpt = Format.json,
            method: MethodOpt = Method.auto,
            time_limit: TimeLimitOpt = 5.0,
            quiet: QuietOpt = False,
            debug: DebugOpt = False,
            timings: TimingsOpt = False,
            # --- solver engineer: pins, forbids, warm start
            pin: PinOpt = None,
            forbid: ForbidOpt = None,
            pins_file: PinsFileOpt = None,
            warm_start: WarmStartOpt = None,
            # --- end solver engineer
        ) -> None:
            from placement_cli import stagecmd

            guarded(debug, lambda: stagecmd.stage(
                stage, path, output, format.value, quiet,
                stagecmd.solve_options(method.value, time_limit, pin, forbid, pins_file, warm_start), timings))

    else:

        def command(  # type: ignore[misc]
            path: InputArg,
            output: OutputOpt = None,
            format: FormatOpt = Format.json,
            quiet: QuietOpt = False,
            debug: DebugOpt = False,
            timings: TimingsOpt = False,
        ) -> None:
            from placement_cli import stagecmd

            guarded(debug, lambda: stagecmd.stage(stage, path, output, format.value, quiet, {}, timings))

    command.__doc__ = summary
    app.command(name=stage)(command)


# --- solver engineer: the solve options from the command line (parsed in passes/solve.py)
PinOpt = Annotated[list[str] | None, typer.Option("--pin", metavar="BLOCK=TARGET",
                                                  help="Run BLOCK on TARGET (repeatable).")]
ForbidOpt = Annotated[list[str] | None, typer.Option("--forbid", metavar="BLOCK=TARGET",
                                                     help="Never run BLOCK on TARGET (repeatable).")]
PinsFileOpt = Annotated[str | None, typer.Option("--pins", metavar="FILE",
                                                 help="Pins from a YAML/JSON file: a mapping BLOCK: TARGET, or a "
                                                      "list of BLOCK=TARGET / {block, target, forbid}.")]
WarmStartOpt = Annotated[str | None, typer.Option("--warm-start", metavar="ARTIFACT",
                                                  help="Start from the assignment of an earlier solve/fuse/islands "
                                                       "artifact (blocks matched by id).")]


# --- end solver engineer


for _info in REGISTRY:
    _register_stage(_info.name, _info.summary, _info.solver_options)

# Commands of other modules register themselves here (`show`, `explain`, `diff`).
try:
    from placement_cli.views import commands as _views  # type: ignore[attr-defined,unused-ignore]
except ModuleNotFoundError as _exc:
    if _exc.name not in ("placement_cli.views", "placement_cli.views.commands"):
        raise
else:
    _views.register(app)


@app.command()
def run(
    path: InputArg,
    out_dir: Annotated[str, typer.Option("--out-dir", help="Directory for prune/scc/solve/fuse/islands artifacts.")] = "out",
    format: FormatOpt = Format.json,
    method: MethodOpt = Method.auto,
    time_limit: TimeLimitOpt = 5.0,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
    timings: TimingsOpt = False,
) -> None:
    """Every stage; one artifact per stage in --out-dir (all written or none), and a summary."""
    from placement_cli import stagecmd

    guarded(debug, lambda: stagecmd.run_all(path, out_dir, format.value, quiet,
                                            stagecmd.solve_options(method.value, time_limit), timings))


class Split(StrEnum):
    runs = "runs"
    intersection = "intersection"
    per_statement = "per-statement"


@app.command()
def lower(
    path: Annotated[str, typer.Argument(metavar="BODY", help="Body file (MIR, JSON/YAML) or a plan, or - for stdin.")],
    targets: Annotated[str | None, typer.Option("--targets", help="Target profile file (default: the body file's profile, else hashql).")] = None,
    split: Annotated[Split | None, typer.Option("--split", help="runs (default): cut where support changes; intersection: never cut; per-statement: one block per statement.")] = None,
    size_cap: Annotated[float | None, typer.Option("--size-cap", min=0.0, help="Information units an unbounded size counts as (default: the file's size_cap, else unpriceable).")] = None,
    body_name: Annotated[str | None, typer.Option("--body", help="The body to place (default: the file's `place`, else the first).")] = None,
    output: OutputOpt = None,
    format: FormatOpt = Format.json,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Derive a plan from a MIR body: eligibility, block splitting, sizes, transition matrices, path premium."""

    def body() -> int:
        from placement_cli.lower.command import lower_command, read_profile
        from placement_cli.lower.stage import LowerOptions

        profile = read_profile(targets) if targets is not None else None
        opts = LowerOptions(split=split.value if split else None, size_cap=size_cap, body=body_name, profile=profile)
        plan, diags = lower_command(path, output, format.value, opts)
        warn_diagnostics([d for d in diags if d["severity"] != "info"], quiet)
        low = plan["lower"]
        say(f"lowered: {low['blocks_before']} blocks -> {low['blocks_after']} ({low['split']})", quiet)
        return EXIT_OK

    guarded(debug, body)


@app.command()
def tree(
    path: TreeArg,
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
        from placement_cli.passes.tree import TreeOptions, load_tree, tree_artifact

        problem = load_tree(path)
        options = TreeOptions(budget=budget, expand_dag=expand_dag, include_input=include_input, time_limit=time_limit)
        art, summary = tree_artifact(problem, options)
        from placement_cli.io import dumps, write_output

        write_output(dumps(art, format.value), output)  # the tree artifact keeps its indented layout
        warn_diagnostics(art.get("diagnostics", []), quiet)
        say(summary, quiet)
        return exit_for(art["status"])

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
        say(f"wrote {len(all_schemas())} schemas to {out_dir}/", quiet)
        return EXIT_OK

    guarded(debug, body)


def main() -> None:
    """The whole `placement` process (kept here for callers of `cli.main`; see `launch.main`)."""
    from placement_cli.launch import main as launch_main

    launch_main()


if __name__ == "__main__":
    main()
