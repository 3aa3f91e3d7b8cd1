"""The `text` format of `show`: a table per view, through rich on a terminal and as
plain aligned columns when piped (deterministic, no colour codes, no wrapping)."""

from __future__ import annotations

from dataclasses import dataclass, field

from placement_cli.views.data import UNASSIGNED, ViewData, border_of, fmt_num
from placement_cli.views.show_cfg import cost_note, plan_title
from placement_cli.views.show_graph import group_note, loop_groups


@dataclass
class TextTable:
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    colours: dict[str, str] = field(default_factory=dict)  # target name -> colour, on a terminal


def _colours(v: ViewData) -> dict[str, str]:
    return {name: border_of(t) for t, name in enumerate(v.g.targets)}


def islands_table(v: ViewData) -> TextTable:
    """Per island: target, blocks, cost, requires, provides."""
    t = TextTable(
        f"{plan_title(v)}: islands, {cost_note(v)}",
        ("island", "target", "blocks", "cost", "requires", "provides"),
    )
    g = v.g
    t.colours = _colours(v)
    for isl in v.islands:
        t.rows.append(
            (
                isl.id,
                g.targets[isl.target] if isl.target >= 0 else "-",
                " ".join(g.block_ids[b] for b in isl.members),
                fmt_num(isl.cost),
                " ".join(isl.requires) or "-",
                " ".join(isl.provides) or "-",
            )
        )
    outside = [g.block_ids[b] for b in range(g.n_blocks) if v.island_of[b] < 0]
    if outside:
        t.notes.append("in no island: " + " ".join(outside))
    return t


def origin_text(origin: object) -> str:
    """Where a lowered block came from: `bb0 2..3+t` (original block, statements, and
    whether it ends with the original terminator).

    >>> origin_text({"block": "bb0", "statements": [2, 4], "terminator": True})
    'bb0 2..3+t'
    """
    if not isinstance(origin, dict) or origin.get("block") is None:
        return "-"
    first, end = (origin.get("statements") or [0, 0])[:2]
    span = f" {first}..{end - 1}" if end > first else ""
    return f"{origin['block']}{span}{'+t' if origin.get('terminator') else ''}"


def cfg_table(v: ViewData) -> TextTable:
    """Per block: target, cost, island, loop, and the cut edges leaving it; for a
    lowered plan, also where in the MIR each block came from."""
    g, a = v.g, v.assignment
    provenance = getattr(g.plan, "provenance", None) or {}
    head = ("block", "target", "cost", "island", "loop", "cut edges out")
    t = TextTable(
        f"{plan_title(v)}: cfg, {cost_note(v)}",
        (*head, "from MIR") if provenance else head,
    )
    t.colours = _colours(v)
    for b in range(g.n_blocks):
        tb = a[b]
        cuts = [
            f"{g.block_ids[g.edge_dst[e]]} ({g.targets[a[g.edge_dst[e]]]}, {fmt_num(v.edge_cost(e))})"
            for e in g.succ[b]
            if g.live[b] and v.is_cut(e)
        ]
        row = (
            g.block_ids[b],
            "unreachable" if not g.live[b] else ("-" if tb == UNASSIGNED else g.targets[tb]),
            "-" if tb == UNASSIGNED else fmt_num(g.cost[b][tb]),
            v.islands[v.island_of[b]].id if v.island_of[b] >= 0 else "-",
            v.loop_of[b] or "-",
            ", ".join(cuts) or "-",
        )
        t.rows.append((*row, origin_text(provenance.get(g.block_ids[b]))) if provenance else row)
    return t


def graph_table(v: ViewData) -> TextTable:
    """Every dependency edge (from, kind, to, paths) and the schedule's levels."""
    section = v.sections.get("islands", {})
    t = TextTable(f"{plan_title(v)}: island graph, {cost_note(v)}", ("from", "kind", "to", "paths"))
    for e in section.get("graph", {}).get("edges", []):
        t.rows.append(
            (
                str(e.get("from")),
                str(e.get("kind")),
                str(e.get("to")),
                " ".join(e.get("paths", [])) or "-",
            )
        )
    schedule = section.get("schedule", {})
    for k, level in enumerate(schedule.get("levels", [])):
        t.notes.append(f"level {k}: " + " ".join(level))
    loops = loop_groups(v)
    for grp in schedule.get("groups", []):
        gid = str(grp.get("id"))
        why = (
            "a loop crosses its islands"
            if loops.get(gid, True)
            else "no loop: an island runs both before and after another"
        )
        t.notes.append(
            f"{group_note(gid, loops.get(gid, True)).replace(' · no loop', '')} "
            f"(scheduled as one unit; {why}): " + " ".join(grp.get("nodes", []))
        )
    return t


def plain(t: TextTable) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing spaces.

    >>> print(plain(TextTable("t", ("a", "bb"), [("xyz", "1")], ["n"])), end="")
    t
    <BLANKLINE>
    a    bb
    xyz  1
    <BLANKLINE>
    n
    """
    widths = [max(len(r[i]) for r in [t.columns, *t.rows]) for i in range(len(t.columns))]
    lines = [t.title, ""]
    for r in [t.columns, *t.rows]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if t.notes:
        lines.append("")
        lines += t.notes
    return "\n".join(lines) + "\n"


def rich_print(t: TextTable, stderr: bool = False) -> None:
    """The table through rich, for a terminal (standard output, or `stderr`)."""
    # Lazy: rich (~30 ms, measured), only for a person at a terminal.
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Cells are Text, not markup: a block id such as `bb[1]` must print as it is.
    table = Table(title=Text(t.title), title_justify="left")
    for c in t.columns:
        table.add_column(Text(c), overflow="fold")  # wrap, never cut a path name
    for r in t.rows:
        # The target cell in the target's colour, as in the diagrams.
        table.add_row(*(Text(c, style=f"bold {t.colours[c]}" if c in t.colours else "") for c in r))
    console = Console(highlight=False, stderr=stderr)
    console.print(table)
    for n in t.notes:
        console.print(n, markup=False)
