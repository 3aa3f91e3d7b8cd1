"""Target profiles: what each target runs, at what cost, under which capability rules.

The built-in `hashql` profile reproduces the reference implementation's three targets
(interpreter, postgres, embedding) rule by rule; any other set of targets is a profile
file (`--targets FILE`) or a `profile:` mapping inside the body file.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.problems import validation_problems
from placement_cli.frontends.lower.types import Types

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
    # the targets that serve the path natively; empty: no storage (a synthesized field)
    origin: list[str]
    # information units [lower, upper]; a null upper bound is unbounded
    size: list[Cost | None] = Field(default_factory=lambda: [1.0, 1.0], min_length=2, max_length=2)  # type: ignore[arg-type]
    type: Any = "unknown"
    jsonb: bool = False  # any sub-path below it is this path (else a sub-path is unresolvable)


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
    # nominal types: an opaque type of this name whose representation the body does not
    # give (`{opaque: NAME}`) has this one
    nominal: dict[str, Any] = Field(default_factory=dict)
    # a vertex path the table does not know is a warning (it reads every path), not an
    # error; unset: open exactly when the profile declares no paths
    open_vertex: bool | None = None


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

# The compiler's nominal types (newtypes) as its MIR printer names them, with their
# representations: libs/@local/hashql/core/src/module/std_lib/ in hashintel/hash.
_ENTITY = "::graph::types::knowledge::entity::"
_ONTOLOGY = "::graph::types::ontology::"
_UUID = {"opaque": "::core::uuid::Uuid"}
_WEB_ID = {"opaque": "::graph::types::principal::actor_group::web::WebId"}


def _op(name: str) -> dict[str, str]:
    return {"opaque": _ENTITY + name}


def _option(t: Any) -> dict[str, Any]:
    """`Option<T> = Some<T> | None` (core/option.rs: `newtype Some<T> = T`, `None = Null`)."""
    return {
        "union": [
            {"opaque": {"name": "::core::option::Some", "of": t}},
            {"opaque": "::core::option::None"},
        ]
    }


_NOMINAL: dict[str, Any] = {
    "::core::uuid::Uuid": "string",
    "::core::url::Url": "string",
    "::core::option::None": "unit",
    "::graph::types::principal::actor_group::ActorGroupEntityUuid": _UUID,
    "::graph::types::principal::actor_group::web::WebId": {
        "opaque": "::graph::types::principal::actor_group::ActorGroupEntityUuid"
    },
    "::graph::ontology::OntologyTypeVersion": "string",
    _ONTOLOGY + "BaseUrl": {"opaque": "::core::url::Url"},
    _ONTOLOGY + "VersionedUrl": {
        "struct": {
            "base_url": {"opaque": _ONTOLOGY + "BaseUrl"},
            "version": {"opaque": "::graph::ontology::OntologyTypeVersion"},
        }
    },
    _ENTITY + "EntityUuid": _UUID,
    _ENTITY + "DraftId": _UUID,
    _ENTITY + "EntityEditionId": _UUID,
    _ENTITY + "EntityId": {
        "struct": {
            "web_id": _WEB_ID,
            "entity_uuid": _op("EntityUuid"),
            "draft_id": _option(_op("DraftId")),
        }
    },
    _ENTITY + "EntityRecordId": {
        "struct": {"entity_id": _op("EntityId"), "edition_id": _op("EntityEditionId")}
    },
    _ENTITY + "TemporalInterval": "unknown",
    _ENTITY + "EntityTemporalMetadata": {
        "struct": {
            "decision_time": _op("TemporalInterval"),
            "transaction_time": _op("TemporalInterval"),
        }
    },
    _ENTITY + "Confidence": "float",
    _ENTITY + "InferredEntityProvenance": "unknown",
    _ENTITY + "EntityEditionProvenance": "unknown",
    _ENTITY + "EntityProvenance": {
        "struct": {
            "inferred": _op("InferredEntityProvenance"),
            "edition": _op("EntityEditionProvenance"),
        }
    },
    _ENTITY + "PropertyProvenance": "unknown",
    _ENTITY + "PropertyObjectMetadata": "unknown",
    _ENTITY + "EntityMetadata": {
        "struct": {
            "record_id": _op("EntityRecordId"),
            "temporal_versioning": _op("EntityTemporalMetadata"),
            "entity_type_ids": {"list": {"opaque": _ONTOLOGY + "VersionedUrl"}},
            "archived": "bool",
            "provenance": _op("EntityProvenance"),
            "confidence": _option(_op("Confidence")),
            "properties": _op("PropertyObjectMetadata"),
        }
    },
    _ENTITY + "LinkData": {
        "struct": {
            "left_entity_id": _op("EntityId"),
            "right_entity_id": _op("EntityId"),
            "left_entity_confidence": _option(_op("Confidence")),
            "left_entity_provenance": _op("PropertyProvenance"),
            "right_entity_confidence": _option(_op("Confidence")),
            "right_entity_provenance": _op("PropertyProvenance"),
        }
    },
    _ENTITY + "EntityEncodings": {"struct": {"vectors": "unknown"}},
    # Entity<T>: the properties are the type parameter T (unknown here)
    _ENTITY + "Entity": {
        "struct": {
            "properties": "unknown",
            "link_data": _option(_op("LinkData")),
            "metadata": _op("EntityMetadata"),
            "encodings": _op("EntityEncodings"),
        }
    },
}

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
    # A vertex path the table does not resolve is, as in the compiler, an unresolvable
    # access (`resolve` returns None, the access inserts every path): a warning naming the
    # nearest declared path, and only the interpreter can run the statement.
    "open_vertex": True,
    # The compiler's entity paths (`EntityPath`, resolve, origin, estimate_size, is_jsonb in
    # hashintel/hash libs/@local/hashql/mir/src/pass/execution/traversal/entity.rs; the
    # newest stored versions read, commits 0c6d03a5db3ffbbf2a9b061614b0e999dfdd4b9d,
    # 8d6d7841a7b3daa3dcfa70a0ab8ec38088403a2a and b88c8f617acc93ef50ee9eb8e0510834046c850f,
    # have the same 25 paths as 18491b4e9ce16455854681f83d699ce1d4954a83) with
    # the types of its standard library (libs/@local/hashql/core/src/module/std_lib/graph/
    # types/knowledge/entity.rs, .../principal/actor_group/{mod,web}.rs, .../ontology/mod.rs,
    # core/{uuid,url,option}.rs). Composites (record_id, entity_id, temporal_versioning)
    # swallow their children; `link_data.*_entity_id.draft_id` is synthesized (always
    # none): no storage, no origin, nothing to fetch. Any other access (the whole vertex,
    # `metadata`, `link_data`, a sub-path below a non-JSONB path) is unresolvable and
    # reads every path, as in the compiler.
    "paths": {
        "properties": {"origin": _P, "size": [0, INF], "jsonb": True},
        "metadata.record_id": {"origin": _P, "size": [4, 4], "type": _op("EntityRecordId")},
        "metadata.record_id.entity_id": {"origin": _P, "size": [3, 3], "type": _op("EntityId")},
        "metadata.record_id.entity_id.web_id": {"origin": _P, "size": [1, 1], "type": _WEB_ID},
        "metadata.record_id.entity_id.entity_uuid": {
            "origin": _P,
            "size": [1, 1],
            "type": _op("EntityUuid"),
        },
        "metadata.record_id.entity_id.draft_id": {
            "origin": _P,
            "size": [1, 1],
            "type": _option(_op("DraftId")),
        },
        "metadata.record_id.edition_id": {
            "origin": _P,
            "size": [1, 1],
            "type": _op("EntityEditionId"),
        },
        "metadata.temporal_versioning": {
            "origin": _P,
            "size": [4, 4],
            "type": _op("EntityTemporalMetadata"),
        },
        "metadata.temporal_versioning.decision_time": {
            "origin": _P,
            "size": [2, 2],
            "type": _op("TemporalInterval"),
        },
        "metadata.temporal_versioning.transaction_time": {
            "origin": _P,
            "size": [2, 2],
            "type": _op("TemporalInterval"),
        },
        "metadata.entity_type_ids": {
            "origin": _P,
            "size": [1, INF],
            "type": {"list": {"opaque": _ONTOLOGY + "VersionedUrl"}},
        },
        "metadata.archived": {"origin": _P, "size": [1, 1], "type": "bool"},
        "metadata.confidence": {"origin": _P, "size": [1, 1], "type": _option(_op("Confidence"))},
        "metadata.provenance.inferred": {
            "origin": _P,
            "size": [3, 5],
            "type": _op("InferredEntityProvenance"),
            "jsonb": True,
        },
        "metadata.provenance.edition": {
            "origin": _P,
            "size": [3, 20],
            "type": _op("EntityEditionProvenance"),
            "jsonb": True,
        },
        # PropertyMetadata: properties / 4, so unbounded with the full properties range
        "metadata.properties": {
            "origin": _P,
            "size": [0, INF],
            "type": _op("PropertyObjectMetadata"),
            "jsonb": True,
        },
        **{
            f"link_data.{side}_entity_id.{leaf}": spec
            for side in ("left", "right")
            for leaf, spec in (
                ("web_id", {"origin": _P, "size": [1, 1], "type": _WEB_ID}),
                ("entity_uuid", {"origin": _P, "size": [1, 1], "type": _op("EntityUuid")}),
                ("draft_id", {"origin": [], "size": [0, 0], "type": _option(_op("DraftId"))}),
            )
        },
        **{
            f"link_data.{side}_entity_{leaf}": spec
            for side in ("left", "right")
            for leaf, spec in (
                ("confidence", {"origin": _P, "size": [1, 1], "type": _option(_op("Confidence"))}),
                (
                    "provenance",
                    {
                        "origin": _P,
                        "size": [0, 10],
                        "type": _op("PropertyProvenance"),
                        "jsonb": True,
                    },
                ),
            )
        },
        "encodings.vectors": {"origin": _E, "size": [3072, 3072]},
        # Two creation columns of `entity_ids`, added after every stored entity.rs version:
        # the eval crate's filter reports compile them to `"entity_ids"."created_by_id"` and
        # `"entity_ids"."created_at_transaction_time"` inside a postgres island entered at
        # bb0 (libs/@local/hashql/eval/tests/ui/postgres/filter/
        # created_by_id_column_equality.snap at d953e68351e8598844af81d51e72f0214d3b2d22,
        # created_at_column_comparison.snap at 5c276cd60bfdfffee081501e10fe44470d245dfc).
        # Plain columns: a UUID and one timestamp, one unit each; their types are not
        # printed there (`?`). Only additions, so no older table is kept beside this one.
        "metadata.provenance.created_by_id": {"origin": _P, "size": [1, 1]},
        "metadata.provenance.created_at_transaction_time": {"origin": _P, "size": [1, 1]},
    },
    "nominal": _NOMINAL,
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
    path_jsonb: tuple[bool, ...] = ()  # sub-paths below it are the path itself

    @property
    def n(self) -> int:
        return len(self.names)


def nearest_path(rel: str, known: list[str]) -> str | None:
    """The declared vertex path nearest to an unknown one: most trailing segments in
    common first (a field moved under another composite keeps its tail), then the
    spelling (difflib's ratio); None when nothing shares a segment or looks alike.

    >>> nearest_path("id.entity_id.entity_uuid", ["link_data.left_entity_id.entity_uuid",
    ...     "metadata.record_id.entity_id.entity_uuid"])
    'metadata.record_id.entity_id.entity_uuid'
    >>> nearest_path("metadata.archivd", ["metadata.archived", "metadata.confidence"])
    'metadata.archived'
    """
    segs = rel.split(".")
    best: tuple[int, float, str] | None = None
    for k in known:
        ks = k.split(".")
        tail = 0
        while tail < min(len(segs), len(ks)) and segs[-1 - tail] == ks[-1 - tail]:
            tail += 1
        ratio = difflib.SequenceMatcher(None, rel, k).ratio()
        if tail == 0 and ratio < 0.6:
            continue
        key = (tail, ratio, k)
        if best is None or key[:2] > best[:2]:
            best = key
    return None if best is None else best[2]


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
    raw_probs: list[tuple[str, str]] = []
    checker = Types({}, raw_probs, nominal=prof.nominal)
    for name, spec in prof.nominal.items():
        checker.parse(spec, f"{prefix}.nominal.{name}")
    if raw_probs:  # (path types may name the body file's types: checked with the body)
        raise InputError([Problem(p.lstrip("."), m) for p, m in raw_probs])
    return Compiled(
        prof,
        names,
        tuple(prof.targets),
        fb,
        tuple(over),
        tuple(pnames),
        tuple(porig),
        tuple(psize),
        tuple(spec.jsonb for spec in prof.paths.values()),
    )
