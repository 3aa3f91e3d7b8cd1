"""The probe's timed runs (`engines/probe.py`): a subtree (or the query as written, or
the rest of the query above a node) on one engine, checked once and its timed runs
queued (`NodeProbe.measure`), then all of them timed in interleaved rounds
(`timed_rounds`), as `execute` times placements."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from placement_cli.core.errors import PlacementError
from placement_cli.engines.caches import flush
from placement_cli.engines.registry import REFERENCE
from placement_cli.engines.stats import rows_of, same_rows

# Node results up to this many values are compared between engines (`NodeProbe.disagree`):
# TPC-H SF 0.1's largest results (a scan of lineitem) hold ~10M, whose comparison in
# Python would cost more than the probe.
COMPARED_CELLS = 200_000


@dataclass
class NodeProbe:
    """What was measured for one node: per engine, the subtree's run times (ms) or the
    reason it could not run; its output's rows and bytes per row."""

    runs: dict[str, list[float]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    rows: int | None = None
    row_width: float | None = None
    rows_from: str | None = None
    # Per receiving engine, the times (ms) its own result took to be handed there
    # (`--handoffs`): taken and read whole, as `execute` times a cut.
    handoffs: dict[str, list[float]] = field(default_factory=dict)

    def measure(
        self, engine: str, run: Callable[[], Any], warmup: int, later: list[Pending]
    ) -> Any:
        """Check `engine` on the node: `warmup` untimed calls of `run` (one at least:
        the result is checked; with no warm-up asked, that call is the first timed
        run), then the timed runs left are queued in `later` (`timed_rounds`). None,
        with the reason in `failed`, when the engine fails or returns another number
        of rows than the first engine that ran it. An error of the tool's own (a server
        gone, a file) is not the engine's: it propagates."""
        try:
            table = None
            times = []
            for _ in range(max(warmup, 1)):
                start = time.perf_counter_ns()
                table = run()
                if warmup == 0:
                    times.append((time.perf_counter_ns() - start) / 1e6)
        except PlacementError:
            raise
        except Exception as exc:  # noqa: BLE001 - an engine's failure is a finding
            self.failed[engine] = f"{type(exc).__name__}: {first_line(exc)}"
            return None
        assert table is not None
        if self.rows is None:
            self.rows, self.rows_from = table.num_rows, engine
            self.row_width = table.nbytes / table.num_rows if table.num_rows else 0.0
        elif table.num_rows != self.rows:
            self.failed[engine] = (
                f"returned {table.num_rows} rows where {self.rows_from} returned {self.rows}"
            )
            return None
        self.runs[engine] = times
        later.append(Pending(self, engine, run))
        return table

    def pool(self, other: NodeProbe) -> None:
        """Another process's measurement of the same node added to this one (`import sql
        --probe --forks`): each engine's runs, and each receiving engine's hand-offs,
        appended in process order; an engine that failed in either process has failed
        (its times dropped, the first reason kept)."""
        for engine, why in other.failed.items():
            self.failed.setdefault(engine, why)
        for engine, times in other.runs.items():
            if engine in self.runs:
                self.runs[engine].extend(times)
        for engine in [e for e in self.runs if e in self.failed]:
            del self.runs[engine]
        for dst, times in other.handoffs.items():
            self.handoffs.setdefault(dst, []).extend(times)

    def disagree(self, tables: dict[str, Any]) -> None:
        """Engines whose result (`tables`) holds other values than the reference
        engine's (`registry.REFERENCE`, else the first that ran) get no time here: a
        cast that rounds on one and truncates on another, text formatted apart. Results
        of more than `COMPARED_CELLS` values are compared by their row counts only."""
        ref = REFERENCE.name if REFERENCE.name in tables else next(iter(tables), None)
        if ref is None:
            return
        want = tables[ref]
        if want.num_rows * max(want.num_columns, 1) > COMPARED_CELLS:
            return
        rows = rows_of(want)
        for engine, table in tables.items():
            if engine == ref or engine not in self.runs:
                continue
            differs = same_rows(rows_of(table), rows)
            if differs is not None:
                del self.runs[engine]
                self.failed[engine] = f"gives another answer than {ref}: {differs}"


@dataclass
class Pending:
    """A checked subtree (or the query as written) on one engine, its timed runs still
    to take: `run` gives its result, timed into `node.runs[engine]`."""

    node: NodeProbe
    engine: str
    run: Callable[[], Any]


def timed_rounds(
    pending: list[Pending], repeat: int, seed: int = 0, before: Callable[[], None] = flush
) -> None:
    """Each pending run timed until it has `repeat` runs, in rounds: each round runs
    every one once, one at a time, in a fresh random order (`seed`, then one draw per
    round), as `execute` times placements (`measure.execute_many`): what drifts over
    the probe (the machine's load, an engine's memory) falls on all alike, and no
    subtree is timed only right after itself, with its inputs hot in the caches, as it
    never is inside a query or a placement. Each timed run is preceded by `before`
    (`caches.before`: by default the caches flushed). An engine failing on a later run
    (it ran before) loses its times at that node, with the reason in `failed`."""
    rng = random.Random(seed)
    todo = list(pending)
    for _ in range(repeat):
        todo = [p for p in todo if p.engine in p.node.runs]
        order = [p for p in todo if len(p.node.runs[p.engine]) < repeat]
        rng.shuffle(order)
        for p in order:
            try:
                before()
                start = time.perf_counter_ns()
                p.run()
                took = (time.perf_counter_ns() - start) / 1e6
            except PlacementError:
                raise
            except Exception as exc:  # noqa: BLE001 - an engine's failure is a finding
                del p.node.runs[p.engine]
                p.node.failed[p.engine] = f"{type(exc).__name__}: {first_line(exc)}"
                continue
            p.node.runs[p.engine].append(took)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""
