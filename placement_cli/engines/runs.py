"""Running one placement's fragments on the engines, bottom-up, independent fragments at
the same time.

The critical path the DP optimises takes the MAX over a node's children: siblings run in
parallel. So do the fragments here: every fragment whose inputs are ready is started on
a thread of its own (`Pool`), the moment its last input arrives; a fragment ready
alone, nothing else running, runs on the calling thread (a placement on one engine, the
fragments of a chain), as the probe runs a subtree. The engines release
the GIL while they work, so two fragments on different engines, or two on one
in-process engine, really overlap. Each thread has its own connections
(`Connections.thread`): each engine's session for another thread (`Session.thread`:
a DuckDB cursor, a PostgreSQL connection, DataFusion's one thread-safe context).

A fragment is run by a `Runner` (`run_subtree` of `engines/fragments.py`): it runs the
subtree rooted at a node on an engine, every cut child below it given as an Arrow table,
and returns its rows as an Arrow table in the canonical schema (`connect.canonical`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from placement_cli.core.errors import PlacementError
from placement_cli.engines.connect import Connections, Settings, Sources, canonical
from placement_cli.engines.placements import Fragment

# (connections of this thread, the fragment's root node id, engine, {cut child id: table})
Runner = Callable[[Connections, str, str, dict[str, Any]], Any]


class Pool:
    """Threads that run fragments, each with its own connections (module doc); a
    context manager that closes them all."""

    def __init__(self, sources: Sources, workers: int, settings: Settings | None = None) -> None:
        self.main = Connections(sources, settings or Settings())
        self._lock = threading.Lock()
        self._local = threading.local()
        self._all: list[Connections] = []
        self.executor = ThreadPoolExecutor(max(1, workers), thread_name_prefix="fragment")

    def conns(self) -> Connections:
        c = getattr(self._local, "conns", None)
        if c is None:
            c = self.main.thread()
            self._local.conns = c
            with self._lock:
                self._all.append(c)
        return c

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(wait=True)
        for c in self._all:
            c.close()
        self.main.close()


@dataclass(frozen=True, slots=True)
class FragmentRun:
    """One fragment's run: seconds from its start to its rows in hand, its rows and the
    bytes of its Arrow table (what crosses to its consumer), its start and end on the
    run's clock (seconds since the run began)."""

    seconds: float
    rows: int
    nbytes: int
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a placement: wall seconds from the first fragment's start to the root's
    rows, each fragment's run, every fragment's table (the root's first), and the CPU
    seconds this process spent meanwhile (every thread: the in-process engines' work
    and the client's side of PostgreSQL's, not the server's)."""

    seconds: float
    fragments: tuple[FragmentRun, ...]
    tables: tuple[Any, ...]
    cpu: float = 0.0

    @property
    def table(self) -> Any:
        """The root's rows: the query's result."""
        return self.tables[0]


class FragmentError(Exception):
    """A fragment an engine could not run: which one and why."""

    def __init__(self, fragment: int, node: str, engine: str, reason: str) -> None:
        super().__init__(f"fragment {fragment} (node {node} on {engine}): {reason}")
        self.fragment, self.node, self.engine, self.reason = fragment, node, engine, reason


def run_placement(
    pool: Pool,
    frags: Sequence[Fragment],
    node_ids: Sequence[str],
    engines: Sequence[str],
    runner: Runner,
) -> Run:
    """Run every fragment once, each as soon as its inputs are there (module doc): on a
    pool thread, or on this one when it is the only fragment ready and none is running.
    `node_ids[v]` names tree node v to the runner, `engines[e]` engine e. Raises
    `FragmentError` for the first fragment that fails (the others are waited for)."""
    frag_of = {f.root: i for i, f in enumerate(frags)}
    waiting = [len(f.inputs) for f in frags]
    tables: dict[int, Any] = {}
    runs: dict[int, FragmentRun] = {}
    c0 = time.process_time()
    t0 = time.perf_counter()

    def one(i: int) -> tuple[int, Any, float, float]:
        f = frags[i]
        inputs = {node_ids[u]: tables[frag_of[u]] for u in f.inputs}
        conns = pool.conns()
        start = time.perf_counter()
        try:
            table = canonical(runner(conns, node_ids[f.root], engines[f.engine], inputs))
        except PlacementError:
            raise  # the tool's own error (a server gone, a file): the run's, not the fragment's
        except Exception as exc:  # an engine's own error: the fragment is not executable
            raise FragmentError(i, node_ids[f.root], engines[f.engine], reason(exc)) from exc
        return i, table, start, time.perf_counter()

    ready = [i for i, n in enumerate(waiting) if n == 0]
    running: set[Future[tuple[int, Any, float, float]]] = set()
    failure: FragmentError | None = None

    def finish(i: int, table: Any, start: float, end: float) -> None:
        tables[i] = table
        runs[i] = FragmentRun(end - start, table.num_rows, int(table.nbytes), start - t0, end - t0)
        p = frags[i].parent
        if p >= 0 and failure is None:
            waiting[p] -= 1
            if waiting[p] == 0:
                ready.append(p)

    while ready or running:
        while ready:
            i = ready.pop(0)
            if running or ready:
                running.add(pool.executor.submit(one, i))
                continue
            # Alone (nothing else running or ready): on this thread. A hop to a pool
            # thread and back overlaps nothing and cost DataFusion 0.25-0.8 ms a run,
            # measured on TPC-H SF 0.1 (3-9% of those queries; docs/execute.md).
            try:
                finish(*one(i))
            except FragmentError as exc:
                failure = failure or exc
        if not running:
            break
        done, running = wait(running, return_when=FIRST_COMPLETED)
        for fut in done:
            try:
                finish(*fut.result())
            except FragmentError as exc:
                failure = failure or exc
    if failure is not None:
        raise failure
    end = max(r.end for r in runs.values())
    return Run(
        end,
        tuple(runs[i] for i in range(len(frags))),
        tuple(tables[i] for i in range(len(frags))),
        time.process_time() - c0,
    )


def reason(exc: BaseException) -> str:
    """An exception as one line of at most 300 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
