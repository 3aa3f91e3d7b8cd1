"""DuckDB, in-process: it opens the `db` file itself (read-only), takes Arrow tables in
place (a registered view: no copy), and returns results with `.to_arrow_table()` (never
the lazy `.arrow()` of DuckDB 1.5, which would make a timing measure nothing).

A session of another thread is a cursor: DuckDB's own connection to the same database,
since one connection must not be used by two threads. DuckDB starts as many threads as
the machine has cores even when the process may use fewer; its `threads` is set to the
settings' (by default the cores this process may run on: on one core `threads=1` was up
to 24% faster, median 11%, measured on TPC-H).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from placement_cli.core.errors import IOFailure
from placement_cli.engines.base import (
    Engine,
    Session,
    Settings,
    Sources,
    TableSource,
    quote,
    range_sql,
)
from placement_cli.engines.require import need

# Outside string literals in practice: the unparser quotes identifiers and writes
# keywords in upper case, and neither pattern is a literal it writes.
_EMPTY_SELECT = re.compile(r"\bSELECT\s+FROM\b")
_INEXACT = frozenset({"UUID", "JSON", "BIT", "TIME WITH TIME ZONE", "BIGNUM", "VARINT"})
_UNSIGNED = re.compile(r"\b(TINYINT|SMALLINT|INTEGER|INT|BIGINT) UNSIGNED\b", re.IGNORECASE)


# What DataFusion's unparser writes for a semi (anti) join of two named inputs: the
# left's rows where a row of the right matches, as a correlated (NOT) EXISTS.
_EXISTS = re.compile(
    r'FROM ("(?:[^"]|"")+") WHERE (NOT )?EXISTS (\()SELECT 1 FROM ("(?:[^"]|"")+") WHERE '
)


def _semi_joins(sql: str) -> str:
    r"""Each semi (anti) join the unparser wrote as a correlated `EXISTS` (`NOT EXISTS`)
    over two named inputs, written as DuckDB's own `SEMI JOIN` (`ANTI JOIN`), which it
    plans as a hash join: the same rows (a left row is kept when some right row meets
    the condition, resp. none does), but a correlated `EXISTS` is planned as a
    delim join, 3.8x slower on TPC-H Q18 at SF 1 (measured).

    >>> _semi_joins('SELECT "a"."x" FROM "a" WHERE EXISTS (SELECT 1 FROM "b" WHERE ("a"."x" = "b"."y"))')
    'SELECT "a"."x" FROM "a" SEMI JOIN "b" ON (("a"."x" = "b"."y"))'
    >>> _semi_joins('FROM "a" WHERE NOT EXISTS (SELECT 1 FROM "b" WHERE ("a"."x" = "b"."y") AND ("b"."s" <> \')(\')) AS "t"')
    'FROM "a" ANTI JOIN "b" ON (("a"."x" = "b"."y") AND ("b"."s" <> \')(\')) AS "t"'
    """
    out: list[str] = []
    at = 0
    while (m := _EXISTS.search(sql, at)) is not None:
        end = _closing(sql, m.start(3))  # the subquery's `)`: the condition ends there
        if end is None:
            out.append(sql[at : m.end()])  # not the shape written for a join: as it is
            at = m.end()
            continue
        left, anti, right = m.group(1), m.group(2), m.group(4)
        kind = "ANTI" if anti else "SEMI"
        cond = sql[m.end() : end]
        out.append(f"{sql[at : m.start()]}FROM {left} {kind} JOIN {right} ON ({cond})")
        at = end + 1
    out.append(sql[at:])
    return "".join(out)


_JOIN_SUBQUERY = re.compile(r"JOIN \(SELECT ")
_FIRST_TABLE = re.compile(r'FROM ("(?:[^"]|"")+")')


def _alias_joined(sql: str) -> str:
    r"""A subquery joined without an alias, as the unparser writes a scalar subquery's
    inputs (TPC-H Q11: `JOIN (SELECT "nation"."n_nationkey" FROM "nation" WHERE ...) ON
    ... = "nation"."n_nationkey"`), named after the table it reads first, which is how
    the condition refers to it; DuckDB, unlike DataFusion, needs the name.

    >>> _alias_joined('FROM "s" INNER JOIN (SELECT "n"."k" FROM "n" WHERE ("n"."x" = 1)) ON "s"."k" = "n"."k"')
    'FROM "s" INNER JOIN (SELECT "n"."k" FROM "n" WHERE ("n"."x" = 1)) AS "n" ON "s"."k" = "n"."k"'
    >>> _alias_joined('JOIN (SELECT "n"."k" FROM "n") AS "m" ON "m"."k" = 1')
    'JOIN (SELECT "n"."k" FROM "n") AS "m" ON "m"."k" = 1'
    """
    out: list[str] = []
    at = 0
    while (m := _JOIN_SUBQUERY.search(sql, at)) is not None:
        start = m.start() + len("JOIN ")
        end = _closing(sql, start)
        if end is None:
            break
        inner = sql[start + 1 : end]
        first = _FIRST_TABLE.search(inner)
        out.append(sql[at : end + 1])
        if sql.startswith(" ON ", end + 1) and first is not None:
            out.append(f" AS {first.group(1)}")
        at = end + 1
    out.append(sql[at:])
    return "".join(out)


_OUTER_REF = re.compile(r'\("((?:[^"]|"")+)"\) FROM \(SELECT ')


def _name_measures(sql: str) -> str:
    r"""A subquery's one unnamed column given the name its outer query refers to it by.
    The unparser writes a scalar subquery over an aggregate (TPC-H Q15: `max("sum(...)")
    FROM (SELECT sum(...) FROM ... GROUP BY ...)`) with DataFusion's own name for the
    unnamed column, which DuckDB names otherwise.

    >>> _name_measures('SELECT max("sum(t.x)") FROM (SELECT sum(("x" * 2)) FROM "t" GROUP BY "k")')
    'SELECT max("sum(t.x)") FROM (SELECT sum(("x" * 2)) AS "sum(t.x)" FROM "t" GROUP BY "k")'
    >>> _name_measures('SELECT max("a") FROM (SELECT "x" AS "a" FROM "t")')
    'SELECT max("a") FROM (SELECT "x" AS "a" FROM "t")'
    """
    out: list[str] = []
    at = 0
    while (m := _OUTER_REF.search(sql, at)) is not None:
        start = m.end()
        end = _top_level(sql, start, " FROM ")
        out.append(sql[at:start])
        at = start
        if end is None:
            continue
        expr = sql[start:end]
        if _top_level(expr, 0, ",") is None and _top_level(expr, 0, " AS ") is None:
            out.append(f'{expr} AS "{m.group(1)}"')
            at = end
    out.append(sql[at:])
    return "".join(out)


def _top_level(sql: str, start: int, word: str) -> int | None:
    """Where `word` first occurs from `start` outside parentheses, quoted names and string
    literals (None when it does not, or a `)` closes the level first). A doubled quote
    inside a name or literal ends it and starts it again: the same span."""
    depth = 0
    i = start
    while i < len(sql):
        c = sql[i]
        if depth == 0 and sql.startswith(word, i):
            return i
        if c in "\"'":
            j = sql.find(c, i + 1)
            if j == -1:
                return None
            i = j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        i += 1
    return None


def _closing(sql: str, start: int) -> int | None:
    """The index of the `)` that closes the `(` at `start` (`_top_level` from just after
    it); None when there is none.

    >>> _closing('f(a, "b)"" c", (d))', 1)
    18
    """
    return _top_level(sql, start + 1, ")")


def _interruptible(run: Callable[[], Any]) -> Any:
    """`run()`, with DuckDB's own interruption (Ctrl-C while it runs a query) raised as
    Python's, so the process ends as any interrupted run does (exit 130)."""
    (duckdb,) = need("duckdb", "duckdb")
    try:
        return run()
    except duckdb.InterruptException:
        raise KeyboardInterrupt from None


class DuckDBSession(Session):
    def __init__(self, handle: Any, own: bool = True) -> None:
        self.handle = handle
        self._own = own

    def thread(self) -> Session:
        return DuckDBSession(self.handle.cursor())

    def sql(self, text: str) -> Any:
        return _interruptible(lambda: self.handle.execute(text).to_arrow_table())

    def register(self, name: str, table: Any) -> None:
        self.handle.register(name, table)

    def materialise(self, name: str, text: str) -> None:
        self.handle.execute(f"CREATE OR REPLACE TEMP TABLE {quote(name)} AS {text}")

    def drop(self, name: str) -> None:
        try:
            self.handle.unregister(name)
        except Exception:  # noqa: BLE001 - not a registered view: a temp table
            pass
        self.handle.execute(f"DROP TABLE IF EXISTS {quote(name)}")

    def run_with(self, text: str, inputs: Mapping[str, Any]) -> Any:
        # A cursor of its own per run: registrations are per connection, so two
        # fragments of one thread's session never see each other's inputs.
        cur = self.handle.cursor()
        try:
            for name, table in inputs.items():
                cur.register(name, table)
            return _interruptible(lambda: cur.execute(text).to_arrow_table())
        finally:
            cur.close()

    def db_tables(self) -> Iterator[tuple[str, Any]]:
        """Every table of the database file as Arrow (for the engines that cannot read
        it); DuckDB running out of memory doing so is a `MemoryError`."""
        (duckdb,) = need("duckdb", "duckdb")
        for (name,) in self.handle.execute("SHOW TABLES").fetchall():
            try:
                table = self.sql(f"SELECT * FROM {quote(name)}")
            except duckdb.OutOfMemoryException as exc:
                raise MemoryError(str(exc)) from None
            yield name, table

    def inexact_columns(self) -> dict[str, dict[str, str]]:
        """The database's columns of the types DuckDB exports to Arrow as another type
        (measured with DuckDB 1.5.5, a value exported and registered back: UUID and JSON
        come back as VARCHAR, ENUM as VARCHAR (its order lost), BIT as BLOB, TIME WITH
        TIME ZONE as TIME (its offset lost), BIGNUM as an opaque extension type no
        other engine reads)."""
        out: dict[str, dict[str, str]] = {}
        rows = self.handle.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() ORDER BY table_name, column_index"
        ).fetchall()
        for table, column, kind in rows:
            if kind in _INEXACT or kind.startswith("ENUM("):
                out.setdefault(table, {})[column] = kind
        return out

    def close(self) -> None:
        if self._own:
            self.handle.close()


class DuckDB(Engine):
    name: ClassVar[str] = "duckdb"
    packages: ClassVar[tuple[str, ...]] = ("duckdb",)
    dialect: ClassVar[str | None] = "duckdb"
    replans: ClassVar[bool] = True
    source = "db"
    reads_db_file: ClassVar[bool] = True
    send_rows: ClassVar[tuple[int, ...]] = (10_000, 40_000, 80_000, 160_000, 280_000, 400_000)

    @classmethod
    def open(cls, sources: Sources, settings: Settings, tables: TableSource) -> DuckDBSession:
        (duckdb,) = cls.modules("duckdb")
        if sources.db is None:
            raise ValueError("duckdb needs a database file")
        config = {"threads": settings.effective_threads}
        try:
            return DuckDBSession(duckdb.connect(str(sources.db), read_only=True, config=config))
        except duckdb.Error as exc:
            # Not there, not a DuckDB database, another version's, locked: the file (exit 6).
            reason = " ".join(str(exc).split())[:300]
            raise IOFailure(f"{sources.db}: cannot open as a DuckDB database: {reason}") from None

    @classmethod
    def rewrite(cls, sql: str) -> str:
        """What the unparser writes that DuckDB refuses, rewritten (TPC-DS at SF 0.01:
        54 of 3,687 probed nodes wrote an empty select list, 16 a MySQL unsigned cast):
        `SELECT FROM` (a subquery only counted) selects a constant, and `T UNSIGNED`
        is DuckDB's unsigned type `UT`.

        >>> DuckDB.rewrite("SELECT count(1) FROM (SELECT FROM t), CAST(x AS TINYINT UNSIGNED)")
        'SELECT count(1) FROM (SELECT 1 FROM t), CAST(x AS UTINYINT)'
        """
        sql = _EMPTY_SELECT.sub("SELECT 1 FROM", sql)
        sql = _UNSIGNED.sub(lambda m: "U" + m.group(1).upper(), sql)
        return _name_measures(_alias_joined(_semi_joins(sql)))

    @classmethod
    def generate_sql(cls, rows: int, width: int) -> str:
        return range_sql("range", rows, width)


DuckDBSession.engine = DuckDB
