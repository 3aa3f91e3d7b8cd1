from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# The example plan and body files (not the operator tree), in name order.
PLAN_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.yaml") if not p.name.endswith("tree.yaml"))

# Timing-based health checks would make a loaded CI machine fail a correct build.
_QUIET = [HealthCheck.too_slow]
# `fast` is `make test-fast`'s inner loop: a tenth of the examples (tests/budget.py scales
# the tests that ask for more or fewer than the default).
settings.register_profile("default", deadline=None, max_examples=200, suppress_health_check=_QUIET)
settings.register_profile(
    "ci", deadline=None, max_examples=200, derandomize=True, suppress_health_check=_QUIET
)
settings.register_profile("fast", deadline=None, max_examples=20, suppress_health_check=_QUIET)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
)


# Whole-process fuzzing, scale runs and command-line parity over thousands of generated
# lines: `make test` and CI run them, `make test-fast` (-m "not slow") leaves them out.
# The README's CI recipe run as written (bash, three steps over a project of goldens) is
# here too: each of its parts has its own fast test (the reports' formats in
# test_report.py, `diff -q` in test_views_diff.py, the goldens' bytes in test_goldens.py).
SLOW_MODULES = {
    "test_fuzz",
    "test_fuzz_mir",
    "test_solve_scale",
    "test_batch",
    "test_launch",
    "test_output_paths",
    "test_ci_recipe",
    # Whole-process checks of what a user sees on bad or unusual input: each case is a
    # `placement` process (about 0.1 s of start-up each on a quiet machine, seconds under
    # load) judged by its exit code and its exact lines. Together they were two thirds of
    # the inner loop's time (2026-11-28: 380 of 540 s of test time); the inner loop
    # keeps the goldens, the CLI smoke tests and every in-process property test.
    "test_invalid_input",
    "test_lower_invalid",
    "test_mir_inputs",
    "test_mir_positions",
    "test_mir_semantics",
    "test_mir_cli",
    "test_artifact_keys",
    "test_input_kinds",
    "test_byte_stable",
    "test_config",
    "test_report",
    "test_provenance",
    "test_pins_recorded",
    "test_lower_cli",
    "test_lower_rule_reasons",
    "test_profile_cli",
    "test_codes",
    "test_stage_added",
    "test_tree_transfer",
    "test_walkthrough",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # A test of a real engine is slow too: it needs the server and the TPC-H data.
        engine = {"pg_dsn", "tpch_db"} & set(getattr(item, "fixturenames", ()))
        if item.path.stem in SLOW_MODULES or engine:
            item.add_marker(pytest.mark.slow)


def run_cli(
    *args: str,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `placement` as users do: a separate process, bytes in and out."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "placement_cli", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=120,
    )


@pytest.fixture
def cli():
    return run_cli


# --- real engines (tests/servers.py). Under `make test` one PostgreSQL server and one
# TPC-H database serve every worker (their locations come in the environment); a test
# file run alone starts its own, once per session. Without the `engines` extra the
# tests that need an engine are skipped, except where PLACEMENT_TEST_ENGINES=required
# (`make test` sets it): then a missing engine is a failure, never a silent skip.
def _engines_or_skip() -> None:
    try:
        import adbc_driver_postgresql  # noqa: F401
        import datafusion  # noqa: F401
        import duckdb  # noqa: F401
        import polars  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        if os.environ.get("PLACEMENT_TEST_ENGINES") == "required":
            raise
        pytest.skip(f"the engines extra is not installed ({exc.name})")


@pytest.fixture(scope="session")
def engines_dir() -> Iterator[Path]:
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="placement-engines-"))
    folder.chmod(0o755)  # the server's own user reaches its folder through this one
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def tpch_db(engines_dir: Path) -> Path:
    """A DuckDB file with TPC-H at SF 0.1 (open it read-only: workers share it)."""
    _engines_or_skip()
    given = os.environ.get("PLACEMENT_TEST_TPCH")
    if given:
        return Path(given)
    from tests.servers import tpch_duckdb

    return tpch_duckdb(engines_dir / "tpch.duckdb")


# The TPC-H queries the tests of the real engines place and execute (2 to 6 tables
# joined, aggregates, a sort under a limit).
TPCH_QUERIES = (3, 5, 10, 18)


@pytest.fixture(scope="session")
def tpch_sql(tpch_db: Path) -> dict[int, str]:
    """Each TPC-H query's text by its number, as DuckDB's `tpch` extension has it."""
    import duckdb
    from duckdb_extensions import import_extension

    import_extension("tpch")
    with duckdb.connect(str(tpch_db), read_only=True) as con:
        con.execute("LOAD tpch")
        rows = con.execute("SELECT query_nr, query FROM tpch_queries()").fetchall()
    return {int(nr): str(text) for nr, text in rows}


@pytest.fixture(scope="session")
def tpcds_db(engines_dir: Path) -> tuple[Path, dict[int, str]]:
    """A DuckDB file with TPC-DS at SF 0.01 (about 2 s to make, once per worker) and the
    99 query texts by number, from DuckDB's `tpcds` extension (offline, a wheel)."""
    _engines_or_skip()
    import duckdb
    from duckdb_extensions import import_extension

    import_extension("tpcds")
    path = engines_dir / "tpcds.duckdb"
    if not path.exists():
        with duckdb.connect(str(path)) as con:
            con.execute("LOAD tpcds")
            con.execute("CALL dsdgen(sf=0.01)")
    with duckdb.connect(str(path), read_only=True) as con:
        con.execute("LOAD tpcds")
        rows = con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall()
    return path, {int(nr): str(text) for nr, text in rows}


@pytest.fixture(scope="session")
def pg_dsn(engines_dir: Path, tpch_db: Path) -> Iterator[str]:
    """A running PostgreSQL with the TPC-H tables loaded; its connection string."""
    given = os.environ.get("PLACEMENT_TEST_PG")
    if given:
        yield given
        return
    from tests.servers import load_postgres, postgres

    with postgres(engines_dir / "pg") as dsn:
        load_postgres(dsn, tpch_db)
        yield dsn
