"""Benchmark of `placement import` on large plans (thousands of operators and more).

    .venv/bin/python -m benchmarks.bench_import              # 1k, 10k and 100k operators
    .venv/bin/python -m benchmarks.bench_import --quick      # 1k and 10k only
    .venv/bin/python -m benchmarks.bench_import --pg DSN     # also a real PostgreSQL plan

No engine prints plans of 100k operators for a real query, so the large documents are
made from real ones (the TPC-H Q3 plans of tests/data/engine_plans/, SF 0.1): one
union operator whose inputs are copies of the engine's whole Q3 plan (PostgreSQL's
`Append`, DuckDB's `UNION`, DataFusion's `UnionExec`), with the union's own time set so
the document is consistent. With `--pg`, a real one too: PostgreSQL's `EXPLAIN (FORMAT
JSON)` (planner estimates: running it would take minutes) of a UNION ALL of every TPC-H
query 10 times over, each wrapped as `SELECT count(*) FROM (Qn) s`.

`read` is the reader and the tree file built in-process (best of 3, wall and CPU
seconds: on a shared machine CPU time is the fairer figure); `cli` is the whole
`placement import ... -o FILE` process, start-up included (median of 3, wall and CPU).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from placement_cli.core.io import gc_paused
from placement_cli.frontends.engine_plans import datafusion, duckdb, postgres
from placement_cli.frontends.engine_plans.tree_file import tree_document

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "engine_plans"
RESULTS = Path(__file__).resolve().parent / "results" / "import.json"
READERS = {
    "postgres-explain": postgres.read,
    "duckdb-profile": duckdb.read,
    "datafusion-metrics": datafusion.read,
}


def _count(node: dict[str, Any], key: str) -> int:
    n, stack = 0, [node]
    while stack:
        x = stack.pop()
        n += 1
        stack.extend(x.get(key, []))
    return n


def postgres_union(copies: int) -> dict[str, Any] | list[Any]:
    q3 = json.loads((DATA / "q3.postgres.json").read_text())[0]["Plan"]
    kids = []
    for _ in range(copies):
        kid = copy.deepcopy(q3)
        kid["Parent Relationship"] = "Member"
        kids.append(kid)
    total = q3["Actual Total Time"] * copies + 1.0
    root = {
        "Node Type": "Append",
        "Actual Total Time": total,
        "Actual Loops": 1,
        "Actual Rows": q3["Actual Rows"] * copies,
        "Plan Width": q3["Plan Width"],
        "Plans": kids,
    }
    return [{"Plan": root, "Execution Time": total}]


def duckdb_union(copies: int) -> dict[str, Any]:
    doc = json.loads((DATA / "q3.duckdb.json").read_text())
    q3 = doc["children"][0]
    union = {
        "operator_name": "UNION",
        "operator_type": "UNION",
        "operator_timing": 0.0001,
        "operator_cardinality": q3["operator_cardinality"] * copies,
        "result_set_size": q3["result_set_size"] * copies,
        "children": [copy.deepcopy(q3) for _ in range(copies)],
    }
    return {**doc, "children": [union]}


def datafusion_union(copies: int) -> dict[str, Any]:
    doc = json.loads((DATA / "q3.datafusion.json").read_text())
    q3 = doc["plan"]
    union = {
        "name": "UnionExec",
        "detail": "UnionExec",
        "metrics": {"elapsed_compute": 1000, "output_rows": q3["metrics"]["output_rows"] * copies},
        "children": [copy.deepcopy(q3) for _ in range(copies)],
    }
    return {**doc, "plan": union}


def postgres_real(dsn: str, repeat: int) -> list[Any]:
    import duckdb as ddb
    import psycopg
    from duckdb_extensions import import_extension

    con = ddb.connect()
    import_extension("tpch")
    con.execute("LOAD tpch")
    queries = [
        q.strip().rstrip(";") for (q,) in con.execute("SELECT query FROM tpch_queries()").fetchall()
    ]
    parts = [
        f"SELECT count(*) FROM ({q}) s{i}_{r}" for r in range(repeat) for i, q in enumerate(queries)
    ]
    with psycopg.connect(dsn, autocommit=True) as pg:
        row = pg.execute("EXPLAIN (FORMAT JSON) " + " UNION ALL ".join(parts)).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def measure(fmt: str, doc: Any, label: str, folder: Path, engine: str) -> dict[str, Any]:
    path = folder / f"{label}.json"
    data = orjson.dumps(doc)
    path.write_bytes(data)
    read = READERS[fmt]
    best = cpu = float("inf")
    nodes = 0
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        with gc_paused():  # as the command reads
            plan = read(str(path), data, path.name, engine)
            tree_document([plan], label, None)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
        nodes = len(plan.nodes)
    out = folder / f"{label}.tree.json"
    walls, cpus = [], []
    for _ in range(3):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "import", fmt, str(path), "-o", str(out), "-q"],
            capture_output=True,
            check=False,
        )
        walls.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if r.returncode != 0:
            raise SystemExit(f"{label}: exit {r.returncode}: {r.stderr.decode()[-500:]}")
    return {
        "input": label,
        "format": fmt,
        "nodes": nodes,
        "bytes": len(data),
        "read_s": round(best, 4),
        "read_cpu_s": round(cpu, 4),
        "cli_s": round(statistics.median(walls), 4),
        "cli_cpu_s": round(statistics.median(cpus), 4),
        "tree_bytes": out.stat().st_size,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pg", help="a PostgreSQL DSN with the TPC-H tables: a real plan too")
    args = ap.parse_args(argv or [])
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for fmt, make, per, engine in (
            (
                "postgres-explain",
                postgres_union,
                _count(json.loads((DATA / "q3.postgres.json").read_text())[0]["Plan"], "Plans"),
                "postgres",
            ),
            (
                "duckdb-profile",
                duckdb_union,
                _count(
                    json.loads((DATA / "q3.duckdb.json").read_text())["children"][0], "children"
                ),
                "duckdb",
            ),
            (
                "datafusion-metrics",
                datafusion_union,
                _count(json.loads((DATA / "q3.datafusion.json").read_text())["plan"], "children"),
                "datafusion",
            ),
        ):
            for n in sizes:
                copies = max(1, n // per)
                rows.append(measure(fmt, make(copies), f"{engine}-union-{copies}x", folder, engine))
                print(_line(rows[-1]), flush=True)
        if args.pg:
            rows.append(
                measure(
                    "postgres-explain",
                    postgres_real(args.pg, 10),
                    "postgres-tpch-union-all-220",
                    folder,
                    "postgres",
                )
            )
            print(_line(rows[-1]), flush=True)
    RESULTS.write_bytes(
        orjson.dumps(
            {
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                },
                "date": time.strftime("%Y-%m-%d"),
                "rows": rows,
            },
            option=orjson.OPT_INDENT_2,
        )
        + b"\n"
    )


def _line(r: dict[str, Any]) -> str:
    rate = r["nodes"] / r["read_cpu_s"] if r["read_cpu_s"] else 0
    return (
        f"{r['input']:<32} {r['nodes']:>7} nodes {r['bytes'] / 1e6:7.2f} MB  read {r['read_s']:7.3f} s "
        f"cpu {r['read_cpu_s']:7.3f} s ({rate / 1e3:4.0f}k nodes/cpu-s)  cli {r['cli_s']:7.3f} s cpu {r['cli_cpu_s']:7.3f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
