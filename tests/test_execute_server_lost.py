"""PostgreSQL dying in the middle of `execute`: the run's error, never an engine's
inability. A private server (the shared one serves other tests) is stopped with `-m
immediate` while `execute --all` runs placements with fragments on it: exit 6 naming
the server without its password, and the report written with every way as far as it
got (status `stopped`, a `run-stopped` error), none of them `not-executable`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.servers import _as_server_user, postgres

PROFILE = {
    "version": 1,
    "kind": "transfer-profile",
    "directions": [
        {"src": s, "dst": d, "model": {"fixed": 1.0}}
        for s, d in (("duckdb", "postgres"), ("postgres", "duckdb"))
    ],
}
SQL = "SELECT a, sum(b) AS s, count(*) AS n FROM t WHERE b % 3 = 0 GROUP BY a ORDER BY a"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], capture_output=True, text=True, cwd=cwd
    )


def test_a_server_lost_mid_run_is_exit_6_with_the_report_of_what_finished(
    tpch_db: Path, engines_dir: Path, tmp_path: Path
) -> None:
    import duckdb
    import psycopg

    db = tmp_path / "t.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT i % 7 AS a, i AS b FROM range(30000) r(i)")
    folder = engines_dir / "lost"
    with postgres(folder) as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(
                "CREATE TABLE t AS SELECT i % 7 AS a, i::bigint AS b FROM generate_series(0, 29999) i"
            )
            c.execute("ANALYZE")
        secret = f"{dsn} password=not-a-real-secret"
        (tmp_path / "q.sql").write_text(SQL)
        (tmp_path / "profile.json").write_text(json.dumps(PROFILE))
        r = _cli("import", "sql", "q.sql", "--probe", "--db", str(db), "--pg", secret, "--engines", "duckdb,postgres", "--repeat", "1", "--transfer", "profile.json", "-q", "-o", "t.json", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        p = subprocess.Popen(
            [sys.executable, "-m", "placement_cli", "execute", "t.json", "--db", str(db), "--pg", secret, "--all", "--repeat", "2000", "-q", "-o", "r.json"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(4.0)
        assert p.poll() is None, "it ended before the server was stopped: make the run longer"
        bindir = Path(os.path.realpath(shutil.which("pg_ctl") or "pg_ctl")).parent
        stop = [str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "stop"]
        subprocess.run(_as_server_user(stop), capture_output=True, check=True)
        _, err = p.communicate(timeout=120)
    assert p.returncode == 6, err
    assert "postgres at" in err and "connection was lost" in err
    assert "not-a-real-secret" not in err and "Traceback" not in err
    art = json.loads((tmp_path / "r.json").read_text())
    assert art["status"] == "stopped"
    assert [d["code"] for d in art["diagnostics"] if d["severity"] == "error"] == ["run-stopped"]
    assert "not-a-real-secret" not in (tmp_path / "r.json").read_text()
    ways = art["execute"]["placements"]
    assert not any(w["status"] == "not-executable" for w in ways)
    assert any(w["measured"] and w["measured"]["runs"] for w in ways)  # what finished
