"""Generate the fast checks of artifacts' sections and of a tree file's transfers from
the models: `python -m placement_cli.formats.codegen` (`make schemas`; `--check` only
says whether the committed files are current). (A plan is decoded by msgspec Structs,
`placement_cli.formats.structs`, not by anything generated.)

The pydantic models (`placement_cli.formats.sections`, `placement_cli.formats.tree`)
are the one definition of these formats and the source of every error message. This
walks them (field names and aliases, types, `Literal` values, `Field` constraints,
required fields and defaults, `extra`) and writes, into
`placement_cli/formats/generated/` (committed; `tests/test_codegen.py` fails when a file
differs from what this writes today):

- `section_check.py`: the artifact and its sections as tables of column checks
  (`placement_cli.formats.columns`, the runtime that checks a list of 100k objects a
  field at a time);
- `tree_check.py`: a tree file's explicit transfers (`placement_cli.formats.tree`) as
  a column check that also hands over the columns (`algorithms.tree.load`).

Written by hand in `spec`: what each of the models' own validators means
(`VALIDATORS`; a validator not listed, or a constraint or type the generator does not
know, fails the generation instead of being skipped).

What "certainly accepted" means for each type (the models' strict mode, read through
orjson or `yaml_core`): `str`, `list`, `dict` with `str` keys are their exact types;
`float` is an exact `float`, finite and below `BIG_FLOAT`, or an exact `int` a float
holds exactly (never `bool`); `int` an exact `int` within 64 bits; `Literal` values
by exact type and value; `Any` nested no deeper than `MAX_FREE_DEPTH`
(`placement_cli.formats.checking`). Anything else is left to the models: the checks
may refuse what the models accept (the models then accept it, more slowly), never the
other way round.

The modules: `spec` (`VALIDATORS`), `typeir` (the type IR read from the models'
annotations and constraints), `emit_columns` (the column-check tables) and `__main__`
(writes the files).
"""

from __future__ import annotations

from pathlib import Path

from placement_cli.formats.codegen.emit_columns import Columns, generate_sections, generate_tree
from placement_cli.formats.codegen.spec import VALIDATORS
from placement_cli.formats.codegen.typeir import T, _check_model, field_t, key_of, models_of, to_t

GENERATED = Path(__file__).resolve().parent.parent / "generated"
SECTION_OUT = GENERATED / "section_check.py"
TREE_OUT = GENERATED / "tree_check.py"

__all__ = [
    "SECTION_OUT",
    "TREE_OUT",
    "VALIDATORS",
    "Columns",
    "T",
    "_check_model",
    "field_t",
    "generate_sections",
    "generate_tree",
    "key_of",
    "models_of",
    "to_t",
]
