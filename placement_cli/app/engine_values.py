"""The engine commands' options as their handlers read them: `EngineOptions`
(`engines/options.py`) made once from the values, and the check that every engine a
call uses has its source, worded with the options that give one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from placement_cli.app.values import model_values
from placement_cli.core.errors import UsageError
from placement_cli.engines.options import EngineOptions, parse_engines
from placement_cli.engines.registry import engine


def engine_options(v: Mapping[str, Any]) -> EngineOptions:
    """The engine options among a command's values, as the typed record."""
    try:
        return model_values(EngineOptions, v, engines=parse_engines(v.get("engines")))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def need_sources(opts: EngineOptions, engines: Iterable[str], command: str) -> None:
    """A usage error naming the extra when a package of one of `engines` is missing,
    else the option that gives the first of them without a source (`--db FILE` or
    `--pg DSN`), or a `--db` that is not a file."""
    sources = opts.sources()
    chosen = [engine(name) for name in engines]
    for eng in chosen:
        eng.modules(command)
    for eng in chosen:
        name = eng.name
        if not eng.has_source(sources):
            flag = "--db FILE" if eng.source == "db" else "--pg DSN"
            raise UsageError(f"engine {name} needs {flag}")
    if opts.db is not None and not Path(opts.db).is_file():
        raise UsageError(f"--db {opts.db!r:.200}: no such file")
