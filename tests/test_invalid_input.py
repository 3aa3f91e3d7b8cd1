"""Every class of invalid input: exit code 3 (or 2 for usage) and `FILE: PATH: message`."""

from __future__ import annotations

import copy
import os
import pty
import subprocess
import sys
from typing import Any

import orjson
import pytest
import yaml

from tests.conftest import ROOT, run_cli

GOOD: dict[str, Any] = {
    "version": 1,
    "targets": ["interp", "pg"],
    "transitions": {"interp": {"interp": 0}, "pg": {"pg": 0, "interp": 3}},
    "paths": {"vertex.name": ["pg"]},
    "blocks": [
        {
            "id": "bb0",
            "params": [],
            "paths": ["vertex.name"],
            "statements": [{"text": "x", "cost": {"interp": 8, "pg": 4}}],
            "terminator": {"kind": "switch", "successors": [{"block": "bb1", "args": ["a"]}, {"block": "bb2"}]},
        },
        {"id": "bb1", "params": ["p"], "terminator": {"kind": "goto", "successors": [{"block": "bb2"}]}},
        {"id": "bb2", "terminator": {"kind": "return"}},
    ],
}


def _run_plan(tmp_path, plan: Any, suffix: str = ".json", stage: str = "validate") -> subprocess.CompletedProcess[bytes]:
    f = tmp_path / f"plan{suffix}"
    if suffix == ".json":
        f.write_bytes(orjson.dumps(plan))
    else:
        f.write_text(plan if isinstance(plan, str) else yaml.safe_dump(plan))
    return run_cli(stage, str(f))


def _mutate(fn) -> dict[str, Any]:
    p = copy.deepcopy(GOOD)
    fn(p)
    return p


def test_good_plan_validates(tmp_path):
    r = _run_plan(tmp_path, GOOD)
    assert r.returncode == 0, r.stderr
    assert b"ok: 3 blocks, 3 edges, 2 targets" in r.stderr


CASES = [
    ("unknown successor block", lambda p: p["blocks"][0]["terminator"]["successors"][1].update(block="bb9"),
     "blocks[0].terminator.successors[1].block: unknown block 'bb9'"),
    ("duplicate block id", lambda p: p["blocks"][2].update(id="bb1"),
     "blocks[2].id: duplicate block id 'bb1'"),
    ("duplicate target", lambda p: p.update(targets=["interp", "interp"]), "targets[1]: duplicate target 'interp'"),
    ("args/params mismatch", lambda p: p["blocks"][0]["terminator"]["successors"][0].update(args=[]),
     "blocks[0].terminator.successors[0].args: block 'bb1' takes 1 argument(s), got 0"),
    ("non-zero diagonal", lambda p: p["transitions"]["pg"].update(pg=2), "transitions.pg.pg: a same-target transition costs 0"),
    ("goto with two successors", lambda p: p["blocks"][1]["terminator"]["successors"].append({"block": "bb2"}),
     "blocks[1].terminator.successors: a 'goto' terminator has exactly 1 successor(s), got 2"),
    ("return with a successor", lambda p: p["blocks"][2]["terminator"].update(successors=[{"block": "bb0"}]),
     "blocks[2].terminator.successors: a 'return' terminator has exactly 0 successor(s), got 1"),
    ("switch without successors", lambda p: p["blocks"][0]["terminator"].update(successors=[]),
     "blocks[0].terminator.successors: a 'switch' terminator has at least 1 successor(s), got 0"),
    ("negative cost", lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg=-1),
     "blocks[0].statements[0].cost.pg: Input should be greater than or equal to 0"),
    ("unknown path", lambda p: p["blocks"][0].update(paths=["vertex.nope"]),
     "blocks[0].paths[0]: unknown path 'vertex.nope'"),
    ("unknown target in statement", lambda p: p["blocks"][0]["statements"][0]["cost"].update(gpu=1),
     "blocks[0].statements[0].cost.gpu: unknown target 'gpu'"),
    ("unknown target in domain", lambda p: p["blocks"][1].update(domain=["gpu"]), "blocks[1].domain[0]: unknown target 'gpu'"),
    ("unknown target in edge matrix", lambda p: p["blocks"][1]["terminator"]["successors"][0].update(transitions={"gpu": {"pg": 1}}),
     "blocks[1].terminator.successors[0].transitions.gpu: unknown target 'gpu'"),
    ("unknown target in premium", lambda p: p["blocks"][1].update(premium={"gpu": 1}), "blocks[1].premium.gpu: unknown target 'gpu'"),
    ("unknown path origin", lambda p: p["paths"].update({"v.x": ["gpu"]}), "paths.v.x[0]: unknown target 'gpu'"),
    ("unknown entry", lambda p: p.update(entry="bb7"), "entry: unknown block 'bb7'"),
    ("missing terminator", lambda p: p["blocks"][2].pop("terminator"), "blocks[2].terminator: required field is missing"),
    ("unknown field", lambda p: p["blocks"][2].update(colour="red"), "blocks[2].colour: unknown field"),
    ("bad terminator kind", lambda p: p["blocks"][2]["terminator"].update(kind="jump"), "blocks[2].terminator.kind: Input should be"),
    ("wrong version", lambda p: p.update(version=2), "version: Input should be 1"),
    ("no targets", lambda p: p.update(targets=[]), "targets: List should have at least 1 item"),
    ("too many targets", lambda p: p.update(targets=[f"t{i}" for i in range(65)]), "targets: List should have at most 64 items"),
    ("no blocks", lambda p: p.update(blocks=[]), "blocks: List should have at least 1 item"),
    ("cost is a string", lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg="4"),
     "blocks[0].statements[0].cost.pg: Input should be a valid number"),
    ("cost is a bool", lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg=True),
     "blocks[0].statements[0].cost.pg: Input should be a valid number"),
]


@pytest.mark.parametrize("name,mutate,expected", CASES, ids=[c[0] for c in CASES])
def test_invalid_plan(tmp_path, name, mutate, expected):
    r = _run_plan(tmp_path, _mutate(mutate))
    assert r.returncode == 3, (name, r.stderr)
    lines = r.stderr.decode().splitlines()
    want = f"{tmp_path / 'plan.json'}: {expected}"
    assert any(line.startswith(want) for line in lines), (want, lines)
    assert b"Traceback" not in r.stderr


def test_all_problems_reported_at_once(tmp_path):
    def two(p):
        p["blocks"][0]["terminator"]["successors"][1]["block"] = "bb9"
        p["blocks"][2]["id"] = "bb1"
    r = _run_plan(tmp_path, _mutate(two))
    assert r.returncode == 3
    err = r.stderr.decode()
    assert "unknown block 'bb9'" in err and "duplicate block id 'bb1'" in err


def test_invalid_json_syntax(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(b'{"version": 1, "targets": [')
    r = run_cli("prune", str(f))
    assert r.returncode == 3
    assert r.stderr.decode().startswith(f"{f}: invalid JSON")


def test_invalid_yaml_syntax(tmp_path):
    r = _run_plan(tmp_path, "version: 1\ntargets: [a, b\n", suffix=".yaml")
    assert r.returncode == 3
    assert "invalid YAML" in r.stderr.decode()


def test_yaml_11_surprises_are_caught(tmp_path):
    # `no` is a bool and `012` an int in YAML 1.1: a strict model rejects both with a path.
    text = "version: 1\ntargets: [interp]\nblocks:\n  - id: no\n    terminator: {kind: return}\n"
    r = _run_plan(tmp_path, text, suffix=".yaml")
    assert r.returncode == 3
    assert "blocks[0].id: Input should be a valid string" in r.stderr.decode()


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_non_finite_costs_rejected(tmp_path, value):
    text = (
        "version: 1\ntargets: [interp]\nblocks:\n  - id: bb0\n    cost: {interp: " + value + "}\n"
        "    terminator: {kind: return}\n"
    )
    r = _run_plan(tmp_path, text, suffix=".yaml")
    assert r.returncode == 3
    assert "blocks[0].cost.interp: Input should be a finite number" in r.stderr.decode()


def test_nan_in_json_rejected(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(b'{"version": 1, "targets": ["a"], "blocks": [{"id": "b", "cost": {"a": NaN}, "terminator": {"kind": "return"}}]}')
    r = run_cli("validate", str(f))
    assert r.returncode == 3
    assert b"blocks[0].cost.a" in r.stderr


def test_top_level_not_a_mapping(tmp_path):
    r = _run_plan(tmp_path, "- 1\n- 2\n", suffix=".yaml")
    assert r.returncode == 3
    assert "a plan file is a mapping" in r.stderr.decode()


def test_artifact_errors_have_plan_prefix(tmp_path):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art["plan"]["blocks"][0]["terminator"]["successors"][0]["block"] = "nowhere"
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert f"{f}: plan.blocks[0].terminator.successors[0].block: unknown block 'nowhere'" in r.stderr.decode()


@pytest.mark.parametrize(
    "patch,expected",
    [
        ({"format_version": 9}, "format_version: unsupported artifact version 9"),
        ({"kind": "bake"}, "kind: not an artifact this tool reads"),
        ({"status": "maybe"}, "status: expected 'ok' or 'infeasible'"),
    ],
)
def test_bad_artifact_envelope(tmp_path, patch, expected):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art.update(patch)
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert f"{f}: {expected}" in r.stderr.decode()


def test_bad_prune_section_in_artifact(tmp_path):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art["prune"]["domains"]["bb2"] = ["postgres"]  # bb2 cannot run on postgres at all
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert "prune.domains.bb2: not a subset of the block's domain" in r.stderr.decode()


def test_missing_file_is_usage_error(tmp_path):
    r = run_cli("prune", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2
    assert b"no such file" in r.stderr


def test_unknown_flag_is_usage_error():
    r = run_cli("prune", "--frobnicate", "x")
    assert r.returncode == 2


def test_dash_on_a_terminal_is_usage_error():
    master, slave = pty.openpty()
    try:
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "prune", "-"],
            stdin=slave, capture_output=True, timeout=30, cwd=ROOT,
        )
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 2
    assert b"standard input, which is a terminal" in r.stderr


def test_failed_run_leaves_no_output_file(tmp_path):
    out = tmp_path / "out.json"
    out.write_bytes(b"previous\n")
    r = _run_plan(tmp_path, _mutate(lambda p: p.update(entry="zz")), stage="prune")
    assert r.returncode == 3
    r = run_cli("prune", str(tmp_path / "plan.json"), "-o", str(out))
    assert r.returncode == 3
    assert out.read_bytes() == b"previous\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


def test_closed_pipe_is_not_a_traceback():
    cmd = f"{sys.executable} -m placement_cli prune examples/three_targets.yaml | head -c 10 >/dev/null"
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, cwd=ROOT, timeout=60)
    assert b"Traceback" not in r.stderr
    assert b"BrokenPipe" not in r.stderr


def test_version_and_help():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith(b"placement ")
    r = run_cli("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for word in ("prune", "scc", "solve", "fuse", "islands", "run", "tree", "Exit codes", "placement prune plan.yaml | placement scc -"):
        assert word in out


@pytest.mark.parametrize(
    "patch,expected",
    [
        (lambda s: s["assignment"].update(bb2="postgres"), "solve.assignment.bb2"),
        (lambda s: s["assignment"].update(bb9="interpreter"), "solve.assignment.bb9"),
        (lambda s: s["assignment"].pop("bb3"), "solve.assignment.bb3"),
    ],
    ids=["target outside the domain", "unknown block", "missing block"],
)
def test_bad_solve_section_in_artifact(tmp_path, patch, expected):
    art = orjson.loads(run_cli("solve", str(ROOT / "examples/three_targets.yaml")).stdout)
    patch(art["solve"])
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("fuse", str(f))
    assert r.returncode == 3, r.stderr
    assert f"{f}: {expected}" in r.stderr.decode()


def test_negative_time_limit_is_usage_error():
    r = run_cli("solve", "examples/three_targets.yaml", "--time-limit", "-1")
    assert r.returncode == 2
