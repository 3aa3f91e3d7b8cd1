"""The edge of a process: human messages on stderr, exit codes, the artifact's way
out, and a fast exit. Every command runs its work through `guarded`, the one place
where exceptions become exit codes.

Kept apart from `app/cli.py` (argument parsing and the commands) so that command modules
elsewhere (`app/view_commands.py`) share it without importing the whole command line.

>>> exit_for("ok"), exit_for("infeasible"), exit_for("unsolved")
(0, 4, 5)
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from placement_cli.app.report import Report, diagnostic_records, problem_records, tool_record
from placement_cli.core.errors import (
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_OK,
    EXIT_UNSOLVED,
    InputError,
    PlacementError,
)
from placement_cli.core.io import write_output
from placement_cli.formats.artifact import render_parts

# The report of the running call (`dispatch.call` sets it; a batch swaps in one per input).
_REPORT = [Report()]


def report() -> Report:
    """Where the running call's diagnostics go (`app/report.py`)."""
    return _REPORT[-1]


@contextmanager
def reporting(rep: Report) -> Iterator[Report]:
    """Run with `rep` as the call's report."""
    _REPORT.append(rep)
    try:
        yield rep
    finally:
        _REPORT.pop()


def stderr_is_terminal() -> bool:
    return sys.stderr is not None and sys.stderr.isatty()


def say(message: str, quiet: bool, always: bool = False) -> None:
    """Human text goes to stderr, through rich, and only when someone is looking (and
    a machine-readable report does not have stderr to itself)."""
    rep = report()
    if quiet or not rep.human or not (always or stderr_is_terminal()):
        return
    rep.summary_shown = True
    if not stderr_is_terminal():
        # Plain text for logs and pipes; rich only for people.
        sys.stderr.write(message.rstrip("\n") + "\n")
        return
    # Lazy: rich (~30 ms, measured), only for a person at a terminal.
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(message, markup=False)


def warn_diagnostics(
    diagnostics: list[dict[str, Any]], quiet: bool, fmt: str = "text", source: str | None = None
) -> None:
    """Errors and warnings this process raised (not those an input artifact carried:
    the stage that raised them already printed them), into the call's report
    (`--diagnostics`; `fmt` is the report's own). `quiet` drops warnings only from the
    streamed text: a machine-readable report keeps every finding."""
    rep = report()
    rep.add(diagnostic_records(diagnostics, source, rep.fmt), quiet)


def exit_for(status: str) -> int:
    return {"infeasible": EXIT_INFEASIBLE, "unsolved": EXIT_UNSOLVED}.get(status, EXIT_OK)


def show_summary(make: Callable[[], str], quiet: bool) -> None:
    """The human summary: computed only when shown, and never fatal (the artifact is
    already written by then)."""
    if quiet or not stderr_is_terminal() or not report().human:
        return
    try:
        text = make()
    except Exception as exc:  # noqa: BLE001 - a summary must not fail a finished command
        text = f"(no summary: {type(exc).__name__})"
    say(text, quiet)


def print_timings(timings: list[tuple[str, float]], enabled: bool) -> None:
    if enabled and report().human:
        for phase, secs in timings:
            sys.stderr.write(f"time: {phase:<16} {secs * 1000:9.1f} ms\n")


def _is_typer_exit(exc: BaseException) -> bool:
    # typer's own `Exit` (a RuntimeError) ends a command on purpose and must pass through.
    # Only a process that imported typer can raise one, so the fast launcher, which never
    # imports it, does not pay for the check.
    typer = sys.modules.get("typer")
    return typer is not None and isinstance(exc, typer.Exit)


def guarded(debug: bool, body: Callable[[], int], rep: Report | None = None) -> NoReturn:
    """The one place where exceptions become exit codes: an invalid input's problems and
    the call's own failures go into the call's report (`rep`, else the running one),
    which writes its one document as the call ends."""
    rep = rep if rep is not None else report()
    # One short-lived process over millions of acyclic objects: the cyclic collector's
    # repeated full scans cost more than the algorithms themselves (measured 2-4x).
    gc.disable()
    code = _exit_code(debug, body, rep)
    # SystemExit, not typer.Exit: click lets it through unchanged, and the fast launcher
    # (`app/launch.py`) runs commands without typer.
    raise SystemExit(rep.close(code))


def _exit_code(debug: bool, body: Callable[[], int], rep: Report) -> int:
    try:
        return body()
    except InputError as exc:
        rep.add(problem_records(exc, rep.fmt))
        return exc.exit_code
    except PlacementError as exc:
        rep.add([tool_record(str(exc), exc.exit_code)])
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours, and no traceback.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        rep.add([tool_record("interrupted", EXIT_INTERRUPTED)])
        return EXIT_INTERRUPTED
    except OSError as exc:
        # Reading the input or writing the output failed in the file system.
        where = exc.filename if exc.filename is not None else "<file>"
        rep.add([tool_record(f"{where}: {exc.strerror or exc}", EXIT_IO)])
        return EXIT_IO
    except Exception as exc:  # a bug: one line unless asked for more
        if _is_typer_exit(exc):
            return int(getattr(exc, "exit_code", 0))
        if debug:
            import traceback

            traceback.print_exc()
        message = (
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)"
        )
        rep.add([tool_record(message, EXIT_INTERNAL)])
        return EXIT_INTERNAL


def emit(art: dict[str, Any], output: str | None, fmt: str) -> None:
    """Render an artifact (`json` or `yaml`) and write it to `output` (atomically), or to
    stdout when `output` is None."""

    write_output(render_parts(art, fmt), output)


@contextmanager
def progress(quiet: bool) -> Iterator[Callable[[str], None] | None]:
    """A spinner on stderr naming the running phase (loading, each stage, writing), only
    when someone is looking: stderr a terminal and not --quiet. Yields the update
    function, or None (then nothing is drawn and nothing is imported)."""
    if quiet or not stderr_is_terminal() or not report().human:
        yield None
        return
    # Lazy: rich (~30 ms, measured), only for a person at a terminal.
    from rich.console import Console

    with Console(stderr=True).status("load", spinner="dots") as status:
        yield lambda phase: status.update(f"{phase}")


class Keeper:
    """Holds a command's large structures until the process exits. `launch.main` ends with
    `os._exit` and turns `enabled` on, so nothing is freed object by object (a tenth of
    a second or more on large plans, for memory the OS reclaims at once anyway). Called
    as a library (tests, `typer`'s runner) it keeps nothing.

    >>> k = Keeper(); k.keep([1]); k.kept
    []
    >>> k.enabled = True; k.keep([1]); k.kept
    [[1]]
    """

    def __init__(self) -> None:
        self.enabled = False
        self.kept: list[Any] = []

    def keep(self, obj: Any) -> None:
        if self.enabled:
            self.kept.append(obj)


KEEPER = Keeper()


def keep(obj: Any) -> None:
    """Keep `obj` alive until the process exits, when `launch.main` runs the process."""
    KEEPER.keep(obj)
