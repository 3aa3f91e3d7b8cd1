"""The bodies of the pipeline commands (`validate`, each stage, `run`), apart from their
argument parsing.

Each handler gets the command's name and its values by option key, as declared in
`app/commands.py`, and reads them as typed records (`app/values.py`): the shared
options (`Common`) and its stages' options models. Two parsers produce those values:
typer (`app/cli.py`, the authority on `--help` and every usage error) and the fast
launcher (`app/launch.py`, which handles only plain, valid invocations and otherwise
hands the command line to typer). Nothing here imports typer.

>>> stage_options({"method": "exact", "time_limit": 2.5})["solve"].method
'exact'
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from placement_cli.app.console import (
    emit,
    exit_for,
    keep,
    print_timings,
    progress,
    say,
    show_summary,
    warn_diagnostics,
)
from placement_cli.app.solve_cli import solve_options
from placement_cli.app.summary import summarize, summarize_run
from placement_cli.app.values import Common, lower_options
from placement_cli.core.errors import EXIT_OK, InputError
from placement_cli.core.io import write_files
from placement_cli.core.paths import joined
from placement_cli.formats.artifact import render_parts
from placement_cli.pipeline.registry import STAGES
from placement_cli.pipeline.run import Run, load
from placement_cli.views.tree_sniff import sniff


def stage_options(v: Mapping[str, Any]) -> dict[str, Any]:
    """The stage options of a command that may run `solve`, from its values (empty for
    a command without solver options)."""
    if "method" not in v:
        return {}
    return {"solve": solve_options(v)}


def _loaded_run(c: Common, v: Mapping[str, Any], options: dict[str, Any], update: Any) -> Any:
    """The input read (a body lowered with the command line's front-end settings) and a
    `Run` over it, its load timed and its progress shown."""

    t0 = time.perf_counter()
    run = Run(load(c.path, lower_options(v), c.source), options)
    run.progress = update
    run.timings.append(("load", time.perf_counter() - t0))
    return run


def _artifact(run: Run, name: str, c: Common) -> dict[str, Any]:
    """Stage `name`'s artifact, with the project configuration it was made under."""
    art: dict[str, Any] = run.artifact(name, raw_plan=c.format == "json")
    if c.config:
        art["config"] = c.config
    return art


def stage(name: str, v: dict[str, Any]) -> int:
    """`placement STAGE`: read, check, run what is missing up to `name`, write the artifact.
    Returns the exit code the artifact's status calls for."""
    c = Common.of(v)
    options = stage_options(v)

    with progress(c.quiet) as update:
        run = _loaded_run(c, v, options, update)
        run.run(name)
        with run.timed("build artifact"):
            art = _artifact(run, name, c)
        keep(run)
        with run.timed("write"):
            emit(art, c.output, c.format)
    warn_diagnostics(run.new_diagnostics, c.quiet, c.diagnostics, c.path)
    print_timings(run.timings, c.timings)

    def summary() -> str:

        return summarize(run, name)

    show_summary(summary, c.quiet)
    return exit_for(art["status"])


def validate(name: str, v: dict[str, Any]) -> int:
    """`placement validate`: check a plan, or an artifact and every section in it."""
    c = Common.of(v)

    t0 = time.perf_counter()
    tree_art, again = sniff(c.path)
    if tree_art is not None:
        return _validate_tree(tree_art, c)
    with again:
        lower = lower_options(v)
        loaded = load(c.path, lower, c.source)
    run = Run(loaded)
    run.timings.append(("load", time.perf_counter() - t0))
    for name in STAGES:
        if name in loaded.models:
            run.run(name)
    keep(run)
    g = loaded.graph
    checked = [s for s in STAGES if s in loaded.models]
    what = f"; sections checked: {', '.join(checked)}" if checked else ""
    print_timings(run.timings, c.timings)
    body = f" ({lower.body})" if lower.body is not None else ""
    say(
        f"{loaded.source}{body}: ok: {g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets{what}",
        c.quiet,
        always=True,
    )
    return EXIT_OK


def _validate_tree(art: Any, c: Common) -> int:
    """A tree artifact: its recorded result checked against its tree file."""
    # Lazy: the tree DP and numpy (~90 ms, measured), only for a tree artifact.
    from placement_cli.views.tree import (
        check,
    )

    t0 = time.perf_counter()
    problems, tree, _ = check(art, c.tree)
    print_timings([("check", time.perf_counter() - t0)], c.timings)
    if problems:
        raise InputError(problems, art.source)
    sec = art.section
    ref = sec.get("input_ref") or {}
    result = (
        f"latency {sec.get('latency')}, {sec.get('cuts_used')} of {sec.get('budget')} cuts"
        if art.doc.get("status") == "ok"
        else f"status {art.doc.get('status')}"
    )
    say(
        f"{art.source}: ok: tree artifact, {tree.n} operators on {len(tree.engines)} engines, "
        f"{result}; consistent with its tree file {c.tree or ref.get('name')}",
        c.quiet,
        always=True,
    )
    return EXIT_OK


def run_all(name: str, v: dict[str, Any]) -> int:
    """`placement run`: every stage; one artifact per stage in `out_dir` (all written or none)."""
    c = Common.of(v)
    out_dir, fmt, quiet = c.out_dir or "out", c.format, c.quiet
    options = stage_options(v)
    with progress(quiet) as update:
        pipeline = _loaded_run(c, v, options, update)
        files = []
        for name in STAGES:
            pipeline.run(name)
            with pipeline.timed(f"artifact {name}"):
                art = _artifact(pipeline, name, c)
                # `core.paths.joined`: the name `Path(out_dir) / ...` gave, without pathlib.
                files.append((joined(out_dir, f"{name}.{fmt}"), render_parts(art, fmt)))
        keep(pipeline)
        # All or nothing: a failure while writing leaves no new file behind.
        with pipeline.timed("write"):
            write_files(files)
    warn_diagnostics(pipeline.new_diagnostics, quiet, c.diagnostics, c.path)
    print_timings(pipeline.timings, c.timings)
    if not quiet:

        def summary() -> str:

            return summarize_run(pipeline, out_dir)

        try:
            text = summary()
        except Exception as exc:  # noqa: BLE001 - the artifacts are written
            text = f"(no summary: {type(exc).__name__})"
        say(text, quiet, always=True)
    return exit_for(pipeline.status)
