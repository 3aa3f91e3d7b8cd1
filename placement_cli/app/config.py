"""Project configuration: defaults for a command's options from the project's files.

The first of `placement.toml` (the whole file) or `pyproject.toml` (its
`[tool.placement]` table) found in the input's directory or a directory above it (the
working directory's, for standard input) sets defaults for the options its keys name,
spelt as on the command line without the dashes:

    [tool.placement]
    method = "exact"
    time-limit = 20
    targets = "profiles/ours.yaml"   # lower's --targets (a path relative to the file)
    size-cap = 64
    split = "runs"
    format = "json"
    jobs = 4
    strict = true                    # --strict: every warning is an error (exit 3)
    db = "data/tpch.duckdb"          # the engine commands' --db (a path, as targets)
    threads = 1                      # and --pg, --engines, --repeat, --warmup,
    caches = "warm"                  # --forks, --caches

A key applies to every command that has that option and is ignored by the others. An
option given on the command line wins; `--no-config` ignores the files. Each input has
its own configuration: in a batch (`app/batch.py`) every file is configured from its
own directory upwards, so it gives the same bytes and exit code alone or among others.
`jobs`, a setting of the call rather than of an input, is taken from the working
directory's configuration. A key no command has, a value an option does not accept or
a file that is not TOML is invalid input (exit 3) of the inputs it configures, named
`FILE: key: message`.

An artifact records what was applied under `config` (`docs/format.md`): the file's name
(`placement.toml` or `pyproject.toml`, never its path, so the same project gives the
same bytes in any checkout and from any directory) and each setting as the file wrote
it (`targets` relative to the file), apart from `jobs`, which changes no result.

>>> from placement_cli.app.commands import command
>>> apply_config(command("solve"), {"method": "auto", "time_limit": 5.0}, {"method"},
...              {"method": "heuristic", "time-limit": 2}, "/p/placement.toml")
{'method': 'auto', 'time_limit': 2.0, 'config': {'file': 'placement.toml', 'settings': {'time_limit': 2.0}}}
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from placement_cli.app.commands import commands
from placement_cli.app.options import CALL_SETTINGS, LOWER, SOLVE, Command, Opt, settable
from placement_cli.core.errors import InputError, IOFailure, Problem
from placement_cli.core.io import STDIN

# `core.paths`, not `pathlib`: the same lexical parents and the same tests (~2.7 ms of
# start-up on Python 3.11, measured).
from placement_cli.core.paths import absolute, is_dir, is_file, joined, lineage, parent, pure
from placement_cli.core.paths import name as file_name

FILES = ("placement.toml", "pyproject.toml")
# Options a project may set, as their declarations mark them (the stages' on their
# options models); the others (inputs, outputs, flags) belong to one call. A key sets
# every command's option of that name. `tree`'s model marks none: it is not read here,
# which keeps it (a dataclass, ~2.5 ms) off every other command's start-up;
# `tests/test_options.py` holds it to that.
_SETTABLE_OPTIONS = (*SOLVE, *LOWER, *CALL_SETTINGS)
SETTABLE = settable(_SETTABLE_OPTIONS)
# Options whose value is a path: relative to the configuration file's directory.
_PATHS = settable(tuple(o for o in _SETTABLE_OPTIONS if o.path))


@cache
def _settable() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every setting and the path settings among them: `SETTABLE` and the engine
    commands' (`EngineOptions`), read only when a configuration file is found (the
    engine registry it reads is kept off every other command's start-up)."""
    # Lazy: the engine options and the engine registry (~4 ms, measured), only when a
    # configuration file is found.
    from placement_cli.app.options import model_options
    from placement_cli.engines.options import EngineOptions

    engine = model_options(EngineOptions)
    return (
        tuple(dict.fromkeys((*SETTABLE, *settable(engine)))),
        tuple(dict.fromkeys((*_PATHS, *settable(tuple(o for o in engine if o.path))))),
    )


# Settings of the call, not of its results: applied, never recorded in an artifact.
_UNRECORDED = ("jobs",)


def _shown(f: str) -> str:
    """A configuration file as messages name it: relative to the working directory
    when it is below it, else absolute."""
    rel = os.path.relpath(f)
    return f if rel.startswith("..") else rel


def find(start: str) -> tuple[dict[str, Any], str] | None:
    """The configuration table and its file, searching `start` and its parents
    (lexical: `..` is not resolved, as `Path.parents` does not)."""
    for d in lineage(start):
        for name in FILES:
            f = joined(d, name)
            if not is_file(f):
                continue
            import tomllib  # only when there is a file to read (start-up)

            shown = _shown(f)
            try:
                with open(f, encoding="utf-8") as fh:  # what `Path.read_text` does
                    doc = tomllib.loads(fh.read())
            except OSError as exc:
                raise IOFailure(f"{shown}: {exc.strerror or type(exc).__name__}") from None
            except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise InputError([Problem("", f"not a readable TOML file: {exc}")], shown) from None
            table = doc if name == "placement.toml" else doc.get("tool", {}).get("placement")
            if table is None:
                continue  # a pyproject.toml without [tool.placement]: look further up
            if not isinstance(table, dict):
                raise InputError([Problem("tool.placement", "must be a table")], shown)
            return table, shown
    return None


def start_dir(paths: list[str] | str | None) -> str:
    """Where the search starts: the (first) input's directory, or the working directory."""
    first = paths[0] if isinstance(paths, list) and paths else paths
    if not isinstance(first, str) or first == STDIN:
        return pure(os.getcwd())
    p = absolute(first)
    return p if is_dir(p) else parent(p)


def _value(o: Opt, raw: Any) -> Any:
    """A configuration value checked as the command line would check it; raises
    ValueError saying what was expected."""
    if o.choices:
        if raw not in o.choices:
            raise ValueError(f"expected one of {', '.join(o.choices)}, got {raw!r:.60}")
        return raw
    if o.kind == "bool":  # `strict = true`
        if not isinstance(raw, bool):
            raise ValueError(f"expected true or false, got {raw!r:.60}")
        return raw
    if o.kind == "str":
        if not isinstance(raw, str):
            raise ValueError(f"expected a string, got {raw!r:.60}")
        return raw
    if o.kind in ("int", "float") and not isinstance(raw, bool) and isinstance(raw, int | float):
        if o.kind == "int" and not isinstance(raw, int):
            raise ValueError(f"expected a whole number, got {raw!r:.60}")
        if o.minimum is not None and raw < o.minimum:
            raise ValueError(f"expected a number >= {o.minimum:g}, got {raw!r:.60}")
        return float(raw) if o.kind == "float" else raw
    raise ValueError(f"expected a {o.kind}, got {raw!r:.60}")


def apply_config(
    cmd: Command,
    values: dict[str, Any],
    given: set[str],
    table: dict[str, Any],
    source: str,
    only: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """`values` with every option the command line did not give taken from `table`, and
    under `config` what was taken and from which file (the artifacts record it: the
    file's name and the settings as written). `only`: the keys to apply (every one when
    None). Every problem of the table is an InputError naming `source` and the key."""
    out = dict(values)
    recorded: dict[str, Any] = {}
    problems: list[Problem] = []
    keys, paths = _settable()
    by_name = {f.lstrip("-"): o for o in cmd.options for f in o.flags if f.startswith("--")}
    for key, raw in table.items():
        if key not in keys:
            hint = "an option of a single call" if key in _known() else "no such option"
            problems.append(Problem(key, f"not a setting ({hint}); settable: {', '.join(keys)}"))
            continue
        o = by_name.get(key)
        if o is None or o.key in given or (only is not None and key not in only):
            continue
        try:
            value = _value(o, raw)
        except ValueError as exc:
            problems.append(Problem(key, str(exc)))
            continue
        out[o.key] = joined(parent(source), value) if key in paths else value
        if key not in _UNRECORDED:
            recorded[o.key] = value
    if problems:
        raise InputError(problems, source)
    if recorded:
        out["config"] = {"file": file_name(source), "settings": recorded}
    return out


def _known() -> set[str]:
    """Every option's name, without its dashes (building every command: only for a
    key that is not a setting)."""
    return {f.lstrip("-") for c in commands() for o in c.options for f in o.flags}


def configured(cmd: Command, values: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The values of a call on one input with the configuration found from that input
    upwards applied (none with `--no-config`)."""
    v = dict(values)
    if v.pop("no_config", False):
        return v
    many = cmd.many or (cmd.args[0] if cmd.args else None)
    found = find(start_dir(v.get(many.key) if many else None))
    if found is None:
        return v
    return apply_config(cmd, v, given, *found)


def batch_configured(cmd: Command, values: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The values of a batch call: its own settings (`jobs`) from the working
    directory's configuration, each input's left to that input (`configured`, per file).
    A problem of that file is left to the inputs it configures, which report it."""
    if values.get("no_config"):
        return values
    try:
        found = find(pure(os.getcwd()))
        if found is None:
            return values
        jobs = found[0].get("jobs")
        table = {} if jobs is None else {"jobs": jobs}
        got = apply_config(cmd, values, given, table, found[1], only=("jobs",))
    except (InputError, IOFailure):
        return values
    got.pop("config", None)
    return got
