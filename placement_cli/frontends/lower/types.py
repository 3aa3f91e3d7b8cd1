"""The body format's types: parsing, projection, and the safety predicates the
eligibility rules ask about (equality safety, serialization safety, env-field safety).

A type is a small immutable `Ty`; named types (the file's `types` table) are `ref`
nodes resolved on use, so recursive types are finite and every predicate carries a
recursion boundary (a set of pairs or names already being checked).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import orjson

PRIMITIVES = ("int", "float", "bool", "string", "unit")
ALIASES = {"null": "unit", "integer": "int", "number": "float", "str": "string"}
# The names the compiler's MIR printer gives the primitives and collections: a bare opaque
# name close to one of these is a misspelling, not a nominal type.
PRINTED = ("Boolean", "Integer", "Number", "String", "Null", "List", "Dict")


@dataclass(frozen=True, slots=True)
class Ty:
    """kind: prim | unknown | closure | struct | tuple | list | dict | union | opaque | ref."""

    kind: str
    name: str = ""  # prim name, opaque name, ref name
    items: tuple[
        Ty, ...
    ] = ()  # tuple items, union variants, list [elem], dict [key, value], opaque [inner]
    fields: tuple[str, ...] = ()  # struct field names, parallel to items


UNKNOWN = Ty("unknown")
CLOSURE = Ty("closure")


class Types:
    """The named-type table plus every operation that needs to resolve `ref`s.

    >>> ts = Types({"List": {"union": ["unit", {"tuple": ["int", "List"]}]}}, [])
    >>> t = ts.parse("List", "t")
    >>> ts.ser_safe(t), ts.eq_safe(t, t)
    (True, True)
    """

    def __init__(
        self,
        raw: dict[str, Any],
        problems: list[tuple[str, str]],
        prefix: str = "types",
        nominal: dict[str, Any] | None = None,
    ) -> None:
        self.problems = problems
        # the profile's nominal types: opaque name -> representation (parsed on first use)
        self.nominal_raw = nominal or {}
        self._nominal: dict[str, Ty] = {}
        self._nominal_active: set[str] = set()
        self.raw_names = set(raw)
        # Bare opaque names (no `::` path) the profile and the file do not know, with the
        # first place each appears: the compiler prints its nominal types with their module
        # path or by their own short name, so any other bare name is most likely a typo
        # (`Strng`), and an opaque of that name would silently be equality-unsafe.
        self.unknown_names: dict[str, str] = {}
        self._known_short: set[str] | None = None
        self.named: dict[str, Ty] = {}
        self._parsed: dict[Any, Ty] = {}  # a body declares thousands of locals of a few types
        self._ser: dict[
            int, bool
        ] = {}  # by id: parsed types are shared instances, and hashing nested ones is slow
        for name, spec in raw.items():
            self.named[name] = self.parse(spec, f"{prefix}.{name}")
        for name in raw:
            self._check_productive(name, f"{prefix}.{name}")

    def known_short(self) -> set[str]:
        """Bare type names that are not typos: the printed primitives, the file's named
        types, and the last segment of every nominal type the profile describes."""
        got = self._known_short
        if got is None:
            got = {*PRINTED, *PRIMITIVES, *ALIASES, *self.raw_names}
            got.update(n.rsplit("::", 1)[-1] for n in self.nominal_raw)
            self._known_short = got
        return got

    def suggest(self, name: str) -> str | None:
        """The known type name nearest to `name` (None when nothing is close).

        >>> Types({}, []).suggest("Strng")
        'String'
        """
        near = difflib.get_close_matches(name, sorted(self.known_short()), n=1, cutoff=0.6)
        return near[0] if near else None

    def _check_productive(self, name: str, path: str) -> None:
        seen = {name}
        t = self.named.get(name)
        while t is not None and t.kind == "ref":
            if t.name in seen:
                self.problems.append((path, f"type '{name}' is defined only in terms of itself"))
                self.named[name] = UNKNOWN
                return
            seen.add(t.name)
            t = self.named.get(t.name)

    def nominal(self, name: str) -> Ty:
        """The opaque type `name` with the profile's representation (a recursive
        representation is cut where it refers to itself: an opaque without one)."""
        got = self._nominal.get(name)
        if got is not None:
            return got
        if name in self._nominal_active:
            return Ty("opaque", name=name)
        self._nominal_active.add(name)
        try:
            inner = self.parse(self.nominal_raw[name], f"profile.nominal.{name}")
        finally:
            self._nominal_active.discard(name)
        got = self._nominal[name] = Ty("opaque", name=name, items=(inner,))
        return got

    def parse_cached(self, raw: Any, path: str) -> Ty:
        """`parse`, memoised on the expression (only when it parsed without a problem)."""
        key = raw if isinstance(raw, str) else orjson.dumps(raw)
        got = self._parsed.get(key)
        if got is None:
            before = len(self.problems)
            got = self.parse(raw, path)
            if len(self.problems) == before:
                self._parsed[key] = got
        return got

    def ser_safe_cached(self, t: Ty) -> bool:
        got = self._ser.get(id(t))
        if got is None:
            got = self._ser[id(t)] = self.ser_safe(t)
        return got

    def parse(self, raw: Any, path: str) -> Ty:
        """A type expression: a primitive or named type as a string, or a one-key mapping."""
        if isinstance(raw, str):
            r = ALIASES.get(raw, raw)
            if r in PRIMITIVES:
                return Ty("prim", r)
            if r == "unknown":
                return UNKNOWN
            if r == "closure":
                return CLOSURE
            if r in self.raw_names:
                return Ty("ref", r)
            self.problems.append((path, f"unknown type '{raw}'"))
            return UNKNOWN
        if not isinstance(raw, dict) or len(raw) != 1:
            self.problems.append(
                (
                    path,
                    "a type is a name or a mapping with exactly one of struct, tuple, list, dict, union, opaque, closure",
                )
            )
            return UNKNOWN
        ((key, val),) = raw.items()
        p = f"{path}.{key}"
        if key == "struct":
            if not isinstance(val, dict):
                self.problems.append((p, "expected a mapping field -> type"))
                return UNKNOWN
            return Ty(
                "struct",
                items=tuple(self.parse(v, f"{p}.{k}") for k, v in val.items()),
                fields=tuple(str(k) for k in val),
            )
        if key in ("tuple", "union"):
            if not isinstance(val, list):
                self.problems.append((p, "expected a list of types"))
                return UNKNOWN
            if key == "union" and not val:
                self.problems.append((p, "a union needs at least one variant"))
                return UNKNOWN
            return Ty(key, items=tuple(self.parse(v, f"{p}[{i}]") for i, v in enumerate(val)))
        if key == "list":
            return Ty("list", items=(self.parse(val, p),))
        if key == "dict":
            if not isinstance(val, list) or len(val) != 2:
                self.problems.append((p, "expected [key type, value type]"))
                return UNKNOWN
            return Ty("dict", items=(self.parse(val[0], f"{p}[0]"), self.parse(val[1], f"{p}[1]")))
        if key == "opaque":
            if isinstance(val, str):
                if val in self.nominal_raw:
                    return self.nominal(val)
                if "::" not in val and val not in self.known_short():
                    self.unknown_names.setdefault(val, p)
                return Ty("opaque", name=val)
            if (
                isinstance(val, dict)
                and set(val) <= {"name", "of"}
                and isinstance(val.get("name"), str)
            ):
                inner = (self.parse(val["of"], f"{p}.of"),) if "of" in val else ()
                return Ty("opaque", name=val["name"], items=inner)
            self.problems.append((p, "expected a name, or {name, of}"))
            return UNKNOWN
        if key == "closure":
            return CLOSURE  # what a closure captures is opaque to the analyses
        self.problems.append((p, f"unknown type constructor '{key}'"))
        return UNKNOWN

    def resolve(self, t: Ty) -> Ty:
        while t.kind == "ref":
            t = self.named.get(t.name, UNKNOWN)
        return t

    def project(self, t: Ty, field: str) -> Ty | str:
        """The type of `t.field`, or an error message when the projection does not fit."""
        t = self.resolve(t)
        k = t.kind
        if k == "unknown":
            return UNKNOWN
        if k == "struct":
            if field in t.fields:
                return t.items[t.fields.index(field)]
            return f"struct has no field '{field}' (fields: {', '.join(t.fields) or 'none'})"
        if k == "tuple":
            if field.isdigit() and int(field) < len(t.items):
                return t.items[int(field)]
            return f"tuple of {len(t.items)} has no field '{field}'"
        if k == "opaque" and t.items:
            return self.project(t.items[0], field)
        if k == "union":
            outs = []
            for v in t.items:
                r = self.project(v, field)
                if isinstance(r, str):
                    return f"union variant does not fit: {r}"
                outs.append(r)
            return Ty("union", items=tuple(outs))
        return f"cannot project field '{field}' out of {describe(t)}"

    # -- predicates -------------------------------------------------------------------

    def variants(self, t: Ty, seen: frozenset[str] = frozenset()) -> list[Ty]:
        """A union flattened to its non-union variants (refs resolved)."""
        t0 = t
        if t0.kind == "ref":
            if t0.name in seen:
                return []
            seen = seen | {t0.name}
        t = self.resolve(t0)
        if t.kind != "union":
            return [t]
        out: list[Ty] = []
        for v in t.items:
            out.extend(self.variants(v, seen))
        return out

    def eq_safe(self, a: Ty, b: Ty, seen: set[tuple[Ty, Ty]] | None = None) -> bool:
        """Can `a == b` be evaluated on jsonb without two distinct values colliding?
        As the compiler: identical types are safe at once (`? == ?`, `Option<X> ==
        Option<X>`); unknown is unsafe; unions variant-wise; dict vs struct and list vs
        tuple unsafe; tuples of different lengths and structs with different field names
        safe (they are never equal); opaques need the same name and equality-safe inner
        types (an unknown representation is unknown); recursion assumed safe on revisit.

        >>> ts = Types({}, [])
        >>> opq = lambda of: ts.parse({"opaque": {"name": "A", "of": of}}, "t")
        >>> ts.eq_safe(opq({"list": "int"}), opq({"tuple": ["int"]})), ts.eq_safe(ts.parse("unknown", "t"), UNKNOWN)
        (False, True)
        """
        if a == b:
            return True
        seen = set() if seen is None else seen
        if (a, b) in seen:
            return True
        seen.add((a, b))
        va, vb = self.variants(a), self.variants(b)
        for x in va:
            for y in vb:
                if not self._eq_pair(x, y, seen):
                    return False
        return True

    def _eq_pair(self, x: Ty, y: Ty, seen: set[tuple[Ty, Ty]]) -> bool:
        if x == y:
            return True
        kx, ky = x.kind, y.kind
        if kx == "unknown" or ky == "unknown":
            return False
        if {kx, ky} in ({"dict", "struct"}, {"list", "tuple"}):
            return False
        if kx == "opaque" or ky == "opaque":
            if kx != ky or x.name != y.name:
                return False
            return self.eq_safe(
                x.items[0] if x.items else UNKNOWN, y.items[0] if y.items else UNKNOWN, seen
            )
        if kx != ky:
            return True
        if kx == "tuple":
            if len(x.items) != len(y.items):
                return True  # never equal
            return all(self.eq_safe(p, q, seen) for p, q in zip(x.items, y.items, strict=True))
        if kx == "struct":
            if sorted(x.fields) != sorted(y.fields):
                return True  # different key sets: never equal
            return all(
                self.eq_safe(x.items[i], y.items[y.fields.index(f)], seen)
                for i, f in enumerate(x.fields)
            )
        if kx in ("list", "dict"):
            return all(self.eq_safe(p, q, seen) for p, q in zip(x.items, y.items, strict=True))
        return True

    def ser_safe(self, t: Ty, seen: set[str] | None = None) -> bool:
        """Serialization safety: no union with an opaque variant or mixing struct with
        dict or tuple with list, anywhere inside the type."""
        seen = set() if seen is None else seen
        if t.kind == "ref":
            if t.name in seen:
                return True
            seen.add(t.name)
            return self.ser_safe(self.named.get(t.name, UNKNOWN), seen)
        if t.kind == "union":
            kinds = {v.kind for v in self.variants(t)}
            if "opaque" in kinds or {"struct", "dict"} <= kinds or {"tuple", "list"} <= kinds:
                return False
        return all(self.ser_safe(i, seen) for i in t.items)

    def strip_opaque(self, t: Ty) -> Ty:
        """The representation under any opaque wrappers (unknown when not given)."""
        t = self.resolve(t)
        depth = 0
        while t.kind == "opaque" and depth < 64:
            t = self.resolve(t.items[0]) if t.items else UNKNOWN
            depth += 1
        return t

    def env_field_ok(self, t: Ty, seen: set[str] | None = None) -> bool:
        """An environment field is representable: no closure, no dict with a non-string key."""
        seen = set() if seen is None else seen
        if t.kind == "ref":
            if t.name in seen:
                return True
            seen.add(t.name)
            return self.env_field_ok(self.named.get(t.name, UNKNOWN), seen)
        if t.kind == "closure":
            return False
        if t.kind == "dict":
            keys = [self.strip_opaque(k) for k in self.variants(t.items[0])]
            if any(not (k.kind == "prim" and k.name == "string") for k in keys):
                return False
        return all(self.env_field_ok(i, seen) for i in t.items)


def describe(t: Ty) -> str:
    if t.kind == "prim":
        return t.name
    if t.kind in ("opaque", "ref"):
        return f"{t.kind} {t.name}"
    return t.kind
