"""What `lower` knows travels downstream: every artifact of a lowered body carries the
plan's `provenance` (new block -> original block and statement range) and the `lower`
section, a pipe from `lower` gives the same bytes as the stage on the body, and
`explain` names the original block."""

from __future__ import annotations

import orjson
import pytest

from placement_cli.pipeline.registry import STAGES
from tests.conftest import EXAMPLES, ROOT, run_cli

BODIES = sorted([*EXAMPLES.glob("*.body.yaml"), *EXAMPLES.glob("*.mir")])


@pytest.mark.parametrize("body", BODIES, ids=lambda p: p.name)
def test_every_artifact_carries_provenance_and_the_lower_section(body, tmp_path):
    # One `run` writes every stage's artifact (a stage command's own bytes: the goldens'
    # test_single_stage_equals_run_output), in one process instead of one per stage.
    lowered = orjson.loads(run_cli("lower", str(body), "-q").stdout)
    r = run_cli("run", str(body), "--out-dir", str(tmp_path), "-q")
    assert r.returncode in (0, 4), r.stderr
    for stage in STAGES:
        art = orjson.loads((tmp_path / f"{stage}.json").read_bytes())
        assert art["plan"]["provenance"] == lowered["provenance"], stage
        assert art["lower"] == lowered["lower"], stage


@pytest.mark.parametrize("stage", ["scc", "islands"])
def test_a_pipe_from_lower_gives_the_stages_own_bytes(stage):
    body = str(EXAMPLES / "seed_split.body.yaml")
    lowered = run_cli("lower", body, "-q").stdout
    piped = run_cli(stage, "-", "-q", stdin=lowered)
    direct = run_cli(stage, body, "-q")
    assert piped.returncode == direct.returncode == 0, piped.stderr
    assert piped.stdout == direct.stdout


def test_explain_names_the_original_block_and_statements():
    text = run_cli("explain", str(EXAMPLES / "seed_split.body.yaml"), "bb0.1").stdout.decode()
    assert text.startswith("block bb0.1 (lowered from bb0: statements 2..3 and the terminator)")
    ex = orjson.loads(
        run_cli(
            "explain", str(ROOT / "examples" / "seed_split.body.yaml"), "bb0", "--format", "json"
        ).stdout
    )
    assert ex["origin"] == {"block": "bb0", "statements": [0, 2], "terminator": False}


def test_show_names_where_each_lowered_block_came_from():
    text = run_cli(
        "show", str(EXAMPLES / "seed_split.body.yaml"), "--format", "text"
    ).stdout.decode()
    head, *rows = [line.split() for line in text.splitlines()[2:] if line.strip()]
    assert head[-2:] == ["from", "MIR"]
    assert rows[0][0] == "bb0" and rows[0][-2:] == ["bb0", "0..1"]
    assert rows[1][0] == "bb0.1" and rows[1][-2:] == ["bb0", "2..3+t"]
    plain = run_cli(
        "show", str(EXAMPLES / "three_targets.yaml"), "--format", "text"
    ).stdout.decode()
    assert "from MIR" not in plain  # a hand-written plan has no provenance
