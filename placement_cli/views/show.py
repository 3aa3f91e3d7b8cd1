"""`show`: pick the view, draw it in the asked format, fall back when Mermaid cannot.

Mermaid's renderers refuse large diagrams (see `mermaid.fits`); rather than emit one
that will not render, `render` steps down to the island-level view, then to the
per-target summary, and says so in a warning. DOT and text have no such limit.
"""

from __future__ import annotations

from collections.abc import Callable

from placement_cli.views.data import ViewData
from placement_cli.views.diagram import Diagram
from placement_cli.views.dot import to_dot
from placement_cli.views.mermaid import MAX_EDGES, MAX_TEXT, fits, to_mermaid
from placement_cli.views.show_cfg import cfg_diagram, islands_diagram, targets_diagram
from placement_cli.views.show_graph import graph_diagram
from placement_cli.views.text import TextTable, cfg_table, graph_table, islands_table

VIEWS = ("cfg", "islands", "graph")
FORMATS = ("dot", "mermaid", "text")

DIAGRAMS: dict[str, Callable[[ViewData], Diagram]] = {
    "cfg": cfg_diagram,
    "islands": islands_diagram,
    "graph": graph_diagram,
    "targets": targets_diagram,
}
TABLES: dict[str, Callable[[ViewData], TextTable]] = {
    "cfg": cfg_table,
    "islands": islands_table,
    "graph": graph_table,
}
# Above this many nodes a drawing cannot be read: fitted to a screen its labels are
# specks, at full size it is tens of thousands of pixels tall (a 1,000-block cfg is
# clipped by Graphviz's 32,767-pixel PNG limit; 100 blocks are 6,700 pixels tall and
# still read when scrolled).
READABLE = {"cfg": 200, "islands": 100, "graph": 100}

# What each view falls back to when its Mermaid text is too large.
FALLBACK = {"cfg": "islands", "graph": "islands", "islands": "targets"}


def size_warning(v: ViewData, view: str) -> str | None:
    """Say that a view is too large to read, and offer the coarser one."""
    limit = READABLE.get(view)
    if limit is None:
        return None
    if view == "cfg":
        n = v.g.n_blocks
        if n <= limit:
            return None
        k = len(v.islands)
        coarser = (
            f"--view islands draws its {k} islands instead"
            if k <= READABLE["islands"]
            else f"its {k} islands are too many as well: --format text lists them as a table"
        )
        return f"the cfg view has {n} blocks, too many to read in one drawing (above {limit}); {coarser}"
    n = len(v.islands) + len(
        [
            x
            for x in v.sections.get("islands", {}).get("graph", {}).get("nodes", [])
            if x.get("kind") == "data"
        ]
    )
    if n <= limit:
        return None
    return (
        f"the {view} view has {n} nodes, too many to read in one drawing (above {limit}); "
        "--format text lists them as a table"
    )


def render(v: ViewData, view: str, fmt: str) -> tuple[str, list[str]]:
    """The view's text in `fmt` (dot or mermaid) and the warnings to print.

    Text tables are rendered by the caller (`text.plain` or `text.rich_print`),
    since only the caller knows whether it writes to a terminal."""
    too_big = size_warning(v, view)
    if fmt == "dot":
        return to_dot(DIAGRAMS[view](v)), [too_big] if too_big else []
    warnings: list[str] = []
    current = view
    while True:
        text, n_edges = to_mermaid(DIAGRAMS[current](v))
        if fits(text, n_edges) or current not in FALLBACK:
            if not fits(text, n_edges):
                warnings.append(
                    f"the {current} view still exceeds Mermaid's limits; use --format dot"
                )
            elif current == view and too_big:
                warnings.append(too_big)
            return text, warnings
        nxt = FALLBACK[current]
        warnings.append(
            f"the {current} view has {n_edges} edges and {len(text)} characters, above Mermaid's default "
            f"limits ({MAX_EDGES} edges, {MAX_TEXT} characters): showing the {nxt} view instead "
            "(--format dot has no limit)"
        )
        current = nxt
