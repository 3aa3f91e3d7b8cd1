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

A key applies to every command that has that option and is ignored by the others. An
option given on the command line wins; `--no-config` ignores the files. A key no command
has, or a value an option does not accept, is a usage error (exit 2) naming the file.

>>> from placement_cli.app.commands import command
>>> apply_config(command("solve"), {"method": "auto", "time_limit": 5.0}, {"method"},
...              {"method": "heuristic", "time-limit": 2}, "placement.toml")
{'method': 'auto', 'time_limit': 2.0, 'config': {'file': 'placement.toml', 'settings': {'time_limit': 2.0}}}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from placement_cli.app.commands import commands
from placement_cli.app.options import Command, Opt
from placement_cli.core.errors import UsageError
from placement_cli.core.io import STDIN

FILES = ("placement.toml", "pyproject.toml")
# Options a project may set; the others (inputs, outputs, flags) belong to one call.
SETTABLE = ("method", "time-limit", "targets", "size-cap", "split", "format", "jobs", "strict")
# Options whose value is a path: relative to the configuration file's directory.
_PATHS = ("targets",)


def find(start: Path) -> tuple[dict[str, Any], str] | None:
    """The configuration table and its file, searching `start` and its parents."""
    for d in (start, *start.parents):
        for name in FILES:
            f = d / name
            if not f.is_file():
                continue
            import tomllib  # only when there is a file to read (start-up)

            try:
                doc = tomllib.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise UsageError(f"{f}: not a readable TOML file: {exc}") from None
            table = doc if name == "placement.toml" else doc.get("tool", {}).get("placement")
            if table is None:
                continue  # a pyproject.toml without [tool.placement]: look further up
            if not isinstance(table, dict):
                raise UsageError(f"{f}: [tool.placement] must be a table")
            return table, str(f)
    return None


def start_dir(paths: list[str] | str | None) -> Path:
    """Where the search starts: the first input's directory, or the working directory."""
    first = paths[0] if isinstance(paths, list) and paths else paths
    if not isinstance(first, str) or first == STDIN:
        return Path.cwd()
    p = Path(first).absolute()
    return p if p.is_dir() else p.parent


def _value(o: Opt, raw: Any, where: str) -> Any:
    """A configuration value checked as the command line would check it."""
    if o.choices:
        if raw not in o.choices:
            raise UsageError(f"{where}: expected one of {', '.join(o.choices)}, got {raw!r:.60}")
        return raw
    if o.kind == "bool":  # `strict = true`
        if not isinstance(raw, bool):
            raise UsageError(f"{where}: expected true or false, got {raw!r:.60}")
        return raw
    if o.kind == "str":
        if not isinstance(raw, str):
            raise UsageError(f"{where}: expected a string, got {raw!r:.60}")
        return raw
    if o.kind in ("int", "float") and not isinstance(raw, bool) and isinstance(raw, int | float):
        if o.kind == "int" and not isinstance(raw, int):
            raise UsageError(f"{where}: expected a whole number, got {raw!r:.60}")
        if o.minimum is not None and raw < o.minimum:
            raise UsageError(f"{where}: expected a number >= {o.minimum:g}, got {raw!r:.60}")
        return float(raw) if o.kind == "float" else raw
    raise UsageError(f"{where}: expected a {o.kind}, got {raw!r:.60}")


def apply_config(
    cmd: Command, values: dict[str, Any], given: set[str], table: dict[str, Any], source: str
) -> dict[str, Any]:
    """`values` with every option the command line did not give taken from `table`, and
    under `config` what was taken and from where (the artifacts record it)."""
    known = {f.lstrip("-") for c in commands() for o in c.options for f in o.flags}
    out = dict(values)
    applied: dict[str, Any] = {}
    by_name = {f.lstrip("-"): o for o in cmd.options for f in o.flags if f.startswith("--")}
    for key, raw in table.items():
        where = f"{source}: {key}"
        if key not in SETTABLE:
            hint = "an option of a single call" if key in known else "no such option"
            raise UsageError(f"{where}: not a setting ({hint}); settable: {', '.join(SETTABLE)}")
        o = by_name.get(key)
        if o is None or o.key in given:
            continue
        value = _value(o, raw, where)
        if key in _PATHS:
            value = str(Path(source).parent / value)
        out[o.key] = applied[o.key] = value
    if applied:
        out["config"] = {"file": source, "settings": applied}
    return out


def configured(cmd: Command, values: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The values with the project's configuration applied (none with `--no-config`)."""
    v = dict(values)
    if v.pop("no_config", False):
        return v
    many = cmd.many or (cmd.args[0] if cmd.args else None)
    found = find(start_dir(v.get(many.key) if many else None))
    if found is None:
        return v
    return apply_config(cmd, v, given, *found)
