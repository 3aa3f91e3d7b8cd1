"""Byte-exact artifacts for every example, identical under different hash seeds, and
the same bytes whether stages run together (`run`), alone, or piped into each other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from placement_cli.pipeline.registry import STAGES
from tests.conftest import ROOT, run_cli
from tests.goldens import golden_path, plan_examples, produce, tree_examples

EXAMPLES = plan_examples() + tree_examples()


@pytest.fixture(scope="module")
def produced():
    return {ex: produce(ex, hashseed="1") for ex in EXAMPLES}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_golden_files(example, produced):
    outputs = produced[example]
    assert outputs, f"{example} produced nothing"
    for name, data in outputs.items():
        gp = golden_path(example, name)
        assert gp.exists(), f"missing golden {gp}; run `make goldens`"
        assert data == gp.read_bytes(), (
            f"{gp} differs; if intended, run `make goldens` and review the diff"
        )


@pytest.fixture(scope="module")
def reseeded(tmp_path_factory) -> dict[Path, dict[str, bytes]]:
    """Every example under a third hash seed (the goldens were written under 0, `produced`
    is 1): the plans in one batch process (-j 1; a batch gives each input its artifacts
    alone: tests/test_config.py), a tree by `produce`."""
    out = tmp_path_factory.mktemp("reseeded")
    plans = plan_examples()
    r = subprocess.run(
        [sys.executable, "-m", "placement_cli", "run", *(str(p.relative_to(ROOT)) for p in plans)]
        + ["--out-dir", str(out), "-j", "1", "--quiet"],
        capture_output=True,
        env=dict(os.environ, PYTHONHASHSEED="4242"),
        cwd=ROOT,
        timeout=300,
    )
    assert r.returncode in (0, 4), r.stderr
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    assert [row["input"] for row in rows] == [str(p.relative_to(ROOT)) for p in plans]
    got = {
        ex: {f"{s}.json": (out / row["name"] / f"{s}.json").read_bytes() for s in STAGES
             if (out / row["name"] / f"{s}.json").exists()}
        for ex, row in zip(plans, rows, strict=True)
    }  # fmt: skip
    return got | {ex: produce(ex, hashseed="4242") for ex in tree_examples()}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_independent_of_hash_seed(example, produced, reseeded):
    assert reseeded[example] == produced[example]


def test_single_stage_equals_run_output(produced):
    ex = ROOT / "examples" / "three_targets.yaml"
    for name, data in produced[ex].items():
        stage = name.removesuffix(".json")
        r = run_cli(stage, str(ex.relative_to(ROOT)))
        assert r.returncode in (0, 4), r.stderr
        assert r.stdout == data, stage


def test_pipe_equals_direct(produced):
    ex = "examples/three_targets.yaml"
    stages = [n.removesuffix(".json") for n in produced[ROOT / ex]]
    cmd = " | ".join(
        [f"{sys.executable} -m placement_cli {stages[0]} {ex}"]
        + [f"{sys.executable} -m placement_cli {s} -" for s in stages[1:]]
    )
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], capture_output=True, cwd=ROOT, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == produced[ROOT / ex][f"{stages[-1]}.json"]


def test_yaml_and_json_inputs_agree(tmp_path):
    import orjson
    import yaml

    src = ROOT / "examples" / "nested_loops.yaml"
    j = tmp_path / "nested_loops.json"
    j.write_bytes(orjson.dumps(yaml.safe_load(src.read_text())))
    a = run_cli("scc", str(src.relative_to(ROOT)))
    b = run_cli("scc", str(j))
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_normalised_plan_is_a_fixpoint(tmp_path, produced):
    """The plan of every example's prune artifact (its own process, `produced`), pruned
    again (one batch process for all of them) is the same plan."""
    plans = {}
    for ex in plan_examples():
        plans[ex] = orjson.loads(produced[ex]["prune.json"])["plan"]
        (tmp_path / f"{ex.stem}.json").write_bytes(orjson.dumps(plans[ex]))
    out = tmp_path / "out"
    files = [str(tmp_path / f"{ex.stem}.json") for ex in plans]
    r = run_cli("prune", *files, "--out-dir", str(out), "-j", "1", "-q")
    assert r.returncode in (0, 4), r.stderr
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    assert [row["input"] for row in rows] == files
    for ex, row in zip(plans, rows, strict=True):
        again = orjson.loads((out / row["name"] / "prune.json").read_bytes())["plan"]
        assert again == plans[ex], ex
