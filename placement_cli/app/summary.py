"""Short human summaries for stderr. Never used for artifacts: each stage's part is
its `Stage.summary`, in the registry's order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from placement_cli.pipeline import registry

if TYPE_CHECKING:
    from placement_cli.pipeline.run import Run


def _detail(run: Run, stage: str) -> str:
    return registry.get(stage).summary(run.sections.get(stage) or {})


def _head(run: Run) -> str:
    g = run.g
    status = "infeasible" if run.infeasible else "ok"
    return f"{g.n_blocks} blocks, {g.n_edges} edges, {g.n_targets} targets: {status}"


def summarize(run: Run, stage: str) -> str:
    return f"{stage}: {_head(run)}; {_detail(run, stage)}"


def summarize_run(run: Run, out_dir: str) -> str:
    lines = [f"{_head(run)}; artifacts in {out_dir}/"]
    for stage in registry.STAGES:
        if stage in run.sections:
            lines.append(f"  {stage:<8} {_detail(run, stage)}")
    return "\n".join(lines)
