"""The options of `solve` (`placement_cli.algorithms.solve.driver`): a frozen dataclass checked on
construction, so that running the stage does not import pydantic."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

import orjson

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """Options of `solve`. Only `time_limit` (and the memory bound) are resources;
    every budget that can change the assignment is counted in steps, so results do not
    depend on machine speed unless a limit is hit. Checked on construction (a
    `ValueError` naming every bad field); a frozen dataclass, not a pydantic model, so
    that running a stage does not import pydantic.

    >>> SolveOptions(time_limit=2, pins=[["x", "a"]]).time_limit, SolveOptions(pins=[["x", "a"]]).pins
    (2.0, (('x', 'a'),))
    >>> SolveOptions(method="fast", max_rounds=-1)
    Traceback (most recent call last):
    ...
    ValueError: invalid solve options: method: expected one of auto, exact, heuristic, got 'fast'; max_rounds: expected an integer >= 0, got -1
    """

    method: Literal["auto", "exact", "heuristic"] = "auto"
    time_limit: float = 5.0
    memory_limit_mb: int | None = 2048  # MB the searches may grow the process by (None: unbounded)
    max_rounds: int = 100  # forward/backward rounds of the fixpoint (0: forward pass only)
    max_backtracks: int = 10_000  # backtracks before the seed gives up
    csp_node_limit: int = 5_000  # B&B nodes per CSP solve of a loop (>= 1)
    prove_max_blocks: int = 200  # live blocks up to which B&B tries to prove optimality
    prove_node_limit: int = 200_000  # nodes of that proof attempt
    pins: tuple[Pair, ...] = ()  # (block id, target): the block must run there
    forbids: tuple[Pair, ...] = ()  # (block id, target): the block must not run there
    # (block id, target) of an earlier solve: the first incumbent
    warm_start: tuple[Pair, ...] | None = None

    def __post_init__(self) -> None:
        bad: list[str] = []
        if self.method not in ("auto", "exact", "heuristic"):
            bad.append(f"method: expected one of auto, exact, heuristic, got {self.method!r:.40}")
        t = self.time_limit
        if isinstance(t, bool) or not isinstance(t, int | float) or not t >= 0:
            bad.append(f"time_limit: expected a number >= 0, got {t!r:.40}")
        else:
            object.__setattr__(self, "time_limit", float(t))
        m = self.memory_limit_mb
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            bad.append(f"memory_limit_mb: expected an integer >= 1 or None, got {m!r:.40}")
        for name, low in (
            ("max_rounds", 0),
            ("max_backtracks", 0),
            ("csp_node_limit", 1),
            ("prove_max_blocks", 0),
            ("prove_node_limit", 0),
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                bad.append(f"{name}: expected an integer >= {low}, got {v!r:.40}")
        for name in ("pins", "forbids", "warm_start"):
            v = getattr(self, name)
            if v is None and name == "warm_start":
                continue
            try:
                pairs = tuple((a, b) for a, b in v)
                ok = all(isinstance(a, str) and isinstance(b, str) for a, b in pairs)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                bad.append(f"{name}: expected (block id, target) pairs of strings")
            else:
                object.__setattr__(self, name, pairs)
        if bad:
            raise ValueError("invalid solve options: " + "; ".join(bad))


def constraints_json(opts: SolveOptions | None) -> dict[str, Any] | None:
    """What a solve section records of the constraints it was solved under: the pins
    (block -> target, in the order given), the forbids, and the warm start by what it
    provided (`warm_start_id`, never the path of the file it came from, so the bytes do
    not depend on where that file was); None when there are none. `optimal` in that
    section means optimal under them.

    >>> constraints_json(SolveOptions(pins=(("x", "a"),), forbids=(("y", "b"),)))
    {'pins': {'x': 'a'}, 'forbids': [{'block': 'y', 'target': 'b'}], 'warm_start': None}
    >>> constraints_json(SolveOptions()) is None
    True
    """
    if opts is None or not (opts.pins or opts.forbids or opts.warm_start is not None):
        return None
    return {
        "pins": dict(opts.pins),
        "forbids": [{"block": b, "target": t} for b, t in opts.forbids],
        "warm_start": None if opts.warm_start is None else warm_start_id(opts.warm_start),
    }


def warm_start_id(pairs: tuple[Pair, ...]) -> str:
    """A warm start's identity: the SHA-256 of the assignment it provided (block ->
    target, as JSON with sorted keys), whatever file it was read from.

    >>> warm_start_id((("b", "y"), ("a", "x"))) == warm_start_id((("a", "x"), ("b", "y")))
    True
    >>> warm_start_id((("a", "x"),))[:15]
    'sha256:bac82bca'
    """
    canonical = orjson.dumps(dict(pairs), option=orjson.OPT_SORT_KEYS)
    return "sha256:" + hashlib.sha256(canonical).hexdigest()
