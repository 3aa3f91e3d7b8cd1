"""The real engines end to end, as a user runs them: calibration quality and whether
feeding `execute`'s measurements back makes the model rank placements better.

    .venv/bin/python -m benchmarks.bench_engines              # Q3, Q5, Q10, Q18 at SF 0.1
    .venv/bin/python -m benchmarks.bench_engines --quick      # Q3 only

Needs the engines extra and the machine's PostgreSQL (tests/servers.py starts one of its
own in a temporary folder and stops it). Steps, each a `placement` process:

1. `calibrate measure` over four directions (DuckDB <-> DataFusion, DuckDB <-> PostgreSQL)
   and `calibrate fit`: the wall time and R² of each direction (goals: under 60 s, R² >=
   0.85 each, on a quiet machine).
2. Per query: `import sql --probe` (DuckDB and DataFusion, median of 3), `tree
   --transfer` (budget 1), `execute --all` (before); the measurements fed back (`--tree-out`,
   `--calibrate-out` fitted together with step 1's), placed again and `execute --all`
   (after). Reported: Spearman(predicted, measured) over the placements, the chosen
   placement's measured time and the best single engine's, before and after.

Timings on a shared machine vary up to 2x between runs: the load average is printed
with the results; read them only from a quiet machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

QUERIES = (3, 5, 10, 18)
PAIRS = "duckdb:datafusion,datafusion:duckdb,duckdb:postgres,postgres:duckdb"


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    out = subprocess.run([sys.executable, "-m", "placement_cli", *args], capture_output=True)
    if out.returncode not in (0,):
        raise SystemExit(
            f"placement {' '.join(args)}: exit {out.returncode}\n{out.stderr.decode()}"
        )
    return out


def _summary(report: Path) -> dict[str, Any]:
    s = orjson.loads(report.read_bytes())["execute"]["summary"]
    return {
        "spearman": s.get("spearman"),
        "chosen": (s["chosen"], s["chosen_measured_ms"]),
        "best_single": (s["best_single"], s["best_single_ms"]),
        "executed": s["executed"],
        "placements": s["placements"],
    }


def main(argv: list[str]) -> None:
    import duckdb
    from duckdb_extensions import import_extension

    from tests.servers import load_postgres, postgres, tpch_duckdb

    queries = QUERIES[:1] if "--quick" in argv else QUERIES
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="placement-bench-engines-") as tmp:
        d = Path(tmp)
        d.chmod(0o755)
        db = tpch_duckdb(d / "tpch.duckdb")
        with postgres(d / "pg") as dsn:
            load_postgres(dsn, db)
            t0 = time.perf_counter()
            _cli(
                "calibrate",
                "measure",
                "--pairs",
                PAIRS,
                "--db",
                str(db),
                "--pg",
                dsn,
                "-o",
                str(d / "m.csv"),
            )
            took = time.perf_counter() - t0
            prof = orjson.loads(_cli("calibrate", "fit", str(d / "m.csv")).stdout)
            r2 = {f"{x['src']}->{x['dst']}": round(x["r2"], 3) for x in prof["directions"]}
            print(f"calibrate measure, 4 directions: {took:.1f} s; R²: {r2}", flush=True)
            (d / "prof.json").write_bytes(_cli("calibrate", "fit", str(d / "m.csv")).stdout)

        import_extension("tpch")
        con = duckdb.connect()
        con.execute("LOAD tpch")
        texts = dict(con.execute("SELECT query_nr, query FROM tpch_queries()").fetchall())
        con.close()
        print(
            "| query | Spearman before | after | chosen before (ms) | chosen after (ms) "
            "| best single before / after (ms) |"
        )
        print("|---|---|---|---|---|---|")
        for q in queries:
            sql = d / f"q{q}.sql"
            sql.write_text(texts[q])
            tree, placed = d / f"q{q}.tree.json", d / f"q{q}.placed.json"
            _cli(
                "import",
                "sql",
                str(sql),
                "--probe",
                "--engines",
                "duckdb,datafusion",
                "--db",
                str(db),
                "--repeat",
                "3",
                "-o",
                str(tree),
            )
            _cli(
                "tree",
                str(tree),
                "--transfer",
                str(d / "prof.json"),
                "--budget",
                "1",
                "--include-input",
                "-o",
                str(placed),
            )
            before = d / f"q{q}.before.json"
            _cli(
                "execute",
                str(placed),
                "--db",
                str(db),
                "--all",
                "-o",
                str(before),
                "--calibrate-out",
                str(d / f"q{q}.h.csv"),
                "--tree-out",
                str(d / f"q{q}.measured.json"),
            )
            prof2 = d / f"q{q}.prof2.json"
            _cli("calibrate", "fit", str(d / "m.csv"), str(d / f"q{q}.h.csv"), "-o", str(prof2))
            placed2, after = d / f"q{q}.placed2.json", d / f"q{q}.after.json"
            _cli(
                "tree",
                str(d / f"q{q}.measured.json"),
                "--transfer",
                str(prof2),
                "--budget",
                "1",
                "--include-input",
                "-o",
                str(placed2),
            )
            _cli("execute", str(placed2), "--db", str(db), "--all", "-o", str(after))
            b, a = _summary(before), _summary(after)

            def f(x: Any) -> str:
                return "n/a" if x is None else f"{x:.2f}"

            print(
                f"| Q{q} | {f(b['spearman'])} | {f(a['spearman'])} "
                f"| {b['chosen'][0]} {f(b['chosen'][1])} | {a['chosen'][0]} {f(a['chosen'][1])} "
                f"| {b['best_single'][0]} {f(b['best_single'][1])} / "
                f"{a['best_single'][0]} {f(a['best_single'][1])} |",
                flush=True,
            )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
