"""The SQL and engine-plan fuzz campaign: `python -m tests.fuzz.sql [--sql N] [--json N]`.

Two input paths of `placement import`, each through the real CLI in a child process
(`child`, as `python -m tests.fuzz` does), judged by the campaign's rules (`judge`: a
documented exit, no traceback, no hang, no partial output):

* **SQL files**, `import sql Q.sql --probe --db DB --engines ... --repeat 1 --warmup 0`
  on a TPC-H SF 0.01 DuckDB file made once per campaign (`make_data`). The texts start
  from DuckDB's 22 TPC-H queries and a few hand-written ones, then are mutated
  (`sql_input`): cut short, tokens deleted, repeated or swapped, keywords, operators and
  parentheses put in, identifiers made unknown, quoted or non-ASCII, literals made huge,
  NaN, empty, non-ASCII or full of backslashes, the query nested hundreds of levels
  deep, statements that are not one query (`; DROP TABLE lineitem`, CREATE, INSERT,
  PRAGMA, ATTACH, COPY, EXPORT, ...), and raw bytes (empty, comments only, invalid
  UTF-8, a byte-order mark, NULs, UTF-16).
* **Engine JSON**, `import postgres-explain|duckdb-profile|datafusion-metrics F.json`,
  from the sample files of tests/data/engine_plans/ mutated as JSON (`json_input`): keys
  dropped or given twice, values of the wrong type, NaN/Infinity, huge numbers, deep
  nesting, wide plans, the text cut short, a file read as another format, two files of
  one query, the document as YAML, raw bytes.

The exits `import` may end with are 0 and 3; 2 (usage) and 6 (file system, engine
unreachable) are documented too, so they are kept as notes, not findings. Findings: exit
1, a traceback, a hang past the wall limit, a signal, an exit-3 line that does not name
the input, output left by a failed run, or a tree file written that `placement tree`
would refuse. A Rust panic message on stderr is a note. `--reduce` shrinks each
distinct finding's example (a delta loop over tokens or JSON members) before printing it.
Exit status 1 when anything was found.

The child processes are forked from workers started fresh (`spawn`): a process that has
run DataFusion holds a Tokio runtime whose threads a fork does not copy, so a child
forked from it could hang in its first query.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import multiprocessing
import os
import pickle
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz.child import Config, preload, run_child
from tests.fuzz.gen import ROOT
from tests.fuzz.judge import Outcome, judge, signature
from tests.fuzz.report import print_findings, table

PLANS = ROOT / "tests" / "data" / "engine_plans"
# Each sample file and the format it is.
SAMPLES = {
    "q3.postgres.json": "postgres-explain",
    "q3.postgres-estimated.json": "postgres-explain",
    "q3.duckdb.json": "duckdb-profile",
    "q3.duckdb-explain.json": "duckdb-profile",
    "q3.datafusion.json": "datafusion-metrics",
}
FORMATS = ("postgres-explain", "duckdb-profile", "datafusion-metrics")
TARGETS = ("sql", "json")
SQL_KINDS = (
    "query",
    "hand",
    "truncate",
    "tokens",
    "insert",
    "identifiers",
    "literals",
    "nesting",
    "statements",
    "bytes",
    "mixed",
)
JSON_KINDS = (
    "sample",
    "drop-key",
    "strings",
    "dup-key",
    "wrong-type",
    "nonfinite",
    "huge",
    "deep",
    "truncate",
    "mismatch",
    "multi",
    "yaml",
    "bytes",
    "mixed",
)
# Documented exits that are not what these inputs should give (a usage error or a file
# system one from what a file holds): kept as notes, shown, but not findings.
NOTE_CODES = (2, 6)
ENGINE_SETS = ("duckdb,datafusion",) * 6 + ("duckdb", "datafusion")

# --- the data ---------------------------------------------------------------------------

_MAKE_DATA = """
import json, sys
import duckdb
from duckdb_extensions import import_extension
import_extension("tpch")
db, queries, sf = sys.argv[1], sys.argv[2], float(sys.argv[3])
con = duckdb.connect(db)
con.execute("LOAD tpch")
con.execute(f"CALL dbgen(sf={sf})")
rows = con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall()
con.close()
with open(queries, "w") as fh:
    json.dump([q for _, q in rows], fh)
"""


@dataclass(frozen=True)
class Data:
    """The campaign's database file and the TPC-H query texts (DuckDB's, by number)."""

    db: str
    queries: tuple[str, ...]


def make_data(folder: Path, sf: float = 0.01) -> Data:
    """A TPC-H DuckDB file at `sf` and DuckDB's query texts, made in a child process
    (this one must not start engine threads: its workers fork)."""
    folder.mkdir(parents=True, exist_ok=True)
    db, queries = folder / "tpch.duckdb", folder / "queries.json"
    if not db.exists() or not queries.exists():
        subprocess.run(
            [sys.executable, "-c", _MAKE_DATA, str(db), str(queries), str(sf)],
            check=True,
            timeout=300,
        )
    return Data(str(db), tuple(json.loads(queries.read_text())))


# --- SQL inputs -------------------------------------------------------------------------

HAND = (
    "SELECT 1",
    "SELECT count(*) FROM lineitem",
    "VALUES (1, 'a'), (2, 'b')",
    "FROM nation",
    "TABLE region",
    "(SELECT n_name FROM nation ORDER BY n_name LIMIT 3)",
    "WITH t AS (SELECT * FROM orders WHERE o_totalprice > 1000) "
    "SELECT o_orderstatus, count(*) AS n FROM t GROUP BY o_orderstatus ORDER BY 1",
    "SELECT r_name, count(*) AS n FROM region JOIN nation ON n_regionkey = r_regionkey "
    "GROUP BY r_name ORDER BY r_name",
    "SELECT a.n_name, b.n_name FROM nation a, nation b WHERE a.n_nationkey < b.n_nationkey "
    "AND a.n_regionkey = b.n_regionkey",
    "SELECT o_custkey, sum(o_totalprice) OVER (PARTITION BY o_custkey ORDER BY o_orderdate) "
    "AS running FROM orders ORDER BY o_custkey, running LIMIT 100",
    "SELECT n_name AS x FROM nation UNION ALL SELECT r_name FROM region",
    "SELECT l_orderkey, l_linenumber FROM lineitem WHERE l_orderkey IN "
    "(SELECT o_orderkey FROM orders WHERE o_orderpriority = '1-URGENT') LIMIT 50",
    "SELECT c_mktsegment, avg(c_acctbal) AS a, min(c_name) AS m FROM customer "
    "WHERE c_acctbal BETWEEN -100 AND 5000 GROUP BY ALL HAVING count(*) > 1",
    "SELECT p_type, CASE WHEN p_size > 25 THEN 'big' ELSE 'small' END AS s, "
    "count(DISTINCT p_brand) AS brands FROM part GROUP BY 1, 2 ORDER BY 1, 2 LIMIT 20",
    "SELECT s_name, s_acctbal FROM supplier WHERE NOT EXISTS (SELECT 1 FROM partsupp "
    "WHERE ps_suppkey = s_suppkey AND ps_availqty < 10) ORDER BY s_acctbal DESC LIMIT 5",
    # values of every kind the engines hand each other (and compare)
    'SELECT NULL AS a, 1 AS a, \'x\' AS "a b", 2 AS "ü", 3 AS """"',
    "SELECT CAST('NaN' AS DOUBLE) AS n, CAST('Infinity' AS DOUBLE) AS i, -0.0 AS z, "
    "1e308 * 10 AS big, 9223372036854775807 AS m",
    "SELECT x FROM (VALUES (NULL), (1), (NULL)) AS t(x) ORDER BY x NULLS FIRST",
    "SELECT [1, 2, NULL] AS l, {'a': 1, 'b': 'x'} AS s",
    "SELECT CAST(o_totalprice AS DECIMAL(38, 10)) * 1000000000000 AS d FROM orders LIMIT 10",
    "SELECT DATE '1970-01-01' - INTERVAL 1000000 DAY AS d, "
    "CAST('2020-01-01 00:00:00+05' AS TIMESTAMPTZ) AS t",
    "SELECT random() AS r, o_orderkey FROM orders ORDER BY o_orderkey LIMIT 5",
    "SELECT 1 / 0 AS a, 7 / 2 AS b, -7 % 3 AS c",
    "SELECT 9223372036854775807 + 1 AS overflow",
    "SELECT n_name FROM nation WHERE false",
    "SELECT n_name, repeat(n_comment, 1000) AS wide FROM nation",
    "SELECT l_returnflag, count(*) AS n FROM lineitem GROUP BY ROLLUP (l_returnflag)",
    "SELECT o_orderkey FROM orders WHERE o_custkey NOT IN (SELECT c_custkey FROM customer "
    "WHERE c_acctbal > 9000)",
    "SELECT CAST(c_phone AS BLOB) AS b, length(c_name) AS n FROM customer LIMIT 20",
    "SELECT o_orderdate - 1000 AS d, o_orderdate + INTERVAL 1 DAY AS t FROM orders LIMIT 10",
)

KEYWORDS = frozenset(
    """select from where group by order having limit offset join inner left right full
    outer cross on using and or not in is null as asc desc distinct all union except
    intersect case when then else end exists between like ilike with recursive values
    interval date cast extract year month day substring count sum avg min max true
    false table lateral natural over partition rows range preceding following current
    row window filter qualify any some into""".split()
)

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<comment>--[^\n]*|/\*.*?\*/)
    |(?P<str>'(?:[^']|'')*')
    |(?P<qid>"(?:[^"]|"")*")
    |(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)
    |(?P<word>[A-Za-z_][A-Za-z_0-9$]*)
    |(?P<op><>|<=|>=|!=|\|\||::|->>|->|.)""",
    re.X | re.S,
)


def tokens(text: str) -> list[tuple[str, str]]:
    """`text` as (kind, text) tokens that join back to it."""
    return [(m.lastgroup or "op", m.group()) for m in _TOKEN.finditer(text)]


def _join(toks: list[tuple[str, str]]) -> str:
    return "".join(t for _, t in toks)


def _solid(toks: list[tuple[str, str]]) -> list[int]:
    """Indexes of the tokens that are not blanks or comments."""
    return [i for i, (k, _) in enumerate(toks) if k not in ("ws", "comment")]


INSERTS = (
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "UNION",
    "JOIN",
    "ON",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "CASE",
    "WHEN",
    "END",
    "AS",
    "DISTINCT",
    "HAVING",
    "EXISTS",
    "IN",
    "BETWEEN",
    "LATERAL",
    "RECURSIVE",
    "QUALIFY",
    "PIVOT",
    "OVER",
    "*",
    "+",
    "-",
    "/",
    "%",
    "||",
    "=",
    "<>",
    "<",
    ">=",
    "::",
    "->",
    "(",
    ")",
    "((",
    "))",
    ",",
    ";",
    ".",
    "'",
    '"',
    "--",
    "/*",
    "*/",
    "?",
    "$1",
    ":x",
    "[",
    "]",
    "{",
    "}",
    "\\",
    "\x00",
)
IDENTIFIERS = (
    "no_such_column",
    "no_such_table",
    '"l_orderkey"',
    '"L_ORDERKEY"',
    '"lineitem"',
    '"a""b"',
    '""',
    '"select"',
    '"ïdentifïer"',
    "ключ",
    '"表"',
    '"🦆"',
    "x" * 300,
    '"' + "y" * 5000 + '"',
    '"with space"',
    '"new\nline"',
    "_",
    "select",
    "rowid",
    "__plc1_n0",
)
NUMBERS = (
    "0",
    "-1",
    "9" * 40,
    "1" + "0" * 400,
    "18446744073709551616",
    "-9223372036854775808",
    "9223372036854775807",
    "1e400",
    "1e-400",
    "1e308",
    "-0.0",
    "0.000000000000000000000000000001",
    "CAST('NaN' AS DOUBLE)",
    "'NaN'::DOUBLE",
    "CAST('Infinity' AS DOUBLE)",
    "'-inf'::DOUBLE",
    "(1/0)",
    "(0.0/0.0)",
    "NULL",
    "99999999999999999999999999999999999999.99",
)
STRINGS = (
    "''",
    "'\\'",
    "'\\\\'",
    "'a\\'b'",
    "'It''s'",
    "'é'",
    "'日本'",
    "'🦆'",
    "'\u202e'",
    "'\ufeff'",
    "'\x00'",
    "'" + "z" * 10000 + "'",
    "'%'",
    "'_%_'",
    "E'\\n'",
    "'1995-02-30'",
    "DATE '0000-01-01'",
    "DATE '294247-01-10'",
    "INTERVAL '999999999' YEAR",
    "'1e400'",
    "'infinity'",
    "'-infinity'",
    "'0001-01-01'",
    "'9999-12-31 23:59:59'",
    "'10000-01-01'",
)
STATEMENTS = (
    "CREATE TABLE x AS SELECT 1",
    "INSERT INTO nation VALUES (99, 'X', 0, 'y')",
    "DELETE FROM lineitem",
    "UPDATE nation SET n_name = 'x'",
    "DROP TABLE lineitem",
    "PRAGMA database_list",
    "PRAGMA enable_profiling='json'",
    "ATTACH 'other.db' AS o",
    "DETACH o",
    "COPY lineitem TO 'out.csv'",
    "EXPORT DATABASE 'dump'",
    "IMPORT DATABASE 'dump'",
    "SET threads = 1",
    "CALL dbgen(sf = 1)",
    "INSTALL httpfs",
    "LOAD tpch",
    "DESCRIBE lineitem",
    "SHOW TABLES",
    "EXPLAIN SELECT 1",
    "EXPLAIN ANALYZE SELECT 1",
    "SUMMARIZE lineitem",
    "CHECKPOINT",
    "BEGIN",
    "USE memory",
    "VACUUM",
    "ANALYZE",
    "CREATE MACRO m(a) AS a + 1",
    "PREPARE p AS SELECT 1",
    "WITH t AS (SELECT 1) INSERT INTO nation SELECT * FROM nation",
    "WITH t AS (DELETE FROM nation RETURNING *) SELECT * FROM t",
    "(DELETE FROM lineitem)",
    "SELECT * INTO new_table FROM nation",
    "SELECT * FROM 'no_such_file.parquet'",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM range(10)",
    "SELECT * FROM generate_series(1, 1000000)",
    "SELECT current_setting('threads')",
    "SELECT * FROM tpch_queries()",
    "FROM nation SELECT n_name",
    "SELECT 1;;",
    "SELECT 1; -- and a comment",
    "SELECT 1 /* ; */ ;",
    "SELECT ';' AS semi",
    "SELECT 1 $$ ; $$",
)
RAW = (
    b"",
    b" \n\t\r\n",
    b"-- only a comment",
    b"-- one\n/* two */\n-- three\n",
    b"/* never closed SELECT 1",
    b"'never closed",
    b'"never closed',
    b";",
    b";;;",
    b"\x00",
    b"SELECT 1\x00",
    b"SELECT '\xff\xfe' AS x",
    b"\xff\xfe\xfd",
    b"\xef\xbb\xbfSELECT 1",
    b"\xef\xbb\xbf\xef\xbb\xbfSELECT 1",
    "SELECT 1".encode("utf-16"),
    b"SELECT\r1\rFROM\rnation",
    b"SELECT 1 \xc3",
    b"SELECT '\xed\xa0\x80'",
    b"\x1b[31mSELECT 1",
    b"SELECT " + b"1 + " * 20000 + b"1",
    b"SELECT " + b", ".join(b"%d AS c%d" % (i, i) for i in range(3000)),
)


def _truncate(text: str, r: random.Random) -> str:
    return text[: r.randint(1, max(1, len(text) - 1))]


def _tokens(text: str, r: random.Random) -> str:
    toks = tokens(text)
    for _ in range(r.randint(1, 4)):
        solid = _solid(toks)
        if len(solid) < 2:
            break
        i = r.choice(solid)
        how = r.random()
        if how < 0.4:
            del toks[i]
        elif how < 0.7:
            toks.insert(i, toks[i])
            toks.insert(i + 1, ("ws", " "))
        else:
            j = r.choice(solid)
            toks[i], toks[j] = toks[j], toks[i]
    return _join(toks)


def _insert(text: str, r: random.Random) -> str:
    toks = tokens(text)
    for _ in range(r.randint(1, 4)):
        i = r.randint(0, len(toks))
        toks[i:i] = [("ws", " "), ("op", r.choice(INSERTS)), ("ws", " ")]
    return _join(toks)


def _identifiers(text: str, r: random.Random) -> str:
    toks = tokens(text)
    spots = [i for i, (k, t) in enumerate(toks) if k == "word" and t.lower() not in KEYWORDS]
    spots += [i for i, (k, _) in enumerate(toks) if k == "qid"]
    if not spots:
        return text + " " + r.choice(IDENTIFIERS)
    for i in r.sample(spots, min(len(spots), r.randint(1, 3))):
        toks[i] = ("qid", r.choice(IDENTIFIERS))
    return _join(toks)


def _literals(text: str, r: random.Random) -> str:
    toks = tokens(text)
    spots = [i for i, (k, _) in enumerate(toks) if k in ("num", "str")]
    if not spots:
        return f"SELECT * FROM ({text.rstrip().rstrip(';')}) AS q LIMIT {r.choice(NUMBERS)}"
    for i in r.sample(spots, min(len(spots), r.randint(1, 3))):
        pool = NUMBERS if r.random() < 0.5 else STRINGS
        toks[i] = ("num", r.choice(pool))
    return _join(toks)


def _body(text: str) -> str:
    return text.strip().rstrip(";").strip()


def _nesting(text: str, r: random.Random) -> str:
    how = r.randrange(9)
    depth = r.choice((10, 50, 200, 1000))
    if how == 0:  # the query nested in derived tables
        q = _body(text)
        for i in range(depth):
            q = f"SELECT * FROM ({q}) AS t{i}"
        return q
    if how == 1:  # a literal in parentheses
        toks = tokens(text)
        spots = [i for i, (k, _) in enumerate(toks) if k == "num"]
        d = r.choice((50, 200, 1000, 10000))
        if not spots:
            return "SELECT " + "(" * d + "1" + ")" * d + " AS x"
        i = r.choice(spots)
        toks[i] = ("num", "(" * d + toks[i][1] + ")" * d)
        return _join(toks)
    if how == 2:  # nested calls
        return f"SELECT {'abs(' * depth}1{')' * depth} AS x"
    if how == 3:  # a long UNION ALL
        n = r.choice((100, 500, 3000))
        return " UNION ALL ".join(f"SELECT {i} AS x" for i in range(n))
    if how == 4:  # a chain of common table expressions
        n = r.choice((20, 100, 500))
        ctes = ["t0 AS (SELECT n_nationkey AS x FROM nation)"]
        ctes += [f"t{i} AS (SELECT x FROM t{i - 1} WHERE x >= 0)" for i in range(1, n)]
        return f"WITH {', '.join(ctes)} SELECT count(*) AS n FROM t{n - 1}"
    if how == 5:  # nested CASE
        e = "1"
        for i in range(depth):
            e = f"CASE WHEN n_nationkey > {i} THEN ({e}) ELSE {i} END"
        return f"SELECT {e} AS x FROM nation"
    if how == 6:  # a long OR chain (a left-deep expression tree)
        n = r.choice((100, 1000, 10000))
        ors = " OR ".join(f"l_orderkey = {k}" for k in range(n))
        return f"SELECT count(*) AS n FROM lineitem WHERE {ors}"
    if how == 7:  # nested IN subqueries
        q = "SELECT n_nationkey FROM nation"
        for _ in range(min(depth, 200)):
            q = f"SELECT n_nationkey FROM nation WHERE n_nationkey IN ({q})"
        return q
    n = r.choice((10, 30, 60))  # many joins: a deep plan
    joins = " ".join(
        f"JOIN nation t{i} ON t{i}.n_nationkey = t{i - 1}.n_nationkey" for i in range(1, n)
    )
    return f"SELECT count(*) AS n FROM nation t0 {joins}"


def _statements(text: str, r: random.Random) -> str:
    how = r.random()
    body = _body(text)
    if how < 0.25:
        return body + r.choice(
            ("; DROP TABLE lineitem", ";DROP TABLE lineitem;", "; SELECT 1", ";\n;\nSELECT 2")
        )
    if how < 0.35:
        return r.choice(("CREATE TABLE x AS ", "EXPLAIN ", "INSERT INTO nation ", "COPY (")) + body
    return r.choice(STATEMENTS)


_TEXT_MUTATORS = (_truncate, _tokens, _insert, _identifiers, _literals, _nesting, _statements)
_SQL_BY_KIND = {
    "truncate": _truncate,
    "tokens": _tokens,
    "insert": _insert,
    "identifiers": _identifiers,
    "literals": _literals,
    "nesting": _nesting,
    "statements": _statements,
}


def sql_input(kind: str, index: int, seed: int, queries: tuple[str, ...]) -> tuple[bytes, str]:
    """The SQL input (kind, index) of the campaign `seed`: (bytes, where it came from)."""
    r = random.Random(f"{seed}:sql:{kind}:{index}")
    pool = [(f"tpch-q{i + 1}", q) for i, q in enumerate(queries)]
    pool += [(f"hand-{i}", q) for i, q in enumerate(HAND)]
    name, text = r.choice(pool)
    if kind in ("query", "hand"):  # each text as it is, in turn
        some = pool[: len(queries)] if kind == "query" else pool[len(queries) :]
        name, text = some[(index // len(SQL_KINDS) + seed) % len(some)]
        return text.encode(), name
    if kind == "bytes":
        raw = r.choice(RAW)
        if r.random() < 0.3:  # a real query with the raw bytes in it
            at = r.randint(0, len(text))
            raw = text[:at].encode() + raw + text[at:].encode()
        return raw, name
    if kind == "mixed":
        for _ in range(r.randint(2, 3)):
            text = r.choice(_TEXT_MUTATORS)(text, r)
    else:
        text = _SQL_BY_KIND[kind](text, r)
    return text.encode("utf-8", "surrogatepass"), name


# --- engine JSON inputs ----------------------------------------------------------------


class Raw(str):
    """JSON text written as it is (NaN, a number of 400 digits, a deep tail)."""


class Dup(list):  # type: ignore[type-arg]
    """A JSON object as (key, value) pairs: a key may come twice."""


def dump(obj: Any) -> str:
    """JSON text of `obj`, with `Raw` and `Dup` written as they are (no recursion: the
    documents may be deep)."""
    out: list[str] = []
    stack: list[Any] = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, Raw):
            out.append(str(x))
        elif isinstance(x, Dup) or isinstance(x, dict):
            items = list(x) if isinstance(x, Dup) else list(x.items())
            parts: list[Any] = [Raw("{")]
            for n, (k, v) in enumerate(items):
                if n:
                    parts.append(Raw(", "))
                parts += [Raw(json.dumps(k, ensure_ascii=False) + ": "), v]
            parts.append(Raw("}"))
            stack.extend(reversed(parts))
        elif isinstance(x, list):
            parts = [Raw("[")]
            for n, v in enumerate(x):
                if n:
                    parts.append(Raw(", "))
                parts.append(v)
            parts.append(Raw("]"))
            stack.extend(reversed(parts))
        else:
            out.append(json.dumps(x, ensure_ascii=False))
    return "".join(out)


def parse(text: str | bytes) -> Any:
    """`dump`'s inverse: duplicate keys, NaN and long numbers kept as written."""
    return json.loads(
        text,
        object_pairs_hook=lambda pairs: (
            Dup(pairs) if len({k for k, _ in pairs}) < len(pairs) else dict(pairs)
        ),
        parse_constant=Raw,
        parse_float=lambda s: Raw(s) if not math.isfinite(float(s)) or len(s) > 24 else float(s),
        parse_int=lambda s: Raw(s) if len(s) > 18 else int(s),
    )


# The keys the readers look at (frontends/engine_plans/), picked more often.
READ_KEYS = frozenset(
    (
        "Plan",
        "Plans",
        "Node Type",
        "Actual Total Time",
        "Actual Loops",
        "Actual Rows",
        "Total Cost",
        "Plan Rows",
        "Plan Width",
        "Parent Relationship",
        "Subplan Name",
        "Relation Name",
        "CTE Name",
        "children",
        "operator_timing",
        "operator_cardinality",
        "operator_type",
        "operator_name",
        "result_set_size",
        "format",
        "version",
        "plan",
        "name",
        "metrics",
        "elapsed_compute",
        "output_rows",
        "output_bytes",
        "fetch_time",
        "time_elapsed_processing",
        "time_elapsed_scanning_total",
    )
)
WRONG: tuple[Any, ...] = (
    None,
    True,
    False,
    "12",
    "",
    "Hash Join",
    [],
    {},
    [1],
    [{}],
    {"a": 1},
    0,
    -1,
    1.5,
    "NaN",
    "EXPLAIN_ANALYZE",
    "CTE",
    "InitPlan",
    "Gather",
    "datafusion-metrics",
)
NONFINITE = (
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    -0.0,
    -1,
    -1e-300,
    Raw("1e-400"),
)
HUGE = (
    Raw("18446744073709551616"),
    Raw("9" * 400),
    Raw("-" + "9" * 30),
    1.7976931348623157e308,
    1e308,
    2**63,
    2**64 - 1,
    5e-324,
    Raw("1" + "0" * 5000),
    1e200,
)


def _members(doc: Any) -> list[tuple[Any, Any, Any]]:
    """Every (container, key or index, value) of `doc`, without recursion."""
    out = []
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            items = list(x.items())
        elif isinstance(x, Dup):
            items = [(i, v) for i, (_, v) in enumerate(x)]
        elif isinstance(x, list):
            items = list(enumerate(x))
        else:
            continue
        for k, v in items:
            out.append((x, k, v))
            stack.append(v)
    return out


def _set(container: Any, key: Any, value: Any) -> None:
    if isinstance(container, Dup):
        container[key] = (container[key][0], value)
    else:
        container[key] = value


def _pick(doc: Any, r: random.Random, want: Any = None) -> tuple[Any, Any, Any] | None:
    """A member of `doc` (`want(member)` true, when given), the readers' keys likelier."""
    found = [m for m in _members(doc) if want is None or want(m)]
    if not found:
        return None
    read = [m for m in found if isinstance(m[0], dict) and m[1] in READ_KEYS]
    return r.choice(read if read and r.random() < 0.7 else found)


def _is_number(m: tuple[Any, Any, Any]) -> bool:
    v = m[2]
    return isinstance(v, int | float) and not isinstance(v, bool)


def _drop_key(doc: Any, r: random.Random) -> Any:
    for _ in range(r.choice((1, 1, 2))):
        m = _pick(doc, r, lambda m: isinstance(m[0], dict))
        if m is not None:
            del m[0][m[1]]
    return doc


def _dup_key(doc: Any, r: random.Random) -> Any:
    m = _pick(doc, r, lambda m: isinstance(m[0], dict))
    if m is None:
        return doc
    parent, key, value = m
    other = r.choice((value, r.choice(WRONG), r.choice(NONFINITE + HUGE)))
    pairs = list(parent.items())
    at = r.randint(0, len(pairs))
    pairs.insert(at, (key, other))
    dup = Dup(pairs)
    # the dict itself is replaced wherever it is (its members are found by identity)
    if parent is doc:
        return dup
    for c, k, v in _members(doc):
        if v is parent:
            _set(c, k, dup)
            break
    return doc


def _wrong_type(doc: Any, r: random.Random) -> Any:
    for _ in range(r.choice((1, 1, 2))):
        m = _pick(doc, r)
        if m is not None:
            _set(m[0], m[1], copy.deepcopy(r.choice(WRONG)))
    return doc


def _nonfinite(doc: Any, r: random.Random) -> Any:
    for _ in range(r.randint(1, 3)):
        m = _pick(doc, r, _is_number)
        if m is not None:
            _set(m[0], m[1], r.choice(NONFINITE))
    return doc


def _huge(doc: Any, r: random.Random) -> Any:
    spots = [m for m in _members(doc) if _is_number(m)]
    n = len(spots) if r.random() < 0.2 else r.randint(1, 3)  # sometimes every number
    for m in r.sample(spots, min(n, len(spots))):
        _set(m[0], m[1], r.choice(HUGE))
    return doc


def _node_chain(fmt: str, depth: int) -> Raw:
    """A chain of `depth` operators, each the only child of the one above, in `fmt`."""
    if fmt == "postgres-explain":
        head = (
            '{"Node Type": "Result", "Actual Total Time": 1.0, "Actual Loops": 1, '
            '"Actual Rows": 1, "Total Cost": 1.0, "Plan Rows": 1, "Plan Width": 8, "Plans": ['
        )
        leaf = head[: -len(', "Plans": [')] + "}"
    elif fmt == "duckdb-profile":
        head = (
            '{"operator_type": "PROJECTION", "operator_timing": 0.001, '
            '"operator_cardinality": 1, "children": ['
        )
        leaf = head[: -len(', "children": [')] + "}"
    else:
        head = '{"name": "ProjectionExec", "metrics": {"elapsed_compute": 1000}, "children": ['
        leaf = head[: -len(', "children": [')] + "}"
    return Raw(head * depth + leaf + "]}" * depth)


def _children_key(fmt: str) -> str:
    return "Plans" if fmt == "postgres-explain" else "children"


def _deep(doc: Any, r: random.Random, fmt: str) -> Any:
    how = r.randrange(5)
    depth = r.choice((100, 500, 1000, 1100, 5000, 100000))
    kids = [m for m in _members(doc) if m[1] == _children_key(fmt) and isinstance(m[2], list)]
    if how == 0 and kids:  # a chain of operators under one node
        c, k, v = r.choice(kids)
        _set(c, k, [*v, _node_chain(fmt, depth)])
        return doc
    if how == 1:  # the whole document in arrays
        return Raw("[" * depth + dump(doc) + "]" * depth)
    if how == 2:  # deep nesting in a member no reader looks at
        m = _pick(doc, r, lambda m: isinstance(m[0], dict))
        if m is not None:
            _set(m[0], m[1], Raw('{"a": ' * depth + "1" + "}" * depth))
        return doc
    if how == 3 and kids:  # a wide node
        c, k, v = r.choice(kids)
        n = r.choice((1000, 20000, 200000))
        leaf = v[-1] if v else {}
        _set(c, k, Raw("[" + ", ".join([dump(leaf)] * n) + "]"))
        return doc
    if fmt == "duckdb-profile":  # EXPLAIN ANALYZE wrappers, one in another
        head = '{"operator_type": "EXPLAIN_ANALYZE", "operator_timing": 0.001, "children": ['
        return Raw(head * min(depth, 1000) + dump(doc) + "]}" * min(depth, 1000))
    return Raw("[" * depth + "]" * depth)


ODD_STRINGS = (
    "",
    " ",
    "\t\n",
    "\x00",
    "\u202e\u2028",
    "\x1b[31m",
    "é" * 3,
    "🦆",
    "x" * 100000,
    "EXPLAIN_ANALYZE",
    "CTE",
    "Gather",
    "InitPlan",
    "CTE x",
    "InitPlan 1 (returns $0,$1)",
    "$0",
    "(InitPlan 1).col1",
    "n0",
    "a: b",
    "\\",
)


def _strings(doc: Any, r: random.Random) -> Any:
    """String values made odd: empty, blank, control characters, long, or the words
    the readers look for (a wrapper, a CTE, an init-plan and its `$0`)."""
    for _ in range(r.randint(1, 4)):
        m = _pick(doc, r, lambda m: isinstance(m[2], str))
        if m is not None:
            _set(m[0], m[1], r.choice(ODD_STRINGS))
    return doc


_DOC_MUTATORS = {
    "strings": _strings,
    "drop-key": _drop_key,
    "dup-key": _dup_key,
    "wrong-type": _wrong_type,
    "nonfinite": _nonfinite,
    "huge": _huge,
}
JSON_RAW = (
    b"",
    b"   ",
    b"null",
    b"1",
    b'"x"',
    b"[]",
    b"{}",
    b"[{}]",
    b"[[]]",
    b'[{"Plan": null}]',
    b'{"children": []}',
    b'{"format": "datafusion-metrics", "version": 1}',
    b'{"format": "datafusion-metrics", "version": 1, "plan": {}}',
    b"\xef\xbb\xbf{}",
    b"\xff\xfe{\x00}\x00",
    b'{"a": "\xff"}',
    b"{\x00}",
    b"{} {}",
    b"[1] garbage",
    b"garbage [1]",
    b"%YAML 1.2\n---\n[]",
    b"- a\n- b\n",
    b"a: &a [*a]\n",
    b"!!python/object:os.system {}\n",
)


def json_input(kind: str, index: int, seed: int) -> tuple[list[tuple[str, bytes]], str, str]:
    """The engine-JSON input (kind, index) of the campaign `seed`: the files ((name,
    bytes) of each, in order), the FORMAT argument, and the sample it came from."""
    r = random.Random(f"{seed}:json:{kind}:{index}")
    name = r.choice(sorted(SAMPLES))
    fmt = SAMPLES[name]
    raw = (PLANS / name).read_bytes()
    doc = json.loads(raw)
    if kind == "sample":
        return [("in.json", raw)], fmt, name
    if kind == "bytes":
        data = r.choice(JSON_RAW)
        return [("in.yaml" if data[:1] not in b"{[" else "in.json", data)], fmt, name
    if kind == "truncate":
        text = raw if r.random() < 0.5 else dump(doc).encode()
        return [("in.json", text[: r.randint(0, len(text) - 1)])], fmt, name
    if kind == "mismatch":
        other = r.choice([f for f in FORMATS if f != fmt])
        if r.random() < 0.5:
            doc = r.choice(list(_DOC_MUTATORS.values()))(doc, r)
        return [("in.json", dump(doc).encode())], other, name
    if kind == "multi":
        second = r.choice(sorted(SAMPLES))
        doc2 = json.loads((PLANS / second).read_bytes())
        if r.random() < 0.5:
            doc2 = r.choice(list(_DOC_MUTATORS.values()))(doc2, r)
        files = [("a.json", f"{fmt}:a.json"), ("b.json", f"{SAMPLES[second]}:b.json")]
        return (
            [(files[0][1], raw), (files[1][1], dump(doc2).encode())],
            fmt,
            f"{name}+{second}",
        )
    if kind == "yaml":
        import yaml

        if r.random() < 0.6:
            doc = r.choice(list(_DOC_MUTATORS.values()))(doc, r)
            doc = parse(dump(doc))  # Raw and Dup as YAML cannot say them: as JSON read them
            if isinstance(doc, Dup):
                doc = dict(doc)
        try:
            ytext: str = yaml.safe_dump(_plain(doc), sort_keys=False, allow_unicode=True)
        except Exception:  # noqa: BLE001 - a value YAML cannot write: the sample's YAML
            ytext = yaml.safe_dump(json.loads(raw), sort_keys=False)
        twist = r.random()
        if twist < 0.15:  # an alias bomb in a member no reader looks at
            bomb = 'x0: &a0 ["lol", "lol"]\n' + "".join(
                f"x{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 9)}]\n" for i in range(1, 9)
            )
            ytext = bomb + ytext if isinstance(doc, dict) else ytext
        elif twist < 0.3:
            ytext = ytext.replace(": 1\n", ": 0x1\n", 1).replace("true", "yes", 1)
        elif twist < 0.4:
            ytext = "%TAG ! tag:yaml.org,2002:\n---\n" + ytext
        elif twist < 0.5:
            ytext = "--- !!python/object/apply:os.getcwd []\n" + ytext
        return [("in.yaml", ytext.encode())], fmt, name
    if kind == "deep":
        doc = _deep(doc, r, fmt)
    elif kind == "mixed":
        for _ in range(r.randint(2, 3)):
            doc = r.choice(list(_DOC_MUTATORS.values()))(doc, r)
    else:
        doc = _DOC_MUTATORS[kind](doc, r)
    return [("in.json", dump(doc).encode("utf-8", "surrogatepass"))], fmt, name


def _plain(doc: Any) -> Any:
    """`doc` with `Raw` numbers as floats (YAML writes them as it can) and `Dup` as dicts."""
    if isinstance(doc, Raw):
        try:
            return float(doc)
        except ValueError:
            return str(doc)
    if isinstance(doc, Dup):
        return {k: _plain(v) for k, v in doc}
    if isinstance(doc, dict):
        return {k: _plain(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_plain(v) for v in doc]
    return doc


# --- judging ----------------------------------------------------------------------------


@dataclass
class ImportOutcome(Outcome):
    """An outcome with the notes of the run too (documented exits 2 and 6, a panic
    message) and the files besides the first (`multi`)."""

    notes: list[tuple[str, str]] = field(default_factory=list)
    files: tuple[tuple[str, bytes], ...] = ()


def judge_import(
    code: int,
    stdout: bytes,
    stderr: bytes,
    hung: bool,
    sources: list[str],
    out: Path,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(findings, notes) of one `placement import` run: the campaign's rules (`judge`),
    with these of `import`: its exits are 0 and 3 (2 and 6 are notes); every line of an
    exit-3 message names one of the input files; after exit 0 the tree file is there
    and `placement tree` reads it."""
    found = judge("validate", code, stdout, stderr, hung, sources[0], out, None, "json")
    keep: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    for cat, sig in found:
        if cat == "bad-error-line":
            continue  # the check below knows every input's name
        if cat in {f"exit-{c}" for c in NOTE_CODES}:
            notes.append((cat, sig))
        else:
            keep.append((cat, sig))
    err = stderr.decode("utf-8", "replace")
    if code in (4, 5):  # `validate`'s exits, not `import`'s
        keep.append(
            (f"exit-{code}", signature(err.strip().splitlines()[-1] if err.strip() else ""))
        )
    if code == 3 and not hung:
        prefixes = tuple(s + ": " for s in sources)
        bad = [ln for ln in err.split("\n")[:-1] if not ln.startswith(prefixes)]
        if bad or not err.endswith("\n"):
            keep.append(("bad-error-line", signature(bad[0] if bad else err[-80:])))
    if code == 0 and not hung:
        keep += _check_tree(out)
    m = re.search(r"panicked at [^\n]*\n?([^\n]*)", err)
    if m:
        notes.append(("panic", signature(m.group(0).replace("\n", " "))))
    return keep, notes


def _check_tree(out: Path) -> list[tuple[str, str]]:
    """The tree file a successful run wrote must be one `placement tree` reads."""
    if not out.exists():
        return [("missing-output", "exit 0 without the tree file")]
    from placement_cli.core.errors import PlacementError
    from placement_cli.ir.tree.read import load_tree

    try:
        load_tree(str(out))
    except PlacementError as exc:
        return [("invalid-output", signature(str(exc).split("\n")[0]))]
    except Exception as exc:  # noqa: BLE001 - any failure to read our own output is a finding
        return [("unreadable-output", f"tree file: {type(exc).__name__}")]
    return []


# --- running ----------------------------------------------------------------------------

PRELOAD = (
    "placement_cli.app.import_command",
    "placement_cli.app.engine_commands",
    "placement_cli.app.engine_values",
    "placement_cli.formats.tree",
    "placement_cli.frontends.engine_plans.model",
    "placement_cli.frontends.engine_plans.postgres",
    "placement_cli.frontends.engine_plans.duckdb",
    "placement_cli.frontends.engine_plans.datafusion",
    "placement_cli.frontends.engine_plans.tree_file",
    "placement_cli.engines.query_text",
    "placement_cli.ir.tree.read",
)


class ImportFuzzer:
    """Runs the campaign's inputs: `run("sql" | "json", index)`."""

    def __init__(self, cfg: Config, seed: int, data: Data | None, workdir: Path) -> None:
        if not cfg.spawn:
            import importlib

            preload()
            for name in PRELOAD:  # never an engine package: their threads do not fork
                try:
                    importlib.import_module(name)
                except ImportError:  # a module being edited: the child will say so itself
                    pass
        self.cfg = cfg
        self.seed = seed
        self.data = data
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)

    def input(self, target: str, index: int) -> tuple[str, list[tuple[str, bytes]], str, str]:
        """(kind, files, FORMAT, origin) of input `index` of `target`."""
        if target == "sql":
            kind = SQL_KINDS[index % len(SQL_KINDS)]
            assert self.data is not None, "the SQL inputs need the data (make_data)"
            data, origin = sql_input(kind, index, self.seed, self.data.queries)
            return kind, [("q.sql", data)], "sql", origin
        kind = JSON_KINDS[index % len(JSON_KINDS)]
        files, fmt, origin = json_input(kind, index, self.seed)
        return kind, files, fmt, origin

    def args(self, target: str, index: int, fmt: str, names: list[str]) -> tuple[list[str], bool]:
        """The command line of input `index` (its files `names`), and whether the first
        file goes on stdin."""
        r = random.Random(f"{self.seed}:import-args:{target}:{index}")
        stdin = len(names) == 1 and r.random() < 0.1
        files = ["-"] if stdin else names
        args = ["import", fmt, *files]
        if target == "sql":
            assert self.data is not None
            args += ["--probe", "--db", self.data.db, "--engines", r.choice(ENGINE_SETS)]
            args += ["--repeat", "1", "--warmup", "0"]
            if r.random() < 0.2:
                args += ["--threads", "1"]
        elif len(names) > 1 and r.random() < 0.7:
            args += ["--engine", "a", "--engine", "b"]
        if r.random() < 0.1:
            args += ["--budget", r.choice(("0", "2"))]
        args += ["-o", "out/tree.json"]
        return args, stdin

    def run(self, target: str, index: int) -> ImportOutcome:
        kind, files, fmt, origin = self.input(target, index)
        names = [n for n, _ in files]
        args, stdin = self.args(target, index, fmt, names)
        return self.run_files(target, kind, index, files, args, stdin, origin)

    def run_files(
        self,
        target: str,
        kind: str,
        index: int,
        files: list[tuple[str, bytes]],
        args: list[str],
        stdin: bool,
        origin: str = "",
    ) -> ImportOutcome:
        """Run `args` with `files` written in a folder of its own (the first on stdin
        when `stdin`), judged."""
        job = Path(tempfile.mkdtemp(dir=self.workdir, prefix=f"{target}-"))
        try:
            paths = []
            for name, data in files:
                path = job / name.split(":", 1)[-1]
                path.write_bytes(data)
                paths.append(path)
            (job / "out").mkdir()  # -o makes no folder
            code, stdout, stderr, seconds, hung = run_child(
                self.cfg, args, str(paths[0]) if stdin else os.devnull, job
            )
            sources = ["<stdin>"] if stdin else [n.split(":", 1)[-1] for n, _ in files]
            found, notes = judge_import(
                code, stdout, stderr, hung, sources, job / "out" / "tree.json"
            )
            o = ImportOutcome(
                f"import {args[1]}",
                kind,
                index,
                code,
                seconds,
                found,
                files[0][1] if found else b"",
                Path(paths[0]).suffix,
                (*args, f"# from {origin}") if origin else tuple(args),
                stderr.decode("utf-8", "replace")[-2000:],  # a few hundred runs: kept
                notes,
                tuple(files) if found else (),
            )
            return o
        finally:
            shutil.rmtree(job, ignore_errors=True)


# --- reducing a finding -----------------------------------------------------------------


def _same(o: ImportOutcome, want: tuple[str, str]) -> bool:
    return want in o.findings


def _ddmin(items: list[Any], test: Any, budget: list[int]) -> list[Any]:
    """Zeller's delta debugging over `items`: a smaller list for which `test` holds."""
    n = 2
    while len(items) >= 2 and budget[0] > 0:
        size = max(1, len(items) // n)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        reduced = False
        for i in range(len(chunks)):
            rest = [x for j, c in enumerate(chunks) if j != i for x in c]
            if budget[0] <= 0:
                break
            if rest and test(rest):
                items, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if size == 1:
                break
            n = min(len(items), n * 2)
    return items


def reduce(
    fz: ImportFuzzer, o: ImportOutcome, runs: int = 120, seconds: float = 120.0
) -> tuple[bytes, ImportOutcome]:
    """The smallest first file found (by a delta loop over its SQL tokens, JSON members
    or lines, within `runs` runs and `seconds`) whose run still has `o`'s first finding;
    with that run's outcome."""
    deadline = time.monotonic() + seconds
    want = o.findings[0]
    args = [a for a in o.args if not a.startswith("# from")]
    stdin = "-" in args
    files = list(o.files)
    budget = [runs]
    best: list[Any] = [files[0][1], o]

    def attempt(data: bytes) -> bool:
        budget[0] -= 1
        if time.monotonic() > deadline:
            budget[0] = 0
            return False
        got = fz.run_files(
            "reduce", o.kind, o.index, [(files[0][0], data), *files[1:]], args, stdin
        )
        if _same(got, want):
            if len(data) <= len(best[0]):
                best[0], best[1] = data, got
            return True
        return False

    data = files[0][1]
    try:
        doc = parse(data)
    except Exception:  # noqa: BLE001 - not JSON we can read: tokens or lines
        doc = None
    if doc is not None and o.command != "import sql":
        _reduce_json(doc, attempt, budget)
    else:
        text = data.decode("utf-8", "surrogateescape")
        parts = [t for _, t in tokens(text)] if len(text) < 500000 else text.splitlines(True)
        _ddmin(parts, lambda p: attempt("".join(p).encode("utf-8", "surrogateescape")), budget)
    return best[0], best[1]


def _reduce_json(doc: Any, attempt: Any, budget: list[int]) -> None:
    """Remove members of `doc` one at a time (each kept out when the finding stays),
    then hoist a child over its parent, until nothing more goes or the budget is spent."""
    changed = True
    while changed and budget[0] > 0:
        changed = False
        for container, key, _ in reversed(_members(doc)):
            if budget[0] <= 0:
                return
            saved = copy.copy(container)
            del container[key]
            if attempt(dump(doc).encode()):
                changed = True
                break
            container.clear()
            if isinstance(container, list):
                container.extend(saved)
            else:
                container.update(saved)


# --- the campaign -----------------------------------------------------------------------

_FUZZER: ImportFuzzer | None = None


def init_worker(cfg: Config, seed: int, data: Data | None, workdir: str) -> None:
    """A pool worker's fuzzer (in a fresh interpreter: see the module doc)."""
    global _FUZZER
    _FUZZER = ImportFuzzer(cfg, seed, data, Path(tempfile.mkdtemp(dir=workdir, prefix="w")))


def run_job(job: tuple[str, int]) -> ImportOutcome:
    assert _FUZZER is not None
    return _FUZZER.run(*job)


def run_sql_job(text: bytes, engines: str = "duckdb,datafusion") -> ImportOutcome:
    """One fixed SQL file through `import sql --probe` on `engines`, in a pool worker."""
    fz = _FUZZER
    assert fz is not None and fz.data is not None
    args = ["import", "sql", "q.sql", "--probe", "--db", fz.data.db, "--engines", engines]
    args += ["--repeat", "1", "--warmup", "0", "-o", "out/tree.json"]
    return fz.run_files("sql", "fixed", 0, [("q.sql", text)], args, False)


def confirm_job(o: ImportOutcome) -> ImportOutcome:
    """`o`'s input run again: whether its first finding comes back (the code under test
    may have changed between the two runs)."""
    assert _FUZZER is not None
    args = [a for a in o.args if not a.startswith("# from")]
    return _FUZZER.run_files("confirm", o.kind, o.index, list(o.files), args, "-" in args)


def reduce_job(o: ImportOutcome) -> tuple[bytes, ImportOutcome]:
    assert _FUZZER is not None
    return reduce(_FUZZER, o)


def pool(workers: int, cfg: Config, seed: int, data: Data | None, workdir: str) -> Any:
    """Workers started fresh (`spawn`), each a fork server of its own children."""
    return multiprocessing.get_context("spawn").Pool(
        workers, initializer=init_worker, initargs=(cfg, seed, data, workdir)
    )


def _version() -> str:
    """The commit of the code under test, and whether placement_cli/ differs from it
    (another hand may be editing it while a campaign runs)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "placement_cli"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "an unknown commit"
    return head + (" with uncommitted changes" if dirty else "")


def histogram(outcomes: list[ImportOutcome]) -> str:
    rows = []
    for target in sorted({o.command for o in outcomes}):
        codes = Counter(o.code for o in outcomes if o.command == target)
        n = sum(codes.values())
        rows.append(
            f"  {target}: {n} inputs; exits "
            + ", ".join(f"{c}: {k}" for c, k in sorted(codes.items()))
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.sql", description=__doc__)
    ap.add_argument("--sql", type=int, default=300, help="SQL inputs (300)")
    ap.add_argument("--json", type=int, default=300, help="engine-JSON inputs (300)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--hang-seconds", type=float, default=60.0)
    ap.add_argument("--memory-mb", type=int, default=4096)
    ap.add_argument("--reduce", action="store_true", help="shrink each distinct finding")
    ap.add_argument(
        "--save", default=os.path.join(tempfile.gettempdir(), "placement-fuzz-sql-findings")
    )
    ns = ap.parse_args(argv)
    cfg = Config(hang_seconds=ns.hang_seconds, memory_mb=ns.memory_mb)
    workdir = tempfile.mkdtemp(prefix="placement-fuzz-sql-")
    start = time.monotonic()
    version = _version()
    try:
        data = make_data(Path(workdir) / "data") if ns.sql else None
        jobs = [("sql", i) for i in range(ns.sql)] + [("json", i) for i in range(ns.json)]
        outcomes: list[ImportOutcome] = []
        with pool(ns.workers, cfg, ns.seed, data, workdir) as p:
            for n, o in enumerate(p.imap_unordered(run_job, jobs, chunksize=1), 1):
                outcomes.append(o)
                if n % 50 == 0 or n == len(jobs):
                    bad = sum(1 for x in outcomes if x.findings)
                    print(
                        f"  {n}/{len(jobs)} runs, {bad} with findings, "
                        f"{time.monotonic() - start:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            seconds = time.monotonic() - start
            firsts: dict[tuple[str, str, str], ImportOutcome] = {}
            for o in sorted(outcomes, key=lambda o: (o.command, o.index)):
                for f in o.findings[:1]:
                    firsts.setdefault((o.command, *f), o)
            again = p.map(confirm_job, list(firsts.values()), chunksize=1)
            reduced = p.map(reduce_job, list(firsts.values()), chunksize=1) if ns.reduce else []
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"# SQL / engine-JSON fuzz campaign: {ns.sql} SQL and {ns.json} JSON inputs, seed "
        f"{ns.seed}, {ns.workers} workers, {seconds:.0f} s, placement_cli at {version}"
        + ("" if _version() == version else f" (at {_version()} when it ended)")
        + "\n"
    )
    print("exit codes:\n" + histogram(outcomes) + "\n")
    shown: list[Outcome] = list(outcomes)
    print(table(shown, "kind") + "\n")
    print(table(shown, "command") + "\n")
    notes = Counter((o.command, c, s) for o in outcomes for c, s in o.notes)
    if notes:
        print("notes (documented exits or engine messages, not findings):")
        for (cmd, c, s), k in notes.most_common():
            print(f"  [{c}] {cmd} x{k}: {s}")
        print()
    save = Path(ns.save)
    save.mkdir(parents=True, exist_ok=True)
    with open(save / "outcomes.pickle", "wb") as fh:  # every run, to look at again
        pickle.dump(outcomes, fh)
    for first, o in zip(firsts.values(), again, strict=True):
        cat, sig = first.findings[0]
        back = "reproduced" if _same(o, (cat, sig)) else f"NOT reproduced (exit {o.code})"
        print(f"run again: [{cat}] {first.command} {first.kind} #{first.index}: {back}")
    if again:
        print()
    for (data_, o), first in zip(reduced, firsts.values() if ns.reduce else [], strict=True):
        name = f"{first.command.replace(' ', '-')}-{first.kind}-{first.index}{first.suffix}"
        (save / "reduced").mkdir(exist_ok=True)
        (save / "reduced" / name).write_bytes(data_)
        print(
            f"reduced [{o.findings[0][0]}] {first.command} {first.kind} #{first.index}: "
            f"{len(first.input)} -> {len(data_)} bytes ({save / 'reduced' / name})\n  input {data_[:300]!r}\n"
            f"  stderr {o.stderr[-400:]!r}"
        )
    return print_findings(
        shown, Path(ns.save), "no findings: 0 internal errors, 0 tracebacks, 0 hangs"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # Run as the module's own name: the workers' outcomes (and the pickle of them) are
    # then `tests.fuzz.sql.ImportOutcome`, not `__main__`'s.
    from tests.fuzz import sql

    sys.exit(sql.main())
