"""`placement diff`: empty against itself, exit 7 with moved blocks and the cost split
when a plan change moves a block, exit 3 for inputs that are not comparable."""

from __future__ import annotations

import copy

import orjson
import pytest
import yaml

from placement_cli.core.io import dumps
from placement_cli.pipeline.run import STAGES, Loaded, Run, parse_plan
from tests.goldens import ROOT, plan_examples
from tests.views_goldens import invoke


@pytest.mark.parametrize("example", plan_examples(), ids=lambda p: p.stem)
@pytest.mark.parametrize("stage", STAGES)
def test_diff_with_itself_is_empty(example, stage):
    art = ROOT / "tests" / "goldens" / example.stem / f"{stage}.json"
    code, out, err = invoke(["diff", str(art), str(art), "--format", "json"])
    assert code == 0, err
    d = orjson.loads(out)
    assert d["same"] is True
    assert set(d) == {"kind", "a", "b", "same"}


def _artifact(plan, stage, path):
    run = Run(Loaded("<test>", parse_plan(plan)))
    run.run(stage)
    path.write_bytes(dumps(run.artifact(stage)))
    return run


def test_diff_reports_moved_blocks_and_cost_split(tmp_path):
    plan = yaml.safe_load((ROOT / "examples" / "three_targets.yaml").read_text())
    changed = copy.deepcopy(plan)
    bb4 = next(b for b in changed["blocks"] if b["id"] == "bb4")
    bb4["premium"] = {"interpreter": 40}  # now the embedding store is cheaper for bb4
    ra = _artifact(plan, "islands", tmp_path / "a.json")
    rb = _artifact(changed, "islands", tmp_path / "b.json")
    code, out, err = invoke(
        ["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json"]
    )
    assert code == 7, err
    d = orjson.loads(out)
    assert d["same"] is False
    assert [(c["block"], c["fields"]) for c in d["plan"]["blocks_changed"]] == [
        ("bb4", ["premium"])
    ]
    sa, sb = ra.sections["solve"]["assignment"], rb.sections["solve"]["assignment"]
    want = [{"block": k, "from": sa[k], "to": sb[k]} for k in sa if sa[k] != sb[k]]
    assert want and d["solve"]["moved"] == want
    ca, cb = ra.sections["solve"]["cost"], rb.sections["solve"]["cost"]
    delta = d["solve"]["cost"]["delta"]
    assert delta == {k: cb[k] - ca[k] for k in ("total", "blocks", "edges")}
    assert delta["blocks"] + delta["edges"] == delta["total"]
    assert "islands" in d
    code, text, _ = invoke(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert code == 7
    assert b"moved: bb4 interpreter -> embedding" in text
    assert b"blocks changed:\n  bb4 premium interpreter - -> 40\n" in text


def test_diff_of_different_stages_is_invalid_input():
    a = "tests/goldens/three_targets/solve.json"
    b = "tests/goldens/three_targets/islands.json"
    code, _, err = invoke(["diff", a, b])
    assert code == 3
    assert err.decode() == (
        f"{b}: kind: the islands stage's artifact, and {a} is the solve stage's: "
        "diff compares two artifacts of the same stage\n"
    )


def test_diff_of_a_plan_is_invalid_input():
    code, _, err = invoke(
        ["diff", "examples/three_targets.yaml", "tests/goldens/three_targets/solve.json"]
    )
    assert code == 3
    assert b"examples/three_targets.yaml: kind: a plan file, not an artifact" in err


def test_diff_missing_file_is_a_usage_error():
    code, _, _ = invoke(["diff", "nope.json", "tests/goldens/three_targets/solve.json"])
    assert code == 2


def test_diff_sees_a_changed_transition_behind_a_matrix_name(tmp_path):
    """Artifacts name shared matrices (`m0`, `m1`, ...): the same name in two artifacts
    can stand for different matrices, so diff compares the matrices, not the names."""
    plan = {
        "version": 1,
        "targets": ["a", "b"],
        "blocks": [
            {
                "id": "x",
                "cost": {"a": 1, "b": 2},
                "terminator": {
                    "kind": "goto",
                    "successors": [
                        {"block": "y", "transitions": {"a": {"a": 0, "b": 5}, "b": {"b": 0}}}
                    ],
                },
            },
            {"id": "y", "cost": {"a": 1, "b": 1}, "terminator": {"kind": "return"}},
        ],
    }
    changed = copy.deepcopy(plan)
    changed["blocks"][0]["terminator"]["successors"][0]["transitions"]["a"]["b"] = 6
    _artifact(plan, "prune", tmp_path / "a.json")
    _artifact(changed, "prune", tmp_path / "b.json")
    code, out, err = invoke(
        ["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json"]
    )
    assert code == 7, err
    d = orjson.loads(out)
    assert d["plan"]["edges_changed"] == [
        {
            "edge": "x[0]",
            "fields": ["transitions"],
            "changes": [{"path": ["transitions", "a", "b"], "a": 5, "b": 6}],
        }
    ], d["plan"]
    code, out, _ = invoke(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert b"edges changed:\n  x[0] transitions a b 5 -> 6\n" in out


def _three_targets_pair(tmp_path, change):
    plan = yaml.safe_load((ROOT / "examples" / "three_targets.yaml").read_text())
    changed = copy.deepcopy(plan)
    change({b["id"]: b for b in changed["blocks"]}, changed)
    _artifact(plan, "islands", tmp_path / "a.json")
    _artifact(changed, "islands", tmp_path / "b.json")
    return str(tmp_path / "a.json"), str(tmp_path / "b.json")


def test_diff_text_shows_every_changed_field_before_and_after(tmp_path):
    def change(blocks, plan):
        blocks["bb0"]["statements"][0]["cost"]["interpreter"] = 30
        blocks["bb4"]["premium"] = {"interpreter": 40}
        blocks["bb0"]["terminator"]["cost"]["postgres"] = 3
        plan["transitions"]["postgres"]["embedding"] = 15

    a, b = _three_targets_pair(tmp_path, change)
    code, out, err = invoke(["diff", a, b])
    assert code == 7, err
    text = out.decode()
    for line in (
        "  bb0 statements[0] cost interpreter 8 -> 30",
        "  bb0 cost interpreter 24 -> 46",
        "  bb0 terminator cost postgres 2 -> 3",
        "  bb4 premium interpreter - -> 40",
        "  transitions postgres embedding 14 -> 15",
    ):
        assert line + "\n" in text, text
    code, out, _ = invoke(["diff", a, b, "--format", "json"])
    d = orjson.loads(out)
    bb0 = next(c for c in d["plan"]["blocks_changed"] if c["block"] == "bb0")
    assert {"path": ["cost", "interpreter"], "a": 24, "b": 46} in bb0["changes"]


def test_diff_names_islands_by_entry_block_and_prints_the_schedule_as_text(tmp_path):
    def change(blocks, plan):
        blocks["bb4"]["premium"] = {"interpreter": 40}  # bb4 moves: islands renumber

    a, b = _three_targets_pair(tmp_path, change)
    code, out, err = invoke(["diff", a, b])
    assert code == 7, err
    text = out.decode()
    assert "island i" not in text and "i1 ->" not in text, text  # never a position
    assert "island bb2 changed: members bb2 bb4 bb6 -> bb2\n" in text, text
    assert "island bb4 added: embedding: bb4\n" in text, text
    assert "schedule:\n  a: [bb0] [bb2 bb3]\n  b: [bb0] [bb2] [bb3 bb4] [bb6]\n" in text, text
    assert "[[" not in text and "['" not in text, text


def test_diff_island_names_survive_renumbering(tmp_path):
    """The same islands under other ids, in another order: no differences."""
    src = orjson.loads((ROOT / "tests/goldens/three_targets/islands.json").read_bytes())
    ren = {"i0": "i2", "i2": "i0"}
    s = src["islands"]
    for i in s["islands"]:
        i["id"] = ren.get(i["id"], i["id"])
    s["islands"].sort(key=lambda i: i["id"])
    g = s["graph"]
    g["entry"] = ren.get(g["entry"], g["entry"])
    for n in g["nodes"]:
        n["id"] = ren.get(n["id"], n["id"])
    for e in g["edges"]:
        e["from"], e["to"] = ren.get(e["from"], e["from"]), ren.get(e["to"], e["to"])
    for lv in s["schedule"]["levels"]:
        lv[:] = [ren.get(x, x) for x in lv]
    for gr in s["schedule"]["groups"]:
        gr["nodes"] = [ren.get(x, x) for x in gr["nodes"]]
    (tmp_path / "p.json").write_bytes(orjson.dumps(src))
    code, out, err = invoke(
        ["diff", "tests/goldens/three_targets/islands.json", str(tmp_path / "p.json")]
    )
    assert code == 0, out + err


def test_diff_quiet_prints_nothing_and_exits_by_the_result(tmp_path):
    a, b = _three_targets_pair(tmp_path, lambda blocks, plan: None)
    assert invoke(["diff", "-q", a, b]) == (0, b"", b"")
    a, b = _three_targets_pair(
        tmp_path, lambda blocks, plan: blocks["bb4"].update(premium={"interpreter": 40})
    )
    assert invoke(["diff", "--quiet", a, b]) == (7, b"", b"")
    assert invoke(["diff", "-q", a, b, "--format", "json"]) == (7, b"", b"")


def test_diff_of_tree_artifacts(tmp_path):
    tree = str(ROOT / "examples" / "operator_tree.yaml")
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert invoke(["tree", tree, "-o", a, "--quiet"])[0] == 0
    assert invoke(["tree", tree, "-o", b, "--quiet", "--budget", "2"])[0] == 0
    code, out, err = invoke(["diff", a, a])
    assert (code, out) == (0, f"{a} -> {a} (tree artifacts): no differences\n".encode()), err
    code, out, err = invoke(["diff", a, b])
    assert code == 7, err
    text = out.decode()
    assert "budget: 3 -> 2\n" in text and "latency: 78.8088 -> 80.8\n" in text, text
    assert "moved: " in text and "cut removed: " in text and "critical path:\n  a: " in text
    assert invoke(["diff", "-q", a, b]) == (7, b"", b"")
    code, out, _ = invoke(["diff", a, b, "--format", "json"])
    assert orjson.loads(out)["kind"] == "tree"
    code, _, err = invoke(["diff", a, "tests/goldens/three_targets/islands.json"])
    assert code == 3 and b"is a tree artifact and this is not" in err, err
