"""Executing placements and measuring them: a warm-up, then `repeat` timed runs; every
result checked against the single-engine reference; each cut's hand-off timed alone.

The reference is the whole query on one engine (the first of the tree's engines, in
its order, that can run every node and is available): every placement's rows must be
the same multiset (`stats.same_rows`: floats to 0.01). A placement whose rows differ is
a *mismatch*, an error of the run, never a timing. A placement an engine cannot run (an
engine error in some fragment) is *not executable*, with the engine's reason; one that
needs an engine without a source (`postgres` without `--pg`) is *skipped*.

A cut's hand-off is timed on its own after the placement's runs, as `calibrate measure`
times one (`engines/handoff.py`): the child's Arrow table (canonical schema) is made a
table of the receiving engine by its own route (`Session.register`, the route the
fragment runner takes too), which then reads every value of every column
(`Session.scan`: `count(*)` alone reads no column of an Arrow table). Inside a run the
same work is part of the consumer's fragment time.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from placement_cli.core.errors import PlacementError, UsageError
from placement_cli.engines import handoff
from placement_cli.engines.base import deep_stack
from placement_cli.engines.connect import Connections, Settings, Sources, available, canonical
from placement_cli.engines.placements import Fragment, Predicted, fragments, predicted
from placement_cli.engines.require import need
from placement_cli.engines.runs import FragmentError, Pool, Run, Runner, reason, run_placement
from placement_cli.engines.stats import rows_of, same_rows
from placement_cli.ir.tree.model import INF, Tree

_names = itertools.count()


@dataclass
class Outcome:
    """One placement, executed: its fragments and prediction, its timed runs, each cut's
    timed hand-offs (child node -> seconds per repeat), and its status: `ok`,
    `mismatch` (rows differ from the reference: `error` says how), `not-executable`
    (an engine failed: `error` is its reason) or `skipped` (an engine has no source)."""

    assignment: tuple[int, ...]
    frags: list[Fragment]
    predicted: Predicted
    runs: list[Run] = field(default_factory=list)
    handoffs: dict[int, list[float]] = field(default_factory=dict)
    # Cuts whose hand-off could not be timed alone, and why (the runs still count).
    handoff_errors: dict[int, str] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None


@dataclass(frozen=True)
class Reference:
    engine: str
    rows: int
    seconds: float
    table: Any


def reference_engines(tree: Tree, available: Sequence[str]) -> list[str]:
    """The tree's engines that run every node and have a source, in the tree's order."""
    return [
        name
        for e, name in enumerate(tree.engines)
        if name in available and all(tree.time[v][e] != INF for v in range(tree.n))
    ]


def reference(pool: Pool, tree: Tree, node_ids: Sequence[str], runner: Runner) -> Reference:
    """The whole query on the reference engine (module doc): the first that runs it (an
    engine that fails is passed over, the next tried); a usage error when none can."""
    tried: list[str] = []
    for engine in reference_engines(tree, available(pool.main.sources, named=True)):
        start = time.perf_counter()
        try:
            table = canonical(runner(pool.conns(), node_ids[tree.root], engine, {}))
        except PlacementError:
            raise
        except Exception as exc:  # noqa: BLE001 - the next engine may run it
            tried.append(f"{engine}: {reason(exc)}")
            continue
        return Reference(engine, table.num_rows, time.perf_counter() - start, table)
    why = f" ({'; '.join(tried)})" if tried else ""
    raise UsageError(
        "no engine with a source (the database file, or a PostgreSQL server for "
        "postgres) runs every node of the tree: there is no single-engine reference "
        f"to check results against{why}"
    )


def execute(
    pool: Pool,
    tree: Tree,
    node_ids: Sequence[str],
    assignment: Sequence[int],
    runner: Runner,
    ref: Reference,
    repeat: int,
    warmup: int = 1,
) -> Outcome:
    """Run one placement: `warmup` untimed runs (the first one's rows are checked), then
    `repeat` timed runs, then each cut's hand-off `repeat` times (module doc)."""
    frags = fragments(tree, assignment)
    out = Outcome(tuple(assignment), frags, predicted(tree, assignment))
    have = available(pool.main.sources, named=True)
    missing = sorted({tree.engines[f.engine] for f in frags} - set(have))
    if missing:
        out.status = "skipped"
        out.error = (
            f"no source for {', '.join(missing)} (a PostgreSQL server for postgres, the "
            "database file for the others)"
        )
        return out
    want = rows_of(ref.table)
    tables: tuple[Any, ...] = ()
    try:
        for i in range(warmup + repeat):
            run = run_placement(pool, frags, node_ids, tree.engines, runner)
            if i == 0:  # the first run's rows are checked (timed too without a warm-up)
                differs = same_rows(rows_of(run.table), want)
                if differs is not None:
                    out.status = "mismatch"
                    out.error = f"not the reference's rows ({ref.engine}): {differs}"
                    return out
            if i >= warmup:
                tables = run.tables
                out.runs.append(dataclasses.replace(run, tables=(run.table,)))
    except FragmentError as exc:
        out.status, out.error = "not-executable", str(exc)
        return out
    for fi, f in enumerate(frags):
        if f.parent < 0:
            continue
        dst = tree.engines[frags[f.parent].engine]
        try:
            out.handoffs[f.root] = [
                hand_off(pool.conns(), tree.engines[f.engine], dst, tables[fi])
                for _ in range(max(1, repeat))
            ]
        except PlacementError:
            raise
        except Exception as exc:  # noqa: BLE001 - the runs stand; the cut is not timed
            out.handoff_errors[f.root] = reason(exc)
    return out


def hand_off(conns: Connections, src: str, dst: str, table: Any) -> float:
    """Seconds for `dst` to take `table` (the Arrow result of a fragment on `src`) and
    read every value of it: `handoff.hand_off`, as `calibrate measure` makes one, then
    `Session.scan`; the table is dropped afterwards (module doc)."""
    # Positional names: a result may name two columns alike (a join of tables sharing
    # a key name), which a table of the receiving engine cannot.
    table = table.rename_columns([f"c{i}" for i in range(table.num_columns)])
    if table.num_columns == 0:  # its rows as one column of nulls (`fragments._positional`)
        (pa,) = need("execute", "pyarrow")
        table = pa.table({"c0": pa.nulls(table.num_rows, pa.int8())})
    start = time.perf_counter()
    name, _ = handoff.hand_off(conns, src, dst, table)
    session = conns.session(dst)
    session.scan(name, list(table.column_names))
    seconds = time.perf_counter() - start
    session.drop(name)
    return seconds


@deep_stack
def execute_many(
    sources: Sources,
    tree: Tree,
    node_ids: Sequence[str],
    assignments: Sequence[Sequence[int]],
    make_runner: Callable[[Connections], Runner],
    repeat: int,
    warmup: int = 1,
    progress: Callable[[int, Outcome], None] | None = None,
    settings: Settings | None = None,
) -> tuple[Reference, list[Outcome]]:
    """The reference, then every assignment executed in turn (one at a time: placements
    must not compete for the cores they are timed on). `make_runner` gets the main
    connections (to load the query's plan) and gives the fragments' runner. Runs on a
    thread with a deep stack, as do the pool's threads (`base.deep_stack`)."""
    workers = max((len(fragments(tree, a)) for a in assignments), default=1)
    with Pool(sources, workers, settings) as pool:
        runner = make_runner(pool.main)
        ref = reference(pool, tree, node_ids, runner)
        outs = []
        for i, a in enumerate(assignments):
            o = execute(pool, tree, node_ids, a, runner, ref, repeat, warmup)
            outs.append(o)
            if progress is not None:
                progress(i, o)
    return ref, outs
