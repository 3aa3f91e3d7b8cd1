"""The process entry point: plain pipeline commands start without typer.

A piped stage is a whole process, and most of a small stage's time was start-up:
importing typer and its click costs about 60 ms of a 0.2 s `placement solve` on a
300-block plan, paid again by every stage of a pipe. So `main` first tries to read the
command line itself, for the pipeline commands only (`validate`, the five stages and
`run`) and only in their plain, valid forms: known options spelled in full (`--name
value`, `--name=value`, `-o value`, `-q`), values that need no conversion beyond a
choice or a non-negative decimal number or whole number, the command's arguments (one
input path or more). Anything
else — `--help`, `--version` with more on the line, an unknown or misspelt option, a
missing or odd value, bundled short flags, `--`, another command — goes to typer
unchanged, which stays the one authority on the command line: its help, its usage
errors and every command. `placement --version` alone is answered by `main` before
anything is imported, with the line typer's `--version` prints (`version_line`).

A line typer refuses still gets the report `--diagnostics` asks for (read from the
line before parsing it: `report_options`): typer's usage error becomes the report's
one record, as the launcher's own usage errors do.

The options it knows are the ones `app/commands.py` gives each command (the same declarations
typer's commands are built from), and both paths hand the same values to the same
handler (`app/dispatch.py`); `tests/test_launch.py` holds the two to each other.

>>> name, values, given = fast_call(["solve", "plan.json", "-o", "out.json", "--time-limit", "2"])
>>> values["time_limit"], sorted(given)
(2.0, ['output', 'time_limit'])
>>> fast_call(["solve", "--help"]) is None, fast_call(["solve", "a", "b"])[1]["path"]
(True, ['a', 'b'])
"""

from __future__ import annotations

import gc
import os
import sys

from placement_cli import version_line

# `typing.TYPE_CHECKING` without importing `typing` (~2 ms, measured): type checkers
# read any constant of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from placement_cli.app.options import Command, Opt

# Nothing else is imported at the top: `placement --version` imports this module and
# `placement_cli` only (docs/startup.md). A command line that runs something imports
# what it runs, in `fast_call` and `dispatch`.


def _decimal(value: str) -> bool:
    """Whether `value` is a plain non-negative decimal, what click's FloatRange(min=0)
    accepts and converts exactly like float(): ASCII digits with at most one point, a
    digit on at least one side of it. Exponents, signs, "inf" and "nan" go to typer.

    >>> [_decimal(v) for v in ("2", ".5", "7.", "1.2.3", ".", "1e3", "-1", "٣")]
    [True, True, True, False, False, False, False, False]
    """
    whole, _, fraction = value.partition(".")
    digits = whole + fraction
    return digits.isascii() and digits.isdigit()


def _convert(o: Opt, value: str) -> Any:
    """`value` as typer would hand it to the handler, or None when typer must judge it."""
    if o.choices:
        return value if value in o.choices else None
    if o.kind == "str":
        return value
    if o.kind == "float" and _decimal(value):
        number = float(value)
        return number if o.minimum is None or number >= o.minimum else None
    if o.kind == "int" and value.isdigit() and value.isascii():
        whole = int(value)
        return whole if o.minimum is None or whole >= o.minimum else None
    return None  # anything else: typer's to read


def _parse(cmd: Command, tokens: list[str]) -> tuple[dict[str, Any], set[str]] | None:
    """The values of a plain command line and the keys it set, or None."""
    by_flag = {f: o for o in cmd.options for f in o.flags}
    got: dict[str, Any] = {}
    inputs: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if not tok:
            return None  # an empty input name: typer's to judge
        if tok == "-" or not tok.startswith("-"):
            inputs.append(tok)
            continue
        name, eq, attached = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        o = by_flag.get(name)
        if o is None or o.eager:
            return None  # unknown, misspelt, bundled, --help, --, --version: typer's
        if o.kind == "bool":
            if eq:
                return None
            got[o.key] = True
            continue
        if eq:
            value = attached
        elif i < len(tokens):
            value = tokens[i]
            i += 1
        else:
            return None
        if not value or value.startswith("-") or (o.key in got and not o.repeatable):
            return None
        converted = _convert(o, value)
        if converted is None:
            return None
        if o.repeatable:
            got.setdefault(o.key, []).append(converted)
        else:
            got[o.key] = converted
    many = cmd.many
    if many is not None:
        if not inputs or len(cmd.args) != 1:
            return None
        return {**cmd.defaults(), **got, many.key: inputs}, set(got)
    if len(inputs) != len(cmd.args):
        return None
    args = {a.key: v for a, v in zip(cmd.args, inputs, strict=True)}
    return {**cmd.defaults(), **got, **args}, set(got)


def fast_call(argv: list[str]) -> tuple[str, dict[str, Any], set[str]] | None:
    """The command, its values and the keys the line set, for a plain pipeline command
    line (`argv` without the program name), or None when typer must read it."""
    # Lazy: the declarations of the commands and the stage registry (~8 ms with
    # msgspec, measured), which `--version` does not need.
    from placement_cli.app.commands import command
    from placement_cli.pipeline.registry import STAGES

    # The commands the launcher may run itself: the ones a pipe or a build script calls.
    if not argv or argv[0] not in ("validate", *STAGES, "run"):
        return None
    parsed = _parse(command(argv[0]), argv[1:])
    return None if parsed is None else (argv[0], *parsed)


def report_options(argv: list[str]) -> tuple[str | None, str | None]:
    """`--diagnostics` and `--diagnostics-file` as a line gives them, read before the
    line is parsed: a line typer refuses still gets its report in the format asked for.

    >>> report_options(["run", "x", "--diagnostics=sarif", "--diagnostics-file", "r.sarif"])
    ('sarif', 'r.sarif')
    >>> report_options(["run", "--", "--diagnostics", "json"])
    (None, None)
    """
    found: dict[str, str] = {}
    for i, tok in enumerate(argv):
        if tok == "--":
            break
        name, eq, value = tok.partition("=")
        if name in ("--diagnostics", "--diagnostics-file"):
            if not eq:
                value = argv[i + 1] if i + 1 < len(argv) else ""
            if value:
                found[name] = value
    return found.get("--diagnostics"), found.get("--diagnostics-file")


def dispatch(argv: list[str]) -> None:
    """Run one command line (without the program name); ends by raising SystemExit."""
    fast = fast_call(argv)
    # Lazy: the handlers' dispatch and the report (~5 ms, measured, with pathlib), only
    # for a line that runs something.
    from placement_cli.app.dispatch import call
    from placement_cli.app.report import Report, tool_record
    from placement_cli.core.errors import EXIT_USAGE, escape

    if fast is not None:
        call(*fast)
    # Lazy: typer and its click (~60 ms, measured: docs/startup.md), only for what the
    # launcher does not read itself.
    from placement_cli.app.cli import application
    from placement_cli.app.commands import GROUPS, NAMES

    # A line that names a command (or a group of them) prints and runs that command only
    # (`application`).
    named = argv[0] if argv and (argv[0] in NAMES or argv[0] in GROUPS) else None
    app = application(named)

    fmt, file = report_options(argv)
    rep = Report.for_call(fmt, file)
    if rep.stream:
        app(args=argv, prog_name="placement")  # typer's own usage errors, as always
        return
    # A report was asked for: typer's usage error becomes its one record (a command
    # that runs writes its own report: `dispatch.call`).
    try:
        code = app(args=argv, prog_name="placement", standalone_mode=False)
    except SystemExit:
        raise
    except Exception as exc:
        message = getattr(exc, "format_message", None)
        if message is None:
            raise
        if rep.human:
            exc.show()  # type: ignore[attr-defined]  # typer's usage text, on stderr
        rep.add([tool_record(escape(message()), EXIT_USAGE)])
        raise SystemExit(rep.close(int(getattr(exc, "exit_code", EXIT_USAGE)))) from None
    # --help, --version: nothing ran, and the report says so.
    raise SystemExit(rep.close(code if isinstance(code, int) else 0))


def main() -> None:
    """`placement`: run the command line, flush, and leave at once (see `console.Keeper`).

    `placement --version` alone is answered here, as typer answers it (`cli._version`),
    without building the command line it does not print."""
    argv = sys.argv[1:]
    code = 0
    # click answers a completion request (its variable set) before any option.
    if argv == ["--version"] and "_PLACEMENT_COMPLETE" not in os.environ:
        sys.stdout.write(version_line())
    else:
        # The cyclic collector is off for the whole command (`console.guarded`); off from
        # here, it does not scan the imports' objects either: 22 collections, ~3 ms of a
        # 7-block `solve` (measured with gc.callbacks, median of 9 processes).
        gc.disable()
        # Lazy: msgspec (~7 ms, measured, without `typing_extensions`: core/start.py),
        # first, before any module of the command imports it.
        from placement_cli.core.start import import_msgspec

        import_msgspec()
        # Lazy: the console (~4 ms, measured, with the report and pathlib), only for a
        # line that runs something.
        from placement_cli.app.console import KEEPER

        KEEPER.enabled = True
        try:
            dispatch(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code)
