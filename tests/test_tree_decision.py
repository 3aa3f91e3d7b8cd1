"""The decision a probed tree supports (`algorithms/tree/decide.py`) and `execute
--verify`'s rule (`engines/verify.py`), against references written here from the
documents' words: plain dicts, the all-on-one-engine latency recomputed recursively,
the sign test by counting every sequence of coin flips.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from placement_cli.app.cli import app
from placement_cli.engines.measure import Outcome
from placement_cli.engines.placements import fragments, predicted
from placement_cli.engines.runs import Run
from placement_cli.engines.verify import ALPHA, MIN_GAIN, judge, sign_p
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.options import TreeOptions
from placement_cli.ir.tree.read import parse_tree
from placement_cli.pipeline.tree_artifact import tree_artifact

ENGINES = ["duckdb", "datafusion"]


def _measured(x: float, spread: float = 0.0) -> dict[str, Any]:
    return {"median": x, "min": x * (1 - spread), "max": x * (1 + spread), "runs": 3}


def random_probed(rng: random.Random) -> dict[str, Any]:
    """A small probed tree file: self-times, sizes, a transfer, each engine's whole-plan
    subtree on the root and the query as written on some engines (ms, multiples of 1/8)."""
    n = rng.randint(2, 6)
    ids = [f"n{i}" for i in range(n)]
    parent = [-1] + [rng.randrange(i) for i in range(1, n)]
    nodes = []
    for i in range(n):
        nodes.append(
            {
                "id": ids[i],
                "children": [ids[j] for j in range(n) if parent[j] == i],
                "time": {e: rng.randint(0, 40) / 8 for e in ENGINES},
                "rows": rng.randint(1, 1000),
                "row_width": 8,
            }
        )
    nodes[0]["subtree"] = {
        e: _measured(rng.randint(1, 200) / 8, rng.choice([0, 0.125])) for e in ENGINES
    }
    written = {e: _measured(rng.randint(1, 200) / 8) for e in ENGINES if rng.random() < 0.7}
    return {
        "version": 1,
        "engines": ENGINES,
        "budget": rng.randint(0, 2),
        "nodes": nodes,
        "transfer": {"default": {"fixed": rng.randint(0, 8) / 8}},
        "query": {"sql": "select 1", "as_written": written},
    }


def all_on(doc: dict[str, Any], e: str) -> float:
    """Latency of everything on `e`: self-time plus the slowest child, recursively."""
    by_id = {n["id"]: n for n in doc["nodes"]}

    def lat(i: str) -> float:
        node = by_id[i]
        return node["time"][e] + max((lat(c) for c in node["children"]), default=0.0)

    return lat(doc["nodes"][0]["id"])


def reference_choice(doc: dict[str, Any], latency: float, cuts: int) -> tuple[str, str, str]:
    """The documented rule, restated: ("split", "", "") or ("single", engine, sql)."""
    ways = []
    for e in ENGINES:
        if e in doc["query"]["as_written"]:
            ways.append((doc["query"]["as_written"][e], e, "as-written"))
        ways.append((doc["nodes"][0]["subtree"][e], e, "plan"))
    m, e, sql = min(ways, key=lambda w: w[0]["median"])  # min keeps the first of equals
    errors = [
        abs(all_on(doc, x) - doc["nodes"][0]["subtree"][x]["median"])
        / doc["nodes"][0]["subtree"][x]["median"]
        for x in ENGINES
    ]
    eps = max(errors) + (m["max"] - m["min"]) / m["median"]
    if cuts > 0 and latency * (1 + eps) < m["median"]:
        return ("split", "", "")
    return ("single", e, sql)


def test_decision_follows_the_documented_rule_on_random_probed_trees() -> None:
    rng = random.Random(7)
    kinds = {"split": 0, "single": 0}
    for _ in range(400):
        doc = random_probed(rng)
        art, _ = tree_artifact(parse_tree(doc), TreeOptions())
        sec = art["tree"]
        d = sec["decision"]
        want = reference_choice(doc, sec["latency"], sec["cuts_used"])
        c = d["chosen"]
        got = ("split", "", "") if c["kind"] == "split" else ("single", c["engine"], c["sql"])
        assert got == want, (doc, d)
        kinds[c["kind"]] += 1
        if c["kind"] == "split":
            assert c["engines"] == sec["engines"] and sec["cuts_used"] > 0
    assert kinds["split"] > 10 and kinds["single"] > 10  # both sides of the rule were met


def test_a_tree_without_measured_ways_has_no_decision() -> None:
    rng = random.Random(3)
    doc = random_probed(rng)
    del doc["query"]
    del doc["nodes"][0]["subtree"]
    art, summary = tree_artifact(parse_tree(doc), TreeOptions())
    assert "decision" not in art["tree"] and "chosen" not in summary


def test_validate_recomputes_the_decision_and_names_a_changed_one(tmp_path: Path) -> None:
    rng = random.Random(11)
    doc = random_probed(rng)
    (tmp_path / "t.json").write_text(json.dumps(doc))
    runner = CliRunner()
    r = runner.invoke(app, ["tree", str(tmp_path / "t.json"), "-o", str(tmp_path / "a.json")])
    assert r.exit_code == 0, r.output
    assert runner.invoke(app, ["validate", str(tmp_path / "a.json")]).exit_code == 0
    art = json.loads((tmp_path / "a.json").read_text())
    other = (
        "datafusion" if art["tree"]["decision"]["chosen"].get("engine") == "duckdb" else "duckdb"
    )
    art["tree"]["decision"]["chosen"] = {"kind": "single", "engine": other, "sql": "plan"}
    (tmp_path / "b.json").write_text(json.dumps(art))
    r = runner.invoke(app, ["validate", str(tmp_path / "b.json")])
    assert r.exit_code == 3 and "tree.decision" in r.output


@pytest.mark.parametrize("pairs", range(0, 11))
def test_sign_test_counts_every_sequence_of_flips(pairs: int) -> None:
    for wins in range(pairs + 1):
        hits = sum(1 for s in itertools.product((0, 1), repeat=pairs) if sum(s) >= wins)
        assert sign_p(wins, pairs) == pytest.approx(hits / 2**pairs, abs=0)


def _outcome(tree: Any, assignment: tuple[int, ...], ms: list[float]) -> Outcome:
    o = Outcome(assignment, fragments(tree, assignment), predicted(tree, assignment))
    o.runs = [Run(x / 1000.0, (), (), x / 1000.0) for x in ms]
    return o


def _tiny() -> Any:
    doc = {
        "version": 1,
        "engines": ENGINES,
        "budget": 1,
        "nodes": [
            {"id": "r", "children": ["c"], "time": {"duckdb": 1, "datafusion": 1}},
            {"id": "c", "time": {"duckdb": 1, "datafusion": 1}},
        ],
        "transfer": {"default": {"fixed": 1}},
    }
    return build_tree(parse_tree(doc))[0]


def reference_adopts(split: list[float], single: list[float]) -> bool:
    """Adopt when every paired round is won or the sign test gives p < ALPHA, and the
    median is at least MIN_GAIN lower; the sign test counted by brute force."""
    n = min(len(split), len(single))
    wins = sum(1 for a, b in zip(split, single, strict=False) if a < b)
    p = sum(1 for s in itertools.product((0, 1), repeat=n) if sum(s) >= wins) / 2**n

    def med(xs: list[float]) -> float:
        ys = sorted(xs)
        h = len(ys) // 2
        return ys[h] if len(ys) % 2 else (ys[h - 1] + ys[h]) / 2

    return (wins == n or p < ALPHA) and 1 - med(split) / med(single) >= MIN_GAIN


def test_judge_adopts_a_split_exactly_when_the_rule_says() -> None:
    tree = _tiny()
    rng = random.Random(5)
    adopted = kept = 0
    for _ in range(300):
        rounds = rng.randint(5, 9)
        base = [rng.uniform(8, 12) for _ in range(rounds)]
        other = [x * rng.uniform(1.0, 1.5) for x in base]  # the slower single way
        split = [x * rng.uniform(0.7, 1.1) for x in base]
        outs = [
            _outcome(tree, (0, 0), base),
            _outcome(tree, (1, 1), other),
            _outcome(tree, (0, 1), split),
        ]
        labels = ["duckdb", "datafusion", "duckdb; c->datafusion"]
        evidence, pick, diags = judge(labels, outs, 2)
        assert evidence["fastest_single"] == "duckdb"
        want = reference_adopts(split, base)
        assert (pick == 2) == want, evidence
        assert diags[0].code == ("split-adopted" if want else "split-rejected")
        adopted += want
        kept += not want
    assert adopted > 20 and kept > 20


def test_judge_keeps_the_single_way_when_no_split_ran() -> None:
    tree = _tiny()
    outs = [_outcome(tree, (0, 0), [10, 11, 9, 10, 10]), _outcome(tree, (1, 1), [5, 5, 5, 5, 5])]
    bad = _outcome(tree, (0, 1), [])
    bad.status = "not-executable"
    evidence, pick, _ = judge(["duckdb", "datafusion", "split"], [*outs, bad], 2)
    assert pick == 1 and evidence["adopted"] == "datafusion" and "best_split" not in evidence
    assert math.isclose(evidence["fastest_single_ms"], 5.0)
