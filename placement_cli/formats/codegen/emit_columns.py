"""The section and tree column-check tables (`generated/section_check.py`,
`generated/tree_check.py`): a model as an expression over `placement_cli.formats.columns`."""

from __future__ import annotations

import re

from pydantic import BaseModel

from placement_cli.formats.codegen.spec import VALIDATORS
from placement_cli.formats.codegen.typeir import T, field_t, key_of, q
from placement_cli.formats.plan import Plan
from placement_cli.formats.sections import SECTION_MODELS, Artifact, DiagnosticModel
from placement_cli.formats.tree import ExplicitTransfer


def _section_model(model: type[BaseModel]) -> bool:
    """Whether the model carries extra fields (checked writable); refuses what the
    column checks cannot state."""
    cfg = model.model_config
    if cfg.get("strict") is not True or cfg.get("extra") not in ("forbid", "allow"):
        raise TypeError(f"{model.__name__}: the generator needs strict=True and extra set")
    dec = model.__pydantic_decorators__
    if dec.validators or dec.root_validators:
        raise TypeError(f"{model.__name__} has an old-style validator: not generated")
    extra = cfg["extra"] == "allow"
    for name in dec.model_validators:
        if VALIDATORS.get(name) != "extra" or not extra:
            raise TypeError(f"{model.__name__}.{name}: validator not known to the generator")
    if extra and not dec.model_validators:
        raise TypeError(f"{model.__name__}: extra fields allowed but not checked writable")
    for name, d in dec.field_validators.items():
        if VALIDATORS.get(name) != "writable":
            raise TypeError(f"{model.__name__}.{name}: validator not known to the generator")
        for f in d.info.fields:
            t = field_t(model, f).without_none()
            if t != T("dict", (T("any"),)):
                raise TypeError(f"{model.__name__}.{f}: `writable` on a {t}")
    return extra


class Columns:
    """A model as an expression over `placement_cli.formats.columns`, one constant per
    model (in the order they are needed)."""

    def __init__(self, skip: dict[type[BaseModel], str]) -> None:
        self.skip = skip
        self.defs: dict[type[BaseModel], str] = {}

    def name(self, model: type[BaseModel]) -> str:
        return f"_{model.__name__}"

    def expr(self, t: T) -> str:
        k = t.kind
        if k == "str" and t.max_len is None:
            if not t.min_len:
                return "str_"
            if t.min_len == 1:
                return "name"
        if k == "bool":
            return "bool_"
        if k == "int" and t.ge == 0 and t.gt is None and t.le is None and t.lt is None:
            return "nonneg_int"
        if k in ("num", "float") and t.gt is None and t.le is None and t.lt is None:
            # `int | float` keeps an int as it is; a `float` reads it as the equal float.
            if t.ge is None:
                return "num" if k == "num" else "float_"
            if t.ge == 0:
                return "nonneg" if k == "num" else "nonneg_float"
        if k == "lit":
            return f"lit({', '.join(map(q, t.args))})"
        if k == "union":
            alts = [a for a in t.args if a.kind != "none"]
            if len(alts) == 1 and len(t.args) == 2:
                return f"opt({self.expr(alts[0])})"
        if k == "list" and not t.min_len and t.max_len is None:
            item = t.args[0]
            if item == T("str"):
                return "strlist"
            return f"list_of({self.expr(item)})"
        if k == "dict" and not t.min_len and t.max_len is None:
            if t.args[0].kind == "any":
                return "writable_map"
            return f"map_of({self.expr(t.args[0])})"
        if k == "model":
            return self.model(t.args[0])
        raise TypeError(f"{t} has no column check")

    def model(self, model: type[BaseModel]) -> str:
        if model in self.skip:
            return "skip"
        if model not in self.defs:
            extra = _section_model(model)
            req: list[str] = []
            opt: list[str] = []
            for name, f in model.model_fields.items():
                item = f"        {q(key_of(model, name))}: {self.expr(field_t(model, name))},\n"
                (req if f.is_required() else opt).append(item)
            # One field a line (as ruff formats it: the trailing commas keep it so).
            args = ["    {\n" + "".join(req) + "    },\n"]
            if opt:
                args.append("    {\n" + "".join(opt) + "    },\n")
            if extra:
                args.append("    extra=True,\n")
            self.defs[model] = "obj(\n" + "".join(args) + ")"
        return self.name(model)


def generate_sections() -> str:

    cols = Columns({Plan: "the plan: `structs`"})
    artifact = cols.model(Artifact)
    diagnostic = cols.model(DiagnosticModel)
    sections = "".join(f"    {q(k)}: {cols.model(m)},\n" for k, m in SECTION_MODELS.items())
    defs = "\n".join(f"{cols.name(m)} = {e}" for m, e in cols.defs.items())
    return (
        _imports(SECTION_HEADER, defs + "Check")
        + defs
        + "\n\n# What `check_artifact` and `check_section` read (an artifact's plan: `skip`, the\n"
        + "# plan is decoded by msgspec, `structs`).\n"
        + f"ARTIFACT = {artifact}\nDIAGNOSTIC = {diagnostic}\n"
        + "SECTIONS: dict[str, Check] = {\n"
        + sections
        + "}\n"
    )


def generate_tree() -> str:
    """The tree format's explicit transfers (the bulk of a large tree file), which
    `algorithms.tree.load` checks by column before the model reads the rest."""

    cols = Columns({})
    top = cols.model(ExplicitTransfer)
    defs = "\n".join(f"{cols.name(m)} = {e}" for m, e in cols.defs.items())
    head = SECTION_HEADER.replace("formats.sections`", "formats.tree`").replace(
        "The artifact's and its sections' types as column checks",
        "A tree file's explicit transfers as a column check",
    )
    return _imports(head, defs) + defs + f"\n\nEXPLICIT = {top}\n"


def _imports(header: str, code: str) -> str:
    """The header, importing from `columns` only the names `code` uses."""
    start = header.index("from placement_cli.formats.columns import (")
    end = header.index(")", start) + 1
    used = [n for n in COLUMN_NAMES if re.search(rf"\b{n}\b", code)]
    lines = "".join(f"    {n},\n" for n in used)
    return header[:start] + f"from placement_cli.formats.columns import (\n{lines})" + header[end:]


COLUMN_NAMES = (
    "Check",
    "bool_",
    "float_",
    "list_of",
    "lit",
    "map_of",
    "name",
    "nonneg",
    "nonneg_float",
    "nonneg_int",
    "num",
    "obj",
    "opt",
    "skip",
    "str_",
    "strlist",
    "writable_map",
)

SECTION_HEADER = '''"""GENERATED by `python -m placement_cli.formats.codegen` (`make schemas`) from the models
of `placement_cli.formats.sections`: do not edit. `tests/test_codegen.py` fails when it
is stale.

The artifact's and its sections' types as column checks (`placement_cli.formats.columns`):
each accepts a value only when its model certainly would, with the same values.
"""

from __future__ import annotations

from placement_cli.formats.columns import (
    Check,
    bool_,
    list_of,
    lit,
    map_of,
    nonneg,
    nonneg_int,
    num,
    obj,
    opt,
    skip,
    str_,
    strlist,
    writable_map,
)

'''
