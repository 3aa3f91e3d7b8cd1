"""DuckDB on the SQL the tool writes for a semi or anti join: the unparser's correlated
`(NOT) EXISTS` against DuckDB's own `SEMI JOIN` / `ANTI JOIN` (`DuckDB.rewrite`).

    .venv/bin/python -m benchmarks.bench_semi_joins --db /tmp/placement-bench-data/tpch-sf1.duckdb

For each TPC-H query with a semi or anti join (Q4, Q18, Q21, Q22), the tool's plan
whole on DuckDB (`subtree_sql` of the root, as the fragment runner sends it) is run
both ways, alternating (A B A B), after one warm-up each; per way the median, min and
max wall time of `--rounds` runs, and the two results compared (the same rows).
Results: JSON in `benchmarks/results/semi-joins_tpch-sfX_DATE.json` and a table.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path
from typing import Any

import orjson

RESULTS = Path(__file__).resolve().parent / "results"
QUERIES = (4, 18, 21, 22)


def main(argv: list[str] | None = None) -> int:
    import duckdb

    from placement_cli.engines.backends import duckdb as backend
    from placement_cli.engines.connect import Connections, Sources
    from placement_cli.engines.fragments import build_plan, subtree_sql
    from placement_cli.engines.stats import rows_of, same_rows

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-o", "--output", type=Path)
    a = ap.parse_args(argv)
    with duckdb.connect() as c:
        c.execute("LOAD tpch")
        texts = dict(c.execute("SELECT query_nr, query FROM tpch_queries()").fetchall())
    conns = Connections(Sources(db=a.db))
    rows: list[dict[str, Any]] = []
    try:
        session = conns.session("duckdb")
        for nr in QUERIES:
            plan = build_plan(conns, texts[nr])
            raw = subtree_sql(conns, plan, plan.root, backend.DuckDB.dialect, frozenset())
            raw = backend._UNSIGNED.sub(lambda m: "U" + m.group(1).upper(), raw)
            ways = {"exists": raw, "semi_join": backend._semi_joins(raw)}
            assert ways["exists"] != ways["semi_join"], f"Q{nr}: nothing rewritten"
            got = {k: session.sql(sql) for k, sql in ways.items()}  # the warm-ups
            same = same_rows(rows_of(got["exists"]), rows_of(got["semi_join"])) is None
            times: dict[str, list[float]] = {k: [] for k in ways}
            for r in range(a.rounds):
                for k in list(ways)[:: 1 if r % 2 == 0 else -1]:
                    t0 = time.perf_counter()
                    session.sql(ways[k])
                    times[k].append((time.perf_counter() - t0) * 1000)
            row = {"query": nr, "same_rows": same}
            for k, xs in times.items():
                row[k] = {
                    "median": round(statistics.median(xs), 2),
                    "min": round(min(xs), 2),
                    "max": round(max(xs), 2),
                    "runs": [round(x, 2) for x in xs],
                }
            row["ratio"] = round(row["exists"]["median"] / row["semi_join"]["median"], 3)
            rows.append(row)
    finally:
        conns.close()
    date = datetime.date.today().isoformat()
    path = a.output or RESULTS / f"semi-joins_tpch-{a.db.stem.split('-')[-1]}_{date}.json"
    path.write_bytes(
        orjson.dumps(
            {"db": a.db.name, "rounds": a.rounds, "queries": rows}, option=orjson.OPT_INDENT_2
        )
        + b"\n"
    )
    print(
        "| query | EXISTS ms (min-max) | SEMI/ANTI JOIN ms (min-max) | EXISTS / JOIN | same rows |"
    )
    print("|---|---|---|---|---|")
    for r in rows:
        e, s = r["exists"], r["semi_join"]
        print(
            f"| Q{r['query']} | {e['median']} ({e['min']}-{e['max']}) | {s['median']} "
            f"({s['min']}-{s['max']}) | {r['ratio']} | {r['same_rows']} |"
        )
    print(f"results: {path}")
    return 0 if all(r["same_rows"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
