"""`import sql --probe --in-pipeline` on real engines: each node's rest of the query,
timed with the node's result handed in, written as `above`; `tree --latency measured`
then predicts every one-cut placement as its two fragments measured, and `execute`
runs those placements with the answer checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from placement_cli.formats.tree import TreeFile


def _ok(cli: Any, tmp_path: Path, *args: str) -> None:
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 0, (args[0], r.stderr.decode())


def test_every_node_gets_its_rest_and_one_cut_is_predicted_as_measured(
    cli: Any, tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path
) -> None:
    (tmp_path / "q.sql").write_text(tpch_sql[3])
    _ok(cli, tmp_path, "import", "sql", "q.sql", "--probe", "--in-pipeline", "--db", str(tpch_db), "--engines", "duckdb,datafusion", "--repeat", "2", "-q", "-o", "t.json")  # fmt: skip
    doc = json.loads((tmp_path / "t.json").read_text())
    TreeFile.model_validate(doc)
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert "above" not in nodes[doc["root"]]
    for nid, n in nodes.items():
        if nid == doc["root"]:
            continue
        assert set(n["above"]) == set(nodes[doc["root"]]["subtree"]), nid
        assert all(
            m["runs"] == 2 and m["min"] <= m["median"] <= m["max"] for m in n["above"].values()
        )
    # Every one-cut placement, predicted by the measured model, run and checked.
    _ok(
        cli,
        tmp_path,
        "tree",
        "t.json",
        "--latency",
        "measured",
        "--budget",
        "1",
        "-q",
        "-o",
        "p.json",
    )
    _ok(cli, tmp_path, "execute", "p.json", "--db", str(tpch_db), "--all", "--budget", "1", "--repeat", "1", "-q", "-o", "r.json")  # fmt: skip
    placements = json.loads((tmp_path / "r.json").read_text())["execute"]["placements"]
    checked = 0
    for p in placements:
        if p["sql"] != "plan" or len(p["cuts"]) != 1:
            continue
        (cut,) = p["cuts"]
        child = nodes[cut["child"]]
        want = (
            child["above"][cut["to_engine"]]["median"]
            + child["subtree"][cut["from_engine"]]["median"]
        )
        assert p["predicted_ms"] == pytest.approx(want, abs=1e-3), p["label"]
        assert p["measured"] is not None and p["status"] == "ok", p["label"]
        checked += 1
    assert checked == 2 * (len(nodes) - 1), checked


def test_the_bytes_held_bound_leaves_nodes_without_a_rest_and_says_so(
    tpch_db: Path, tpch_sql: dict[int, str]
) -> None:
    from placement_cli.engines.connect import Settings, Sources
    from placement_cli.engines.probe import probe_query

    engines = ("duckdb", "datafusion")
    sql = tpch_sql[12]
    got = probe_query("q12.sql", sql, Sources(db=tpch_db), Settings(), engines, 1, 0, in_pipeline=True)  # fmt: skip
    timed = {nid for nid, rest in got.above.items() if rest.runs}
    ran = {nid for nid in got.plan.nodes if got.ran(nid) and nid != got.plan.root}
    assert timed == ran and not [d for d in got.diagnostics if d.code == "in-pipeline-not-timed"]
    # No bytes may be held: only a result of no bytes gets its rest timed.
    none = probe_query("q12.sql", sql, Sources(db=tpch_db), Settings(), engines, 1, 0, in_pipeline=True, held_bytes=0)  # fmt: skip
    left = {nid for nid, rest in none.above.items() if rest.runs}
    assert all(none.nodes[nid].rows == 0 for nid in left) and len(left) < len(ran)
    (warn,) = [d for d in none.diagnostics if d.code == "in-pipeline-not-timed"]
    assert set(warn.blocks) == ran - left and "bytes" in warn.message


def test_each_engine_gets_another_engines_result_as_a_cut_hands_it_over(tpch_db: Path) -> None:
    """The rest on e runs with the result of the first other engine that ran the node
    (engines return results in batches of their own, and e's scan differs with them):
    a result cut short on DataFusion alone shows on DuckDB's rest only."""
    from placement_cli.engines.connect import Connections, Sources
    from placement_cli.engines.fragments import build_plan, prepare
    from placement_cli.engines.probe import probe, queue_above
    from placement_cli.engines.probe_runs import Pending, timed_rounds

    engines = ("duckdb", "datafusion")
    conns = Connections(Sources(db=tpch_db))
    try:
        plan = build_plan(conns, "SELECT n_nationkey, n_name FROM nation WHERE n_regionkey < 3")
        got = probe(conns, plan, engines, 1, 0)
        leaf = next(n for n in plan.nodes if not plan.nodes[n].children)
        full = prepare(conns, plan, leaf, "duckdb", frozenset()).run({})
        held = {leaf: {"duckdb": full, "datafusion": full.slice(0, 5)}}
        pending: list[Pending] = []
        queue_above(conns, got, held, 0, pending)
        timed_rounds(pending, 2)
    finally:
        conns.close()
    rest = got.above[leaf]
    assert "rows" in rest.failed["duckdb"] and set(rest.runs) == {"datafusion"}
    assert len(rest.runs["datafusion"]) == 2
