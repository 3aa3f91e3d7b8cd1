"""Graphviz DOT for a `Diagram`. Every node carries its stable key as `id`, so tests
(and the SVG Graphviz renders) can find a block by name whatever its label says."""

from __future__ import annotations

from placement_cli.views.data import border_of, fill_of
from placement_cli.views.diagram import (
    CRITICAL,
    CRITICAL_CUT,
    CUT,
    DATA,
    DATA_FLOW,
    DEAD,
    DEAD_EDGE,
    INHERITS,
    INVISIBLE,
    LEGEND,
    LEVEL,
    LOOP,
    Diagram,
    Node,
)


def quote(s: str) -> str:
    r"""A DOT double-quoted string: backslash and quote escaped, newlines as `\n`.

    >>> quote('a "b"\nc')
    '"a \\"b\\"\\nc"'
    """
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_attrs(n: Node) -> str:
    attrs = [f"id={quote(n.key)}", f"label={quote(chr(10).join(n.lines))}"]
    if n.shape == LEVEL:
        attrs += ["shape=plaintext", 'fontcolor="#666666"']
        return ", ".join(attrs)
    style = ["filled"]
    if n.shape == LOOP:
        attrs.append("peripheries=2")
    elif n.shape == DATA:
        attrs.append("shape=cylinder")
        style.append("dashed")
    elif n.shape == DEAD:
        style.append("dashed")
    elif n.shape == LEGEND:
        attrs.append("shape=box")
    if n.target >= 6:  # the palette repeats: tell repeated hues apart by the border
        style.append("dashed")
    attrs += [f"fillcolor={quote(fill_of(n.target))}", f"color={quote(border_of(n.target))}"]
    attrs.append(f"style={quote(','.join(dict.fromkeys(style)))}")
    return ", ".join(attrs)


_EDGE_STYLE = {
    CUT: ["penwidth=2.5", "style=bold"],
    INHERITS: ["style=dashed", "arrowhead=empty"],
    DATA_FLOW: ["style=dotted", 'color="#1f78b4"', 'fontcolor="#1f78b4"'],
    DEAD_EDGE: ["style=dotted", 'color="#999999"'],
    INVISIBLE: ["style=invis"],
    CRITICAL: ['color="#d62728"', "penwidth=2"],
    CRITICAL_CUT: ["penwidth=2.5", "style=bold", 'color="#d62728"', 'fontcolor="#d62728"'],
}


def _heads(members: tuple[str, ...], d: Diagram) -> list[str]:
    """The members of a cluster that no other member leads to (the first member when
    every one is entered from inside): the title goes above them."""
    inside = set(members)
    entered = {e.dst for e in d.edges if e.src in inside and e.dst in inside and e.src != e.dst}
    return [k for k in members if k not in entered] or list(members[:1])


def to_dot(d: Diagram) -> str:
    """The diagram as a DOT digraph (a trailing newline, no trailing spaces).

    >>> from placement_cli.views.diagram import Diagram, Node, Edge
    >>> print(to_dot(Diagram("t", [Node("a", ("a",), 0), Node("b", ("b",), 1)], [Edge("a", "b", "cut", "3")])), end="")
    digraph "t" {
      graph [rankdir=TB, fontname="Helvetica", label="t", labelloc=t];
      node [shape=box, fontname="Helvetica", fontsize=10];
      edge [fontname="Helvetica", fontsize=9];
      n0 [id="a", label="a", fillcolor="#a6cee3", color="#1f78b4", style="filled"];
      n1 [id="b", label="b", fillcolor="#b2df8a", color="#33a02c", style="filled"];
      n0 -> n1 [label="3", penwidth=2.5, style=bold];
    }
    """
    name = {n.key: f"n{i}" for i, n in enumerate(d.nodes)}
    out = [
        f"digraph {quote(d.title)} {{",
        f'  graph [rankdir={d.direction}, fontname="Helvetica", label={quote(d.title)}, labelloc=t];',
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    in_cluster = {k for c in d.clusters for k in c.nodes}
    by_key = {n.key: n for n in d.nodes}
    titles: list[str] = []
    for ci, c in enumerate(d.clusters):
        # The title is a node at the top of its cluster, not the cluster's label: edges
        # entering a cluster and their labels are routed around nodes, but drawn over
        # a cluster's label.
        out.append(f"  subgraph cluster_{ci} {{")
        out.append(
            f'    id={quote(c.key)}; label=""; tooltip={quote(c.label)}; style="rounded"; color={quote(border_of(c.target))};'
        )
        out.append(
            f"    t{ci} [id={quote('title:' + c.key)}, label={quote(c.label)}, shape=plaintext, fontsize=12];"
        )
        for k in c.nodes:
            out.append(f"    {name[k]} [{_node_attrs(by_key[k])}];")
        out.append("  }")
        titles += [f"  t{ci} -> {name[k]} [style=invis];" for k in _heads(c.nodes, d)]
    for n in d.nodes:
        if n.key not in in_cluster and n.shape != LEGEND:
            out.append(f"  {name[n.key]} [{_node_attrs(n)}];")
    for e in d.edges:
        attrs = []
        if e.key:
            attrs.append(f"id={quote(e.key)}")
        if e.label:
            attrs.append(f"label={quote(e.label)}")
        attrs += _EDGE_STYLE.get(e.style, [])
        out.append(
            f"  {name[e.src]} -> {name[e.dst]}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";"
        )
    out += titles
    for r in d.ranks:
        out.append("  { rank=same; " + " ".join(f"{name[k]};" for k in r) + " }")
    legend_nodes = [n for n in d.nodes if n.shape == LEGEND]
    if legend_nodes:
        out.append("  subgraph cluster_legend {")
        out.append(f'    id="legend"; label={quote(d.legend)}; style="rounded"; color="#999999";')
        for n in legend_nodes:
            out.append(f"    {name[n.key]} [{_node_attrs(n)}];")
        # One row: a legend should not stretch the drawing's height; in the targets'
        # order, left to right (a row without edges is laid out in any order).
        out.append("    { rank=same; " + " ".join(f"{name[n.key]};" for n in legend_nodes) + " }")
        out += [
            f"    {name[a.key]} -> {name[b.key]} [style=invis];"
            for a, b in zip(legend_nodes, legend_nodes[1:], strict=False)
        ]
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"
