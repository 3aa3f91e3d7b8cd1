"""The fast slice of the SQL and engine-JSON fuzz campaign (`python -m tests.fuzz.sql` is
the long one): mutated SQL files through `placement import sql --probe` on DuckDB and
DataFusion, and mutated engine plans (tests/data/engine_plans/) through `placement
import postgres-explain | duckdb-profile | datafusion-metrics`, each a whole process.
Every run must end with a documented exit (0 or 3; 2 and 6 are allowed as notes) without
a traceback, a signal or a hang, name its input on every exit-3 line, leave no output
when it fails and a tree file `placement tree` reads when it succeeds. Nothing is
expected to fail here: a finding is a bug to fix, wherever it is.

The SQL part runs real engines, so it is `slow` as every engine test is (conftest.py);
the engine-JSON part and the checks of the judge are not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import _engines_or_skip
from tests.fuzz.child import Config
from tests.fuzz.judge import report
from tests.fuzz.sql import (
    JSON_KINDS,
    SQL_KINDS,
    ImportFuzzer,
    dump,
    json_input,
    judge_import,
    make_data,
    parse,
    pool,
    run_job,
    run_sql_job,
    sql_input,
    tokens,
)

FAST_SEED = 1129
SQL_INPUTS = int(os.environ.get("PLACEMENT_FUZZ_SQL_FAST", "22"))
JSON_INPUTS = int(os.environ.get("PLACEMENT_FUZZ_JSON_FAST", "20"))
CFG = Config(hang_seconds=60.0, memory_mb=4096)
PLANS = Path(__file__).resolve().parent / "data" / "engine_plans"


@pytest.fixture(scope="module")
def sql_pool(tmp_path_factory):
    """A worker started fresh (a pytest worker may hold DataFusion's runtime, whose
    threads a fork would not copy), with the TPC-H SF 0.01 file."""
    _engines_or_skip()
    folder = tmp_path_factory.mktemp("fuzz-sql")
    data = make_data(folder / "data")
    with pool(1, CFG, FAST_SEED, data, str(folder)) as p:
        yield p


@pytest.fixture(scope="module")
def json_fuzzer(tmp_path_factory) -> ImportFuzzer:
    return ImportFuzzer(CFG, FAST_SEED, None, tmp_path_factory.mktemp("fuzz-json"))


# The SQL inputs in two halves: two workers run them side by side.
@pytest.mark.slow
@pytest.mark.parametrize("half", [0, 1])
def test_sql_fuzz_fast_slice(sql_pool, half):
    jobs = [("sql", i) for i in range(half, SQL_INPUTS, 2)]
    outcomes = sql_pool.map(run_job, jobs, chunksize=1)
    if SQL_INPUTS >= 2 * len(SQL_KINDS):
        # the halves take the odd and the even indexes: an odd number of kinds, so each
        # half tries every kind
        assert {o.kind for o in outcomes} == set(SQL_KINDS)
        assert any(o.code == 0 for o in outcomes) and any(o.code == 3 for o in outcomes)
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad, 300, 400)


def test_json_fuzz_fast_slice(json_fuzzer):
    outcomes = [json_fuzzer.run("json", i) for i in range(JSON_INPUTS)]
    if JSON_INPUTS >= len(JSON_KINDS):
        assert {o.kind for o in outcomes} == set(JSON_KINDS)
    assert any(o.code == 0 for o in outcomes) and any(o.code == 3 for o in outcomes)
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad, 300, 400)


# Reproducers the campaign found, reduced: each must end as the rules say.


@pytest.mark.slow
def test_sql_a_long_sum_is_not_a_crash(sql_pool):
    """`SELECT 1 + 1 + ... + 1` (10,000 terms): a left-deep expression. DataFusion's
    planner (`build_plan`, engines/fragments.py) overflowed the main thread's stack
    and the process died of SIGSEGV: no exit code, no message."""
    text = ("SELECT " + " + ".join(["1"] * 10000)).encode()
    outcomes = sql_pool.starmap(run_sql_job, [(text, "duckdb")])
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad, 300, 400)


@pytest.mark.slow
@pytest.mark.parametrize(
    "query",
    [
        "SELECT DATE '0001-01-01' - 1 AS d",  # before year 1
        "SELECT DATE '10000-01-01' AS d",  # after year 9999
        "SELECT 'infinity'::DATE AS d",
    ],
)
def test_sql_dates_python_cannot_hold(sql_pool, query):
    """A date or timestamp out of Python's range (years 1 to 9999, DuckDB's infinity):
    the probe's comparison of the engines' answers (`stats.rows_of`, `to_pylist`) raised
    OverflowError, exit 1."""
    outcomes = sql_pool.starmap(run_sql_job, [(query.encode(), "duckdb")])
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad, 300, 400)


def test_import_budget_past_64_bits(json_fuzzer):
    """`--budget` of 2**64 or more: written into the tree file, whose JSON writer takes
    64-bit integers only (exit 1, `TypeError: Integer exceeds 64-bit range`)."""
    data = (PLANS / "q3.duckdb.json").read_bytes()
    args = ["import", "duckdb-profile", "in.json", "--budget", str(2**64), "-o", "out/tree.json"]
    o = json_fuzzer.run_files("json", "fixed", 0, [("in.json", data)], args, False)
    assert not o.findings, report([o], 300, 400)


# The generators and the judge.


def test_the_inputs_are_reproducible():
    queries = ("SELECT a, 'x''y' FROM t WHERE b > 1.5 -- c\n", "VALUES (1)")
    for kind in SQL_KINDS:
        assert sql_input(kind, 3, FAST_SEED, queries) == sql_input(kind, 3, FAST_SEED, queries)
    for kind in JSON_KINDS:
        assert json_input(kind, 3, FAST_SEED) == json_input(kind, 3, FAST_SEED)
    text = "SELECT \"a\"\"b\", 'it''s' /* ; */ FROM t -- x\n;"
    assert "".join(t for _, t in tokens(text)) == text


def test_dump_writes_what_json_cannot():
    doc = parse('{"a": NaN, "a": [1e400, 123456789012345678901234567890], "b": {"c": -0.0}}')
    assert dump(doc) == '{"a": NaN, "a": [1e400, 123456789012345678901234567890], "b": {"c": -0.0}}'
    deep = "[" * 100000 + "]" * 100000
    assert dump(parse("[1]")) == "[1]" and len(dump([deep])) > 200000


def test_judge_import_can_fail(tmp_path):
    out = tmp_path / "out" / "tree.json"
    out.parent.mkdir()
    src = ["q.sql"]
    # an internal error, a traceback, a signal, a hang
    err = b"Traceback (most recent call last):\n  File x\nKeyError: 'n0'\n"
    found, _ = judge_import(1, b"", err, False, src, out)
    assert {c for c, _ in found} == {"internal", "traceback"}
    assert [c for c, _ in judge_import(-11, b"", b"", False, src, out)[0]] == ["signal"]
    assert [c for c, _ in judge_import(-9, b"", b"", True, src, out)[0]] == ["hang"]
    # exit 3 must name the input on every line
    assert judge_import(3, b"", b"q.sql: no statement\n", False, src, out) == ([], [])
    found, _ = judge_import(3, b"", b"q.sql: a\nduckdb: b\n", False, src, out)
    assert [c for c, _ in found] == ["bad-error-line"]
    found, _ = judge_import(3, b"", b"a.json: x\nb.json: y\n", False, ["a.json", "b.json"], out)
    assert found == []
    # 2 and 6 are documented: notes; a Rust panic message: a note
    found, notes = judge_import(2, b"", b"placement: two files\n", False, src, out)
    assert found == [] and [c for c, _ in notes] == ["exit-2"]
    panic = b"thread '<unnamed>' panicked at src/x.rs:1:2:\nboom\nq.sql: x\n"
    assert [c for c, _ in judge_import(3, b"", panic, False, src, out)[1]] == ["panic"]
    # a failed run leaves nothing; a successful one a tree file that `tree` reads
    out.write_bytes(b"{}")
    found, _ = judge_import(3, b"", b"q.sql: x\n", False, src, out)
    assert [c for c, _ in found] == ["partial-output"]
    found, _ = judge_import(0, b"", b"", False, src, out)
    assert [c for c, _ in found] == ["invalid-output"]
    out.write_bytes(b'{"version": 1, "engines": ["pg"], "nodes": [{"id": "a", "time": {"pg": 1}}]}')
    assert judge_import(0, b"", b"", False, src, out) == ([], [])
    out.unlink()
    assert [c for c, _ in judge_import(0, b"", b"", False, src, out)[0]] == ["missing-output"]
