"""Whether a SQL text is one query (`import sql --probe` runs it as written on every
engine, PostgreSQL's server among them: a statement that writes must never get there).

A query is one statement (a `;` only at its end) whose first word is SELECT, WITH,
VALUES, TABLE or FROM (DuckDB's FROM-first), or `(`. Quotes, quoted identifiers and
comments are skipped when looking for `;` and the first word.

>>> statements("SELECT ';' AS a -- ; no\\n; ")
["SELECT ';' AS a -- ; no\\n"]
>>> query_problem("WITH t AS (SELECT 1) SELECT * FROM t;") is None
True
>>> query_problem("SELECT 1; DROP TABLE lineitem")
'2 statements: give one query'
>>> query_problem("/* x */ DELETE FROM lineitem")
'a DELETE statement, not a query (SELECT, WITH, VALUES, TABLE or FROM)'
>>> query_problem("SELECT * INTO copy FROM nation"), query_problem("SELECT 'insert into' AS x")
('it writes (INTO): a query only reads', None)
>>> query_problem("WITH t AS (DELETE FROM nation RETURNING *) SELECT * FROM t")
'it writes (DELETE): a query only reads'
>>> query_problem("SELECT " + " + ".join(["1"] * 2000))
'1999 operators: at most 1000 (DuckDB too refuses expressions nested deeper than 1000)'
"""

from __future__ import annotations

QUERY_WORDS = ("select", "with", "values", "table", "from")
# Operators (`+ - * / %`, `||`, AND, OR, UNION) a query may hold. DataFusion plans a long
# chain of one in time quadratic in its length (1,000 terms of `1 + ...` 1.7 s, 4,000
# 21.7 s, measured 2026-11-29) and, past ~8,300, overflows its stack; DuckDB refuses
# expressions nested deeper than 1,000. TPC-H's and TPC-DS's queries hold at most 126.
MAX_OPERATORS = 1000
# Words that make a statement write, anywhere in it outside quotes and comments:
# `SELECT ... INTO t` creates a table on PostgreSQL, a CTE may DELETE ... RETURNING.
WRITES = frozenset(
    {"into", "insert", "update", "delete", "merge", "create", "drop", "alter", "truncate",
     "copy", "grant", "revoke", "attach", "detach", "pragma", "call", "vacuum", "install",
     "load", "export", "import", "set", "reset", "checkpoint", "lock", "notify", "listen"}
)  # fmt: skip


def statements(sql: str) -> list[str]:
    """The statements of `sql`, split at `;` outside quotes and comments; blank ones
    (a trailing `;`) left out."""
    out: list[str] = []
    start, i, n = 0, 0, len(sql)
    while i < n:
        skip = _skip(sql, i)
        if skip > i:
            i = skip
        elif sql[i] == ";":
            out.append(sql[start:i])
            i += 1
            start = i
        else:
            i += 1
    out.append(sql[start:])
    return [s for s in out if _strip(s)]


def _strip(sql: str) -> str:
    """`sql` without leading blanks and comments."""
    while True:
        sql = sql.lstrip()
        if sql.startswith("--"):
            end = sql.find("\n")
            sql = "" if end == -1 else sql[end + 1 :]
        elif sql.startswith("/*"):
            end = sql.find("*/")
            sql = "" if end == -1 else sql[end + 2 :]
        else:
            return sql


def query_problem(sql: str) -> str | None:
    """None when `sql` is one query, else what it is instead."""
    found = statements(sql)
    if len(found) != 1:
        return f"{len(found)} statements: give one query" if found else "no statement"
    head = _strip(found[0])
    if head.startswith("("):
        return None
    word = head.split(None, 1)[0].lower() if head.split() else ""
    word = word.split("(", 1)[0]
    if word not in QUERY_WORDS:
        return f"a {word.upper()} statement, not a query (SELECT, WITH, VALUES, TABLE or FROM)"
    words, symbols = _words(found[0])
    writes = next((w for w in words if w in WRITES), None)
    if writes is not None:
        return f"it writes ({writes.upper()}): a query only reads"
    operators = symbols + sum(1 for w in words if w in ("and", "or", "union"))
    if operators > MAX_OPERATORS:
        return (
            f"{operators} operators: at most {MAX_OPERATORS} (DuckDB too refuses expressions "
            "nested deeper than 1000)"
        )
    return None


def _words(sql: str) -> tuple[list[str], int]:
    """The bare words of `sql` outside quotes and comments, in lower case, and how many
    operator symbols (`+ - * / %`, `||` as one) stand outside them."""
    out: list[str] = []
    symbols = 0
    i, n, word = 0, len(sql), []
    while i < n:
        c = sql[i]
        skip = _skip(sql, i)
        if skip > i:
            i = skip
        elif c.isalnum() or c == "_":
            word.append(c.lower())
            i += 1
            continue
        else:
            symbols += c in "+-*/%" or sql.startswith("||", i)
            i += 2 if sql.startswith("||", i) else 1
        if word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out, symbols


def _skip(sql: str, i: int) -> int:
    """The end of the quoted text or comment that starts at `i`, or `i`."""
    n, c = len(sql), sql[i]
    if c in "'\"":
        end = sql.find(c, i + 1)
        while end != -1 and end + 1 < n and sql[end + 1] == c:
            end = sql.find(c, end + 2)
        return n if end == -1 else end + 1
    if sql.startswith("--", i):
        end = sql.find("\n", i)
        return n if end == -1 else end + 1
    if sql.startswith("/*", i):
        end = sql.find("*/", i + 2)
        return n if end == -1 else end + 2
    return i
