"""Executing placements and measuring them: each way checked (a warm-up whose first
run's rows are compared with the single-engine reference), then timed in interleaved
rounds; each cut's hand-off timed alone.

The reference is the whole query on one engine (the first of the tree's engines, in
its order, that can run every node and is available): every placement's rows must be
the same multiset (`stats.same_rows`: floats to 0.01). A placement whose rows differ is
a *mismatch*, an error of the run, never a timing. A placement an engine cannot run (an
engine error in some fragment) is *not executable*, with the engine's reason; one that
needs an engine without a source (`postgres` without `--pg`) is *skipped*.

The timed runs go round by round (`execute_many`): every way once per round, in a
fresh random order, so that two ways' runs of one round were measured side by side
(paired), and a drift of the machine over a long run does not favour whichever ran
first. Each run records its wall time and the CPU time of this process.

A cut's hand-off is timed on its own in the last round, after the placement's run, as
`calibrate measure` times one (`engines/handoff.py`): the child's Arrow table
(canonical schema) is made a table of the receiving engine by its own route
(`Session.register`, the route the fragment runner takes too), which then reads every
value of every column (`Session.scan`: `count(*)` alone reads no column of an Arrow
table). Inside a run the same work is part of the consumer's fragment time.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from placement_cli.core.errors import PlacementError, UsageError
from placement_cli.engines import handoff
from placement_cli.engines.base import deep_stack
from placement_cli.engines.caches import before
from placement_cli.engines.connect import Connections, Settings, Sources, available, canonical
from placement_cli.engines.placements import Fragment, Predicted, fragments, predicted
from placement_cli.engines.require import need
from placement_cli.engines.runs import FragmentError, Pool, Run, Runner, reason, run_placement
from placement_cli.engines.stats import rows_of, same_rows
from placement_cli.ir.tree.model import INF, Tree


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
    written: bool = False  # the query as written on its one engine (`Way`)


class RunStopped(Exception):
    """The run's own error (`PlacementError`: a server gone, a file) ended a run of many
    ways: the error, the reference, and every way as far as it got (those never reached
    `skipped`, saying why)."""

    def __init__(self, error: PlacementError, ref: Reference, outcomes: list[Outcome]) -> None:
        super().__init__(str(error))
        self.error, self.ref, self.outcomes = error, ref, outcomes

    def __reduce__(self) -> tuple[Any, ...]:  # a measuring process hands it back (`forks`)
        return (RunStopped, (self.error, self.ref, self.outcomes))


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


@dataclass(frozen=True, slots=True)
class Way:
    """One thing to run: a placement of the tree's plan (`assignment`), or, `written`,
    the whole query as written (its own SQL, the engine's own planner) on the one
    engine of `assignment`, whose `predicted_ms` is then the probe's measurement of it."""

    assignment: tuple[int, ...]
    written: bool = False
    predicted_ms: float | None = field(default=None, compare=False)


def check(
    pool: Pool,
    tree: Tree,
    node_ids: Sequence[str],
    way: Way,
    runner: Runner,
    ref: Reference,
    warmup: int,
) -> Outcome:
    """A way's untimed warm-up runs, the first one's rows checked against the reference
    (with no warm-up, that checked run is its first timed run); its status."""
    assignment = way.assignment
    frags = fragments(tree, assignment)
    pred = predicted(tree, assignment)
    if way.predicted_ms is not None:
        pred = dataclasses.replace(pred, latency=way.predicted_ms)
    out = Outcome(tuple(assignment), frags, pred, written=way.written)
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
    try:
        for i in range(max(1, warmup)):
            run = run_placement(pool, frags, node_ids, tree.engines, runner)
            if i == 0:
                differs = same_rows(rows_of(run.table), want)
                if differs is not None:
                    out.status = "mismatch"
                    out.error = f"not the reference's rows ({ref.engine}): {differs}"
                    return out
                if warmup == 0:
                    out.runs.append(dataclasses.replace(run, tables=(run.table,)))
    except FragmentError as exc:
        out.status, out.error = "not-executable", str(exc)
    return out


def timed(
    pool: Pool,
    tree: Tree,
    node_ids: Sequence[str],
    out: Outcome,
    runner: Runner,
    handoffs: int,
) -> None:
    """One timed run of a checked way, kept in `out.runs`, started with the CPU caches
    the pool's settings say (`engines/caches.py`); with `handoffs` > 0 each cut's
    hand-off is then timed that many times on this run's tables (module doc)."""
    before(pool.main.settings.caches)()
    try:
        run = run_placement(pool, out.frags, node_ids, tree.engines, runner)
    except FragmentError as exc:  # it ran before: an engine failing now fails the way
        out.status, out.error = "not-executable", str(exc)
        out.runs.clear()
        return
    out.runs.append(dataclasses.replace(run, tables=(run.table,)))
    if handoffs <= 0:
        return
    for fi, f in enumerate(out.frags):
        if f.parent < 0:
            continue
        dst = tree.engines[out.frags[f.parent].engine]
        try:
            out.handoffs[f.root] = [
                hand_off(pool.conns(), tree.engines[f.engine], dst, run.tables[fi])
                for _ in range(handoffs)
            ]
        except PlacementError:
            raise
        except Exception as exc:  # noqa: BLE001 - the runs stand; the cut is not timed
            out.handoff_errors[f.root] = reason(exc)


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
    ways: Sequence[Way | Sequence[int]],
    make_runner: Callable[[Connections], Runner],
    repeat: int,
    warmup: int = 1,
    progress: Callable[[int, Outcome], None] | None = None,
    settings: Settings | None = None,
    written: Runner | None = None,
    seed: int = 0,
    more: Callable[[Sequence[Outcome]], Sequence[int]] | None = None,
    extra_rounds: int = 0,
) -> tuple[Reference, list[Outcome]]:
    """The reference, then every way checked in turn (its warm-up), then timed in
    rounds: each round runs every way that passed once, one at a time (ways must not
    compete for the cores they are timed on), in a fresh random order (`seed`, then
    one draw per round), so that what drifts over the run (the machine's load, caches,
    an engine's memory) falls on every way alike and the `r`-th runs of two ways are a
    pair measured side by side. The last round also times each cut's hand-off.
    `make_runner` gets the main connections (to load the query's plan) and gives the
    fragments' runner; `written` runs the query as written (the ways marked so). After
    the rounds, up to `extra_rounds` more rounds of every way run while `more` names
    two ways or more still in question (indices into the outcomes so far). Runs on
    a thread with a deep stack, as do the pool's threads (`base.deep_stack`). A way
    given as an assignment is a placement of the plan."""
    todo = [w if isinstance(w, Way) else Way(tuple(w)) for w in ways]
    workers = max((len(fragments(tree, w.assignment)) for w in todo), default=1)
    rng = random.Random(seed)
    with Pool(sources, workers, settings) as pool:
        runner = make_runner(pool.main)
        ref = reference(pool, tree, node_ids, runner)

        def runner_of(w: Way | Outcome) -> Runner:
            if w.written:
                if written is None:
                    raise ValueError("a way as written needs the query's SQL")
                return written
            return runner

        outs: list[Outcome] = []
        try:
            for i, w in enumerate(todo):
                o = check(pool, tree, node_ids, w, runner_of(w), ref, warmup)
                outs.append(o)
                if progress is not None:
                    progress(i, o)
            rounds = repeat - (1 if warmup == 0 else 0)
            for r in range(rounds):
                order = [o for o in outs if o.status == "ok"]
                rng.shuffle(order)
                last = max(1, repeat) if r == rounds - 1 else 0
                for o in order:
                    if o.status == "ok":
                        timed(pool, tree, node_ids, o, runner_of(o), last)
            for _ in range(extra_rounds):
                # Every way again, not only those in question: a way timed among fewer
                # others runs in warmer caches, and would be judged on other terms.
                if more is None or len(more(outs)) < 2:
                    break
                order = [o for o in outs if o.status == "ok"]
                rng.shuffle(order)
                for o in order:
                    if o.status == "ok":
                        timed(pool, tree, node_ids, o, runner_of(o), 0)
            if rounds <= 0:  # one checked run each, kept: the hand-offs on a run of their own
                for o in outs:
                    if o.status == "ok" and len(o.frags) > 1:
                        kept = list(o.runs)
                        timed(pool, tree, node_ids, o, runner_of(o), 1)
                        o.runs[:] = kept
        except PlacementError as exc:
            for w in todo[len(outs) :]:
                a = w.assignment
                o = Outcome(a, fragments(tree, a), predicted(tree, a), written=w.written)
                o.status, o.error = "skipped", f"not run: the run stopped ({exc})"
                outs.append(o)
            raise RunStopped(exc, ref, outs) from exc
    return ref, outs


def execute_in_process(i: int, kwargs: dict[str, Any]) -> tuple[Reference, list[Outcome]]:
    """`execute_many(**kwargs)` as the `i`-th of `execute --forks` measuring processes
    (`engines/forks.py`), its rounds in an order of their own (seed `i`). The runs keep
    only the last run's result table (`--result` writes it): the others would cross back
    for nothing."""
    ref, outs = execute_many(**kwargs, seed=i)
    for o in outs:
        o.runs[:-1] = [dataclasses.replace(r, tables=()) for r in o.runs[:-1]]
    return ref, outs


def pooled(results: Sequence[tuple[Reference, list[Outcome]]]) -> tuple[Reference, list[Outcome]]:
    """The outcomes of the same ways measured in several processes as one: each way's
    runs (and hand-offs) in process order, so that the r-th runs of two ways are still
    a pair measured side by side (every way that ran has as many runs as the others in
    each process); a way that failed in any process failed. The first process's
    reference."""
    ref, base = results[0]
    for _, outs in results[1:]:
        for o, other in zip(base, outs, strict=True):
            if o.status != "ok":
                continue
            if other.status != "ok":
                o.status, o.error, o.runs = other.status, other.error, []
                continue
            o.runs.extend(other.runs)
            for cut, times in other.handoffs.items():
                o.handoffs.setdefault(cut, []).extend(times)
            for cut, why in other.handoff_errors.items():
                o.handoff_errors.setdefault(cut, why)
    return ref, base
