"""Every query of a benchmark through the engine loop as the README runs it, and what
became of each: the sweep that says whether the tool answers every query.

    .venv/bin/python -m benchmarks.sweep_engines tpch --sf 0.01            # 22 queries
    .venv/bin/python -m benchmarks.sweep_engines tpcds --sf 0.01           # 99 queries
    .venv/bin/python -m benchmarks.sweep_engines tpch --queries 2,7,16 --engines duckdb,datafusion,postgres

Per query, each step a `placement` process: `import sql --probe` (the query's own text
from DuckDB's `tpch`/`tpcds` extension, `--repeat 1`), `tree --transfer` (budget 1, a
profile `calibrate measure` + `calibrate fit` made once per sweep), `execute --all
--budget 1 --repeat 1`. Recorded per query: each step's exit code and last stderr line,
the placements executed and refused (by reason), mismatches, Spearman, the chosen
placement's measured time over the best single engine's, and whether the chosen
placement's rows equal DuckDB's own answer to the SQL. Written as JSON (`-o`) and a
markdown table on stdout; exit 1 when any step ended in exit 1 (a bug) or a mismatch.

The data is made once per scale in `--data` (DuckDB's extension wheels, offline). With
postgres among `--engines`, the machine's PostgreSQL is started (`tests/servers.py`)
and the data copied into it. Timings on a shared machine are noise: this sweep is about
answers, not speed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import orjson

from placement_cli.core.cache_modes import Caches


def _cli(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "placement_cli", *args],
            capture_output=True,
            cwd=cwd,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(
            args, 124, b"", f"timed out after {exc.timeout} s".encode()
        )


def _last(err: bytes) -> str:
    lines = [x for x in err.decode(errors="replace").splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


def measuring_options(ap: argparse.ArgumentParser, forks: str) -> None:
    """The benchmarks' `--threads` (every step's), `--forks` (`forks` says which
    steps get it) and `--caches` (the probe's and `execute`'s)."""
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="every step's --threads (threads of each engine; 0: the cores)",
    )
    ap.add_argument(
        "--forks",
        type=int,
        default=1,
        help=f"`--forks` for {forks} (each measured in K processes, their runs pooled)",
    )
    ap.add_argument(
        "--caches",
        choices=get_args(Caches),
        default="cold",
        help="`--caches` for the probe and `execute` (the CPU caches each timed run starts with)",
    )


def make_data(bench: str, sf: float, folder: Path) -> tuple[Path, dict[int, str]]:
    """The benchmark's tables in a DuckDB file (made once) and its query texts."""
    import duckdb
    from duckdb_extensions import import_extension

    import_extension(bench)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"{bench}-sf{sf:g}.duckdb"
    if not db.exists():
        tmp = db.with_suffix(".partial")
        tmp.unlink(missing_ok=True)
        con = duckdb.connect(str(tmp))
        con.execute(f"LOAD {bench}")
        con.execute(f"CALL {'dbgen' if bench == 'tpch' else 'dsdgen'}(sf={sf})")
        con.close()
        tmp.rename(db)
    con = duckdb.connect(str(db), read_only=True)
    con.execute(f"LOAD {bench}")
    texts = dict(con.execute(f"SELECT query_nr, query FROM {bench}_queries()").fetchall())
    con.close()
    return db, texts


@contextlib.contextmanager
def postgres_with(db: Path, folder: Path) -> Iterator[str]:
    """The machine's PostgreSQL with `db`'s tables (tests/servers.py), for the block."""
    import duckdb
    from duckdb_extensions import import_extension

    from tests.servers import postgres

    with postgres(folder / "pg") as dsn:
        import_extension("postgres_scanner")
        con = duckdb.connect()
        con.execute("LOAD postgres_scanner")
        con.execute(f"ATTACH '{db}' AS src (READ_ONLY)")
        con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src'"
        ).fetchall():
            con.execute(f'CREATE TABLE pg.public."{name}" AS SELECT * FROM src.main."{name}"')
        con.close()
        yield dsn


def sweep_one(
    nr: int, sql: str, work: Path, db: Path, pg: str | None, engines: str, profile: Path
) -> dict[str, Any]:
    q = work / f"q{nr:02d}"
    q.mkdir(parents=True, exist_ok=True)
    (q / "q.sql").write_text(sql)
    src = ["--db", str(db), *(["--pg", pg] if pg else [])]
    out: dict[str, Any] = {"query": nr, "steps": {}}
    t0 = time.perf_counter()
    steps = (
        (
            "import",
            [
                "import",
                "sql",
                "q.sql",
                "--probe",
                *src,
                "--engines",
                engines,
                "--repeat",
                "1",
                "-q",
                "-o",
                "tree.json",
            ],
        ),
        (
            "tree",
            [
                "tree",
                "tree.json",
                "--transfer",
                str(profile),
                "--budget",
                "1",
                "-q",
                "-o",
                "placed.json",
            ],
        ),
        (
            "execute",
            [
                "execute",
                "placed.json",
                *src,
                "--transfer",
                str(profile),
                "--all",
                "--budget",
                "1",
                "--repeat",
                "1",
                "-q",
                "-o",
                "report.json",
                "--result",
                "rows.parquet",
            ],
        ),
    )
    for name, args in steps:
        r = _cli(*args, cwd=q)
        out["steps"][name] = {"exit": r.returncode, "stderr": _last(r.stderr)}
        if r.returncode not in (0, 8):
            break
    out["seconds"] = round(time.perf_counter() - t0, 1)
    tree_file = q / "tree.json"
    if tree_file.exists():  # the share of probed nodes each engine ran alone
        nodes = orjson.loads(tree_file.read_bytes())["nodes"]
        out["nodes"] = len(nodes)
        out["ran"] = {
            e: sum(1 for n in nodes if (n.get("time") or {}).get(e) is not None)
            for e in engines.split(",")
        }
    report = q / "report.json"
    if out["steps"].get("execute", {}).get("exit") in (0, 8) and report.exists():
        sec = orjson.loads(report.read_bytes())["execute"]
        s = sec["summary"]
        reasons = Counter(
            (p.get("error") or "")[:60] for p in sec["placements"] if p["status"] != "ok"
        )
        out.update(
            placements=s["placements"],
            executed=s["executed"],
            not_executable=s["not_executable"],
            mismatches=s["mismatches"],
            skipped=s["skipped"],
            spearman=s.get("spearman"),
            chosen_ms=s.get("chosen_measured_ms"),
            best_single=s.get("best_single"),
            best_single_ms=s.get("best_single_ms"),
            refused=dict(reasons),
        )
        out["same_as_duckdb"] = _same_as_duckdb(q / "rows.parquet", db, sql)
    return out


def _same_as_duckdb(rows: Path, db: Path, sql: str) -> bool | None:
    """Whether the chosen placement's rows are DuckDB's own answer to the SQL."""
    if not rows.exists():
        return None
    import duckdb
    import pyarrow.parquet as pq

    from placement_cli.engines.measure import rows_of
    from placement_cli.engines.stats import same_rows

    con = duckdb.connect(str(db), read_only=True)
    want = con.execute(sql).to_arrow_table()
    con.close()
    return same_rows(rows_of(pq.read_table(rows)), rows_of(want)) is None


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", choices=("tpch", "tpcds"))
    ap.add_argument("--sf", type=float, default=0.01)
    ap.add_argument("--queries", help="N,N,... (default: all)")
    ap.add_argument("--engines", default="duckdb,datafusion")
    ap.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "placement-sweep-data"))
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    db, texts = make_data(a.bench, a.sf, Path(a.data))
    wanted = [int(x) for x in a.queries.split(",")] if a.queries else sorted(texts)
    results = []
    with tempfile.TemporaryDirectory(prefix="placement-sweep-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # the server's own user reaches its folder through this one
        with contextlib.ExitStack() as stack:
            pg = stack.enter_context(postgres_with(db, work)) if "postgres" in a.engines else None
            pairs = [
                f"{s}:{d}" for s in a.engines.split(",") for d in a.engines.split(",") if s != d
            ]
            m = _cli("calibrate", "measure", "--pairs", ",".join(pairs), "--db", str(db), *(["--pg", pg] if pg else []),
                     "--rows", "1000,10000,40000", "--widths", "16,64", "--repeat", "1", "-q", "-o", "m.csv", cwd=work)  # fmt: skip
            f = _cli("calibrate", "fit", "m.csv", "-q", "-o", "profile.json", cwd=work)
            if m.returncode or f.returncode:
                print(_last(m.stderr) or _last(f.stderr), file=sys.stderr)
                return 1
            for nr in wanted:
                r = sweep_one(nr, texts[nr], work, db, pg, a.engines, work / "profile.json")
                results.append(r)
                print(_row(r), flush=True)
    total = sum(r.get("nodes", 0) for r in results)
    for e in a.engines.split(","):
        ran = sum(r.get("ran", {}).get(e, 0) for r in results)
        print(f"{e} ran {ran} of {total} probed nodes ({ran / max(total, 1):.1%})")
    load = os.getloadavg()[0]
    doc = {
        "bench": a.bench,
        "sf": a.sf,
        "engines": a.engines,
        "load_average": load,
        "queries": results,
    }
    if a.output:
        Path(a.output).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    exits = Counter(s["exit"] for r in results for s in r["steps"].values())
    bugs = sum(1 for r in results for s in r["steps"].values() if s["exit"] == 1)
    wrong = sum(1 for r in results if r.get("mismatches") or r.get("same_as_duckdb") is False)
    print(
        f"\n{len(results)} queries; step exit codes {dict(sorted(exits.items()))}; exit 1: {bugs}; wrong answers: {wrong}"
    )
    return 1 if bugs or wrong else 0


def _row(r: dict[str, Any]) -> str:
    steps = " ".join(f"{k}={v['exit']}" for k, v in r["steps"].items())
    fail = next(
        (f"{k}: {v['stderr']}" for k, v in r["steps"].items() if v["exit"] not in (0, 8)), ""
    )
    if "placements" not in r:
        return f"| Q{r['query']} | {steps} | | | | | {fail} |"
    ratio = (
        f"{r['chosen_ms'] / r['best_single_ms']:.2f}"
        if r.get("chosen_ms") and r.get("best_single_ms")
        else ""
    )
    return (
        f"| Q{r['query']} | {steps} | {r['executed']}/{r['placements']} | {r['not_executable']} "
        f"| {r['mismatches']} | {ratio} | {r['same_as_duckdb']} {dict(r['refused']) or ''} |"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
