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
# What each view falls back to when its Mermaid text is too large.
FALLBACK = {"cfg": "islands", "graph": "islands", "islands": "targets"}


def render(v: ViewData, view: str, fmt: str) -> tuple[str, list[str]]:
    """The view's text in `fmt` (dot or mermaid) and the warnings to print.

    Text tables are rendered by the caller (`text.plain` or `text.rich_print`),
    since only the caller knows whether it writes to a terminal."""
    if fmt == "dot":
        return to_dot(DIAGRAMS[view](v)), []
    warnings: list[str] = []
    current = view
    while True:
        text, n_edges = to_mermaid(DIAGRAMS[current](v))
        if fits(text, n_edges) or current not in FALLBACK:
            if not fits(text, n_edges):
                warnings.append(
                    f"the {current} view still exceeds Mermaid's limits; use --format dot"
                )
            return text, warnings
        nxt = FALLBACK[current]
        warnings.append(
            f"the {current} view has {n_edges} edges and {len(text)} characters, above Mermaid's default "
            f"limits ({MAX_EDGES} edges, {MAX_TEXT} characters): showing the {nxt} view instead "
            "(--format dot has no limit)"
        )
        current = nxt
