"""What every view reads: the plan, the assignment, the islands, the loops, in index form.

`prepare` loads a plan or an artifact and runs whatever stages the view needs and the
input lacks, through the in-memory API (`pipeline.run.load`, `Run`); the sections are then
read by their documented field names, so a change of the artifact's byte format does
not reach the views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from placement_cli.core.io import num
from placement_cli.frontends.lower.options import LowerOptions
from placement_cli.ir.graph import Graph
from placement_cli.pipeline.run import STAGES, Loaded, Run, load

UNASSIGNED = -1

# One fixed colour per target, by the target's position in the plan (ColorBrewer
# "Paired": a light fill and a dark border of the same hue, colour-blind friendlier
# than a rainbow). Past the sixth target the hues repeat with a dashed border (`style`).
FILLS = ("#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99")
BORDERS = ("#1f78b4", "#33a02c", "#e31a1c", "#ff7f00", "#6a3d9a", "#b15928")
NO_TARGET_FILL = "#eeeeee"
NO_TARGET_BORDER = "#999999"


def fill_of(t: int) -> str:
    """The fill colour of target position `t` (-1: no target).

    >>> fill_of(0), fill_of(6), fill_of(-1)
    ('#a6cee3', '#a6cee3', '#eeeeee')
    """
    return NO_TARGET_FILL if t < 0 else FILLS[t % len(FILLS)]


def border_of(t: int) -> str:
    """The border colour of target position `t` (-1: no target).

    >>> border_of(1)
    '#33a02c'
    """
    return NO_TARGET_BORDER if t < 0 else BORDERS[t % len(BORDERS)]


def fmt_num(x: float | None) -> str:
    """A cost as people read it: integral floats without `.0`, None as `-`.

    >>> fmt_num(4.0), fmt_num(2.5), fmt_num(None)
    ('4', '2.5', '-')
    """
    if x is None:
        return "-"
    return str(num(float(x)))


@dataclass(frozen=True)
class IslandView:
    id: str
    target: int
    members: tuple[int, ...]  # original blocks, input order
    requires: tuple[str, ...]
    provides: tuple[str, ...]
    cost: float  # sum of the members' block costs on the island's target


@dataclass(frozen=True)
class ViewData:
    """A placement as the views read it. Blocks and targets are indices of `g`."""

    source: str
    kind: str  # the latest stage present
    g: Graph
    sections: dict[str, Any]
    status: str
    assignment: tuple[int, ...]  # target per block, UNASSIGNED for dead blocks / infeasible
    islands: tuple[IslandView, ...]
    island_of: tuple[int, ...]  # block -> island position, -1 when in none
    loop_of: tuple[str | None, ...]  # block -> id of its loop component (cyclic or self-loop)
    diagnostics: tuple[dict[str, Any], ...]

    @property
    def total(self) -> float | None:
        cost = self.sections.get("solve", {}).get("cost")
        return None if not isinstance(cost, dict) else cost.get("total")

    def is_cut(self, e: int) -> bool:
        """A cut edge joins two blocks placed on different targets."""
        u, v = self.g.edge_src[e], self.g.edge_dst[e]
        a = self.assignment
        return a[u] != UNASSIGNED and a[v] != UNASSIGNED and a[u] != a[v]

    def edge_cost(self, e: int) -> float | None:
        """The transition cost of edge `e` under the assignment (None when unassigned)."""
        u, v = self.g.edge_src[e], self.g.edge_dst[e]
        a = self.assignment
        if a[u] == UNASSIGNED or a[v] == UNASSIGNED:
            return None
        return self.g.edge_mat[e].get(a[u], a[v])


def latest_stage(sections: dict[str, Any]) -> str | None:
    """The last pipeline stage whose section is present (None for a plan).

    >>> latest_stage({"prune": {}, "scc": {}}), latest_stage({})
    ('scc', None)
    """
    present = [s for s in STAGES if s in sections]
    return present[-1] if present else None


def run_to(loaded: Loaded, stage: str, options: dict[str, Any] | None = None) -> Run:
    """Run every stage up to `stage` that the input lacks."""
    run = Run(loaded, options or {})
    run.run(stage)
    return run


def prepare(
    path: str,
    options: dict[str, Any] | None = None,
    lower: LowerOptions | None = None,
    source_format: str | None = None,
) -> ViewData:
    """Load `path` (plan, body, MIR text or artifact; `lower` and `source_format` as
    `pipeline.loading.load` takes them) and complete it up to the islands."""
    loaded = load(path, lower, source_format)
    kind = latest_stage(loaded.sections) or "plan"
    run = run_to(loaded, "islands", options)
    return from_run(run, loaded.source, kind)


def from_run(run: Run, source: str, kind: str) -> ViewData:
    g = run.g
    sections = run.sections
    found = run.assignment()
    # No placement (infeasible or unsolved): every block is drawn without a target.
    assignment = (UNASSIGNED,) * g.n_blocks if found is None or run.status != "ok" else tuple(found)
    islands = _islands(g, sections.get("islands", {}), assignment)
    island_of = [-1] * g.n_blocks
    for i, isl in enumerate(islands):
        for b in isl.members:
            island_of[b] = i
    return ViewData(
        source=source,
        kind=kind,
        g=g,
        sections=sections,
        status=run.status,
        assignment=assignment,
        islands=islands,
        island_of=tuple(island_of),
        loop_of=_loops(g, sections.get("scc", {})),
        diagnostics=tuple(run.diagnostics),
    )


def _islands(
    g: Graph, section: dict[str, Any], assignment: tuple[int, ...]
) -> tuple[IslandView, ...]:
    out = []
    for isl in section.get("islands", []):
        members = tuple(g.index[b] for b in isl.get("members", []) if b in g.index)
        t = g.targets.index(isl["target"]) if isl.get("target") in g.targets else UNASSIGNED
        cost = sum(g.cost[b][assignment[b]] for b in members if assignment[b] != UNASSIGNED)
        out.append(
            IslandView(
                id=str(isl.get("id")),
                target=t,
                members=members,
                requires=tuple(isl.get("requires", [])),
                provides=tuple(isl.get("provides", [])),
                cost=cost,
            )
        )
    return tuple(out)


def _loops(g: Graph, section: dict[str, Any]) -> tuple[str | None, ...]:
    loop_of: list[str | None] = [None] * g.n_blocks
    for comp in section.get("components", []):
        if comp.get("kind") == "cyclic" or comp.get("self_loop"):
            for b in comp.get("blocks", []):
                if b in g.index:
                    loop_of[g.index[b]] = str(comp.get("id"))
    return tuple(loop_of)
