"""The tree file of a probe (`engines/probe.py`): self-times derived from the subtree
medians, each node's measured subtrees, its in-pipeline rest (`above`, with
`--in-pipeline`), the probe's hand-offs as explicit transfers and the query it ran
(docs/probe.md, docs/tree.md). Times in milliseconds."""

from __future__ import annotations

import statistics
from typing import Any

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.io import num
from placement_cli.engines import registry
from placement_cli.engines.probe import Probe
from placement_cli.engines.stats import self_time


def self_times(p: Probe) -> dict[str, dict[str, float | None]]:
    """Node -> engine -> self-time (ms): `stats.self_time` of the subtrees' medians on
    the same engine, clamped at 0 (one `clamped-self-time` warning per engine counting
    the clamped nodes); None where the node or a child has no time there."""
    med = {nid: {e: statistics.median(t) for e, t in n.runs.items()} for nid, n in p.nodes.items()}
    out: dict[str, dict[str, float | None]] = {}
    for engine in p.engines:
        clamped: list[str] = []
        lost = 0.0
        for nid in p.plan.nodes:
            if not p.ran(nid):
                continue
            value = self_time(med[nid].get(engine), [med[c].get(engine) for c in p.kids(nid)])
            if value is not None and value < 0:
                clamped.append(nid)
                lost -= value
                value = 0.0
            out.setdefault(nid, {})[engine] = value
        if clamped:
            p.diagnostics.append(
                Diagnostic(
                    "warning",
                    "clamped-self-time",
                    f"{len(clamped)} node(s) ran faster on {engine} than their "
                    f"slowest input alone, self-time set to 0 ({lost:.3f} ms in all, the "
                    f"first at {clamped[0]}): a subtree whose result is smaller than its "
                    "input's does not materialise that input (the engine pushes filters "
                    "and projections into the scan), or timing noise",
                    tuple(clamped),
                )
            )
    return out


def _measured(times: list[float]) -> dict[str, Any]:
    """Runs' milliseconds as a tree file records them: median, min, max and their count."""
    return {
        "median": _round(statistics.median(times)),
        "min": _round(min(times)),
        "max": _round(max(times)),
        "runs": len(times),
    }


def _round(x: float) -> float | int:
    return num(round(x, 6))  # type: ignore[no-any-return]


def measured_transfers(p: Probe, in_tree: set[str]) -> list[dict[str, Any]]:
    """The hand-offs timed by the probe (`--handoffs`) as explicit transfers: for each
    node of the tree but the root and each engine that ran it, to every other engine
    its result reached, the median (ms). Receiver-side times: what the cut costs the
    consuming engine, whichever engine sent it (the sender's result is in hand)."""
    out = []
    for nid in p.plan.nodes:
        got = p.nodes[nid]
        if nid not in in_tree or nid == p.plan.root or not got.handoffs or nid in p.no_cut:
            continue
        for src in p.engines:
            if src not in got.runs:
                continue
            for dst, times in got.handoffs.items():
                if dst != src:
                    out.append(
                        {
                            "child": nid,
                            "from": src,
                            "to": dst,
                            "cost": _round(statistics.median(times)),
                        }
                    )
    return out


def tree_document(p: Probe, name: str | None, budget: int | None) -> dict[str, Any]:
    """The tree file (docs/tree.md) of a probe: times in milliseconds."""
    selfs = self_times(p)
    nodes = []
    for i, (nid, node) in enumerate(p.plan.nodes.items()):
        if not p.ran(nid):
            continue  # merged into its parent (`merge`)
        got = p.nodes[nid]
        out: dict[str, Any] = {"id": nid, "op": node.op}
        if p.kids(nid):
            out["children"] = p.kids(nid)
        out["time"] = {
            e: None if selfs[nid][e] is None else _round(selfs[nid][e] or 0.0) for e in p.engines
        }
        if got.rows is not None:
            out["rows"] = got.rows
            out["row_width"] = _round(got.row_width or 0.0)
        out["plan_node"] = i
        out["subtree"] = {e: _measured(t) for e, t in got.runs.items()}
        if nid in p.no_cut and nid != p.plan.root:
            out["no_cut"] = p.no_cut[nid]
        rest = p.above.get(nid)
        if rest is not None and rest.runs:
            out["above"] = {e: _measured(t) for e, t in rest.runs.items()}
        nodes.append(out)
    doc: dict[str, Any] = {"version": 1}
    if name is not None:
        doc["name"] = name
    doc["engines"] = list(p.engines)
    if budget is not None:
        doc["budget"] = budget
    doc["root"] = p.plan.root
    doc["nodes"] = nodes
    explicit = measured_transfers(p, {n["id"] for n in nodes})
    if explicit:
        doc["transfer"] = {"explicit": explicit}
    doc["query"] = {
        "sql": p.plan.sql,
        "substrait": None if p.native else p.plan.substrait,
        **({"native": True} if p.native else {}),
        "replanned": [] if p.native else [e for e in p.engines if registry.engine(e).replans],
        "repeat": p.repeat,
        "warmup": p.warmup,
        "threads": p.threads,
        "caches": p.caches,
        **({"forks": p.forks} if p.forks > 1 else {}),
    }
    if p.as_written is not None and p.as_written.runs:
        doc["query"]["as_written"] = {e: _measured(t) for e, t in p.as_written.runs.items()}
    return doc
