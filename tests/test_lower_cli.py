"""`placement lower` end to end: the seed example in three modes, custom profiles,
plans as input, and every stage reading a body file directly."""

from __future__ import annotations

import orjson
import pytest
import yaml

from tests.conftest import EXAMPLES
from tests.lower_helpers import I, P

SEED = EXAMPLES / "seed_split.body.yaml"


def solve(cli, tmp_path, *args):
    r = cli("lower", *args)
    assert r.returncode == 0, r.stderr.decode()
    plan = tmp_path / "plan.json"
    plan.write_bytes(r.stdout)
    assert cli("validate", str(plan)).returncode == 0
    s = cli("fuse", str(plan))
    assert s.returncode == 0, s.stderr.decode()
    return orjson.loads(r.stdout), orjson.loads(s.stdout)


@pytest.mark.parametrize(
    "mode,blocks,cost", [("intersection", 1, 72), ("runs", 2, 41), ("per-statement", 5, 41)]
)
def test_seed_example_three_strategies(cli, tmp_path, mode, blocks, cost):
    plan, art = solve(cli, tmp_path, str(SEED), "--split", mode)
    assert len(plan["blocks"]) == blocks
    assert art["solve"]["cost"]["total"] == cost and art["solve"]["optimal"] is True
    # the restriction of S3 propagates to S4 and the terminator; S1 and S2 keep postgres
    assert plan["lower"]["statements"]["bb0"] == [[I, P], [I, P], [I], [I]]
    assert plan["lower"]["terminators"]["bb0"] == [I]
    if mode != "intersection":
        assert art["solve"]["assignment"]["bb0"] == P
        # fusion undoes the splits that ended on one target: back to one block per target
        assert [b["target"] for b in art["fuse"]["blocks"]] == [P, I]


def test_seed_example_files_match_the_modes():
    for name, mode in (
        ("seed_split", "runs"),
        ("seed_intersection", "intersection"),
        ("seed_per_statement", "per-statement"),
    ):
        assert yaml.safe_load((EXAMPLES / f"{name}.body.yaml").read_text())["split"] == mode


def test_run_accepts_a_body_file(cli, tmp_path):
    r = cli("run", str(SEED), "--out-dir", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    fuse = orjson.loads((tmp_path / "out" / "fuse.json").read_bytes())
    assert fuse["solve"]["cost"]["total"] == 41
    assert [b["members"] for b in fuse["fuse"]["blocks"]] == [["bb0"], ["bb0.1"]]


def test_size_cap_option_overrides_the_file(cli, tmp_path):
    plan, _ = solve(cli, tmp_path, str(SEED), "--size-cap", "10")
    assert plan["blocks"][0]["premium"] == {I: 5}
    assert plan["lower"]["size_cap"] == 10


def test_any_set_of_targets_through_a_profile_file(cli, tmp_path):
    prof = {
        "name": "two",
        "fallback": "cpu",
        "transfer_unit": 2,
        "targets": [
            {
                "name": "cpu",
                "statements": {"load": 3, "binary": 3, "apply": 3},
                "terminators": {"return": 1, "goto": 1},
                "calls": True,
                "closures": True,
            },
            {
                "name": "gpu",
                "statements": {"load": 1, "binary": 1},
                "terminators": {"return": 1, "goto": 1},
                "enterable": True,
                "loops": True,
            },
        ],
        "overhead": {"gpu": {"cpu": 5}, "cpu": {"gpu": 5}},
    }
    pf = tmp_path / "targets.yaml"
    pf.write_text(yaml.safe_dump(prof))
    plan, art = solve(cli, tmp_path, str(SEED), "--targets", str(pf))
    assert plan["targets"] == ["cpu", "gpu"]
    # gpu reads arguments whole (the default), has no calls: the closure call and what uses it stay on cpu
    assert plan["lower"]["statements"]["bb0"] == [["cpu", "gpu"], ["cpu", "gpu"], ["cpu"], ["cpu"]]
    assert [len(b["statements"]) for b in plan["blocks"]] == [2, 2]
    assert "paths" not in plan["blocks"][0]  # this profile declares no vertex paths: ...
    assert (
        plan["blocks"][0]["terminator"]["successors"][0]["transitions"]["gpu"]["cpu"] == 2 * 1 + 5
    )
    assert art["status"] == "ok"


def test_plan_with_costs_gets_split_with_a_diagnostic(cli, tmp_path):
    plan = {
        "version": 1,
        "targets": ["a", "b"],
        "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 3}},
        "blocks": [
            {
                "id": "bb0",
                "statements": [
                    {"cost": {"a": 5, "b": 1}},
                    {"cost": {"a": 5, "b": 1}},
                    {"cost": {"a": 1}},
                ],
                "terminator": {"kind": "goto", "successors": [{"block": "bb1"}]},
            },
            {"id": "bb1", "terminator": {"kind": "return"}},
        ],
    }
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(plan))
    out, art = solve(cli, tmp_path, str(f))
    assert [b["id"] for b in out["blocks"]] == ["bb0", "bb0.1", "bb1"]
    assert out["lower"]["diagnostics"][0]["code"] == "no-propagation"
    assert art["solve"]["cost"]["total"] == 2 + 3 + 1
    before = cli("solve", str(f))
    assert orjson.loads(before.stdout)["solve"]["cost"]["total"] == 11


def test_unpriceable_sizes_warn_on_stderr(cli, tmp_path):
    doc = yaml.safe_load(SEED.read_text())
    del doc["size_cap"]
    f = tmp_path / "s.body.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = cli("lower", str(f))
    assert r.returncode == 0
    assert "unpriceable-premium" in r.stderr.decode()
    assert "unpriceable-premium" not in cli("lower", str(f), "--quiet").stderr.decode()


def test_lower_accepts_an_artifact_and_splits_its_plan(cli, tmp_path):
    r = cli(
        "run", str(EXAMPLES / "three_targets.yaml"), "--out-dir", str(tmp_path / "out"), "--quiet"
    )
    assert r.returncode == 0
    out, art = solve(cli, tmp_path, str(tmp_path / "out" / "prune.json"))
    assert out["lower"]["blocks_after"] >= out["lower"]["blocks_before"]
    assert art["status"] == "ok"


def test_per_block_live_sets_and_sizes(cli, tmp_path):
    plan, _ = solve(cli, tmp_path, str(SEED))
    assert plan["lower"]["blocks"]["bb0.1"] == {"live_in": ["adult"], "live_units": [1, 1]}
    assert plan["lower"]["sizes"]["age"] == {"units": [1, 1], "cardinality": [1, 1]}
