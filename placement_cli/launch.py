"""The process entry point: plain pipeline commands start without typer.

A piped stage is a whole process, and most of a small stage's time was start-up:
importing typer and its click costs about 60 ms of a 0.2 s `placement solve` on a
300-block plan, paid again by every stage of a pipe. So `main` first tries to read the
command line itself, for the pipeline commands only (`validate`, the five stages and
`run`) and only in their plain, valid forms: known options spelled in full (`--name
value`, `--name=value`, `-o value`, `-q`), values that need no conversion beyond a
choice or a non-negative decimal number, exactly one input. Anything else — `--help`,
`--version`, an unknown or misspelt option, a missing or odd value, bundled short
flags, `--`, another command — goes to typer unchanged, which stays the one authority
on the command line: its help, its usage errors and every command. Both paths call the
same command bodies (`stagecmd.py`) with the same values; `tests/test_launch.py` holds
the parser to typer's own on every form it accepts.

>>> fast_call(["solve", "plan.json", "-o", "out.json", "--time-limit", "2"]).args
('solve', 'plan.json', 'out.json', 'json', False, {'method': 'auto', 'time_limit': 2.0, 'pin': None, 'forbid': None, 'pins_file': None, 'warm_start': None}, False)
>>> fast_call(["solve", "--help"]) is None, fast_call(["solve", "a", "b"]) is None
(True, True)
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any

from placement_cli.stages import REGISTRY

# One name per option, as the typer commands declare them (cli.py). A value option maps
# to its keyword; a flag maps to (keyword, True).
_COMMON_VALUES = {"--output": "output", "-o": "output", "--format": "format"}
_SOLVE_VALUES = {"--method": "method", "--time-limit": "time_limit", "--pin": "pin", "--forbid": "forbid",
                 "--pins": "pins_file", "--warm-start": "warm_start"}
_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--debug": "debug", "--timings": "timings"}
_REPEATABLE = {"pin", "forbid"}
_CHOICES = {"format": ("json", "yaml"), "method": ("auto", "exact", "heuristic")}
# What click's FloatRange(min=0) accepts and converts exactly like float(): plain
# non-negative decimals. Exponents, signs, "inf" and "nan" go to typer.
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")

_STAGES = {info.name: info.solver_options for info in REGISTRY}


@dataclass(frozen=True, slots=True)
class FastCall:
    """A command line the launcher runs itself: the command and its body's arguments."""

    command: str  # "validate", a stage name, or "run"
    args: tuple[Any, ...]
    debug: bool


def _options(command: str) -> tuple[dict[str, str], dict[str, str]] | None:
    """The value options and flags `command` takes, or None when the launcher leaves it to typer."""
    if command == "validate":
        return {}, _FLAGS
    if command == "run":
        return {"--out-dir": "out_dir", "--format": "format", "--method": "method", "--time-limit": "time_limit"}, _FLAGS
    if command in _STAGES:
        values = {**_COMMON_VALUES, **_SOLVE_VALUES} if _STAGES[command] else dict(_COMMON_VALUES)
        return values, _FLAGS
    return None


def _parse(command: str, tokens: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The input and the options of a plain command line, or None."""
    known = _options(command)
    if known is None:
        return None
    values, flags = known
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
        if name in flags and not eq:
            got[flags[name]] = True
            continue
        if name not in values:
            return None  # unknown, misspelt, bundled, --help, --: typer says what it is
        key = values[name]
        if eq:
            value = attached
        elif i < len(tokens):
            value = tokens[i]
            i += 1
        else:
            return None
        if not value or value.startswith("-") or (key in got and key not in _REPEATABLE):
            return None
        if key in _CHOICES and value not in _CHOICES[key]:
            return None
        if key == "time_limit":
            if not _DECIMAL.match(value):
                return None
            got[key] = float(value)
        elif key in _REPEATABLE:
            got.setdefault(key, []).append(value)
        else:
            got[key] = value
    if len(inputs) != 1:
        return None
    return inputs[0], got


def fast_call(argv: list[str]) -> FastCall | None:
    """The call for a plain pipeline command line (`argv` without the program name), or
    None when typer must read it."""
    if not argv:
        return None
    command = argv[0]
    parsed = _parse(command, argv[1:])
    if parsed is None:
        return None
    path, o = parsed
    quiet, debug, timings = o.get("quiet", False), o.get("debug", False), o.get("timings", False)
    fmt = o.get("format", "json")
    solver = {"method": o.get("method", "auto"), "time_limit": o.get("time_limit", 5.0),
              "pin": o.get("pin"), "forbid": o.get("forbid"), "pins_file": o.get("pins_file"),
              "warm_start": o.get("warm_start")}
    if command == "validate":
        return FastCall(command, (path, quiet, timings), debug)
    if command == "run":
        return FastCall(command, (path, o.get("out_dir", "out"), fmt, quiet, solver, timings), debug)
    return FastCall(command, (command, path, o.get("output"), fmt, quiet, solver if _STAGES[command] else {},
                              timings), debug)


def _body(call: FastCall) -> Any:
    from placement_cli import stagecmd

    if call.command == "validate":
        return lambda: stagecmd.validate(*call.args)
    if call.command == "run":
        path, out_dir, fmt, quiet, solver, timings = call.args
        return lambda: stagecmd.run_all(path, out_dir, fmt, quiet,
                                        stagecmd.solve_options(solver["method"], solver["time_limit"]), timings)
    name, path, output, fmt, quiet, solver, timings = call.args

    def body() -> int:
        options = stagecmd.solve_options(**solver) if solver else {}
        return stagecmd.stage(name, path, output, fmt, quiet, options, timings)

    return body


def dispatch(argv: list[str]) -> None:
    """Run one command line (without the program name); ends by raising SystemExit."""
    from placement_cli.console import guarded

    call = fast_call(argv)
    if call is not None:
        guarded(call.debug, _body(call))
    from placement_cli.cli import app

    app(args=argv, prog_name="placement")


def main() -> None:
    """`placement`: run the command line, flush, and leave at once (see `console.Keeper`)."""
    from placement_cli.console import KEEPER

    KEEPER.enabled = True
    try:
        dispatch(sys.argv[1:])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code)
