"""The options of `solve` (`placement_cli.algorithms.solve.driver`): a frozen `Struct` checked on
construction, so that running the stage does not import pydantic. It is also the one
declaration of `solve`'s command-line options (`core/option_field.py`): their flags,
help, choices, defaults and bounds."""

# No `from __future__ import annotations`: the fields' flags are built once, with the
# class, rather than compiled from their text wherever the fields are read.
from typing import Annotated, Any, Literal

import msgspec
import orjson

from placement_cli.core.option_field import Flag, check

Pair = tuple[str, str]


class SolveOptions(msgspec.Struct, frozen=True):
    """Options of `solve`. Only `time_limit` (and the memory bound) are resources;
    every budget that can change the assignment is counted in steps, so results do not
    depend on machine speed unless a limit is hit. Checked on construction (a
    `ValueError` naming every bad field); a frozen `Struct`, not a pydantic model, so
    that running a stage does not import pydantic.

    >>> SolveOptions(time_limit=2, pins=[["x", "a"]]).time_limit, SolveOptions(pins=[["x", "a"]]).pins
    (2.0, (('x', 'a'),))
    >>> SolveOptions(method="fast", max_rounds=-1)
    Traceback (most recent call last):
    ...
    ValueError: invalid solve options: method: expected one of auto, exact, heuristic, got 'fast'; max_rounds: expected an integer >= 0, got -1
    """

    method: Annotated[
        Literal["auto", "exact", "heuristic"],
        Flag(
            ("--method",),
            "heuristic: the seed algorithm; exact: proven optimum (or best bound within the "
            "limit); auto: exact first, and the heuristic too when the optimum is not proven "
            "in time.",
            settable=True,
        ),
    ] = "auto"
    time_limit: Annotated[
        float,
        Flag(
            ("--time-limit",),
            "Seconds the exact method (and so the optimality proof) may spend.",
            minimum=0.0,
            settable=True,
        ),
    ] = 5.0
    memory_limit_mb: int | None = 2048  # MB the searches may grow the process by (None: unbounded)
    max_rounds: int = 100  # forward/backward rounds of the fixpoint (0: forward pass only)
    max_backtracks: int = 10_000  # backtracks before the seed gives up
    csp_node_limit: int = 5_000  # B&B nodes per CSP solve of a loop (>= 1)
    prove_max_blocks: int = 200  # live blocks up to which B&B tries to prove optimality
    prove_node_limit: int = 200_000  # nodes of that proof attempt
    # (block id, target): the block must run there
    pins: Annotated[
        tuple[Pair, ...],
        Flag(
            ("--pin",),
            "Run BLOCK on TARGET (repeatable).",
            metavar="BLOCK=TARGET",
            key="pin",
            kind="str",
            repeatable=True,
        ),
    ] = ()
    # (block id, target): the block must not run there; a pins file gives both kinds
    forbids: Annotated[
        tuple[Pair, ...],
        Flag(
            ("--forbid",),
            "Never run BLOCK on TARGET (repeatable).",
            metavar="BLOCK=TARGET",
            key="forbid",
            kind="str",
            repeatable=True,
        ),
        Flag(
            ("--pins",),
            "Pins from a YAML/JSON file: a mapping BLOCK: TARGET, or a list of "
            "BLOCK=TARGET / {block, target, forbid}.",
            metavar="FILE",
            key="pins_file",
            kind="str",
        ),
    ] = ()
    # (block id, target) of an earlier solve: the first incumbent
    warm_start: Annotated[
        tuple[Pair, ...] | None,
        Flag(
            ("--warm-start",),
            "Start from the assignment of an earlier solve/fuse/islands artifact (blocks "
            "matched by id).",
            metavar="ARTIFACT",
            kind="str",
        ),
    ] = None

    def __post_init__(self) -> None:
        bad: list[str] = []  # method and time_limit: as their flags declare (`check`)
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
                msgspec.structs.force_setattr(self, name, pairs)
        check(self, "solve", tuple(bad))


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
    # Lazy: hashlib (~3 ms, measured, with OpenSSL's bindings), only for a warm start;
    # every command that declares the solver's options imports this module.
    import hashlib

    canonical = orjson.dumps(dict(pairs), option=orjson.OPT_SORT_KEYS)
    return "sha256:" + hashlib.sha256(canonical).hexdigest()
