"""Short human summaries for stderr. Never used for artifacts."""

from __future__ import annotations

from typing import Any


def _detail(run: Any, stage: str) -> str:
    sec = run.sections.get(stage) or {}
    if stage == "prune" and "removed" in sec:
        return f"removed {len(sec['removed'])} (block, target) pairs"
    if stage == "scc" and "components" in sec:
        cyc = sum(1 for c in sec["components"] if c["kind"] == "cyclic")
        return f"{len(sec['components'])} components, {cyc} cyclic"
    if stage == "solve":
        c = sec.get("cost")
        if not c:
            return "no feasible placement"
        return f"cost {c.get('total')} (optimal: {str(sec.get('optimal')).lower()}, lower bound {sec.get('lower_bound')})"
    if stage == "fuse" and "blocks" in sec:
        return f"{len(sec['blocks'])} blocks after fusion"
    if stage == "islands" and sec.get("islands") is not None:
        per: dict[str, int] = {}
        for i in sec["islands"]:
            per[i["target"]] = per.get(i["target"], 0) + 1
        targets = ", ".join(f"{t} {n}" for t, n in per.items())
        return f"{len(sec['islands'])} islands" + (f" ({targets})" if targets else "")
    return ""


def _head(run: Any) -> str:
    g = run.g
    status = "infeasible" if run.infeasible else "ok"
    return f"{g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets: {status}"


def summarize(run: Any, stage: str) -> str:
    return f"{stage}: {_head(run)}; {_detail(run, stage)}"


def summarize_run(run: Any, out_dir: str) -> str:
    lines = [f"{_head(run)}; artifacts in {out_dir}/"]
    for stage in ("prune", "scc", "solve", "fuse", "islands"):
        if stage in run.sections:
            lines.append(f"  {stage:<8} {_detail(run, stage)}")
    return "\n".join(lines)
