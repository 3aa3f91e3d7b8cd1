"""The engines the tests run: the server of `tests/servers.py` holds the same TPC-H
tables as the DuckDB file, with a statement timeout; a missing extra is a usage error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.servers import STATEMENT_TIMEOUT_MS, TABLES


def test_postgres_has_the_tpch_tables_of_duckdb(pg_dsn: str, tpch_db: Path) -> None:
    import duckdb
    import psycopg

    con = duckdb.connect(str(tpch_db), read_only=True)
    with psycopg.connect(pg_dsn) as pg:
        for t in TABLES:
            want = con.execute(f"SELECT count(*) FROM {t}").fetchone()
            got = pg.execute(f"SELECT count(*) FROM {t}").fetchone()
            assert want is not None and got is not None and want[0] == got[0] > 0, t
        timeout = pg.execute("SHOW statement_timeout").fetchone()
    con.close()
    assert timeout is not None and timeout[0] == f"{STATEMENT_TIMEOUT_MS // 1000}s"


def test_a_missing_engine_package_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['duckdb'] = None\n"
        "from placement_cli.engines.registry import need_all\n"
        "from placement_cli.core.errors import UsageError\n"
        "try:\n    need_all('execute')\nexcept UsageError as e:\n"
        "    print(e.exit_code, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("2 ")
    assert "pip install 'placement[engines]'" in out.stdout and "'duckdb'" in out.stdout


def test_no_command_imports_an_engine_before_it_runs_one(tmp_path: Path) -> None:
    """The core install's commands never import an engine's package: not the stages, not
    the typer commands (which build the engine commands' declarations from the engine
    registry), not `--help` of an engine command."""
    code = (
        "import sys; from placement_cli.app.launch import dispatch\n"
        "try:\n dispatch(sys.argv[1:])\nexcept SystemExit as e:\n"
        " bad = [m for m in ('duckdb', 'datafusion', 'polars', 'pyarrow', 'adbc_driver_manager',"
        " 'psycopg') if m in sys.modules]\n"
        " print(e.code, bad, file=sys.stderr)"
    )
    example = str(Path(__file__).resolve().parents[1] / "examples" / "three_targets.yaml")
    for args in (
        ["solve", example, "-q", "-o", str(tmp_path / "s.json")],
        ["lower", "--help"],
        ["execute", "--help"],
        ["calibrate", "measure", "--help"],
        ["import", "--help"],
    ):
        r = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, capture_output=True)
        assert r.stderr.decode().split(None, 1) == ["0", "[]\n"], (args, r.stderr.decode())
