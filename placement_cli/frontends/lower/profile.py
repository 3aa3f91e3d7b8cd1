"""Target profiles: what each target runs, at what cost, under which capability rules.

The built-in `hashql` profile reproduces the reference implementation's three targets
(interpreter, postgres, embedding) rule by rule; any other set of targets is a profile
file (`--targets FILE`) or a `profile:` mapping inside the body file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from placement_cli.core.errors import InputError, Problem

Cost = Annotated[float, Field(ge=0)]
StatementKind = Literal["load", "unary", "binary", "aggregate", "apply", "input", "storage", "nop"]
TerminatorKind = Literal["goto", "switch", "return", "unreachable", "graph_read"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


class TargetRules(_Strict):
    """One target's capabilities. A statement or terminator kind missing from the cost
    tables is unsupported on the target."""

    name: str = Field(min_length=1)
    statements: dict[StatementKind, Cost] = Field(default_factory=dict)
    terminators: dict[TerminatorKind, Cost] = Field(default_factory=dict)
    closures: bool = False  # may build closure aggregates
    calls: bool = False  # may run `apply`
    constants: Literal["all", "primitive", "none"] = "all"  # function pointers are not primitive
    arguments: Literal["full", "native", "none"] = "full"  # how the argument locals are read
    env_fields: bool = False  # under `native`: env.N readable when field N is representable
    equality_safety: bool = False  # `==`/`!=` need jsonb-equality-safe operand types
    serialization_safety: bool = False  # every value it defines must be serialization-safe
    enterable: bool = True  # may be entered from another target
    loops: bool = True  # may run inside a loop (an SCC or a self-loop)
    effects: bool = False  # runs effectful terminators (graph_read)
    premium_multiplier: Cost = 1.0


class PathSpec(_Strict):
    origin: list[str] = Field(min_length=1)
    # information units [lower, upper]; a null upper bound is unbounded
    size: list[Cost | None] = Field(default_factory=lambda: [1.0, 1.0], min_length=2, max_length=2)  # type: ignore[arg-type]
    type: Any = "unknown"


class Profile(_Strict):
    name: str = Field(min_length=1)
    targets: list[TargetRules] = Field(min_length=1, max_length=64)
    fallback: str | None = None  # reachable from everywhere it is in the successor's domain
    transfer_unit: Cost = 1.0  # cost per information unit live across an edge
    overhead: dict[str, dict[str, Cost]] = Field(default_factory=dict)  # fixed switch cost per pair
    estimate: Literal["midpoint", "lower", "upper"] = (
        "midpoint"  # how a size range becomes a number
    )
    paths: dict[str, PathSpec] = Field(
        default_factory=dict
    )  # vertex paths (relative to the vertex)


_ALL_STMT = {
    "load": 8,
    "unary": 8,
    "binary": 8,
    "aggregate": 8,
    "apply": 8,
    "input": 8,
    "storage": 0,
    "nop": 0,
}
_ALL_TERM = {"goto": 8, "switch": 8, "return": 8, "graph_read": 8, "unreachable": 8}
_P, _E = ["postgres"], ["embedding"]
INF = None

HASHQL: dict[str, Any] = {
    "name": "hashql",
    "fallback": "interpreter",
    "transfer_unit": 1,
    "estimate": "midpoint",
    "targets": [
        {
            "name": "interpreter",
            "statements": _ALL_STMT,
            "terminators": _ALL_TERM,
            "closures": True,
            "calls": True,
            "constants": "all",
            "arguments": "full",
            "effects": True,
        },
        {
            "name": "postgres",
            "statements": {
                "load": 4,
                "unary": 4,
                "binary": 4,
                "aggregate": 4,
                "input": 4,
                "storage": 0,
                "nop": 0,
            },
            "terminators": {"goto": 4, "switch": 4, "return": 4, "unreachable": 4},
            "constants": "primitive",
            "arguments": "native",
            "env_fields": True,
            "equality_safety": True,
            "serialization_safety": True,
            "enterable": False,
            "loops": False,
        },
        {
            "name": "embedding",
            "statements": {"load": 4, "storage": 0, "nop": 0},
            "terminators": {"goto": 4, "switch": 4, "return": 4, "unreachable": 4},
            "constants": "none",
            "arguments": "native",
        },
    ],
    "overhead": {
        "postgres": {"interpreter": 8, "embedding": 12},
        "interpreter": {"embedding": 4},
        "embedding": {"interpreter": 4},
    },
    "paths": {
        "properties": {"origin": _P, "size": [0, INF]},
        "metadata.record_id": {"origin": _P, "size": [4, 4]},
        "metadata.record_id.entity_id": {"origin": _P, "size": [3, 3]},
        "metadata.record_id.entity_id.web_id": {"origin": _P, "size": [1, 1], "type": "string"},
        "metadata.record_id.entity_id.entity_uuid": {
            "origin": _P,
            "size": [1, 1],
            "type": "string",
        },
        "metadata.record_id.entity_id.draft_id": {"origin": _P, "size": [1, 1], "type": "string"},
        "metadata.record_id.edition_id": {"origin": _P, "size": [1, 1], "type": "string"},
        "metadata.temporal_versioning": {"origin": _P, "size": [4, 4]},
        "metadata.temporal_versioning.decision_time": {"origin": _P, "size": [2, 2]},
        "metadata.temporal_versioning.transaction_time": {"origin": _P, "size": [2, 2]},
        "metadata.entity_type_ids": {"origin": _P, "size": [1, INF]},
        "metadata.archived": {"origin": _P, "size": [1, 1], "type": "bool"},
        "metadata.confidence": {"origin": _P, "size": [1, 1], "type": "float"},
        "metadata.provenance.inferred": {"origin": _P, "size": [3, 5]},
        "metadata.provenance.edition": {"origin": _P, "size": [3, 20]},
        "metadata.property_metadata": {"origin": _P, "size": [0, INF]},
        "link_data": {"origin": _P, "size": [0, 10]},
        "encodings.vectors": {"origin": _E, "size": [3072, 3072]},
    },
}

BUILTIN = {"hashql": HASHQL}


@dataclass(frozen=True, slots=True)
class Compiled:
    """A checked profile in indexed form: targets are bit positions."""

    profile: Profile
    names: tuple[str, ...]
    rules: tuple[TargetRules, ...]
    fallback: int  # -1 when none
    overhead: tuple[float, ...]  # n*n, 0 where none
    path_names: tuple[str, ...]
    path_origin: tuple[int, ...]
    path_size: tuple[tuple[float, float], ...]  # upper inf when unbounded

    @property
    def n(self) -> int:
        return len(self.names)


def load_profile(raw: str | dict[str, Any], prefix: str = "profile") -> Compiled:
    """Check a profile (a built-in name or a mapping) and index it.

    >>> p = load_profile("hashql")
    >>> p.names, p.fallback, p.overhead[1 * 3 + 2]
    (('interpreter', 'postgres', 'embedding'), 0, 12.0)
    """
    if isinstance(raw, str):
        if raw not in BUILTIN:
            raise InputError(
                [Problem(prefix, f"unknown built-in profile '{raw}' (known: {', '.join(BUILTIN)})")]
            )
        raw = BUILTIN[raw]
    from placement_cli.core.problems import validation_problems

    try:
        prof = Profile.model_validate(raw)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, prefix + ".")) from None
    probs: list[Problem] = []
    names = tuple(t.name for t in prof.targets)
    index: dict[str, int] = {}
    for i, nm in enumerate(names):
        if nm in index:
            probs.append(Problem(f"{prefix}.targets[{i}].name", f"duplicate target '{nm}'"))
        index.setdefault(nm, i)
    n = len(names)
    fb = -1
    if prof.fallback is not None:
        if prof.fallback not in index:
            probs.append(Problem(f"{prefix}.fallback", f"unknown target '{prof.fallback}'"))
        else:
            fb = index[prof.fallback]
    over = [0.0] * (n * n)
    for s, row in prof.overhead.items():
        if s not in index:
            probs.append(Problem(f"{prefix}.overhead.{s}", f"unknown target '{s}'"))
            continue
        for d, c in row.items():
            if d not in index:
                probs.append(Problem(f"{prefix}.overhead.{s}.{d}", f"unknown target '{d}'"))
            elif d == s and c != 0:
                probs.append(
                    Problem(f"{prefix}.overhead.{s}.{d}", "a same-target switch has no overhead")
                )
            else:
                over[index[s] * n + index[d]] = float(c)
    pnames, porig, psize = [], [], []
    for name, spec in prof.paths.items():
        m = 0
        for j, t in enumerate(spec.origin):
            if t not in index:
                probs.append(Problem(f"{prefix}.paths.{name}.origin[{j}]", f"unknown target '{t}'"))
            else:
                m |= 1 << index[t]
        lo, hi = spec.size
        if lo is None:
            probs.append(
                Problem(f"{prefix}.paths.{name}.size[0]", "the lower bound must be a number")
            )
            lo = 0.0
        if hi is not None and hi < lo:
            probs.append(
                Problem(
                    f"{prefix}.paths.{name}.size", f"upper bound {hi:g} is below lower bound {lo:g}"
                )
            )
        pnames.append(name)
        porig.append(m)
        psize.append((float(lo), math.inf if hi is None else float(hi)))
    if probs:
        raise InputError(probs)
    return Compiled(
        prof, names, tuple(prof.targets), fb, tuple(over), tuple(pnames), tuple(porig), tuple(psize)
    )
