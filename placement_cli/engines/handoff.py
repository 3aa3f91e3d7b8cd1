"""Handing a result from one engine to another, and timing it (`calibrate measure`).

A hand-off is what a cut costs at run time on top of the fragments: the sending
engine's result, already Arrow (its fragment's time, and the probe's time of its
subtree, include producing it), cast to the canonical schema (`connect.canonical`),
made a table of the receiving engine (`Session.register`), which then reads every value
of it (`Session.scan`). Each engine takes Arrow in its own way (`engines/backends/`);
the route is the one the fragment runner takes.

`hand_off(conns, src, dst, table, name)` is the one entry point `execute` uses too: it
takes the result (an Arrow table, or the name of a table on `src`) and returns the name
it has on `dst` and the seconds the hand-off took.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

from placement_cli.engines.connect import Connections, Settings, Sources, canonical
from placement_cli.engines.registry import calibration_rows

_names = itertools.count(1)
WIDTHS = (16, 64, 256)


def calibration_connections(sources: Sources, settings: Settings | None = None) -> Connections:
    """Connections for measuring: the engines that copy the `db` file's tables get none
    (copying TPC-H SF 0.1 takes seconds, and no hand-off of generated rows reads them)."""
    return Connections(sources, settings or Settings(), tables=False)


def hand_off(
    conns: Connections,
    src: str,
    dst: str,
    table: Any,
    name: str | None = None,
    limit: int | None = None,
) -> tuple[str, float]:
    """Make `table` a table of `dst`: an Arrow table (a result already fetched from
    `src`), or the name of a table on `src` (fetched here, its first `limit` rows, and
    timed). Returns the name it has on `dst` (`name`, or a fresh `_placement_hN`) and
    the seconds it took. A table of that name on `dst` is replaced."""
    name = name or f"_placement_h{next(_names)}"
    t0 = time.perf_counter()
    if isinstance(table, str):
        table = conns.session(src).fetch(table, limit)
    conns.session(dst).register(name, canonical(table))
    return name, time.perf_counter() - t0


def time_hand_off(
    conns: Connections, src: str, dst: str, sent: str, rows: int, limit: bool = False
) -> float:
    """Seconds of one hand-off of table `sent` (`rows` rows; with `limit`, its first
    `rows` rows) from `src` to `dst`, as a cut costs at run time: the sender's result,
    fetched as Arrow first and not timed (a fragment's own time includes producing its
    result; the probe times each subtree that way), is made a table of `dst`, which
    reads every value of it (timed); then it is dropped from `dst`. The same work
    `execute` times for each cut (`measure.hand_off`)."""
    got = f"_placement_dst{next(_names)}"
    table = conns.session(src).fetch(sent, rows if limit else None)
    t0 = time.perf_counter()
    name, _ = hand_off(conns, src, dst, table, got)
    n = conns.session(dst).scan(name, ["id", "pad"])
    dt = time.perf_counter() - t0
    conns.session(dst).drop(name)
    if n != rows:
        raise RuntimeError(f"{dst} received {n} rows of the {rows} {src} sent")
    return dt


def measure(
    conns: Connections,
    pairs: Sequence[tuple[str, str]],
    rows: Sequence[int] | None = None,
    widths: Sequence[int] = WIDTHS,
    repeat: int = 5,
    warmup: int = 1,
    progress: Callable[[str, str, int, int, list[float]], None] | None = None,
) -> list[tuple[str, str, int, int, list[float]]]:
    """`(src, dst, rows, width, [ms of each timed run])` for every pair, width and row
    count, in that order (pairs as given); `rows` None: `registry.calibration_rows` of
    each pair.

    Per pair and width, the sender's rows are made first (an engine whose LIMIT stops
    early and copies nothing, `Engine.free_limit`, makes one table of the largest count,
    handed off through a limit; the others one table per count, as a `LIMIT` makes
    DuckDB's export to Arrow several times slower and the postgres route need not push
    it down), then measured in
    rounds: each round hands off every row count once. A burst of load from elsewhere on
    the machine then lands on one run of several points rather than on every run of one
    point, which the median of its runs would keep. Before the rounds, `warmup` untimed
    hand-offs of the largest count: the first hand-offs of a width were up to twice as
    slow as the later ones (memory the engines allocate once), and the largest touches
    all of it."""
    out = []
    for src, dst in pairs:
        sender = conns.session(src)
        for w in widths:
            counts = list(rows or calibration_rows(src, dst))
            one = sender.engine.free_limit
            sent = [f"_placement_src{next(_names)}" for _ in counts]
            if one:
                sent = [sent[0]] * len(counts)
            made: list[str] = []
            try:
                for name, r in zip(sent, counts, strict=True):
                    if name not in made:
                        made.append(name)
                        sender.generate(name, max(counts) if one else r, w)
                big = max(range(len(counts)), key=counts.__getitem__)
                for _ in range(warmup):
                    time_hand_off(conns, src, dst, sent[big], counts[big], one)
                runs: list[list[float]] = [[] for _ in counts]
                for _ in range(repeat):
                    for i, (name, r) in enumerate(zip(sent, counts, strict=True)):
                        runs[i].append(time_hand_off(conns, src, dst, name, r, one) * 1000.0)
            finally:
                for name in made:
                    sender.drop(name)
            for r, ms in zip(counts, runs, strict=True):
                out.append((src, dst, r, w, ms))
                if progress is not None:
                    progress(src, dst, r, w, ms)
    return out
