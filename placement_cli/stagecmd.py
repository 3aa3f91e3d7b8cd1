"""The bodies of the pipeline commands (`validate`, each stage, `run`), apart from their
argument parsing.

Two parsers call them with the same values: typer (`cli.py`, the authority on every
option, `--help` and every usage error) and the fast launcher (`launch.py`, which
handles only plain, valid invocations and otherwise hands the whole command line to
typer). Nothing here imports typer.

>>> solve_options("exact", 2.5)["solve"].method, solve_options("auto", 0.0)["solve"].time_limit
('exact', 0.0)
"""

from __future__ import annotations

import time
from typing import Any

from placement_cli.console import (
    emit,
    exit_for,
    keep,
    print_timings,
    progress,
    say,
    show_summary,
    warn_diagnostics,
)
from placement_cli.errors import EXIT_OK


def solve_options(method: str, time_limit: float, pin: list[str] | None = None,
                  forbid: list[str] | None = None, pins_file: str | None = None,
                  warm_start: str | None = None) -> dict[str, Any]:
    """The options of the stages that may run `solve`, read from their command-line form."""
    from placement_cli.passes.solve_cli import cli_options

    return {"solve": cli_options(method, time_limit, pin=pin, forbid=forbid, pins_file=pins_file,
                                 warm_start=warm_start)}


def stage(name: str, path: str, output: str | None, fmt: str, quiet: bool, options: dict[str, Any],
          timings: bool = False) -> int:
    """`placement STAGE`: read, check, run what is missing up to `name`, write the artifact.
    Returns the exit code the artifact's status calls for."""
    from placement_cli.pipeline import Run, load

    with progress(quiet) as update:
        t0 = time.perf_counter()
        loaded = load(path)
        run = Run(loaded, options)
        run.progress = update
        run.timings.append(("load", time.perf_counter() - t0))
        run.run(name)
        with run.timed("build artifact"):
            art = run.artifact(name, raw_plan=fmt == "json")
        keep(run)
        with run.timed("write"):
            emit(art, output, fmt)
    warn_diagnostics(run.new_diagnostics, quiet)
    print_timings(run.timings, timings)

    def summary() -> str:
        from placement_cli.summary import summarize

        return summarize(run, name)

    show_summary(summary, quiet)
    return exit_for(art["status"])


def validate(path: str, quiet: bool, timings: bool = False) -> int:
    """`placement validate`: check a plan, or an artifact and every section in it."""
    from placement_cli.pipeline import Run, load
    from placement_cli.stages import STAGES

    t0 = time.perf_counter()
    loaded = load(path)
    run = Run(loaded)
    run.timings.append(("load", time.perf_counter() - t0))
    for name in STAGES:
        if name in loaded.models:
            run.run(name)
    keep(run)
    g = loaded.graph
    checked = [s for s in STAGES if s in loaded.models]
    what = f"; sections checked: {', '.join(checked)}" if checked else ""
    print_timings(run.timings, timings)
    say(
        f"{loaded.source}: ok: {g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets{what}",
        quiet,
        always=True,
    )
    return EXIT_OK


def run_all(path: str, out_dir: str, fmt: str, quiet: bool, options: dict[str, Any],
            timings: bool = False) -> int:
    """`placement run`: every stage; one artifact per stage in `out_dir` (all written or none)."""
    from pathlib import Path

    from placement_cli.artifact import render_parts
    from placement_cli.io import write_files
    from placement_cli.pipeline import Run, load
    from placement_cli.stages import STAGES

    with progress(quiet) as update:
        t0 = time.perf_counter()
        pipeline = Run(load(path), options)
        pipeline.progress = update
        pipeline.timings.append(("load", time.perf_counter() - t0))
        files = []
        for name in STAGES:
            pipeline.run(name)
            with pipeline.timed(f"artifact {name}"):
                art = pipeline.artifact(name, raw_plan=fmt == "json")
                files.append((str(Path(out_dir) / f"{name}.{fmt}"), render_parts(art, fmt)))
        keep(pipeline)
        # All or nothing: a failure while writing leaves no new file behind.
        with pipeline.timed("write"):
            write_files(files)
    warn_diagnostics(pipeline.new_diagnostics, quiet)
    print_timings(pipeline.timings, timings)
    if not quiet:

        def summary() -> str:
            from placement_cli.summary import summarize_run

            return summarize_run(pipeline, out_dir)

        try:
            text = summary()
        except Exception as exc:  # noqa: BLE001 - the artifacts are written
            text = f"(no summary: {type(exc).__name__})"
        say(text, quiet, always=True)
    return exit_for(pipeline.status)
