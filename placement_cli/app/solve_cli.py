"""`solve`'s command-line options: `--pin`/`--forbid`/`--pins FILE` and `--warm-start`
read into a `SolveOptions` (the parsing is apart from the solver it configures); the
options themselves are declared on `SolveOptions`' fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from placement_cli.algorithms.solve.options import Pair, SolveOptions
from placement_cli.app.values import model_values
from placement_cli.core.errors import InputError, Problem, UsageError
from placement_cli.core.io import read_document, source_name


def _pair(text: str, flag: str) -> Pair:
    block, eq, target = text.rpartition("=")
    if not eq or not block or not target:
        raise UsageError(f"{flag} {text!r:.80}: expected BLOCK=TARGET")
    return block, target


def _pins_from_file(path: str) -> tuple[list[Pair], list[Pair]]:
    """A pins file: a mapping BLOCK: TARGET (pins), or a list whose items are
    "BLOCK=TARGET" strings (pins) or mappings {block, target, forbid: true|false}."""
    doc = read_document(path)
    source = source_name(path)
    pins: list[Pair] = []
    forbids: list[Pair] = []
    problems: list[Problem] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(k, str) and isinstance(v, str):
                pins.append((k, v))
            else:
                problems.append(Problem(f"{k!r:.60}", "expected BLOCK: TARGET (two strings)"))
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            if isinstance(item, str) and "=" in item.strip("="):
                pins.append(_pair(item, "pin"))
            elif (
                isinstance(item, dict)
                and set(item) <= {"block", "target", "forbid"}
                and isinstance(item.get("block"), str)
                and isinstance(item.get("target"), str)
                and isinstance(item.get("forbid", False), bool)
            ):
                (forbids if item.get("forbid") else pins).append((item["block"], item["target"]))
            else:
                problems.append(
                    Problem(f"[{i}]", 'expected "BLOCK=TARGET" or {block, target, forbid}')
                )
    else:
        problems.append(Problem("", "a pins file is a mapping BLOCK: TARGET or a list of pins"))
    if problems:
        raise InputError(problems, source)
    return pins, forbids


def _warm_pairs(path: str) -> tuple[Pair, ...]:
    """The assignment of an earlier solve, fuse or islands artifact, as (block, target)."""
    doc = read_document(path)
    source = source_name(path)
    sec = doc.get("solve") if isinstance(doc, dict) else None
    amap = sec.get("assignment") if isinstance(sec, dict) else None
    if not isinstance(amap, dict):
        raise InputError(
            [
                Problem(
                    "solve.assignment",
                    "a warm start needs an artifact of solve, fuse or islands with an assignment",
                )
            ],
            source,
        )
    if sec.get("status", "ok") != "ok" or not amap:  # type: ignore[union-attr]
        raise InputError(
            [Problem("solve.status", "the earlier solve found no assignment to start from")], source
        )
    bad = [k for k, v in amap.items() if not isinstance(v, str)]
    if bad:
        raise InputError(
            [Problem(f"solve.assignment.{bad[0]!r:.60}", "expected a target name")], source
        )
    return tuple(amap.items())


def solve_options(v: Mapping[str, Any]) -> SolveOptions:
    """`SolveOptions` from a command's values: `--method` and `--time-limit` as given,
    `--pin`/`--forbid BLOCK=TARGET` (repeatable), `--pins FILE` and `--warm-start
    ARTIFACT` read into pins, forbids and the warm start. Malformed flags are usage
    errors (exit 2); unreadable or invalid files are reported like any input. Whether
    the blocks and targets exist is checked against the plan when solving (exit 3).

    >>> o = solve_options({"method": "exact", "pin": ["x=a", "y=b"], "forbid": ["x=b"]})
    >>> o.method, o.pins, o.forbids
    ('exact', (('x', 'a'), ('y', 'b')), (('x', 'b'),))
    """
    pins = [_pair(x, "--pin") for x in v.get("pin") or ()]
    forbids = [_pair(x, "--forbid") for x in v.get("forbid") or ()]
    if v.get("pins_file") is not None:
        more_pins, more_forbids = _pins_from_file(v["pins_file"])
        pins += more_pins
        forbids += more_forbids
    warm = _warm_pairs(v["warm_start"]) if v.get("warm_start") is not None else None
    return model_values(SolveOptions, v, pins=tuple(pins), forbids=tuple(forbids), warm_start=warm)
