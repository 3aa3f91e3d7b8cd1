"""`placement tree INPUT`: the command's handler (its options: `app/commands.py`)."""

from __future__ import annotations

from typing import Any

from placement_cli.algorithms.tree import TreeOptions, load_tree, tree_artifact
from placement_cli.app.console import exit_for, say, warn_diagnostics
from placement_cli.core.io import dumps, write_output


def command(name: str, v: dict[str, Any]) -> int:
    """Place the tree's operators; write the artifact; exit by its status."""
    problem = load_tree(v["path"])
    options = TreeOptions(
        budget=v["budget"],
        expand_dag=v["expand_dag"],
        include_input=v["include_input"],
        time_limit=v["time_limit"],
    )
    art, summary = tree_artifact(problem, options)
    write_output(
        dumps(art, v["format"]), v["output"]
    )  # the tree artifact keeps its indented layout
    warn_diagnostics(
        art.get("diagnostics", []), v["quiet"], v.get("diagnostics", "text"), v["path"]
    )
    say(summary, v["quiet"])
    return exit_for(art["status"])
