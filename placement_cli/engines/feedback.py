"""What `execute` writes besides its report: the result's rows, the measured hand-offs
in the CSV `calibrate fit` reads, and the measured per-node times (`docs/execute.md`).

Hand-offs (`--calibrate-out`), one line per timed repeat, the header first:

    src,dst,rows,width,ms,repeat

`src`/`dst` engines, `rows` handed over, `width` bytes per row of the Arrow table (its
bytes over its rows), `ms` the hand-off timed alone, `repeat` 0, 1, ...

Node times (`--times-out`), one line per node and engine that was measured:

    node,engine,subtree_ms,self_ms,runs

`subtree_ms` is the median over every executed fragment that ran the node's whole
subtree on that engine with no input from another engine (`runs` of them, repeats
included); `self_ms` = subtree_ms minus the slowest child's subtree_ms on the same
engine, clamped at 0 (empty when a child was not measured there), as `import sql
--probe` defines a self-time. `apply_node_times` puts them into a tree file's `time`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from statistics import median
from typing import Any

from placement_cli.engines.measure import Outcome
from placement_cli.engines.placements import preorder
from placement_cli.engines.require import need
from placement_cli.engines.stats import self_time
from placement_cli.ir.tree.model import Tree

HANDOFF_HEADER = ("src", "dst", "rows", "width", "ms", "repeat")
TIMES_HEADER = ("node", "engine", "subtree_ms", "self_ms", "runs")


# A result file's format, by its name's ending.
RESULT_ENDINGS = {
    ".arrow": "ipc",
    ".feather": "ipc",
    ".ipc": "ipc",
    ".parquet": "parquet",
    ".csv": "csv",
}


def result_format(path: str) -> str | None:
    """The format a result file's name asks for (`RESULT_ENDINGS`), None when unknown.

    >>> result_format("rows.Parquet"), result_format("rows.txt")
    ('parquet', None)
    """
    low = path.lower()
    return next((f for end, f in RESULT_ENDINGS.items() if low.endswith(end)), None)


def table_bytes(table: Any, path: str) -> bytes:
    """`table` as Arrow IPC (.arrow/.feather/.ipc), Parquet (.parquet) or CSV (.csv),
    by `path`'s ending (ValueError for another one)."""
    pa, pacsv, paipc, pq = need(
        "execute", "pyarrow", "pyarrow.csv", "pyarrow.ipc", "pyarrow.parquet"
    )
    sink = pa.BufferOutputStream()
    fmt = result_format(path)
    if fmt == "parquet":
        pq.write_table(table, sink)
    elif fmt == "csv":
        pacsv.write_csv(table, sink)
    elif fmt == "ipc":
        with paipc.new_file(sink, table.schema) as w:
            w.write_table(table)
    else:
        raise ValueError(f"{path}: no result format ends its name ({', '.join(RESULT_ENDINGS)})")
    return bytes(sink.getvalue().to_pybytes())


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def handoff_rows(tree: Tree, outcomes: Sequence[Outcome]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for o in outcomes:
        if o.status != "ok" or not o.runs:
            continue
        last = o.runs[-1]
        for i, f in enumerate(o.frags):
            if f.parent < 0 or f.root not in o.handoffs:
                continue
            rows, nbytes = last.fragments[i].rows, last.fragments[i].nbytes
            width = round(nbytes / rows, 3) if rows else 0.0
            src = tree.engines[f.engine]
            dst = tree.engines[o.frags[f.parent].engine]
            for r, s in enumerate(o.handoffs[f.root]):
                out.append((src, dst, rows, width, round(s * 1000, 4), r))
    return out


def handoff_csv(tree: Tree, outcomes: Sequence[Outcome]) -> bytes:
    return _csv(HANDOFF_HEADER, list(handoff_rows(tree, outcomes)))


def node_times(
    tree: Tree, outcomes: Sequence[Outcome]
) -> list[tuple[str, str, float, float | None, int]]:
    """(node, engine, subtree_ms, self_ms, runs) per measured node and engine, nodes in
    preorder, engines in the tree's order (module doc)."""
    samples: dict[tuple[int, int], list[float]] = {}
    for o in outcomes:
        if o.status != "ok":
            continue
        for i, f in enumerate(o.frags):
            if f.inputs:
                continue  # part of its subtree ran elsewhere
            samples.setdefault((f.root, f.engine), []).extend(
                r.fragments[i].seconds * 1000 for r in o.runs
            )
    sub = {k: median(v) for k, v in samples.items()}
    out = []
    for v in preorder(tree):
        for e in range(len(tree.engines)):
            if (v, e) not in sub:
                continue
            raw = self_time(sub[(v, e)], [sub.get((u, e)) for u in tree.children[v]])
            self_ms = None if raw is None else max(0.0, raw)
            out.append(
                (
                    tree.ids[v],
                    tree.engines[e],
                    round(sub[(v, e)], 4),
                    None if self_ms is None else round(self_ms, 4),
                    len(samples[(v, e)]),
                )
            )
    return out


def node_times_csv(tree: Tree, outcomes: Sequence[Outcome]) -> bytes:
    rows = [tuple("" if x is None else x for x in r) for r in node_times(tree, outcomes)]
    return _csv(TIMES_HEADER, rows)


def read_node_times(text: str) -> dict[tuple[str, str], float]:
    """(node, engine) -> self_ms from a node-times CSV (rows without a self-time skipped)."""
    out = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row.get("self_ms"):
            out[(row["node"], row["engine"])] = float(row["self_ms"])
    return out


def apply_node_times(doc: dict[str, Any], times: dict[tuple[str, str], float]) -> dict[str, Any]:
    """A copy of tree-file document `doc` whose nodes' `time` entries are the measured
    self-times where measured (an engine that cannot run a node stays unable)."""
    nodes = []
    for n in doc.get("nodes", []):
        n = dict(n)
        t = dict(n.get("time") or {})
        for e, old in t.items():
            if old is not None and (n["id"], e) in times:
                t[e] = times[(n["id"], e)]
        n["time"] = t
        nodes.append(n)
    return {**doc, "nodes": nodes}
