"""The proof, at generation time, that the parts of a plan check every field of every
model exactly once and every model's mapping (`_coverage`)."""

from __future__ import annotations

from pydantic import BaseModel

from placement_cli.formats.codegen.spec import Part, _inner, _split
from placement_cli.formats.codegen.typeir import T, _check_model, field_t, models_of, to_t


def _coverage(parts: tuple[Part, ...], root: type[BaseModel]) -> None:
    """Every field of every model reachable from `root` checked by exactly one part
    (whole, or its outer type with the contents another part's), every model's mapping
    by one part."""
    seen: dict[tuple[str, str], str] = {}

    def mark(model: type[BaseModel], what: str, by: str) -> None:
        key = (model.__name__, what)
        if key in seen:
            raise TypeError(f"{key} checked twice: {seen[key]} and {by}")
        seen[key] = by

    def whole(t: T, by: str) -> None:
        for m in set(models_of(t)):
            mark(m, ":keys", by)
            for name in m.model_fields:
                mark(m, name, by)

    contents: list[T] = []  # the contents of shells: each must be some part's

    def fields(model: type[BaseModel], specs: tuple[str, ...], by: str) -> None:
        for spec in specs:
            name, how, rest = _split(spec)
            t = field_t(model, name)
            if how == "":
                mark(model, name, by)
                whole(t, by)
            elif how == ":":
                mark(model, name, by)
                base = t.without_none()
                for a in base.args if base.kind == "union" else (base,):
                    # A list's items, a dict as a whole (a matrix): another part's.
                    if a.kind == "list":
                        contents.append(a.args[0])
                    elif a.kind == "dict":
                        contents.append(a)
            elif how == "{":
                mark(model, name, by)
                sub = t.without_none().args[0]
                mark(sub, ":keys", by)
                fields(sub, _inner(rest), by)
            else:
                fields(t.without_none().args[0], (rest,), by)

    for p in parts:
        if p.model is None:
            whole(to_t(p.ann), p.name)
            continue
        if p.keys:
            mark(p.model, ":keys", p.name)
        fields(p.model, p.fields, p.name)
    typed = {to_t(p.ann) for p in parts if p.model is None}
    for t in contents:
        if t.kind == "model":
            covered = (t.args[0].__name__, ":keys") in seen
        else:
            covered = t in typed or T("list", (t,)) in typed
        if not covered:
            raise TypeError(f"the contents {t} of a shell are no part's")
    for m in set(models_of(T("model", (root,)))):
        _check_model(m)
        for what in (":keys", *m.model_fields):
            if (m.__name__, what) not in seen:
                raise TypeError(f"{m.__name__}.{what} is checked by no part")
