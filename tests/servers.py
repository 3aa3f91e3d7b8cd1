"""The real engines the tests use: a PostgreSQL server of the tests' own and TPC-H data.

`make test` runs the suite under `python -m tests.servers -- pytest ...`: one server is
started, TPC-H (SF 0.1) is generated once in DuckDB and copied into PostgreSQL, the
command runs with `PLACEMENT_TEST_PG` (a connection string) and `PLACEMENT_TEST_TPCH`
(the DuckDB file, opened read-only by every worker) in its environment, and the server
is stopped whatever happens. A test file run alone gets the same from the fixtures in
`tests/conftest.py`, which start their own when the variables are absent.

The server is the PostgreSQL installed on the machine (`pg_ctl`, `initdb` on PATH).
`initdb` refuses root, so as root it runs as the `postgres` user. It listens on
127.0.0.1 only, on a free port, with its socket in its own folder, and every statement
has a timeout (TPC-H Q17 and Q20 run for many seconds on PostgreSQL without indexes).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

SF = 0.1
STATEMENT_TIMEOUT_MS = 30_000
TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["su", "postgres", "-c", " ".join(cmd)]


@contextlib.contextmanager
def postgres(folder: Path) -> Iterator[str]:
    """A PostgreSQL server in `folder` for the duration of the block; yields its
    connection string. Stopped with `-m fast` whatever happens (a killed `pg_ctl` leaves
    backends running)."""
    pg_ctl = shutil.which("pg_ctl")
    if pg_ctl is None:
        raise RuntimeError("no PostgreSQL here: pg_ctl is not on PATH")
    bindir = Path(os.path.realpath(pg_ctl)).parent
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        folder.chmod(0o755)
        shutil.chown(folder, "postgres", "postgres")
    data, log, port = folder / "data", folder / "log", _free_port()
    run = {"check": True, "capture_output": True}
    subprocess.run(
        _as_server_user(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
            ]
        ),
        **run,
    )
    opts = (
        f"'-c listen_addresses=127.0.0.1 -p {port} -k {folder} "
        f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c fsync=off'"
    )
    start = [str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(log), "-w", "start"]
    if os.geteuid() != 0:  # no shell: the options are one argument without the quotes
        start[4] = opts.strip("'")
    subprocess.run(_as_server_user(start), **run)
    try:
        yield f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    finally:
        subprocess.run(
            _as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"]),
            capture_output=True,
        )


def tpch_duckdb(path: Path, sf: float = SF) -> Path:
    """Generate TPC-H at scale factor `sf` into a DuckDB file (once; an existing file is
    kept)."""
    import duckdb
    from duckdb_extensions import import_extension

    if path.exists():
        return path
    import_extension("tpch")
    tmp = path.with_name(path.name + ".part")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        con.execute("LOAD tpch")
        con.execute(f"CALL dbgen(sf={sf})")
    finally:
        con.close()
    tmp.rename(path)
    return path


def load_postgres(dsn: str, tpch: Path) -> None:
    """Copy the TPC-H tables of the DuckDB file into the server and ANALYZE them."""
    import duckdb
    import psycopg
    from duckdb_extensions import import_extension

    import_extension("postgres_scanner")
    con = duckdb.connect()
    try:
        con.execute("LOAD postgres_scanner")
        con.execute(f"ATTACH '{tpch}' AS src (READ_ONLY)")
        con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
        for t in TABLES:
            con.execute(f"CREATE TABLE pg.public.{t} AS SELECT * FROM src.main.{t}")
    finally:
        con.close()
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("ANALYZE")


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--":
        print("usage: python -m tests.servers -- COMMAND...", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="placement-engines-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the server's user reaches its folder through this one
        tpch = tpch_duckdb(folder / "tpch.duckdb")
        with postgres(folder / "pg") as dsn:
            load_postgres(dsn, tpch)
            env = dict(os.environ, PLACEMENT_TEST_PG=dsn, PLACEMENT_TEST_TPCH=str(tpch))
            return subprocess.run(argv[1:], env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
