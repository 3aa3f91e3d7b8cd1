"""Read-only views of a checked plan document, shaped like the models of
`placement_cli.formats.plan` (`plan.blocks[i].terminator.successors[k].block`), without pydantic.

The load path checks a parsed plan with `placement_cli.formats.plancheck` (which accepts exactly
what the strict models accept) and keeps the checked dicts; these views give code that
reads a plan field by field (normalising, fusion, `explain`) the models' attribute names
and defaults over those dicts. A field absent from the document reads as the model's
default. Values are what the document holds (a cost may be an `int`; the models would
hold the equal `float`).

`model_construct` and `model_copy` mirror the pydantic methods of the same names, so code
that derives a new plan from a checked one (fusion) builds views the same way.

>>> p = Plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x", "terminator": {"kind": "return"}}]})
>>> p.blocks[0].id, p.blocks[0].params, p.blocks[0].terminator.kind, p.entry
('x', [], 'return', None)
>>> p == Plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x", "params": [], "terminator": {"kind": "return"}}]})
True
"""

from __future__ import annotations

from typing import Any, ClassVar

_LIST = object()  # default marker: a fresh empty list
_DICT = object()  # default marker: a fresh empty dict


class _View:
    __slots__ = ("_d",)
    _fields: ClassVar[dict[str, Any]] = {}  # name -> default (required fields: absent)

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data

    @classmethod
    def model_construct(cls, **values: Any) -> Any:
        """A view of the given field values (nothing is checked, as in pydantic)."""
        return cls(values)

    def model_copy(self, update: dict[str, Any] | None = None) -> Any:
        """A view of a copy with some fields replaced."""
        data = dict(self._d)
        data.update(update or {})
        return type(self)(data)

    def _get(self, name: str) -> Any:
        got = self._d.get(name, _LIST)
        if got is _LIST:
            default = self._fields[name]
            return [] if default is _LIST else {} if default is _DICT else default
        return got

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d!r:.200})"


def _wrap(cls: type[_View], value: Any) -> Any:
    # Only plan data is wrapped: a view, or a block fusion built with the same fields
    # (`fuse.FusedBlock`), is already read by attribute.
    return cls(value) if type(value) is dict else value


class Statement(_View):
    __slots__ = ()
    _fields: ClassVar[dict[str, Any]] = {"text": None, "cost": None}

    @property
    def text(self) -> str | None:
        return self._d.get("text")

    @property
    def cost(self) -> dict[str, float | None]:
        return self._d["cost"]  # type: ignore[no-any-return]


class Edge(_View):
    __slots__ = ()
    _fields: ClassVar[dict[str, Any]] = {"block": None, "args": _LIST, "transitions": None}

    @property
    def block(self) -> str:
        return self._d["block"]  # type: ignore[no-any-return]

    @property
    def args(self) -> list[str]:
        return self._d.get("args") or []

    @property
    def transitions(self) -> dict[str, dict[str, float]] | str | None:
        return self._d.get("transitions")


class Terminator(_View):
    __slots__ = ("_succ",)
    _fields: ClassVar[dict[str, Any]] = {"kind": None, "successors": _LIST, "cost": None}

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data
        self._succ: list[Edge] | None = None

    @property
    def kind(self) -> str:
        return self._d["kind"]  # type: ignore[no-any-return]

    @property
    def successors(self) -> list[Edge]:
        got = self._succ
        if got is None:  # built once: fusion reads them block by block
            got = self._succ = [
                e if isinstance(e, Edge) else Edge(e) for e in self._d.get("successors", ())
            ]
        return got

    @property
    def cost(self) -> dict[str, float | None] | None:
        return self._d.get("cost")


class Block(_View):
    __slots__ = ("_term",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data
        self._term: Terminator | None = None

    _fields: ClassVar[dict[str, Any]] = {
        "id": None,
        "params": _LIST,
        "statements": _LIST,
        "domain": None,
        "cost": None,
        "paths": _LIST,
        "premium": None,
        "terminator": None,
    }

    @property
    def id(self) -> str:
        return self._d["id"]  # type: ignore[no-any-return]

    @property
    def params(self) -> list[str]:
        return self._d.get("params") or []

    @property
    def statements(self) -> list[Statement]:
        return [_wrap(Statement, s) for s in self._d.get("statements", ())]

    @property
    def domain(self) -> list[str] | None:
        return self._d.get("domain")

    @property
    def cost(self) -> dict[str, float] | None:
        return self._d.get("cost")

    @property
    def paths(self) -> list[str]:
        return self._get("paths")  # type: ignore[no-any-return]

    @property
    def premium(self) -> dict[str, float] | None:
        return self._d.get("premium")

    @property
    def terminator(self) -> Terminator:
        got = self._term
        if got is None:
            t = self._d["terminator"]
            got = self._term = t if isinstance(t, Terminator) else Terminator(t)
        return got


class Plan(_View):
    __slots__ = ("_blocks",)
    _fields: ClassVar[dict[str, Any]] = {
        "version": None,
        "name": None,
        "targets": None,
        "entry": None,
        "transitions": None,
        "matrices": _DICT,
        "paths": _DICT,
        "blocks": None,
        "provenance": None,
        "lower": None,
    }

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data
        self._blocks: list[Block] | None = None

    @property
    def version(self) -> int:
        return self._d["version"]  # type: ignore[no-any-return]

    @property
    def name(self) -> str | None:
        return self._d.get("name")

    @property
    def targets(self) -> list[str]:
        return self._d["targets"]  # type: ignore[no-any-return]

    @property
    def entry(self) -> str | None:
        return self._d.get("entry")

    @property
    def transitions(self) -> dict[str, dict[str, float]] | None:
        return self._d.get("transitions")

    @property
    def matrices(self) -> dict[str, dict[str, dict[str, float]]]:
        return self._get("matrices")  # type: ignore[no-any-return]

    @property
    def paths(self) -> dict[str, list[str]]:
        return self._get("paths")  # type: ignore[no-any-return]

    @property
    def blocks(self) -> list[Block]:
        # Built once: fusion and normalising index into it block by block.
        if self._blocks is None:
            self._blocks = [_wrap(Block, b) for b in self._d["blocks"]]
        return self._blocks

    @property
    def provenance(self) -> dict[str, Any] | None:
        return self._d.get("provenance")

    @property
    def lower(self) -> dict[str, Any] | None:
        return self._d.get("lower")


def plan_document(plan: Any) -> dict[str, Any]:
    """The plan as checked data: a checked document as it is, a `planview.Plan` its
    document, a pydantic `model.Plan` dumped (library callers)."""
    if isinstance(plan, dict):
        return plan
    if isinstance(plan, Plan):
        return plan._d
    return plan.model_dump()  # type: ignore[no-any-return]
