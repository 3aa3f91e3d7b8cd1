"""`placement execute`'s parts: the placements a budget allows, fragments, Spearman's
rank correlation against its definition, the row check; and, on real engines, that
independent fragments run at the same time and that a wrong result is an error.

The engine tests here give the scheduler fragments written as SQL per node (a real
PostgreSQL `pg_sleep`, a real DuckDB join of what the fragments handed over); the
TPC-H tests (`tests/test_execute_tpch.py`) run the fragment runner of a probed plan.
"""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement_cli.algorithms.tree import evaluate
from placement_cli.engines.placements import allowed, fragments, n_cuts, predicted
from placement_cli.engines.stats import same_rows, spearman
from placement_cli.ir.tree.build import tree_from_spec
from placement_cli.ir.tree.model import INF


def _tree(engines: int = 3) -> Any:
    es = ["duckdb", "datafusion", "postgres"][:engines]
    t = {e: 1.0 + i for i, e in enumerate(es)}
    return tree_from_spec(
        es,
        [
            {"id": "r", "children": ["j"], "time": t},
            {"id": "j", "children": ["a", "b"], "time": t},
            {"id": "a", "children": ["c"], "time": t},
            {"id": "b", "time": {es[0]: 2.0, es[-1]: 5.0}},
            {"id": "c", "time": t},
        ],
        {"default": {"fixed": 3}},
    )


def _brute(tree: Any, budget: int) -> set[tuple[int, ...]]:
    out = set()
    par = [-1] * tree.n
    for v in range(tree.n):
        for u in tree.children[v]:
            par[u] = v
    for a in itertools.product(range(len(tree.engines)), repeat=tree.n):
        if any(tree.time[v][a[v]] == INF for v in range(tree.n)):
            continue
        cuts = [v for v in range(tree.n) if par[v] >= 0 and a[v] != a[par[v]]]
        if len(cuts) <= budget and all(tree.matrix(v)[a[v], a[par[v]]] < INF for v in cuts):
            out.add(a)
    return out


@pytest.mark.parametrize("budget", [0, 1, 2, 4])
def test_allowed_is_every_assignment_within_the_budget_once(budget: int) -> None:
    tree = _tree()
    got = list(allowed(tree, budget))
    assert len(got) == len(set(got))
    assert set(got) == _brute(tree, budget)
    assert all(n_cuts(tree, a) <= budget for a in got)


def test_fragments_cover_the_tree_and_predictions_add_up() -> None:
    tree = _tree()
    for a in allowed(tree, 2):
        frags = fragments(tree, a)
        assert sorted(v for f in frags for v in f.nodes) == list(range(tree.n))
        assert len(frags) == n_cuts(tree, a) + 1
        p = predicted(tree, a)
        assert p.latency == evaluate(tree, a)[tree.root]
        # The whole is the root fragment's own path or some input's branch plus its cut.
        for i in range(len(frags)):
            branch = [
                p.fragments[frags.index(g)].subtree_ms + p.cuts[g.root]
                for g in frags
                if g.parent == i
            ]
            assert p.fragments[i].subtree_ms >= p.fragments[i].fragment_ms - 1e-9
            assert (
                p.fragments[i].subtree_ms
                <= p.fragments[i].fragment_ms + max(branch, default=0) + 1e-9
            )


def _spearman_by_definition(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's correlation of mid-ranks, each rank counted by comparing every pair."""

    def mid_ranks(v: list[float]) -> list[float]:
        return [sum(1 for w in v if w < x) + (sum(1 for w in v if w == x) + 1) / 2 for x in v]

    rx, ry = mid_ranks(xs), mid_ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return None if vx == 0 or vy == 0 else cov / math.sqrt(vx * vy)


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=2, max_size=25))
def test_spearman_is_the_rank_correlation(pairs: list[tuple[int, int]]) -> None:
    xs = [float(a) for a, _ in pairs]
    ys = [float(b) for _, b in pairs]
    got, want = spearman(xs, ys), _spearman_by_definition(xs, ys)
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert abs(got - want) < 1e-9


def test_spearman_without_ties_is_the_textbook_formula() -> None:
    xs = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]
    ys = [2.0, 7.0, 1.0, 8.0, 2.5, 8.5, 0.5, 6.0]
    rx = [sorted(xs).index(x) + 1 for x in xs]
    ry = [sorted(ys).index(y) + 1 for y in ys]
    n = len(xs)
    textbook = 1 - 6 * sum((a - b) ** 2 for a, b in zip(rx, ry, strict=True)) / (n * (n * n - 1))
    assert spearman(xs, ys) == pytest.approx(textbook)


def test_same_rows_is_a_multiset_check_with_a_float_tolerance() -> None:
    assert same_rows([(1, 2.004), (1, 2.004), (3, "x")], [(3, "x"), (1, 2.0), (1, 2.0)]) is None
    assert same_rows([(1, 2.0)], [(1, 2.02)]) is not None
    assert same_rows([(1, 2.0), (1, 2.0)], [(1, 2.0), (2, 2.0)]) is not None
    assert same_rows([(1,)], [(1,), (1,)]) is not None
    assert same_rows([(1e9 + 0.5,)], [(1e9 + 0.5000001,)]) is None


# --- real engines ------------------------------------------------------------------


SLEEP = 0.6


def _sql_runner(sql: dict[Any, str]) -> Any:
    """Runs node `n` on engine `e` as `sql[(n, e)]`, its cut inputs registered as
    tables named after their nodes (`sql[(n, e, True)]` when it has inputs): a real
    query on a real engine."""
    from placement_cli.engines.handoff import hand_off

    def run(conns: Any, node: str, engine: str, inputs: dict[str, Any]) -> Any:
        text = sql.get((node, engine, bool(inputs))) or sql[(node, engine)]
        if engine == "duckdb":
            con = conns["duckdb"].handle
            for name, table in inputs.items():
                con.register(name, table)
            return con.execute(text).to_arrow_table()
        if engine == "postgres":
            import pyarrow as pa

            for name, table in inputs.items():
                hand_off(conns, "duckdb", "postgres", table, name)
            try:
                with conns["postgres"].handle.cursor() as cur:
                    cur.execute(text)
                    cols = [d[0] for d in cur.description]
                    rows = cur.fetchall()
            finally:
                for name in inputs:
                    conns["postgres"].drop(name)
            return pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)})
        raise AssertionError(engine)

    return run


def _sleep_tree() -> Any:
    return tree_from_spec(
        ["duckdb", "postgres"],
        [
            {"id": "join", "children": ["a", "b"], "time": {"duckdb": 1, "postgres": 1}},
            {"id": "a", "time": {"duckdb": 600, "postgres": 600}},
            {"id": "b", "time": {"duckdb": 600, "postgres": 600}},
        ],
        {"default": {"fixed": 1}},
    )


_SLEEP_SQL = {
    (
        "a",
        "postgres",
    ): f"SELECT x, 'a' AS side FROM (SELECT pg_sleep({SLEEP})) s, generate_series(1, 3) x",
    (
        "b",
        "postgres",
    ): f"SELECT x, 'b' AS side FROM (SELECT pg_sleep({SLEEP})) s, generate_series(2, 4) x",
    ("join", "duckdb"): "SELECT a.x, a.side AS l, b.side AS r FROM a JOIN b ON a.x = b.x",
    ("join", "postgres"): "SELECT 1",
}


def test_independent_fragments_run_at_the_same_time(tpch_db: Path, pg_dsn: str) -> None:
    from placement_cli.engines.connect import Sources
    from placement_cli.engines.measure import rows_of
    from placement_cli.engines.runs import Pool, run_placement

    tree = _sleep_tree()
    a = (0, 1, 1)  # the join on DuckDB, both sleeping inputs on PostgreSQL
    frags = fragments(tree, a)
    assert [tree.ids[f.root] for f in frags] == ["join", "a", "b"]
    runner = _sql_runner(_SLEEP_SQL)
    with Pool(Sources(db=tpch_db, pg=pg_dsn), 3) as pool:
        run_placement(pool, frags, tree.ids, tree.engines, runner)  # connections opened
        start = time.perf_counter()
        run = run_placement(pool, frags, tree.ids, tree.engines, runner)
        wall = time.perf_counter() - start
    assert sorted(rows_of(run.table)) == [
        (2, "a", "b"),
        (3, "a", "b"),
    ]
    sleeps = [run.fragments[i] for i in (1, 2)]
    assert all(f.seconds >= SLEEP for f in sleeps)
    # One sleep, not two: the two inputs overlapped.
    assert wall < 1.6 * SLEEP, wall
    assert max(f.start for f in sleeps) < min(f.end for f in sleeps)
    assert run.fragments[0].start >= max(f.end for f in sleeps)


def test_a_fragment_ready_alone_runs_on_the_calling_thread(tpch_db: Path, pg_dsn: str) -> None:
    """Nothing to overlap, no hop to a pool thread (it cost DataFusion ~0.4 ms a run);
    two inputs ready together still go to the pool."""
    import threading

    import pyarrow as pa

    from placement_cli.engines.connect import Sources
    from placement_cli.engines.runs import Pool, run_placement

    quick = {
        ("a", "postgres"): "SELECT x, 'a' AS side FROM generate_series(1, 3) x",
        ("b", "postgres"): "SELECT x, 'b' AS side FROM generate_series(2, 4) x",
        ("join", "duckdb", False): "SELECT 2 AS x, 'a' AS l, 'b' AS r",
        **{k: v for k, v in _SLEEP_SQL.items() if k[0] == "join"},
    }
    ran_on: dict[str, str] = {}
    inner = _sql_runner(quick)

    def runner(conns: Any, node: str, engine: str, inputs: dict[str, Any]) -> Any:
        ran_on[node] = threading.current_thread().name
        if node == "join" and inputs and "b" not in inputs:  # the chain: b inside the join
            inputs = {**inputs, "b": pa.table({"x": [2, 3, 4], "side": ["b"] * 3})}
        return inner(conns, node, engine, inputs)

    tree = _sleep_tree()
    me = threading.current_thread().name
    with Pool(Sources(db=tpch_db, pg=pg_dsn), 3) as pool:
        for a, here, pooled in (
            ((0, 0, 0), {"join"}, set()),  # one fragment
            ((0, 1, 0), {"join", "a"}, set()),  # a chain: a, then the join
            ((0, 1, 1), {"join"}, {"a", "b"}),  # two inputs ready at once
        ):
            ran_on.clear()
            run = run_placement(pool, fragments(tree, a), tree.ids, tree.engines, runner)
            assert run.table.num_rows >= 1
            assert {n for n, t in ran_on.items() if t == me} == here, (a, ran_on)
            assert {n for n, t in ran_on.items() if t != me} == pooled, (a, ran_on)
            assert all(t.startswith("fragment") for n, t in ran_on.items() if n in pooled)


def test_a_placement_with_other_rows_is_a_mismatch_never_a_timing(
    tpch_db: Path, pg_dsn: str
) -> None:
    from placement_cli.engines.connect import Sources
    from placement_cli.engines.measure import execute_many

    tree = tree_from_spec(
        ["duckdb", "postgres"],
        [
            {"id": "top", "children": ["n"], "time": {"duckdb": 1, "postgres": 1}},
            {"id": "n", "time": {"duckdb": 1, "postgres": 1}},
        ],
        {"default": {"fixed": 1}},
    )
    sql = {
        ("top", "duckdb"): "SELECT count(*) AS k, sum(n_nationkey) AS s FROM nation",
        ("top", "postgres"): "SELECT count(*) AS k, sum(n_nationkey) AS s FROM nation",
        ("n", "duckdb"): "SELECT n_nationkey FROM nation",
        ("n", "postgres"): "SELECT n_nationkey FROM nation WHERE n_nationkey < 3",
    }
    # With an input the top reads its child's rows: wrong ones when the child ran on
    # PostgreSQL (a filter the reference does not have).
    for e in ("duckdb", "postgres"):
        sql[("top", e, True)] = "SELECT count(*) AS k, sum(n_nationkey) AS s FROM n"
    run = _sql_runner(sql)
    ref, outs = execute_many(
        Sources(db=tpch_db, pg=pg_dsn),
        tree,
        tree.ids,
        [(0, 0), (0, 1), (1, 0)],
        lambda _: run,
        repeat=1,
    )
    assert ref.engine == "duckdb" and ref.rows == 1
    status = {o.assignment: o.status for o in outs}
    assert status == {(0, 0): "ok", (0, 1): "mismatch", (1, 0): "ok"}
    bad = next(o for o in outs if o.status == "mismatch")
    assert bad.runs == [] and "reference" in (bad.error or "")
    good = next(o for o in outs if o.assignment == (1, 0))
    assert len(good.runs) == 1 and set(good.handoffs) == {1}


def test_independent_fragments_of_a_planned_query_run_at_the_same_time(tpch_db: Path) -> None:
    """The same through the fragment runner: a query whose two join inputs each call a
    DataFusion UDF that sleeps, both inputs on DataFusion, the join on DuckDB."""
    import datafusion
    import pyarrow as pa

    from placement_cli.engines.connect import Sources
    from placement_cli.engines.fragments import build_plan
    from placement_cli.engines.plans import PlanRunner
    from placement_cli.engines.runs import Pool, run_placement

    def nap(values: Any) -> Any:
        time.sleep(SLEEP)
        return values

    sql = (
        "SELECT a.k AS ak, b.k AS bk FROM "
        "(SELECT nap(n_nationkey) AS k FROM nation WHERE n_nationkey = 1) a JOIN "
        "(SELECT nap(r_regionkey) AS k FROM region WHERE r_regionkey = 1) b ON a.k = b.k"
    )
    with Pool(Sources(db=tpch_db), 3) as pool:
        ctx = pool.main["datafusion"].handle
        ctx.register_udf(datafusion.udf(nap, [pa.int32()], pa.int32(), "volatile", name="nap"))
        plan = build_plan(pool.main, sql)
        join = next(n for n in plan.nodes.values() if n.op.startswith("join"))
        above = {"n0", join.id}
        nodes = [
            {"id": n.id, "children": list(n.children), "time": {"duckdb": 1, "datafusion": 1}}
            for n in plan.nodes.values()
        ]
        tree = tree_from_spec(["duckdb", "datafusion"], nodes, {"default": {"fixed": 1}})
        frags = fragments(tree, [0 if v in above else 1 for v in tree.ids])
        assert [tree.ids[f.root] for f in frags] == ["n0", *join.children]
        runner = PlanRunner(plan)
        run_placement(pool, frags, tree.ids, tree.engines, runner)  # prepared, connected
        start = time.perf_counter()
        run = run_placement(pool, frags, tree.ids, tree.engines, runner)
        wall = time.perf_counter() - start
    assert run.table.to_pylist() == [{"ak": 1, "bk": 1}]
    sleeps = run.fragments[1:]
    assert all(f.seconds >= SLEEP for f in sleeps)
    assert wall < 1.6 * SLEEP, wall
    assert max(f.start for f in sleeps) < min(f.end for f in sleeps)
