"""Mermaid flowcharts for a `Diagram`, and the limits of the usual Mermaid renderers.

Mermaid (as GitHub, GitLab and mermaid.live run it) refuses diagrams above `maxEdges`
(500) edges or `maxTextSize` (50,000) characters by default; `fits` says whether a text
stays within both, so `show` can fall back to a coarser view instead of emitting a
diagram that will not render.
"""

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

MAX_EDGES = 500
MAX_TEXT = 50_000


def esc(s: str) -> str:
    """Text inside a quoted Mermaid label: entity codes for the characters Mermaid or
    its HTML labels would read as syntax, `<br/>` for line breaks.

    >>> esc('a "b" <c> #1')
    'a #quot;b#quot; #lt;c#gt; #35;1'
    """
    s = s.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    return s.replace("\n", "<br/>")


def _shape(n: Node, name: str) -> str:
    label = '"' + "<br/>".join(esc(line) for line in n.lines) + '"'
    if n.shape == LOOP:
        return f"{name}[[{label}]]"
    if n.shape == DATA:
        return f"{name}[({label})]"
    return f"{name}[{label}]"


_ARROW = {
    CUT: "==>",
    CRITICAL_CUT: "==>",
    INHERITS: "-.->",
    DATA_FLOW: "-.->",
    DEAD_EDGE: "-.->",
    INVISIBLE: "~~~",
}


def to_mermaid(d: Diagram) -> tuple[str, int]:
    """The diagram as a Mermaid flowchart, and its number of edges (Mermaid counts the
    invisible layout links too).

    >>> from placement_cli.views.diagram import Diagram, Node, Edge
    >>> text, n = to_mermaid(Diagram("t", [Node("a", ("a",), 0), Node("b", ("b",), 1)], [Edge("a", "b", "cut", "3")]))
    >>> print(text, end="")
    %% t
    flowchart TB
      n0["a"]
      n1["b"]
      n0 ==>|"3"| n1
      classDef t0 fill:#a6cee3,stroke:#1f78b4,color:#000000
      classDef t1 fill:#b2df8a,stroke:#33a02c,color:#000000
      class n0 t0
      class n1 t1
      linkStyle 0 stroke-width:3px
    """
    name = {n.key: f"n{i}" for i, n in enumerate(d.nodes)}
    by_key = {n.key: n for n in d.nodes}
    out = [f"%% {' '.join(d.title.split())}", f"flowchart {d.direction}"]  # a comment is one line
    in_cluster = {k for c in d.clusters for k in c.nodes}
    for ci, c in enumerate(d.clusters):
        out.append(f'  subgraph c{ci}["{esc(c.label)}"]')
        for k in c.nodes:
            out.append("    " + _shape(by_key[k], name[k]))
        out.append("  end")
    for n in d.nodes:
        if n.key not in in_cluster and n.shape != LEGEND:
            out.append("  " + _shape(n, name[n.key]))
    legend = [n for n in d.nodes if n.shape == LEGEND]
    if legend:
        out.append(f'  subgraph legend["{esc(d.legend)}"]')
        for n in legend:
            out.append("    " + _shape(n, name[n.key]))
        out.append("  end")
    link_styles: list[str] = []
    count = 0
    for e in d.edges:
        arrow = _ARROW.get(e.style, "-->")
        label = f'|"{esc(e.label)}"|' if e.label and e.style != INVISIBLE else ""
        out.append(f"  {name[e.src]} {arrow}{label} {name[e.dst]}")
        if e.style == CUT:
            link_styles.append(f"  linkStyle {count} stroke-width:3px")
        elif e.style == CRITICAL_CUT:
            link_styles.append(f"  linkStyle {count} stroke-width:3px,stroke:#d62728,color:#d62728")
        elif e.style == CRITICAL:
            link_styles.append(f"  linkStyle {count} stroke:#d62728")
        elif e.style == DATA_FLOW:
            link_styles.append(f"  linkStyle {count} stroke:#1f78b4,color:#1f78b4")
        elif e.style == DEAD_EDGE:
            link_styles.append(f"  linkStyle {count} stroke:#999999")
        count += 1
    for a, b in zip(legend, legend[1:], strict=False):
        out.append(f"  {name[a.key]} ~~~ {name[b.key]}")
        count += 1
    targets = sorted({n.target for n in d.nodes if n.shape != LEVEL})
    for t in targets:
        cls = "notarget" if t < 0 else f"t{t}"
        out.append(f"  classDef {cls} fill:{fill_of(t)},stroke:{border_of(t)},color:#000000")
    if any(n.shape in (DEAD, DATA) for n in d.nodes):
        out.append("  classDef dashed stroke-dasharray:4 3")
    if any(n.shape == LEVEL for n in d.nodes):
        out.append("  classDef level fill:none,stroke:none,color:#666666")
    for n in d.nodes:
        if n.shape == LEVEL:
            out.append(f"  class {name[n.key]} level")
            continue
        out.append(f"  class {name[n.key]} {'notarget' if n.target < 0 else f't{n.target}'}")
        if n.shape in (DEAD, DATA):
            out.append(f"  class {name[n.key]} dashed")
    out += link_styles
    return "\n".join(out) + "\n", count


def fits(text: str, n_edges: int) -> bool:
    """Whether the usual renderers accept the diagram with their default limits.

    >>> fits("flowchart TB\\n", 10), fits("x" * 50_001, 1), fits("", 501)
    (True, False, False)
    """
    return n_edges <= MAX_EDGES and len(text) <= MAX_TEXT
