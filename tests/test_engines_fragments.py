"""The fragment runner on real engines: any subtree of a TPC-H plan, on each engine, with
cut children handed over as Arrow tables, returns what DuckDB returns for the query."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from placement_cli.engines.connect import Connections, Sources, canonical
from tests.conftest import TPCH_QUERIES


def rows(table: Any) -> list[tuple[Any, ...]]:
    """The rows as a sorted list, numbers with a fraction to 0.01 (engines sum in
    different orders; one engine's decimal average is another's double)."""
    out = [
        tuple(round(float(v), 2) if isinstance(v, float | Decimal) else v for v in r.values())
        for r in table.to_pylist()
    ]
    return sorted(out, key=repr)


@pytest.fixture(scope="module")
def conns(tpch_db: Path, pg_dsn: str) -> Any:
    c = Connections(Sources(db=tpch_db, pg=pg_dsn, statement_timeout_ms=30_000))
    yield c
    c.close()


@pytest.mark.parametrize("nr", TPCH_QUERIES)
def test_root_and_a_cut_equal_duckdb_on_every_engine(
    conns: Any, tpch_sql: dict[int, str], nr: int
) -> None:
    from placement_cli.engines.fragments import build_plan, prepare, run_subtree

    sql = tpch_sql[nr]
    plan = build_plan(conns, sql)
    ref = rows(canonical(conns["duckdb"].handle.execute(sql).to_arrow_table()))
    assert ref
    assert list(plan.nodes) == [f"n{i}" for i in range(len(plan.nodes))]
    for engine in ("datafusion", "duckdb", "postgres"):
        got = run_subtree(conns, plan, "n0", engine, {})
        assert rows(got) == ref, engine
        assert prepare(conns, plan, "n0", engine, frozenset()).replanned == (engine != "datafusion")
    # Cut both children of the deepest join: each computed on another engine and handed
    # over as Arrow.
    join = [n for n in plan.nodes.values() if n.op.startswith("join")][-1]
    for engine, source in (
        ("datafusion", "duckdb"),
        ("duckdb", "postgres"),
        ("postgres", "datafusion"),
    ):
        inputs = {c: run_subtree(conns, plan, c, source, {}) for c in join.children}
        assert rows(run_subtree(conns, plan, "n0", engine, inputs)) == ref, (engine, source)


def test_recorded_plan_loads_with_the_same_nodes(conns: Any, tpch_sql: dict[int, str]) -> None:
    from placement_cli.engines.fragments import build_plan, load_plan, run_subtree

    sql = tpch_sql[3]
    plan = build_plan(conns, sql)
    again = load_plan(conns, sql, plan.substrait)
    assert again.nodes == plan.nodes
    assert again.token != plan.token
    assert rows(run_subtree(conns, again, "n0", "duckdb", {})) == rows(
        run_subtree(conns, plan, "n0", "datafusion", {})
    )


def test_inputs_must_be_inside_the_subtree(conns: Any, tpch_sql: dict[int, str]) -> None:
    from placement_cli.engines.fragments import build_plan, prepare

    plan = build_plan(conns, tpch_sql[3])
    leaf = next(n for n, node in plan.nodes.items() if not node.children)
    with pytest.raises(ValueError, match="not below"):
        prepare(conns, plan, leaf, "duckdb", frozenset({"n0"}))
    with pytest.raises(ValueError, match="no node"):
        prepare(conns, plan, "n999", "duckdb", frozenset())


def test_a_cut_sort_under_a_fetch_is_read_not_recomputed(
    conns: Any, tpch_sql: dict[int, str]
) -> None:
    from placement_cli.engines.fragments import build_plan, prepare, run_subtree

    sql = tpch_sql[3]  # fetch(n0) over sort(n1)
    plan = build_plan(conns, sql)
    assert (plan.nodes["n0"].op, plan.nodes["n1"].op) == ("fetch", "sort")
    ref = rows(canonical(conns["duckdb"].handle.execute(sql).to_arrow_table()))
    ordered = run_subtree(conns, plan, "n1", "datafusion", {})
    for engine in ("duckdb", "postgres"):
        frag = prepare(conns, plan, "n0", engine, frozenset({"n1"}))
        assert frag.sql is not None and plan.table_name("n2") not in frag.sql
        assert plan.table_name("n1") in frag.sql
        assert rows(frag.run({"n1": ordered})) == ref, engine
