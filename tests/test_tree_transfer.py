"""`tree --transfer PROFILE`: a fitted transfer profile replaces the tree file's linear
models for its engine pairs before the tree is checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import yaml

from tests.conftest import EXAMPLES, run_cli

# Two engines; the scan is faster on `a`, the rest on `b`. Cutting after the scan
# saves 30 ms of operator time, so whether to cut is decided by the fixed cost.
TREE = {
    "version": 1,
    "engines": ["a", "b"],
    "budget": 1,
    "nodes": [
        {"id": "agg", "children": ["scan"], "time": {"a": 40, "b": 20}, "rows": 1, "row_width": 8},
        {"id": "scan", "time": {"a": 10, "b": 20}, "rows": 1000, "row_width": 16},
    ],
    "transfer": {"linear": {"a": {"b": {"fixed": 70}}, "b": {"a": {"fixed": 70}}}},
}


def _profile(fixed: float, src: str = "a", dst: str = "b") -> dict:
    return {
        "version": 1,
        "kind": "transfer-profile",
        "directions": [
            {"src": src, "dst": dst, "model": {"fixed": fixed, "per_row": 0.001}},
            {"src": "duckdb", "dst": "b", "model": {"fixed": 1}},
        ],
    }


def _run(tmp_path: Path, profile: dict | None, tree: dict = TREE) -> tuple[int, dict, bytes]:
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(tree))
    args = ["tree", str(tmp_path / "t.yaml")]
    if profile is not None:
        (tmp_path / "p.json").write_bytes(orjson.dumps(profile))
        args += ["--transfer", str(tmp_path / "p.json")]
    out = run_cli(*args)
    return out.returncode, orjson.loads(out.stdout) if out.stdout else {}, out.stderr


def test_the_profile_changes_the_placement_where_the_fixed_cost_decides(tmp_path: Path) -> None:
    code, plain, _ = _run(tmp_path, None)
    assert code == 0 and plain["tree"]["cuts_used"] == 0  # a 70 ms hand-off never pays
    code, art, _ = _run(tmp_path, _profile(3))
    assert code == 0, art
    t = art["tree"]
    assert t["engines"] == {"agg": "b", "scan": "a"} and t["cuts_used"] == 1
    assert t["latency"] == 20 + 10 + 3 + 1  # agg on b, scan on a, 3 ms + 1000 rows x 0.001
    data = (tmp_path / "p.json").read_bytes()
    assert t["transfer_ref"] == {"name": "p.json", "sha256": hashlib.sha256(data).hexdigest()}
    # The unused direction (an engine the tree lacks) is an info; nothing uncovered
    # because the file's own b -> a model is kept.
    codes = [(d["severity"], d["code"]) for d in art["diagnostics"]]
    assert codes == [("info", "transfer-profile-unused")]


def test_explicit_entries_still_win(tmp_path: Path) -> None:
    tree = {
        **TREE,
        "transfer": {
            **TREE["transfer"],
            "explicit": [{"child": "scan", "from": "a", "to": "b", "cost": 500}],
        },
    }
    code, art, _ = _run(tmp_path, _profile(3), tree)
    assert code == 0 and art["tree"]["cuts_used"] == 0


def test_a_misspelt_engine_leaving_a_pair_uncovered_is_reported(tmp_path: Path) -> None:
    tree = {**TREE, "transfer": {}}
    code, art, err = _run(tmp_path, _profile(3, src="A"), tree)
    assert code == 0
    warn = [d for d in art["diagnostics"] if d["code"] == "transfer-uncovered"]
    assert len(warn) == 1 and "a->b" in warn[0]["message"] and "A->b" in warn[0]["message"]
    assert b"transfer-uncovered" in err
    assert art["tree"]["cuts_used"] == 0


def test_the_example_tree_takes_a_profile(tmp_path: Path) -> None:
    prof = {
        "version": 1,
        "kind": "transfer-profile",
        "directions": [{"src": "postgres", "dst": "duckdb", "model": {"fixed": 0.5}}],
    }
    (tmp_path / "p.json").write_bytes(orjson.dumps(prof))
    base = run_cli("tree", str(EXAMPLES / "operator_tree.yaml"))
    out = run_cli(
        "tree", str(EXAMPLES / "operator_tree.yaml"), "--transfer", str(tmp_path / "p.json")
    )
    assert out.returncode == 0, out.stderr
    assert (
        orjson.loads(out.stdout)["tree"]["latency"] < orjson.loads(base.stdout)["tree"]["latency"]
    )


def test_a_file_that_is_not_a_profile_is_invalid_input(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(TREE))
    out = run_cli("tree", str(tmp_path / "t.yaml"), "--transfer", str(tmp_path / "t.yaml"))
    assert out.returncode == 3 and b"not a transfer profile" in out.stderr
    bad = {
        "version": 1,
        "kind": "transfer-profile",
        "directions": [{"src": "a", "dst": "b", "model": {"fixed": -1}}],
    }
    (tmp_path / "p.json").write_bytes(orjson.dumps(bad))
    out = run_cli("tree", str(tmp_path / "t.yaml"), "--transfer", str(tmp_path / "p.json"))
    assert out.returncode == 3 and b"directions[0].model.fixed" in out.stderr


def test_validate_needs_the_tree_as_placed(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(TREE))
    (tmp_path / "p.json").write_bytes(orjson.dumps(_profile(3)))
    args = ["tree", str(tmp_path / "t.yaml"), "--transfer", str(tmp_path / "p.json"), "-o"]
    assert run_cli(*args, str(tmp_path / "a.json")).returncode == 0
    out = run_cli("validate", str(tmp_path / "a.json"))
    assert out.returncode == 3 and b"--include-input" in out.stderr
    assert run_cli(*args, str(tmp_path / "b.json"), "--include-input").returncode == 0
    out = run_cli("validate", str(tmp_path / "b.json"))
    assert out.returncode == 0, out.stderr
    out = run_cli("show", str(tmp_path / "a.json"), "--format", "text")
    assert out.returncode == 0, out.stderr  # drawing needs only the operators


def test_the_input_names_the_profile_its_models_came_from(tmp_path: Path) -> None:
    """A file made with profile A (`import --transfer A`) placed with `--transfer B`:
    the input the artifact echoes names B, never A."""
    earlier = {
        **TREE,
        "transfer": {**TREE["transfer"], "profile": {"name": "a.json", "sha256": "0" * 64}},
    }
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(earlier))
    (tmp_path / "p.json").write_bytes(orjson.dumps(_profile(3)))
    out = run_cli(
        "tree", str(tmp_path / "t.yaml"), "--transfer", str(tmp_path / "p.json"), "--include-input"
    )
    assert out.returncode == 0, out.stderr
    t = orjson.loads(out.stdout)["tree"]
    assert t["input"]["transfer"]["profile"] == t["transfer_ref"]
    assert t["transfer_ref"]["name"] == "p.json"
