"""The typer application, built from the declarations in `app/commands.py`.

typer is the authority on the command line: `--help`, `--version`, every usage error
and every command the fast launcher (`app/launch.py`) does not read itself. Each
command's parameters are made from its `Command` declaration, and its body hands the
values (choices as plain strings) to `app/dispatch.call`, as the launcher does.

>>> [c.name for c in application().registered_commands][:3]
['validate', 'lower', 'prune']
>>> [c.name for c in application("tree").registered_commands]
['tree']
"""

from __future__ import annotations

import inspect
import sys
from enum import Enum, StrEnum
from functools import cache
from typing import Annotated, Any

import typer

from placement_cli import version_line
from placement_cli.app.commands import GROUPS, NAMES, command, commands
from placement_cli.app.dispatch import call
from placement_cli.app.options import Command, Opt

# `\b` keeps click from reflowing the paragraph after it.
HELP = """\
Decide where each block of a compiled query program runs.

Each stage reads a plan file, a body file or any earlier stage's artifact, checks the
artifact's sections, runs what is missing, and writes its JSON artifact to stdout or -o
FILE. Options of every command: docs/cli.md.

Example pipeline:

\b
  placement prune plan.yaml | placement scc - | placement solve - | placement fuse - | placement islands -

\b
Exit codes: 0 ok, 1 internal error, 2 usage error, 3 invalid input,
4 no feasible placement, 5 stopped by the time or memory limit unsolved
(artifact still written for 4 and 5), 6 file-system error, 7 diff found
differences, 130 interrupted.
"""


_TYPES: dict[str, type] = {"str": str, "float": float, "int": int, "bool": bool}


def _annotation(o: Opt, callback: Any = None) -> tuple[Any, Any]:
    """The typer annotation and default of option `o` (`callback`: an eager option's)."""
    typ: Any = _TYPES[o.kind]
    default = o.default
    if o.choices:  # typer reads choices from an Enum
        choice: Any = _choice(o.choices)
        typ, default = choice, None if o.default is None else choice(o.default)
    if o.repeatable:
        typ = list[typ] | None
    elif o.default is None and o.kind != "bool":
        typ = typ | None
    extra: dict[str, Any] = {"help": o.help}
    if o.minimum is not None:
        extra["min"] = o.minimum
    if o.metavar is not None:
        extra["metavar"] = o.metavar
    if o.eager:
        extra.update(is_eager=True, callback=callback, expose_value=False)
    return Annotated[typ, typer.Option(*o.flags, **extra)], default


@cache
def _choice(choices: tuple[str, ...]) -> type[StrEnum]:
    """The Enum typer reads `choices` from: one per set of choices, shared by the options
    that offer it (58 options, 11 sets: an Enum class costs ~0.05 ms, measured, and
    typer builds every command for any one). Its name shows nowhere; its values do."""
    return StrEnum("_".join(choices), {c: c for c in choices})  # type: ignore[return-value]


def plain(value: Any) -> Any:
    """A value typer parsed, as the handlers get it: choices as strings, a repeatable
    option a list (None when not given).

    >>> plain(("a", "b")), plain(()), plain(3.0)
    (['a', 'b'], None, 3.0)
    """
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return list(value) or None
    return value


def _register(app: typer.Typer, cmd: Command, groups: dict[str, typer.Typer]) -> None:
    params = [
        inspect.Parameter(
            a.key,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[
                list[str]
                if a.many or a.several
                else (list[str] | None)
                if a.gather
                else str | None
                if a.optional
                else str,
                typer.Argument(metavar=a.usage, help=a.help),
            ],
            **({"default": None} if a.optional or a.gather else {}),
        )
        for a in cmd.args
    ]
    for o in cmd.options:
        annotation, default = _annotation(o, _version if o.key == "version" else None)
        params.append(
            inspect.Parameter(
                o.key, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )

    def body(ctx: typer.Context, **values: Any) -> None:
        # What the line set (not defaults): the project's configuration fills the rest.
        given = {k for k in values if _given(ctx.get_parameter_source(k))}
        call(cmd.name, {k: plain(v) for k, v in values.items()}, given)

    ctx_param = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    body.__signature__ = inspect.Signature([ctx_param, *params])  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in (ctx_param, *params)}
    body.__doc__ = cmd.summary
    group, _, sub = cmd.name.rpartition(" ")
    if group and group not in groups:
        # The commands named `GROUP SUB` are one typer app's, added on first use.
        groups[group] = typer.Typer(help=GROUPS[group], no_args_is_help=True, rich_markup_mode=None)
        app.add_typer(groups[group], name=group)
    (groups[group] if group else app).command(name=sub)(body)


def _given(source: Any) -> bool:
    """Whether click's ParameterSource says the line set the value (not a default)."""
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _version(value: bool) -> None:
    """`--version`: print it and end, before the command runs."""
    if value:
        sys.stdout.write(version_line())
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass


@cache
def application(name: str | None = None) -> typer.Typer:
    """The typer application: every command, or only the command (or the group of
    commands, `GROUPS`) `name`.

    A line that names a command (`placement lower BODY`, `placement solve --help`)
    prints and runs that command only, and typer builds every command it is given
    (~18 ms for all of them, measured): `launch.dispatch` asks for that one. Every
    other line (`--help`, a misspelt command, completion) gets them all, for the list
    and the suggestions; `tests/test_cli.py` holds each command's help and usage
    errors to the whole application's."""
    app = typer.Typer(
        help=HELP,
        add_completion=True,  # placement --install-completion (bash, zsh, fish, PowerShell)
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    groups: dict[str, typer.Typer] = {}
    chosen = commands() if name is None else tuple(c for c in commands_of(name))
    for cmd in chosen:
        _register(app, cmd, groups)
    return app


def commands_of(name: str) -> list[Command]:
    """The command `name`, or every command of the group `name` (`calibrate`)."""
    return [command(n) for n in NAMES if n == name or n.startswith(name + " ")]


def __getattr__(attr: str) -> typer.Typer:
    """`app`: the whole application, built when first asked for."""
    if attr == "app":
        return application()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
