"""Short human summaries for stderr. Never used for artifacts."""

from __future__ import annotations

from typing import Any


def summarize(run: Any, stage: str) -> str:
    g = run.g
    sec = run.sections.get(stage, {})
    head = f"{stage}: {g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets"
    status = "infeasible" if run.infeasible else "ok"
    if stage == "prune" and "removed" in sec:
        return f"{head}; removed {len(sec['removed'])} (block, target) pairs; {status}"
    if stage == "scc" and "components" in sec:
        cyc = sum(1 for c in sec["components"] if c["kind"] == "cyclic")
        return f"{head}; {len(sec['components'])} components, {cyc} cyclic; {status}"
    if stage == "solve" and "cost" in sec:
        c = sec["cost"]
        return f"{head}; cost {c.get('total')} (optimal: {sec.get('optimal')}, lower bound {sec.get('lower_bound')}); {status}"
    if stage == "fuse" and "blocks" in sec:
        return f"{head}; {len(sec['blocks'])} blocks after fusion; {status}"
    if stage == "islands" and "islands" in sec:
        return f"{head}; {len(sec['islands'])} islands; {status}"
    return f"{head}; {status}"


def summarize_run(run: Any, out_dir: str) -> str:
    lines = [f"wrote prune, scc, solve, fuse, islands artifacts to {out_dir}/"]
    for stage in ("prune", "scc", "solve", "fuse", "islands"):
        if stage in run.sections:
            lines.append("  " + summarize(run, stage))
    isl = run.sections.get("islands", {}).get("islands")
    if isl:
        per: dict[str, int] = {}
        for i in isl:
            per[i["target"]] = per.get(i["target"], 0) + 1
        lines.append("  islands per target: " + ", ".join(f"{t} {n}" for t, n in per.items()))
    return "\n".join(lines)
