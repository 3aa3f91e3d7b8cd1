"""The engine loop on a schema of the project's own, not TPC-H ("Every query, never a
crash"): a table with a spaced name (`"order items"`), a reserved-word column
(`"select"`, `"at"`, `"group"`), a unicode column name and values (`"Größe"`: 'naïve',
'東京', an emoji) with NULLs, DECIMAL(18,3), TIMESTAMPTZ, UUID, JSON and a LIST, and a
`customers` table (unicode names, NULLs) to join with. Each query goes through the
README's loop (`import sql --probe` -> `tree --transfer` -> `execute --all --budget 1`,
`tests.test_engines_queries.loop`): every step exits 0, no placement's rows differ from
the reference's, and the rows `execute` writes are DuckDB's own answer to the query as
written (`same_as_duckdb`). A query DataFusion cannot plan is one node run where it runs
(still DuckDB's answer); a node an engine cannot run is a reported limitation, not a
failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_engines_queries import _cli, loop, same_as_duckdb

# Deterministic: every value is an expression of the row number.
SCHEMA = """
CREATE TABLE customers AS
SELECT i AS cust_id,
       ['Zoë', 'Ørsted', 'Łukasz', 'Straße', '名無し', 'Émile', 'O''Brien', NULL][1 + i % 8]
           AS name,
       CASE WHEN i % 5 = 0 THEN NULL ELSE ['DE', 'JP', 'FR', 'US'][1 + i % 4] END AS country
FROM range(1, 41) t(i);

CREATE TABLE "order items" AS
SELECT i::INTEGER AS "select",
       CASE WHEN i % 7 = 0 THEN NULL
            ELSE ['naïve', '東京', 'café 🍕', 'Größe', 'plain', 'Ünïcödé'][1 + i % 6] END
           AS "Größe",
       CASE WHEN i % 11 = 0 THEN NULL
            ELSE (((i * 7919) % 100003)::DECIMAL(18,3) / 7) END::DECIMAL(18,3) AS amount,
       TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i * 37) MINUTE AS "at",
       md5(i::VARCHAR)::UUID AS id,
       json_object('k', i, 'name', 'n' || i, 'nested', json_object('v', i % 3)) AS doc,
       CASE WHEN i % 9 = 0 THEN NULL ELSE list_transform(range(i % 4), x -> 't' || x) END
           AS tags,
       1 + (i % 40) AS cust_id,
       i % 13 = 0 AS "group"
FROM range(0, 400) t(i);
"""


@pytest.fixture(scope="module")
def schema_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import duckdb

    db = tmp_path_factory.mktemp("schema") / "schema.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(SCHEMA)
    return db


DF = "duckdb,datafusion"
PL = "duckdb,datafusion,polars"

QUERIES = [
    # -- windows
    pytest.param(DF, """
SELECT "select", cust_id, amount,
       row_number() OVER (PARTITION BY cust_id ORDER BY "select") AS rn,
       sum(amount) OVER (PARTITION BY cust_id) AS cust_total
FROM "order items" WHERE "select" < 120 ORDER BY cust_id, rn""",
                 id="window-row_number-sum-over-partition"),
    pytest.param(DF, """
SELECT "select", cust_id,
       lag(amount) OVER (PARTITION BY cust_id ORDER BY "at") AS prev,
       sum(amount) OVER (ORDER BY "select" ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s3
FROM "order items" WHERE "select" < 80 ORDER BY "select\"""",
                 id="window-lag-by-timestamptz-rows-frame"),
    pytest.param(DF, """
SELECT "select", amount, rank() OVER (ORDER BY amount DESC) AS r
FROM "order items" WHERE "select" < 60 ORDER BY "select\"""",
                 id="window-rank-desc-over-decimal-with-nulls"),
    # -- CTEs
    pytest.param(DF, """
WITH big AS (SELECT cust_id, amount FROM "order items" WHERE amount > 5000)
SELECT c.name, c.country, count(*) AS n, sum(b.amount) AS total
FROM big b JOIN customers c ON c.cust_id = b.cust_id
GROUP BY c.name, c.country ORDER BY total DESC, c.name NULLS LAST, c.country NULLS LAST""",
                 id="cte-join-unicode-names"),
    pytest.param(DF, """
WITH per AS (SELECT cust_id, sum(amount) AS t FROM "order items" GROUP BY cust_id)
SELECT a.cust_id, a.t FROM per a WHERE a.t > (SELECT avg(t) FROM per) ORDER BY a.t DESC""",
                 id="cte-referenced-twice"),
    # -- UNION ALL
    pytest.param(DF, """
SELECT "Größe" AS label, amount FROM "order items" WHERE "select" % 50 = 1
UNION ALL
SELECT name AS label, CAST(cust_id AS DECIMAL(18,3)) AS amount FROM customers WHERE cust_id < 6
ORDER BY label NULLS FIRST, amount""",
                 id="union_all-unicode-decimal"),
    # -- ROLLUP
    pytest.param(DF, """
SELECT c.country, o."Größe", count(*) AS n, sum(o.amount) AS total
FROM "order items" o JOIN customers c USING (cust_id)
GROUP BY ROLLUP (c.country, o."Größe")
ORDER BY c.country NULLS LAST, o."Größe" NULLS LAST""",
                 id="group_by-rollup"),
    # -- EXISTS / IN
    pytest.param(DF, """
SELECT c.cust_id, c.name FROM customers c
WHERE EXISTS (SELECT 1 FROM "order items" o WHERE o.cust_id = c.cust_id AND o."Größe" = '東京')
ORDER BY c.cust_id""",
                 id="exists-correlated-unicode-literal"),
    pytest.param(DF, """
SELECT o."select", o.amount FROM "order items" o
WHERE o.cust_id IN (SELECT cust_id FROM customers WHERE country = 'JP')
  AND o."select" NOT IN (SELECT "select" FROM "order items" WHERE "group")
ORDER BY o."select\"""",
                 id="in-and-not_in-subquery-without-nulls"),
    pytest.param(DF, """
SELECT "select" FROM "order items" WHERE "Größe" NOT IN (SELECT name FROM customers)
ORDER BY 1""",
                 id="not_in-subquery-holding-a-null"),
    pytest.param(DF, """
SELECT c.cust_id FROM customers c
WHERE c.name NOT IN (SELECT "Größe" FROM "order items" WHERE "Größe" IS NOT NULL)
ORDER BY 1""",
                 id="not_in-null-on-the-probe-side"),
    # -- COUNT DISTINCT
    pytest.param(DF, """
SELECT c.country, count(DISTINCT o."Größe") AS kinds, count(DISTINCT o.cust_id) AS custs,
       count(*) AS n
FROM "order items" o JOIN customers c ON o.cust_id = c.cust_id
GROUP BY c.country ORDER BY c.country NULLS FIRST""",
                 id="count_distinct-by-group"),
    pytest.param(DF, """
SELECT count(DISTINCT id) AS ids,
       count(DISTINCT "Größe") FILTER (WHERE amount > 5000) AS big
FROM "order items\"""",
                 id="count_distinct-uuid-and-filter-clause"),
    # -- ORDER BY ... LIMIT
    pytest.param(DF, """
SELECT "select", amount, "Größe" FROM "order items"
WHERE amount IS NOT NULL ORDER BY amount DESC, "select" LIMIT 7""",
                 id="order_by-limit-non-null"),
    pytest.param(DF, """
SELECT "select", amount FROM "order items" ORDER BY amount DESC, "select" LIMIT 5""",
                 id="order_by-desc-limit-over-nulls"),
    # -- `=` a scalar subquery on the decimal
    pytest.param(DF, """
SELECT o."select", o.amount, c.name
FROM "order items" o JOIN customers c ON c.cust_id = o.cust_id
WHERE o.amount = (SELECT max(amount) FROM "order items" WHERE "Größe" = 'naïve')""",
                 id="eq-scalar-subquery-decimal-max"),
    # -- the unicode column
    pytest.param(DF, """
SELECT "Größe", count(*) AS n, min(amount) AS lo, max(amount) AS hi FROM "order items"
WHERE "Größe" IN ('naïve', '東京', 'café 🍕') OR "Größe" LIKE 'Gr%'
GROUP BY "Größe" ORDER BY "Größe\"""",
                 id="unicode-filter"),
    pytest.param(PL, """
SELECT "Größe", count(*) AS n, min(amount) AS lo, max(amount) AS hi FROM "order items"
WHERE "Größe" IN ('naïve', '東京', 'café 🍕') OR "Größe" LIKE 'Gr%'
GROUP BY "Größe" ORDER BY "Größe\"""",
                 id="unicode-filter-polars"),
    pytest.param(DF, """
SELECT cust_id, name FROM customers WHERE name = 'O''Brien' OR name LIKE '%ß%' ORDER BY 1""",
                 id="quoted-literal-and-like-on-unicode"),
    pytest.param(DF, """
SELECT "Größe", upper("Größe") AS u, length("Größe") AS l
FROM "order items" WHERE "select" < 7 ORDER BY "select\"""",
                 id="unicode-upper-length"),
    # -- the timestamptz column
    pytest.param(DF, """
SELECT "select", "at" FROM "order items"
WHERE "at" >= TIMESTAMPTZ '2024-01-05 00:00:00+00' AND "at" < TIMESTAMPTZ '2024-01-08 12:00:00+00'
ORDER BY "at\"""",
                 id="timestamptz-range-filter"),
    pytest.param(DF, """
SELECT date_trunc('day', "at") AS d, count(*) AS n, sum(amount) AS s
FROM "order items" GROUP BY 1 ORDER BY 1""",
                 id="timestamptz-date_trunc-group"),
    pytest.param(DF, """
SELECT "select", CAST("at" AS VARCHAR) AS s FROM "order items" WHERE "select" < 5 ORDER BY 1""",
                 id="timestamptz-cast-to-varchar"),
    # -- UUID, JSON, LIST
    pytest.param(DF, """
SELECT o."select", o.id, o.doc, o.tags, c.name
FROM "order items" o JOIN customers c ON c.cust_id = o.cust_id
WHERE o."select" % 17 = 3 ORDER BY o."select\"""",
                 id="select-uuid-json-list"),
    pytest.param(PL, """
SELECT o."select", o.id, o.doc, o.tags, c.name
FROM "order items" o JOIN customers c ON c.cust_id = o.cust_id
WHERE o."select" % 17 = 3 ORDER BY o."select\"""",
                 id="select-uuid-json-list-polars"),
    pytest.param(DF, """
SELECT "select" FROM "order items" WHERE id = 'ECCBC87E-4B5C-E2FE-2830-8FD9F2A7BAF3'""",
                 # A UUID leaves DuckDB as Arrow text: cut under a DuckDB filter it would be
                 # compared as text (case-sensitive). The probe marks every node above its
                 # read `no_cut`, so no placement cuts there (below).
                 id="uuid-uppercase-literal"),
    pytest.param(DF, """
SELECT "select", doc ->> 'name' AS name, CAST(doc AS VARCHAR) LIKE '%"v":2%' AS v2
FROM "order items" WHERE "select" < 30 ORDER BY 1""",
                 id="json-extract"),
    pytest.param(DF, """
SELECT "select", tags[1] AS first, len(tags) AS n FROM "order items"
WHERE "select" < 20 ORDER BY 1""",
                 id="list-index-len"),
    # -- NULLs, reserved words, numbers
    pytest.param(DF, """
SELECT "group", "Größe" IS NULL AS no_label, count(amount) AS with_amount, count(*) AS n,
       coalesce(sum(amount), 0) AS total
FROM "order items" GROUP BY ALL ORDER BY ALL""",
                 id="nulls-reserved-group_by-all"),
    pytest.param(DF, """
SELECT "select", "select" / 7 AS q FROM "order items" WHERE "select" < 20 ORDER BY "select\"""",
                 id="integer-division"),
    pytest.param(DF, """
SELECT "select", CAST(amount AS INTEGER) AS whole FROM "order items"
WHERE "select" < 30 ORDER BY "select\"""",
                 id="decimal-cast-to-integer"),
]  # fmt: skip


@pytest.mark.parametrize(("engines", "sql"), QUERIES)
def test_every_query_on_the_schema_returns_duckdbs_rows(
    schema_db: Path, tmp_path: Path, engines: str, sql: str
) -> None:
    sec = loop(schema_db, sql, tmp_path, engines=engines)
    assert sec["summary"]["mismatches"] == 0, [p["error"] for p in sec["placements"] if p["error"]]
    assert sec["summary"]["executed"] >= 1
    assert same_as_duckdb(schema_db, sql, tmp_path / "rows.parquet")


def test_a_result_carrying_a_uuid_is_never_cut(schema_db: Path, tmp_path: Path) -> None:
    """The probe marks every node at or above a read of a column DuckDB exports as
    another type (`no_cut`, with the column and its type), and `tree` places no cut
    there; a query reading no such column gets no mark."""
    work = tmp_path
    (work / "u.sql").write_text(
        """SELECT "select" FROM "order items" WHERE id = 'ECCBC87E-4B5C-E2FE-2830-8FD9F2A7BAF3'"""
    )
    (work / "p.sql").write_text("""SELECT "select", amount FROM "order items" WHERE "select" < 9""")
    for name in ("u", "p"):
        r = _cli("import", "sql", f"{name}.sql", "--probe", "--db", str(schema_db), "--engines", DF, "--repeat", "1", "-q", "-o", f"{name}.tree.json", cwd=work)  # fmt: skip
        assert r.returncode == 0, r.stderr
    u = json.loads((work / "u.tree.json").read_text())
    marked = {n["id"]: n["no_cut"] for n in u["nodes"] if "no_cut" in n}
    reads = [n["id"] for n in u["nodes"] if n["op"].startswith("read(")]
    assert reads and all(r in marked for r in reads)
    assert all("id (UUID)" in why for why in marked.values())
    assert set(marked) == {n["id"] for n in u["nodes"]} - {u["root"]}
    p = json.loads((work / "p.tree.json").read_text())
    assert not any("no_cut" in n for n in p["nodes"])
    # Times that make a free cut above each read pay: placed with the marks, no cut;
    # with the marks taken away, the same file cuts.
    u["transfer"] = {"default": {"fixed": 0}}
    u["budget"] = 3
    for n in u["nodes"]:
        slow = n["op"].startswith("read(")
        n["time"] = {"duckdb": 100 if slow else 1, "datafusion": 0 if slow else 100}
    cuts = []
    for name, doc in (
        ("marked", u),
        (
            "unmarked",
            {**u, "nodes": [{k: x for k, x in n.items() if k != "no_cut"} for n in u["nodes"]]},
        ),
    ):
        (work / f"{name}.json").write_text(json.dumps(doc))
        r = _cli("tree", f"{name}.json", "--latency", "critical-path", "-q", "-o", f"{name}.a.json", cwd=work)  # fmt: skip
        assert r.returncode == 0, r.stderr
        cuts.append(json.loads((work / f"{name}.a.json").read_text())["tree"]["cuts_used"])
    assert cuts[0] == 0 < cuts[1]
