"""Every stage on random plans, in one pipeline: no internal error, statuses consistent
with brute force, and each artifact fits its schema."""

from __future__ import annotations

import math

from hypothesis import given, settings

from placement_cli.app.schemas import artifact_models
from placement_cli.formats.plan import Plan
from placement_cli.ir.graph import build_graph
from placement_cli.pipeline.run import STAGES, Loaded, Run
from tests.budget import examples
from tests.reference import brute_force
from tests.strategies import plans


@settings(max_examples=examples(150))
@given(plans(max_blocks=6, max_targets=3))
def test_whole_pipeline_on_random_plans(plan):
    g = build_graph(Plan.model_validate(plan))
    run = Run(Loaded("<test>", g))
    for stage in STAGES:
        run.run(stage)
    optimum, _ = brute_force(plan)
    feasible = optimum < math.inf
    for stage in STAGES:
        art = run.artifact(stage)
        artifact_models()[stage].model_validate(art)
        if stage in ("solve", "fuse", "islands"):
            assert (art["status"] == "ok") == feasible, stage
    art = run.artifact("islands")
    if feasible:
        assert art["solve"]["cost"]["total"] == optimum  # auto proves the optimum on tiny plans
        assert art["solve"]["optimal"] is True
        covered = [m for isl in art["islands"]["islands"] for m in isl["members"]]
        live = list(art["solve"]["assignment"])
        assert sorted(covered) == sorted(live)  # islands partition the live blocks
        assert art["fuse"]["cost_preserved"] is True
    else:
        errors = [d for d in art["diagnostics"] if d["severity"] == "error"]
        assert errors and all(d["blocks"] or d["code"] == "no-assignment" for d in errors)
