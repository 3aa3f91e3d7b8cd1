"""A stage added from outside the package, the way the README says a stage is added:
its module (this one: `STAGE`, its section model, its pass) and its one registry entry
(`register`, run before anything reads the list). `tests/test_stage_added.py` runs the
command line with it:

    python -m tests.added_stage run examples/three_targets.yaml --out-dir out
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from placement_cli.pipeline import registry
from placement_cli.pipeline.checks import Problems, compare
from placement_cli.pipeline.stage import Output, Stage, StageRun


class AuditSection(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    blocks: int
    islands: int


@dataclass(frozen=True)
class AuditOptions:
    pass


def _audit(run: Any) -> dict[str, Any]:
    # The pass: how many blocks the plan has and how many islands they ran in.
    return {"blocks": run.g.n_blocks, "islands": len(run.value("islands").islands)}


def compute(run: StageRun, options: AuditOptions | None) -> Output:
    return Output(None, _audit(run))


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    pr = Problems("audit")
    compare(pr, sec, expected := _audit(run))
    pr.raise_if_any()
    return Output(None, expected)


STAGE = Stage(
    name="audit",
    requires=("islands",),
    options=AuditOptions,
    compute=compute,
    check=check,
    summary=lambda sec: f"{sec['blocks']} blocks in {sec['islands']} islands",
)

INFO = registry.StageInfo(
    "audit",
    "Count the blocks and the islands they run in.",
    "tests.added_stage",
    True,
    "tests.added_stage:AuditSection",
)

if __name__ == "__main__":
    registry.register(INFO)
    from placement_cli.app.launch import main

    main()
