"""`placement import sql --probe` on real engines: every subtree of a TPC-H query's plan
timed on every engine, a tree file `placement tree` places, in well under a minute."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from placement_cli.formats.tree import TreeFile


def probe(cli: Any, tmp_path: Path, sql: str, *args: str) -> tuple[Any, dict[str, Any], float]:
    query = tmp_path / "q.sql"
    query.write_text(sql)
    out = tmp_path / "tree.json"
    start = time.perf_counter()
    res = cli("import", "sql", str(query), "--probe", *args, "-o", str(out))
    took = time.perf_counter() - start
    doc = json.loads(out.read_bytes()) if res.returncode == 0 else {}
    return res, doc, took


def timed_share(doc: dict[str, Any], engine: str) -> float:
    return sum(n["time"].get(engine) is not None for n in doc["nodes"]) / len(doc["nodes"])


@pytest.mark.parametrize("nr", (3, 5, 10, 18))
def test_probe_times_every_node_on_both_engines(
    cli: Any, tmp_path: Path, tpch_db: Path, tpch_sql: dict[int, str], nr: int
) -> None:
    sql = tpch_sql[nr]
    res, doc, took = probe(
        cli, tmp_path, sql, "--engines", "duckdb,datafusion", "--db", str(tpch_db), "--repeat", "1"
    )
    assert res.returncode == 0, res.stderr.decode()
    assert took < 60
    TreeFile.model_validate(doc)
    assert doc["engines"] == ["duckdb", "datafusion"] and doc["root"] == "n0"
    assert timed_share(doc, "duckdb") >= 0.9 and timed_share(doc, "datafusion") >= 0.9
    nodes = doc["nodes"]
    assert [n["plan_node"] for n in nodes] == list(range(len(nodes)))
    assert all(n["rows"] >= 0 and n["row_width"] >= 0 for n in nodes)
    for n in nodes:
        for engine, m in n["subtree"].items():
            assert m["runs"] == 1 and m["min"] <= m["median"] <= m["max"], (n["id"], engine)
            kids = [k for k in nodes if k["id"] in n.get("children", [])]
            # self-time = subtree - slowest child's subtree, clamped at 0
            slowest = max((k["subtree"][engine]["median"] for k in kids), default=0.0)
            assert n["time"][engine] == pytest.approx(max(m["median"] - slowest, 0.0), abs=1e-5)
    assert doc["query"]["sql"].startswith("SELECT") and doc["query"]["replanned"] == ["duckdb"]
    assert doc["query"]["substrait"]["relations"][0]["root"]["names"]
    # The root's rows are the query's.
    import duckdb

    con = duckdb.connect(str(tpch_db), read_only=True)
    assert nodes[0]["rows"] == len(con.execute(sql).fetchall())
    con.close()
    # `placement tree` places it, with cuts once a transfer model allows them.
    doc["transfer"] = {"default": {"fixed": 1, "per_byte": 1e-6}}
    tree_file = tmp_path / "with_transfer.json"
    tree_file.write_text(json.dumps(doc))
    placed = cli("tree", str(tree_file), "--budget", "2")
    assert placed.returncode == 0, placed.stderr.decode()
    art = json.loads(placed.stdout)
    assert art["status"] == "ok" and set(art["tree"]["engines"]) == {n["id"] for n in nodes}


def test_probe_on_postgres_and_a_node_it_cannot_run(
    cli: Any, tmp_path: Path, tpch_db: Path, pg_dsn: str
) -> None:
    # levenshtein is DataFusion's and DuckDB's, not PostgreSQL's (without fuzzystrmatch).
    sql = "SELECT r_regionkey, levenshtein(r_name, 'ASIA') AS d FROM region WHERE r_regionkey < 4"
    res, doc, _ = probe(
        cli, tmp_path, sql, "--db", str(tpch_db), "--pg", pg_dsn, "--repeat", "2", "--name", "lev"
    )
    assert res.returncode == 0, res.stderr.decode()
    err = res.stderr.decode()
    assert doc["engines"] == ["duckdb", "datafusion", "postgres"] and doc["name"] == "lev"
    root = doc["nodes"][0]
    assert root["time"]["postgres"] is None and "postgres" not in root["subtree"]
    assert root["time"]["duckdb"] is not None and root["time"]["datafusion"] is not None
    assert root["rows"] == 4
    leaf = doc["nodes"][-1]
    assert leaf["op"] == "read(region)" and leaf["time"]["postgres"] is not None
    assert leaf["subtree"]["postgres"]["runs"] == 2
    assert "engine-cannot-run: postgres could not run" in err and "levenshtein" in err
    assert doc["query"]["replanned"] == ["duckdb", "postgres"]


def test_import_sql_needs_probe_and_known_engines(cli: Any, tmp_path: Path, tpch_db: Path) -> None:
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1")
    res = cli("import", "sql", str(query), "--db", str(tpch_db))
    assert res.returncode == 2 and b"--probe" in res.stderr
    res = cli("import", "sql", str(query), "--probe", "--db", str(tpch_db), "--engines", "oracle")
    assert res.returncode == 2 and b"unknown engine 'oracle'" in res.stderr
    res = cli("import", "sql", str(query), "--probe", "--db", str(tpch_db), "--engines", "postgres")
    assert res.returncode == 2 and b"needs --pg" in res.stderr


def test_import_sql_without_the_extra_names_it(tmp_path: Path) -> None:
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1")
    code = (
        "import runpy, sys; sys.modules['duckdb'] = None\n"
        f"sys.argv = ['placement', 'import', 'sql', {str(query)!r}, '--probe', '--db', 'x.db']\n"
        "runpy.run_module('placement_cli', run_name='__main__')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "pip install 'placement[engines]'" in out.stderr


def test_probe_hand_offs_become_the_trees_explicit_transfers(
    tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path
) -> None:
    """`--handoffs`: each node's own result handed to every engine and read there, the
    medians written as explicit transfers (every node of the tree but the root, each
    direction between the engines that ran it); `tree` prices the cuts by them and
    `execute` predicts each cut at that time."""

    def cli(*args: str) -> None:
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert r.returncode == 0, (args[0], r.stderr)

    (tmp_path / "q.sql").write_text(tpch_sql[3])
    cli("import", "sql", "q.sql", "--probe", "--handoffs", "--db", str(tpch_db), "--engines", "duckdb,datafusion", "--repeat", "1", "-q", "-o", "t.json")  # fmt: skip
    doc = json.loads((tmp_path / "t.json").read_text())
    TreeFile.model_validate(doc)
    ex = doc["transfer"]["explicit"]
    want = {
        (n["id"], s, d)
        for n in doc["nodes"]
        if n["id"] != doc["root"]
        for s, d in (("duckdb", "datafusion"), ("datafusion", "duckdb"))
    }
    assert {(x["child"], x["from"], x["to"]) for x in ex} == want
    assert all(x["cost"] > 0 for x in ex)
    cost = {(x["child"], x["from"], x["to"]): x["cost"] for x in ex}
    cli("tree", "t.json", "--budget", "1", "-q", "-o", "p.json")
    cli("execute", "p.json", "--db", str(tpch_db), "--all", "--repeat", "1", "-q", "-o", "r.json")
    cuts = [
        c
        for p in json.loads((tmp_path / "r.json").read_text())["execute"]["placements"]
        for c in p["cuts"]
    ]
    assert cuts and all(
        c["predicted_ms"]
        == pytest.approx(cost[(c["child"], c["from_engine"], c["to_engine"])], abs=1e-3)
        for c in cuts
    )


def test_a_probe_in_two_processes_pools_their_runs_node_by_node(
    tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path
) -> None:
    """`--forks 2`: the same tree as one process gives (nodes, engines, rows), each
    measurement with both processes' runs (2 x --repeat), rests and the query as
    written alike, and `query.forks` saying so."""
    (tmp_path / "q.sql").write_text(tpch_sql[3])
    docs = {}
    for k in ("1", "2"):
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "import", "sql", "q.sql", "--probe", "--in-pipeline", "--db", str(tpch_db), "--engines", "duckdb,datafusion", "--repeat", "2", "--forks", k, "-q", "-o", f"t{k}.json"],
            capture_output=True, text=True, cwd=tmp_path,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        docs[k] = json.loads((tmp_path / f"t{k}.json").read_text())
        TreeFile.model_validate(docs[k])
    one, two = docs["1"], docs["2"]
    assert "forks" not in one["query"] and two["query"]["forks"] == 2
    assert [(n["id"], n.get("children"), n.get("rows")) for n in two["nodes"]] == [
        (n["id"], n.get("children"), n.get("rows")) for n in one["nodes"]
    ]
    for a, b in zip(one["nodes"], two["nodes"], strict=True):
        assert set(b["subtree"]) == set(a["subtree"])
        assert all(m["runs"] == 4 for m in b["subtree"].values()), b["subtree"]
        assert set(b.get("above", {})) == set(a.get("above", {}))
        assert all(m["runs"] == 4 for m in b.get("above", {}).values())
    assert {e: m["runs"] for e, m in two["query"]["as_written"].items()} == {
        "duckdb": 4,
        "datafusion": 4,
    }


@pytest.mark.parametrize("flag", ("--handoffs", "--in-pipeline"))
def test_probing_flags_without_a_probe_are_a_usage_error(tmp_path: Path, flag: str) -> None:
    (tmp_path / "p.json").write_text("{}")
    r = subprocess.run(
        [sys.executable, "-m", "placement_cli", "import", "postgres-explain", "p.json", flag],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2 and flag in r.stderr and "--probe" in r.stderr


@pytest.mark.parametrize("mode", (None, "warm", "cold"))
def test_the_probe_records_the_caches_its_timed_runs_started_with(
    cli: Any, tmp_path: Path, tpch_db: Path, tpch_sql: dict[int, str], mode: str | None
) -> None:
    given = () if mode is None else ("--caches", mode)
    res, doc, _ = probe(cli, tmp_path, tpch_sql[6], "--engines", "duckdb", "--db", str(tpch_db), "--repeat", "1", *given)  # fmt: skip
    assert res.returncode == 0, res.stderr.decode()
    TreeFile.model_validate(doc)
    assert doc["query"]["caches"] == (mode or "cold")


def test_the_same_query_probed_in_two_directories_records_the_same_plan_bytes(
    cli: Any, tmp_path: Path, tpch_db: Path, tpch_sql: dict[int, str]
) -> None:
    """DataFusion's producer lists a plan's function declarations in a hash map's order,
    another one in every process; the tree file keeps them in anchor order, so the same
    project probed twice records the same plan (only the times differ)."""
    docs = []
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        res, doc, _ = probe(cli, tmp_path / d, tpch_sql[14], "--engines", "duckdb", "--db", str(tpch_db), "--repeat", "1")  # fmt: skip
        assert res.returncode == 0, res.stderr.decode()
        docs.append(doc)
    one, two = (json.dumps(d["query"]["substrait"]).encode() for d in docs)
    assert one == two
    anchors = [
        next(iter(e.values())).get("functionAnchor", 0)
        for e in docs[0]["query"]["substrait"]["extensions"]
    ]
    assert len(anchors) > 3 and anchors == sorted(anchors)
    assert [n["id"] for n in docs[0]["nodes"]] == [n["id"] for n in docs[1]["nodes"]]
