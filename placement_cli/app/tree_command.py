"""`placement tree INPUT`: the command's handler (its options: `app/commands.py`)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Any

from placement_cli.app.console import exit_for, say, warn_diagnostics
from placement_cli.app.values import Common, model_values
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import STDIN, dumps, source_name, write_output
from placement_cli.ir.tree.options import TreeOptions
from placement_cli.ir.tree.read import load_tree
from placement_cli.pipeline.kinds import HEAD, foreign, kind_of, read_input, stdin_again
from placement_cli.pipeline.tree_artifact import tree_artifact


def _load(path: str) -> Any:
    """The tree file; a file of another kind (a plan, a body, MIR text, a pipeline
    artifact, a profile) is one line saying what it is and which command reads it."""
    try:
        with stdin_again(path):
            return load_tree(path)
    except InputError:
        line = foreign("tree", read_input(path))
        if line is not None:
            raise InputError([Problem("", line)], source_name(path)) from None
        raise


def _head(path: str) -> bytes:
    if path == STDIN:
        return read_input(path)[:HEAD]
    with open(path, "rb") as fh:
        return fh.read(HEAD)


def recorded_path(path: str, output: str | None, ref: dict[str, Any]) -> str | None:
    """Where the tree file is, as the artifact records it (`input_ref.path`): relative to
    the artifact's folder when it is written to a file (`-o`), else to the current
    directory; `/`-separated, never absolute, so the same project gives the same bytes
    wherever it is. None for standard input. A tree artifact read back names the tree
    file it recorded (found as `validate` finds it: from the artifact's folder, else
    from the current directory), rebased onto the new artifact."""
    if path == STDIN:
        return None
    target = Path(path)
    if kind_of(_head(path)) == "tree-artifact":
        old = ref.get("path")
        if not isinstance(old, str) or not old:
            return None
        found = next((c for c in (target.parent / old, Path(old)) if c.is_file()), None)
        if found is None:
            return None
        target = found
    base = Path(output).parent if output not in (None, STDIN) else Path()
    try:
        rel = os.path.relpath(os.path.abspath(target), os.path.abspath(base))
    except ValueError:  # another drive (Windows): no relative path exists
        return None
    return PurePath(rel).as_posix()


def command(name: str, v: dict[str, Any]) -> int:
    """Place the tree's operators; write the artifact; exit by its status."""
    c = Common.of(v)
    if v.get("transfer") is None:
        problem = _load(c.path)
    else:  # the profile's models replace the file's before the tree is checked
        # Lazy: the profile's pydantic model and the fit's module (~250 ms, measured),
        # which a plain tree file's run never imports (docs/load.md).
        from placement_cli.app.tree_transfer import load_applied

        problem, pref, found = load_applied(c.path, v["transfer"])
    art, summary = tree_artifact(problem, model_values(TreeOptions, v))
    if v.get("transfer") is not None:
        # Lazy: loaded above already, with --transfer (~250 ms otherwise, measured).
        from placement_cli.app.tree_transfer import record

        record(art, pref, found)
    ref = art["tree"]["input_ref"]
    where = recorded_path(c.path, c.output, ref)
    ref.pop("path", None)
    if where is not None:
        ref["path"] = where
    write_output(dumps(art, c.format), c.output)  # the tree artifact keeps its indented layout
    warn_diagnostics(art.get("diagnostics", []), c.quiet, c.diagnostics, c.path)
    say(summary, c.quiet)
    return exit_for(art["status"])
