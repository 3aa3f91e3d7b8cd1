"""Run a command by name with its values: the one path from a parsed command line (typer's
or the fast launcher's) to the command's handler (`Command.handler`, `app/commands.py`).

>>> handler("validate").__name__
'validate'
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from typing import Any

from placement_cli.app.commands import command
from placement_cli.app.config import batch_configured, configured
from placement_cli.app.console import guarded, print_timings, report, reporting
from placement_cli.app.report import Report
from placement_cli.core.errors import UsageError
from placement_cli.core.io import STDIN
from placement_cli.pipeline.kinds import forget_stdin, placeable_bodies

Handler = Callable[[str, dict[str, Any]], int]


def handler(name: str) -> Handler:
    """The function that runs command `name` (its module imported on first use)."""
    module, _, func = command(name).handler.partition(":")
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def call(name: str, values: dict[str, Any], given: set[str] | frozenset[str] = frozenset()) -> None:
    """Run command `name` with `values` (every argument and option by key, `debug`
    among them; `given`: the keys the command line set, which the project's
    configuration does not override); ends by raising SystemExit with the command's exit
    code.

    A command whose input takes many paths runs its handler on the one file it was
    given, or, for several files, a directory or `--out-dir` on a stage, once per file
    (`app/batch.py`). Its diagnostics, whatever happens, end as one report
    (`--diagnostics`, `--diagnostics-file`: `app/report.py`)."""
    rep = Report.for_call(values.get("diagnostics"), values.get("diagnostics_file"))
    rep.quiet = bool(values.get("quiet"))
    rep.strict = bool(values.get("strict"))
    forget_stdin()
    with reporting(rep):
        guarded(bool(values.get("debug", False)), lambda: _run(name, values, set(given)), rep)


def _run(name: str, values: dict[str, Any], given: set[str]) -> int:
    cmd = command(name)
    if values.get("output") is not None and values.get("out_dir") is not None:
        raise UsageError(
            "-o/--output and --out-dir cannot be used together: --out-dir writes "
            "DIR/NAME/COMMAND.json per input, -o one file"
        )
    run = handler(name)
    many = cmd.many
    if many is not None:
        paths = values[many.key]
        batch_option = "out_dir" if "output" in values else None
        if wants_batch(paths, values, batch_option) or _each_body(name, paths, values):
            # Lazy: the worker pool's modules (multiprocessing: ~30 ms, measured), only for a batch.
            from placement_cli.app.batch import run_batch

            # Each input is configured from its own directory (in its worker).
            v = batch_configured(cmd, values, given)
            return run_batch(name, v, many.key, run, given)
    v = configured(cmd, values, given)
    # `strict = true` in the project's configuration counts as --strict.
    report().strict = bool(v.get("strict"))
    if many is not None:
        paths = v[many.key]
        batch_option = "out_dir" if "output" in v else None
        v[many.key] = paths[0]
        v.pop("jobs", None)
        if batch_option:
            v.pop("out_dir", None)
    v.pop("debug", None)
    if cmd.phases:
        return run(name, v)
    timings = bool(v.pop("timings", False))
    return _timed(run, name, v) if timings else run(name, v)


def wants_batch(paths: list[str], values: dict[str, Any], batch_option: str | None) -> bool:
    """Whether a command line is a batch (`app/batch.py`): several inputs, a directory,
    or the batch output option (`--out-dir` of a stage) given.

    >>> wants_batch(["a.yaml"], {}, "out_dir"), wants_batch(["a.yaml", "b.yaml"], {}, None)
    (False, True)
    """
    if len(paths) != 1 or (paths[0] != STDIN and os.path.isdir(paths[0])):
        return True
    return batch_option is not None and values.get(batch_option) is not None


def _each_body(name: str, paths: list[str], v: dict[str, Any]) -> bool:
    """Whether one input is MIR text with several bodies to place, no `--body` chosen,
    and a command that places each (`run`, into DIR/NAME/BODY/; `validate`): a batch
    of one input per body. Other commands ask for `--body` (the loader)."""
    if name not in ("run", "validate") or "body_name" not in v or v["body_name"] is not None:
        return False
    return len(placeable_bodies(paths[0], v.get("source"))) > 1


def _timed(run: Handler, name: str, v: dict[str, Any]) -> int:
    """Run a handler that has no phases of its own, and print its whole time."""
    t0 = time.perf_counter()
    try:
        return run(name, v)
    finally:
        print_timings([(name, time.perf_counter() - t0)], True)
