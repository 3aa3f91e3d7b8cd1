"""A format-neutral diagram: what `show_cfg` and `show_graph` build and the DOT and
Mermaid emitters draw. Views decide *what* is shown; emitters decide only *how*.

Node and edge order is the order of the lists (input order of blocks and edges), so
every emitter is deterministic without sorting anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Node shapes (emitters map them to their own vocabulary).
BLOCK = "block"  # a basic block or an execution island
LOOP = "loop"  # a block inside a loop: double border
DATA = "data"  # a synthetic data island: cylinder
DEAD = "dead"  # an unreachable block: dashed, grey
LEGEND = "legend"  # a legend entry
LEVEL = "level"  # a schedule-level marker (plain text)

# Edge styles.
PLAIN = "plain"
CUT = "cut"  # crosses targets: bold, labelled with its transition cost
INHERITS = "inherits"  # dashed, hollow arrow
DATA_FLOW = "data_flow"  # dotted, labelled with its paths
DEAD_EDGE = "dead_edge"  # leaves an unreachable block: dotted grey
INVISIBLE = "invisible"  # layout only (level chain)
CRITICAL = "critical"  # on the critical path (operator trees): red
CRITICAL_CUT = "critical_cut"  # a cut on the critical path: bold and red


@dataclass(frozen=True)
class Node:
    key: str  # stable identity, e.g. "block:bb3", "island:i1"; also DOT's `id`
    lines: tuple[str, ...]  # label, one entry per line
    target: int  # colour by target position; -1 for none
    shape: str = BLOCK


@dataclass(frozen=True)
class Edge:
    src: str  # node keys
    dst: str
    style: str = PLAIN
    label: str = ""
    key: str = ""  # stable identity, e.g. "edge:bb0[1]"


@dataclass(frozen=True)
class Cluster:
    key: str
    label: str
    target: int
    nodes: tuple[str, ...]


@dataclass
class Diagram:
    title: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    ranks: list[tuple[str, ...]] = field(default_factory=list)  # node keys sharing a rank
    direction: str = "TB"  # TB or LR
    legend: str = "targets"  # the legend's title
