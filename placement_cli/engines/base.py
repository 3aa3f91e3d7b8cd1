"""What an engine is: the one interface every engine module implements
(`engines/backends/`), in the shape of sqlglot's dialects and ibis's backends.

An `Engine` is a class with what is known without running it: its name (as tree files
spell it), the packages it needs, the SQL dialect DataFusion's unparser writes for it
(None: it runs DataFusion's plan itself, not SQL), whether it plans again the SQL it is
given, which source its tables come from, and the row counts a calibration hands it.
`Engine.open` gives a `Session`: a live connection with every operation the tool needs,
each in the engine's own terms (run SQL to Arrow, take an Arrow table as a table,
materialise a result, fetch a table, read every byte of one, drop one, generate rows).

Everything a session returns is a pyarrow Table; how it crosses into and out of the
engine is the engine's own business. Packages are imported when a session opens, never
when the module is read: the command line lists engines without importing any.

Errors an engine raises are its own (a `duckdb.Error`, an ADBC `Error`, ...); the
callers that tolerate an engine that cannot run something catch `Exception` and
report it. The messages here never name command-line flags: that is the command's job.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, ParamSpec, TypeVar

from placement_cli.core.cache_modes import Caches
from placement_cli.engines.require import need

if TYPE_CHECKING:  # annotations only: pathlib is not on the command line's path
    from pathlib import Path

# Bytes of a generated row's integer column; the rest of its width is a string.
ID_BYTES = 8

Source = Literal["db", "pg"]
T = TypeVar("T")
P = ParamSpec("P")


def cores() -> int:
    """The cores this process may run on (its affinity), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class Sources:
    """Where the engines find the query's tables: `db` a DuckDB database file (opened
    read-only; engines that cannot read it get its tables as Arrow), `pg` a PostgreSQL
    connection string (its tables of the same names)."""

    db: Path | None = None
    pg: str | None = None
    statement_timeout_ms: int = 60_000


@dataclass(frozen=True, slots=True)
class Settings:
    """How engines run and are timed: `threads` each in-process engine may use (DuckDB's
    threads, DataFusion's target partitions, Polars' pool), by default the cores this
    process may run on; `caches`, the CPU caches each timed run starts with
    (`engines/caches.py`). Recorded in every artifact that holds a time."""

    threads: int = 0  # 0: `cores()`
    caches: Caches = "cold"

    @property
    def effective_threads(self) -> int:
        return self.threads or cores()


# The stack of every thread that runs an engine: DataFusion plans, writes and reads
# plans recursively in Rust on the calling thread, and a long chain of one operator
# (8,300 terms of `1 + 1 + ...`, 2,400 `UNION ALL`s) overflowed the default 8 MiB:
# the process died of SIGSEGV. Only the pages used are memory; the rest is address space.
ENGINE_STACK = 512 << 20


def on_deep_stack(run: Callable[[], T]) -> T:
    """`run()` on a thread of its own with `ENGINE_STACK` bytes of stack, its result or
    its exception; threads made while it runs (a pool's) get the same. Ctrl-C in the
    caller ends the wait (the thread is a daemon: it does not keep the process alive)."""
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["result"] = run()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            box["error"] = exc

    old = threading.stack_size(ENGINE_STACK)
    try:
        t = threading.Thread(target=body, name="engine", daemon=True)
        t.start()
        while t.is_alive():
            t.join(0.1)
    finally:
        threading.stack_size(old)
    if "error" in box:
        raise box["error"]
    return box["result"]  # type: ignore[no-any-return]


def deep_stack(fn: Callable[P, T]) -> Callable[P, T]:
    """`fn`, run on a thread with a deep stack each time it is called (`on_deep_stack`)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return on_deep_stack(functools.partial(fn, *args, **kwargs))

    return wrapper


def safe_dsn(dsn: str) -> str:
    """A connection string as messages may show it: without its password.

    >>> safe_dsn("host=db port=5432 user=me password='s e'"), safe_dsn("postgresql://me:pw@db/x")
    ('host=db port=5432 user=me password=***', 'postgresql://me:***@db/x')
    """
    out = re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", out)


def range_sql(column: str, rows: int, width: int) -> str:
    """Generated rows from a `range(rows)` table function whose column is `column`
    (DuckDB's `range`, DataFusion's `value`): an 8-byte id and a string padding the
    row to `width` bytes (`Engine.generate_sql`).

    >>> range_sql("range", 3, 16)
    "SELECT CAST(range AS BIGINT) AS id, lpad(CAST(range AS VARCHAR), 8, 'x') AS pad FROM range(3)"
    """
    pad = max(int(width) - ID_BYTES, 1)
    return (
        f"SELECT CAST({column} AS BIGINT) AS id, lpad(CAST({column} AS VARCHAR), {pad}, 'x') "
        f"AS pad FROM range({int(rows)})"
    )


def quote(name: str) -> str:
    """`name` as a quoted SQL identifier (every engine here reads double quotes)."""
    return '"' + name.replace('"', '""') + '"'


class Session(ABC):
    """A live connection to one engine. `engine` is its class; `handle` the engine's own
    object (a DuckDB connection, a DataFusion context, ...), for code that must reach
    under the interface (tests, the planner)."""

    engine: ClassVar[type[Engine]]
    handle: Any

    @abstractmethod
    def thread(self) -> Session:
        """A session for another thread: the engine's own per-thread handle (a DuckDB
        cursor, a PostgreSQL connection), sharing what the engine allows to share."""

    @abstractmethod
    def sql(self, text: str) -> Any:
        """Run `text` and return its whole result as a pyarrow Table."""

    @abstractmethod
    def register(self, name: str, table: Any) -> None:
        """Make the pyarrow Table `table` a table `name` of this engine (replacing one)."""

    @abstractmethod
    def materialise(self, name: str, text: str) -> None:
        """Run `text` and keep its result as table `name` (replacing one)."""

    def fetch(self, name: str, limit: int | None = None) -> Any:
        """Table `name` (its first `limit` rows) as a pyarrow Table."""
        cut = "" if limit is None else f" LIMIT {int(limit)}"
        return self.sql(f"SELECT * FROM {quote(name)}{cut}")

    def scan(self, name: str, columns: list[str]) -> int:
        """Read every value of table `name` (the maximum of each of `columns`, all of
        them: an engine scanning Arrow in place reads only the columns a query names,
        and `count(*)` reads none) and return its rows."""
        parts = ["count(*)"] + [f"max({quote(c)})" for c in columns]
        got = self.sql(f"SELECT {', '.join(parts)} FROM {quote(name)}")
        return int(got.column(0)[0].as_py())

    def generate(self, name: str, rows: int, width: int) -> None:
        """Make table `name` of `rows` generated rows of about `width` bytes
        (`Engine.generate_sql`): what a calibration hands off."""
        self.materialise(name, self.engine.generate_sql(rows, width))

    @abstractmethod
    def drop(self, name: str) -> None:
        """Remove table `name` (nothing when there is none)."""

    def run_with(self, text: str, inputs: Mapping[str, Any]) -> Any:
        """Run `text` with each Arrow table of `inputs` a table of its name, then drop
        them: a fragment over its cut children."""
        made = []
        try:
            for name, table in inputs.items():
                self.register(name, table)
                made.append(name)
            return self.sql(text)
        finally:
            for name in made:
                self.drop(name)

    def db_tables(self) -> Iterator[tuple[str, Any]]:
        """(name, pyarrow Table) of every table of the `db` file: the engine that reads
        the file itself (`Engine.reads_db_file`) gives them to the others."""
        raise NotImplementedError(f"{self.engine.name} does not read the database file")

    def inexact_columns(self) -> dict[str, dict[str, str]]:
        """Table -> {column: type} of the columns whose values leave this engine as Arrow
        with another type than they have here (a UUID as text, an ENUM as text, a time
        with its zone as a time without): a result carrying one cannot cross a cut
        exactly. None known by default."""
        return {}

    def close(self) -> None:  # noqa: B027 - in-process engines hold nothing to close
        """Close the connection (a session of another thread closes its own only)."""


class Engine(ABC):
    """An engine: what is known without running it, and `open` for a session."""

    name: ClassVar[str]
    packages: ClassVar[tuple[str, ...]]
    # The dialect DataFusion's unparser writes for it (`datafusion.unparser.Dialect`'s
    # method); None: the engine runs DataFusion's plan (the planner itself).
    dialect: ClassVar[str | None]
    # True: the engine plans the SQL it is given again (its own join order and costs).
    replans: ClassVar[bool]
    source: ClassVar[Source]
    # Run when no engines are named (`--engines`): an engine added to the registry
    # leaves what earlier calls made unchanged until it is asked for.
    by_default: ClassVar[bool] = True
    # It can open the `db` file itself; the others get that file's tables as Arrow.
    reads_db_file: ClassVar[bool] = False
    # Row counts of a calibration hand-off this engine sends (`calibrate measure`);
    # `slow_io`: a hand-off it receives uses its own (smaller) counts.
    send_rows: ClassVar[tuple[int, ...]]
    slow_io: ClassVar[bool] = False
    # Fetching a table's first N rows stops early and copies nothing (a calibration
    # then makes one table of the largest count and hands off its prefixes).
    free_limit: ClassVar[bool] = False

    @classmethod
    def modules(cls, why: str) -> list[Any]:
        """The engine's packages, imported (a usage error naming the extra if missing)."""
        return need(why, *cls.packages)

    @classmethod
    def rewrite(cls, sql: str) -> str:
        """The SQL DataFusion's unparser wrote for this engine, made one it accepts
        where the unparser writes what it does not (none by default)."""
        return sql

    @classmethod
    def has_source(cls, sources: Sources) -> bool:
        return (sources.db if cls.source == "db" else sources.pg) is not None

    @classmethod
    @abstractmethod
    def open(cls, sources: Sources, settings: Settings, tables: TableSource) -> Session:
        """A session on `sources`; `tables` gives the `db` file's tables as Arrow to an
        engine that cannot read the file itself (`reads_db_file` False)."""

    @classmethod
    @abstractmethod
    def generate_sql(cls, rows: int, width: int) -> str:
        """A query of `rows` rows of about `width` bytes: an `id` (8 bytes) and a string
        `pad` filling the row to `width` (at least one character)."""

    @classmethod
    def threads_used(cls, settings: Settings) -> int | None:
        """The threads the engine runs with under `settings` (None: not its choice)."""
        return settings.effective_threads


class TableSource(ABC):
    """The `db` file's tables as Arrow, read once per process by the engine that reads
    the file (`Connections.db_tables`)."""

    @abstractmethod
    def db_tables(self) -> Iterator[tuple[str, Any]]:
        """(name, pyarrow Table) of every table of the `db` file."""
